/**
 * The connector journey: a plan's connector changes applied through the rows of the connector
 * table (`lib/protocol/connector.ts`), each crossing its fault site. Under the deployment lock:
 * a fresh exact observation of every named connector must show what the plan binds (the cluster
 * identity; absent for a create, the owned fingerprint for an update or removal) before the
 * intent is recorded. From there the journey driver (`journey_driver.ts`) runs the table: fresh
 * readings (`connector_reading.ts`), the table's decision (`decideConnectors`,
 * `connector_next.ts` — the one `state runner-status` reports), one step: one Connect mutation
 * per action, each after a fresh exact read of its connector; then ownership is committed
 * (serial + 1) and the operation cleared; then a bounded read-only wait for the created or
 * updated connectors' tasks to run (the table's last row, which reports and never fails).
 *
 * **Continuation.** A process killed anywhere leaves the operation pending; `apply --plan` with
 * the same plan file continues it in a fresh process ({@link continueConnectorOperation}) with
 * the same driver: each action is decided by what an exact read of its connector shows — still
 * in the prior state (do it), already in the desired state (a lost response: done), anything
 * else (blocked: never guessed). **Refusals.** A mutation the worker refused (nothing happened),
 * or a connector the run that recorded the intent finds no longer as it checked it, ends the
 * operation: what was done before it is committed, then the refusal is reported; a lost
 * response leaves it pending (exit 6).
 *
 * Deleting a connector removes the connector object only: its topics, records, consumer group
 * offsets, stored source offsets and external systems stay.
 *
 * @example
 * ```ts
 * import { applyConnectorChanges } from "./connectors.ts";
 * // const r = await applyConnectorChanges(ctx, plan, planSha256); // under the lock
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { writeIntent } from "./unknown_outcome.ts";
import { desiredConnectorConfig, resolveConnectorConfig } from "../artifact/connector.ts";
import { atSite } from "../fault/site.ts";
import type { Plan } from "../plan/plan.ts";
import { currentContext, verifyContinuation } from "../plan/plan_file.ts";
import { type ConnectorAction, ownedAfter } from "../plan/connectors.ts";
import {
  CONNECTOR_OPERATION_KIND,
  connectorOperationId,
  connectorSite,
  UNOWNED_CONNECTOR_WAYS_OUT,
} from "../protocol/connector.ts";
import { commitOfOperation } from "../state/history.ts";
import {
  emptyOwnership,
  ownedConnectors,
  type OwnershipDocument,
  stateChecksum,
  withConnectors,
} from "../state/ownership.ts";
import type { StateSnapshot } from "../state/store.ts";
import { blocker, blockerError } from "../validation/blocker.ts";
import { isoNow, SYSTEM_CLOCK } from "./deps.ts";
import { driveJourney } from "./journey_driver.ts";
import { OperationEvents } from "./progress.ts";
import { providerMutation } from "./provider_mutation.ts";
import {
  actionPosition,
  artifactOf,
  connectorActions,
  type ConnectorJourneyContext,
  type ConnectorReadings,
  observeActions,
  readConnectors,
} from "./connector_reading.ts";
import { type ConnectorGo, decideConnectors } from "./connector_next.ts";

// the readings the connector journey decides by, where its callers have always found them
export {
  actionPosition,
  connectorActions,
  type ConnectorJourneyContext,
  observeActions,
} from "./connector_reading.ts";

/** One connector after the journey. */
export interface ConnectorOutcome {
  /** The logical name in `sluice.yaml`. */
  connector: string;
  /** The exact name on the Connect cluster. */
  name: string;
  /** The declared Connect cluster alias. */
  cluster: string;
  /** The action carried out. */
  action: ConnectorAction["type"];
  /** True when a fresh read showed it already done (a lost response resolved). */
  observed_done: boolean;
  /** The connector's state and task states after the wait (null: removed, or not waited). */
  state: { connector: string; tasks: Array<{ id: number; state: string }> } | null;
  /** Whether it and its tasks reached RUNNING within the wait (null: not awaited). */
  running: boolean | null;
}

