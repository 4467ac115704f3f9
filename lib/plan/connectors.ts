/**
 * The connector part of the plan: pure, from the compiled connectors (desired) × the explicit
 * removals × the owned connector records × a fresh exact observation of each named connector.
 *
 * - **create**: declared, not owned, absent on its cluster.
 * - **no-op**: owned, present, the owned fingerprint observed, nothing changed.
 * - **update** (reviewed): owned, present with the owned fingerprint, the desired artifact
 *   differs; the plan shows a redacted diff of the configuration.
 * - **remove**: only for an entry of `lifecycle.connector_removals`, of an owned connector
 *   observed with exactly the owned fingerprint on the owned cluster. The action binds the exact
 *   name, the cluster identity and that fingerprint.
 * - **already absent**: a declared removal of a connector that does not exist: no action (an
 *   owned record of it is released, with no Connect call).
 *
 * Blockers: a present connector that is not owned (`BLOCKED_UNOWNED_CONNECTOR`: ownership is
 * required, sluice never adopts one); a changed configuration under an owned connector
 * (`BLOCKED_CONNECTOR_DRIFT`, which blocks its update and its removal); an owned connector that
 * vanished (`BLOCKED_CONNECTOR_MISSING`); another Connect cluster behind the alias
 * (`BLOCKED_CONNECT_CLUSTER_CHANGED`); an owned connector no longer declared and not declared
 * removed (`BLOCKED_CONNECTOR_UNDECLARED`: never removed because it vanished from the project);
 * connector changes planned offline (`BLOCKED_OFFLINE_CONNECTOR_CHANGE`).
 *
 * @example
 * ```ts
 * import { planConnectors } from "./connectors.ts";
 * // const { actions, blockers, items } = planConnectors({ desired, removals, owned, observation });
 * ```
 * @module
 */
import { CONNECTOR_JOURNEY, UNOWNED_CONNECTOR_WAYS_OUT } from "../protocol/connector.ts";
import type { ErrorCode } from "../errors.ts";
import type { ConnectorArtifact } from "../artifact/connector.ts";
import type { ConfigChange, DesiredConnectorConfig } from "../artifact/connector.ts";
import { artifactSecretKeys, configChanges } from "../artifact/connector.ts";
import type { ConnectorRemovalDecl } from "../project/connectors.ts";
import type { ConnectClusterIdentity, OwnedConnector } from "../state/ownership.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";
import type {
  ConnectorObservation,
  ConnectorsObservation,
} from "../validation/connector_observation.ts";

/** Create a declared connector that does not exist. */
export interface CreateConnectorAction {
  /** Discriminant. */
  type: "create_connector";
  /** The logical name in `sluice.yaml`. */
  connector: string;
  /** The exact name on the Connect cluster. */
  name: string;
  /** The declared Connect cluster alias. */
  cluster: string;
  /** The cluster identity the plan is bound to. */
  identity: ConnectClusterIdentity;
  /** The connector artifact's checksum. */
  artifact_sha256: string;
  /** Keyed fingerprint of the configuration to submit. */
  config_fingerprint: string;
}

/** Replace an owned connector's configuration (reviewed: the plan shows the diff). */
export interface UpdateConnectorAction {
  /** Discriminant. */
  type: "update_connector";
  /** The logical name in `sluice.yaml`. */
  connector: string;
  /** The exact name on the Connect cluster. */
  name: string;
  /** The declared Connect cluster alias. */
  cluster: string;
  /** The cluster identity the plan is bound to. */
  identity: ConnectClusterIdentity;
  /** The owned record: the fingerprint the connector must still carry. */
  prior_artifact_sha256: string;
  /** The owned configuration's fingerprint the update starts from. */
  prior_config_fingerprint: string;
  /** The connector artifact's checksum. */
  artifact_sha256: string;
  /** Keyed fingerprint of the configuration to submit. */
  config_fingerprint: string;
}

/** Delete an owned connector declared removed: bound to its exact name, cluster and fingerprint. */
export interface RemoveConnectorAction {
  /** Discriminant. */
  type: "remove_connector";
  /** The logical name in `sluice.yaml`. */
  connector: string;
  /** The exact name on the Connect cluster. */
  name: string;
  /** The declared Connect cluster alias. */
  cluster: string;
  /** The cluster identity the plan is bound to. */
  identity: ConnectClusterIdentity;
  /** The owned fingerprint, which the observed configuration must equal. */
  config_fingerprint: string;
}

