/**
 * The extra labels of an operation (`openProject({ extraLabels })`): recorded in its intent's
 * details when it starts, and read back from there by every continuation (resume, `apply --plan`
 * again, the router's continue), whatever the continuing handle gives — a resume from another
 * process (the CLI) must not re-create a candidate or a runner without them. An intent recorded
 * before the field existed (or without extra labels) continues with none. sluice's namespace
 * (`sluice.*`: its own labels and its images') is not for extra labels: a given key there is
 * refused (`USAGE_EXTRA_LABELS`, nothing started) rather than dropped without a word, and one
 * found in a recorded intent is dropped when read, so sluice's labels always win.
 *
 * @example
 * ```ts
 * import { extraLabelsDetail, recordedExtraLabels } from "./operation_labels.ts";
 * const details = { model: "orders", ...extraLabelsDetail({ "ci.run": "t1" }) };
 * console.log(recordedExtraLabels({ operation_id: "op", details })); // { "ci.run": "t1" }
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { OperationIntent } from "../state/journal.ts";

/** The intent detail that records the operation's extra labels. */
export const EXTRA_LABELS_DETAIL = "extra_labels";

/** sluice's own label namespace (`labels.ts`): never set by an extra label. */
const SLUICE_PREFIX = "sluice.";

function withoutSluiceKeys(labels: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(labels).filter(([k]) => !k.startsWith(SLUICE_PREFIX)),
  );
}

/**
 * Refuse extra labels in sluice's namespace (`USAGE_EXTRA_LABELS`, exit 2): a key there could
 * be read as sluice's own evidence, and dropping it silently would leave a caller's container
 * without a label it asked for (a test run's tear-down label, say).
 *
 * @example
 * ```ts
 * import { checkExtraLabels } from "./operation_labels.ts";
 * checkExtraLabels({ "ci.run": "t1" }); // fine
 * // checkExtraLabels({ "sluice.run": "t1" }); // throws USAGE_EXTRA_LABELS
 * ```
 */
export function checkExtraLabels(given: Record<string, string> | undefined): void {
  const refused = Object.keys(given ?? {}).filter((k) => k.startsWith(SLUICE_PREFIX)).sort();
  if (refused.length === 0) return;
  throw new SluiceError(
    "USAGE_EXTRA_LABELS",
    `extra labels may not use sluice's namespace (${SLUICE_PREFIX}*): ${
      refused.join(", ")
    }; sluice writes those itself. Use another prefix (e.g. ci.run)`,
    { evidence: { refused } },
  );
}

/**
 * The intent details that record the extra labels given at the start: `{ extra_labels }`, or
 * nothing when there are none (an intent without the field continues with none). Labels in
 * sluice's namespace are refused ({@link checkExtraLabels}).
 *
 * @example
 * ```ts
 * import { extraLabelsDetail } from "./operation_labels.ts";
 * console.log(extraLabelsDetail({ "ci.run": "t1" })); // { extra_labels: { "ci.run": "t1" } }
 * ```
 */
export function extraLabelsDetail(
  given: Record<string, string> | undefined,
): { [EXTRA_LABELS_DETAIL]?: Record<string, string> } {
  checkExtraLabels(given);
  const labels = { ...given };
  return Object.keys(labels).length > 0 ? { [EXTRA_LABELS_DETAIL]: labels } : {};
}

/**
 * The extra labels the operation's intent recorded ({} for an intent without them). A recorded
 * field that is not an object of strings is refused (`BLOCKED_INVALID_INTENT`): never guessed.
 *
 * @example
 * ```ts
 * import { recordedExtraLabels } from "./operation_labels.ts";
 * console.log(recordedExtraLabels({ operation_id: "op", details: {} })); // {}
 * ```
 */
export function recordedExtraLabels(
  intent: Pick<OperationIntent, "operation_id" | "details">,
): Record<string, string> {
  const v: unknown = intent.details[EXTRA_LABELS_DETAIL];
  if (v === undefined) return {};
  const ok = typeof v === "object" && v !== null && !Array.isArray(v) &&
    Object.values(v).every((x) => typeof x === "string");
  if (!ok) {
    throw new SluiceError(
      "BLOCKED_INVALID_INTENT",
      `operation ${intent.operation_id}: its intent's ${EXTRA_LABELS_DETAIL} is not an object of strings`,
    );
  }
  return withoutSluiceKeys(v as Record<string, string>);
}
