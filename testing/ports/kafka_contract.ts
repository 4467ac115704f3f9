/**
 * The Kafka port contract: the behaviours of a Kafka cluster that sluice's driver and observer
 * rely on, as one list of cases that the fake cluster (testing/fakes) and the real adapter on
 * a real broker (lib/providers/kafka/platformatic.ts) must both pass.
 *
 * What it pins down: one cluster ID; topic IDs in Kafka's form, a new ID for a topic created
 * again; absent topics left out; earliest/latest offsets under produce and retention; group
 * states (Dead, Empty, Stable), members and the partitions assigned to each; committed offsets per
 * topic, settable only while the group has no member; the batched reads of many groups and topics
 * answer what the single reads answer.
 *
 * @example
 * ```ts
 * import { KAFKA_CONTRACT } from "./kafka_contract.ts";
 * import { registerContract } from "./subject.ts";
 * // registerContract("kafka port (fake)", KAFKA_CONTRACT, fakeSubject);
 * ```
 * @module
 */
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import type { ContractCase } from "./subject.ts";
import { eventually } from "./subject.ts";

const KAFKA_ID = /^[A-Za-z0-9_-]{22}$/;

/** The cases, in the order they are registered. */
export const KAFKA_CONTRACT: readonly ContractCase[] = [
  {
    name:
      "describe: one cluster ID, topics with Kafka-form IDs and partition counts, absent topics left out",
    async run(s) {
      const a = s.unique("topic-a");
      const b = s.unique("topic-b");
      const absent = s.unique("absent");
      const idA = await s.kafka.createTopic(a, 3);
      const idB = await s.kafka.createTopic(b, 1);
      assert.match(idA, KAFKA_ID);
      assert.notEqual(idA, idB);
      const d = await s.kafka.describe([a, absent, b]);
      assert.match(d.clusterId, KAFKA_ID);
      assert.deepEqual([...d.topics.keys()].sort(), [a, b].sort());
      assert.deepEqual(d.topics.get(a), { name: a, id: idA, partitions: 3 });
      assert.deepEqual(d.topics.get(b), { name: b, id: idB, partitions: 1 });
      const again = await s.kafka.describe([]);
      assert.equal(again.clusterId, d.clusterId);
      assert.equal(again.topics.size, 0);
    },
  },
  {
    name: "creating an existing topic is refused and keeps its ID",
    async run(s) {
      const t = s.unique("topic");
      const id = await s.kafka.createTopic(t, 2);
      await assert.rejects(s.kafka.createTopic(t, 2));
      assert.deepEqual((await s.kafka.describe([t])).topics.get(t), {
        name: t,
        id,
        partitions: 2,
      });
    },
  },
  {
    name: "a topic deleted and created again has a new ID, and no committed offsets of the old one",
    async run(s) {
      const t = s.unique("topic");
      const group = s.unique("group");
      const first = await s.kafka.createTopic(t, 1);
      await s.kafka.setGroupOffsets(group, t, new Map([[0, 0n]]));
      await s.deleteTopic(t);
      // deletion is asynchronous on a real broker: retry until the name is free
      const second = await eventually(s, `${t} to be created again`, async () => {
        try {
          return await s.kafka.createTopic(t, 1);
        } catch {
          return undefined;
        }
      });
      assert.match(second, KAFKA_ID);
      assert.notEqual(second, first, "a recreated topic is another topic");
      assert.equal((await s.kafka.describe([t])).topics.get(t)?.id, second);
      await eventually(s, "the old topic's offsets to be gone", async () => {
        const c = await s.kafka.committedOffsets(group, t);
        return c.size === 0 ? c : undefined;
      });
    },
  },
  {
    name: "an unknown group is Dead with no members and no committed offsets",
    async run(s) {
      const t = s.unique("topic");
      await s.kafka.createTopic(t, 1);
      const group = s.unique("group");
      assert.deepEqual(await s.kafka.describeGroup(group), {
        groupId: group,
        state: "Dead",
        members: [],
      });
      assert.deepEqual(await s.kafka.committedOffsets(group, t), new Map());
    },
  },
  {
    name: "offset ranges follow produced records and retention; an unknown topic is refused",
    async run(s) {
      const t = s.unique("topic");
      await s.kafka.createTopic(t, 2);
      assert.deepEqual(await s.kafka.offsetRanges(t, [0, 1]), [
        { partition: 0, earliest: 0n, latest: 0n },
        { partition: 1, earliest: 0n, latest: 0n },
      ]);
      await s.produce(t, [
        { partition: 0, key: "a", value: "1" },
        { partition: 0, key: "b", value: "2" },
        { partition: 0, key: "c", value: "3" },
        { partition: 1, key: "d", value: "4" },
      ]);
      assert.deepEqual(await s.kafka.offsetRanges(t, [0, 1]), [
        { partition: 0, earliest: 0n, latest: 3n },
        { partition: 1, earliest: 0n, latest: 1n },
      ]);
      assert.deepEqual(await s.kafka.offsetRanges(t, [1]), [
        { partition: 1, earliest: 0n, latest: 1n },
      ]);
      await s.deleteRecords(t, 0, 2n);
      assert.deepEqual(await s.kafka.offsetRanges(t, [0, 1]), [
        { partition: 0, earliest: 2n, latest: 3n },
        { partition: 1, earliest: 0n, latest: 1n },
      ]);
      await assert.rejects(s.kafka.offsetRanges(s.unique("absent"), [0]));
    },
  },
  {
    name:
      "offsets set on a group without members read back per topic, can move either way, and make it Empty",
    async run(s) {
      const t = s.unique("topic");
      const other = s.unique("other");
      await s.kafka.createTopic(t, 3);
      await s.kafka.createTopic(other, 1);
      const group = s.unique("group");
      await s.kafka.setGroupOffsets(group, t, new Map([[0, 0n], [1, 0n], [2, 0n]]));
      await s.kafka.setGroupOffsets(group, other, new Map([[0, 0n]]));
      assert.deepEqual(
        await s.kafka.committedOffsets(group, t),
        new Map([[0, 0n], [1, 0n], [2, 0n]]),
      );
      assert.deepEqual(await s.kafka.committedOffsets(group, other), new Map([[0, 0n]]));
      const g = await s.kafka.describeGroup(group);
      assert.equal(g.state, "Empty");
      assert.deepEqual(g.members, []);
      await s.produce(t, [{ partition: 1, key: "k", value: "v" }]);
      await s.kafka.setGroupOffsets(group, t, new Map([[1, 1n]]));
      assert.deepEqual(
        await s.kafka.committedOffsets(group, t),
        new Map([[0, 0n], [1, 1n], [2, 0n]]),
        "only the named partitions change",
      );
      await s.kafka.setGroupOffsets(group, t, new Map([[1, 0n]]));
      assert.equal((await s.kafka.committedOffsets(group, t)).get(1), 0n, "it can move back");
    },
  },
  {
    name:
      "while a member is active the group is Stable, the member holds its assigned partitions and the offsets cannot be set; after it leaves it is Empty",
    async run(s) {
      const t = s.unique("topic");
      await s.kafka.createTopic(t, 1);
      const group = s.unique("group");
      await s.kafka.setGroupOffsets(group, t, new Map([[0, 0n]]));
      const member = await s.joinGroup(group, t);
      try {
        const g = await eventually(s, "one stable member", async () => {
          const g = await s.kafka.describeGroup(group);
          return g.state === "Stable" && g.members.length === 1 ? g : undefined;
        });
        assert.match(g.members[0].memberId, /\S/);
        assert.match(g.members[0].clientId, /\S/);
        // the group's assignment gave its one member the topic's one partition
        assert.deepEqual(g.members[0].assignment, [{ topic: t, partitions: [0] }]);
        await assert.rejects(s.kafka.setGroupOffsets(group, t, new Map([[0, 0n]])));
      } finally {
        await member.leave();
      }
      const g = await eventually(s, "the group Empty", async () => {
        const g = await s.kafka.describeGroup(group);
        return g.state === "Empty" ? g : undefined;
      });
      assert.deepEqual(g.members, []);
      assert.equal((await s.kafka.committedOffsets(group, t)).has(0), true);
      await s.kafka.setGroupOffsets(group, t, new Map([[0, 0n]]));
    },
  },
  {
    name:
      "batched reads answer what the single reads answer, for every group and topic asked (unknown group Dead, absent topic refused)",
    async run(s) {
      const a = s.unique("topic-a");
      const b = s.unique("topic-b");
      await s.kafka.createTopic(a, 2);
      await s.kafka.createTopic(b, 1);
      await s.produce(a, [
        { partition: 0, key: "k", value: "1" },
        { partition: 0, key: "k", value: "2" },
        { partition: 1, key: "k", value: "3" },
      ]);
      const g1 = s.unique("group");
      const g2 = s.unique("group");
      const unknown = s.unique("group");
      await s.kafka.setGroupOffsets(g1, a, new Map([[0, 2n], [1, 0n]]));
      await s.kafka.setGroupOffsets(g1, b, new Map([[0, 0n]]));
      await s.kafka.setGroupOffsets(g2, a, new Map([[1, 1n]]));
      const member = await s.joinGroup(g2, b);
      try {
        await eventually(s, "one member in the second group", async () => {
          const g = await s.kafka.describeGroup(g2);
          return g.members.length === 1 ? g : undefined;
        });
        const groups = await s.kafka.describeGroups([g1, g2, unknown]);
        assert.deepEqual([...groups.keys()].sort(), [g1, g2, unknown].sort());
        for (const g of [g1, g2, unknown]) {
          assert.deepEqual(groups.get(g), await s.kafka.describeGroup(g), g);
        }
        assert.equal(groups.get(unknown)?.state, "Dead");
        assert.equal(groups.get(g2)?.members.length, 1);
      } finally {
        await member.leave();
      }
      const committed = await s.kafka.committedOffsetsOf([g1, g2, unknown]);
      assert.deepEqual([...committed.keys()].sort(), [g1, g2, unknown].sort());
      assert.deepEqual(committed.get(g1)?.get(a), await s.kafka.committedOffsets(g1, a));
      assert.deepEqual(committed.get(g1)?.get(b), new Map([[0, 0n]]));
      assert.deepEqual(committed.get(g2)?.get(a), new Map([[1, 1n]]));
      assert.equal(committed.get(unknown)?.size, 0);
      const ranges = await s.kafka.offsetRangesOf([
        { topic: a, partitions: [0, 1] },
        { topic: b, partitions: [0] },
      ]);
      assert.deepEqual(ranges.get(a), await s.kafka.offsetRanges(a, [0, 1]));
      assert.deepEqual(ranges.get(a), [
        { partition: 0, earliest: 0n, latest: 2n },
        { partition: 1, earliest: 0n, latest: 1n },
      ]);
      assert.deepEqual(ranges.get(b), [{ partition: 0, earliest: 0n, latest: 0n }]);
      assert.deepEqual(await s.kafka.describeGroups([]), new Map());
      await assert.rejects(
        s.kafka.offsetRangesOf([{ topic: a, partitions: [0] }, {
          topic: s.unique("absent"),
          partitions: [0],
        }]),
      );
    },
  },
  {
    name:
      "deleting a group: refused while it has a member (offsets kept), deleted with its offsets once empty, then absent",
    async run(s) {
      const t = s.unique("topic");
      await s.kafka.createTopic(t, 1);
      const group = s.unique("group");
      await s.kafka.setGroupOffsets(group, t, new Map([[0, 0n]]));
      const member = await s.joinGroup(group, t);
      try {
        await eventually(s, "one member", async () => {
          const g = await s.kafka.describeGroup(group);
          return g.members.length === 1 ? g : undefined;
        });
        await assert.rejects(s.kafka.deleteGroup(group), (e) => {
          assert.ok(e instanceof SluiceError, String(e));
          assert.equal(e.code, "BLOCKED_GROUP_ACTIVE", e.message);
          assert.match(e.message, /NON_EMPTY_GROUP/);
          return true;
        });
      } finally {
        await member.leave();
      }
      assert.equal((await s.kafka.committedOffsets(group, t)).get(0), 0n, "the offsets stay");
      // the member's leave reaches the coordinator asynchronously on a real broker
      const deleted = await eventually(s, `${group} deleted`, async () => {
        try {
          return await s.kafka.deleteGroup(group);
        } catch (e) {
          if (e instanceof SluiceError && e.code === "BLOCKED_GROUP_ACTIVE") return undefined;
          throw e;
        }
      });
      assert.equal(deleted, "deleted");
      assert.equal((await s.kafka.describeGroup(group)).state, "Dead");
      assert.deepEqual(await s.kafka.committedOffsets(group, t), new Map());
      assert.equal(await s.kafka.deleteGroup(group), "absent");
    },
  },
  {
    name:
      "deleting a topic: only the one of that ID (another ID refused, nothing deleted), gone once answered, then absent",
    async run(s) {
      const t = s.unique("topic");
      const other = s.unique("other");
      const id = await s.kafka.createTopic(t, 2);
      const otherId = await s.kafka.createTopic(other, 1);
      await assert.rejects(s.kafka.deleteTopic(t, otherId), (e) => {
        assert.ok(e instanceof SluiceError, String(e));
        assert.equal(e.code, "BLOCKED_TOPIC_REPLACED", e.message);
        return true;
      });
      assert.equal((await s.kafka.describe([t])).topics.get(t)?.id, id);
      assert.equal(await s.kafka.deleteTopic(t, id), "deleted");
      assert.deepEqual([...(await s.kafka.describe([t, other])).topics.keys()], [other]);
      assert.equal(await s.kafka.deleteTopic(t, id), "absent");
      // the name is free again: a topic created under it is another topic
      const again = await eventually(s, `${t} created again`, async () => {
        try {
          return await s.kafka.createTopic(t, 1);
        } catch {
          return undefined;
        }
      });
      assert.notEqual(again, id);
      await assert.rejects(s.kafka.deleteTopic(t, id), /BLOCKED_TOPIC_REPLACED|another topic/);
      assert.equal((await s.kafka.describe([t])).topics.get(t)?.id, again);
    },
  },
];
