/**
 * What a pending connector change is decided by, read fresh and read-only: whether its commit is
 * already the state, whether ownership is still the one its intent recorded, and per connector
 * action (in plan order) where it stands on an exact read of its connector — still to do
 * (`before`), done (`after`), or blocked. The connector journey's continuation (`connectors.ts`)
 * and `state runner-status` (`connector_next.ts`) decide from these same readings, by the same
 * function.
 *
 * Kafka Connect has no labels: an action's position is read from the connector's exact name on
 * a cluster of the reviewed identity and the keyed fingerprints of its configuration (absent,
 * the prior fingerprint, or the desired one); anything else blocks, never guessed.
 *
 * @example
 * ```ts
 * import { readConnectors } from "./connector_reading.ts";
 * // const r = await readConnectors(ctx, plan, snap, { continuing: true });
 * // r.committed ? "only the clear" : r.actions.map((x) => x.position.kind)
 * ```
 * @module
 */
import { type ErrorCode, SluiceError } from "../errors.ts";
import {
  type ConnectorArtifact,
  desiredConnectorConfig,
  secretHashKey,
} from "../artifact/connector.ts";
import type { Plan } from "../plan/plan.ts";
import { type ConnectorAction, isConnectorAction } from "../plan/connectors.ts";
import { UNOWNED_CONNECTOR_WAYS_OUT } from "../protocol/connector.ts";
import type { ConnectPort } from "../providers/connect/port.ts";
import { commitOfOperation } from "../state/history.ts";
import {
  emptyOwnership,
  ownedConnectors,
  type OwnershipDocument,
  stateChecksum,
} from "../state/ownership.ts";
import type { StateSnapshot, StateStore } from "../state/store.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";
import type { ConnectorObservation } from "../validation/connector_observation.ts";
import { observeConnectors } from "./connector_observer.ts";
import type { Clock } from "./deps.ts";
import type { ProgressListener } from "./progress.ts";

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

/**
 * The connector actions of a plan, in plan order.
 *
 * @example
 * ```ts
 * import { connectorActions } from "./connector_reading.ts";
 * import type { Plan } from "../plan/plan.ts";
 * const names = (plan: Plan) => connectorActions(plan).map((a) => `${a.type} ${a.name}`);
 * ```
 */
export function connectorActions(plan: Plan): ConnectorAction[] {
  return plan.actions.filter(isConnectorAction);
}

/** Where an action stands on one exact read of its connector. */
export type Position =
  | { kind: "before" }
  | { kind: "after" }
  | { kind: "blocked"; blocker: Blocker };

/**
 * Where an action stands according to one exact observation of its connector: still to do
 * (`before`), done (`after`), or blocked. The same reading serves the check before the intent
 * and the continuation after a lost response.
 *
 * @example
 * ```ts
 * import { actionPosition } from "./connector_reading.ts";
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

/**
 * The desired artifact of a create or update.
 *
 * @example
 * ```ts
 * import { artifactOf } from "./connector_reading.ts";
 * // resolveConnectorConfig(artifactOf(plan, action), env)
 * ```
 */
export function artifactOf(plan: Plan, a: ConnectorAction): ConnectorArtifact {
  const x = plan.connectors?.artifacts.find((c) => c.artifact.name === a.name);
  if (!x) throw new SluiceError("PLAN_INVALID", `the plan has no artifact for connector ${a.name}`);
  return x.artifact;
}

/** The owned secret keys of an action's connector (null: not owned). */
function ownedKeys(doc: OwnershipDocument | null, name: string): string[] | null {
  return doc ? ownedConnectors(doc).find((o) => o.name === name)?.secret_keys ?? null : null;
}

/**
 * Observe the connectors of some actions, exactly, keyed by their Connect names.
 *
 * @example
 * ```ts
 * import { observeActions } from "./connector_reading.ts";
 * // const seen = await observeActions(ctx, plan, actions, snap.ownership?.document ?? null);
 * ```
 */
export async function observeActions(
  ctx: Pick<ConnectorJourneyContext, "connect" | "env" | "clock">,
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

/** One connector action as a fresh exact read shows it. */
export interface ActionReading {
  /** The plan's action. */
  action: ConnectorAction;
  /** Where it stands. */
  position: Position;
}

/** What the connector journey's decision reads (see the module documentation). */
export interface ConnectorReadings {
  /** The pending connector operation. */
  operationId: string;
  /**
   * A continuation (a fresh process, or `state runner-status`): a mutation of this operation may
   * have happened with its response lost. False in the run that recorded the intent, which has
   * mutated nothing it did not see answered.
   */
  continuing: boolean;
  /** The audit recorded this operation's commit and the state is its result: only the clear remains. */
  committed: boolean;
  /** Ownership's checksum when it is no longer the one the intent recorded (null: unchanged). */
  changedOwnership: { recorded: string; now: string } | null;
  /**
   * The plan's actions not yet done by this run, in plan order, read up to the first one a
   * decision stops at (in a continuation every one already done is read past); none when the
   * commit is recorded or ownership changed.
   */
  actions: ActionReading[];
}

/**
 * Read a pending connector operation fresh (see the module documentation): `continuing` says
 * whether a lost response may stand behind an action found done; `done` names the connectors
 * this run already dealt with (not read again).
 *
 * @example
 * ```ts
 * import { readConnectors } from "./connector_reading.ts";
 * // const readings = await readConnectors(ctx, plan, snap, { continuing: true });
 * ```
 */
export async function readConnectors(
  ctx: Pick<ConnectorJourneyContext, "connect" | "env" | "clock" | "store">,
  plan: Plan,
  snap: StateSnapshot,
  options: { continuing: boolean; done?: ReadonlySet<string> },
): Promise<ConnectorReadings> {
  const control = snap.control!.opened;
  const operationId = control.operation_id;
  const commit = commitOfOperation(snap.history.events, operationId);
  const committed = commit !== null && snap.ownership?.checksum === commit.state_checksum;
  const now = snap.ownership?.checksum ??
    stateChecksum(emptyOwnership(ctx.store.project, ctx.store.environment));
  const recorded = control.intent.original_state_checksum;
  const changedOwnership = !committed && now !== recorded ? { recorded, now } : null;
  const actions: ActionReading[] = [];
  if (!committed && !changedOwnership) {
    const ownership = snap.ownership?.document ?? null;
    for (const action of connectorActions(plan)) {
      if (options.done?.has(action.name)) continue;
      const obs = (await observeActions(ctx, plan, [action], ownership)).get(action.name)!;
      const position = actionPosition(action, obs);
      actions.push({ action, position });
      // in a continuation an action found done is read past; anything else decides
      if (!(options.continuing && position.kind === "after")) break;
    }
  }
  return { operationId, continuing: options.continuing, committed, changedOwnership, actions };
}
