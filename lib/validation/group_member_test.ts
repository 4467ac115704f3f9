import assert from "node:assert/strict";
import {
  type GroupMember,
  isMemberOfGeneration,
  notTheRunnerAlone,
  runnerClientId,
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
