// A local HTTPS server (Deno.serve with a certificate made by openssl now, harness/tls_certs.ts)
// stands for a Connect worker whose REST API takes HTTPS and basic authentication.
import assert from "node:assert/strict";
import { exitCodeFor, type SluiceError } from "../../errors.ts";
import { makeTestPki } from "../../../harness/tls_certs.ts";
import { restConnect } from "./rest.ts";

const USER = "sluice-rest";
const PASSWORD = "c0nnect-s3cret";

Deno.test("Connect's REST API over HTTPS with basic auth: the CA given, a wrong password, an untrusted CA", async (t) => {
  const pki = await makeTestPki();
  const seen: string[] = [];
  const expected = `Basic ${btoa(`${USER}:${PASSWORD}`)}`;
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: await Deno.readTextFile(pki.serverCertFile),
    key: await Deno.readTextFile(pki.serverKeyFile),
    onListen: () => {},
  }, (req) => {
    const given = req.headers.get("authorization");
    seen.push(given ?? "(none)");
    if (given !== expected) {
      return Response.json({ error_code: 401, message: "Unauthorized" }, { status: 401 });
    }
    return Response.json({ version: "4.1.2", commit: "c", kafka_cluster_id: "k-1" });
  });
  const endpoint = `https://localhost:${server.addr.port}`;
  const ca = await Deno.readTextFile(pki.caFile);
  const shown = (e: SluiceError) => JSON.stringify({ m: e.message, j: e.toJSON() });
  try {
    await t.step("the worker's CA and the REST user's password: the cluster answers", async () => {
      const connect = restConnect(endpoint, {
        tls: { ca },
        basicAuth: { username: USER, password: PASSWORD },
      });
      assert.equal((await connect.clusterInfo()).kafkaClusterId, "k-1");
      assert.equal(seen.at(-1), expected);
    });

    await t.step("a wrong password is ENV_CONNECT_DENIED (exit 7), never shown", async () => {
      const connect = restConnect(endpoint, {
        tls: { ca },
        basicAuth: { username: USER, password: "wr0ng-pw" },
      });
      const e = await connect.clusterInfo().then(
        () => assert.fail("answered"),
        (e: SluiceError) => e,
      );
      assert.equal(e.code, "ENV_CONNECT_DENIED", e.message);
      assert.equal(exitCodeFor(e), 7);
      assert.match(e.message, new RegExp(`^Kafka Connect at ${endpoint} denied GET / \\(401`));
      assert.match(e.message, /REST user and password of sluice-rest/);
      assert.ok(!shown(e).includes("wr0ng-pw") && !shown(e).includes(PASSWORD));
    });

    await t.step("a mutation denied is ENV_CONNECT_DENIED too: nothing was done", async () => {
      const connect = restConnect(endpoint, { tls: { ca } });
      const e = await connect.deleteConnector("x").then(
        () => assert.fail("answered"),
        (e: SluiceError) => e,
      );
      assert.equal(e.code, "ENV_CONNECT_DENIED", e.message);
      assert.match(e.message, /\(none was given\)/);
    });

    await t.step(
      "a certificate not signed by the CA given is ENV_CONNECT_TLS (exit 7)",
      async () => {
        const connect = restConnect(endpoint, {
          tls: { ca: await Deno.readTextFile(pki.otherCaFile) },
          basicAuth: { username: USER, password: PASSWORD },
        });
        const before = seen.length;
        const e = await connect.clusterInfo().then(
          () => assert.fail("answered"),
          (e: SluiceError) => e,
        );
        assert.equal(e.code, "ENV_CONNECT_TLS", e.message);
        assert.equal(exitCodeFor(e), 7);
        assert.match(
          e.message,
          new RegExp(`^Kafka Connect at ${endpoint} failed the TLS handshake`),
        );
        assert.equal(seen.length, before, "no request reached the server");
        assert.ok(!shown(e).includes(PASSWORD));
      },
    );
  } finally {
    await server.shutdown();
    await pki.remove();
  }
});
