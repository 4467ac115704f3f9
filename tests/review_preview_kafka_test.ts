// test-needs: env
// Needs: the broker (shared environment from tools/test.ts). The live preview and the live
// consumer read against real Kafka: records at the predicate's edges (NULL under three-valued
// logic, BIGINT values above 2^53, undecodable records, a tombstone), an aborted transaction
// that read_committed must not show, the last-N bound across partitions, and proof that
// nothing joined a group, committed an offset or created a topic.
import assert from "node:assert/strict";
import { Producer, stringSerializers } from "@platformatic/kafka";
import { sharedEnv } from "../harness/env.ts";
import { createTopic, produce, withAdmin } from "../harness/kafka.ts";
import type { SchemaField } from "../lib/expr/schema.ts";
import { checkPredicateSql } from "../lib/project/model.ts";
import { platformaticKafka, PREVIEW_UNUSED_GROUP } from "../lib/providers/kafka/platformatic.ts";
import { observeConsumers } from "../lib/runtime/consumer_observer.ts";
import { sampleModel } from "../lib/review/preview.ts";
import type { PreviewTarget } from "../lib/review/preview.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const schema: SchemaField[] = [
  { name: "order_id", type: "STRING", nullable: false },
  { name: "amount", type: "BIGINT", nullable: false },
  { name: "region", type: "STRING", nullable: true },
];

function target(topic: string, oldSql: string, newSql: string): PreviewTarget {
  return {
    model: "edges",
    input_topic: topic,
    schema,
    projection: [{ source: "order_id", name: "id" }, { source: "amount", name: "amount" }],
    old: checkPredicateSql(oldSql, schema),
    new: checkPredicateSql(newSql, schema),
  };
}

const order = (id: string, amount: string, region: string | null) =>
  `{"order_id":"${id}","amount":${amount},"region":${region === null ? "null" : `"${region}"`}}`;

async function groups(bootstrap: string): Promise<string[]> {
  return await withAdmin(bootstrap, async (a) => [...(await a.listGroups()).keys()]);
}

