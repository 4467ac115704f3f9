/**
 * The destroy journey's table, as data, in the shape of the runner removal's
 * ({@link "./removal.ts"}): each row is one durable step of applying a plan's `destroy` action
 * (`sluice plan --destroy`) — what a fresh, exact observation must show before it, the one
 * mutation or write it makes, the fault site it crosses, what a fresh observation proves after a
 * lost response, and the codes it can give. {@link DESTROY_TABLE} is the one order: the destroy's
 * decision (`decideDestroy`, `lib/runtime/destroy_next.ts`) walks it on fresh readings (the
 * runner rows once per owned runner, in plan order) — the step `lib/runtime/destroy.ts` crosses
 * and the row `state runner-status` reports.
 *
 * A destroy first deletes every Kafka Connect connector the project owns (the connector row,
 * {@link DESTROY_CONNECTOR_TABLE}: each only while it is still the one sluice created), then takes
 * down every runner the project owns in the environment, the last one included:
 * per runner the runner removal's own steps (its rows, reused here with this journey's sites):
 * TERM, the clean-close evidence, remove that exact container — never its volume. It then
 * commits ownership without any runner. By default it keeps what a removal keeps: each runner's
 * state volume and consumer group with its committed offsets (recorded as retained, so that
 * planning the unchanged project again is a create that resumes from them) and the owned topics
 * with their records.
 *
 * Deleting them is a separate, explicit choice of the plan (`plan --destroy --delete-data`): then,
 * after every runner is down and before the commit, the data rows delete what this project's
 * plans created and its state records — the consumer groups (with their offsets), then the
 * state volumes (only while they carry the labels sluice wrote and nothing mounts them), then
 * the owned topics (only the topic of the recorded ID) — each deletion crossing its row's site,
 * and the commit records none of them. A topic sluice did not create (an external source) is
 * never deleted: it is not owned. Each deletion is idempotent (already gone is done), so a
 * process killed between a deletion and the next boundary continues from a fresh read. A process
 * killed anywhere leaves the operation pending; `apply --plan` with the same plan file (or
 * `state resume` with it) continues it from exact observation.
 *
 * @example
 * ```ts
 * import { DESTROY_TABLE } from "./destroy.ts";
 * for (const row of DESTROY_TABLE) console.log(row.step, row.site?.name ?? "(read-only)");
 * ```
 * @module
 */
import type { FaultSite } from "../fault/site.ts";
import { derivedOperationId, rowOf, siteMaker, siteOf, tableSites } from "./table.ts";
import type { OperationJourney } from "./descriptor.ts";
import { removalBinding, type RemovalRow, removalRow } from "./removal.ts";

const site = siteMaker(import.meta.url);

/** The data rows' steps: what `--delete-data` deletes, in this order, once every runner is down. */
export type DestroyDataStep = "delete_group" | "remove_volume" | "delete_topic";

/** The connector row's step: each owned connector deleted, first after the intent. */
export type DestroyConnectorStep = "delete_connector";

/** The steps of the destroy journey: the connector step, the removal's runner steps, the data steps, the commit. */
export type DestroyStep = RemovalRow["step"] | DestroyDataStep | DestroyConnectorStep;

/** One row of the destroy table: a removal row's shape, with the destroy's own steps too. */
export type DestroyRow = Omit<RemovalRow, "step"> & { readonly step: DestroyStep };

/** One data row (`--delete-data`): a removal row's shape, run once per operation. */
export type DestroyDataRow = Omit<RemovalRow, "step"> & { readonly step: DestroyDataStep };

/** The codes a connector's exact read gives when it is no longer the one sluice created. */
const CONNECTOR_CODES = [
  "BLOCKED_CONNECTOR_DRIFT",
  "BLOCKED_CONNECT_CLUSTER_CHANGED",
  "BLOCKED_UNOWNED_CONNECTOR",
] as const;

/** The codes the data rows can give. */
const DATA_BLOCKERS = {
  delete_group: ["BLOCKED_GROUP_ACTIVE"],
  remove_volume: ["BLOCKED_VOLUME_IN_USE", "BLOCKED_VOLUME_INSTANCE_CHANGED"],
  delete_topic: ["BLOCKED_TOPIC_REPLACED"],
} as const;

/** The connector row: a removal row's shape, run once per operation (each connector in plan order). */
export type DestroyConnectorRow = Omit<RemovalRow, "step"> & {
  readonly step: DestroyConnectorStep;
};

/**
 * The connector row of a destroy of a project that owns Kafka Connect connectors: right after the
 * intent, before any runner is touched (a sink may read a topic the destroy deletes), each owned
 * connector the plan binds is deleted through the connector journey's own checks
 * (`actionPosition`): only while it carries the owned fingerprint on the owned cluster; absent is
 * done (idempotent). The commit drops their ownership records.
 */
