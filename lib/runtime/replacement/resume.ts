/**
 * `state resume --plan FILE --operation-id UUID`: continue the same operation under a new lock
 * (spec, "Resume is not read-only recovery"). An operation already completed is verified from
 * its receipt and the ready candidate, by the ready boundary's own rule (no redeploy, audit
 * append or serial increment). A pending one is checked against the same plan and current
 * project. A receipt beside the pending control (a local finalize killed after its receipt or
 * ownership write) only completes the finalization, with no runtime writes, once the candidate
 * is ready. Otherwise the fresh evidence must authorize a step
 * before anything is written (a blocked resume records nothing and spends no authorization);
 * then an in-progress control first gets its interruption recorded; an action recorded completed
 * only finalizes; otherwise the resume is authorized (reusing an exact prewritten authorization,
 * its recovery record naming the step and, for a candidate restarted after a start-up failure,
 * that failure) and the table is driven from the last durable boundary. Each of these writes
 * crosses its fault site. An abandoned operation is reported as such.
 *
 * @example
 * ```ts
 * import { resumeReviewed } from "./resume.ts";
 * // const r = await resumeReviewed({ dir: ".", planPath: "plan.json", operationId });
 * ```
 * @module
 */
import { atSite } from "../../fault/site.ts";
import { currentContext, verifyPlanCurrent } from "../../plan/plan_file.ts";
import { OPERATION_WRITES } from "../../protocol/replacement.ts";
import type { ResumeRecord } from "../../state/journal.ts";
import type { RunnerObservation } from "../../validation/observation.ts";
import type { Stage } from "../../protocol/replacement.ts";
import { isoNow } from "../deps.ts";
import { blockerError } from "../../validation/blocker.ts";
import { observeRunner } from "../observer.ts";
import { candidateTarget } from "./candidate.ts";
import { decide, stageOf, type Step } from "./decide.ts";
import { startupFailureEvidence } from "./guards.ts";
import { outsideStopOf } from "../../validation/runner_stop.ts";
import { checkpointsOf, decisionsOf } from "./drive.ts";
import {
  driveThenFinalize,
  endOfRun,
  finalizeOperation,
  finishRun,
  journalOf,
  readyCandidate,
  replacementEvents,
} from "./finalize.ts";
import { lineageFor } from "./lineage.ts";
import { openOperation, operationOfPlan, type OperationOptions } from "./operation.ts";
import { lostWrite, notCommitted, type ReplacementResult } from "./result.ts";
import { unacknowledged } from "../unknown_outcome.ts";

/**
 * Continue the same operation (`state resume`).
 *
 * @example
 * ```ts
 * import { resumeReviewed } from "./resume.ts";
 * // const r = await resumeReviewed({ dir: "./orders", planPath: "replace.plan.json", operationId });
 * ```
 */
