import assert from "node:assert/strict";
import type { SluiceError } from "../../errors.ts";
import { pgConnectionOptions } from "./pg_tls.ts";
import { connectFailure } from "./connect_failure.ts";

const origin = { variable: "SLUICE_STATE_DSN", setting: "state.dsn_env" };
const files: Record<string, string> = {
  "/etc/pg/root.crt": "CA PEM",
  "/etc/pg/client.crt": "CERT PEM",
  "/etc/pg/client.key": "KEY PEM",
};
const read = (path: string) =>
  path in files
    ? Promise.resolve(files[path])
    : Promise.reject(new Deno.errors.NotFound(`no such file: ${path}`));

Deno.test("a DSN without TLS parameters is handed on as it is", async () => {
  const url = "postgres://u:pw@db:5432/x?application_name=sluice";
  assert.deepEqual(await pgConnectionOptions(url, origin, read), {
    connectionString: url,
    sslmode: null,
  });
});

Deno.test("verify-full trusts sslrootcert's CA, presents the client certificate and checks the host name", async () => {
  const o = await pgConnectionOptions(
    "postgres://u:pw@db:5432/x?sslmode=verify-full&sslrootcert=/etc/pg/root.crt" +
      "&sslcert=/etc/pg/client.crt&sslkey=/etc/pg/client.key&application_name=a",
    origin,
    read,
  );
  assert.equal(o.sslmode, "verify-full");
  assert.equal(o.connectionString, "postgres://u:pw@db:5432/x?application_name=a");
  assert.deepEqual(o.ssl, { ca: "CA PEM", cert: "CERT PEM", key: "KEY PEM" });
});

Deno.test("verify-ca checks the chain but not the host name; require checks nothing without a CA", async () => {
  const ca = await pgConnectionOptions(
    "postgres://db/x?sslmode=verify-ca&sslrootcert=/etc/pg/root.crt",
    origin,
    read,
  );
  const caSsl = ca.ssl as { ca: string; checkServerIdentity: () => unknown };
  assert.equal(caSsl.ca, "CA PEM");
  assert.equal(caSsl.checkServerIdentity(), undefined);
  assert.equal((caSsl as { rejectUnauthorized?: boolean }).rejectUnauthorized, undefined);
  const req = await pgConnectionOptions("postgres://db/x?sslmode=require", origin, read);
  assert.equal((req.ssl as { rejectUnauthorized: boolean }).rejectUnauthorized, false);
  const disable = await pgConnectionOptions("postgres://db/x?sslmode=disable", origin, read);
  assert.equal(disable.ssl, false);
});

Deno.test("a TLS file without sslmode means verify-full (node-postgres's reading, the safe one)", async () => {
  const o = await pgConnectionOptions("postgres://db/x?sslrootcert=/etc/pg/root.crt", origin, read);
  assert.equal(o.sslmode, "verify-full");
  assert.deepEqual(o.ssl, { ca: "CA PEM" });
});

Deno.test("prefer, an unknown mode, a missing file and a lone certificate are ENV_STATE_DSN_INVALID, the DSN never shown", async () => {
  const cases: Array<[string, RegExp]> = [
    ["sslmode=prefer", /sslmode=prefer, which falls back to an unencrypted connection/],
    ["sslmode=verify_full", /sslmode=verify_full; sluice takes disable, require, verify-ca/],
    ["sslmode=verify-full&sslrootcert=/etc/pg/none.crt", /sslrootcert naming a file .*no file/],
    ["sslmode=verify-full&sslcert=/etc/pg/client.crt", /only one of sslcert and sslkey/],
  ];
  for (const [query, message] of cases) {
    const e = await pgConnectionOptions(`postgres://u:s3cret@db/x?${query}`, origin, read).then(
      () => assert.fail(`${query} was accepted`),
      (e: SluiceError) => e,
    );
    assert.equal(e.code, "ENV_STATE_DSN_INVALID", query);
    assert.match(e.message, message);
    assert.match(e.message, /\$SLUICE_STATE_DSN, named by state\.dsn_env/);
    assert.ok(!JSON.stringify(e.toJSON()).includes("s3cret"), "the password is never shown");
  }
});

Deno.test("a failed handshake is ENV_POSTGRES_TLS naming the host: a certificate for another name (an ERR_TLS_ code, not a lost connection), a server without TLS", () => {
  const target = {
    provider: "postgres" as const,
    address: "postgres://db.prod:5432/sluice?schema=sluice",
    origin,
  };
  const altname = Object.assign(
    new Error(
      "Hostname/IP does not match certificate's altnames: Host: db.prod. is not in the cert's altnames: DNS:localhost",
    ),
    { code: "ERR_TLS_CERT_ALTNAME_INVALID" },
  );
  const noTls = new Error("The server does not support SSL connections");
  for (const error of [altname, noTls]) {
    const e = connectFailure(error, target) as SluiceError;
    assert.equal(e.code, "ENV_POSTGRES_TLS", e.message);
    assert.match(
      e.message,
      /^PostgreSQL at postgres:\/\/db\.prod:5432\/sluice\?schema=sluice \(\$SLUICE_STATE_DSN, named by state\.dsn_env\) failed the TLS handshake: /,
    );
  }
});
