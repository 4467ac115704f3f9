// test-needs: env
// Needs: Docker, the broker and the Connect worker (shared environment from tools/test.ts).
// The Connect port's REST adapter against the real Kafka Connect 4.1.2 worker.
import assert from "node:assert/strict";
import { join } from "node:path";
import { sharedEnv } from "../harness/env.ts";
import type { ConnectDescriptor } from "../harness/env.ts";
import { createTopic, offsetRange, produce, waitForRecords } from "../harness/kafka.ts";
import { SluiceError } from "../lib/errors.ts";
import { onCrossing } from "../lib/fault/site.ts";
import { restConnect } from "../lib/providers/connect/rest.ts";
import type { ConnectorStatus, ConnectPort } from "../lib/providers/connect/port.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector";
const SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector";

async function connectOf(): Promise<
  { env: Awaited<ReturnType<typeof sharedEnv>>; connect: ConnectDescriptor }
> {
  const env = await sharedEnv();
  if (!env.connect) throw new Error("the shared environment has no Connect worker");
  return { env, connect: env.connect };
}

/** Poll a connector's status until `ok` holds (bounded; the last status is in the error). */
async function waitStatus(
  port: ConnectPort,
  name: string,
  ok: (s: ConnectorStatus | null) => boolean,
  timeoutMs = 120_000,
): Promise<ConnectorStatus | null> {
  const end = Date.now() + timeoutMs;
  let last: ConnectorStatus | null = null;
  while (Date.now() < end) {
    last = await port.connectorStatus(name);
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`status of ${name} never satisfied the condition; last: ${JSON.stringify(last)}`);
}

const running = (s: ConnectorStatus | null) =>
  s?.connector.state === "RUNNING" && s.tasks.length === 1 && s.tasks[0].state === "RUNNING";

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "no error";
  } catch (e) {
    if (e instanceof SluiceError) return e.code;
    throw e;
  }
}

