// drive() on the fakes, on both state backends' real code: the table's rows in order, the
// bounded waits that time out without force-kill, a candidate that fails at start, lost
// provider responses and a lost checkpoint acknowledgement resolved by the next drive.
import assert from "node:assert/strict";
import { REPLACEMENT_TABLE, replacementSites, rowsAt } from "../../lib/protocol/replacement.ts";
import { EVERY_STAGE_BLOCKERS } from "../../lib/protocol/replacement.ts";
import { drive, type DriveContext } from "../../lib/runtime/replacement/drive.ts";
import { openOperation, type ReviewedOperation } from "../../lib/runtime/replacement/operation.ts";
import type { StateSnapshot } from "../../lib/state/store.ts";
import { checkpointNames } from "../sweep/reads.ts";
import {
  BACKENDS,
  beginDrive,
  type BegunDrive,
  crossed,
  failingStore,
  replacementCase,
} from "./replacement_case.ts";

const TABLE_SITES = new Set(replacementSites().map((s) => s.name));

function go(
  b: BegunDrive,
  op: ReviewedOperation,
  snap: StateSnapshot = b.snap,
  ctx: DriveContext = b.ctx,
) {
  return drive(ctx, snap, op.reviewed.action, b.candidate, { resuming: false });
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] drive crosses the table's rows in order and leaves finalization to its caller`, async () => {
    await using rc = await replacementCase(backend);
    await using op = await openOperation(rc.options());
    const b = await beginDrive(rc, op);
    const { value: outcome, sites } = await crossed(() => go(b, op));
    assert.equal(outcome.kind, "completed");
    // every row but the restarts (resume only) and the finalization, each crossing its site
    // once, in table order
    const expected = REPLACEMENT_TABLE.filter((r) =>
      !r.id.startsWith("restart_") && r.id !== "finalize"
    ).flatMap((r) => [r.preparation?.name, r.site.name].filter((s): s is string => !!s));
    assert.deepEqual(sites.filter((s) => TABLE_SITES.has(s)), expected);
    const state = await rc.state();
    assert.deepEqual(checkpointNames(state.control), [
      "action_started",
      "old_closed",
      "old_removed",
      "replacement_created",
      "action_completed",
    ]);
    assert.equal(state.ownership?.serial, 1, "drive never finalizes");
    const cand = rc.world().docker.containers;
    const id = Object.values(cand).find((c) => c.name === rc.candidateName(b.operationId))!.id;
    assert.deepEqual(rc.mutations(), [
      { op: "signalTerm", key: rc.d.oldContainerId },
      { op: "removeContainer", key: rc.d.oldContainerId },
      { op: "createContainer", key: rc.candidateName(b.operationId) },
      { op: "startContainer", key: id },
    ]);
  });

  Deno.test(`[${backend}] a close that outlasts its bound times out at action_started without force-kill`, async () => {
    await using rc = await replacementCase(backend);
    rc.configure({ runner_close_ms: 600_000 });
    await using op = await openOperation(rc.options());
    const b = await beginDrive(rc, op);
    const outcome = await go(b, op);
    assert.equal(outcome.kind, "timeout");
    assert.equal(outcome.kind === "timeout" && outcome.stage, "action_started");
    assert.deepEqual(rc.mutations(), [{ op: "signalTerm", key: rc.d.oldContainerId }]);
    const old = rc.world().docker.containers[rc.d.oldContainerId];
    assert.equal(old.state.running, true, "the old runner keeps its TERM; nothing killed it");
    assert.equal(old.process?.phase, "closing");
    assert.deepEqual(checkpointNames((await rc.state()).control), ["action_started"]);
  });

  Deno.test(`[${backend}] a candidate slower than the ready bound times out without being stopped`, async () => {
    await using rc = await replacementCase(backend);
    rc.configure({ runner_startup_ms: 600_000 });
    await using op = await openOperation(rc.options());
    const b = await beginDrive(rc, op);
    const outcome = await go(b, op);
    assert.equal(outcome.kind, "timeout");
    assert.equal(outcome.kind === "timeout" && outcome.stage, "replacement_created");
    const m = rc.mutations();
    assert.deepEqual(m.map((x) => x.op), [
      "signalTerm",
      "removeContainer",
      "createContainer",
      "startContainer",
    ]);
    const cand = Object.values(rc.world().docker.containers).find((c) =>
      c.name === rc.candidateName(b.operationId)
    )!;
    assert.equal(cand.state.running, true, "the candidate keeps running");
    assert.equal(cand.process?.phase, "starting");
  });

  Deno.test(`[${backend}] a candidate that fails at start-up blocks at replacement_created and is not restarted`, async () => {
    await using rc = await replacementCase(backend);
    await using op = await openOperation(rc.options());
    const b = await beginDrive(rc, op);
    rc.cw.world.control.failRunner("start", { code: 15, reason: "KAFKA_UNREACHABLE" }, {
      match: rc.candidateName(b.operationId),
    });
    const outcome = await go(b, op);
    assert.equal(outcome.kind, "blocked", JSON.stringify(outcome));
    if (outcome.kind !== "blocked") return;
    assert.equal(outcome.stage, "replacement_created");
    const declared = new Set<string>([
      ...EVERY_STAGE_BLOCKERS,
      ...rowsAt("replacement_created").flatMap((r) => r.blockers),
    ]);
    assert.ok(outcome.blockers.length > 0);
    for (const x of outcome.blockers) assert.ok(declared.has(x.code), `${x.code} is declared`);
    // a documented start-up failure before processing anything: only a resume starts it again
    assert.ok(
      outcome.blockers.some((x) => x.code === "BLOCKED_CANDIDATE_STARTUP_FAILED"),
      JSON.stringify(outcome.blockers),
    );
    assert.deepEqual(rc.mutations().filter((x) => x.op === "startContainer").length, 1);
    assert.deepEqual(checkpointNames((await rc.state()).control).at(-1), "replacement_created");
  });

  for (const lost of ["signalTerm", "removeContainer", "createContainer", "startContainer"]) {
    Deno.test(`[${backend}] a lost ${lost} response stops the drive; the next drive resolves it by observation`, async () => {
      await using rc = await replacementCase(backend);
      await using op = await openOperation(rc.options());
      const b = await beginDrive(rc, op);
      rc.cw.world.control.failCall(lost, { effect: "lose_response" });
      await assert.rejects(go(b, op), /response .* was lost/);
      const snap = await op.project.store.load();
      const outcome = await go(b, op, snap);
      assert.equal(outcome.kind, "completed", JSON.stringify(outcome));
      const ops = rc.mutations().map((x) => x.op);
      // each provider action exactly once: the lost one was applied and never repeated
      assert.deepEqual(ops, ["signalTerm", "removeContainer", "createContainer", "startContainer"]);
      assert.deepEqual(checkpointNames((await rc.state()).control).at(-1), "action_completed");
    });
  }

  Deno.test(`[${backend}] a lost checkpoint acknowledgement stops the drive; the next continues from the durable stage`, async () => {
    await using rc = await replacementCase(backend);
    await using op = await openOperation(rc.options());
    const b = await beginDrive(rc, op);
    const store = failingStore(
      op.project.store,
      "recordCheckpoint",
      (a) => (a[1] as { name: string }).name === "old_removed",
      "lose",
    );
    await assert.rejects(go(b, op, b.snap, { ...b.ctx, store }), /acknowledgement/);
    const snap = await op.project.store.load();
    assert.deepEqual(checkpointNames((await rc.state()).control).at(-1), "old_removed");
    const outcome = await go(b, op, snap);
    assert.equal(outcome.kind, "completed");
    assert.equal(rc.mutations().filter((x) => x.op === "removeContainer").length, 1);
    assert.equal(rc.mutations().filter((x) => x.op === "createContainer").length, 1);
  });
}