export const DESTROY_CONNECTOR_TABLE: readonly DestroyConnectorRow[] = [
  {
    step: "delete_connector",
    per: "operation",
    requires:
      "the intent is recorded; each connector the plan deletes is on the owned Connect cluster (same identity) and carries the owned fingerprint, or is absent",
    next:
      "delete each connector the plan binds (the connector object only: never its topics, offsets or external systems)",
    lostResponse: "the connector is absent: it was deleted",
    site: site(
      "connect.delete_destroyed_connector",
      "provider",
      "delete one owned connector a destroy takes down (DELETE /connectors/{name})",
    ),
    blockers: [...CONNECTOR_CODES],
  },
];

/**
 * The destroy journey's intent, runner rows and commit — the removal's rows, each with this
 * journey's site (the removal's guards decide them); {@link DESTROY_TABLE} places them.
 */
const REMOVAL_ROWS: readonly RemovalRow[] = [
  {
    ...removalRow("intent"),
    requires:
      "the plan is current (or is this pending operation's own plan), no other operation is pending, every owned connector is still the one sluice created on the owned cluster (or absent), and every owned runner is exactly the generation the plan bound, running, the only container of its application ID",
    next:
      "record the destroy operation's intent: each bound generation and the owned records it releases",
    site: site("journal.destroy_intent", "journal", "record the destroy's intent"),
    blockers: [
      ...removalRow("intent").blockers,
      // an owned connector no longer the one sluice created (checked before the intent)
      ...CONNECTOR_CODES,
    ],
  },
  {
    ...removalRow("term_runner"),
    site: site(
      "docker.term_destroyed_runner",
      "provider",
      "send SIGTERM to a runner the destroy takes down",
    ),
  },
  removalRow("await_closed"),
  {
    ...removalRow("remove_container"),
    site: site(
      "docker.remove_destroyed_runner",
      "provider",
      "remove the stopped container of a runner the destroy takes down (never its volume)",
    ),
  },
  {
    ...removalRow("commit"),
    next:
      "commit ownership without any runner (serial + 1) and clear the operation: without --delete-data each runner's volume and group recorded as retained and the topics kept owned; with it, none of what the data rows deleted is recorded",
    site: site(
      "state.commit_destroy",
      "state",
      "commit ownership without any runner (serial + 1) and clear control",
    ),
  },
];

/**
 * The data rows of a destroy that deletes data (`plan --destroy --delete-data`), in order: after
 * every bound container is absent, before the commit. Each deletes what the plan lists (what this
 * project's plans created and its state records), one resource at a time, each deletion crossing
 * the row's site; each deletion is idempotent (already gone is done).
 */
export const DESTROY_DATA_TABLE: readonly DestroyDataRow[] = [
  {
    step: "delete_group",
    per: "operation",
    requires:
      "the plan deletes data (--delete-data) and every bound container is absent; each consumer group it deletes has no member",
    next:
      "delete each consumer group the plan deletes (the application IDs of the runners taken down and of those removed before), with its committed offsets",
    lostResponse: "the group is unknown to the cluster (Dead, no offsets): it was deleted",
    site: site(
      "kafka.delete_destroyed_group",
      "provider",
      "delete a consumer group (with its offsets) of a destroy that deletes data",
    ),
    blockers: [...DATA_BLOCKERS.delete_group],
  },
  {
    step: "remove_volume",
    per: "operation",
    requires:
      "the groups are deleted; each state volume the plan deletes carries the labels sluice wrote on it (project, application ID, the recorded instance) and no container mounts it",
    next: "remove each state volume the plan deletes",
    lostResponse: "the volume is absent: it was removed",
    site: site(
      "docker.remove_destroyed_volume",
      "provider",
      "remove a state volume sluice created, for a destroy that deletes data",
    ),
    blockers: [...DATA_BLOCKERS.remove_volume],
  },
  {
    step: "delete_topic",
    per: "operation",
    requires:
      "the volumes are removed; each topic the plan deletes is owned, and the topic of that name has the ID its create recorded",
    next:
      "delete each owned topic the plan deletes, with its records (never a topic the project does not own)",
    lostResponse: "the topic is absent: it was deleted",
    site: site(
      "kafka.delete_destroyed_topic",
      "provider",
      "delete a topic sluice created, for a destroy that deletes data",
    ),
    blockers: [...DATA_BLOCKERS.delete_topic],
  },
];

/** The removal's row of a step, as this journey words it and with its site. */
function removalRowOf(step: RemovalRow["step"]): RemovalRow {
  return rowOf("destroy", REMOVAL_ROWS, step);
}

/**
 * The destroy journey, in order — its one table: the intent; the connector row
 * ({@link DESTROY_CONNECTOR_TABLE}); the removal's runner rows, once per owned runner in plan
 * order; the data rows of a destroy that deletes data ({@link DESTROY_DATA_TABLE}, nothing to do
 * without `--delete-data`); the commit. The destroy's decision walks exactly these rows.
 */
