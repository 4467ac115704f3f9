// The REST adapter against a scripted HTTP server on loopback: response decoding, the 409 retry
// bound, error codes, secret scrubbing and fault-site crossings. The real worker is exercised by
// tests/providers_connect_docker_kafka_test.ts.
import assert from "node:assert/strict";
import { SluiceError } from "../../errors.ts";
import { exitCodeFor } from "../../errors.ts";
import { onCrossing } from "../../fault/site.ts";
import { endpointDigest, normalizeEndpoint, restConnect, scrubSecrets } from "./rest.ts";

interface Seen {
  method: string;
  path: string;
  body: string;
}

type Reply = { status: number; body?: unknown } | "hang-up";

/** A server that answers each request with the next scripted reply and records requests. */
async function scripted(replies: Reply[], fn: (url: string, seen: Seen[]) => Promise<void>) {
  const seen: Seen[] = [];
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const serving = (async () => {
    for await (const conn of listener) {
      void handle(conn);
    }
  })().catch(() => {});
  async function handle(conn: Deno.Conn) {
    // raw HTTP/1.1, so that a reply can also be a hang-up (a lost response)
    const buf = new Uint8Array(65536);
    let text = "";
    try {
      while (true) {
        const n = await conn.read(buf);
        if (n === null) return;
        text += new TextDecoder().decode(buf.subarray(0, n));
        const end = text.indexOf("\r\n\r\n");
        if (end < 0) continue;
        const length = Number(/content-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
        if (text.length - end - 4 < length) continue;
        const [method, path] = text.slice(0, text.indexOf("\r\n")).split(" ");
        seen.push({ method, path, body: text.slice(end + 4, end + 4 + length) });
        text = text.slice(end + 4 + length);
        const reply = replies.shift() ?? { status: 500, body: { message: "unscripted" } };
        if (reply === "hang-up") {
          conn.close();
          return;
        }
        const payload = reply.body === undefined ? "" : JSON.stringify(reply.body);
        const head = `HTTP/1.1 ${reply.status} X\r\ncontent-type: application/json\r\n` +
          `content-length: ${new TextEncoder().encode(payload).length}\r\n\r\n`;
        await conn.write(new TextEncoder().encode(head + payload));
      }
    } catch {
      // the client went away
    } finally {
      try {
        conn.close();
      } catch { /* closed already */ }
    }
  }
  try {
    await fn(`http://127.0.0.1:${port}`, seen);
  } finally {
    listener.close();
    await serving;
  }
}

const noSleep = { sleep: () => Promise.resolve(), conflictAttempts: 4 };
const SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector";

async function rejectsWith(p: Promise<unknown>, code: string): Promise<SluiceError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof SluiceError, String(e));
    assert.equal(e.code, code, e.message);
    return e;
  }
  throw new Error(`expected ${code}, got success`);
}

Deno.test("reads decode worker info, names, config and status exactly", async () => {
  await scripted([
    { status: 200, body: { version: "4.1.2", commit: "c82f", kafka_cluster_id: "abc" } },
    { status: 200, body: ["b", "a"] },
    { status: 200, body: { "connector.class": SOURCE, file: "/data/in" } },
    { status: 404, body: { error_code: 404, message: "Connector x not found" } },
    {
      status: 200,
      body: {
        name: "a",
        type: "source",
        connector: { state: "RUNNING", worker_id: "connect:8083" },
        tasks: [
          { id: 1, state: "FAILED", worker_id: "connect:8083", trace: "boom" },
          { id: 0, state: "RUNNING", worker_id: "connect:8083" },
        ],
      },
    },
    { status: 404, body: { error_code: 404, message: "No status found for connector x" } },
  ], async (url, seen) => {
    const c = restConnect(url, noSleep);
    assert.deepEqual(await c.clusterInfo(), {
      version: "4.1.2",
      commit: "c82f",
      kafkaClusterId: "abc",
      endpointDigest: endpointDigest(url),
    });
    assert.deepEqual(await c.listConnectors(), ["a", "b"]);
    assert.deepEqual(await c.connectorConfig("a"), { "connector.class": SOURCE, file: "/data/in" });
    assert.equal(await c.connectorConfig("x"), null);
    assert.deepEqual(await c.connectorStatus("a"), {
      name: "a",
      type: "source",
      connector: { state: "RUNNING", workerId: "connect:8083", trace: null },
      tasks: [
        { id: 0, state: "RUNNING", workerId: "connect:8083", trace: null },
        { id: 1, state: "FAILED", workerId: "connect:8083", trace: "boom" },
      ],
    });
    assert.equal(await c.connectorStatus("x"), null);
    assert.deepEqual(seen.map((s) => `${s.method} ${s.path}`), [
      "GET /",
      "GET /connectors",
      "GET /connectors/a/config",
      "GET /connectors/x/config",
      "GET /connectors/a/status",
      "GET /connectors/x/status",
    ]);
  });
});

