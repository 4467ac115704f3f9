// test-needs: env
// Needs: Docker, the broker image and PostgreSQL (scripts/bootstrap.sh); the environment is
// started by tools/test.ts and shared with the other integration tests.
import assert from "node:assert/strict";
import pg from "pg";
import { Consumer, MessagesStreamModes, stringDeserializers } from "@platformatic/kafka";
import { RUN_LABEL, sharedEnv, startEnv } from "../harness/env.ts";
import { countLabelled, docker, runOnce } from "../harness/docker.ts";
import { KAFKA_IMAGE } from "../harness/images.ts";
import {
  committedOffsets,
  createTopic,
  describeCluster,
  offsetRange,
  produce,
  readAll,
  withAdmin,
} from "../harness/kafka.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

function uniqueTopic(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}

Deno.test("broker is reachable from the host: produce then read back exactly", opts, async () => {
  const env = await sharedEnv();
  const topic = uniqueTopic("env-host");
  await createTopic(env.bootstrapHost, topic, 1);
  const sent = [1, 2, 3].map((i) => ({ key: `k${i}`, value: JSON.stringify({ i }) }));
  await produce(env.bootstrapHost, topic, sent);
  const got = await readAll(env.bootstrapHost, topic);
  assert.deepEqual(got.map((r) => [r.key, r.value]), sent.map((r) => [r.key, r.value]));
  assert.deepEqual(got.map((r) => r.offset), [0n, 1n, 2n]);
});

Deno.test("broker is reachable from a container on the network by its alias", opts, async () => {
  const env = await sharedEnv();
  const topic = uniqueTopic("env-net");
  await createTopic(env.bootstrapHost, topic, 1);
  await produce(env.bootstrapHost, topic, [
    { key: "a", value: "first" },
    { key: "b", value: "second" },
  ]);
  const run = await runOnce(KAFKA_IMAGE, [
    "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "--bootstrap-server",
    env.bootstrapInternal,
    "--topic",
    topic,
    "--from-beginning",
    "--max-messages",
    "2",
    "--timeout-ms",
    "30000",
    "--property",
    "print.key=true",
  ], {
    network: env.network,
    labels: env.labels,
    entrypoint: "/opt/kafka/bin/kafka-run-class.sh",
  });
  assert.equal(run.exitCode, 0, run.stderr);
  assert.deepEqual(run.stdout.trim().split("\n"), ["a\tfirst", "b\tsecond"]);
});

Deno.test(
  "cluster ID and topic ID are read from the broker and stable across reads",
  opts,
  async () => {
    const env = await sharedEnv();
    const topic = uniqueTopic("env-ids");
    const createdId = await createTopic(env.bootstrapHost, topic, 2);
    const first = await describeCluster(env.bootstrapHost, [topic]);
    const second = await describeCluster(env.bootstrapHost, [topic]);
    // the cluster ID is the one the harness formatted the broker's storage with
    assert.equal(first.clusterId, env.clusterId);
    assert.equal(second.clusterId, env.clusterId);
    assert.match(createdId, /^[A-Za-z0-9_-]{22}$/);
    assert.equal(first.topicIds[topic], createdId);
    assert.equal(second.topicIds[topic], createdId);
  },
);

Deno.test("a deleted and recreated topic gets a new topic ID", opts, async () => {
  const env = await sharedEnv();
  const topic = uniqueTopic("env-recreate");
  const before = await createTopic(env.bootstrapHost, topic, 1);
  await withAdmin(env.bootstrapHost, (admin) => admin.deleteTopics({ topics: [topic] }));
  let after: string | undefined;
  for (let i = 0; i < 50 && after === undefined; i++) {
    try {
      after = await createTopic(env.bootstrapHost, topic, 1);
    } catch {
      await new Promise((r) => setTimeout(r, 200)); // deletion is asynchronous on the broker
    }
  }
  assert.ok(after, "the topic could be recreated");
  assert.notEqual(after, before);
});

