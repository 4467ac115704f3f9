/**
 * The Kafka Connect port: the only operations sluice performs on a Connect cluster, through its
 * REST API. Reads are exact (one named connector, never a pattern); mutations are create,
 * replace the configuration of an existing connector, and delete. Deleting a connector removes
 * the connector object only: its topics, records, consumer offsets and stored source offsets
 * stay where they are.
 *
 * Observed configurations hold whatever the worker stores, secrets included: callers redact
 * them before any display (see `lib/artifact/connector.ts`). Configurations sent by sluice
 * carry the names of the keys whose values are secret, so an error message that echoes a
 * value never shows one.
 *
 * Errors (all `SluiceError`):
 * - `ENV_CONNECT_UNREACHABLE`: no answer (nothing was sent, or a read got no response).
 * - `CONNECT_REFUSED`: the worker refused the request (4xx other than 404/409): nothing changed.
 * - `CONNECT_CONFLICT`: still 409 (rebalance, stale configuration) after bounded retries.
 * - `CONNECT_CONNECTOR_EXISTS`: create of a name that exists.
 * - `CONNECT_NOT_FOUND`: update or delete of a connector that does not exist.
 * - `CONNECT_UPDATE_RECREATED`: the connector vanished before an update, which created it anew.
 * - `UNKNOWN_OUTCOME_CONNECT`: a mutation's response was lost or was a server error: it may
 *   or may not have happened; observe the named connector to find out.
 * - `CONNECT_BAD_RESPONSE`: a read got a server error or a body of the wrong shape.
 * @module
 */

/** A connector configuration as Connect stores it: string keys and string values. */
export type ConnectorConfig = Record<string, string>;

/**
 * A configuration to send: every value resolved, plus the keys whose values hold secrets (they
 * are redacted from every error message and evidence the adapter produces).
 */
export interface ConfigSubmission {
  /** The configuration to submit (secret values resolved). */
  config: ConnectorConfig;
  /** The keys whose values are secrets (never shown). */
  secretKeys: readonly string[];
}

/** States of a connector or a task, as Connect names them. */
export type ConnectState =
  | "UNASSIGNED"
  | "RUNNING"
  | "PAUSED"
  | "STOPPED"
  | "FAILED"
  | "RESTARTING";

/** A connector's status with the state of each of its tasks. */
export interface ConnectorStatus {
  /** The connector's name. */
  name: string;
  /** `source` or `sink`; `unknown` while the connector's class cannot be loaded. */
  type: "source" | "sink" | "unknown";
  /** The connector's own state. */
  connector: { state: ConnectState; workerId: string; trace: string | null };
  /** Ordered by task ID. */
  tasks: Array<{ id: number; state: ConnectState; workerId: string; trace: string | null }>;
}

/** What `GET /` says about the worker that answered, and which endpoint was asked. */
export interface ConnectClusterInfo {
  /** Kafka Connect version of the worker, e.g. `4.1.2`. */
  version: string;
  /** The worker's build commit. */
  commit: string;
  /** The Kafka cluster ID of the broker the worker group stores its state on. */
  kafkaClusterId: string;
  /**
   * sha256 hex of the normalized REST endpoint asked: part of the cluster's identity without
   * ever writing the endpoint itself into plans or state.
   */
  endpointDigest: string;
}

/** A connector as Connect returns it from create and update. */
export interface ConnectorInfo {
  /** The connector's name. */
  name: string;
  /** Its stored configuration. */
  config: ConnectorConfig;
  /** Task IDs known so far (often empty right after a create). */
  tasks: number[];
  /** Source or sink, as the worker reports it. */
  type: "source" | "sink" | "unknown";
}

/** An installed connector plugin. */
export interface ConnectorPlugin {
  /** The plugin's Java class. */
  class: string;
  /** Source or sink. */
  type: "source" | "sink";
  /** The plugin's version. */
  version: string;
}

/** The operations sluice needs from a Kafka Connect cluster. */
export interface ConnectPort {
  /** Worker version and the Kafka cluster ID its group uses (`GET /`). */
  clusterInfo(): Promise<ConnectClusterInfo>;
  /** The installed connector plugins (`GET /connector-plugins`). */
  plugins(): Promise<ConnectorPlugin[]>;
  /** Names of every connector on the cluster, sorted (`GET /connectors`). */
  listConnectors(): Promise<string[]>;
  /** The stored configuration of one connector; null when it does not exist. */
  connectorConfig(name: string): Promise<ConnectorConfig | null>;
  /** The status of one connector and its tasks; null when it does not exist. */
  connectorStatus(name: string): Promise<ConnectorStatus | null>;

  /** Create a connector (`POST /connectors`). Fails if one of that name exists. */
  createConnector(name: string, submission: ConfigSubmission): Promise<ConnectorInfo>;
  /**
   * Replace the configuration of an existing connector (`PUT /connectors/{name}/config`).
   * Never creates one on purpose: an absent connector is `CONNECT_NOT_FOUND`.
   */
  updateConnectorConfig(name: string, submission: ConfigSubmission): Promise<ConnectorInfo>;
  /** Delete the connector object (`DELETE /connectors/{name}`); nothing else is removed. */
  deleteConnector(name: string): Promise<void>;
}