Deno.test("a malformed status body is CONNECT_BAD_RESPONSE, a 500 on a read too", async () => {
  await scripted([
    { status: 200, body: { name: "a", connector: { state: "DANCING", worker_id: "w" } } },
    { status: 500, body: { message: "oops" } },
  ], async (url) => {
    const c = restConnect(url, noSleep);
    await rejectsWith(c.connectorStatus("a"), "CONNECT_BAD_RESPONSE");
    await rejectsWith(c.listConnectors(), "CONNECT_BAD_RESPONSE");
  });
});

Deno.test("a rebalance 409 is retried until it succeeds; each retry is one request", async () => {
  const rebalance = {
    status: 409,
    body: {
      error_code: 409,
      message: "Cannot complete request because of a conflicting operation (e.g. worker rebalance)",
    },
  };
  await scripted([rebalance, rebalance, {
    status: 201,
    body: {
      name: "n",
      config: { "connector.class": SOURCE, name: "n" },
      tasks: [],
      type: "source",
    },
  }], async (url, seen) => {
    const pauses: number[] = [];
    const c = restConnect(url, {
      conflictAttempts: 4,
      conflictDelayMs: 7,
      sleep: (ms) => (pauses.push(ms), Promise.resolve()),
    });
    const info = await c.createConnector("n", {
      config: { "connector.class": SOURCE, name: "n" },
      secretKeys: [],
    });
    assert.deepEqual(info, {
      name: "n",
      config: { "connector.class": SOURCE, name: "n" },
      tasks: [],
      type: "source",
    });
    assert.deepEqual(pauses, [7, 7]);
    assert.equal(seen.length, 3);
    assert.deepEqual(JSON.parse(seen[2].body), {
      name: "n",
      config: { "connector.class": SOURCE, name: "n" },
    });
  });
});

Deno.test("a 409 that persists is CONNECT_CONFLICT after the bound (exit 5)", async () => {
  const stale = {
    status: 409,
    body: { message: "Cannot complete request momentarily due to stale configuration" },
  };
  await scripted([stale, stale, stale, stale, stale], async (url, seen) => {
    const c = restConnect(url, noSleep);
    const e = await rejectsWith(c.deleteConnector("n"), "CONNECT_CONFLICT");
    assert.equal(seen.length, 4, "conflictAttempts requests, no more");
    assert.equal(exitCodeFor(e), 5);
  });
});

Deno.test("create of an existing name is CONNECT_CONNECTOR_EXISTS, not retried", async () => {
  await scripted(
    [{ status: 409, body: { message: "Connector n already exists" } }],
    async (url, seen) => {
      const c = restConnect(url, noSleep);
      await rejectsWith(
        c.createConnector("n", { config: { "connector.class": SOURCE }, secretKeys: [] }),
        "CONNECT_CONNECTOR_EXISTS",
      );
      assert.equal(seen.length, 1);
    },
  );
});

Deno.test("a refusal that echoes a secret shows it redacted", async () => {
  const secret = "s3cr3t-Value!";
  await scripted([{
    status: 400,
    body: {
      error_code: 400,
      message:
        `Connector configuration is invalid: Invalid value ${secret} for configuration db.pw; also apikey=${secret}`,
    },
  }], async (url) => {
    const c = restConnect(url, noSleep);
    const e = await rejectsWith(
      c.createConnector("n", {
        config: { "connector.class": SOURCE, "db.pw": secret },
        secretKeys: ["db.pw"],
      }),
      "CONNECT_REFUSED",
    );
    const shown = JSON.stringify(e.toJSON());
    assert.equal(shown.includes(secret), false, shown);
    assert.ok(e.message.includes("Invalid value <redacted> for configuration db.pw"), e.message);
  });
});

Deno.test("sensitive-named keys are scrubbed even when not listed as secret", async () => {
  await scripted([{ status: 400, body: { message: "bad password hunter22" } }], async (url) => {
    const c = restConnect(url, noSleep);
    const e = await rejectsWith(
      c.createConnector("n", {
        config: { "connector.class": SOURCE, "connection.password": "hunter22" },
        secretKeys: [],
      }),
      "CONNECT_REFUSED",
    );
    assert.equal(e.message.includes("hunter22"), false);
  });
});

Deno.test("a server error or a lost response on a mutation is an unknown outcome (exit 6)", async () => {
  await scripted(
    [{ status: 500, body: { message: "Request timed out" } }, "hang-up"],
    async (url) => {
      const c = restConnect(url, noSleep);
      const sub = { config: { "connector.class": SOURCE }, secretKeys: [] };
      const e = await rejectsWith(c.createConnector("n", sub), "UNKNOWN_OUTCOME_CONNECT");
      assert.equal(exitCodeFor(e), 6);
      await rejectsWith(c.deleteConnector("n"), "UNKNOWN_OUTCOME_CONNECT");
    },
  );
});

Deno.test("no listener: reads and mutations are ENV_CONNECT_UNREACHABLE (exit 7)", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const c = restConnect(`http://127.0.0.1:${port}`, noSleep);
  const e = await rejectsWith(c.listConnectors(), "ENV_CONNECT_UNREACHABLE");
  assert.equal(exitCodeFor(e), 7);
  // the connection was refused: the create certainly did not happen
  await rejectsWith(
    c.createConnector("n", { config: { "connector.class": SOURCE }, secretKeys: [] }),
    "ENV_CONNECT_UNREACHABLE",
  );
});