Deno.test(
  "group offsets, group state and members, earliest and latest offsets are observable",
  opts,
  async () => {
    const env = await sharedEnv();
    const topic = uniqueTopic("env-group");
    const group = `env-group-${crypto.randomUUID().slice(0, 8)}`;
    await createTopic(env.bootstrapHost, topic, 1);
    await produce(
      env.bootstrapHost,
      topic,
      [0, 1, 2, 3].map((i) => ({ key: null, value: `v${i}` })),
    );

    const consumer = new Consumer({
      clientId: "env-test",
      groupId: group,
      bootstrapBrokers: [env.bootstrapHost],
      deserializers: stringDeserializers,
      sessionTimeout: 10_000,
      heartbeatInterval: 500,
    });
    const stream = await consumer.consume({
      topics: [topic],
      mode: MessagesStreamModes.EARLIEST,
      autocommit: false,
    });
    let seen = 0;
    for await (const m of stream) {
      seen++;
      if (seen === 3) {
        await m.commit(); // commits offset 3 (the next to read)
        break;
      }
    }
    const live = await withAdmin(
      env.bootstrapHost,
      (admin) => admin.describeGroups({ groups: [group] }),
    );
    const g = live.get(group);
    assert.ok(g);
    assert.equal(g.state.toUpperCase(), "STABLE");
    assert.equal(g.members.size, 1);
    await stream.close();
    await consumer.close(true);

    assert.deepEqual(await committedOffsets(env.bootstrapHost, group, topic), new Map([[0, 3n]]));
    const [range] = await offsetRange(env.bootstrapHost, topic);
    assert.equal(range.earliest, 0n);
    assert.equal(range.latest, 4n);

    // after the member left, the group is Empty and keeps its offsets
    const after = await withAdmin(
      env.bootstrapHost,
      (admin) => admin.describeGroups({ groups: [group] }),
    );
    assert.equal(after.get(group)?.state.toUpperCase(), "EMPTY");
    assert.equal(after.get(group)?.members.size, 0);
  },
);

Deno.test("PostgreSQL accepts a connection and a transaction", opts, async () => {
  const env = await sharedEnv();
  const client = new pg.Client({ connectionString: env.pgUrl });
  await client.connect();
  try {
    await client.query("BEGIN");
    await client.query("CREATE TEMP TABLE sluice_env_probe (n int) ON COMMIT DROP");
    await client.query("INSERT INTO sluice_env_probe VALUES (41), (1)");
    const r = await client.query<{ s: string }>("SELECT sum(n)::text AS s FROM sluice_env_probe");
    assert.equal(r.rows[0].s, "42");
    await client.query("COMMIT");
    const v = await client.query<{ server_version_num: string }>("SHOW server_version_num");
    assert.ok(Number(v.rows[0].server_version_num) >= 150000);
  } finally {
    await client.end();
  }
});

Deno.test(
  "tear-down removes every container, volume and network of its run, and nothing else",
  opts,
  async () => {
    const bystander = `sluice-bystander-${crypto.randomUUID().slice(0, 8)}`;
    await docker().createVolume({ Name: bystander, Labels: { [RUN_LABEL]: "someone-else" } });
    // no Connect worker: the counts below are the broker's and this test's own
    const env = await startEnv({ connect: false });
    try {
      await docker().createVolume({ Name: `${env.runId}-vol`, Labels: env.labels });
      const c = await docker().createContainer({
        Image: KAFKA_IMAGE,
        name: `${env.runId}-extra`,
        Labels: env.labels,
        Entrypoint: ["true"],
        HostConfig: { NetworkMode: env.network },
      });
      assert.ok(c.id);
      const before = await countLabelled(RUN_LABEL, env.runId);
      assert.deepEqual(before, { containers: 2, volumes: 1, networks: 1 });
      const removed = await env.teardown();
      assert.deepEqual(removed, { ...before, strays: [] });
      assert.deepEqual(await countLabelled(RUN_LABEL, env.runId), {
        containers: 0,
        volumes: 0,
        networks: 0,
      });
      // a resource with another run's label is untouched
      const still = await docker().getVolume(bystander).inspect();
      assert.equal(still.Name, bystander);
    } finally {
      await env.teardown();
      await docker().getVolume(bystander).remove();
    }
  },
);
