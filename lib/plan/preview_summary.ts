/**
 * The summary of a live preview as a plan may carry it (sealed with the plan: the reviewer's
 * view is recorded, the sampled records are not). Display-only: never drives apply.
 *
 * @example
 * ```ts
 * import type { PreviewSummary } from "./preview_summary.ts";
 * const s: PreviewSummary = {
 *   model: "eligible_orders", input_topic: "raw_orders", sampled: 6, admitted_old: 3,
 *   admitted_new: 2, newly_admitted: 0, newly_dropped: 1, undecodable: 0, undecodable_by_reason: {},
 *   tombstones: 0, stopped: null, sampled_at: "2026-12-07T10:00:00.000Z",
 * };
 * ```
 * @module
 */

/** Counts of one model's preview. */
export interface PreviewSummary {
  /** The model. */
  model: string;
  /** The input topic sampled. */
  input_topic: string;
  /** Records evaluated (decoded or not; tombstones excluded). */
  sampled: number;
  /** Records the old predicate admits. */
  admitted_old: number;
  /** Records the new predicate admits. */
  admitted_new: number;
  /** Admitted by the new predicate, not by the old. */
  newly_admitted: number;
  /** Admitted by the old predicate, not by the new. */
  newly_dropped: number;
  /** Records the runner's strict decoder rejects (the runner stops on such a record). */
  undecodable: number;
  /** `DECODE_*` code → count. */
  undecodable_by_reason: Record<string, number>;
  /** Null-value records: the runner drops them before decoding. */
  tombstones: number;
  /** Why the read stopped before the requested sample, if it did. */
  stopped: null | "bytes" | "time";
  /** When the sample was read (RFC 3339). */
  sampled_at: string;
}
