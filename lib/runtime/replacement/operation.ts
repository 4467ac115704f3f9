/**
 * The one helper every reviewed-replacement journey (execute, runner-status, resume) opens its
 * work with: it opens the project (ports, clock, UUID source, state store), checks the
 * environment confirmation where policy demands it, reads and verifies the original format-6
 * plan file against the freshly compiled project, breaks a named stale lock when asked, and
 * takes the deployment lock. {@link reverifyReviewed} repeats the plan and project checks before
 * each driver transition and before finalization. Disposing it releases the lock (a release error
 * after a verified result never changes that result) and closes what it opened:
 *
 * ```ts
 * await using op = await openOperation(options);
 * ```
 *
 * @example
 * ```ts
 * import { openOperation } from "./operation.ts";
 * async function show(planPath: string) {
 *   await using op = await openOperation({ dir: ".", planPath });
 *   console.log(op.reviewed.action.model);
 * }
 * ```
 * @module
 */
import { SluiceError } from "../../errors.ts";
import { canonicalJson } from "../../artifact/canonical.ts";
import { artifactSha256 } from "../../artifact/artifact.ts";
import type { Plan } from "../../plan/plan.ts";
import { pendingCommands, typedActionSha256 } from "../../plan/plan.ts";
import { classifyChange } from "../../plan/change_policy.ts";
import { type Blocker, blocker, blockerError } from "../../validation/blocker.ts";
import { reviewedEvidence } from "../../validation/reviewed_evidence.ts";
import { currentContext, readPlanFile, verifyContinuation } from "../../plan/plan_file.ts";
import type { CompileResult } from "../../project/compile.ts";
import type { OpenedControl, RunnerAction } from "../../state/journal.ts";
import type { CompletedReceiptLookup, StateSnapshot, StateStore } from "../../state/store.ts";
import { findAbandonment } from "../../state/engine.ts";
import { loadCompiledProject, openSession } from "../session.ts";
import type { Session, SessionOptions } from "../session.ts";
import { type CandidateExpectation, expectCandidate } from "./candidate.ts";

/** Options shared by the reviewed-replacement journeys. */
export interface ReviewedOptions extends SessionOptions {
  /** The original format-6 plan file. */
  planPath: string;
  closeTimeoutMs?: number;
  readyTimeoutMs?: number;
  /** OpenLineage target: an http(s) URL (POST) or a file (JSON lines). Delivery never decides commit. */
  openlineage?: string;
  /** Remove a stale local lock left by a dead process first (explicit; never silent). */
  breakStaleLock?: string;
}

/** Options of the journeys that name an existing operation (runner-status, resume). */
export interface OperationOptions extends ReviewedOptions {
  operationId: string;
  /** The environment name, repeated, where the environment policy demands it. */
  confirmEnv?: string;
}

/** The reviewed plan: its bytes' sha256, its typed action and the action's fingerprint. */
export interface Reviewed {
  plan: Plan;
  sha256: string;
  action: RunnerAction;
  fingerprint: string;
}

/** An opened, locked reviewed operation. Dispose it to release the lock and close. */
export interface ReviewedOperation extends AsyncDisposable {
  project: Session;
  reviewed: Reviewed;
  options: ReviewedOptions;
  /** The candidate expectation of the operation `operationId` (action 0). */
  candidate(operationId: string): CandidateExpectation;
  /** Exact commands to inspect and resume the operation `operationId`. */
  commands(operationId: string): { status: string; resume: string };
}

/**
 * Open, verify and lock (see the module documentation).
 *
 * @example
 * ```ts
 * import { openOperation } from "./operation.ts";
 * // await using op = await openOperation(options, { confirmEnv: options.confirmEnv });
 * ```
 */
export async function openOperation(
  options: ReviewedOptions,
  policy: { confirmEnv?: string | null } = {},
): Promise<ReviewedOperation> {
  // a failure before the lock is taken closes the session; after, the operation owns it
  await using opening = new AsyncDisposableStack();
  const p = opening.use(await openSession(options));
  if (policy.confirmEnv !== undefined) requireConfirmedEnv(p, policy.confirmEnv);
  const reviewed = await loadReviewed(p, options.planPath);
  if (options.breakStaleLock) await p.store.breakStaleLock(options.breakStaleLock);
  await p.store.acquireLock({ actor: p.actor });
  const session = opening.move();
  return {
    project: p,
    reviewed,
    options,
    candidate: (operationId) =>
      expectCandidate(
        reviewed.action,
        operationId,
        0,
        reviewed.fingerprint,
        p.project.manifest.kafka.bootstrapInternal,
      ),
    commands: (operationId) => operationCommands(options, operationId),
    async [Symbol.asyncDispose]() {
      try {
        await p.store.releaseLock();
      } catch (error) {
        // a lock-release error after a verified result keeps committed: true (spec); the lock
        // itself is diagnosed by the next command
        p.logger.warn(
          `the deployment lock could not be released: ${
            error instanceof Error ? error.message : String(error)
          } (see 'sluice state show')`,
        );
      } finally {
        await session.disposeAsync();
      }
    },
  };
}

