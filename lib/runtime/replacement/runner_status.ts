/**
 * `state runner-status --plan FILE --operation-id UUID`: under the operation lock, validate
 * storage and audit, observe read-only, and report the next proven boundary — the step the
 * boundary table's row would authorize, and that row as the spec words it. A completed operation
 * is reported from its receipt and checked as `state resume` verifies it (its candidate ready by
 * the ready boundary's rule, else that blocker). It grants nothing.
 *
 * @example
 * ```ts
 * import { runnerStatus } from "./runner_status.ts";
 * // const report = await runnerStatus({ dir: ".", planPath: "plan.json", operationId });
 * // console.log(report.next.step, report.next.table_row);
 * ```
 * @module
 */
import { observeRunner } from "../observer.ts";
import { candidateTarget } from "./candidate.ts";
import { decide, describeRow, describeStep, stageOf, type Step } from "./decide.ts";
import { journalOf, notReadyNow, readyCandidate } from "./finalize.ts";
import { checkpointsOf, decisionsOf } from "./drive.ts";
import { openOperation, operationOfPlan, type OperationOptions } from "./operation.ts";
import type { RunnerStatusReport } from "./result.ts";

/**
 * Read-only diagnosis of an operation: the next proven boundary, without resume authority. An
 * operation the state does not know, or another plan's, is an error before anything is observed
 * ({@link operationOfPlan}).
 *
 * @example
 * ```ts
 * import { runnerStatus } from "./runner_status.ts";
 * // (await runnerStatus(options)).state → "in_progress" | "interrupted" | "completed"
 * ```
 */
export async function runnerStatus(options: OperationOptions): Promise<RunnerStatusReport> {
  await using op = await openOperation(options);
  const { project: p, reviewed: r } = op;
  const snap = await p.store.load(); // verifies storage and audit
  const commands = op.commands(options.operationId);
  // the operation is this plan's before anything is observed
  const rec = await operationOfPlan(snap, p.store, r, options.operationId);
  const candidate = op.candidate(options.operationId);
  const obs = await observeRunner(p, candidateTarget(candidate));
  if (rec.kind === "completed") {
    // completed by its receipt, and verified as `state resume` verifies it: the ready boundary's
    // own rule on this observation, the journal frozen in the receipt; not ready, that blocker
    const { step, blockers } = readyCandidate(
      op,
      candidate,
      obs,
      journalOf(rec.receipt.receipt),
      { resuming: true },
    );
    const next = blockers.length === 0
      ? {
        step: "complete" as const,
        detail: "completed; nothing to do",
        row: null,
        table_row: null,
      }
      : {
        step: "blocked" as const,
        detail: describeStep({ kind: "blocked", row: step.row, blockers }),
        row: step.row?.id ?? null,
        table_row: step.row ? describeRow(step.row) : null,
      };
    return {
      operation_id: options.operationId,
      state: "completed",
      last_boundary: "finalized",
      checkpoints: [],
      next,
      blockers,
      incidents: 0,
      resumes: 0,
      observation: obs,
      commands,
    };
  }
  const c = rec.control;
  const checkpoints = checkpointsOf(snap);
  const stage = stageOf(checkpoints, candidate.actionIndex);
  const decided = decide({
    stage,
    checkpoints,
    action: r.action,
    candidate,
    obs,
    memory: { termRequested: false, startRequested: false },
    resuming: true,
    decisions: decisionsOf(snap),
  });
  // finalization re-observes the ready candidate first: not ready, it is not the next step
  const notReady = decided.kind === "complete"
    ? notReadyNow(op, candidate, obs, journalOf(snap))
    : [];
  const step: Step = notReady.length > 0
    ? { kind: "blocked", row: decided.row, blockers: notReady }
    : decided;
  return {
    operation_id: options.operationId,
    state: c.status,
    last_boundary: stage,
    checkpoints,
    next: {
      step: step.kind,
      detail: describeStep(step),
      row: step.row?.id ?? null,
      table_row: step.row ? describeRow(step.row) : null,
    },
    blockers: step.kind === "blocked" ? step.blockers : [],
    incidents: c.incidents.length,
    resumes: c.resume_history.length,
    observation: obs,
    commands,
  };
}
