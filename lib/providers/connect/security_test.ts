import assert from "node:assert/strict";
import type { SluiceError } from "../../errors.ts";
import { exitCodeFor } from "../../errors.ts";
import { connectClientOptions } from "./security.ts";

const security = {
  caFileEnv: "CONNECT_CA_FILE",
  basicAuth: { username: "sluice", passwordEnv: "CONNECT_REST_PASSWORD" },
};
const envOf = (vars: Record<string, string>) => ({ get: (n: string) => vars[n] });
const readAt = (path: string) => {
  if (path === "/etc/connect/ca.pem") return "CA PEM";
  throw new Deno.errors.NotFound(path);
};

Deno.test("a cluster's security: the CA file and the REST password read from the variables it names", () => {
  const options = connectClientOptions(
    security,
    "main",
    envOf({ CONNECT_CA_FILE: "/etc/connect/ca.pem", CONNECT_REST_PASSWORD: "pw-1" }),
    readAt,
  );
  assert.deepEqual(options, {
    tls: { ca: "CA PEM" },
    basicAuth: { username: "sluice", password: "pw-1" },
  });
});

Deno.test("an unset variable or a CA path with no file is ENV_CONNECT_CREDENTIAL_MISSING naming the key", () => {
  const unset = (() => {
    try {
      connectClientOptions(
        security,
        "main",
        envOf({ CONNECT_CA_FILE: "/etc/connect/ca.pem" }),
        readAt,
      );
    } catch (e) {
      return e as SluiceError;
    }
    assert.fail("accepted");
  })();
  assert.equal(unset.code, "ENV_CONNECT_CREDENTIAL_MISSING");
  assert.equal(exitCodeFor(unset), 7);
  assert.equal(
    unset.message,
    "connect.main.security.password_env names the environment variable CONNECT_REST_PASSWORD, " +
      "which is not set",
  );
  assert.throws(
    () =>
      connectClientOptions(
        security,
        "main",
        envOf({ CONNECT_CA_FILE: "/nowhere.pem", CONNECT_REST_PASSWORD: "pw-1" }),
        readAt,
      ),
    /connect\.main\.security\.ca_file_env names the environment variable CONNECT_CA_FILE, which holds a path where there is no file/,
  );
});
