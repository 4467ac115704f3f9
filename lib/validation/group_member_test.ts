import assert from "node:assert/strict";
import {
  type GroupMember,
  isMemberOfGeneration,
  notTheRunnerAlone,
  notTheSetReady,
  runnerClientId,
  unownedPartitions,
} from "./group_member.ts";

interface Vectors {
  client_ids: Array<{ generation: string; client_id: string }>;
  members: Array<{ generation: string; member_client_id: string; of_generation: boolean }>;
}

// the vectors the runner's JUnit ClientIdTest reads too
const vectors: Vectors = JSON.parse(
  await Deno.readTextFile(new URL("../../tests/vectors/client_ids.json", import.meta.url)),
);

const member = (clientId: string): GroupMember => ({
  memberId: `${clientId}-0b6f0c39-8f55-4c1e-9d1b-5a0f2d0c9e11`,
  clientId,
  clientHost: "/172.18.0.5",
  groupInstanceId: null,
  assignment: [],
});

Deno.test("the client ID of a generation is the runner's, as the shared vectors say", () => {
  assert.ok(vectors.client_ids.length > 0);
  for (const v of vectors.client_ids) assert.equal(runnerClientId(v.generation), v.client_id);
});

Deno.test("a member is a generation's only by that generation's client ID and Streams' thread suffix", () => {
  assert.ok(vectors.members.some((v) => v.of_generation), "a positive case");
  assert.ok(vectors.members.some((v) => !v.of_generation), "a negative case");
  for (const v of vectors.members) {
    assert.equal(
      isMemberOfGeneration(v.member_client_id, v.generation),
      v.of_generation,
      v.member_client_id,
    );
  }
});

