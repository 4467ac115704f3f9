// runnerStatus (state runner-status) on the fakes, on both state backends' real code: at each
// durable stage a lost response can leave, it reports the table row the fresh evidence selects,
// and it mutates nothing — no provider call, no state byte.
import assert from "node:assert/strict";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { runnerStatus } from "../../lib/runtime/replacement/runner_status.ts";
import { exitCodeFor, SluiceError } from "../../lib/errors.ts";
import type { DockerPort } from "../../lib/providers/docker/port.ts";
import { plan } from "../../lib/runtime/session.ts";
import { writePlanFile } from "../../lib/plan/plan_file.ts";
import { orders } from "../sweep/fixture.ts";
import { BACKENDS, replacementCase } from "./replacement_case.ts";

/** A Docker port that fails every call: an error from it would mean something was observed. */
const blind = new Proxy({}, {
  get: (_t, name) => () => Promise.reject(new Error(`observed: docker.${String(name)}`)),
}) as DockerPort;

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

  Deno.test(`[${backend}] runner-status reports a completed operation from its receipt; an unknown or another plan's operation is an error before anything is observed`, async () => {
    await using rc = await replacementCase(backend);
    const done = await executeReviewed(rc.options());
    assert.equal(done.committed, true);
    const completed = await runnerStatus(rc.operation(done.operation_id));
    assert.equal(completed.state, "completed");
    assert.equal(completed.last_boundary, "finalized");
    const unknown = await runnerStatus(rc.operation(crypto.randomUUID(), { docker: blind }))
      .then(() => null, (e) => e);
    assert.ok(unknown instanceof SluiceError, String(unknown));
    assert.equal(unknown.code, "BLOCKED_NO_PENDING_OPERATION", unknown.message);
    assert.equal(exitCodeFor(unknown), 4);
  });

  Deno.test(`[${backend}] runner-status with another reviewed plan than the operation's is an error before anything is observed`, async () => {
    await using rc = await replacementCase(backend);
    // a second reviewed plan of the same change, other bytes: the records produced since moved
    // its offset lower bounds; the operation runs from it and stays pending (a lost start)
    rc.cw.produce(orders("late", [500, 600]));
    const other = await plan({ dir: rc.cw.project.dir, ...rc.cw.deps });
    assert.equal(other.plan.format, 6);
    const otherPath = `${rc.cw.project.dir}/other.plan.json`;
    await writePlanFile(otherPath, other.plan);
    assert.notEqual(await Deno.readTextFile(otherPath), await Deno.readTextFile(rc.d.planPath));
    rc.cw.world.control.failCall("startContainer", { effect: "lose_response" });
    const pending = await executeReviewed(rc.options({ planPath: otherPath }));
    assert.equal(pending.committed, null);
    const foreign = await runnerStatus(rc.operation(pending.operation_id, { docker: blind }))
      .then(() => null, (e) => e);
    assert.ok(foreign instanceof SluiceError, String(foreign));
    assert.equal(foreign.code, "BLOCKED_PLAN_MISMATCH", foreign.message);
  });
}
