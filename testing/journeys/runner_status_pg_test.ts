// runnerStatus (state runner-status) on the fakes, on both state backends' real code: at each
// durable stage a lost response can leave, it reports the table row the fresh evidence selects,
// and it mutates nothing — no provider call, no state byte.
import assert from "node:assert/strict";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { runnerStatus } from "../../lib/runtime/replacement/runner_status.ts";
import { BACKENDS, replacementCase } from "./replacement_case.ts";

/** The lost response, the durable stage it leaves, and the row that resolves it. */
const STAGES = [
  { lost: "signalTerm", stage: "action_started", row: "record_old_closed" },
  { lost: "removeContainer", stage: "old_closed", row: "record_old_removed" },
  { lost: "createContainer", stage: "old_removed", row: "record_replacement_created" },
  { lost: "startContainer", stage: "replacement_created", row: "record_action_completed" },
] as const;

for (const backend of BACKENDS) {
  for (const s of STAGES) {
    Deno.test(`[${backend}] runner-status after a lost ${s.lost} response names row ${s.row} and mutates nothing`, async () => {
      await using rc = await replacementCase(backend);
      rc.cw.world.control.failCall(s.lost, { effect: "lose_response" });
      const first = await executeReviewed(rc.options());
      assert.equal(first.committed, null);
      const state = await rc.state();
      const mutations = rc.mutations();
      const report = await runnerStatus(rc.operation(first.operation_id));
      assert.equal(report.state, "in_progress");
      assert.equal(report.last_boundary, s.stage);
      assert.equal(report.next.step, "record");
      assert.equal(report.next.row, s.row);
      assert.ok(report.next.table_row, "the spec's row is shown");
      assert.deepEqual(report.blockers, []);
      assert.deepEqual(rc.mutations(), mutations, "no provider mutation");
      const after = await rc.state();
      assert.deepEqual(after.control, state.control);
      assert.deepEqual(after.history, state.history);
      assert.deepEqual(after.ownership, state.ownership);
    });
  }

  Deno.test(`[${backend}] runner-status reports a completed operation from its receipt and an unknown one as absent`, async () => {
    await using rc = await replacementCase(backend);
    const done = await executeReviewed(rc.options());
    assert.equal(done.committed, true);
    const completed = await runnerStatus(rc.operation(done.operation_id));
    assert.equal(completed.state, "completed");
    assert.equal(completed.last_boundary, "finalized");
    const absent = await runnerStatus(rc.operation(crypto.randomUUID()));
    assert.equal(absent.state, "absent");
    assert.equal(absent.last_boundary, null);
  });
}
