// The fake cluster's behaviour beyond the port contract: clients, hooks, retention limits.
import assert from "node:assert/strict";
import { createFakeWorld } from "./fake_world.ts";

Deno.test("a client whose bootstrap is not a listener cannot connect; a closed client refuses calls", async () => {
  const world = createFakeWorld({ seed: "clients" });
  await assert.rejects(world.kafka("elsewhere:9092").describe([]), /cannot connect/);
  const kafka = world.kafka(`other:1,${world.env.bootstrapHost}`);
  assert.equal((await kafka.describe([])).clusterId, world.env.clusterId);
  await kafka.close();
  await assert.rejects(kafka.describe([]), /closed/);
});

Deno.test("a lost setGroupOffsets response: the offsets are set, the caller got an error", async () => {
  const world = createFakeWorld({ seed: "lost-offsets" });
  const kafka = world.kafka();
  await kafka.createTopic("in", 2);
  world.control.failCall("setGroupOffsets", { match: "app", effect: "lose_response" });
  await assert.rejects(kafka.setGroupOffsets("app", "in", new Map([[0, 0n], [1, 0n]])), /lost/);
  assert.deepEqual(await kafka.committedOffsets("app", "in"), new Map([[0, 0n], [1, 0n]]));
  world.control.failCall("createTopic", { match: "out" });
  await assert.rejects(kafka.createTopic("out", 1), /injected/);
  assert.equal((await kafka.describe(["out"])).topics.size, 0, "a failed create made nothing");
});

Deno.test("produce spreads unkeyed records, hashes keyed ones; retention cannot pass the latest offset", async () => {
  const world = createFakeWorld({ seed: "produce" });
  const kafka = world.kafka();
  await kafka.createTopic("t", 3);
  const unkeyed = world.control.produce("t", [{}, {}, {}]);
  assert.deepEqual(unkeyed, [0n, 0n, 0n], "one record per partition");
  const keyed = world.control.produce("t", [{ key: "k" }, { key: "k" }]);
  assert.equal(keyed[1], keyed[0] + 1n, "the same key goes to the same partition");
  assert.throws(() => world.control.deleteRecords("t", 0, 5n), /OFFSET_OUT_OF_RANGE/);
  world.control.deleteRecords("t", 0, 1n);
  world.control.deleteRecords("t", 0, 0n); // never moves back
  assert.equal((await kafka.offsetRanges("t", [0]))[0].earliest, 1n);
  await assert.rejects(kafka.offsetRanges("t", [7]), /UNKNOWN_TOPIC_OR_PARTITION/);
  await assert.rejects(kafka.createTopic("bad", 0), /INVALID_PARTITIONS/);
});

Deno.test("a group with offsets but no member is Empty; without offsets it is gone (Dead)", async () => {
  const world = createFakeWorld({ seed: "groups" });
  const kafka = world.kafka();
  await kafka.createTopic("t", 1);
  const m = world.control.joinGroup("g");
  assert.equal((await kafka.describeGroup("g")).state, "Stable");
  world.control.leaveGroup("g", m);
  assert.equal((await kafka.describeGroup("g")).state, "Dead");
  await kafka.setGroupOffsets("g", "t", new Map([[0, 0n]]));
  assert.equal((await kafka.describeGroup("g")).state, "Empty");
  world.control.deleteTopic("t");
  assert.equal((await kafka.describeGroup("g")).state, "Dead", "its offsets went with the topic");
});

Deno.test("a group's members share out the partitions of the topics they subscribe to: each partition has one owner", async () => {
  const world = createFakeWorld({ seed: "assignment" });
  const kafka = world.kafka();
  await kafka.createTopic("in", 3);
  await kafka.createTopic("other", 2);
  const a = world.control.joinGroup("g", "a", ["in"]);
  assert.deepEqual((await kafka.describeGroup("g")).members[0].assignment, [
    { topic: "in", partitions: [0, 1, 2] },
  ]);
  world.control.joinGroup("g", "b", ["in", "other"]);
  world.control.joinGroup("g", "c"); // subscribes to nothing: assigned nothing
  const g = await kafka.describeGroup("g");
  assert.deepEqual(g.members.map((m) => [m.clientId, m.assignment]), [
    ["a", [{ topic: "in", partitions: [0, 2] }]],
    ["b", [{ topic: "in", partitions: [1] }, { topic: "other", partitions: [0, 1] }]],
    ["c", []],
  ]);
  // the first member leaves: the rest share the topic again
  world.control.leaveGroup("g", a);
  assert.deepEqual((await kafka.describeGroup("g")).members[0].assignment, [
    { topic: "in", partitions: [0, 1, 2] },
    { topic: "other", partitions: [0, 1] },
  ]);
});
