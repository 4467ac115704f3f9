// The plan file and the project are checked again before every driver transition (contract C87,
// issue 26), on both state backends' real code over the fakes: an unchanged project is re-read
// once before each checkpoint and each provider action and never in between; an SQL edit or a
// plan-file edit made between two transitions stops the drive before the next one, as a blocker
// with the existing code (PLAN_STALE_SOURCE, PLAN_TAMPERED), nothing further mutated; the
// operation stays pending and `state resume` completes it once the file is restored.
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import { checkpointsOf, drive, type DriveOutcome } from "../../lib/runtime/replacement/drive.ts";
import { openOperation } from "../../lib/runtime/replacement/operation.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import type { ProgressEvent } from "../../lib/runtime/progress.ts";
import { checkpointNames } from "../sweep/reads.ts";
import { NEW_WHERE } from "../sweep/fixture.ts";
import { OperationEvents } from "../../lib/runtime/progress.ts";
import { BACKENDS, beginDrive, type ReplacementCase, replacementCase } from "./replacement_case.ts";

/**
 * Drive a new operation with `onProgress` (called synchronously by the driver between its
 * transitions); the lock is released before returning, so that a resume can take it.
 */
async function driveWith(
  rc: ReplacementCase,
  onProgress: (e: ProgressEvent) => void,
): Promise<{ operationId: string; outcome: DriveOutcome }> {
  await using op = await openOperation(rc.options());
  const b = await beginDrive(rc, op);
  const outcome = await drive(
    {
      ...b.ctx,
      events: new OperationEvents({
        journey: "replacement",
        operationId: b.operationId,
        listener: onProgress,
        clock: op.project.clock,
      }),
    },
    b.snap,
    op.reviewed.action,
    b.candidate,
    { resuming: false },
  );
  return { operationId: b.operationId, outcome };
}

/** The outcome without its snapshot and observation (an assertion's message). */
const brief = (o: DriveOutcome) =>
  JSON.stringify({ ...o, snapshot: undefined, observation: undefined });

