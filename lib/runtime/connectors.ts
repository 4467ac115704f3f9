/**
 * The connector journey: a plan's connector changes applied through the rows of the connector
 * table (`lib/protocol/connector.ts`), each crossing its fault site. Under the deployment lock:
 * a fresh exact observation of every named connector must show what the plan binds (the cluster
 * identity; absent for a create, the owned fingerprint for an update or removal) before the
 * intent is recorded; then one Connect mutation per action, each preceded by a fresh exact read;
 * then ownership is committed (serial + 1) and the operation cleared; then a bounded read-only
 * wait for the created or updated connectors' tasks to run.
 *
 * **Continuation.** A process killed anywhere leaves the operation pending; `apply --plan` with
 * the same plan file continues it in a fresh process ({@link continueConnectorOperation}): each
 * action is decided by what an exact read of its connector shows — still in the prior state (do
 * it), already in the desired state (a lost response: done), anything else (blocked: never
 * guessed). **Refusals.** A mutation the worker refused (nothing happened) ends the operation:
 * what was done before it is committed, then the refusal is reported; a lost response leaves it
 * pending (exit 6).
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
import { type ErrorCode, SluiceError } from "../errors.ts";
import { writeIntent } from "./unknown_outcome.ts";
import {
  type ConnectorArtifact,
  desiredConnectorConfig,
  resolveConnectorConfig,
  secretHashKey,
} from "../artifact/connector.ts";
import { atSite } from "../fault/site.ts";
import type { Plan } from "../plan/plan.ts";
import { currentContext, verifyContinuation } from "../plan/plan_file.ts";
import { type ConnectorAction, isConnectorAction, ownedAfter } from "../plan/connectors.ts";
import {
  CONNECTOR_OPERATION_KIND,
  connectorOperationId,
  connectorSite,
  UNOWNED_CONNECTOR_WAYS_OUT,
} from "../protocol/connector.ts";
import type { ConnectPort } from "../providers/connect/port.ts";
import { commitOfOperation } from "../state/history.ts";
import {
  emptyOwnership,
  ownedConnectors,
  type OwnershipDocument,
  stateChecksum,
  withConnectors,
} from "../state/ownership.ts";
import type { StateSnapshot, StateStore } from "../state/store.ts";
import { type Blocker, blocker, blockerError } from "../validation/blocker.ts";
import type { ConnectorObservation } from "../validation/connector_observation.ts";
import { observeConnectors } from "./connector_observer.ts";
import { type Clock, isoNow, SYSTEM_CLOCK } from "./deps.ts";
import { OperationEvents, type ProgressListener } from "./progress.ts";
import { providerMutation } from "./provider_mutation.ts";

/** What the connector journey needs from outside. */
export interface ConnectorJourneyContext {
  store: StateStore;
  actor: string;
  /** The project's current source hash (re-read from disk by the caller). */
  sourceSha256: string;
  /** The Connect port of a declared cluster alias. */
  connect: (cluster: string) => ConnectPort;
  /** Where secret values and the digest key come from (default: this process's environment). */
  env?: (variable: string) => string | undefined;
  clock?: Clock;
  /** Progress events of the connector journey. */
  onProgress?: ProgressListener;
  /** Cancels the operation at its next durable boundary (`CANCELLED`). */
  signal?: AbortSignal;
  /** How long created or updated connectors may take to run (default 60 s; 0: do not wait). */
  runningTimeoutMs?: number;
}

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
 * The connector actions of a plan, in plan order.
 *
 * @example
 * ```ts
 * // connectorActions(plan).map((a) => `${a.type} ${a.name}`)
 * ```
 */
export function connectorActions(plan: Plan): ConnectorAction[] {
  return plan.actions.filter(isConnectorAction);
}

type Position = { kind: "before" } | { kind: "after" } | { kind: "blocked"; blocker: Blocker };

/**
 * Where an action stands according to one exact observation of its connector: still to do
 * (`before`), done (`after`), or blocked. The same reading serves the check before the intent
 * and the continuation after a lost response.
 *
 * @example
 * ```ts
 * // actionPosition(action, observation).kind  → "before" | "after" | "blocked"
 * ```
 */
