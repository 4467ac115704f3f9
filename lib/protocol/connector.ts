/**
 * The connector journey's table, as data, in the same shape as the create journey's
 * ({@link "./create.ts"}): each row is one durable step of applying a plan's connector changes —
 * what a fresh, exact observation of the named connector must show before it, the one mutation
 * or write it makes, the fault site that mutation crosses, what a fresh observation proves after
 * a lost response, and the codes it can give. This order is the only one: `decideConnectors`
 * (`lib/runtime/connector_next.ts`) walks these rows (the connector rows once per connector
 * action, in plan order, each action by the row of its type) on fresh readings to find the one
 * step to take — the step `lib/runtime/connectors.ts` crosses at the row's site and the row
 * `state runner-status` reports; the fault inventory lists the sites with the `connector`
 * journey. A row gives only the codes its `blockers` declare.
 *
 * Kafka Connect has no labels: a connector's identity is its exact name on a cluster of a known
 * identity (the worker group's Kafka cluster ID and the REST endpoint's digest) plus the keyed
 * fingerprint of its configuration. After a lost response the next step is decided by that
 * observation alone (absent, the prior fingerprint, or the desired one); anything else blocks.
 *
 * @example
 * ```ts
 * import { CONNECTOR_TABLE } from "./connector.ts";
 * for (const row of CONNECTOR_TABLE) console.log(row.step, row.site?.name ?? "(read-only)");
 * ```
 * @module
 */
import type { FaultSite } from "../fault/site.ts";
import { derivedOperationId, rowOf, siteMaker, siteOf, tableSites } from "./table.ts";
import type { OperationJourney } from "./descriptor.ts";

const site = siteMaker(import.meta.url);

/** The Connect mutations, each a fault site of kind `provider` (crossed on both backends). */
export const CONNECT_SITES: {
  readonly create: FaultSite;
  readonly update: FaultSite;
  readonly delete: FaultSite;
} = {
  create: site(
    "connect.create_connector",
    "provider",
    "create one named connector with its configuration (POST /connectors)",
  ),
  update: site(
    "connect.update_connector_config",
    "provider",
    "replace one existing connector's configuration (PUT /connectors/{name}/config)",
  ),
  delete: site(
    "connect.delete_connector",
    "provider",
    "delete one named connector object, nothing else (DELETE /connectors/{name})",
  ),
} as const;

/** The steps of the connector journey. */
export type ConnectorStep =
  | "intent"
  | "create_connector"
  | "update_connector"
  | "delete_connector"
  | "release_connector"
  | "commit"
  | "await_running";

/** One row of the connector table. */
export interface ConnectorRow {
  readonly step: ConnectorStep;
  /** Once for the operation, or once per connector action of that type. */
  readonly per: "operation" | "connector";
  /** What must hold (checked on fresh, exact reads) before the step. */
  readonly requires: string;
  /** The one mutation or write of the step. */
  readonly next: string;
  /** What a fresh observation proves when the step's response was lost (continuation). */
  readonly lostResponse: string | null;
  /** The fault site it crosses (null: a read-only check or wait). */
  readonly site: FaultSite | null;
  /** The codes it can give. */
  readonly blockers: readonly string[];
}

/**
 * The ways out of `BLOCKED_UNOWNED_CONNECTOR`, said by every message that gives it (and by the
 * runbook's row): sluice never adopts, changes or deletes a connector it did not create.
 */
export const UNOWNED_CONNECTOR_WAYS_OUT =
  "ways out: rename the logical connector under connectors: (its Connect name follows from it), " +
  "or, if the foreign connector is a leftover, delete it yourself on the Connect cluster; then " +
  "plan again (sluice never adopts, changes or deletes a connector it did not create)";

/** The codes a connector's exact observation can give before or during the journey. */
const OBSERVED = [
  "BLOCKED_CONNECT_CLUSTER_CHANGED",
  "BLOCKED_UNOWNED_CONNECTOR",
  "BLOCKED_CONNECTOR_DRIFT",
  "BLOCKED_CONNECTOR_MISSING",
] as const;