Deno.test("the one member must be the runner that declares its generation's client ID", () => {
  const gen = "6f1c3a2e-0b7d-4c55-9a10-2f7e8d9c0b11/1";
  const own = member(`${runnerClientId(gen)}-StreamThread-1-consumer`);
  const status = { generation: gen, client_id: runnerClientId(gen) };
  assert.equal(notTheRunnerAlone([own], status, gen), null);
  // not one member
  assert.match(notTheRunnerAlone([], status, gen)!, /0 members/);
  assert.match(notTheRunnerAlone([own, own], status, gen)!, /2 members/);
  // one member, another generation's runner or a consumer of no generation
  const other = member(
    `${runnerClientId("6f1c3a2e-0b7d-4c55-9a10-2f7e8d9c0b11/0")}-StreamThread-1-consumer`,
  );
  assert.match(notTheRunnerAlone([other], status, gen)!, /is not the runner's/);
  assert.match(
    notTheRunnerAlone([member("external-consumer")], status, gen)!,
    /is not the runner's/,
  );
  // a status that declares another client ID (or none, as null) is not this generation's runner
  assert.match(notTheRunnerAlone([own], { client_id: "sluice-x-0" }, gen)!, /declares client ID/);
  assert.match(notTheRunnerAlone([own], { client_id: null }, gen)!, /declares client ID null/);
});

Deno.test("a runner of an older image (no client_id in its status) is checked by the member count only", () => {
  const gen = "6f1c3a2e-0b7d-4c55-9a10-2f7e8d9c0b11/1";
  const legacy = member(
    "sluice-orders-eligible_orders-c24be555-e28c-48e1-8c02-07318737d0ce-StreamThread-1-consumer",
  );
  assert.equal(notTheRunnerAlone([legacy], { generation: gen, version: 3 }, gen), null);
  assert.match(notTheRunnerAlone([legacy, legacy], { generation: gen }, gen)!, /2 members/);
  assert.match(notTheRunnerAlone([], null, gen)!, /0 members/);
});

const holding = (clientId: string, assignment: GroupMember["assignment"]): GroupMember => ({
  ...member(clientId),
  assignment,
});

Deno.test("unowned input partitions: those no member's assignment holds, other topics aside", () => {
  const input = { name: "raw_orders", partitions: 3 };
  assert.deepEqual(
    unownedPartitions([holding("a", [{ topic: "raw_orders", partitions: [0, 1, 2] }])], input),
    [],
  );
  assert.deepEqual(
    unownedPartitions([
      holding("a", [{ topic: "raw_orders", partitions: [0] }]),
      holding("b", [{ topic: "other", partitions: [1, 2] }]),
    ], input),
    [1, 2],
  );
  // a member that joined and holds nothing yet (a rebalance): every partition is unowned
  assert.deepEqual(unownedPartitions([holding("a", [])], input), [0, 1, 2]);
});

Deno.test("unowned input partitions: nothing to say without members or without the input topic", () => {
  assert.equal(unownedPartitions([], { name: "raw_orders", partitions: 3 }), null);
  assert.equal(
    unownedPartitions([holding("a", [{ topic: "raw_orders", partitions: [0] }])], null),
    null,
  );
});

Deno.test("a set is ready when its N instances are the group's N members of the generation, holding every input partition once", () => {
  const gen = "6f1c3a2e-0b7d-4c55-9a10-2f7e8d9c0b11/2";
  const id = `${runnerClientId(gen)}-StreamThread-1-consumer`;
  const status = { generation: gen, client_id: runnerClientId(gen) };
  const input = { name: "raw_orders", partitions: 4 };
  const of = (...parts: number[][]) =>
    parts.map((p) => holding(id, [{ topic: "raw_orders", partitions: p }]));
  const three = [status, status, status];
  assert.equal(notTheSetReady(of([0, 3], [1], [2]), three, gen, input), null);
  // one instance has not joined, or a fourth consumer has
  assert.match(notTheSetReady(of([0, 1, 3], [2]), three, gen, input)!, /2 members, not 3/);
  assert.match(notTheSetReady(of([0], [1], [2], [3]), three, gen, input)!, /4 members, not 3/);
  // a member of no generation, or of the old one, among the three
  const old = holding(`${runnerClientId("op/1")}-StreamThread-1-consumer`, []);
  assert.match(
    notTheSetReady([...of([0, 3], [1, 2]), old], three, gen, input)!,
    /member sluice-op-1-StreamThread-1-consumer is not of the set's generation/,
  );
  // an instance whose status declares another client ID, or none (an older image is no set's)
  assert.match(
    notTheSetReady(
      of([0, 3], [1], [2]),
      [status, { client_id: "sluice-x-0" }, status],
      gen,
      input,
    )!,
    /instance 1's status declares client ID "sluice-x-0"/,
  );
  assert.match(
    notTheSetReady(of([0, 3], [1], [2]), [status, status, { version: 3 }], gen, input)!,
    /instance 2's status declares no client ID/,
  );
  assert.match(
    notTheSetReady(of([0, 3], [1], [2]), [null, status, status], gen, input)!,
    /instance 0's status declares no client ID/,
  );
  // the rebalance has not dealt every partition out, or dealt one twice
  assert.match(
    notTheSetReady(of([0], [1], []), three, gen, input)!,
    /input partition 2, 3 held by no member/,
  );
  assert.match(
    notTheSetReady(of([0, 1], [1, 2], [3]), three, gen, input)!,
    /input partition 1 held by more than one member/,
  );
  // other topics' partitions do not count toward the input's
  const elsewhere = [
    ...of([0, 1], [2]),
    holding(id, [{ topic: "other", partitions: [3] }]),
  ];
  assert.match(
    notTheSetReady(elsewhere, three, gen, input)!,
    /input partition 3 held by no member/,
  );
  assert.match(notTheSetReady(of([0, 3], [1], [2]), three, gen, null)!, /input topic is absent/);
});

Deno.test("a set of one instance is the runner alone, by the single runner's rule exactly", () => {
  const gen = "6f1c3a2e-0b7d-4c55-9a10-2f7e8d9c0b11/1";
  const input = { name: "raw_orders", partitions: 3 };
  const own = member(`${runnerClientId(gen)}-StreamThread-1-consumer`);
  const legacy = member("sluice-orders-eligible_orders-StreamThread-1-consumer");
  const cases: Array<[GroupMember[], Record<string, unknown> | null]> = [
    [[own], { client_id: runnerClientId(gen) }], // ready, though it holds no partition yet
    [[legacy], { version: 3 }], // an older image: the count alone
    [[own, own], { client_id: runnerClientId(gen) }],
    [[own], { client_id: "sluice-x-0" }],
    [[], null],
  ];
  for (const [members, status] of cases) {
    assert.equal(
      notTheSetReady(members, [status], gen, input),
      notTheRunnerAlone(members, status, gen),
    );
  }
  assert.equal(notTheSetReady([own], [{ client_id: runnerClientId(gen) }], gen, input), null);
  assert.match(notTheSetReady([], [], gen, input)!, /no instances/);
});