export function actionPosition(a: ConnectorAction, obs: ConnectorObservation): Position {
  const blocked = (code: ErrorCode, message: string): Position => ({
    kind: "blocked",
    blocker: blocker(code, message, { evidence: { connector: a.name, action: a.type } }),
  });
  if (
    obs.identity.kafka_cluster_id !== a.identity.kafka_cluster_id ||
    obs.identity.endpoint_digest !== a.identity.endpoint_digest
  ) {
    return blocked(
      "BLOCKED_CONNECT_CLUSTER_CHANGED",
      `Connect cluster ${a.cluster} now answers for Kafka cluster ${obs.identity.kafka_cluster_id} (endpoint digest ${
        obs.identity.endpoint_digest.slice(0, 12)
      }), not the reviewed ${a.identity.kafka_cluster_id} (${
        a.identity.endpoint_digest.slice(0, 12)
      })`,
    );
  }
  switch (a.type) {
    case "create_connector":
      if (!obs.exists) return { kind: "before" };
      if (obs.fingerprints.desired === a.config_fingerprint) return { kind: "after" };
      return blocked(
        "BLOCKED_UNOWNED_CONNECTOR",
        `connector ${a.name} exists with a configuration sluice did not submit: this project did not create it, so it does not own it; ${UNOWNED_CONNECTOR_WAYS_OUT}`,
      );
    case "update_connector":
      if (!obs.exists) {
        return blocked(
          "BLOCKED_CONNECTOR_MISSING",
          `connector ${a.name} disappeared before its update: it was deleted outside sluice`,
        );
      }
      if (obs.fingerprints.owned === a.prior_config_fingerprint) return { kind: "before" };
      if (obs.fingerprints.desired === a.config_fingerprint) return { kind: "after" };
      return blocked(
        "BLOCKED_CONNECTOR_DRIFT",
        `connector ${a.name} has neither the owned nor the reviewed configuration: it was changed outside sluice`,
      );
    case "remove_connector":
      if (!obs.exists) return { kind: "after" };
      if (obs.fingerprints.owned === a.config_fingerprint) return { kind: "before" };
      return blocked(
        "BLOCKED_CONNECTOR_DRIFT",
        `connector ${a.name} no longer has the configuration sluice submitted: it is not the connector the removal names`,
      );
    case "release_connector":
      if (!obs.exists) return { kind: "before" };
      return blocked(
        "BLOCKED_UNOWNED_CONNECTOR",
        `connector ${a.name} was declared removed while absent, but it exists again: this project did not create it, so it does not own it; ${UNOWNED_CONNECTOR_WAYS_OUT}`,
      );
  }
}

/** The desired artifact of a create or update. */
function artifactOf(plan: Plan, a: ConnectorAction): ConnectorArtifact {
  const x = plan.connectors?.artifacts.find((c) => c.artifact.name === a.name);
  if (!x) throw new SluiceError("PLAN_INVALID", `the plan has no artifact for connector ${a.name}`);
  return x.artifact;
}

/** The owned secret keys of an action's connector (null: not owned). */
function ownedKeys(doc: OwnershipDocument | null, name: string): string[] | null {
  return doc ? ownedConnectors(doc).find((o) => o.name === name)?.secret_keys ?? null : null;
}

/** Observe the connectors of some actions, exactly (also `state runner-status`). */
export async function observeActions(
  ctx: ConnectorJourneyContext,
  plan: Plan,
  actions: ConnectorAction[],
  ownership: OwnershipDocument | null,
): Promise<Map<string, ConnectorObservation>> {
  const env = ctx.env ?? ((v: string) => Deno.env.get(v));
  const targets = actions.map((a) => ({
    connector: a.connector,
    name: a.name,
    cluster: a.cluster,
    desiredSecretKeys: a.type === "create_connector" || a.type === "update_connector"
      ? desiredConnectorConfig(artifactOf(plan, a), env).secretKeys
      : null,
    ownedSecretKeys: ownedKeys(ownership, a.name),
  }));
  const needsKey = targets.some((t) =>
    (t.desiredSecretKeys?.length ?? 0) + (t.ownedSecretKeys?.length ?? 0) > 0
  );
  const hashKey = needsKey ? secretHashKey(env) : null;
  const obs = await observeConnectors({ connect: ctx.connect, hashKey, clock: ctx.clock }, targets);
  return new Map(obs.connectors.map((o) => [o.name, o]));
}

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
 * was lost). Then each action is decided by an exact read (see module docs).
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
    const committed = commitOfOperation(snap.history.events, control.operation_id);
    if (committed && snap.ownership?.checksum === committed.state_checksum) {
      // only the clear was lost: the commit the history recorded is the state; clear it
      const done = await atSite(
        connectorSite("commit"),
        () =>
          ctx.store.commitOwnership(snap, snap.ownership!.document, {
            operationId: control.operation_id,
            recordedAt: isoNow(ctx.clock ?? SYSTEM_CLOCK),
          }),
      );
      const serial = done.ownership!.document.serial;
      const connectors = await awaitRunning(ctx, events, connectorActions(plan), new Set());
      events.committed(
        serial,
        `ownership serial ${serial} (committed before; its clear is now recorded)`,
      );
      return {
        operation_id: control.operation_id,
        serial,
        continued: true,
        verified_committed: false,
        connectors,
      };
    }
    const current = snap.ownership?.checksum ??
      stateChecksum(emptyOwnership(ctx.store.project, ctx.store.environment));
    if (current !== intent.original_state_checksum) {
      throw new SluiceError(
        "BLOCKED_STATE_CHANGED",
        `ownership changed since connector operation ${control.operation_id} began (${intent.original_state_checksum} → ${current})`,
      );
    }
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