/** The starter's one model's SQL file. */
const sqlPathOf = (rc: ReplacementCase) => `${rc.cw.project.dir}/models/eligible_orders.sql`;

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] drive re-reads the plan and the project once before each transition and never in between`, async () => {
    await using rc = await replacementCase(backend);
    await using op = await openOperation(rc.options());
    const b = await beginDrive(rc, op);
    // at each check: the transitions already made (checkpoints recorded + provider mutations)
    const madeAtCheck: number[] = [];
    const outcome = await drive(
      {
        ...b.ctx,
        reverify: (s) => {
          madeAtCheck.push(checkpointsOf(s).length + rc.mutations().length);
          return b.ctx.reverify!(s);
        },
      },
      b.snap,
      op.reviewed.action,
      b.candidate,
      { resuming: false },
    );
    assert.equal(outcome.kind, "completed", brief(outcome));
    const made = checkpointNames((await rc.state()).control).length + rc.mutations().length;
    // 5 checkpoints (action_started … action_completed) and 4 provider actions
    assert.equal(made, 9);
    // one check before transition i, for each i, and none during the waits between them
    assert.deepEqual(madeAtCheck, [...Array(made).keys()]);
  });

  Deno.test(`[${backend}] an SQL edit between two transitions stops the drive with PLAN_STALE_SOURCE; resume completes after restoring it`, async () => {
    await using rc = await replacementCase(backend);
    const sqlPath = sqlPathOf(rc);
    const reviewed = Deno.readTextFileSync(sqlPath);
    assert.ok(reviewed.includes(NEW_WHERE), "the SQL is the reviewed one");
    const edited = reviewed.replace(NEW_WHERE, "amount >= 300 AND paid = TRUE");
    assert.notEqual(edited, reviewed);
    // the edit lands once the old runner's clean close is recorded, before it is removed
    const { operationId, outcome } = await driveWith(rc, (e) => {
      if (e.kind === "checkpoint" && e.checkpoint === "old_closed") {
        Deno.writeTextFileSync(sqlPath, edited);
      }
    });
    assert.equal(outcome.kind, "blocked", brief(outcome));
    if (outcome.kind !== "blocked") return;
    assert.equal(outcome.stage, "old_closed");
    assert.deepEqual(outcome.blockers.map((x) => x.code), ["PLAN_STALE_SOURCE"]);
    assert.match(outcome.blockers[0].message, /restore them to continue it/);
    // nothing past the check: the old runner closed, not removed; no candidate
    assert.deepEqual(rc.mutations(), [{ op: "signalTerm", key: rc.d.oldContainerId }]);
    const old = rc.world().docker.containers[rc.d.oldContainerId];
    assert.ok(old, "the old container is still there");
    assert.equal(old.state.running, false);
    assert.ok(
      !Object.values(rc.world().docker.containers).some((c) =>
        c.name === rc.candidateName(operationId)
      ),
      "no candidate was created",
    );
    const stopped = await rc.state();
    assert.deepEqual(checkpointNames(stopped.control), ["action_started", "old_closed"]);
    assert.equal(stopped.ownership?.serial, 1, "ownership is the prior one");

    // still edited: the resume refuses at once, and mutates nothing
    await assert.rejects(
      resumeReviewed(rc.operation(operationId)),
      (e) => e instanceof SluiceError && e.code === "PLAN_STALE_SOURCE",
    );
    assert.equal(rc.mutations().length, 1);

    Deno.writeTextFileSync(sqlPath, reviewed);
    const resumed = await resumeReviewed(rc.operation(operationId));
    assert.equal(resumed.committed, true, JSON.stringify(resumed));
    assert.equal(resumed.outcome, "completed");
    assert.deepEqual(rc.mutations().map((x) => x.op), [
      "signalTerm",
      "removeContainer",
      "createContainer",
      "startContainer",
    ]);
    assert.equal((await rc.state()).ownership?.serial, 2);
  });

  Deno.test(`[${backend}] a plan-file edit between two transitions stops the drive with PLAN_TAMPERED; resume completes after restoring it`, async () => {
    await using rc = await replacementCase(backend);
    const planPath = rc.d.planPath;
    const reviewed = Deno.readFileSync(planPath);
    // one byte of the seal changed: still canonical JSON, no longer this plan's seal
    const text = new TextDecoder().decode(reviewed);
    const at = text.indexOf('"seal":"') + '"seal":"'.length;
    assert.ok(at > '"seal":"'.length, "the plan file has a seal");
    const flipped = text.slice(0, at) + (text[at] === "0" ? "1" : "0") + text.slice(at + 1);
    // the edit lands once the candidate is created, before it is recorded
    const { operationId, outcome } = await driveWith(rc, (e) => {
      if (e.kind === "action" && e.action === "create") Deno.writeTextFileSync(planPath, flipped);
    });
    assert.equal(outcome.kind, "blocked", brief(outcome));
    if (outcome.kind !== "blocked") return;
    assert.equal(outcome.stage, "old_removed");
    assert.deepEqual(outcome.blockers.map((x) => x.code), ["PLAN_TAMPERED"]);
    // the created candidate is neither recorded nor started
    assert.deepEqual(rc.mutations().map((x) => x.op), [
      "signalTerm",
      "removeContainer",
      "createContainer",
    ]);
    const cand = Object.values(rc.world().docker.containers).find((c) =>
      c.name === rc.candidateName(operationId)
    );
    assert.ok(cand, "the candidate was created before the edit");
    assert.equal(cand.state.running, false);
    const stopped = await rc.state();
    assert.deepEqual(checkpointNames(stopped.control), [
      "action_started",
      "old_closed",
      "old_removed",
    ]);
    assert.equal(stopped.ownership?.serial, 1);

    await assert.rejects(
      resumeReviewed(rc.operation(operationId)),
      (e) => e instanceof SluiceError && e.code === "PLAN_TAMPERED",
    );
    assert.equal(rc.mutations().length, 3);

    Deno.writeFileSync(planPath, reviewed);
    const resumed = await resumeReviewed(rc.operation(operationId));
    assert.equal(resumed.committed, true, JSON.stringify(resumed));
    // the candidate created before the stop is adopted, not created again
    assert.deepEqual(rc.mutations().map((x) => x.op), [
      "signalTerm",
      "removeContainer",
      "createContainer",
      "startContainer",
    ]);
    assert.equal((await rc.state()).ownership?.serial, 2);
  });
}
