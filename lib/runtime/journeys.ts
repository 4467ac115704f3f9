/**
 * The router of `apply`: one entry for every journey a format-5 plan file carries out. Under the
 * deployment lock it continues the pending operation this plan started (a create, a runner
 * removal or a connector change: each continued by its own journey from exact reads), recognizes
 * a plan an operation already committed (a verified no-op), re-verifies the plan's currency, and
 * starts the journey the plan's actions belong to: the create journey (`create.ts`), a runner
 * removal (`removal.ts`) or a connector change (`connectors.ts`). A format-6 plan (a predicate
 * replacement) is executed by the reviewed coordinator (`replacement/execute.ts`), never here.
 *
 * **Runner removals.** A plan that removes runners (`lifecycle.runner_removals`) changes
 * nothing else (`BLOCKED_REMOVAL_MIXED`); it is applied as its own operation (TERM, clean close,
 * remove the container, release ownership; the volume, the group's offsets and the topics stay)
 * and continued by `apply --plan` again.
 *
 * **Connectors.** A plan's connector changes are verified on fresh exact reads before anything is
 * written, and applied after the runtime creates as their own operation: sources and sinks need
 * the topics and runners just committed. A pending connector operation is continued by `apply
 * --plan` with the same plan file; a plan whose creates were committed but whose connector
 * operation never started continues with it.
 *
 * @example
 * ```ts
 * import { applyPlan } from "./journeys.ts";
 * // const result = await applyPlan(ctx, plan, sha256);
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { pendingCommands, type Plan } from "../plan/plan.ts";
import { currentContext, verifyPlanCurrent } from "../plan/plan_file.ts";
import { isConnectorAction, runtimeActions } from "../plan/connectors.ts";
import type { StateSnapshot } from "../state/store.ts";
import type { OpenedControl } from "../state/journal.ts";
import { commitOfPlan } from "../state/history.ts";
import { blockerError } from "../validation/blocker.ts";
import { CONNECTOR_OPERATION_KIND, connectorOperationId } from "../protocol/connector.ts";
import { REMOVAL_OPERATION_KIND } from "../protocol/removal.ts";
import { type Clock, SYSTEM_CLOCK } from "./deps.ts";
import type { ApplyResult, RuntimeContext } from "./apply_context.ts";
import { continueCreate, startCreate, verifyCommittedCreate } from "./create.ts";
import { pendingAfterLoss } from "./unknown_outcome.ts";
import {
  applyRemoval,
  continueRemoval,
  removalActions,
  type RemovalContext,
  type RemovalResult,
  verifyCommittedRemoval,
} from "./removal.ts";
import {
  applyConnectorChanges,
  type ConnectorApplyResult,
  type ConnectorJourneyContext,
  continueConnectorOperation,
  verifyCommittedConnectorPlan,
  verifyConnectorActions,
} from "./connectors.ts";

export type { ApplyResult, RuntimeContext } from "./apply_context.ts";

/** What the connector journey takes from the apply's context. */
function connectorContext(ctx: RuntimeContext, clock: Clock): ConnectorJourneyContext {
  return {
    store: ctx.store,
    actor: ctx.actor,
    sourceSha256: ctx.sourceSha256,
    connect: ctx.connect ?? (() => {
      throw new SluiceError("ENV_CONNECT_UNREACHABLE", "no Kafka Connect port was given");
    }),
    clock,
    onProgress: ctx.onProgress,
  };
}

/** The apply result of a removal operation. */
function removalApplied(plan: Plan, r: RemovalResult): ApplyResult {
  return {
    noop: r.already_applied,
    already_applied: r.already_applied,
    operation_id: r.operation_id,
    serial: r.serial,
    actions: r.already_applied ? [] : plan.actions,
    runners: [],
    removals: r,
  };
}

/** What a journey is routed with: the plan, the state it was loaded in, and each journey's context. */
interface Route {
  ctx: RuntimeContext;
  plan: Plan;
  planSha256: string;
  snap: StateSnapshot;
  removal: RemovalContext;
  connectors: ConnectorJourneyContext;
  /** A runtime result followed by the plan's connector changes (their own operation). */
  withConnectors(r: ApplyResult): Promise<ApplyResult>;
}

