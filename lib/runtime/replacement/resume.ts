/**
 * `state resume --plan FILE --operation-id UUID`: continue the same operation under a new lock
 * (spec, "Resume is not read-only recovery"). An operation already completed is verified from
 * its receipt and the running candidate (no redeploy, audit append or serial increment). A
 * pending one is checked against the same plan and current project; an in-progress control
 * first gets its interruption recorded; an action recorded completed only finalizes; otherwise
 * the resume is authorized (reusing an exact prewritten authorization) and the table is driven
 * from the last durable boundary. Each of these writes crosses its fault site.
 *
 * @example
 * ```ts
 * import { resumeReviewed } from "./resume.ts";
 * // const r = await resumeReviewed({ dir: ".", planPath: "plan.json", operationId });
 * ```
 * @module
 */
import { SluiceError } from "../../errors.ts";
import { atSite } from "../../fault/site.ts";
import { verifyPlanCurrent } from "../../plan/plan_file.ts";
import { OPERATION_WRITES } from "../../protocol/replacement.ts";
import type { ResumeRecord } from "../../state/journal.ts";
import type { RunnerObservation } from "../../validation/observation.ts";
import type { Stage } from "../../protocol/replacement.ts";
import { isoNow } from "../deps.ts";
import { observeRunner } from "../observer.ts";
import { candidateTarget } from "./candidate.ts";
import { stageOf } from "./decide.ts";
import { checkpointsOf } from "./drive.ts";
import { driveThenFinalize, finalizeOperation } from "./finalize.ts";
import { lineageFor } from "./lineage.ts";
import {
  controlOf,
  openOperation,
  type OperationOptions,
  verifyOperationMatches,
} from "./operation.ts";
import type { ReplacementResult } from "./result.ts";

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
  const c = controlOf(snap, operationId);
  if (!c) {
    // an already completed operation is verified from its receipt and the live candidate:
    // no redeploy, no audit append, no serial increment
    const receipt = await p.store.completedReceipt(operationId);
    if (!receipt) {
      throw new SluiceError(
        "BLOCKED_NO_PENDING_OPERATION",
        `operation ${operationId} is neither pending nor completed`,
      );
    }
    const obs = await observeRunner(p, candidateTarget(candidate));
    if (!obs.containers.some((x) => x.name === candidate.name && x.running)) {
      throw new SluiceError(
        "BLOCKED_CANDIDATE_NOT_READY",
        `operation ${operationId} completed, but its candidate is not running now`,
      );
    }
    return {
      ...base,
      committed: true,
      outcome: "completed",
      last_boundary: "finalized",
      blockers: [],
      reason: "already completed (verified from the receipt and the running candidate)",
      serial: snap.ownership?.document.serial ?? null,
      receipt: receipt.receipt,
      lineage_warnings: [],
    };
  }
  verifyOperationMatches(c, r, operationId);
  verifyPlanCurrent(r.plan, {
    project: p.store.project,
    environment: p.store.environment,
    sourceSha256: p.sourceSha256,
    stateChecksum: snap.ownership?.checksum ?? null,
    store: snap.identity,
  });
  if (c.status === "in_progress") {
    snap = await atSite(OPERATION_WRITES.interruption, () =>
      p.store.recordInterruption(snap, {
        incident_id: p.uuids.uuid(),
        actor: p.actor,
        recorded_at: isoNow(p.clock),
        reason: "resumed under a new lock: the previous invocation ended without finishing",
      }));
  }
  const stage = stageOf(checkpointsOf(snap), candidate.actionIndex);
  if (stage === "action_completed") {
    // the action is terminal (its outcome is recorded): resume authorizes no further boundary,
    // and only finalization remains — after re-observing the exact ready candidate
    return await finalizeOperation(op, base, snap, { resuming: true });
  }
  const obs = await observeRunner(p, candidateTarget(candidate));
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
      recovery: recoveryRecord(stage, obs),
    };
  snap = await atSite(OPERATION_WRITES.resume, () => p.store.resumeOperation(snap, record));
  options.onProgress?.({
    kind: "resume_authorized",
    operation_id: operationId,
    authorization_id: record.authorization_id,
    stage,
    message: `authorization ${record.authorization_id} recorded at ${stage}`,
  });
  // the original invocation sent START; a resume reports only the final outcome
  const lineage = lineageFor(op, operationId);
  const result = await driveThenFinalize(op, operationId, snap, { resuming: true });
  return await lineage.finish(result);
}

/** The runner-status evidence that justified the resume (stored with the authorization). */
function recoveryRecord(stage: Stage, obs: RunnerObservation): ResumeRecord["recovery"] {
  return {
    last_boundary: stage,
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