export const DESTROY_TABLE: readonly DestroyRow[] = [
  removalRowOf("intent"),
  ...DESTROY_CONNECTOR_TABLE,
  removalRowOf("term_runner"),
  removalRowOf("await_closed"),
  removalRowOf("remove_container"),
  ...DESTROY_DATA_TABLE,
  removalRowOf("commit"),
];

/**
 * Whether a step is one of the data rows (`--delete-data`).
 *
 * @example
 * ```ts
 * import { isDestroyDataStep } from "./destroy.ts";
 * console.log(isDestroyDataStep("delete_topic"), isDestroyDataStep("commit")); // true false
 * ```
 */
export function isDestroyDataStep(step: DestroyStep): step is DestroyDataStep {
  return Object.hasOwn(DATA_BLOCKERS, step);
}

/**
 * The row of a data step.
 *
 * @example
 * ```ts
 * import { destroyDataRow } from "./destroy.ts";
 * console.log(destroyDataRow("delete_topic").site?.name); // kafka.delete_destroyed_topic
 * ```
 */
export function destroyDataRow(step: DestroyDataStep): DestroyDataRow {
  return rowOf("destroy", DESTROY_DATA_TABLE, step);
}

/**
 * The row of a step.
 *
 * @example
 * ```ts
 * import { destroyRow } from "./destroy.ts";
 * console.log(destroyRow("term_runner").site?.name); // docker.term_destroyed_runner
 * ```
 */
export function destroyRow(step: DestroyStep): DestroyRow {
  return rowOf("destroy", DESTROY_TABLE, step);
}

/**
 * The site a step crosses (a step without one is a programming error).
 *
 * @example
 * ```ts
 * import { destroySite } from "./destroy.ts";
 * console.log(destroySite("intent").name); // journal.destroy_intent
 * ```
 */
export function destroySite(step: Exclude<DestroyStep, "await_closed">): FaultSite {
  return siteOf("destroy", DESTROY_TABLE, step);
}

/**
 * The connector row.
 *
 * @example
 * ```ts
 * import { destroyConnectorRow } from "./destroy.ts";
 * console.log(destroyConnectorRow().site?.name); // connect.delete_destroyed_connector
 * ```
 */
export function destroyConnectorRow(): DestroyConnectorRow {
  return rowOf("destroy", DESTROY_CONNECTOR_TABLE, "delete_connector");
}

/**
 * The fault sites of the destroy journey, in the order it crosses them (table order).
 *
 * @example
 * ```ts
 * import { destroySites } from "./destroy.ts";
 * console.log(destroySites().map((s) => s.name));
 * ```
 */
export function destroySites(): FaultSite[] {
  return tableSites(DESTROY_TABLE);
}

/** The operation kind of the destroy journey in the journal. */
export const DESTROY_OPERATION_KIND = "destroy";

/**
 * The ID of the destroy operation of a plan, derived from the plan file's sha256 (a plan starts
 * at most one): the audit's `ownership_committed` event of that ID proves, after a lost
 * acknowledgement, that this plan's destroy was committed.
 *
 * @example
 * ```ts
 * import { destroyOperationId } from "./destroy.ts";
 * destroyOperationId("ab".repeat(32)); // a UUID (version 8: derived, not random)
 * ```
 */
export function destroyOperationId(planSha256: string): string {
  return derivedOperationId("sluice.destroy", planSha256);
}

/**
 * The destroy journey, as the registry reads it: `apply --plan` of a `plan --destroy` file
 * crosses its sites (continued by the same `apply --plan` again, or `state resume` with it); a
 * destroy is its own operation, never mixed with another change, and a plan carries at most one.
 *
 * @example
 * ```ts
 * import { DESTROY_JOURNEY } from "./destroy.ts";
 * console.log(DESTROY_JOURNEY.kind, DESTROY_JOURNEY.actions); // destroy ["destroy"]
 * ```
 */
export const DESTROY_JOURNEY: OperationJourney<"destroy"> = {
  name: "destroy",
  kind: DESTROY_OPERATION_KIND,
  actions: ["destroy"],
  crossings: [{
    by: "destroy",
    command:
      "sluice apply --plan FILE (a plan made by 'sluice plan --destroy'; the same command continues it)",
    sites: destroySites,
    transitions: ["commit_ownership", "begin"],
    locks: true,
  }],
  alone: [{
    code: "BLOCKED_DESTROY_MIXED",
    against: "rest",
    ownOnce: true,
    message: ({ others }) =>
      `a destroy is applied on its own, and this plan has ${others.length} other change${
        others.length === 1 ? "" : "s"
      }: a destroy plan ('sluice plan --destroy') carries nothing but the destroy`,
  }],
  // its intent records each runner as a removal's does: read by the removal's reader
  dayTwoBinding: (control, applicationId) =>
    removalBinding(control, applicationId, DESTROY_OPERATION_KIND),
};