/** Release the ownership record of an owned connector declared removed and already absent. */
export interface ReleaseConnectorAction {
  /** Discriminant. */
  type: "release_connector";
  /** The logical name in `sluice.yaml`. */
  connector: string;
  /** The exact name on the Connect cluster. */
  name: string;
  /** The declared Connect cluster alias. */
  cluster: string;
  /** The cluster identity the plan is bound to. */
  identity: ConnectClusterIdentity;
}

/** A planned connector change. */
export type ConnectorAction =
  | CreateConnectorAction
  | UpdateConnectorAction
  | RemoveConnectorAction
  | ReleaseConnectorAction;

/** The action types of {@link ConnectorAction}: the connector journey's (its descriptor's). */
export const CONNECTOR_ACTION_TYPES: ReadonlySet<string> = new Set(CONNECTOR_JOURNEY.actions);

/**
 * True for a connector action.
 *
 * @example
 * ```ts
 * isConnectorAction({ type: "remove_connector" }); // true
 * ```
 */
export function isConnectorAction(a: { type: string }): a is ConnectorAction {
  return CONNECTOR_ACTION_TYPES.has(a.type);
}

/**
 * A plan's actions on the runtime (topics and runners): every action but the connector changes.
 *
 * @example
 * ```ts
 * runtimeActions([{ type: "create_topic" }, { type: "remove_connector" }]); // [{ type: "create_topic" }]
 * ```
 */
export function runtimeActions<A extends { type: string }>(actions: readonly A[]): A[] {
  return actions.filter((a) => !isConnectorAction(a));
}

/** What the plan does with one connector, for review (display-only). */
export interface ConnectorPlanItem {
  /** The logical name in `sluice.yaml`. */
  connector: string;
  /** The exact name on the Connect cluster. */
  name: string;
  /** The declared Connect cluster alias. */
  cluster: string;
  /** Source or sink (null for a connector known only by its removal). */
  kind: "source" | "sink" | null;
  /** What the plan does with it. */
  change:
    | "create"
    | "update"
    | "remove"
    | "release"
    | "none"
    | "already_absent"
    | "blocked";
  /** The topics it writes (source) or reads (sink), as declared. */
  topics: string[];
  /** The redacted configuration diff (a create lists every key; a removal none). */
  changes: ConfigChange[];
  /** The observed connector and task states, online. */
  state: { connector: string; tasks: Array<{ id: number; state: string }> } | null;
  /** Why it is blocked, when it is. */
  why: Array<{ code: string; message: string }>;
}

/** The connector section of a plan. */
export interface PlanConnectors {
  /** The desired connector artifacts (references and keyed digests only, never a secret). */
  artifacts: Array<{ connector: string; sha256: string; artifact: ConnectorArtifact }>;
  /** One item per connector the plan concerns. */
  items: ConnectorPlanItem[];
}

/** One desired connector: its artifact and its resolved, fingerprinted configuration. */
export interface DesiredConnector {
  artifact: ConnectorArtifact;
  sha256: string;
  config: DesiredConnectorConfig;
}

/** What {@link planConnectors} reads. */
export interface ConnectorPlanInput {
  desired: DesiredConnector[];
  /** The removals that apply in this environment. */
  removals: ConnectorRemovalDecl[];
  owned: OwnedConnector[];
  /** A fresh observation of every desired, removed and owned connector; null offline. */
  observation: ConnectorsObservation | null;
}

/** The connector part of a plan. */
export interface ConnectorPlan {
  actions: ConnectorAction[];
  blockers: Blocker[];
  section: PlanConnectors;
}

const sameIdentity = (a: ConnectClusterIdentity, b: ConnectClusterIdentity) =>
  a.kafka_cluster_id === b.kafka_cluster_id && a.endpoint_digest === b.endpoint_digest;

function stateOf(o: ConnectorObservation | undefined): ConnectorPlanItem["state"] {
  return o?.status ? { connector: o.status.state, tasks: o.status.tasks } : null;
}

/**
 * Compute the connector part of a plan. Pure.
 *
 * @example
 * ```ts
 * // planConnectors({ desired, removals, owned, observation: null }).blockers
 * ```
 */
