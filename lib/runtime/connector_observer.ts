/**
 * Read-only observation of Kafka Connect connectors: per cluster alias one `GET /` (its Kafka
 * cluster ID; the endpoint's digest), per connector name exact reads of its configuration and
 * its status with task states — never a list or a pattern. It never creates, changes or deletes
 * anything. Secret-holding values leave this module only as keyed digests (fingerprints and the
 * comparable form) or redacted (the display form).
 *
 * @example
 * ```ts
 * import { observeConnectors } from "./connector_observer.ts";
 * import { restConnect } from "../providers/connect/rest.ts";
 * const obs = await observeConnectors({ connect: () => restConnect("http://127.0.0.1:8083"), hashKey: null }, [
 *   { connector: "orders_in", name: "sluice-orders-orders_in", cluster: "main",
 *     desiredSecretKeys: [], ownedSecretKeys: null },
 * ]);
 * console.log(obs.connectors[0].exists, obs.connectors[0].status?.tasks);
 * ```
 * @module
 */
import {
  comparableConfig,
  connectorConfigFingerprint,
  redactConfigValues,
} from "../artifact/connector.ts";
import type { ConnectPort } from "../providers/connect/port.ts";
import type {
  ConnectorObservation,
  ConnectorsObservation,
  ConnectorTarget,
} from "../validation/connector_observation.ts";
import { type Clock, isoNow, SYSTEM_CLOCK } from "./deps.ts";

/** The ports the connector observer reads through. */
export interface ConnectorObserverPorts {
  /** The Connect port of a declared cluster alias. */
  connect: (cluster: string) => ConnectPort;
  /** The digest key (`SLUICE_SECRET_HASH_KEY`); null when no target has secret keys. */
  hashKey: string | null;
  clock?: Clock;
}

/**
 * Observe connectors by their exact names. One cluster-info read per alias; the connectors of
 * one cluster are read concurrently.
 *
 * @example
 * ```ts
 * // const obs = await observeConnectors({ connect: p.connect, hashKey: null }, setup.targets);
 * ```
 */
export async function observeConnectors(
  ports: ConnectorObserverPorts,
  targets: ConnectorTarget[],
): Promise<ConnectorsObservation> {
  const observedAt = isoNow(ports.clock ?? SYSTEM_CLOCK);
  const aliases = [...new Set(targets.map((t) => t.cluster))].sort();
  const clusters: ConnectorsObservation["clusters"] = {};
  for (const alias of aliases) {
    const info = await ports.connect(alias).clusterInfo();
    clusters[alias] = {
      kafka_cluster_id: info.kafkaClusterId,
      endpoint_digest: info.endpointDigest,
      version: info.version,
    };
  }
  const connectors = await Promise.all(targets.map(async (t): Promise<ConnectorObservation> => {
    const port = ports.connect(t.cluster);
    const [config, status] = await Promise.all([
      port.connectorConfig(t.name),
      port.connectorStatus(t.name),
    ]);
    const { kafka_cluster_id, endpoint_digest } = clusters[t.cluster];
    const union = [...new Set([...(t.desiredSecretKeys ?? []), ...(t.ownedSecretKeys ?? [])])]
      .sort();
    const fingerprint = (keys: string[] | null) =>
      config === null || keys === null
        ? null
        : connectorConfigFingerprint(config, keys, ports.hashKey);
    return {
      connector: t.connector,
      name: t.name,
      cluster: t.cluster,
      identity: { kafka_cluster_id, endpoint_digest },
      exists: config !== null,
      shown: config === null ? null : redactConfigValues(config, union),
      comparable: config === null ? null : comparableConfig(config, union, ports.hashKey),
      fingerprints: {
        desired: fingerprint(t.desiredSecretKeys),
        owned: fingerprint(t.ownedSecretKeys),
      },
      status: status === null ? null : {
        type: status.type,
        state: status.connector.state,
        tasks: status.tasks.map((x) => ({ id: x.id, state: x.state })),
      },
    };
  }));
  return { observedAt, clusters, connectors };
}
