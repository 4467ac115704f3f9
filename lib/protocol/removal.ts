/**
 * The runner-removal journey's table, as data, in the same shape as the create and connector
 * journeys' ({@link "./create.ts"}, {@link "./connector.ts"}): each row is one durable step of
 * applying a plan's `remove_runner` actions (`lifecycle.runner_removals`) — what a fresh, exact
 * observation must show before it, the one mutation or write it makes, the fault site that
 * mutation crosses, what a fresh observation proves after a lost response, and the codes it can
 * give. This order is the only one: `decideRemoval` (`lib/runtime/removal_next.ts`) walks these
 * rows (the runner rows once per removed runner, in plan order) on fresh readings to find the
 * one step to take — the step `lib/runtime/removal.ts` crosses at the row's site and the row
 * `state runner-status` reports; the fault inventory lists the sites with the `removal` journey.
 * A row whose `site` is null is the one that may wait (read-only); a row gives only the codes
 * its `blockers` declare.
 *
 * A removal stops the exact generation the plan bound (container ID, generation, mounted plan,
 * artifact checksum, application ID), checks the clean-close evidence a replacement's
 * `old_closed` row requires (exit 0 or 143, no OOM kill, a CLOSED status file when there is
 * one, the group without members), removes that container only — never its volume — and
 * commits ownership without the runner. Its state volume, its consumer group with its committed
 * offsets and its topics stay. A process killed anywhere leaves the operation pending; `apply
 * --plan` with the same plan file continues it from exact observation.
 *
 * @example
 * ```ts
 * import { REMOVAL_TABLE } from "./removal.ts";
 * for (const row of REMOVAL_TABLE) console.log(row.step, row.site?.name ?? "(read-only)");
 * ```
 * @module
 */
import type { FaultSite } from "../fault/site.ts";
import { derivedOperationId, rowOf, siteMaker, siteOf, tableSites } from "./table.ts";
import { CLEAN_CLOSE_BLOCKERS } from "./replacement.ts";
import type { OperationJourney, PendingControl, RunnerBinding } from "./descriptor.ts";

const site = siteMaker(import.meta.url);

/** The steps of the removal journey. */
export type RemovalStep = "intent" | "term_runner" | "await_closed" | "remove_container" | "commit";