Deno.test("update of an absent connector sends no PUT: CONNECT_NOT_FOUND", async () => {
  await scripted(
    [{ status: 404, body: { message: "Connector n not found" } }],
    async (url, seen) => {
      const c = restConnect(url, noSleep);
      await rejectsWith(
        c.updateConnectorConfig("n", { config: { "connector.class": SOURCE }, secretKeys: [] }),
        "CONNECT_NOT_FOUND",
      );
      assert.deepEqual(seen.map((s) => s.method), ["GET"]);
    },
  );
});

Deno.test("an update that created the connector (deleted in between) says so", async () => {
  await scripted([
    { status: 200, body: { "connector.class": SOURCE } },
    { status: 201, body: { name: "n", config: { "connector.class": SOURCE }, tasks: [] } },
  ], async (url, seen) => {
    const c = restConnect(url, noSleep);
    await rejectsWith(
      c.updateConnectorConfig("n", { config: { "connector.class": SOURCE }, secretKeys: [] }),
      "CONNECT_UPDATE_RECREATED",
    );
    assert.deepEqual(seen.map((s) => `${s.method} ${s.path}`), [
      "GET /connectors/n/config",
      "PUT /connectors/n/config",
    ]);
  });
});

Deno.test("delete of an absent connector is CONNECT_NOT_FOUND", async () => {
  await scripted([{ status: 404, body: { message: "Connector n not found" } }], async (url) => {
    await rejectsWith(restConnect(url, noSleep).deleteConnector("n"), "CONNECT_NOT_FOUND");
  });
});

Deno.test("the adapter crosses no fault site: the connector journey crosses its table's", async () => {
  const crossed: string[] = [];
  const stop = onCrossing((x) => crossed.push(`${x.site.name}:${x.side}`));
  try {
    await scripted([
      { status: 200, body: ["n"] },
      { status: 201, body: { name: "n", config: { a: "1" }, tasks: [], type: "sink" } },
      { status: 200, body: { a: "1" } },
      {
        status: 200,
        body: { name: "n", config: { a: "2" }, tasks: [{ connector: "n", task: 0 }] },
      },
      { status: 204 },
    ], async (url) => {
      const c = restConnect(url, noSleep);
      await c.listConnectors();
      await c.createConnector("n", { config: { a: "1" }, secretKeys: [] });
      const updated = await c.updateConnectorConfig("n", { config: { a: "2" }, secretKeys: [] });
      assert.deepEqual(updated.tasks, [0]);
      await c.deleteConnector("n");
    });
  } finally {
    stop();
  }
  // lib/protocol/connector.ts declares CONNECT_SITES; lib/runtime/connectors.ts crosses them
  assert.deepEqual(crossed, []);
});

Deno.test("a read answered 500 'rebalance is expected' is asked again; a mutation's 500 is not", async () => {
  const rebalance = {
    status: 500,
    body: {
      error_code: 500,
      message: "Request cannot be completed because a rebalance is expected",
    },
  };
  await scripted([rebalance, rebalance, { status: 200, body: { a: "1" } }], async (url, seen) => {
    assert.deepEqual(await restConnect(url, noSleep).connectorConfig("n"), { a: "1" });
    assert.equal(seen.length, 3);
  });
  await scripted([rebalance], async (url) => {
    await rejectsWith(restConnect(url, noSleep).deleteConnector("n"), "UNKNOWN_OUTCOME_CONNECT");
  });
});

Deno.test("connector names are path-encoded", async () => {
  await scripted([{ status: 404, body: { message: "nope" } }], async (url, seen) => {
    assert.equal(await restConnect(url, noSleep).connectorConfig("a/b c"), null);
    assert.equal(seen[0].path, "/connectors/a%2Fb%20c/config");
  });
});

Deno.test("endpoints are normalized; credentials, queries and other schemes are refused", () => {
  assert.equal(normalizeEndpoint("HTTP://Connect:8083/"), "http://connect:8083");
  assert.equal(normalizeEndpoint("https://c.example/api/"), "https://c.example:443/api");
  assert.equal(endpointDigest("http://connect"), endpointDigest("http://connect:80/"));
  for (const bad of ["ftp://c:1", "http://u:p@c:1", "http://c:1/?x=1", "connect:8083"]) {
    assert.throws(() => normalizeEndpoint(bad), (e: SluiceError) => {
      assert.equal(e.code, "CONNECT_ENDPOINT_INVALID");
      assert.equal(e.message.includes("u:p"), false);
      return true;
    });
  }
});

Deno.test("scrubSecrets hides the longest secret whole first", () => {
  assert.equal(scrubSecrets("ab abc x", ["ab", "abc"]), "<redacted> <redacted> x");
  assert.equal(scrubSecrets("nothing", [""]), "nothing");
});