export function planConnectors(input: ConnectorPlanInput): ConnectorPlan {
  const actions: ConnectorAction[] = [];
  const blockers: Blocker[] = [];
  const items: ConnectorPlanItem[] = [];
  const observed = (name: string) => input.observation?.connectors.find((c) => c.name === name);
  const block = (item: ConnectorPlanItem, code: ErrorCode, message: string, extra = {}) => {
    const b = blocker(code, message, { evidence: { connector: item.name, ...extra } });
    blockers.push(b);
    item.change = "blocked";
    item.why.push({ code, message });
  };
  // ownership is checked on the owned cluster: the same Kafka cluster and REST endpoint
  const clusterMoved = (
    item: ConnectorPlanItem,
    owned: OwnedConnector,
    obs: ConnectorObservation,
  ) => {
    if (owned.cluster === obs.cluster && sameIdentity(owned.cluster_identity, obs.identity)) {
      return false;
    }
    block(
      item,
      "BLOCKED_CONNECT_CLUSTER_CHANGED",
      `connector ${owned.name} is owned on Connect cluster ${owned.cluster} (Kafka cluster ${owned.cluster_identity.kafka_cluster_id}), but ${obs.cluster} now answers for Kafka cluster ${obs.identity.kafka_cluster_id} at another or the same endpoint digest ${
        obs.identity.endpoint_digest.slice(0, 12)
      }: sluice acts only on the cluster it created the connector on`,
      { owned: owned.cluster_identity, observed: obs.identity },
    );
    return true;
  };

  for (const d of input.desired) {
    const a = d.artifact;
    const owned = input.owned.find((o) => o.name === a.name);
    const obs = observed(a.name);
    const item: ConnectorPlanItem = {
      connector: a.connector,
      name: a.name,
      cluster: a.cluster,
      kind: a.kind,
      change: "none",
      topics: a.topics,
      changes: [],
      state: stateOf(obs),
      why: [],
    };
    items.push(item);
    const unchanged = owned !== undefined && owned.artifact_sha256 === d.sha256 &&
      owned.config_fingerprint === d.config.fingerprint;
    if (!input.observation || !obs) {
      // offline: ownership alone says whether anything changes; a change binds observations
      if (!unchanged) {
        block(
          item,
          "BLOCKED_OFFLINE_CONNECTOR_CHANGE",
          `connector ${a.name} ${
            owned ? "changed" : "is new"
          }; connector changes are planned online (they bind the cluster identity and the observed configuration)`,
        );
      }
      continue;
    }
    if (!owned) {
      if (obs.exists) {
        block(
          item,
          "BLOCKED_UNOWNED_CONNECTOR",
          `connector ${a.name} exists on Connect cluster ${a.cluster} but this project did not create it, so it does not own it; ${UNOWNED_CONNECTOR_WAYS_OUT}`,
        );
        item.changes = configChanges(obs.comparable, obs.shown, {
          config: a.config,
          comparable: d.config.comparable,
        });
        continue;
      }
      item.change = "create";
      item.changes = configChanges(null, null, {
        config: a.config,
        comparable: d.config.comparable,
      });
      actions.push({
        type: "create_connector",
        connector: a.connector,
        name: a.name,
        cluster: a.cluster,
        identity: obs.identity,
        artifact_sha256: d.sha256,
        config_fingerprint: d.config.fingerprint,
      });
      continue;
    }
    if (clusterMoved(item, owned, obs)) continue;
    if (!obs.exists) {
      block(
        item,
        "BLOCKED_CONNECTOR_MISSING",
        `connector ${a.name} is owned but absent from Connect cluster ${a.cluster}: it was deleted outside sluice. sluice does not recreate it silently; declare its removal in lifecycle.connector_removals to release it, then declare it again`,
      );
      continue;
    }
    const diff = configChanges(obs.comparable, obs.shown, {
      config: a.config,
      comparable: d.config.comparable,
    });
    if (obs.fingerprints.owned !== owned.config_fingerprint) {
      block(
        item,
        "BLOCKED_CONNECTOR_DRIFT",
        `connector ${a.name} no longer has the configuration sluice submitted (owned fingerprint ${
          owned.config_fingerprint.slice(0, 12)
        }, observed ${
          obs.fingerprints.owned?.slice(0, 12)
        }): it was changed outside sluice; restore it, or delete it by hand and declare its removal`,
        {
          owned_fingerprint: owned.config_fingerprint,
          observed_fingerprint: obs.fingerprints.owned,
        },
      );
      item.changes = diff;
      continue;
    }
    if (unchanged) continue;
    item.change = "update";
    item.changes = diff;
    actions.push({
      type: "update_connector",
      connector: a.connector,
      name: a.name,
      cluster: a.cluster,
      identity: obs.identity,
      prior_artifact_sha256: owned.artifact_sha256,
      prior_config_fingerprint: owned.config_fingerprint,
      artifact_sha256: d.sha256,
      config_fingerprint: d.config.fingerprint,
    });
  }

  for (const r of input.removals) {
    const owned = input.owned.find((o) => o.name === r.connector);
    const obs = observed(r.connector);
    const item: ConnectorPlanItem = {
      connector: r.logicalName,
      name: r.connector,
      cluster: r.cluster,
      kind: owned?.kind ?? null,
      change: "none",
      topics: [],
      changes: [],
      state: stateOf(obs),
      why: [],
    };
    items.push(item);
    if (!input.observation || !obs) {
      if (owned) {
        block(
          item,
          "BLOCKED_OFFLINE_CONNECTOR_CHANGE",
          `connector ${r.connector} is declared removed; a removal is planned online (it binds the observed configuration)`,
        );
      }
      continue;
    }
    if (!obs.exists) {
      item.change = "already_absent";
      if (owned) {
        if (clusterMoved(item, owned, obs)) continue;
        item.change = "release";
        actions.push({
          type: "release_connector",
          connector: r.logicalName,
          name: r.connector,
          cluster: r.cluster,
          identity: obs.identity,
        });
      }
      continue;
    }
    if (!owned) {
      block(
        item,
        "BLOCKED_UNOWNED_CONNECTOR",
        `connector ${r.connector} is declared removed but this project did not create it, so it does not own it; ${UNOWNED_CONNECTOR_WAYS_OUT}`,
      );
      continue;
    }
    if (clusterMoved(item, owned, obs)) continue;
    if (obs.fingerprints.owned !== owned.config_fingerprint) {
      block(
        item,
        "BLOCKED_CONNECTOR_DRIFT",
        `connector ${r.connector} no longer has the configuration sluice submitted: it was changed outside sluice, so it is not the connector the removal names; restore its configuration, or delete it by hand`,
        {
          owned_fingerprint: owned.config_fingerprint,
          observed_fingerprint: obs.fingerprints.owned,
        },
      );
      continue;
    }
    item.change = "remove";
    actions.push({
      type: "remove_connector",
      connector: r.logicalName,
      name: r.connector,
      cluster: r.cluster,
      identity: obs.identity,
      config_fingerprint: owned.config_fingerprint,
    });
  }

  // an owned connector is never removed because it vanished from the project
  for (const o of input.owned) {
    if (items.some((i) => i.name === o.name)) continue;
    const item: ConnectorPlanItem = {
      connector: o.connector,
      name: o.name,
      cluster: o.cluster,
      kind: o.kind,
      change: "none",
      topics: [],
      changes: [],
      state: stateOf(observed(o.name)),
      why: [],
    };
    items.push(item);
    block(
      item,
      "BLOCKED_CONNECTOR_UNDECLARED",
      `connector ${o.name} is owned but no longer declared: sluice never removes a connector because it vanished from the project. Declare it again, or declare its removal (lifecycle.connector_removals: { logical_name: ${o.connector}, connector: ${o.name}, cluster: ${o.cluster} })`,
    );
  }

  return {
    actions,
    blockers,
    section: {
      artifacts: input.desired.map((d) => ({
        connector: d.artifact.connector,
        sha256: d.sha256,
        artifact: d.artifact,
      })),
      items,
    },
  };
}

