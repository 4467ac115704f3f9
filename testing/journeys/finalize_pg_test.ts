// Finalization (the table's last row) on the fakes, on both state backends' real code: it
// re-observes the ready candidate before committing serial + 1 once with one receipt; it
// waits while the candidate is not running; a lost acknowledgement is unknown, and the next
// resume verifies the receipt without a second increment.
import assert from "node:assert/strict";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import type { StateStore } from "../../lib/state/store.ts";
import { checkpointNames, historyEvents } from "../sweep/reads.ts";
import {
  BACKENDS,
  failingStore,
  type ReplacementCase,
  replacementCase,
} from "./replacement_case.ts";

/** Execute with the finalization failing (`fail`: never written; `lose`: written, unacknowledged). */
async function executeWithFinalize(rc: ReplacementCase, effect: "fail" | "lose") {
  const store: StateStore = await rc.openStore();
  try {
    const failing = failingStore(store, "finalizeCompletedRunner", () => true, effect);
    return await executeReviewed(rc.options({ store: failing }));
  } finally {
    await store.close();
  }
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] finalization after action_completed commits serial + 1 once with one receipt`, async () => {
    await using rc = await replacementCase(backend);
    const first = await executeWithFinalize(rc, "fail");
    assert.equal(first.committed, null, JSON.stringify(first));
    assert.equal(first.last_boundary, "action_completed");
    let state = await rc.state();
    assert.equal(state.ownership?.serial, 1);
    assert.deepEqual(checkpointNames(state.control).at(-1), "action_completed");
    const mutations = rc.mutations().length;
    const r = await resumeReviewed(rc.operation(first.operation_id));
    assert.equal(r.committed, true, JSON.stringify(r));
    assert.equal(r.serial, 2);
    state = await rc.state();
    assert.equal(state.ownership?.serial, 2);
    assert.equal(state.control, null);
    assert.equal(historyEvents(state).filter((e) => e.kind === "runner_completed").length, 1);
    assert.equal(rc.mutations().length, mutations, "finalization makes no provider call");
  });

  Deno.test(`[${backend}] finalization waits while the completed candidate is not running`, async () => {
    await using rc = await replacementCase(backend);
    const first = await executeWithFinalize(rc, "fail");
    assert.equal(first.last_boundary, "action_completed");
    const candidate = Object.values(rc.world().docker.containers).find((c) =>
      c.name === rc.candidateName(first.operation_id)
    )!;
    rc.cw.world.control.killContainer(candidate.id);
    const before = await rc.state();
    const r = await resumeReviewed(rc.operation(first.operation_id));
    assert.equal(r.committed, false, JSON.stringify(r));
    assert.equal(r.outcome, "blocked");
    assert.ok(r.blockers.length > 0);
    const after = await rc.state();
    assert.equal(after.ownership?.serial, 1, "no increment");
    assert.equal(historyEvents(after).filter((e) => e.kind === "runner_completed").length, 0);
    assert.deepEqual(checkpointNames(after.control), checkpointNames(before.control));
  });

  Deno.test(`[${backend}] a lost finalization acknowledgement is unknown; resume verifies the receipt`, async () => {
    await using rc = await replacementCase(backend);
    const first = await executeWithFinalize(rc, "lose");
    assert.equal(first.committed, null, JSON.stringify(first));
    assert.equal(first.outcome, "unknown");
    const r = await resumeReviewed(rc.operation(first.operation_id));
    assert.equal(r.committed, true, JSON.stringify(r));
    const state = await rc.state();
    assert.equal(state.ownership?.serial, 2, "exactly one increment");
    assert.equal(historyEvents(state).filter((e) => e.kind === "runner_completed").length, 1);
  });
}
