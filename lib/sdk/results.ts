/**
 * The SDK's own names for what its journeys return, where they differ from the runtime's shapes
 * (which are shared with stored state, evidence and the CLI's JSON, and so keep theirs): a plan's
 * kind as a named value ({@link planKind}), the outcome of an apply or resume named by that kind
 * ({@link ApplyOutcome}, {@link ResumeOutcome}), and a replacement's result with one status
 * field ({@link ReplacementResult}: `outcome`).
 *
 * The convention (docs/sdk-import.md, "Naming"): every field of a result is snake_case, as the
 * CLI's JSON and the stored formats are; the options and requests a call takes are camelCase,
 * as JavaScript parameters are.
 *
 * @example
 * ```ts
 * import { planKind } from "./results.ts";
 * import type { Plan } from "../plan/plan.ts";
 * const describe = (plan: Plan) =>
 *   planKind(plan) === "replacement" ? "a reviewed predicate replacement" : "a change";
 * console.log(typeof describe);
 * ```
 * @module
 */
import type { ApplyResult } from "../runtime/apply_context.ts";
import type { RunnerCredentialsEvidence } from "../plan/runner_credentials.ts";
import type { ResumeOutcome as RuntimeResumeOutcome } from "../runtime/pending_operation.ts";
import type { ReplacementRecord } from "../runtime/replacement/result.ts";
import type { Plan } from "../plan/plan.ts";
import type { Stage } from "../protocol/replacement.ts";
import type { Blocker } from "../validation/blocker.ts";

/**
 * What a plan does, by name: `"replacement"` is the reviewed plan of a sole typed predicate
 * replacement (plan file format 6), applied boundary by boundary by the coordinator;
 * `"change"` is every other plan (format 5: creates, runner removals, connector changes, or
 * nothing), applied by the create journey.
 */
export type PlanKind = "change" | "replacement";

/**
 * The {@link PlanKind} of a plan: `"replacement"` for format 6, `"change"` for format 5.
 *
 * @example
 * ```ts
 * import { planKind } from "./results.ts";
 * console.log(planKind({ format: 6 })); // "replacement": apply it from its file
 * console.log(planKind({ format: 5 })); // "change"
 * ```
 */
export function planKind(plan: Pick<Plan, "format">): PlanKind {
  return plan.format === 6 ? "replacement" : "change";
}

/**
 * The result of carrying out (or resuming) a reviewed predicate replacement. Its one status is
 * `outcome`: `completed` (verified and committed), `unknown` (a response was lost: it may or may
 * not be recorded; `runnerStatus` tells), `blocked` or `timeout` (not committed).
 */
export interface ReplacementResult {
  /** The operation's UUID. */
  operation_id: string;
  /** How the invocation ended: its one status. */
  outcome: "completed" | "blocked" | "timeout" | "unknown";
  /**
   * The last durable (acknowledged) boundary; null when not even the operation's intent was
   * acknowledged (its write's response was lost: it may or may not be recorded).
   */
  last_boundary: Stage | "finalized" | null;
  /** Why it is blocked (when `outcome` is `blocked`). */
  blockers: Blocker[];
  /** What happened, in words, when it did not complete. */
  reason: string | null;
  /** The ownership serial after a commit; null otherwise. */
  serial: number | null;
  /**
   * The completion receipt of a committed replacement.
   * @internal the journal's completion receipt; its shape is not part of the versioned SDK
   */
  receipt: ReplacementRecord["receipt"];
  /** Exact commands to inspect and resume this operation. */
  commands: { status: string; resume: string };
  /** OpenLineage delivery warnings (never a reason to change `outcome`). */
  lineage_warnings: string[];
}

/** Exactly the coordinator's record without `committed` (checked when this module compiles). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _sameFields: Same<ReplacementResult, Omit<ReplacementRecord, "committed">> = true;

/** What {@link SluiceProject.apply} did, by the applied plan's {@link PlanKind}. */
export type ApplyOutcome =
  | {
    /** A format-5 plan: created, removed, changed connectors, or found nothing to do. */
    kind: "change";
    result: ApplyResult;
    /** The sha256 of the plan file applied; null for a fresh plan. */
    plan_sha256: string | null;
  }
  | {
    /** A reviewed (format-6) predicate replacement. */
    kind: "replacement";
    /** `outcome` is `completed`, `unknown` (inspect with runnerStatus), `blocked` or `timeout`. */
    result: ReplacementResult;
  };

/** What {@link SluiceProject.resume} did, by the operation's plan's {@link PlanKind}. */
export type ResumeOutcome =
  | {
    kind: "replacement";
    result: ReplacementResult;
    /**
     * The replacement went on with other runner credentials than its plan bound: the plan's and
     * the current keyed hashes, never a secret (`lib/plan/runner_credentials.ts`). Absent
     * otherwise. (A continued change carries it in its result, as an apply's does.)
     */
    runner_client_changed?: RunnerCredentialsEvidence;
  }
  | {
    kind: "change";
    /** The continued (or verified) operation's apply result. */
    result: ApplyResult;
    /** The sha256 of the plan file. */
    plan_sha256: string;
  };

/**
 * A replacement's result as the SDK returns it: the coordinator's record without its second
 * status field (`committed`, which `outcome` determines).
 *
 * @example
 * ```ts
 * import { replacementResult } from "./results.ts";
 * import type { ReplacementRecord } from "../runtime/replacement/result.ts";
 * const status = (r: ReplacementRecord) => replacementResult(r).outcome;
 * console.log(typeof status);
 * ```
 */
export function replacementResult(r: ReplacementRecord): ReplacementResult {
  const { committed: _derived, ...result } = r;
  return result;
}

/**
 * A resume's outcome as the SDK returns it (the runtime's, its kinds named as plan kinds).
 *
 * @example
 * ```ts
 * import { resumeOutcome } from "./results.ts";
 * import type { ResumeOutcome } from "../runtime/pending_operation.ts";
 * const kind = (o: ResumeOutcome) => resumeOutcome(o).kind; // "change" | "replacement"
 * console.log(typeof kind);
 * ```
 */
export function resumeOutcome(o: RuntimeResumeOutcome): ResumeOutcome {
  const changed = o.runner_client_changed;
  return o.kind === "replacement"
    ? {
      kind: "replacement",
      result: replacementResult(o.result),
      ...(changed ? { runner_client_changed: changed } : {}),
    }
    : {
      kind: "change",
      result: changed ? { ...o.result, runner_client_changed: changed } : o.result,
      plan_sha256: o.plan_sha256,
    };
}
