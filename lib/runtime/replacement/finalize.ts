/**
 * The end of a replacement, shared by execute and resume: {@link driveThenFinalize} drives the
 * table from the snapshot's durable stage and, once the action is recorded completed,
 * {@link finalizeOperation} re-observes the exact ready candidate (the table's last row) and
 * crosses the finalization write: desired ownership committed (serial + 1), completion receipt,
 * control cleared. A missing acknowledgement reports `committed: null` with the last
 * acknowledged boundary; it never invents a newer one.
 *
 * @example
 * ```ts
 * import { driveThenFinalize } from "./finalize.ts";
 * // const result = await driveThenFinalize(op, operationId, snapshot, { resuming: false });
 * ```
 * @module
 */
import { EXIT, exitCodeFor, SluiceError } from "../../errors.ts";
import { atSite } from "../../fault/site.ts";
import type { StateSnapshot } from "../../state/store.ts";
import type { Stage } from "../../protocol/replacement.ts";
import { type Blocker, blocker } from "../../validation/blocker.ts";
import { observeRunner } from "../observer.ts";
import { candidateTarget } from "./candidate.ts";
import { decide, stageOf } from "./decide.ts";
import { checkpointsOf, decisionsOf, drive, type DriveOutcome } from "./drive.ts";
import { controlOf, type ReviewedOperation } from "./operation.ts";
import { notCommitted, type ReplacementResult, type ResultBase } from "./result.ts";

/**
 * Drive from the snapshot's durable stage, then finalize after re-observing the ready candidate.
 *
 * @example
 * ```ts
 * import { driveThenFinalize } from "./finalize.ts";
 * // await driveThenFinalize(op, operationId, snap, { resuming: true });
 * ```
 */
export async function driveThenFinalize(
  op: ReviewedOperation,
  operationId: string,
  start: StateSnapshot,
  options: { resuming: boolean },
): Promise<ReplacementResult> {
  const { project: p, reviewed: r, options: o } = op;
  const candidate = op.candidate(operationId);
  const base = { operation_id: operationId, commands: op.commands(operationId) };
  // the last checkpoint whose write was acknowledged in this invocation: the answer when the
  // store itself is lost
  let acknowledged: Stage = stageOf(checkpointsOf(start), candidate.actionIndex);
  let outcome: DriveOutcome;
  try {
    outcome = await drive(
      {
        docker: p.docker,
        kafka: p.kafka,
        store: p.store,
        clock: p.clock,
        verifyLock: () => p.store.verifyLock(),
        plansDir: p.plansDir,
        extraLabels: o.extraLabels,
        closeTimeoutMs: o.closeTimeoutMs,
        readyTimeoutMs: o.readyTimeoutMs,
        operationId,
        onProgress: o.onProgress,
        acknowledged: (c) => acknowledged = c.name,
      },
      start,
      r.action,
      candidate,
      options,
    );
  } catch (error) {
    const last = await lastAcknowledged(op, operationId, acknowledged);
    // a blocker found inside the driver (e.g. the image vanished before the create) is a
    // blocker, not an unknown outcome: nothing was done past the last boundary
    if (error instanceof SluiceError && exitCodeFor(error) === EXIT.BLOCKED) {
      const found = (error.evidence as { blockers?: Blocker[] } | undefined)?.blockers;
      return notCommitted(base, {
        committed: false,
        outcome: "blocked",
        last_boundary: last,
        blockers: found ?? [blocker(error.code, error.message)],
      });
    }
    // a missing acknowledgement: only the last acknowledged boundary is known
    return notCommitted(base, {
      committed: null,
      outcome: "unknown",
      last_boundary: last,
      reason: error instanceof Error ? error.message : String(error),
    });
  }
  if (outcome.kind !== "completed") {
    return notCommitted(base, {
      committed: false,
      outcome: outcome.kind,
      last_boundary: outcome.stage,
      blockers: outcome.kind === "blocked" ? outcome.blockers : [],
      reason: outcome.kind === "timeout" ? `timed out waiting: ${outcome.reason}` : null,
    });
  }
  return await finalizeOperation(op, base, outcome.snapshot, options);
}

/**
 * The table's last row: re-observe the exact ready candidate, then cross the finalization
 * write. A candidate that is not running and ready leaves the operation as it is.
 *
 * @example
 * ```ts
 * import { finalizeOperation } from "./finalize.ts";
 * // await finalizeOperation(op, base, snapshotAtActionCompleted, { resuming: true });
 * ```
 */
export async function finalizeOperation(
  op: ReviewedOperation,
  base: ResultBase,
  snap: StateSnapshot,
  options: { resuming: boolean },
): Promise<ReplacementResult> {
  const { project: p, reviewed: r } = op;
  const candidate = op.candidate(base.operation_id);
  const obs = await observeRunner(p, candidateTarget(candidate));
  const checkpoints = checkpointsOf(snap);
  const check = decide({
    stage: stageOf(checkpoints, candidate.actionIndex),
    checkpoints,
    action: r.action,
    candidate,
    obs,
    memory: { termRequested: true, startRequested: true },
    resuming: options.resuming,
    decisions: decisionsOf(snap),
  });
  const ready = obs.containers.some((c) => c.name === candidate.name && c.running);
  if (check.kind !== "complete" || !ready) {
    return notCommitted(base, {
      committed: false,
      outcome: "blocked",
      last_boundary: "action_completed",
      blockers: check.kind === "blocked" ? check.blockers : [
        blocker(
          "BLOCKED_CANDIDATE_NOT_READY",
          "the completed candidate is not running and ready; finalization waits",
          { model: r.action.model },
        ),
      ],
    });
  }
  try {
    const f = await atSite(check.row.site, () => p.store.finalizeCompletedRunner(snap));
    return {
      ...base,
      committed: true,
      outcome: "completed",
      last_boundary: "finalized",
      blockers: [],
      reason: null,
      serial: f.snapshot.ownership?.document.serial ?? null,
      receipt: f.receipt,
      lineage_warnings: [],
    };
  } catch (error) {
    if (error instanceof SluiceError && error.code.startsWith("BLOCKED_")) throw error;
    return notCommitted(base, {
      committed: null,
      outcome: "unknown",
      last_boundary: "action_completed",
      reason: `finalization was not acknowledged: ${
        error instanceof Error ? error.message : String(error)
      }`,
    });
  }
}

async function lastAcknowledged(
  op: ReviewedOperation,
  operationId: string,
  acknowledged: Stage,
): Promise<Stage | "finalized"> {
  try {
    const s = await op.project.store.load();
    return controlOf(s, operationId) ? stageOf(checkpointsOf(s), 0) : "finalized";
  } catch {
    // the store cannot be read (e.g. its session was lost): what this invocation saw acknowledged
    return acknowledged;
  }
}