/** A journey the router hands plans to. */
interface RoutedJourney {
  /** The operation kind its intent records. */
  kind: string;
  /** Whether its pending operation is continued with this plan file (else the plan is blocked). */
  continues(pending: OpenedControl, planSha256: string): boolean;
  /** Continue its pending operation, from exact reads. */
  continue(r: Route): Promise<ApplyResult>;
  /** This plan, already committed by it (a lost acknowledgement): a verified no-op, or null. */
  committed(r: Route): Promise<ApplyResult | null>;
  /** Whether a plan that is current and not empty is this journey's to start. */
  claims(plan: Plan): boolean;
  /** Start it: the intent, then its table's rows. */
  start(r: Route): Promise<ApplyResult>;
}

/** The connector operation's result as the apply's (`already`: committed before, nothing done). */
function connectorsApplied(
  r: ConnectorApplyResult,
  actions: Plan["actions"],
  already = false,
): ApplyResult {
  return {
    noop: already,
    already_applied: already,
    operation_id: r.operation_id,
    serial: r.serial,
    actions,
    runners: [],
    connectors: r,
  };
}

/**
 * The journeys, in the order their claims and committed plans are tried: a runner removal is a
 * plan's only change, a plan of connector changes alone is the connector journey's, any other
 * is a create (followed by its connector changes).
 */
const JOURNEYS: readonly RoutedJourney[] = [
  {
    kind: REMOVAL_OPERATION_KIND,
    continues: () => true,
    continue: async (r) =>
      removalApplied(r.plan, await continueRemoval(r.removal, r.plan, r.planSha256, r.snap)),
    committed: async (r) => {
      const done = await verifyCommittedRemoval(r.removal, r.plan, r.planSha256, r.snap);
      return done ? removalApplied(r.plan, done) : null;
    },
    claims: (plan) => removalActions(plan).length > 0,
    start: async (r) =>
      removalApplied(r.plan, await applyRemoval(r.removal, r.plan, r.planSha256, r.snap)),
  },
  {
    kind: CONNECTOR_OPERATION_KIND,
    continues: () => true,
    continue: async (r) =>
      connectorsApplied(
        await continueConnectorOperation(r.connectors, r.plan, r.planSha256, r.snap),
        r.plan.actions.filter(isConnectorAction),
      ),
    committed: async (r) => {
      const done = await verifyCommittedConnectorPlan(r.connectors, r.plan, r.planSha256, r.snap);
      return done ? connectorsApplied(done, [], true) : null;
    },
    claims: (plan) => runtimeActions(plan.actions).length === 0,
    start: async (r) => {
      // connector changes are verified on fresh exact reads before anything of the plan is done
      await verifyConnectorActions(r.connectors, r.plan, r.snap.ownership?.document ?? null);
      return connectorsApplied(
        (await applyConnectorChanges(r.connectors, r.plan, r.planSha256))!,
        r.plan.actions,
      );
    },
  },
  {
    kind: "create",
    // another plan's pending create blocks this one
    continues: (pending, planSha256) => pending.intent.reviewed_plan_sha256 === planSha256,
    continue: async (r) =>
      await r.withConnectors(await continueCreate(r.ctx, r.plan, r.planSha256, r.snap)),
    committed: async (r) => {
      if (r.snap.control || runtimeActions(r.plan.actions).length === 0) return null;
      // a repeated apply of a completed create (then the plan's connector changes, if a kill
      // came before their operation began)
      const done = await verifyCommittedCreate(r.ctx, r.plan, r.snap);
      return done ? await r.withConnectors(done) : null;
    },
    claims: () => true,
    start: async (r) => {
      await verifyConnectorActions(r.connectors, r.plan, r.snap.ownership?.document ?? null);
      return await r.withConnectors(await startCreate(r.ctx, r.plan, r.planSha256, r.snap));
    },
  },
];

