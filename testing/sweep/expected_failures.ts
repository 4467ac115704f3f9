/**
 * The crash sweep's known failures, in one place: each entry is a product defect the sweep
 * found — a state a kill leaves that no public command finishes and no documented blocker
 * names — with the cases that show it and the symptom they must still show. A listed case that
 * passes, or fails another way, fails the sweep: the list only shrinks as fixes land. Never
 * weaken an invariant instead of listing a case here.
 *
 * @example
 * ```ts
 * import { expectedFailure } from "./expected_failures.ts";
 * console.log(expectedFailure("docker.remove_old:after:local")); // undefined: it must pass
 * ```
 * @module
 */

/** A known defect and the cases that show it. */
export interface ExpectedFailure {
  /** What is wrong, in the operator's terms: what the kill leaves and what the recovery says. */
  defect: string;
  /** Who is fixing it, when known. */
  fixer: string | null;
  /** One of the case's problems must match (so a new, different failure is never hidden). */
  symptom: RegExp;
  /** Case IDs: `<site>:<side>:<backend>`. */
  cases: readonly string[];
}

/**
 * Every known failure. The crash pass has none: the create continuation (`apply --plan` again
 * continues or verifies a killed create), the local finalize completed by `state resume`, the
 * operator's decisions and the connector journey all finish or block precisely in every case;
 * `lock.postgres.break` is no site (docs/decisions.md D13). The lock-loss pass (issue 26 item 2)
 * found three defects, all fixed since: a format-5 apply's bare STATE_LOCK_LOST now names its
 * pending operation (`lib/runtime/journeys.ts` `namingPending`), the candidate's create verifies
 * the lock after the mounted plan's write (`drive.ts` `act`), and a PostgreSQL session ended under
 * its lock answers STATE_LOCK_LOST on every query (`pg_primitive.ts` `sessionEnded`).
 */
export const EXPECTED_FAILURES: readonly ExpectedFailure[] = [];

/**
 * The known failure a case belongs to, if any.
 *
 * @example
 * ```ts
 * import { expectedFailure } from "./expected_failures.ts";
 * console.log(expectedFailure("journal.intent:before:local")?.defect);
 * ```
 */
export function expectedFailure(id: string): ExpectedFailure | undefined {
  return EXPECTED_FAILURES.find((f) => f.cases.includes(id));
}