/** One row of the removal table. */
export interface RemovalRow {
  readonly step: RemovalStep;
  /** Once for the operation, or once per removed runner. */
  readonly per: "operation" | "runner";
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

/** The codes an exact observation of a removed runner's generation can give. */
const OBSERVED = ["BLOCKED_REMOVAL_GENERATION_CHANGED"] as const;

/** The removal journey, in order. */
export const REMOVAL_TABLE: readonly RemovalRow[] = [
  {
    step: "intent",
    per: "operation",
    requires:
      "the plan is current (or is this pending operation's own plan), no other operation is pending, and every runner to remove is exactly the generation the plan bound, running, the only container of its application ID",
    next:
      "record the removal operation's intent: each bound generation and the owned record it releases",
    lostResponse: null,
    site: site("journal.removal_intent", "journal", "record the runner removal's intent"),
    blockers: [
      "BLOCKED_OPERATION_PENDING",
      "BLOCKED_STATE_CHANGED",
      "BLOCKED_RUNNER_NOT_RUNNING",
      ...OBSERVED,
    ],
  },
  {
    step: "term_runner",
    per: "runner",
    requires: "the intent is recorded; the bound container is running",
    next: "send it SIGTERM (never SIGKILL): the runner commits and closes",
    lostResponse: "the bound container stopped or stopping: the TERM was delivered",
    site: site(
      "docker.term_removed_runner",
      "provider",
      "send SIGTERM to the runner being removed",
    ),
    blockers: [...OBSERVED],
  },
  {
    step: "await_closed",
    per: "runner",
    requires: "the TERM was sent (or the bound container is already stopped)",
    next:
      "wait (read-only, bounded) for the clean-close evidence: exited with 0 or 143, no OOM kill and no Docker error, a fresh CLOSED status file of its exact generation and plan, the consumer group without members",
    lostResponse: null,
    site: null,
    blockers: [
      ...CLEAN_CLOSE_BLOCKERS,
      "UNKNOWN_OUTCOME_TIMEOUT",
      ...OBSERVED,
    ],
  },
  {
    step: "remove_container",
    per: "runner",
    requires: "the bound container is stopped with clean-close evidence",
    next: "remove that exact container, without force and without its volume",
    lostResponse: "the bound container is absent (and no other carries the application ID)",
    site: site(
      "docker.remove_removed_runner",
      "provider",
      "remove the stopped container of the runner being removed (never its volume)",
    ),
    blockers: [...OBSERVED],
  },
  {
    step: "commit",
    per: "operation",
    requires: "every bound container is absent",
    next:
      "commit ownership without the removed runners (serial + 1) and clear the operation; the volume, the group's offsets and the topics stay (topics stay owned)",
    lostResponse: null,
    site: site(
      "state.commit_removal",
      "state",
      "commit ownership without the removed runners (serial + 1) and clear control",
    ),
    blockers: ["BLOCKED_STATE_CHANGED"],
  },
];

/**
 * The row of a step.
 *
 * @example
 * ```ts
 * import { removalRow } from "./removal.ts";
 * console.log(removalRow("term_runner").site?.name); // docker.term_removed_runner
 * ```
 */
export function removalRow(step: RemovalStep): RemovalRow {
  return rowOf("removal", REMOVAL_TABLE, step);
}

/**
 * The site a step crosses (a step without one is a programming error).
 *
 * @example
 * ```ts
 * import { removalSite } from "./removal.ts";
 * console.log(removalSite("intent").name); // journal.removal_intent
 * ```
 */
export function removalSite(step: Exclude<RemovalStep, "await_closed">): FaultSite {
  return siteOf("removal", REMOVAL_TABLE, step);
}

/**
 * The fault sites of the removal journey, in table order.
 *
 * @example
 * ```ts
 * import { removalSites } from "./removal.ts";
 * console.log(removalSites().map((s) => s.name));
 * ```
 */
export function removalSites(): FaultSite[] {
  return tableSites(REMOVAL_TABLE);
}

/** The operation kind of the removal journey in the journal (envelope version 3). */
export const REMOVAL_OPERATION_KIND = "runner_removal";

/**
 * The binding of one application ID in a pending operation of `kind` that takes runners down
 * the removal's way (its intent records each runner as a removal's does: a runner removal, by
 * default, or a destroy); null for any other operation or runner. While such an operation is
 * pending, the day-two commands (`restart`, `skip-record`, `acknowledge-drift`) act on its
 * runners only — the state store refuses their audit events for any other
 * (`BLOCKED_OPERATION_PENDING`).
 *
 * @example
 * ```ts
 * import { removalBinding } from "./removal.ts";
 * removalBinding({ kind: "create", intent: { details: {} } }, "app"); // null
 * removalBinding({ kind: "create", intent: { details: {} } }, "app", "create"); // null (no runner)
 * ```
 */
export function removalBinding(
  control: PendingControl,
  applicationId: string,
  kind: string = REMOVAL_OPERATION_KIND,
): RunnerBinding | null {
  if (control.kind !== kind) return null;
  const actions = control.intent.details.actions;
  if (!Array.isArray(actions)) return null;
  for (const x of actions as unknown[]) {
    if (typeof x !== "object" || x === null) continue;
    const r = x as Record<string, unknown>;
    if (
      r.application_id === applicationId && typeof r.model === "string" &&
      typeof r.container_id === "string"
    ) return { model: r.model, application_id: applicationId, container_id: r.container_id };
  }
  return null;
}

/**
 * The ID of the removal operation of a plan: derived from the plan file's sha256 (a plan starts
 * at most one removal operation), so the audit's `ownership_committed` event of that ID proves,
 * after a lost acknowledgement, that this plan's removals were committed.
 *
 * @example
 * ```ts
 * import { removalOperationId } from "./removal.ts";
 * removalOperationId("ab".repeat(32)); // a UUID (version 8: derived, not random)
 * ```
 */
export function removalOperationId(planSha256: string): string {
  return derivedOperationId("sluice.runner-removal", planSha256);
}

/**
 * The runner-removal journey, as the registry reads it: `apply --plan` of a plan with runner
 * removals crosses its sites (continued by the same `apply --plan` again); a removal is its own
 * operation, never mixed with another change (its recovery never depends on creates or
 * connector changes); while it is pending, the day-two commands act on its own runners only (a
 * killed runner brought back so that the removal can stop it cleanly).
 *
 * @example
 * ```ts
 * import { REMOVAL_JOURNEY } from "./removal.ts";
 * console.log(REMOVAL_JOURNEY.kind, REMOVAL_JOURNEY.actions); // runner_removal ["remove_runner"]
 * ```
 */
export const REMOVAL_JOURNEY: OperationJourney<"removal"> = {
  name: "removal",
  kind: REMOVAL_OPERATION_KIND,
  actions: ["remove_runner"],
  crossings: [{
    by: "removal",
    command:
      "sluice apply --plan FILE (a plan with runner removals; the same command continues it)",
    sites: removalSites,
    transitions: ["commit_ownership", "begin"],
    locks: true,
  }],
  alone: [{
    code: "BLOCKED_REMOVAL_MIXED",
    against: "rest",
    message: ({ own, others }) =>
      `a runner removal (${
        own.map((x) => x.model).join(", ")
      }) is applied on its own, and this plan has ${others.length} other change${
        others.length === 1 ? "" : "s"
      }: keep the other changes out of sluice.yaml for now, plan and apply the removal, then plan the rest`,
    evidence: ({ own }) => ({ removals: own.map((x) => x.model) }),
  }],
  dayTwoBinding: (control, applicationId) => removalBinding(control, applicationId),
};