/** Poll a host file until it has at least `n` lines (bounded); returns its lines. */
async function waitLines(path: string, n: number, timeoutMs = 120_000): Promise<string[]> {
  const end = Date.now() + timeoutMs;
  let lines: string[] = [];
  while (Date.now() < end) {
    try {
      lines = (await Deno.readTextFile(path)).split("\n").filter((l) => l.length > 0);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    if (lines.length >= n) return lines;
    await new Promise((r) => setTimeout(r, 250));
  }
  return lines;
}

Deno.test(
  "connect port on the real worker: cluster info, source create → RUNNING → records, update, delete",
  opts,
  async () => {
    const { env, connect } = await connectOf();
    const port = restConnect(connect.restHost);
    const id = crypto.randomUUID().slice(0, 8);
    const name = `test-source-${id}`;
    const [topicA, topicB] = [`connect-a-${id}`, `connect-b-${id}`];
    await createTopic(env.bootstrapHost, topicA, 1);
    await createTopic(env.bootstrapHost, topicB, 1);
    const file = `in-${id}.jsonl`;
    const lines = [1, 2, 3].map((i) => JSON.stringify({ order_id: `o${i}`, amount: i * 100 }));
    await Deno.writeTextFile(join(connect.dataDirHost, file), lines.join("\n") + "\n");

    const info = await port.clusterInfo();
    assert.equal(
      info.kafkaClusterId,
      env.clusterId,
      "the worker group stores its state on our broker",
    );
    assert.equal(info.version, "4.1.2");
    const plugins = (await port.plugins()).map((p) => `${p.type}:${p.class}`);
    assert.ok(
      plugins.includes(`source:${SOURCE}`) && plugins.includes(`sink:${SINK}`),
      `${plugins}`,
    );

    const crossed: string[] = [];
    const stop = onCrossing((c) => crossed.push(`${c.site.name}:${c.side}`));
    try {
      const config = {
        "connector.class": SOURCE,
        "tasks.max": "1",
        file: `${connect.dataDirContainer}/${file}`,
        topic: topicA,
      };
      const created = await port.createConnector(name, { config, secretKeys: [] });
      assert.equal(created.name, name);
      assert.equal(created.type, "source");
      assert.deepEqual(created.config, { ...config, name });
      assert.ok((await port.listConnectors()).includes(name));
      assert.deepEqual(await port.connectorConfig(name), { ...config, name });
      const status = await waitStatus(port, name, running);
      assert.equal(status?.type, "source");
      assert.equal(status?.tasks[0].id, 0);

      // the file's lines arrive in the topic, exactly and in order
      const got = await waitForRecords(env.bootstrapHost, topicA, 3, { timeoutMs: 120_000 });
      assert.deepEqual(got.map((r) => r.value), lines);

      // a second create of the same name is refused by the worker, and nothing changes
      assert.equal(
        await codeOf(port.createConnector(name, { config, secretKeys: [] })),
        "CONNECT_CONNECTOR_EXISTS",
      );

      // update: the same file now feeds topic B; lines appended afterwards go there
      const updated = await port.updateConnectorConfig(name, {
        config: { ...config, topic: topicB },
        secretKeys: [],
      });
      assert.equal(updated.config.topic, topicB);
      assert.deepEqual(await port.connectorConfig(name), { ...config, topic: topicB, name });
      await waitStatus(port, name, running);
      const more = [4, 5].map((i) => JSON.stringify({ order_id: `o${i}`, amount: i * 100 }));
      await Deno.writeTextFile(join(connect.dataDirHost, file), more.join("\n") + "\n", {
        append: true,
      });
      const gotB = await waitForRecords(env.bootstrapHost, topicB, 2, { timeoutMs: 120_000 });
      assert.deepEqual(gotB.map((r) => r.value), more, "the source resumed from its stored offset");

      // delete: the connector object is gone; the topics and their records remain
      await port.deleteConnector(name);
      assert.equal(await port.connectorConfig(name), null);
      assert.equal((await port.listConnectors()).includes(name), false);
      await waitStatus(port, name, (s) => s === null, 60_000);
      const [rangeA] = await offsetRange(env.bootstrapHost, topicA);
      assert.equal(rangeA.latest, 3n);
      const [rangeB] = await offsetRange(env.bootstrapHost, topicB);
      assert.equal(rangeB.latest, 2n);

      // update and delete of an absent connector are refused precisely
      assert.equal(
        await codeOf(port.updateConnectorConfig(name, { config, secretKeys: [] })),
        "CONNECT_NOT_FOUND",
      );
      assert.equal(await codeOf(port.deleteConnector(name)), "CONNECT_NOT_FOUND");
      assert.equal(await port.connectorConfig(name), null, "the refused update created nothing");
    } finally {
      stop();
      await port.deleteConnector(name).catch(() => {});
    }
    // the adapter crosses no fault site: the connector journey crosses its table's rows
    // (lib/protocol/connector.ts) around each call, so fakes and this adapter die at the same points
    assert.deepEqual(crossed, []);
  },
);

Deno.test(
  "connect port on the real worker: a sink writes a topic's records to a file; bad config is refused",
  opts,
  async () => {
    const { env, connect } = await connectOf();
    const port = restConnect(connect.restHost);
    const id = crypto.randomUUID().slice(0, 8);
    const topic = `connect-sink-${id}`;
    await createTopic(env.bootstrapHost, topic, 1);
    const values = ['{"a":1}', '{"a":2}', '{"a":3}'];
    await produce(env.bootstrapHost, topic, values.map((value) => ({ key: null, value })));

    // a source without `topic` is invalid: the worker refuses it (400), nothing is created
    const bad = `test-bad-${id}`;
    assert.equal(
      await codeOf(port.createConnector(bad, {
        config: { "connector.class": SOURCE, file: "/data/x", "db.password": "hunter2-secret" },
        secretKeys: [],
      })),
      "CONNECT_REFUSED",
    );
    assert.equal(await port.connectorConfig(bad), null);

    const name = `test-sink-${id}`;
    const file = `out-${id}.jsonl`;
    try {
      await port.createConnector(name, {
        config: {
          "connector.class": SINK,
          "tasks.max": "1",
          topics: topic,
          file: `${connect.dataDirContainer}/${file}`,
        },
        secretKeys: [],
      });
      const status = await waitStatus(port, name, running);
      assert.equal(status?.type, "sink");
      const lines = await waitLines(join(connect.dataDirHost, file), 3);
      assert.deepEqual(lines, values);
      // the file belongs to the user who runs the tests (the worker runs as that user)
      assert.equal((await Deno.stat(join(connect.dataDirHost, file))).uid, Deno.uid());
    } finally {
      await port.deleteConnector(name).catch(() => {});
    }
    assert.equal(await port.connectorConfig(name), null);
  },
);
