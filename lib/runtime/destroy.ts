/**
 * Apply a `plan --destroy` file's `destroy` action: the rows of the destroy table
 * (`lib/protocol/destroy.ts`), in order, each crossing its row's fault site. It takes down every
 * runner the plan bound the runner removal's way: the one removal entry (`removal_entry.ts`) with
 * the destroy's flavour ({@link DESTROY_FLAVOUR}: its kind, sites, words and codes, and its
 * table's run — one decision over the whole table, `decideDestroy` in `destroy_next.ts`). Under
 * the deployment lock it re-verifies that each runner is exactly the generation the plan bound
 * and running — and that the plan binds every runner the project owns — and that each connector
 * it deletes is still the one sluice created, records the intent, then deletes each owned
 * connector (`destroy_connectors.ts`), per runner sends TERM, waits for the clean-close
 * evidence, removes that exact container — never its volume — and finally commits ownership
 * without any runner (serial + 1), each released
 * runner's volume and consumer group recorded as retained. The volumes, the groups with their
 * committed offsets and the owned topics stay, so that planning the unchanged project again is
 * a create that resumes from them.
 *
 * **Deleting data** (`plan --destroy --delete-data`, the plan's `deletes`): once every bound
 * container is absent and before the commit, the destroy's data rows (`destroy_data.ts`) delete
 * the groups, then the volumes, then the owned topics the plan lists, one at a time, each
 * crossing its own site;
 * the commit then records none of them (no retained runner, none of the deleted topics), so that
 * the project planned again is a create from nothing.
 *
 * **Continuation.** A process killed anywhere leaves the operation pending; `apply --plan` with
 * the same plan file (or `state resume` with it) continues it from exact reads: each runner is
 * decided by a fresh observation (running: TERM again; stopped: the clean-close evidence, then
 * remove; absent: removed); anything else blocks (`BLOCKED_REMOVAL_GENERATION_CHANGED`). A
 * commit whose acknowledgement was lost is recognized by the audit's `ownership_committed`
 * event of the plan's operation ID.
 *
 * @example
 * ```ts
 * import { destroyActionOf } from "./destroy.ts";
 * import type { Plan } from "../plan/plan.ts";
 * const isDestroy = (p: Plan) => destroyActionOf(p) !== null;
 * ```
 * @module
 */
import type { Plan } from "../plan/plan.ts";
import type { DestroyAction, RemoveRunnerAction } from "../plan/removals.ts";
import { DESTROY_OPERATION_KIND, destroyOperationId, destroySite } from "../protocol/destroy.ts";
import type { StateSnapshot } from "../state/store.ts";
import {
  ownedConnectors,
  type OwnershipDocument,
  withConnectors,
  withRetained,
} from "../state/ownership.ts";
import { blocker } from "../validation/blocker.ts";
import { dataKey, deleteDestroyItem } from "./destroy_data.ts";
import {
  deleteDestroyConnector,
  type DestroyConnectorContext,
  verifyDestroyConnectors,
} from "./destroy_connectors.ts";
import {
  decideDestroy,
  type DestroyGo,
  type DestroyReadings,
  readDestroy,
  reportedDestroy,
} from "./destroy_next.ts";
import { complete, type NextStep } from "./next_step.ts";
import {
  type RemovalContext,
  removalEntry,
  type RemovalFlavour,
  type RemovalResult,
  type TableRun,
  type TableRunOf,
} from "./removal_entry.ts";

/**
 * What the destroy journey takes from the apply's context: the removal's, and the Connect ports
 * its connector row deletes through (needed only when the project owns connectors).
 */
export type DestroyContext = RemovalContext & Omit<DestroyConnectorContext, "store">;

/**
 * The plan's destroy action, or null when it carries none.
 *
 * @example
 * ```ts
 * import { destroyActionOf } from "./destroy.ts";
 * import type { Plan } from "../plan/plan.ts";
 * const runners = (p: Plan) => destroyActionOf(p)?.runners.length ?? 0;
 * ```
 */
export function destroyActionOf(plan: Plan): DestroyAction | null {
  return plan.actions.find((a): a is DestroyAction => a.type === "destroy") ?? null;
}

function runnersOf(plan: Plan): RemoveRunnerAction[] {
  return destroyActionOf(plan)?.runners ?? [];
}

/**
 * One run of the destroy table after its intent: fresh readings of the whole table
 * ({@link readDestroy}), its one decision ({@link decideDestroy}), and the crossing of its own
 * rows — each connector deleted, each resource a data row deletes — with what this run took
 * care of remembered (not read again) and each boundary's event.
 */
function destroyRun(
  { ctx, events, plan, start }: TableRunOf,
): TableRun<DestroyReadings, DestroyGo> {
  const connectors = new Set<string>();
  const data = new Set<string>();
  const boundary = (step: DestroyGo["kind"], message: string) =>
    events.boundary({ kind: "action", action: "remove", boundary: step, message });
  return {
    read: async (runners) => {
      const readings = await readDestroy(ctx, plan, start, { runners, connectors, data });
      for (const c of readings.connectors) {
        if (c.left || c.position.kind === "blocked") continue;
        // gone (a lost delete response, or a release of one already gone): done
        connectors.add(c.action.name);
        boundary("delete_connector", `connector ${c.action.name} is absent`);
      }
      return readings;
    },
    decide: decideDestroy,
    cross: async (step) => {
      if (step.kind === "delete_connector") {
        await deleteDestroyConnector(ctx, step.action);
        connectors.add(step.action.name);
        boundary(step.kind, `connector ${step.action.name} deleted`);
        return;
      }
      const message = await deleteDestroyItem(ctx, step.item);
      data.add(dataKey(step.item));
      boundary(step.kind, message);
    },
  };
}