/** The result of the connector journey. */
export interface ConnectorApplyResult {
  /** The connector operation's UUID. */
  operation_id: string;
  /** The ownership serial after it. */
  serial: number;
  /** True when a pending operation of this plan was continued. */
  continued: boolean;
  /**
   * True when this plan's operation had already been committed (a lost acknowledgement) and
   * exact reads verified every change in place: nothing was written.
   */
  verified_committed: boolean;
  /** One outcome per connector. */
  connectors: ConnectorOutcome[];
}

/** The codes of a mutation that certainly did not happen (the worker refused or was not reached). */
const NOTHING_HAPPENED = new Set([
  "CONNECT_REFUSED",
  "CONNECT_CONFLICT",
  "CONNECT_CONNECTOR_EXISTS",
  "CONNECT_NOT_FOUND",
  "ENV_CONNECT_UNREACHABLE",
]);

/**
 * Check, on fresh exact reads, that every connector action of the plan is still authorized
 * (throws the blockers); and that the secrets still hash to the reviewed digests. Writes
 * nothing: called before any operation of the apply begins.
 *
 * @example
 * ```ts
 * // await verifyConnectorActions(ctx, plan, snap.ownership?.document ?? null); // throws blockers
 * ```
 */
export async function verifyConnectorActions(
  ctx: ConnectorJourneyContext,
  plan: Plan,
  ownership: OwnershipDocument | null,
): Promise<void> {
  const actions = connectorActions(plan);
  if (actions.length === 0) return;
  const env = ctx.env ?? ((v: string) => Deno.env.get(v));
  for (const a of actions) {
    if (a.type !== "create_connector" && a.type !== "update_connector") continue;
    const desired = desiredConnectorConfig(artifactOf(plan, a), env);
    if (desired.fingerprint !== a.config_fingerprint) {
      throw new SluiceError(
        "BLOCKED_SECRET_CHANGED",
        `connector ${a.name}: the configuration to submit no longer has the reviewed fingerprint (a secret or the digest key changed); plan again`,
        { evidence: { connector: a.name } },
      );
    }
  }
  const observed = await observeActions(ctx, plan, actions, ownership);
  const blockers = actions.flatMap((a) => {
    const p = actionPosition(a, observed.get(a.name)!);
    if (p.kind === "blocked") return [p.blocker];
    if (p.kind === "after") {
      // before the intent nothing of this apply can have happened: someone else did it
      return [blocker(
        a.type === "remove_connector" || a.type === "release_connector"
          ? "BLOCKED_CONNECTOR_MISSING"
          : "BLOCKED_UNOWNED_CONNECTOR",
        a.type === "remove_connector" || a.type === "release_connector"
          ? `connector ${a.name} changed since the plan was made (${a.type} is no longer what a fresh read shows); plan again`
          : `connector ${a.name} appeared (or was changed) since the plan was made with exactly the configuration this plan submits, but not by this apply: it is a look-alike this project did not create, so it does not own it; ${UNOWNED_CONNECTOR_WAYS_OUT}`,
        { evidence: { connector: a.name, action: a.type } },
      )];
    }
    return [];
  });
  if (blockers.length > 0) throw blockerError(blockers);
}

/**
 * Apply the plan's connector changes as one operation (see module docs). The caller holds the
 * lock, has verified the plan, and has committed any runtime creates of the same plan first.
 *
 * @example
 * ```ts
 * // const r = await applyConnectorChanges(ctx, plan, planSha256); // null without connector actions
 * ```
 */