/** The rows after the intent: one exact read and at most one mutation per action, then commit. */
async function drive(
  ctx: ConnectorJourneyContext,
  events: OperationEvents,
  plan: Plan,
  snap: StateSnapshot,
  operationId: string,
  continuing: boolean,
): Promise<ConnectorApplyResult> {
  const env = ctx.env ?? ((v: string) => Deno.env.get(v));
  const prior = snap.ownership?.document ??
    emptyOwnership(ctx.store.project, ctx.store.environment);
  const actions = connectorActions(plan);
  const done: ConnectorAction[] = [];
  const observedDone = new Set<string>();
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
        recordedAt: isoNow(ctx.clock ?? SYSTEM_CLOCK),
      }));
    return next.serial;
  };
  for (const a of actions) {
    const obs = (await observeActions(ctx, plan, [a], prior)).get(a.name)!;
    const position = actionPosition(a, obs);
    if (position.kind === "after" && continuing) {
      // a lost response: the exact read proves this operation's mutation happened
      events.boundary({
        kind: "connector",
        step: a.type,
        boundary: a.type,
        message: `${a.name}: already done (observed)`,
      });
      done.push(a);
      observedDone.add(a.name);
      continue;
    }
    if (position.kind !== "before") {
      const b = position.kind === "blocked" ? position.blocker : blocker(
        "BLOCKED_UNOWNED_CONNECTOR",
        a.type === "create_connector" || a.type === "update_connector"
          ? `connector ${a.name} changed between the check and the ${a.type}: someone else made it what this operation would have; this project did not, so it does not own it; ${UNOWNED_CONNECTOR_WAYS_OUT}`
          : `connector ${a.name} changed between the check and the ${a.type}`,
        { evidence: { connector: a.name } },
      );
      // a first run has mutated nothing of this connector: end the operation with what was
      // done; a continuation cannot tell, so the operation stays pending for an operator
      if (!continuing) await finish();
      throw blockerError([b]);
    }
    if (a.type === "release_connector") {
      done.push(a);
      events.boundary({
        kind: "connector",
        step: a.type,
        boundary: a.type,
        message: `${a.name}: already absent; its ownership record is released`,
      });
      continue;
    }
    const port = ctx.connect(a.cluster);
    try {
      if (a.type === "create_connector" || a.type === "update_connector") {
        const submission = resolveConnectorConfig(artifactOf(plan, a), env);
        const step = a.type === "create_connector" ? "create_connector" : "update_connector";
        await providerMutation(
          ctx.store,
          connectorSite(step),
          () =>
            a.type === "create_connector"
              ? port.createConnector(a.name, submission)
              : port.updateConnectorConfig(a.name, submission),
        );
        done.push(a);
        events.boundary({
          kind: "connector",
          step,
          boundary: step,
          message: `${a.name} ${a.type === "create_connector" ? "created" : "updated"}`,
        });
      } else {
        await providerMutation(
          ctx.store,
          connectorSite("delete_connector"),
          () => port.deleteConnector(a.name),
        );
        done.push(a);
        events.boundary({
          kind: "connector",
          step: "delete_connector",
          boundary: "delete_connector",
          message: `${a.name} deleted (the connector object only; topics, offsets and files stay)`,
        });
      }
    } catch (error) {
      if (error instanceof SluiceError && NOTHING_HAPPENED.has(error.code)) {
        // refused: nothing happened to this connector; record what was done, then report
        await finish();
      }
      throw error;
    }
  }
  const serial = await finish();
  const connectors = await awaitRunning(ctx, events, actions, observedDone);
  events.committed(serial, `ownership serial ${serial}`);
  return {
    operation_id: operationId,
    serial,
    continued: continuing,
    verified_committed: false,
    connectors,
  };
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