/**
 * The destroy's flavour of the removal entry: its kind, table and sites, its events' journey
 * (`destroy`), its words, its not-continuable code (`BLOCKED_DESTROY_NOT_CONTINUABLE`), and what
 * is its own — it binds and releases every runner the project owns.
 *
 * @example
 * ```ts
 * import { DESTROY_FLAVOUR } from "./destroy.ts";
 * console.log(DESTROY_FLAVOUR.kind, DESTROY_FLAVOUR.releasesAll); // destroy true
 * ```
 */
export const DESTROY_FLAVOUR: RemovalFlavour<DestroyReadings, DestroyGo> = {
  name: "destroy",
  short: "destroy",
  journey: "destroy",
  kind: DESTROY_OPERATION_KIND,
  site: destroySite,
  operationId: destroyOperationId,
  carries: (plan) => destroyActionOf(plan) !== null,
  runners: runnersOf,
  // the destroy releases what is owned now, exactly as the plan bound it
  releasesAll: true,
  plan: { name: "the destroy plan", again: "plan the destroy again" },
  unbound: (a, s) =>
    blocker(
      s.kind === "absent" ? "BLOCKED_REMOVAL_GENERATION_CHANGED" : "BLOCKED_RUNNER_NOT_RUNNING",
      `model ${a.model}: container ${a.container.id.slice(0, 12)} (${a.container.name}) is ${
        s.kind === "absent" ? "gone" : `${s.container.status} (exit ${s.container.exitCode})`
      } since the destroy was planned; a destroy stops a running runner and checks its clean close. Plan the destroy again`,
      { model: a.model, evidence: { bound: a.container } },
    ),
  notContinuable: {
    code: "BLOCKED_DESTROY_NOT_CONTINUABLE",
    message: (id) =>
      `destroy ${id} cannot be continued with this plan: its intent or the plan carries no destroy; continue it with its own plan file, or abandon it (sluice state abandon --operation-id ${id} --reason TEXT)`,
  },
  // every released runner's volume and group is kept and recorded, so that the project planned
  // again resumes from exactly them (its create adopts the kept volume and keeps the offsets)
  released: () => "every runner released; volumes, group offsets and topics kept",
  // its whole table — connector row, runner rows, data rows, commit — as one decision
  run: destroyRun,
  committing: (next, plan) => withoutDeleted(next, destroyActionOf(plan)),
};

/**
 * The ownership a destroy commits: no record of a connector it took down; after deleting data,
 * no retained group or deleted topic.
 */
function withoutDeleted(prior: OwnershipDocument, action: DestroyAction | null): OwnershipDocument {
  const gone = new Set((action?.connectors ?? []).map((c) => c.name));
  const next = gone.size === 0
    ? prior
    : withConnectors(prior, ownedConnectors(prior).filter((c) => !gone.has(c.name)));
  const d = action?.deletes;
  if (!d) return next;
  const groups = new Set(d.consumer_groups);
  const topics = new Set(d.topics.map((t) => t.name));
  return withRetained(
    { ...next, topics: next.topics.filter((t) => !topics.has(t.name)) },
    (next.retained ?? []).filter((r) => !groups.has(r.application_id)),
  );
}

const DESTROY = removalEntry(DESTROY_FLAVOUR);

/**
 * Start the destroy of a plan (see module docs). The caller holds the lock, found no pending
 * operation and verified that the plan is current.
 *
 * @example
 * ```ts
 * // const r = await startDestroy(ctx, plan, planSha256, snap);
 * ```
 */
export async function startDestroy(
  ctx: DestroyContext,
  plan: Plan,
  planSha256: string,
  start: StateSnapshot,
): Promise<RemovalResult> {
  // every connector it deletes is checked before the intent: one no longer sluice's refuses the
  // destroy with nothing written (as the connector journey checks before its own intent)
  await verifyDestroyConnectors(
    ctx,
    plan,
    destroyActionOf(plan)?.connectors ?? [],
    start.ownership?.document ?? null,
  );
  return await DESTROY.start(ctx, plan, planSha256, start);
}

/**
 * Continue a pending destroy with its own plan (`apply --plan FILE` again), from exact reads.
 *
 * @example
 * ```ts
 * // if (snap.control?.opened.kind === "destroy") await continueDestroy(ctx, plan, sha, snap);
 * ```
 */
export function continueDestroy(
  ctx: DestroyContext,
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): Promise<RemovalResult> {
  return DESTROY.continue(ctx, plan, planSha256, snap);
}

/**
 * `apply --plan` of a destroy plan whose operation was committed already (its acknowledgement
 * lost): the last commit of the audit is the plan's operation and the state is still its result;
 * every bound container must be absent. Null when that is not the case.
 *
 * @example
 * ```ts
 * // const done = await verifyCommittedDestroy(ctx, plan, planSha256, snap);
 * ```
 */
export function verifyCommittedDestroy(
  ctx: DestroyContext,
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): Promise<RemovalResult | null> {
  return DESTROY.committed(ctx, plan, planSha256, snap);
}

/**
 * The next row of a pending destroy (`state runner-status`), read-only: the continuation's own
 * decision ({@link decideDestroy} over the destroy table) on fresh reads.
 *
 * @example
 * ```ts
 * // (await destroyNext(ctx, plan, snap)).step → "delete_connector" | "term_runner" | … | "blocked"
 * ```
 */
export async function destroyNext(
  ctx: DestroyContext,
  plan: Plan,
  snap: StateSnapshot,
): Promise<NextStep> {
  if (destroyActionOf(plan) === null) return complete("the plan carries no destroy");
  return reportedDestroy(decideDestroy(await readDestroy(ctx, plan, snap)));
}
