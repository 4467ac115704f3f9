/**
 * What the reviewed-replacement journeys return: {@link ReplacementRecord} for execute and
 * resume (committed true / null = unknown / false), {@link RunnerStatusReport} for the read-only
 * diagnosis. The SDK returns the record without `committed` (`lib/sdk/results.ts`: one status
 * field, `outcome`); the CLI's JSON keeps both.
 *
 * @example
 * ```ts
 * import type { ReplacementResult } from "./result.ts";
 * const done = (r: ReplacementResult) => r.committed === true;
 * ```
 * @module
 */
import type { Checkpoint } from "../../state/journal.ts";
import type { CompletionReceipt } from "../../state/history.ts";
import type { Stage } from "../../protocol/replacement.ts";
import type { Blocker } from "../../validation/blocker.ts";
import type { RunnerObservation } from "../../validation/observation.ts";
import type { StepKind } from "../../protocol/replacement.ts";

/** The result of executing or resuming a reviewed replacement, as the coordinator records it. */
export interface ReplacementRecord {
  /** The operation's UUID. */
  operation_id: string;
  /**
   * true: verified and committed; null: outcome unknown (a response was lost); false: not
   * committed. Always what `outcome` says: true for `completed`, null for `unknown`, false for
   * `blocked` and `timeout` (the SDK leaves it out; the CLI's JSON keeps it).
   */
  committed: boolean | null;
  /** How the invocation ended. */
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
  receipt: CompletionReceipt | null;
  /** Exact commands to inspect and resume this operation. */
  commands: { status: string; resume: string };
  /** OpenLineage delivery warnings (never a reason to change `committed`). */
  lineage_warnings: string[];
}

/** The runtime's name of {@link ReplacementRecord} (the SDK's `ReplacementResult` has no `committed`). */
export type ReplacementResult = ReplacementRecord;

/** A read-only status report. */
export interface RunnerStatusReport {
  /** The operation's UUID. */
  operation_id: string;
  /** pending (in progress or interrupted), completed (receipt verified), absent. */
  state: "in_progress" | "interrupted" | "completed";
  /** The last durable boundary; null for an absent operation. */
  last_boundary: Stage | "finalized" | null;
  /**
   * The durable checkpoints, in order.
   * @internal journal and observation evidence; its shape is not part of the versioned SDK
   */
  checkpoints: Checkpoint[];
  /**
   * The next step the fresh evidence would authorize (it is not authorized by this report), and
   * the boundary-table row that says so.
   */
  next: {
    step: StepKind | "wait" | "blocked";
    detail: string;
    row: string | null;
    table_row: string | null;
  };
  /** Why the next step is blocked, if it is. */
  blockers: Blocker[];
  /** Interruptions recorded. */
  incidents: number;
  /** Resumes authorized. */
  resumes: number;
  /**
   * The fresh read-only observation the report was made from.
   * @internal journal and observation evidence; its shape is not part of the versioned SDK
   */
  observation: RunnerObservation | null;
  /** Exact commands to inspect and resume this operation. */
  commands: { status: string; resume: string };
}

/** The fields every result of one operation shares. */
export interface ResultBase {
  operation_id: string;
  commands: { status: string; resume: string };
}

/**
 * A result that did not commit: blocked, timed out, or unknown (`committed: null`).
 *
 * @example
 * ```ts
 * import { notCommitted } from "./result.ts";
 * const r = notCommitted({ operation_id: "x", commands: { status: "", resume: "" } }, {
 *   committed: null, outcome: "unknown", last_boundary: "old_closed", reason: "lost",
 * });
 * console.log(r.committed);
 * ```
 */
export function notCommitted(
  base: ResultBase,
  r: {
    committed: false | null;
    outcome: "blocked" | "timeout" | "unknown";
    last_boundary: Stage | "finalized" | null;
    blockers?: Blocker[];
    reason?: string | null;
  },
): ReplacementResult {
  return {
    ...base,
    committed: r.committed,
    outcome: r.outcome,
    last_boundary: r.last_boundary,
    blockers: r.blockers ?? [],
    reason: r.reason ?? null,
    serial: null,
    receipt: null,
    lineage_warnings: [],
  };
}

/**
 * The result of an invocation whose durable write `what` was not acknowledged: the outcome is
 * unknown (`committed: null`), `last` the last acknowledged boundary; `state runner-status`
 * tells what was recorded.
 *
 * @example
 * ```ts
 * import { lostWrite } from "./result.ts";
 * // return lostWrite(base, "the intent", null, error);
 * ```
 */
export function lostWrite(
  base: ResultBase,
  what: string,
  last: Stage | "finalized" | null,
  error: unknown,
): ReplacementResult {
  return notCommitted(base, {
    committed: null,
    outcome: "unknown",
    last_boundary: last,
    reason: `the write of ${what} was not acknowledged (${
      error instanceof Error ? error.message : String(error)
    }): it may or may not be recorded; '${base.commands.status}' tells`,
  });
}
