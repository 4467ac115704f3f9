/**
 * The router of `apply`: one entry for every journey a format-5 plan file carries out. Under the
 * deployment lock it continues the pending operation this plan started (a create, a runner
 * removal or a connector change: each continued by its own journey from exact reads), recognizes
 * a plan an operation already committed (a verified no-op), re-verifies the plan's currency, and
 * starts the journey the plan's actions belong to: the create journey (`create.ts`), a runner
 * removal (`removal.ts`) or a connector change (`connectors.ts`). A format-6 plan (a predicate
 * replacement) is executed by the reviewed coordinator (`replacement/execute.ts`), never here.
 *
 * **The operator's commands.** `state resume --plan FILE --operation-id ID` of such a plan comes
 * here too ({@link applyPlan} with the operation ID): it continues only that pending operation,
 * with its own journey, once the operation is found to be this plan file's
 * ({@link operationOfPlanFile}); `state runner-status` reports, read-only under the same lock and
 * checks, the next row of that journey's table a fresh observation shows
 * ({@link pendingStatus}).
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
import {
  commitOfOperation,
  commitOfPlan,
  type CompletionReceipt,
  type OwnershipCommitted,
} from "../state/history.ts";
import { findAbandonment } from "../state/engine.ts";
import { blockerError } from "../validation/blocker.ts";
import { CONNECTOR_JOURNEY, connectorOperationId } from "../protocol/connector.ts";
import { REMOVAL_JOURNEY } from "../protocol/removal.ts";
import { DESTROY_JOURNEY } from "../protocol/destroy.ts";
import {
  continueDestroy,
  destroyActionOf,
  destroyNext,
  startDestroy,
  verifyCommittedDestroy,
} from "./destroy.ts";
import { CREATE_JOURNEY } from "../protocol/create.ts";
import { type Clock, SYSTEM_CLOCK } from "./deps.ts";
import type { ApplyResult, RuntimeContext } from "./apply_context.ts";
import { continueCreate, startCreate, verifyCommittedCreate } from "./create.ts";
import { pendingAfterLoss } from "./unknown_outcome.ts";
import { complete, type NextStep } from "./next_step.ts";
import { createNext } from "./create_next.ts";
import { removalNext } from "./removal_next.ts";
import { connectorNext } from "./connector_next.ts";
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
    signal: ctx.signal,
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
  /** Read-only: the next row of its table a fresh observation shows (`state runner-status`). */
  next(r: Route): Promise<NextStep>;
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
    // a destroy is a plan's only change (plan --destroy)
    kind: DESTROY_JOURNEY.kind,
    continues: () => true,
    continue: async (r) =>
      removalApplied(r.plan, await continueDestroy(r.removal, r.plan, r.planSha256, r.snap)),
    committed: async (r) => {
      const done = await verifyCommittedDestroy(r.removal, r.plan, r.planSha256, r.snap);
      return done ? removalApplied(r.plan, done) : null;
    },
    claims: (plan) => destroyActionOf(plan) !== null,
    start: async (r) =>
      removalApplied(r.plan, await startDestroy(r.removal, r.plan, r.planSha256, r.snap)),
    next: (r) => destroyNext(r.removal, r.plan, r.snap),
  },
  {
    kind: REMOVAL_JOURNEY.kind,
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
    next: (r) => removalNext(r.removal, r.plan, r.snap),
  },
  {
    kind: CONNECTOR_JOURNEY.kind,
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
    next: (r) => connectorNext(r.connectors, r.plan, r.snap),
  },
  {
    kind: CREATE_JOURNEY.kind,
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
    next: (r) => createNext(r.ctx, r.plan, r.snap),
  },
];

/**
 * Apply a verified format-5 plan (see module docs). With `operationId` (`state resume`), only
 * continue that pending operation, which must be this plan file's ({@link operationOfPlanFile});
 * an operation this plan already completed is verified as a repeated apply would be.
 */
export async function applyPlan(
  ctx: RuntimeContext,
  plan: Plan,
  planSha256: string,
  operationId?: string,
): Promise<ApplyResult> {
  if (plan.format === 6) {
    throw new SluiceError(
      "BLOCKED_REVIEWED_PLAN",
      "this plan file is a reviewed predicate replacement (format 6): apply it with 'sluice apply --plan FILE', which carries it out boundary by boundary",
    );
  }
  // a resume names its operation first: a plan file that is not its own is that refusal
  // (a blocked plan never started one)
  if (operationId === undefined && plan.blockers.length > 0) throw blockerError(plan.blockers);
  return await underLock(
    ctx,
    async (route) => {
      if (operationId !== undefined) return await resumeRouted(route, operationId);
      return await routed(route);
    },
    plan,
    planSha256,
  );
}