export async function applyConnectorChanges(
  ctx: ConnectorJourneyContext,
  plan: Plan,
  planSha256: string,
): Promise<ConnectorApplyResult | null> {
  const actions = connectorActions(plan);
  if (actions.length === 0) return null;
  let snap = await ctx.store.load();
  if (snap.control) {
    throw new SluiceError(
      "BLOCKED_OPERATION_PENDING",
      `operation ${snap.control.opened.operation_id} (${snap.control.opened.kind}) is pending`,
    );
  }
  const prior = snap.ownership?.document ?? null;
  await verifyConnectorActions(ctx, plan, prior);
  const operationId = connectorOperationId(planSha256);
  const events = connectorEvents(ctx, operationId, planSha256);
  return await events.run(async () => {
    events.started(false, `connector operation ${operationId}`);
    snap = await writeIntent(
      { operation_id: operationId, kind: CONNECTOR_OPERATION_KIND, plan_sha256: planSha256 },
      () =>
        atSite(connectorSite("intent"), () =>
          ctx.store.beginOperation(snap, {
            operation_id: operationId,
            kind: CONNECTOR_OPERATION_KIND,
            project: ctx.store.project,
            environment: ctx.store.environment,
            actor: ctx.actor,
            created_at: isoNow(ctx.clock ?? SYSTEM_CLOCK),
            original_state_checksum: snap.ownership?.checksum ??
              stateChecksum(emptyOwnership(ctx.store.project, ctx.store.environment)),
            reviewed_plan_sha256: planSha256,
            details: {
              plan_sha256: planSha256,
              actions: actions.map((a) => ({
                type: a.type,
                name: a.name,
                cluster: a.cluster,
                kafka_cluster_id: a.identity.kafka_cluster_id,
                endpoint_digest: a.identity.endpoint_digest,
                config_fingerprint: "config_fingerprint" in a ? a.config_fingerprint : null,
              })),
            },
          })),
    );
    events.boundary({
      kind: "intent",
      boundary: "intent",
      message: `connector operation ${operationId} recorded`,
    });
    return await drive(ctx, events, plan, snap, operationId, false);
  });
}

/**
 * Continue a pending connector operation with its own plan (`apply --plan FILE` again): the
 * plan must be the one its intent recorded, the project sources unchanged and ownership still
 * the state the intent started from (or the state its own commit recorded, when only the clear
 * was lost: the table's intent and commit rows decide both). Then each action is decided by an
 * exact read (see module docs).
 *
 * @example
 * ```ts
 * // if (snap.control?.opened.kind === "connector_change") await continueConnectorOperation(ctx, plan, sha, snap);
 * ```
 */
export async function continueConnectorOperation(
  ctx: ConnectorJourneyContext,
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): Promise<ConnectorApplyResult> {
  const control = snap.control!.opened;
  const intent = control.intent;
  verifyContinuation(plan, planSha256, currentContext(ctx.store, ctx.sourceSha256, snap), {
    what: "connector operation",
    operation_id: control.operation_id,
    plan_sha256: intent.reviewed_plan_sha256,
  });
  const events = connectorEvents(ctx, control.operation_id, planSha256);
  return await events.run(async () => {
    events.started(true, `connector operation ${control.operation_id} continues from its intent`);
    return await drive(ctx, events, plan, snap, control.operation_id, true);
  });
}

/**
 * `apply --plan` of a plan whose connector operation was already committed (its acknowledgement
 * lost, e.g. a kill right after the commit): the audit names the plan's operation, and exact
 * reads must show every change in place. Then nothing is written and the result says so; if a
 * change is not in place (the operation ended early on a refusal, or something changed since),
 * the plan is stale. Null when the audit has no commit of this plan's operation.
 *
 * @example
 * ```ts
 * // const done = await verifyCommittedConnectorPlan(ctx, plan, sha, snap); // null: not committed
 * ```
 */
