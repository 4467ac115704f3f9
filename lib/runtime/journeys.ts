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
import { verifyPlanCurrent } from "../plan/plan_file.ts";
import { isConnectorAction } from "../plan/connectors.ts";
import type { StateSnapshot } from "../state/store.ts";
import { commitOfPlan } from "../state/history.ts";
import { blockerError } from "../validation/blocker.ts";
import { CONNECTOR_OPERATION_KIND, connectorOperationId } from "../protocol/connector.ts";
import { REMOVAL_OPERATION_KIND } from "../protocol/removal.ts";
import { type Clock, SYSTEM_CLOCK } from "./deps.ts";
import type { ApplyResult, RuntimeContext } from "./apply_context.ts";
import { continueCreate, startCreate, verifyCommittedCreate } from "./create.ts";
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
  const journey = connectorContext(ctx, clock);
  const removal: RemovalContext = { ...ctx, clock };
  // the runtime part's result, followed by the plan's connector changes (their own operation)
  const withConnectors = async (r: ApplyResult): Promise<ApplyResult> => {
    const connectors = await applyConnectorChanges(journey, plan, planSha256);
    return connectors
      ? { ...r, noop: false, serial: connectors.serial, actions: plan.actions, connectors }
      : r;
  };
  if (ctx.breakStaleLock) await ctx.store.breakStaleLock(ctx.breakStaleLock);
  await ctx.store.acquireLock({ actor: ctx.actor });
  try {
    const snap = await ctx.store.load();
    if (snap.control?.opened.kind === CONNECTOR_OPERATION_KIND) {
      // a pending connector operation is continued with its own plan, from exact reads
      const r = await continueConnectorOperation(journey, plan, planSha256, snap);
      return {
        noop: false,
        already_applied: false,
        operation_id: r.operation_id,
        serial: r.serial,
        actions: plan.actions.filter(isConnectorAction),
        runners: [],
        connectors: r,
      };
    }
    if (snap.control?.opened.kind === REMOVAL_OPERATION_KIND) {
      // a pending runner removal is continued with its own plan, from exact reads
      return removalApplied(plan, await continueRemoval(removal, plan, planSha256, snap));
    }
    // a removal plan whose operation was committed already (its acknowledgement lost)
    const removedAlready = await verifyCommittedRemoval(removal, plan, planSha256, snap);
    if (removedAlready) return removalApplied(plan, removedAlready);
    // a connector plan whose operation was committed already (its acknowledgement lost) is a
    // verified no-op: the audit names the plan's operation and exact reads show the changes
    const committed = await verifyCommittedConnectorPlan(journey, plan, planSha256, snap);
    if (committed) {
      return {
        noop: true,
        already_applied: true,
        operation_id: committed.operation_id,
        serial: committed.serial,
        actions: [],
        runners: [],
        connectors: committed,
      };
    }
    const runtime = plan.actions.filter((a) => !isConnectorAction(a));
    const current = (checksum: string | null) => ({
      project: ctx.store.project,
      environment: ctx.store.environment,
      sourceSha256: ctx.sourceSha256,
      stateChecksum: checksum,
      store: snap.identity,
    });
    const pending = snap.control?.opened ?? null;
    if (
      pending && pending.kind === "create" && pending.intent.reviewed_plan_sha256 === planSha256
    ) {
      return await withConnectors(await continueCreate(ctx, plan, planSha256, snap));
    }
    if (!pending && runtime.length > 0) {
      // a repeated apply of a completed create (then the plan's connector changes, if a kill
      // came before their operation began)
      const done = await verifyCommittedCreate(ctx, plan, snap);
      if (done) return await withConnectors(done);
    }
    verifyPlanCurrent(plan, {
      ...current(snap.ownership?.checksum ?? null),
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
      const cmds = pendingCommands({
        operation_id: pending.operation_id,
        kind: pending.kind,
        status: pending.status,
        last_boundary: pending.checkpoints.at(-1)?.name ?? null,
        plan_sha256: pending.intent.reviewed_plan_sha256,
      });
      throw new SluiceError(
        "BLOCKED_OPERATION_PENDING",
        `operation ${pending.operation_id} (${pending.kind}) is pending; finish it (${cmds.continue}) or abandon it (${cmds.abandon})`,
        { evidence: { operation_id: pending.operation_id, commands: cmds } },
      );
    }
    if (removalActions(plan).length > 0) {
      // a removal is the plan's only change (BLOCKED_REMOVAL_MIXED): its own operation
      return removalApplied(plan, await applyRemoval(removal, plan, planSha256, snap));
    }
    // connector changes are verified on fresh exact reads before anything of the plan is done
    await verifyConnectorActions(journey, plan, snap.ownership?.document ?? null);
    if (runtime.length === 0) {
      const r = (await applyConnectorChanges(journey, plan, planSha256))!;
      return {
        noop: false,
        already_applied: false,
        operation_id: r.operation_id,
        serial: r.serial,
        actions: plan.actions,
        runners: [],
        connectors: r,
      };
    }
    return await withConnectors(await startCreate(ctx, plan, planSha256, snap));
  } finally {
    await ctx.store.releaseLock();
  }
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