/**
 * Run `body` under the deployment lock with the route of this plan in the state as loaded under
 * it; a lost lock or acknowledgement names the pending operation ({@link namingPending}).
 */
async function underLock<T>(
  ctx: RuntimeContext,
  body: (route: Route) => Promise<T>,
  plan: Plan,
  planSha256: string,
): Promise<T> {
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const connectors = connectorContext(ctx, clock);
  if (ctx.breakStaleLock) await ctx.store.breakStaleLock(ctx.breakStaleLock);
  await ctx.store.acquireLock({ actor: ctx.actor });
  try {
    const snap = await ctx.store.load();
    return await body({
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
    });
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

/** `apply --plan`: continue this plan's pending operation, recognize it applied, or start it. */
async function routed(route: Route): Promise<ApplyResult> {
  const { ctx, plan, planSha256, snap } = route;
  {
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
  }
}

/** What the state holds of the operation a plan file and an operation ID name. */
export type PlanOperation =
  | { kind: "pending"; control: OpenedControl }
  | { kind: "completed"; commit: OwnershipCommitted };

/**
 * The operation `operationId` is this plan file's: pending with an intent recorded from these
 * plan bytes (a predicate replacement is resumed with its reviewed format-6 plan,
 * `PLAN_NOT_REVIEWED`; another plan's, `BLOCKED_PLAN_MISMATCH`), or committed by this plan (its
 * commit event records the plan's sha256). Abandoned: `BLOCKED_OPERATION_ABANDONED`; neither
 * pending nor committed: `BLOCKED_NO_PENDING_OPERATION`, naming what is pending instead.
 *
 * @example
 * ```ts
 * import { operationOfPlanFile } from "./journeys.ts";
 * // const rec = operationOfPlanFile(await store.load(), operationId, planSha256);
 * ```
 */
export function operationOfPlanFile(
  snap: StateSnapshot,
  operationId: string,
  planSha256: string,
): PlanOperation {
  const pending = snap.control?.opened ?? null;
  // a predicate replacement, pending or completed (its receipt), is its reviewed plan's
  const replacement = pending?.operation_id === operationId && pending.kind === "runner_update"
    ? pending.intent
    : snap.history.events.find((e): e is CompletionReceipt =>
      e.kind === "runner_completed" && e.operation_id === operationId
    )?.intent;
  if (replacement) {
    throw new SluiceError(
      "PLAN_NOT_REVIEWED",
      `operation ${operationId} is a predicate replacement (runner_update): it is inspected and resumed with its reviewed format-6 plan file (the one with sha256 ${replacement.reviewed_plan_sha256}), not with this format-5 plan`,
      { evidence: { operation_id: operationId, plan_sha256: replacement.reviewed_plan_sha256 } },
    );
  }
  if (pending?.operation_id === operationId) {
    if (pending.intent.reviewed_plan_sha256 !== planSha256) {
      throw new SluiceError(
        "BLOCKED_PLAN_MISMATCH",
        `operation ${operationId} (${pending.kind}) was started from plan ${pending.intent.reviewed_plan_sha256}, not from this file (${planSha256}); give the plan file it was started from`,
        {
          evidence: {
            operation_id: operationId,
            plan_sha256: pending.intent.reviewed_plan_sha256,
            given: planSha256,
          },
        },
      );
    }
    if (!JOURNEYS.some((j) => j.kind === pending.kind)) {
      throw new SluiceError(
        "BLOCKED_NOT_A_REPLACEMENT",
        `operation ${operationId} is a ${pending.kind}, which no journey of a plan file continues; abandon it (sluice state abandon --operation-id ${operationId} --reason TEXT)`,
      );
    }
    return { kind: "pending", control: pending };
  }
  const commit = commitOfOperation(snap.history.events, operationId);
  if (commit) {
    if (commit.plan_sha256 !== undefined && commit.plan_sha256 !== planSha256) {
      throw new SluiceError(
        "BLOCKED_PLAN_MISMATCH",
        `operation ${operationId} completed from plan ${commit.plan_sha256}, not from this file (${planSha256})`,
        {
          evidence: {
            operation_id: operationId,
            plan_sha256: commit.plan_sha256,
            given: planSha256,
          },
        },
      );
    }
    return { kind: "completed", commit };
  }
  const abandoned = findAbandonment(snap.history.events, operationId);
  if (abandoned) {
    throw new SluiceError(
      "BLOCKED_OPERATION_ABANDONED",
      `operation ${operationId} was abandoned by ${abandoned.actor} at ${abandoned.recorded_at} (${abandoned.reason}); it can never continue: plan again`,
    );
  }
  throw new SluiceError(
    "BLOCKED_NO_PENDING_OPERATION",
    `operation ${operationId} is neither pending nor completed in this project's state` +
      (pending
        ? `; the pending operation is ${pending.operation_id} (${pending.kind})`
        : "; 'sluice state show' names the pending operation"),
    { evidence: { operation_id: operationId, pending: pending?.operation_id ?? null } },
  );
}

/**
 * `state resume` of a format-5 plan: continue its pending operation with that operation's own
 * journey; a completed one is verified as a repeated `apply --plan` verifies it (a no-op).
 */
async function resumeRouted(route: Route, operationId: string): Promise<ApplyResult> {
  const rec = operationOfPlanFile(route.snap, operationId, route.planSha256);
  if (route.plan.blockers.length > 0) throw blockerError(route.plan.blockers);
  if (rec.kind === "pending") {
    return await JOURNEYS.find((j) => j.kind === rec.control.kind)!.continue(route);
  }
  for (const j of JOURNEYS) {
    const done = await j.committed(route);
    if (done) return done;
  }
  // committed, and the state has moved on since: nothing of this plan is left to do
  return {
    noop: true,
    already_applied: true,
    operation_id: operationId,
    serial: route.snap.ownership?.document.serial ?? rec.commit.serial,
    actions: [],
    runners: [],
  };
}

/** What `state runner-status` reports of a create, runner removal or connector operation. */
export interface PendingStatus {
  /** The operation kind (`create`, `runner_removal`, `connector_change`). */
  journey: string;
  /** Pending (in progress or interrupted) or completed (committed). */
  state: "in_progress" | "interrupted" | "completed";
  /** The last durable boundary: its intent, a checkpoint, or `committed`. */
  last_boundary: string;
  /** The durable checkpoints, in order. */
  checkpoints: OpenedControl["checkpoints"];
  /** The next row of its table a fresh observation shows (authorizes nothing). */
  next: NextStep;
  /** Interruptions recorded. */
  incidents: number;
  /** Resumes authorized. */
  resumes: number;
}

/**
 * Read-only, under the deployment lock: the operation `operationId` of this format-5 plan file
 * ({@link operationOfPlanFile}) and the next row of its journey's table. Writes nothing.
 *
 * @example
 * ```ts
 * import { pendingStatus } from "./journeys.ts";
 * // const s = await pendingStatus(ctx, plan, planSha256, operationId); s.next.step
 * ```
 */
export async function pendingStatus(
  ctx: RuntimeContext,
  plan: Plan,
  planSha256: string,
  operationId: string,
): Promise<PendingStatus> {
  return await underLock(
    ctx,
    async (route) => {
      const rec = operationOfPlanFile(route.snap, operationId, planSha256);
      if (rec.kind === "completed") {
        return {
          journey: kindOfCommitted(plan),
          state: "completed",
          last_boundary: "committed",
          checkpoints: [],
          next: complete(
            `committed at ${rec.commit.recorded_at} (ownership serial ${rec.commit.serial}); nothing to do`,
          ),
          incidents: 0,
          resumes: 0,
        };
      }
      const c = rec.control;
      const journey = JOURNEYS.find((j) => j.kind === c.kind)!;
      return {
        journey: c.kind,
        state: c.status,
        last_boundary: c.checkpoints.at(-1)?.name ?? "intent",
        checkpoints: c.checkpoints,
        next: await journey.next(route),
        incidents: c.incidents.length,
        resumes: c.resume_history.length,
      };
    },
    plan,
    planSha256,
  );
}

/** The journey a committed plan was applied by, as its claims decide. */
function kindOfCommitted(plan: Plan): string {
  return JOURNEYS.find((j) => j.claims(plan))!.kind;
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
