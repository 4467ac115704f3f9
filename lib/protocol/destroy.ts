/**
 * The destroy journey's table, as data, in the shape of the runner removal's
 * ({@link "./removal.ts"}): each row is one durable step of applying a plan's `destroy` action
 * (`sluice plan --destroy`) — what a fresh, exact observation must show before it, the one
 * mutation or write it makes, the fault site it crosses, what a fresh observation proves after a
 * lost response, and the codes it can give. `lib/runtime/destroy.ts` performs the rows in this
 * order (the runner rows once per owned runner, in plan order).
 *
 * A destroy takes down every runner the project owns in the environment, the last one included:
 * per runner the runner removal's own steps (its rows, reused here with this journey's sites):
 * TERM, the clean-close evidence, remove that exact container — never its volume. It then
 * commits ownership without any runner. What it keeps is what a removal keeps: each runner's
 * state volume and consumer group with its committed offsets (recorded as retained, so that
 * planning the unchanged project again is a create that resumes from them) and the owned topics
 * with their records. Deleting those is never part of a destroy plan (`--delete-data` is
 * refused with `BLOCKED_DESTROY_DATA_DELETION`, docs/runbook.md). A process killed anywhere leaves
 * the operation pending; `apply --plan` with the same plan file (or `state resume` with it)
 * continues it from exact observation.
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
import type { OperationJourney, PendingControl } from "./descriptor.ts";
import {
  REMOVAL_OPERATION_KIND,
  type RemovalBinding,
  removalBinding,
  type RemovalRow,
  removalRow,
} from "./removal.ts";

const site = siteMaker(import.meta.url);

/** The steps of the destroy journey (the runner steps are the removal's). */
export type DestroyStep = RemovalRow["step"];

/** One row of the destroy table (a removal row's shape). */
export type DestroyRow = RemovalRow;

/** The destroy journey, in order: the removal's rows, each with this journey's site. */
export const DESTROY_TABLE: readonly DestroyRow[] = [
  {
    ...removalRow("intent"),
    requires:
      "the plan is current (or is this pending operation's own plan), no other operation is pending, and every owned runner is exactly the generation the plan bound, running, the only container of its application ID",
    next:
      "record the destroy operation's intent: each bound generation and the owned records it releases",
    site: site("journal.destroy_intent", "journal", "record the destroy's intent"),
    blockers: [...removalRow("intent").blockers],
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
      "commit ownership without any runner (serial + 1), each runner's volume and group recorded as retained, and clear the operation; the volumes, the groups' offsets and the topics stay (topics stay owned)",
    site: site(
      "state.commit_destroy",
      "state",
      "commit ownership without any runner (serial + 1) and clear control",
    ),
  },
];

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
 * The fault sites of the destroy journey, in table order.
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
 * Whether a pending operation is a destroy taking down the runner of `applicationId`: while it
 * is pending, the day-two commands act on its own runners only (`sluice restart` of a runner
 * that stopped without a clean close, so that the destroy can stop it cleanly).
 *
 * @example
 * ```ts
 * import { destroyTakesDown } from "./destroy.ts";
 * destroyTakesDown({ kind: "create", intent: { details: {} } }, "app"); // false
 * ```
 */
export function destroyTakesDown(control: PendingControl, applicationId: string): boolean {
  return destroyBinding(control, applicationId) !== null;
}

/**
 * The binding of one application ID in a pending destroy taking it down (its model and exact
 * container, as a removal's intent records them); null for any other operation or runner.
 *
 * @example
 * ```ts
 * import { destroyBinding } from "./destroy.ts";
 * destroyBinding({ kind: "create", intent: { details: {} } }, "app"); // null
 * ```
 */
export function destroyBinding(
  control: PendingControl,
  applicationId: string,
): RemovalBinding | null {
  if (control.kind !== DESTROY_OPERATION_KIND) return null;
  // the destroy's intent records each runner as a removal's does: read by the removal's reader
  return removalBinding({ ...control, kind: REMOVAL_OPERATION_KIND }, applicationId);
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
  admitsDayTwo: destroyTakesDown,
};
