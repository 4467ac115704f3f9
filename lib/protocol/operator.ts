/**
 * The operator's explicit decisions about a pending operation, as data: the fault sites their
 * durable writes and provider change cross. Each is a public command (`state
 * accept-retention-loss`, `state abandon`) that records who decided what and why before (or
 * instead of) any provider change, so a kill anywhere leaves either the decision unrecorded, or
 * recorded with its one change still to make (the same command again makes it).
 *
 * @example
 * ```ts
 * import { operatorSites } from "./operator.ts";
 * console.log(operatorSites().map((s) => s.name).join(", "));
 * ```
 * @module
 */
import type { FaultSite } from "../fault/site.ts";
import { siteMaker } from "./table.ts";
import type { JourneyDescriptor } from "./descriptor.ts";

const site = siteMaker(import.meta.url);

/** The sites of the operator's decisions. */
export const OPERATOR_SITES: Readonly<Record<"decision" | "moveOffsets" | "abandon", FaultSite>> = {
  decision: site(
    "journal.operator_decision",
    "journal",
    "record the operator's acceptance of a retention loss (the lost range of each partition)",
  ),
  moveOffsets: site(
    "kafka.move_offsets_to_retained",
    "provider",
    "move the accepted partitions' committed positions to the earliest retained offsets",
  ),
  abandon: site(
    "journal.abandon",
    "journal",
    "archive the abandonment (who, why, the runtime as left) and clear control; no provider change",
  ),
};

/** The blocker codes the operator's commands can give (each has a runbook entry). */
export const OPERATOR_BLOCKERS = [
  "BLOCKED_NO_RETENTION_LOSS",
  "BLOCKED_GROUP_ACTIVE",
  "BLOCKED_OPERATION_TERMINAL",
  "BLOCKED_NO_PENDING_OPERATION",
  "BLOCKED_OPERATION_FROZEN",
] as const;

/**
 * The operator's sites, in the order a retention acceptance then an abandonment cross them.
 *
 * @example
 * ```ts
 * import { operatorSites } from "./operator.ts";
 * console.log(operatorSites().length); // 3
 * ```
 */
export function operatorSites(): FaultSite[] {
  return [OPERATOR_SITES.decision, OPERATOR_SITES.moveOffsets, OPERATOR_SITES.abandon];
}

/**
 * The operator's decisions, as the registry reads them: no operation and no plan action of
 * their own (they decide about another journey's pending operation); `state
 * accept-retention-loss` and `state abandon` cross their sites and the state layer's `decide`
 * and `abandon` writes.
 *
 * @example
 * ```ts
 * import { OPERATOR_JOURNEY } from "./operator.ts";
 * console.log(OPERATOR_JOURNEY.crossings[0].transitions); // ["decide", "abandon"]
 * ```
 */
export const OPERATOR_JOURNEY: JourneyDescriptor<"operator"> = {
  name: "operator",
  kind: null,
  actions: [],
  crossings: [{
    by: "operator",
    command: "sluice state accept-retention-loss, sluice state abandon",
    sites: operatorSites,
    transitions: ["decide", "abandon"],
    locks: false,
  }],
  alone: [],
};
