/**
 * The end-to-end smoke journey of the foundation: bring up a real environment (network,
 * KRaft broker, PostgreSQL), create a topic, produce from the host, consume from a container
 * on the network, print the cluster ID and topic ID, tear down. Exits non-zero if any step
 * does not give the exact expected result.
 *
 *   deno task smoke
 * @module
 */
import pg from "pg";
import { startEnv } from "../harness/env.ts";
import { runOnce } from "../harness/docker.ts";
import { KAFKA_IMAGE } from "../harness/images.ts";
import { createTopic, describeCluster, produce } from "../harness/kafka.ts";

function step(name: string, t0: number, detail: string) {
  console.log(`[demo] ${name.padEnd(28)} ${detail} (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
}

let t = Date.now();
await using env = await startEnv();
step(
  "environment up",
  t,
  `broker ${env.bootstrapHost} (host) / ${env.bootstrapInternal} (network ${env.network})`,
);

t = Date.now();
const topic = "smoke_orders";
const topicId = await createTopic(env.bootstrapHost, topic, 1);
step("topic created", t, `${topic} id=${topicId}`);

t = Date.now();
const records = [
  { key: "o-1", value: '{"order_id":"o-1","amount":120,"paid":true}' },
  { key: "o-2", value: '{"order_id":"o-2","amount":80,"paid":true}' },
  { key: "o-3", value: '{"order_id":"o-3","amount":300,"paid":false}' },
];
await produce(env.bootstrapHost, topic, records);
step("produced from the host", t, `${records.length} records`);

t = Date.now();
const consumed = await runOnce(KAFKA_IMAGE, [
  "org.apache.kafka.tools.consumer.ConsoleConsumer",
  "--bootstrap-server",
  env.bootstrapInternal,
  "--topic",
  topic,
  "--from-beginning",
  "--max-messages",
  String(records.length),
  "--timeout-ms",
  "30000",
  "--property",
  "print.key=true",
], { network: env.network, labels: env.labels, entrypoint: "/opt/kafka/bin/kafka-run-class.sh" });
const lines = consumed.stdout.trim().split("\n");
const expected = records.map((r) => `${r.key}\t${r.value}`);
if (consumed.exitCode !== 0 || JSON.stringify(lines) !== JSON.stringify(expected)) {
  console.error(
    `[demo] consumer in the network gave exit ${consumed.exitCode}:\n${consumed.stdout}\n${consumed.stderr}`,
  );
  Deno.exit(1);
}
step("consumed in a container", t, `${lines.length} records, exactly as produced:`);
for (const l of lines) console.log(`         ${l.replace("\t", "  ")}`);

t = Date.now();
const ids = await describeCluster(env.bootstrapHost, [topic]);
if (ids.clusterId !== env.clusterId || ids.topicIds[topic] !== topicId) {
  console.error(`[demo] identities differ: ${JSON.stringify(ids)}`);
  Deno.exit(1);
}
step("identities", t, `cluster ID ${ids.clusterId}, topic ID ${ids.topicIds[topic]}`);

t = Date.now();
const client = new pg.Client({ connectionString: env.pgUrl });
await client.connect();
const v = await client.query<{ v: string }>("SELECT version() AS v");
await client.end();
step("PostgreSQL", t, v.rows[0].v.split(",")[0]);
console.log("[demo] ok");