/** The connector journey, in order. */
export const CONNECTOR_TABLE: readonly ConnectorRow[] = [
  {
    step: "intent",
    per: "operation",
    requires:
      "the plan is current (or is this pending operation's own plan), no other operation is pending, the secrets still hash to the reviewed digests, and every connector is exactly as the plan binds it: same cluster identity; absent for a create; the owned fingerprint for an update or removal",
    next: "record the connector operation's intent (its plan and every action)",
    lostResponse: null,
    site: site("journal.connector_intent", "journal", "record the connector operation's intent"),
    blockers: [
      "BLOCKED_OPERATION_PENDING",
      "BLOCKED_SECRET_CHANGED",
      // continued: the ownership the intent started from is no longer the state
      "BLOCKED_STATE_CHANGED",
      ...OBSERVED,
    ],
  },
  {
    step: "create_connector",
    per: "connector",
    requires: "the intent is recorded; the named connector is absent",
    next: "create it with the reviewed configuration",
    lostResponse:
      "present with exactly the reviewed fingerprint: this operation created it; present otherwise: not ours",
    site: CONNECT_SITES.create,
    blockers: ["BLOCKED_UNOWNED_CONNECTOR", "BLOCKED_CONNECT_CLUSTER_CHANGED"],
  },
  {
    step: "update_connector",
    per: "connector",
    requires: "the connector carries the owned (prior) fingerprint",
    next: "replace its configuration with the reviewed one",
    lostResponse: "the desired fingerprint: the update was applied",
    site: CONNECT_SITES.update,
    blockers: [
      "BLOCKED_CONNECTOR_DRIFT",
      "BLOCKED_CONNECTOR_MISSING",
      "BLOCKED_CONNECT_CLUSTER_CHANGED",
      // the reviewed configuration found in place by the run that never submitted it
      "BLOCKED_UNOWNED_CONNECTOR",
    ],
  },
  {
    step: "delete_connector",
    per: "connector",
    requires:
      "an explicit removal declaration; the connector carries the owned fingerprint on the owned cluster",
    next: "delete the connector object only (never its topics, offsets or external systems)",
    lostResponse: "absent: the delete was applied",
    site: CONNECT_SITES.delete,
    blockers: [
      "BLOCKED_CONNECTOR_DRIFT",
      "BLOCKED_CONNECT_CLUSTER_CHANGED",
      // found absent by the run that never deleted it
      "BLOCKED_UNOWNED_CONNECTOR",
    ],
  },
  {
    step: "release_connector",
    per: "connector",
    requires:
      "an explicit removal declaration of an owned connector that is already absent (no Connect call)",
    next: "nothing on Connect: the commit drops its ownership record",
    lostResponse: null,
    site: null,
    blockers: ["BLOCKED_UNOWNED_CONNECTOR", "BLOCKED_CONNECT_CLUSTER_CHANGED"],
  },
  {
    step: "commit",
    per: "operation",
    requires: "every action is done (observed in its desired state)",
    next:
      "commit the connector records to ownership (serial + 1) and clear the operation; a refused mutation commits what was done before it",
    lostResponse: null,
    site: site(
      "state.commit_connectors",
      "state",
      "commit the connector records to ownership (serial + 1) and clear control",
    ),
    blockers: [],
  },
  {
    step: "await_running",
    per: "connector",
    requires: "the commit is recorded",
    next:
      "wait (read-only, bounded) until each created or updated connector and its tasks report RUNNING",
    lostResponse: null,
    site: null,
    blockers: [],
  },
];

/**
 * The row of a step.
 *
 * @example
 * ```ts
 * import { connectorRow } from "./connector.ts";
 * console.log(connectorRow("delete_connector").site?.name); // connect.delete_connector
 * ```
 */
export function connectorRow(step: ConnectorStep): ConnectorRow {
  return rowOf("connector", CONNECTOR_TABLE, step);
}

/**
 * The site a step crosses (a step without one is a programming error).
 *
 * @example
 * ```ts
 * import { connectorSite } from "./connector.ts";
 * console.log(connectorSite("intent").name); // journal.connector_intent
 * ```
 */
export function connectorSite(
  step: Exclude<ConnectorStep, "release_connector" | "await_running">,
): FaultSite {
  return siteOf("connector", CONNECTOR_TABLE, step);
}

/**
 * The fault sites of the connector journey, in table order.
 *
 * @example
 * ```ts
 * import { connectorSites } from "./connector.ts";
 * console.log(connectorSites().map((s) => s.name));
 * ```
 */
export function connectorSites(): FaultSite[] {
  return tableSites(CONNECTOR_TABLE);
}

/** The operation kind of the connector journey in the journal (envelope version 3). */
export const CONNECTOR_OPERATION_KIND = "connector_change";

/**
 * The ID of the connector operation of a plan: derived from the plan file's sha256, because a
 * plan starts at most one connector operation (once it began, the plan is stale for any other).
 * So the audit's `ownership_committed` event of that ID proves, after a lost acknowledgement,
 * that this plan's connector changes were committed.
 *
 * @example
 * ```ts
 * import { connectorOperationId } from "./connector.ts";
 * connectorOperationId("ab".repeat(32)); // a UUID (version 8: derived, not random)
 * ```
 */
export function connectorOperationId(planSha256: string): string {
  return derivedOperationId("sluice.connector-operation", planSha256);
}

/**
 * The connector journey, as the registry reads it: `apply --plan` of a plan with connector
 * changes crosses its sites (continued by the same `apply --plan` again, after the plan's
 * creates); its changes mix with a create's.
 *
 * @example
 * ```ts
 * import { CONNECTOR_JOURNEY } from "./connector.ts";
 * console.log(CONNECTOR_JOURNEY.actions.includes("remove_connector")); // true
 * ```
 */
export const CONNECTOR_JOURNEY: OperationJourney<"connector"> = {
  name: "connector",
  kind: CONNECTOR_OPERATION_KIND,
  actions: ["create_connector", "update_connector", "remove_connector", "release_connector"],
  crossings: [{
    by: "connector",
    command:
      "sluice apply --plan FILE (a plan with connector changes; the same command continues it)",
    sites: connectorSites,
    transitions: ["commit_ownership", "begin"],
    locks: true,
  }],
  alone: [],
};
