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
import { commandSites, siteMaker, siteOf, type StepRow, tableSites } from "./table.ts";
import type { JourneyDescriptor } from "./descriptor.ts";

const site = siteMaker(import.meta.url);

/** The operator's commands that cross fault sites of their own. */
export type OperatorCommand = "accept-retention-loss" | "abandon";

/** The steps of the operator's decisions that cross a site. */
export type OperatorStep = "record_decision" | "move_offsets" | "abandon";

/** One row of the operator's table. */
export interface OperatorRow extends StepRow<OperatorStep> {
  /** The command that crosses it. */
  readonly by: readonly OperatorCommand[];
  /** What must hold (checked on fresh reads) before the step. */
  readonly requires: string;
  /** The one write or provider change of the step. */
  readonly next: string;
  readonly site: FaultSite;
}

/**
 * The operator's rows, in the order a retention acceptance then an abandonment cross them:
 * `lib/runtime/replacement/retention.ts` and `abandon.ts` take each step's site from its row.
 */
export const OPERATOR_TABLE: readonly OperatorRow[] = [
  {
    step: "record_decision",
    by: ["accept-retention-loss"],
    requires:
      "a pending replacement whose committed positions are below the earliest retained offsets (records deleted before it read them), its group Empty; no such acceptance recorded yet",
    next: "record the acceptance (the lost range of each partition, who and why)",
    site: site(
      "journal.operator_decision",
      "journal",
      "record the operator's acceptance of a retention loss (the lost range of each partition)",
    ),
  },
  {
    step: "move_offsets",
    by: ["accept-retention-loss"],
    requires:
      "the acceptance is recorded; the accepted partitions' offsets are still below retention",
    next: "move the accepted partitions' committed positions to the earliest retained offsets",
    site: site(
      "kafka.move_offsets_to_retained",
      "provider",
      "move the accepted partitions' committed positions to the earliest retained offsets",
    ),
  },
  {
    step: "abandon",
    by: ["abandon"],
    requires:
      "the named operation is pending (an abandonment already archived for it is answered, not made again)",
    next: "archive the abandonment and clear control (no provider change)",
    site: site(
      "journal.abandon",
      "journal",
      "archive the abandonment (who, why, the runtime as left) and clear control; no provider change",
    ),
  },
];

/**
 * The site an operator's step crosses.
 *
 * @example
 * ```ts
 * import { operatorSite } from "./operator.ts";
 * console.log(operatorSite("abandon").name); // journal.abandon
 * ```
 */
export function operatorSite(step: OperatorStep): FaultSite {
  return siteOf("operator", OPERATOR_TABLE, step);
}

/** The sites of the operator's decisions, by the names the inventory uses (each its row's). */
export const OPERATOR_SITES: Readonly<Record<"decision" | "moveOffsets" | "abandon", FaultSite>> = {
  decision: operatorSite("record_decision"),
  moveOffsets: operatorSite("move_offsets"),
  abandon: operatorSite("abandon"),
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
 * The operator's sites, in table order (a retention acceptance's, then an abandonment's), or
 * the sites one command crosses.
 *
 * @example
 * ```ts
 * import { operatorSites } from "./operator.ts";
 * console.log(operatorSites().length, operatorSites("abandon").length); // 3 1
 * ```
 */
export function operatorSites(command?: OperatorCommand): FaultSite[] {
  return command ? commandSites(OPERATOR_TABLE, command) : tableSites(OPERATOR_TABLE);
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
    sites: () => operatorSites(),
    transitions: ["decide", "abandon"],
    locks: false,
  }],
  alone: [],
};
