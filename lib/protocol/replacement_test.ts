// The replacement table is the program: these tests pin what every reader derives from it.
import assert from "node:assert/strict";
import {
  CHECKPOINT_NAMES,
  CHECKPOINT_ORDER,
  EVERY_STAGE_BLOCKERS,
  OPERATION_WRITES,
  REPLACEMENT_TABLE,
  replacementSites,
  rowsAt,
  STAGES,
} from "./replacement.ts";

Deno.test("the checkpoint order is the spec's, read from the table's record rows", () => {
  assert.deepEqual([...CHECKPOINT_ORDER], [
    "action_started",
    "old_closed",
    "old_removed",
    "replacement_created",
    "action_completed",
  ]);
  assert.deepEqual([...STAGES], ["intent", ...CHECKPOINT_ORDER]);
  // the public list of names is the table's order, not another sequence kept by hand
  assert.deepEqual([...CHECKPOINT_NAMES], [...CHECKPOINT_ORDER]);
});

Deno.test("a record row at a stage writes exactly the next checkpoint", () => {
  for (const row of REPLACEMENT_TABLE.filter((r) => r.step === "record")) {
    const next = STAGES[STAGES.indexOf(row.stage) + 1];
    assert.equal(row.checkpoint, next, `row ${row.id}`);
    assert.equal(row.site.kind, "journal", `row ${row.id}`);
  }
  for (const row of REPLACEMENT_TABLE.filter((r) => r.step !== "record")) {
    assert.equal(row.checkpoint, undefined, `row ${row.id} is not a record row`);
  }
});

Deno.test("every durable stage has a row, and only the last stage completes", () => {
  for (const stage of STAGES) assert.ok(rowsAt(stage).length > 0, `stage ${stage}`);
  const complete = REPLACEMENT_TABLE.filter((r) => r.step === "complete");
  assert.deepEqual(complete.map((r) => r.stage), [STAGES.at(-1)]);
  assert.equal(complete[0].site, OPERATION_WRITES.finalize);
});

Deno.test("provider steps cross provider sites; rows, guards and spec rows are distinct", () => {
  for (const row of REPLACEMENT_TABLE) {
    if (["term", "remove", "create", "start"].includes(row.step)) {
      assert.equal(row.site.kind, "provider", `row ${row.id}`);
    }
  }
  const ids = REPLACEMENT_TABLE.map((r) => r.id);
  assert.equal(new Set(ids).size, ids.length);
  const guards = REPLACEMENT_TABLE.map((r) => r.guard);
  assert.equal(new Set(guards).size, guards.length, "one guard per row");
  const spec = REPLACEMENT_TABLE.map((r) => r.spec.durable);
  assert.equal(new Set(spec).size, spec.length, "one spec row per table row");
});

Deno.test("only rows that wait declare a bound, and declared blockers are stable codes", () => {
  for (const row of REPLACEMENT_TABLE) {
    for (const code of [...row.blockers, ...EVERY_STAGE_BLOCKERS]) {
      assert.match(code, /^BLOCKED_[A-Z_]+$/, `row ${row.id}`);
    }
    if (row.wait) assert.ok(["term", "record", "start"].includes(row.step), `row ${row.id}`);
  }
});

Deno.test("the replacement's sites: intent first, every row's site, resume-only writes last", () => {
  const names = replacementSites().map((s) => s.name);
  assert.deepEqual(names, [
    "journal.intent",
    "journal.action_started",
    "docker.signal_term",
    "journal.old_closed",
    "docker.remove_old",
    "journal.old_removed",
    "runtime.mounted_plan.write",
    "docker.create_candidate",
    "journal.replacement_created",
    "docker.start_candidate",
    "journal.action_completed",
    "state.finalize",
    "journal.interruption",
    "journal.resume",
  ]);
});