Deno.test(
  "preview against real Kafka: edges, NULLs, 64-bit values, undecodable, aborted transactions",
  opts,
  async () => {
    const env = await sharedEnv();
    const topic = `preview_edges_${crypto.randomUUID().slice(0, 8)}`;
    await createTopic(env.bootstrapHost, topic, 2);
    await produce(env.bootstrapHost, topic, [
      // partition 0: the bound 2^53 + 1 = 9007199254740993 and its neighbours
      { key: "a", value: order("a", "9007199254740992", "eu"), partition: 0 }, // neither
      { key: "b", value: order("b", "9007199254740993", "eu"), partition: 0 }, // old only (>=)
      { key: "c", value: order("c", "9007199254740994", null), partition: 0 }, // old; new UNKNOWN
      { key: "d", value: order("d", "9223372036854775807", "us"), partition: 0 }, // both
      // partition 1: NULL region under three-valued logic, undecodable records, a tombstone
      { key: "e", value: order("e", "1", null), partition: 1 }, // old UNKNOWN → new TRUE (IS NULL)
      { key: "f", value: order("f", "1", "eu"), partition: 1 }, // neither
      { key: "g", value: '{"order_id":"g","amount":"1","region":null}', partition: 1 }, // wrong type
      { key: "h", value: '{"order_id":"h","amount":1}', partition: 1 }, // missing field
      { key: "i", value: null, partition: 1 }, // tombstone
    ]);
    // an aborted transaction whose records every predicate here would admit
    const tx = new Producer({
      clientId: "sluice-test-tx",
      bootstrapBrokers: [env.bootstrapHost],
      serializers: stringSerializers,
      transactionalId: `sluice-test-${crypto.randomUUID()}`,
      idempotent: true,
    });
    try {
      const t = await tx.beginTransaction();
      await t.send({
        messages: [
          { topic, key: "x", value: order("aborted", "9223372036854775807", null), partition: 0 },
          { topic, key: "y", value: order("aborted", "9223372036854775807", null), partition: 1 },
        ],
      });
      await t.abort();
    } finally {
      await tx.close();
    }
    await produce(env.bootstrapHost, topic, [
      { key: "j", value: order("j", "10000000000000000", "us"), partition: 0 }, // both (after abort)
    ]);

    const before = await groups(env.bootstrapHost);
    const kafka = platformaticKafka(env.bootstrapHost);
    try {
      const m = await sampleModel(
        kafka,
        // old: at least 2^53 + 1; new: above it and in 'us', or no region at all
        target(
          topic,
          "amount >= 9007199254740993",
          "amount > 9007199254740993 AND region = 'us' OR region IS NULL",
        ),
        { records: 1000, maxBytes: 1 << 20, timeoutMs: 30_000 },
      );
      assert.equal(m.stopped, null);
      assert.equal(m.tombstones, 1);
      assert.equal(m.sampled, 9); // a..h minus the tombstone, plus j; never the aborted records
      assert.deepEqual(m.undecodable_by_reason, { DECODE_WRONG_TYPE: 1, DECODE_MISSING_FIELD: 1 });
      // admitted by old: b, c, d, j; by new: d, j (region 'us'), c and e (region NULL → IS NULL)
      assert.equal(m.admitted_old, 4);
      assert.equal(m.admitted_new, 4);
      assert.deepEqual(m.examples.newly_admitted.map((e) => e.values.id), ["e"]);
      assert.deepEqual(m.examples.newly_dropped.map((e) => [e.values.id, e.values.amount]), [
        ["b", "9007199254740993"],
      ]);
      assert.doesNotMatch(JSON.stringify(m), /aborted/);

      // the last N: with N = 2, the two most recent records of the topic
      const last = await sampleModel(
        kafka,
        target(topic, "amount < 0", "amount >= 0"),
        { records: 2, maxBytes: 1 << 20, timeoutMs: 30_000 },
      );
      assert.equal(last.requested, 2);
      assert.ok(last.sampled + last.tombstones <= 2);
      assert.ok(last.examples.newly_admitted.some((e) => e.values.id === "j"));

      // a preview of an absent topic reads nothing and creates nothing
      const absent = `preview_absent_${crypto.randomUUID().slice(0, 8)}`;
      const none = await sampleModel(kafka, target(absent, "amount < 0", "amount >= 0"));
      assert.equal(none.sampled, 0);
      assert.equal((await kafka.describe([absent])).topics.has(absent), false);
    } finally {
      await kafka.close();
    }
    // nothing joined a group or committed: the group list is unchanged
    const after = await groups(env.bootstrapHost);
    assert.ok(!after.includes(PREVIEW_UNUSED_GROUP));
    assert.deepEqual(after.filter((g) => !before.includes(g)), []);
  },
);

Deno.test(
  "live consumers against real Kafka: groups with committed offsets on a topic, nothing else",
  opts,
  async () => {
    const env = await sharedEnv();
    const suffix = crypto.randomUUID().slice(0, 8);
    const topic = `review_out_${suffix}`;
    const other = `review_other_${suffix}`;
    await createTopic(env.bootstrapHost, topic, 2);
    await createTopic(env.bootstrapHost, other, 1);
    const kafka = platformaticKafka(env.bootstrapHost);
    try {
      // two inactive groups with committed offsets on the topic, one only on another topic
      await kafka.setGroupOffsets(`fraud_app_${suffix}`, topic, new Map([[0, 0n], [1, 0n]]));
      await kafka.setGroupOffsets(`shadow_${suffix}`, topic, new Map([[1, 0n]]));
      await kafka.setGroupOffsets(`elsewhere_${suffix}`, other, new Map([[0, 0n]]));
      const { consumers } = await observeConsumers(kafka, [topic, other]);
      assert.ok(consumers);
      const mine = consumers.topics[topic].filter((g) => g.group_id.endsWith(suffix));
      assert.deepEqual(mine.map((g) => [g.group_id, g.state, g.members, g.committed]), [
        [`fraud_app_${suffix}`, "Empty", 0, { "0": "0", "1": "0" }],
        [`shadow_${suffix}`, "Empty", 0, { "1": "0" }],
      ]);
      assert.deepEqual(
        consumers.topics[other].filter((g) => g.group_id.endsWith(suffix)).map((g) => g.group_id),
        [`elsewhere_${suffix}`],
      );
      // reading did not change any committed offset
      const again = await observeConsumers(kafka, [topic]);
      assert.deepEqual(
        again.consumers!.topics[topic].filter((g) => g.group_id.endsWith(suffix)),
        mine,
      );
    } finally {
      await kafka.close();
    }
  },
);