/**
 * Resuming (or deciding about an operation) where environments are declared requires
 * `--confirm-env <the environment>`.
 *
 * @example
 * ```ts
 * import { requireConfirmedEnv } from "./operation.ts";
 * // requireConfirmedEnv(opened, options.confirmEnv ?? null);
 * ```
 */
export function requireConfirmedEnv(p: Session, confirmEnv: string | null): void {
  const m = p.project.manifest;
  if (m.environments.length > 0 && confirmEnv !== m.environment) {
    throw new SluiceError(
      "BLOCKED_CONFIRM_ENV",
      `resuming in environment ${m.environment} requires --confirm-env ${m.environment}`,
    );
  }
}

/**
 * When the plan file is the one a pending create, runner removal or connector change recorded:
 * what continues that operation instead (`state runner-status` and `state resume` drive a
 * predicate replacement only). Read without the lock, for the message alone.
 */
async function pendingWayOut(store: StateStore, planSha256: string): Promise<string> {
  const pending = (await store.load().catch(() => null))?.control?.opened ?? null;
  if (!pending || pending.kind === "runner_update") return "";
  if (pending.intent.reviewed_plan_sha256 !== planSha256) return "";
  const cmds = pendingCommands({
    operation_id: pending.operation_id,
    kind: pending.kind,
    status: pending.status,
    last_boundary: pending.checkpoints.at(-1)?.name ?? null,
    plan_sha256: planSha256,
  });
  return `. This file's operation ${pending.operation_id} (${pending.kind}) is pending: continue it with '${cmds.continue}' (the same file again), or abandon it with '${cmds.abandon}'`;
}

/** Read the plan file, require format 6 and verify its typed action against the current project. */
async function loadReviewed(
  p: Pick<Session, "compiled" | "store">,
  planPath: string,
): Promise<Reviewed> {
  const r = await readReviewed(p.store, planPath);
  verifyReviewedCompiles(p.compiled, planPath, r);
  return r;
}

/**
 * Read the plan file: sealed and its typed action matching its checksum (`PLAN_TAMPERED`,
 * `readPlanFile`), format 6 with a predicate replacement.
 */
async function readReviewed(store: StateStore, planPath: string): Promise<Reviewed> {
  const { plan, sha256 } = await readPlanFile(planPath);
  if (plan.format !== 6 || !plan.typed_action) {
    const wayOut = await pendingWayOut(store, sha256);
    throw new SluiceError(
      "PLAN_NOT_REVIEWED",
      `${planPath} is a format-${plan.format} plan; a predicate replacement needs the reviewed format-6 plan from 'sluice plan --out'${wayOut}`,
    );
  }
  const action = plan.typed_action.action;
  if (action.type !== "replace_runner_predicate") {
    throw new SluiceError(
      "PLAN_INVALID",
      `${planPath}: unknown typed action ${String(action.type)}`,
    );
  }
  return { plan, sha256, action, fingerprint: typedActionSha256(action) };
}

/**
 * The reviewed action is what the project compiles to (`PLAN_STALE_SOURCE`, `PLAN_TAMPERED`) and
 * a replacement the planner would make ({@link verifyReplacementClass}).
 */
function verifyReviewedCompiles(compiled: CompileResult, planPath: string, r: Reviewed): void {
  const { plan, action } = r;
  // the desired action must match the actual compiled artifact of the current project
  const current = compiled.artifacts.find((a) => a.model === action.model);
  if (!current || current.sha256 !== action.desired_artifact_sha256) {
    throw new SluiceError(
      "PLAN_STALE_SOURCE",
      `the current project compiles model ${action.model} to ${
        current?.sha256 ?? "nothing"
      }, not the reviewed ${action.desired_artifact_sha256}`,
      { evidence: { reviewed: action.desired_artifact_sha256, current: current?.sha256 ?? null } },
    );
  }
  if (canonicalJson(action.evidence.desired_artifact) !== current.canonical) {
    throw new SluiceError(
      "PLAN_TAMPERED",
      "the typed action's desired artifact is not the compiled artifact",
    );
  }
  verifyReplacementClass(planPath, plan, action);
}

