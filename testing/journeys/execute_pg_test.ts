// executeReviewed (apply --plan of a reviewed plan) on the fakes, on both state backends' real
// code: a committed finalization, a refusal before anything is written, a pending operation,
// and a lost response reported as unknown with the last acknowledged boundary.
import assert from "node:assert/strict";
import { OPERATION_WRITES } from "../../lib/protocol/replacement.ts";
import { SluiceError } from "../../lib/errors.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { progressLabel } from "../../lib/runtime/progress.ts";
import { checkpointNames, historyEvents } from "../sweep/reads.ts";
import { BACKENDS, crossed, replacementCase } from "./replacement_case.ts";
import { UNINTERRUPTED_REPLACEMENT } from "../replacement_progress.ts";

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] execute records the intent, drives the table and finalizes once`, async () => {
    await using rc = await replacementCase(backend);
    const steps: string[] = [];
    const { value: r, sites } = await crossed(() =>
      executeReviewed(
        rc.options({ onProgress: (e) => e.kind !== "wait" && steps.push(progressLabel(e)) }),
      )
    );
    assert.equal(r.committed, true, JSON.stringify(r));
    assert.equal(r.outcome, "completed");
    assert.equal(r.serial, 2);
    assert.equal(r.last_boundary, "finalized");
    assert.deepEqual(steps, UNINTERRUPTED_REPLACEMENT);
    // the intent before any row, the finalization last; the lock taken first and released last
    const lock = `lock.${backend}`;
    assert.equal(sites[0], `${lock}.acquire`);
    assert.equal(sites.at(-1), `${lock}.release`);
    const ops = sites.filter((s) => s.startsWith("journal.") || s === "state.finalize");
    assert.equal(ops[0], OPERATION_WRITES.intent.name);
    assert.equal(ops.at(-1), OPERATION_WRITES.finalize.name);
    const state = await rc.state();
    assert.equal(state.ownership?.serial, 2);
    assert.equal(state.control, null);
    const receipts = historyEvents(state).filter((e) => e.kind === "runner_completed");
    assert.equal(receipts.length, 1);
    assert.equal(receipts[0].operation_id, r.operation_id);
    assert.equal(state.lockFile, false, "the lock is released");
  });

  Deno.test(`[${backend}] execute refuses a runner that is not running before writing anything`, async () => {
    await using rc = await replacementCase(backend);
    rc.cw.world.control.killContainer(rc.d.oldContainerId);
    const before = await rc.state();
    const mutations = rc.mutations().length;
    const err = await executeReviewed(rc.options()).then(() => null, (e) => e);
    assert.ok(err instanceof SluiceError, String(err));
    assert.match(err.code, /^BLOCKED_/);
    const after = await rc.state();
    assert.deepEqual(after.control, null, "no intent was recorded");
    assert.deepEqual(after.history, before.history);
    assert.deepEqual(after.ownership, before.ownership);
    assert.equal(rc.mutations().length, mutations, "no provider mutation");
  });

  Deno.test(`[${backend}] a lost start response is reported unknown with the last acknowledged boundary`, async () => {
    await using rc = await replacementCase(backend);
    rc.cw.world.control.failCall("startContainer", { effect: "lose_response" });
    const r = await executeReviewed(rc.options());
    assert.equal(r.committed, null, JSON.stringify(r));
    assert.equal(r.outcome, "unknown");
    assert.equal(r.last_boundary, "replacement_created");
    assert.match(r.commands.resume, /state resume .*--operation-id /);
    const state = await rc.state();
    assert.deepEqual(checkpointNames(state.control).at(-1), "replacement_created");
    assert.equal(state.ownership?.serial, 1);
  });

  Deno.test(`[${backend}] execute with an operation pending is BLOCKED_OPERATION_PENDING and mutates nothing`, async () => {
    await using rc = await replacementCase(backend);
    rc.cw.world.control.failCall("removeContainer", { effect: "lose_response" });
    const first = await executeReviewed(rc.options());
    assert.equal(first.committed, null);
    const mutations = rc.mutations().length;
    const control = (await rc.state()).control;
    await assert.rejects(
      executeReviewed(rc.options()),
      (e) => e instanceof SluiceError && e.code === "BLOCKED_OPERATION_PENDING",
    );
    assert.equal(rc.mutations().length, mutations);
    assert.deepEqual((await rc.state()).control, control);
  });
}
