import assert from "node:assert/strict";
import type { SluiceError } from "../../errors.ts";
import { exitCodeFor } from "../../errors.ts";
import { dockerTlsFromEnv, dockerTlsOptions, resolveDockerTls } from "./tls.ts";

const envOf = (vars: Record<string, string>) => ({ get: (n: string) => vars[n] });
const pemAt = (paths: string[]) => (p: string) =>
  paths.includes(p)
    ? Promise.resolve(`PEM ${p}`)
    : Promise.reject(new Deno.errors.NotFound(`no such file: ${p}`));

Deno.test("without DOCKER_TLS_VERIFY, or on a socket, the Docker variables are dockerode's as before", async () => {
  const read = pemAt([]);
  assert.equal(await dockerTlsFromEnv(envOf({ DOCKER_HOST: "tcp://d:2375" }), read), null);
  assert.equal(
    await dockerTlsFromEnv(envOf({ DOCKER_HOST: "tcp://d:2376", DOCKER_TLS_VERIFY: "" }), read),
    null,
  );
  assert.equal(
    await dockerTlsFromEnv(
      envOf({ DOCKER_HOST: "unix:///run/d.sock", DOCKER_TLS_VERIFY: "1" }),
      read,
    ),
    null,
  );
});

Deno.test("DOCKER_TLS_VERIFY reads ca.pem, cert.pem and key.pem from DOCKER_CERT_PATH (else ~/.docker), port 2376 by default", async () => {
  const tls = await dockerTlsFromEnv(
    envOf({ DOCKER_HOST: "tcp://docker.example", DOCKER_TLS_VERIFY: "1", DOCKER_CERT_PATH: "/c" }),
    pemAt(["/c/ca.pem", "/c/cert.pem", "/c/key.pem"]),
  );
  assert.deepEqual(tls, {
    options: {
      host: "docker.example",
      port: "2376",
      protocol: "https",
      ca: "PEM /c/ca.pem",
      cert: "PEM /c/cert.pem",
      key: "PEM /c/key.pem",
    },
    origin: { variable: "DOCKER_HOST" },
  });
  const home = await dockerTlsFromEnv(
    envOf({ DOCKER_HOST: "tcp://127.0.0.1:4000", DOCKER_TLS_VERIFY: "yes", HOME: "/h" }),
    pemAt(["/h/.docker/ca.pem", "/h/.docker/cert.pem", "/h/.docker/key.pem"]),
  );
  assert.equal(home?.options.port, "4000");
  assert.equal(home?.options.ca, "PEM /h/.docker/ca.pem");
});

Deno.test("a missing TLS file is ENV_DOCKER_TLS_MISSING (exit 7) naming the file and the variable", async () => {
  const e = await dockerTlsFromEnv(
    envOf({ DOCKER_HOST: "tcp://d:2376", DOCKER_TLS_VERIFY: "1", DOCKER_CERT_PATH: "/c" }),
    pemAt(["/c/ca.pem", "/c/key.pem"]),
  ).then(() => assert.fail("accepted"), (e: SluiceError) => e);
  assert.equal(e.code, "ENV_DOCKER_TLS_MISSING");
  assert.equal(exitCodeFor(e), 7);
  assert.equal(
    e.message,
    "the Docker daemon is reached over TLS and needs cert.pem in $DOCKER_CERT_PATH, but there is " +
      "no such file",
  );
  const home = await dockerTlsFromEnv(
    envOf({ DOCKER_HOST: "tcp://d:2376", DOCKER_TLS_VERIFY: "1", HOME: "/h" }),
    pemAt([]),
  ).then(() => assert.fail("accepted"), (e: SluiceError) => e);
  assert.match(home.message, /needs ~\/\.docker\/ca\.pem \(DOCKER_CERT_PATH is not set\)/);
});

Deno.test("an endpoint with TLS material is https on its host, 2376 when no port is given", () => {
  const pem = { ca: "CA", cert: "C", key: "K" };
  assert.deepEqual(dockerTlsOptions("tcp://[::1]", pem), {
    host: "::1",
    port: "2376",
    protocol: "https",
    ...pem,
  });
  assert.equal(dockerTlsOptions("https://d:9999", pem)?.port, "9999");
  assert.equal(dockerTlsOptions("unix:///run/d.sock", pem), null);
});

Deno.test("docker.tls in sluice.yaml: each variable's file is read; an unset one is ENV_DOCKER_TLS_MISSING naming it and its key", async () => {
  const tls = { caFileEnv: "D_CA", certFileEnv: "D_CERT", keyFileEnv: "D_KEY" };
  const read = pemAt(["/p/ca.pem", "/p/cert.pem", "/p/key.pem"]);
  const pem = await resolveDockerTls(
    tls,
    "environments.prod.docker.tls",
    envOf({ D_CA: "/p/ca.pem", D_CERT: "/p/cert.pem", D_KEY: "/p/key.pem" }),
    read,
  );
  assert.deepEqual(pem, { ca: "PEM /p/ca.pem", cert: "PEM /p/cert.pem", key: "PEM /p/key.pem" });
  const unset = await resolveDockerTls(
    tls,
    "docker.tls",
    envOf({ D_CA: "/p/ca.pem", D_KEY: "/p/key.pem" }),
    read,
  ).then(() => assert.fail("accepted"), (e: SluiceError) => e);
  assert.equal(unset.code, "ENV_DOCKER_TLS_MISSING");
  assert.equal(
    unset.message,
    "docker.tls.cert_file_env names the environment variable D_CERT, which is not set",
  );
  const gone = await resolveDockerTls(
    tls,
    "docker.tls",
    envOf({ D_CA: "/p/none.pem", D_CERT: "/p/cert.pem", D_KEY: "/p/key.pem" }),
    read,
  ).then(() => assert.fail("accepted"), (e: SluiceError) => e);
  assert.match(
    gone.message,
    /needs the file \$D_CA names \(docker\.tls\.ca_file_env\), but there is no such file/,
  );
});