/**
 * The ownership records after a set of connector actions: created and updated connectors
 * recorded from their artifacts and fingerprints, removed and released ones dropped. Pure and
 * deterministic, so a continuation computes the same document as the first attempt.
 *
 * @example
 * ```ts
 * import { ownedAfter } from "./connectors.ts";
 * // const next = ownedAfter(ownedConnectors(doc), actions, plan.connectors!.artifacts);
 * ```
 */
export function ownedAfter(
  owned: OwnedConnector[],
  actions: ConnectorAction[],
  artifacts: PlanConnectors["artifacts"],
): OwnedConnector[] {
  let out = owned.map((o) => ({ ...o }));
  for (const a of actions) {
    if (a.type === "remove_connector" || a.type === "release_connector") {
      out = out.filter((o) => o.name !== a.name);
      continue;
    }
    const artifact = artifacts.find((x) => x.artifact.name === a.name)?.artifact;
    if (!artifact) throw new Error(`the plan has no artifact for connector ${a.name}`);
    const keys = artifactSecretKeys(artifact);
    const record: OwnedConnector = {
      connector: a.connector,
      name: a.name,
      cluster: a.cluster,
      cluster_identity: a.identity,
      kind: artifact.kind,
      artifact_sha256: a.artifact_sha256,
      config_fingerprint: a.config_fingerprint,
      secret_keys: keys,
      secret_key_id: keys.length > 0 ? artifact.secret_key_id : null,
    };
    out = [...out.filter((o) => o.name !== a.name), record];
  }
  return out.sort((x, y) => x.name < y.name ? -1 : x.name > y.name ? 1 : 0);
}
