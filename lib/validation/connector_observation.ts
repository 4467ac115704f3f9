/**
 * The shape of a fresh observation of Kafka Connect connectors (what
 * `lib/runtime/connector_observer.ts` reads with exact REST reads): per Connect cluster its
 * identity, and per named connector whether it exists, its configuration as keyed fingerprints
 * and a redacted display form, and its status with the state of each task. No secret value is
 * ever part of it: secret-holding values are replaced by keyed digests (comparisons) or by the
 * redaction placeholder (display).
 *
 * @example
 * ```ts
 * import type { ConnectorObservation } from "./connector_observation.ts";
 * const healthy = (o: ConnectorObservation) =>
 *   o.status?.state === "RUNNING" && o.status.tasks.every((t) => t.state === "RUNNING");
 * ```
 * @module
 */
import type { ConnectClusterIdentity } from "../state/ownership.ts";

export type { ConnectClusterIdentity };

/** What to observe for one connector name. */
export interface ConnectorTarget {
  /** The logical name. */
  connector: string;
  /** The exact name on the cluster. */
  name: string;
  /** The alias of the declared Connect cluster. */
  cluster: string;
  /** The secret keys of the desired artifact (null: not declared). */
  desiredSecretKeys: string[] | null;
  /** The secret keys of the owned record (null: not owned). */
  ownedSecretKeys: string[] | null;
}

/** One connector, observed by exact reads of its name. */
export interface ConnectorObservation {
  /** The logical name in `sluice.yaml`. */
  connector: string;
  /** The exact name on the Connect cluster. */
  name: string;
  /** The declared Connect cluster alias. */
  cluster: string;
  /** The identity of the cluster that answered. */
  identity: ConnectClusterIdentity;
  /** Whether a connector of that exact name exists. */
  exists: boolean;
  /** The stored configuration with secret values redacted (null when absent). */
  shown: Record<string, string> | null;
  /** Comparable form (secrets as keyed digests) under the union of both key sets. */
  comparable: Record<string, string> | null;
  /** Keyed fingerprints computed as the desired artifact and the owned record compute them. */
  fingerprints: { desired: string | null; owned: string | null };
  /** Connector and task states (traces are not kept: they may quote configuration values). */
  status: {
    type: "source" | "sink" | "unknown";
    state: string;
    tasks: Array<{ id: number; state: string }>;
  } | null;
}

/** A fresh observation of a project's connectors. */
export interface ConnectorsObservation {
  /** When it was observed (ISO 8601). */
  observedAt: string;
  /** Per declared cluster alias that was read: its identity and version. */
  clusters: Record<string, ConnectClusterIdentity & { version: string }>;
  /** One observation per connector, by exact name. */
  connectors: ConnectorObservation[];
}