export async function verifyCommittedConnectorPlan(
  ctx: ConnectorJourneyContext,
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): Promise<ConnectorApplyResult | null> {
  const actions = connectorActions(plan);
  if (actions.length === 0) return null;
  const operationId = connectorOperationId(planSha256);
  const committed = commitOfOperation(snap.history.events, operationId);
  if (!committed) return null;
  const observed = await observeActions(ctx, plan, actions, snap.ownership?.document ?? null);
  const open = actions.filter((a) => actionPosition(a, observed.get(a.name)!).kind !== "after");
  if (open.length > 0) {
    throw new SluiceError(
      "PLAN_STALE_STATE",
      `this plan's connector operation ${operationId} already ended (ownership serial ${committed.serial}), but ${
        open.map((a) => `${a.type} ${a.name}`).join(", ")
      } is not in place; plan again`,
      { evidence: { operation_id: operationId, open: open.map((a) => a.name) } },
    );
  }
  // a verified repeat is no operation run: its running wait only reports
  const events = connectorEvents(ctx, operationId, planSha256);
  return {
    operation_id: operationId,
    serial: snap.ownership?.document.serial ?? 0,
    continued: false,
    verified_committed: true,
    connectors: await awaitRunning(ctx, events, actions, new Set(actions.map((a) => a.name))),
  };
}

/**
 * The rows after the intent, run by the journey driver: each decision is the connector table's
 * ({@link decideConnectors}, the one `state runner-status` reports) on fresh readings; this
 * crosses the step it names at its row's site — a Connect mutation, the release of a record, the
 * commit (then the read-only wait for the connectors to run) — or, in the run that recorded the
 * intent, ends the operation with what was done before a refused connector.
 */
async function drive(
  ctx: ConnectorJourneyContext,
  events: OperationEvents,
  plan: Plan,
  start: StateSnapshot,
  operationId: string,
  continuing: boolean,
): Promise<ConnectorApplyResult> {
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const env = ctx.env ?? ((v: string) => Deno.env.get(v));
  const prior = start.ownership?.document ??
    emptyOwnership(ctx.store.project, ctx.store.environment);
  const actions = connectorActions(plan);
  // the actions this run dealt with, in plan order (the commit records them)
  const done: ConnectorAction[] = [];
  const observedDone = new Set<string>();
  let snap = start;
  const finish = async () => {
    const next: OwnershipDocument = {
      ...withConnectors(
        prior,
        ownedAfter(ownedConnectors(prior), done, plan.connectors!.artifacts),
      ),
      serial: prior.serial + 1,
    };
    snap = await atSite(connectorSite("commit"), () =>
      ctx.store.commitOwnership(snap, next, {
        operationId,
        recordedAt: isoNow(clock),
      }));
    return next.serial;
  };
  const result = (serial: number, connectors: ConnectorOutcome[]): ConnectorApplyResult => ({
    operation_id: operationId,
    serial,
    continued: continuing,
    verified_committed: false,
    connectors,
  });
  return await driveJourney<ConnectorReadings, ConnectorGo, ConnectorApplyResult>({
    events,
    clock,
    // no row before the commit waits (the wait for RUNNING after it only reports)
    boundMs: 0,
    read: async () => {
      const readings = await readConnectors(ctx, plan, start, {
        continuing,
        done: new Set(done.map((a) => a.name)),
      });
      for (const r of readings.actions) {
        if (!continuing || r.position.kind !== "after") continue;
        // a lost response: the exact read proves this operation's mutation happened
        events.boundary({
          kind: "connector",
          step: r.action.type,
          boundary: r.action.type,
          message: `${r.action.name}: already done (observed)`,
        });
        done.push(r.action);
        observedDone.add(r.action.name);
      }
      return readings;
    },
    decide: (readings) => decideConnectors(readings),
    wake: () => Promise.reject(new Error("the connector table has no row that waits")),
    cross: async (step) => {
      switch (step.kind) {
        case "release_connector": {
          done.push(step.action);
          events.boundary({
            kind: "connector",
            step: step.kind,
            boundary: step.kind,
            message: `${step.action.name}: already absent; its ownership record is released`,
          });
          return undefined;
        }
        case "create_connector":
        case "update_connector":
        case "delete_connector": {
          const a = step.action;
          const port = ctx.connect(a.cluster);
          try {
            // the configuration is resolved before the site (a missing secret mutates nothing)
            const submission = step.kind === "delete_connector"
              ? null
              : resolveConnectorConfig(artifactOf(plan, a), env);
            await providerMutation<unknown>(
              ctx.store,
              step.row.site,
              () =>
                submission === null
                  ? port.deleteConnector(a.name)
                  : step.kind === "create_connector"
                  ? port.createConnector(a.name, submission)
                  : port.updateConnectorConfig(a.name, submission),
            );
            done.push(a);
            events.boundary({
              kind: "connector",
              step: step.kind,
              boundary: step.kind,
              message: step.kind === "delete_connector"
                ? `${a.name} deleted (the connector object only; topics, offsets and files stay)`
                : `${a.name} ${step.kind === "create_connector" ? "created" : "updated"}`,
            });
          } catch (error) {
            if (error instanceof SluiceError && NOTHING_HAPPENED.has(error.code)) {
              // refused: nothing happened to this connector; record what was done, then report
              await finish();
            }
            throw error;
          }
          return undefined;
        }
        case "refuse":
          // the run that recorded the intent mutated nothing of this connector: end the
          // operation with what was done before it, then report why
          await finish();
          throw blockerError(step.blockers);
        case "commit": {
          if (step.recorded) {
            // only the clear was lost: the commit the history recorded is the state; clear it
            const cleared = await atSite(
              connectorSite("commit"),
              () =>
                ctx.store.commitOwnership(start, start.ownership!.document, {
                  operationId,
                  recordedAt: isoNow(clock),
                }),
            );
            const serial = cleared.ownership!.document.serial;
            const connectors = await awaitRunning(ctx, events, actions, new Set());
            events.committed(
              serial,
              `ownership serial ${serial} (committed before; its clear is now recorded)`,
            );
            return result(serial, connectors);
          }
          const serial = await finish();
          const connectors = await awaitRunning(ctx, events, actions, observedDone);
          events.committed(serial, `ownership serial ${serial}`);
          return result(serial, connectors);
        }
      }
    },
  });
}

