/**
 * `state runner-status` and `state resume` for every journey's pending operation: the plan file
 * names the journey. A reviewed predicate replacement (format 6) goes to its coordinator
 * (`replacement/runner_status.ts`, `replacement/resume.ts`); any other plan (a create, a runner
 * removal, a connector change) goes to the router (`journeys.ts`), which checks that the
 * operation is that plan file's and reports the next row of its journey's table, or continues it
 * with the journey's own `continue` — under the same deployment lock, stale-lock break and
 * `--confirm-env` check as a replacement's resume. So one pair of commands is the way out of
 * every pending operation.
 *
 * @example
 * ```ts
 * import { operationStatus, resumeOperation } from "./pending_operation.ts";
 * // const report = await operationStatus({ dir: ".", planPath: "p.json", operationId });
 * // const outcome = await resumeOperation({ dir: ".", planPath: "p.json", operationId });
 * ```
 * @module
 */
import { readPlanFile } from "../plan/plan_file.ts";
import type { Checkpoint } from "../state/journal.ts";
import type { Blocker } from "../validation/blocker.ts";
import type { ApplyResult } from "./apply_context.ts";
import { pendingStatus } from "./journeys.ts";
import {
  operationCommands,
  type OperationOptions,
  requireConfirmedEnv,
} from "./replacement/operation.ts";
import type { ReplacementResult, RunnerStatusReport } from "./replacement/result.ts";
import { resumeReviewed } from "./replacement/resume.ts";
import { runnerStatus } from "./replacement/runner_status.ts";
import { applyInSession, checkSessionCredentials, openSession, sessionContext } from "./session.ts";
import type { RunnerCredentialsCheck } from "../plan/runner_credentials.ts";
import type { Plan } from "../plan/plan.ts";

/**
 * The runner credentials a replacement's plan bound, compared with the current ones before it
 * is resumed (never refused: the operation is pending); the evidence of a change, or null.
 */
async function replacementCredentials(
  options: OperationOptions,
  plan: Plan,
): Promise<RunnerCredentialsCheck["evidence"] | null> {
  if (!plan.runner_client_binding) return null;
  await using s = await openSession(options);
  const check = await checkSessionCredentials(s, plan, true);
  return check?.changed ? check.evidence : null;
}

/** The runner-status report of a create, runner removal or connector change. */
export interface JourneyStatusReport {
  /** The operation kind: `create`, `runner_removal` or `connector_change`. */
  journey: string;
  /** The operation's UUID. */
  operation_id: string;
  /** Pending (in progress or interrupted), or completed (committed). */
  state: "in_progress" | "interrupted" | "completed";
  /** The last durable boundary: `intent`, a checkpoint, or `committed`. */
  last_boundary: string;
  /**
   * The durable checkpoints, in order.
   * @internal journal evidence; its shape is not part of the versioned SDK
   */
  checkpoints: Checkpoint[];
  /**
   * The next row of the journey's table a fresh observation shows (it is not authorized by this
   * report): its step (or `blocked`, `complete`), what it is about, and the row as the table
   * words it.
   */
  next: { step: string; detail: string; row: string | null; table_row: string | null };
  /** Why the next step is blocked, if it is. */
  blockers: Blocker[];
  /** Interruptions recorded. */
  incidents: number;
  /** Resumes authorized. */
  resumes: number;
  /** No runner observation is kept in this report (each row observes its own resources). */
  observation: null;
  /** Exact commands to inspect and continue this operation. */
  commands: { status: string; resume: string };
}

/** What `state runner-status` reports: a replacement's report, or another journey's. */
export type OperationStatusReport =
  | (RunnerStatusReport & { journey: "runner_update" })
  | JourneyStatusReport;

/** What `state resume` did: a replacement's result, or another journey's apply result. */
export type ResumeOutcome =
  | {
    kind: "replacement";
    result: ReplacementResult;
    /**
     * The replacement went on with other runner credentials than its plan bound: the plan's and
     * the current keyed hashes (`lib/plan/runner_credentials.ts`). Absent otherwise.
     */
    runner_client_changed?: RunnerCredentialsCheck["evidence"];
  }
  | {
    kind: "apply";
    /** The continued (or verified) operation's apply result. */
    result: ApplyResult;
    /** The sha256 of the plan file. */
    plan_sha256: string;
    /** As for a replacement: the operation went on with changed runner credentials. */
    runner_client_changed?: RunnerCredentialsCheck["evidence"];
  };

/**
 * Read-only diagnosis of the operation `operationId` of the plan file `planPath`, whatever its
 * journey: its last durable boundary, the next step a fresh observation shows, and the commands
 * that inspect and continue it. Grants nothing.
 *
 * @example
 * ```ts
 * import { operationStatus } from "./pending_operation.ts";
 * // const r = await operationStatus(options); console.log(r.journey, r.next.step);
 * ```
 */
export async function operationStatus(options: OperationOptions): Promise<OperationStatusReport> {
  const { plan, sha256 } = await readPlanFile(options.planPath);
  if (plan.format === 6) return { journey: "runner_update", ...(await runnerStatus(options)) };
  await using s = await openSession(options);
  const st = await pendingStatus(sessionContext(s, options), plan, sha256, options.operationId);
  const { blockers, ...next } = st.next;
  return {
    journey: st.journey,
    operation_id: options.operationId,
    state: st.state,
    last_boundary: st.last_boundary,
    checkpoints: st.checkpoints,
    next,
    blockers,
    incidents: st.incidents,
    resumes: st.resumes,
    observation: null,
    commands: operationCommands(options, options.operationId),
  };
}

/**
 * Continue the operation `operationId` of the plan file `planPath` from its last durable
 * boundary, whatever its journey (see the module documentation); an operation already completed
 * is verified, not repeated.
 *
 * @example
 * ```ts
 * import { resumeOperation } from "./pending_operation.ts";
 * // const outcome = await resumeOperation(options); // outcome.kind: "replacement" | "apply"
 * ```
 */
export async function resumeOperation(options: OperationOptions): Promise<ResumeOutcome> {
  const { plan, sha256 } = await readPlanFile(options.planPath);
  if (plan.format === 6) {
    // a rotation during the replacement is a way out: it goes on with the current credentials
    // (the candidate starts with them), and the change is said and returned
    const changed = await replacementCredentials(options, plan);
    const result = await resumeReviewed(options);
    return {
      kind: "replacement",
      result,
      ...(changed ? { runner_client_changed: changed } : {}),
    };
  }
  await using s = await openSession(options);
  requireConfirmedEnv(s, options.confirmEnv ?? null);
  const { plan: _applied, runner_client_changed, ...result } = await applyInSession(s, {
    ...options,
    plan,
    planSha256: sha256,
    operationId: options.operationId,
  });
  return {
    kind: "apply",
    result,
    plan_sha256: sha256,
    ...(runner_client_changed ? { runner_client_changed } : {}),
  };
}