export async function resumeReviewed(options: OperationOptions): Promise<ReplacementResult> {
  await using op = await openOperation(options, { confirmEnv: options.confirmEnv ?? null });
  const { project: p, reviewed: r } = op;
  const operationId = options.operationId;
  let snap = await p.store.load();
  const base = { operation_id: operationId, commands: op.commands(operationId) };
  const candidate = op.candidate(operationId);
  // the operation is this plan's before anything is observed
  const rec = await operationOfPlan(snap, p.store, r, operationId);
  // the original invocation sent START; a resume reports only the final outcome (COMPLETE or
  // FAIL) — also for an operation it finds completed, whose invocation may have died before
  // reporting it (a consumer keys events by run and type, so a repeated COMPLETE is harmless)
  const lineage = lineageFor(op, operationId);
  if (rec.kind === "completed") {
    // an already completed operation is verified from its exact receipt and its ready candidate
    // (spec: "verify an already-cleared operation from its exact receipt and ready candidate"):
    // the ready boundary's own rule on a fresh observation, the journal frozen in the receipt —
    // the candidate by its exact generation labels and mounted inputs (a name alone is not it),
    // RUNNING for its generation and plan, the group's one member its own. No redeploy, no audit
    // append, no serial increment; not ready, nothing is written either
    const obs = await observeRunner(p, candidateTarget(candidate));
    const { blockers } = readyCandidate(
      op,
      candidate,
      obs,
      journalOf(rec.receipt.receipt),
      { resuming: true },
    );
    if (blockers.length > 0) throw blockerError(blockers);
    return await lineage.finish({
      ...base,
      committed: true,
      outcome: "completed",
      last_boundary: "finalized",
      blockers: [],
      reason: "already completed (verified from the receipt and the ready candidate)",
      serial: snap.ownership?.document.serial ?? null,
      receipt: rec.receipt.receipt,
      lineage_warnings: [],
    });
  }
  const c = rec.control;
  const checkpoints = checkpointsOf(snap);
  const stage = stageOf(checkpoints, candidate.actionIndex);
  // a receipt freezes the terminal control: the local finalize (receipt → ownership → clear)
  // was interrupted, and only its completion remains (spec: "a fresh process completes an
  // interrupted local clear"); the state may already be the receipt's result
  const frozen = stage === "action_completed" &&
    (await p.store.validateTerminalPending(snap)).receipt_archived;
  const now = currentContext(p.store, p.sourceSha256, snap);
  verifyPlanCurrent(
    r.plan,
    frozen ? { ...now, stateChecksum: c.intent.original_state_checksum } : now,
  );
  const events = replacementEvents(op, operationId);
  if (frozen) {
    events.started(true, "completing the interrupted finalization from its receipt");
    return await lineage.finish(
      await finishRun(events, () => finalizeOperation(op, base, snap, { resuming: true })),
    );
  }
  // the fresh evidence must authorize a step before anything is written: a blocked resume
  // records nothing and spends no authorization
  const obs = await observeRunner(p, candidateTarget(candidate));
  const first = stage === "action_completed" ? null : decide({
    stage,
    checkpoints,
    action: r.action,
    candidate,
    obs,
    memory: { termRequested: false, startRequested: false },
    resuming: true,
    decisions: decisionsOf(snap),
  });
  if (first?.kind === "blocked") {
    return notCommitted(base, {
      committed: false,
      outcome: "blocked",
      last_boundary: stage,
      blockers: first.blockers,
      reason: "nothing was written: the fresh evidence authorizes no step",
    });
  }
  events.started(true, `operation ${operationId} resumes from ${stage}`);
  if (c.status === "in_progress") {
    try {
      snap = await atSite(OPERATION_WRITES.interruption, () =>
        p.store.recordInterruption(snap, {
          incident_id: p.uuids.uuid(),
          actor: p.actor,
          recorded_at: isoNow(p.clock),
          reason: "resumed under a new lock: the previous invocation ended without finishing",
        }));
    } catch (error) {
      if (!unacknowledged(error)) throw events.ended(error);
      return await lineage.finish(
        endOfRun(events, lostWrite(base, "the interruption", stage, error)),
      );
    }
  }
  if (stage === "action_completed") {
    // the action is terminal (its outcome is recorded): resume authorizes no further boundary,
    // and only finalization remains — after re-observing the exact ready candidate
    return await lineage.finish(
      await finishRun(events, () => finalizeOperation(op, base, snap, { resuming: true })),
    );
  }
  const pending = await p.store.pendingResumeAuthorization(snap);
  const record: ResumeRecord = pending
    ? {
      authorization_id: pending.authorization_id,
      actor: pending.actor,
      authorized_at: pending.authorized_at,
      recovery: pending.recovery,
    }
    : {
      authorization_id: p.uuids.uuid(),
      actor: p.actor,
      authorized_at: isoNow(p.clock),
      recovery: recoveryRecord(stage, obs, first),
    };
  try {
    snap = await atSite(OPERATION_WRITES.resume, () => p.store.resumeOperation(snap, record));
  } catch (error) {
    if (!unacknowledged(error)) throw events.ended(error);
    return await lineage.finish(
      endOfRun(events, lostWrite(base, "the resume authorization", stage, error)),
    );
  }
  // the authorization is durable: a cancelled run stops here
  events.boundary({
    kind: "resume_authorized",
    boundary: "resume_authorized",
    authorization_id: record.authorization_id,
    stage,
    message: `authorization ${record.authorization_id} recorded at ${stage}`,
  });
  const result = await driveThenFinalize(op, operationId, snap, { resuming: true, events });
  return await lineage.finish(result);
}

/**
 * The runner-status evidence that justified the resume (stored with the authorization), with
 * the step it authorized; restarting a candidate that failed before processing records the
 * start-up failure it restarts from.
 */
function recoveryRecord(
  stage: Stage,
  obs: RunnerObservation,
  first: Step | null,
): ResumeRecord["recovery"] {
  // a candidate restarted (now, or after the wait for its killed member to leave the group)
  // from a start-up failure or from a stop from outside: the evidence it restarts from
  const row = first?.row?.id;
  const failedFirst = row === "restart_failed_candidate";
  const restarted = failedFirst || row === "restart_candidate"
    ? obs.containers.find((x) =>
      x.everStarted && !x.running && (failedFirst || outsideStopOf(x) !== null)
    ) ?? null
    : null;
  return {
    last_boundary: stage,
    next_step: first ? { kind: first.kind, row: first.row?.id ?? null } : null,
    startup_failure: restarted
      ? { ...startupFailureEvidence(restarted), committed_equals_clean_close: failedFirst }
      : null,
    observed_at: obs.observedAt,
    containers: obs.containers.map((x) => ({
      id: x.id,
      name: x.name,
      status: x.status,
      exitCode: x.exitCode,
      generation: x.labels.generation,
    })),
    group: {
      state: obs.kafka.group.state,
      members: obs.kafka.group.members.map((m) => ({
        memberId: m.memberId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        groupInstanceId: m.groupInstanceId,
      })),
    },
    committed: obs.kafka.committed,
  };
}
