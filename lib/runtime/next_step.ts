/**
 * The next step of a pending create, runner removal or connector change as `state
 * runner-status` reports it: the row of that journey's table (`lib/protocol/create.ts`,
 * `removal.ts`, `connector.ts`) a fresh read-only observation says comes next, that row as the
 * table words it, or the blockers that stop it. The runner removal's is its continuation's own
 * decision (`decideRemoval`, `removal_next.ts`); the replacement has its own, derived from its
 * table by `replacement/decide.ts`.
 *
 * @example
 * ```ts
 * import { nextAt } from "./next_step.ts";
 * import { removalRow } from "../protocol/removal.ts";
 * console.log(nextAt(removalRow("commit"), "commit ownership").table_row);
 * ```
 * @module
 */
import type { Blocker } from "../validation/blocker.ts";

/** A row of a journey table, as far as a report names it. */
export interface ReportedRow {
  readonly step: string;
  readonly requires: string;
  readonly next: string;
}

/** The next step a fresh observation would take (this report authorizes nothing). */
export interface NextStep {
  /** The table row's step, "blocked", or "complete" (nothing left). */
  step: string;
  /** What it is about, in words. */
  detail: string;
  /** The row's step name; null when no row is next. */
  row: string | null;
  /** The row as the table words it: what it requires and what it does. */
  table_row: string | null;
  /** Why the next step is blocked, if it is. */
  blockers: Blocker[];
}

/**
 * A row of the table as `requires …; next: …`.
 *
 * @example
 * ```ts
 * import { describeTableRow } from "./next_step.ts";
 * describeTableRow({ step: "a", requires: "x", next: "y" }); // "requires x; next: y"
 * ```
 */
export function describeTableRow(row: ReportedRow): string {
  return `requires ${row.requires}; next: ${row.next}`;
}

/**
 * The next step is `row`, for `detail`.
 *
 * @example
 * ```ts
 * import { nextAt } from "./next_step.ts";
 * nextAt({ step: "commit", requires: "x", next: "y" }, "commit").step; // "commit"
 * ```
 */
export function nextAt(row: ReportedRow, detail: string): NextStep {
  return {
    step: row.step,
    detail,
    row: row.step,
    table_row: describeTableRow(row),
    blockers: [],
  };
}

/**
 * The row `row` (null: before any row) may not be taken: these blockers stop it.
 *
 * @example
 * ```ts
 * import { blockedAt } from "./next_step.ts";
 * blockedAt(null, []).step; // "blocked"
 * ```
 */
export function blockedAt(row: ReportedRow | null, blockers: Blocker[]): NextStep {
  return {
    step: "blocked",
    detail: blockers.map((b) => `[${b.code}] ${b.message}`).join("; "),
    row: row?.step ?? null,
    table_row: row ? describeTableRow(row) : null,
    blockers,
  };
}

/**
 * Nothing is left to do.
 *
 * @example
 * ```ts
 * import { complete } from "./next_step.ts";
 * complete("committed").step; // "complete"
 * ```
 */
export function complete(detail: string): NextStep {
  return { step: "complete", detail, row: null, table_row: null, blockers: [] };
}
