import assert from "node:assert/strict";
import {
  addReading,
  generationOfMember,
  generationsOf,
  type GroupMonitorReport,
} from "./group_monitor.ts";
import { runnerClientId } from "../lib/validation/group_member.ts";

const OP = "6f1c3a2e-0b7d-4c55-9a10-2f7e8d9c0b11";
const member = (generation: string, thread = 1) =>
  `${runnerClientId(generation)}-StreamThread-${thread}-consumer`;

Deno.test("a member's generation is read from the runner's client ID alone", () => {
  assert.equal(generationOfMember(member(`${OP}/3`)), `${OP}/3`);
  assert.equal(generationOfMember(member(`${OP}/12`, 2)), `${OP}/12`);
  for (
    const other of [
      "external",
      `sluice-${OP}-3`,
      `${member(`${OP}/3`)}-x`,
      "sluice-op-3-StreamThread-1-consumer",
    ]
  ) {
    assert.equal(generationOfMember(other), null, other);
  }
});

Deno.test("a reading counts distinct generations; an unknown member is one of its own", () => {
  assert.deepEqual(generationsOf([]), []);
  assert.deepEqual(generationsOf([member(`${OP}/1`), member(`${OP}/1`, 2)]), [`${OP}/1`]);
  assert.equal(generationsOf([member(`${OP}/1`), "external"]).length, 2);
  const r: GroupMonitorReport = { counts: [], generations: [], overlaps: [], errors: 0 };
  addReading(r, "t0", [member(`${OP}/1`)]);
  addReading(r, "t1", []);
  addReading(r, "t2", [member(`${OP}/2`)]);
  assert.deepEqual(r.counts, [1, 0, 1]);
  assert.deepEqual(r.generations, [`${OP}/1`, `${OP}/2`]);
  assert.deepEqual(r.overlaps, []);
  addReading(r, "t3", [member(`${OP}/2`), member(`${OP}/3`)]);
  assert.deepEqual(r.counts, [1, 0, 1, 2]);
  assert.deepEqual(r.overlaps, [{ at: "t3", generations: [`${OP}/2`, `${OP}/3`] }]);
});