/**
 * The read-only wait after the commit (the table's last row): created and updated connectors
 * until they and every task run (or one fails, or the bound passes); removed ones as absent.
 */
async function awaitRunning(
  ctx: ConnectorJourneyContext,
  events: OperationEvents,
  actions: ConnectorAction[],
  observedDone: Set<string>,
): Promise<ConnectorOutcome[]> {
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const timeout = ctx.runningTimeoutMs ?? 60_000;
  const out: ConnectorOutcome[] = [];
  for (const a of actions) {
    const outcome: ConnectorOutcome = {
      connector: a.connector,
      name: a.name,
      cluster: a.cluster,
      action: a.type,
      observed_done: observedDone.has(a.name),
      state: null,
      running: null,
    };
    out.push(outcome);
    if (a.type !== "create_connector" && a.type !== "update_connector") continue;
    const deadline = clock.now() + timeout;
    while (true) {
      const s = await ctx.connect(a.cluster).connectorStatus(a.name);
      outcome.state = s
        ? {
          connector: s.connector.state,
          tasks: s.tasks.map((t) => ({ id: t.id, state: t.state })),
        }
        : null;
      const failed = s !== null &&
        (s.connector.state === "FAILED" || s.tasks.some((t) => t.state === "FAILED"));
      outcome.running = s !== null && s.connector.state === "RUNNING" && s.tasks.length > 0 &&
        s.tasks.every((t) => t.state === "RUNNING");
      if (outcome.running || failed || timeout === 0 || clock.now() > deadline) break;
      // the commit is durable: a cancelled run stops waiting and reports what it saw
      if (events.signal?.aborted) break;
      await events.sleep(250).catch(() => {});
    }
    events.emit({
      kind: "connector",
      step: "await_running",
      message: `${a.name}: ${outcome.state?.connector ?? "absent"}, tasks ${
        outcome.state?.tasks.map((t) => `${t.id}:${t.state}`).join(" ") || "none"
      }`,
    });
  }
  return out;
}

/** The events of one connector run. */
function connectorEvents(ctx: ConnectorJourneyContext, operationId: string, planSha256: string) {
  return new OperationEvents({
    journey: "connector_change",
    operationId,
    listener: ctx.onProgress,
    clock: ctx.clock,
    signal: ctx.signal,
    planSha256,
  });
}