/**
 * The checks the operation opened with, repeated before a driver transition and before
 * finalization (spec: the coordinator "repeats those checks before driver transitions and before
 * finalization"): the plan file is read again (seal and typed-action checksum, `PLAN_TAMPERED`)
 * and must still be the one operation `operationId` recorded, with its typed action
 * ({@link verifyOperationMatches}); the project is loaded and compiled again and must be the one
 * the plan was made from (`verifyContinuation`: `PLAN_STALE_SOURCE` — restore the files to
 * continue) and compile to the reviewed desired artifact. Reads the plan file, `sluice.yaml` and
 * each model's SQL; no state, Docker or Kafka call (the runtime is verified by each decision, the
 * state by compare-and-set on each write).
 *
 * Returns [] while all of it holds, else the one refusal as a blocker (its code, message and
 * evidence): nothing was done, and the operation continues with `state resume` once the files are
 * restored.
 *
 * @example
 * ```ts
 * import { reverifyReviewed } from "./operation.ts";
 * // const stale = await reverifyReviewed(op, snap, operationId);
 * // if (stale.length > 0) return { kind: "blocked", blockers: stale, ... };
 * ```
 */
export async function reverifyReviewed(
  op: ReviewedOperation,
  snap: StateSnapshot,
  operationId: string,
): Promise<Blocker[]> {
  const { project: p, options } = op;
  try {
    const r = await readReviewed(p.store, options.planPath);
    const now = await loadCompiledProject(
      p.project.dir,
      options.environment ?? null,
      options.settings,
    );
    const c = controlOf(snap, operationId);
    if (!c) {
      throw new SluiceError(
        "BLOCKED_NO_PENDING_OPERATION",
        `operation ${operationId} is not pending in the state this step would continue`,
      );
    }
    verifyOperationMatches(c, r, operationId);
    verifyContinuation(r.plan, r.sha256, currentContext(p.store, now.sourceSha256, snap), {
      what: "replacement",
      operation_id: operationId,
      plan_sha256: c.intent.reviewed_plan_sha256,
    });
    verifyReviewedCompiles(now.compiled, options.planPath, r);
    return [];
  } catch (error) {
    if (!(error instanceof SluiceError)) throw error;
    return [blocker(error.code, error.message, {
      model: op.reviewed.action.model,
      evidence: error.evidence ?? {},
    })];
  }
}

/**
 * What the planner decided, decided again from the plan's own bound evidence (whatever the file
 * says): a format-6 plan is an online plan without blockers, its prior artifact is the one its
 * checksum names, and prior and desired differ in the predicate alone — any other change gives
 * the planner's own blocker (`classifyChange`), so the format cannot carry what planning refuses.
 */
function verifyReplacementClass(planPath: string, plan: Plan, action: RunnerAction): void {
  if (plan.mode !== "online") {
    throw new SluiceError(
      "PLAN_INVALID",
      `${planPath}: a reviewed replacement is planned online, this plan is ${String(plan.mode)}`,
    );
  }
  if (plan.blockers.length > 0) throw blockerError(plan.blockers);
  const e = reviewedEvidence(action);
  if (artifactSha256(e.prior_artifact) !== action.prior_artifact_sha256) {
    throw new SluiceError(
      "PLAN_TAMPERED",
      `${planPath}: the typed action's prior artifact is not the one its checksum ${action.prior_artifact_sha256} names`,
    );
  }
  const { blockers } = classifyChange(action.model, e.prior_artifact, e.desired_artifact);
  if (blockers.length > 0) throw blockerError(blockers);
}

/**
 * Exact commands to inspect and resume an operation of the plan file `o.planPath`, whatever its
 * journey (`state runner-status` and `state resume` take every journey's plan file).
 *
 * @example
 * ```ts
 * import { operationCommands } from "./operation.ts";
 * operationCommands({ planPath: "p.json" }, "op").resume; // "sluice state resume --plan p.json …"
 * ```
 */
export function operationCommands(
  o: Pick<ReviewedOptions, "environment" | "dir" | "planPath">,
  operationId: string,
): { status: string; resume: string } {
  const env = o.environment ? ` --env ${o.environment}` : "";
  const confirm = o.environment ? ` --confirm-env ${o.environment}` : "";
  const project = o.dir ? ` --project ${o.dir}` : "";
  return {
    status:
      `sluice state runner-status${project}${env} --plan ${o.planPath} --operation-id ${operationId}`,
    resume:
      `sluice state resume${project}${env}${confirm} --plan ${o.planPath} --operation-id ${operationId}`,
  };
}

