/**
 * What an uninterrupted predicate replacement reports, in order (`progressLabel` of each
 * progress event but the waits). Written out, not derived from `lib/protocol/replacement.ts`, so
 * the tests comparing with it (over the fakes, on real services, on both state backends) check
 * the table's order against an independent statement of it.
 *
 * @example
 * ```ts
 * import { UNINTERRUPTED_REPLACEMENT } from "./replacement_progress.ts";
 * console.log(UNINTERRUPTED_REPLACEMENT.at(-1)); // commit
 * ```
 * @module
 */

/** The progress labels of a replacement that ran from start to commit without a stop. */
export const UNINTERRUPTED_REPLACEMENT: readonly string[] = [
  "started",
  "intent",
  "action_started",
  "term",
  "old_closed",
  "remove",
  "old_removed",
  "create",
  "replacement_created",
  "start",
  "action_completed",
  "commit",
];