/** Apply a verified format-5 plan (see module docs). */
export async function applyPlan(
  ctx: RuntimeContext,
  plan: Plan,
  planSha256: string,
): Promise<ApplyResult> {
  if (plan.format === 6) {
    throw new SluiceError(
      "BLOCKED_REVIEWED_PLAN",
      "this plan file is a reviewed predicate replacement (format 6): apply it with 'sluice apply --plan FILE', which carries it out boundary by boundary",
    );
  }
  if (plan.blockers.length > 0) throw blockerError(plan.blockers);
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const connectors = connectorContext(ctx, clock);
  if (ctx.breakStaleLock) await ctx.store.breakStaleLock(ctx.breakStaleLock);
  await ctx.store.acquireLock({ actor: ctx.actor });
  try {
    const snap = await ctx.store.load();
    const route: Route = {
      ctx,
      plan,
      planSha256,
      snap,
      removal: { ...ctx, clock },
      connectors,
      withConnectors: async (r) => {
        const c = await applyConnectorChanges(connectors, plan, planSha256);
        return c
          ? { ...r, noop: false, serial: c.serial, actions: plan.actions, connectors: c }
          : r;
      },
    };
    // the pending operation this plan started is continued by its own journey
    const pending = snap.control?.opened ?? null;
    const owner = pending ? JOURNEYS.find((j) => j.kind === pending.kind) : undefined;
    if (pending && owner?.continues(pending, planSha256)) return await owner.continue(route);
    // a plan an operation already committed (its acknowledgement lost): a verified no-op
    for (const j of JOURNEYS) {
      const done = await j.committed(route);
      if (done) return done;
    }
    verifyPlanCurrent(plan, {
      ...currentContext(ctx.store, ctx.sourceSha256, snap),
      appliedBy: appliedBy(plan, planSha256, snap),
    });
    if (plan.actions.length === 0) {
      return {
        noop: true,
        already_applied: false,
        operation_id: null,
        serial: snap.ownership?.document.serial ?? 0,
        actions: [],
        runners: [],
      };
    }
    if (pending) {
      const cmds = commandsOf(pending);
      throw new SluiceError(
        "BLOCKED_OPERATION_PENDING",
        `operation ${pending.operation_id} (${pending.kind}) is pending; finish it (${cmds.continue}) or abandon it (${cmds.abandon})`,
        { evidence: { operation_id: pending.operation_id, commands: cmds } },
      );
    }
    return await JOURNEYS.find((j) => j.claims(plan))!.start(route);
  } catch (error) {
    throw await namingPending(ctx.store, error);
  } finally {
    // a release that fails changes nothing of what was done: a lock already lost (the error
    // said so, or the work was all done before it) or a store that no longer answers leaves the
    // result or the error as it is — the lock is then stale, as after a kill (spec: a verified
    // result followed by a lock-release error retains its outcome)
    await ctx.store.releaseLock().catch(() => {});
  }
}

/** The commands that continue or abandon a pending operation. */
function commandsOf(pending: OpenedControl) {
  return pendingCommands({
    operation_id: pending.operation_id,
    kind: pending.kind,
    status: pending.status,
    last_boundary: pending.checkpoints.at(-1)?.name ?? null,
    plan_sha256: pending.intent.reviewed_plan_sha256,
  });
}

/**
 * A lock lost or a write unacknowledged in the middle of a journey names the operation it leaves
 * pending and how to go on (an unknown outcome: `committed: null`), never a bare "lock lost" or
 * "unknown outcome" while an operation is pending. Any other error, one that already names its
 * operation, or one with no operation pending, is returned as it is.
 */
async function namingPending(store: RuntimeContext["store"], error: unknown): Promise<unknown> {
  const lost = error instanceof SluiceError &&
    (error.code === "STATE_LOCK_LOST" || error.code.startsWith("UNKNOWN_OUTCOME"));
  if (!lost) return error;
  if (typeof error.evidence?.operation_id === "string") return error;
  // a store that cannot answer leaves the loss as it was
  const pending = await pendingAfterLoss(store);
  if (!pending) return error;
  const cmds = commandsOf(pending);
  return new SluiceError(
    error.code,
    `${error.message}; operation ${pending.operation_id} (${pending.kind}) stays pending, its ` +
      `outcome unknown: continue it (${cmds.continue}) once no other command holds the lock, or ` +
      `abandon it (${cmds.abandon})`,
    {
      evidence: {
        ...error.evidence,
        operation_id: pending.operation_id,
        committed: null,
        commands: cmds,
      },
      cause: error,
    },
  );
}

/**
 * The operation that completed this plan file, named by its commit in the audit (the commit of a
 * create, connector change or removal records the plan's sha256 in the same write), or null. A
 * plan with connector changes is complete only once its connector operation committed.
 */
function appliedBy(
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): { operation_id: string; recorded_at: string } | null {
  const commit = commitOfPlan(snap.history.events, planSha256);
  if (!commit?.operation_id) return null;
  if (
    plan.actions.some(isConnectorAction) &&
    commit.operation_id !== connectorOperationId(planSha256)
  ) return null;
  return { operation_id: commit.operation_id, recorded_at: commit.recorded_at };
}