/**
 * The pending control of `operationId` in a snapshot, or null.
 *
 * @example
 * ```ts
 * import { controlOf } from "./operation.ts";
 * // const c = controlOf(await store.load(), operationId);
 * ```
 */
export function controlOf(s: StateSnapshot, operationId: string): OpenedControl | null {
  const c = s.control?.opened;
  return c && c.operation_id === operationId ? c : null;
}

/**
 * The recorded operation is this plan's: a runner update started from these plan bytes with
 * this exact typed action (`BLOCKED_NOT_A_REPLACEMENT`, `BLOCKED_PLAN_MISMATCH`).
 *
 * @example
 * ```ts
 * import { verifyOperationMatches } from "./operation.ts";
 * // verifyOperationMatches(control, op.reviewed, operationId);
 * ```
 */
export function verifyOperationMatches(c: OpenedControl, r: Reviewed, operationId: string): void {
  if (c.kind !== "runner_update") {
    throw new SluiceError(
      "BLOCKED_NOT_A_REPLACEMENT",
      `operation ${operationId} is a ${c.kind}, not a runner update: inspect and continue it with the plan file it was started from (sha256 ${c.intent.reviewed_plan_sha256})`,
      { evidence: { operation_id: operationId, plan_sha256: c.intent.reviewed_plan_sha256 } },
    );
  }
  if (c.intent.reviewed_plan_sha256 !== r.sha256) {
    throw new SluiceError(
      "BLOCKED_PLAN_MISMATCH",
      `operation ${operationId} was started from plan ${c.intent.reviewed_plan_sha256}, not ${r.sha256}`,
    );
  }
  const recorded = c.actions[0];
  if (!recorded || typedActionSha256(recorded) !== r.fingerprint) {
    throw new SluiceError(
      "BLOCKED_PLAN_MISMATCH",
      `operation ${operationId} records another typed action than the plan`,
    );
  }
}

/** What the state holds of an operation of this plan: pending, or completed with its receipt. */
export type OperationRecord =
  | { kind: "pending"; control: OpenedControl }
  | { kind: "completed"; receipt: CompletedReceiptLookup };

/**
 * The operation `operationId` as the state records it, checked to be this plan's before
 * anything is observed — the one check `state runner-status` and `state resume` share: a pending
 * operation must be a runner update started from these plan bytes with this typed action
 * ({@link verifyOperationMatches}), a completed one must have applied these plan bytes
 * (`BLOCKED_PLAN_MISMATCH`); an abandoned one can never continue (`BLOCKED_OPERATION_ABANDONED`),
 * and an ID the state does not know is `BLOCKED_NO_PENDING_OPERATION` — never "absent, nothing
 * to do".
 *
 * @example
 * ```ts
 * import { operationOfPlan } from "./operation.ts";
 * // const rec = await operationOfPlan(snap, store, op.reviewed, operationId);
 * // if (rec.kind === "pending") console.log(rec.control.status);
 * ```
 */
export async function operationOfPlan(
  snap: StateSnapshot,
  store: Pick<StateStore, "completedReceipt">,
  r: Reviewed,
  operationId: string,
): Promise<OperationRecord> {
  const control = controlOf(snap, operationId);
  if (control) {
    verifyOperationMatches(control, r, operationId);
    return { kind: "pending", control };
  }
  const receipt = await store.completedReceipt(operationId);
  if (receipt) {
    const planSha = receipt.receipt.intent.reviewed_plan_sha256;
    if (planSha !== r.sha256) {
      throw new SluiceError(
        "BLOCKED_PLAN_MISMATCH",
        `operation ${operationId} completed from plan ${planSha}, not ${r.sha256}`,
      );
    }
    return { kind: "completed", receipt };
  }
  const abandoned = findAbandonment(snap.history.events, operationId);
  if (abandoned) {
    throw new SluiceError(
      "BLOCKED_OPERATION_ABANDONED",
      `operation ${operationId} was abandoned by ${abandoned.actor} at ${abandoned.recorded_at} (${abandoned.reason}); it can never continue: plan again`,
    );
  }
  throw new SluiceError(
    "BLOCKED_NO_PENDING_OPERATION",
    `operation ${operationId} is neither pending nor completed in this project's state; ` +
      "'sluice state show' names the pending operation",
  );
}
