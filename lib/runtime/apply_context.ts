/**
 * What every journey an apply routes takes (the outside world, passed in: no hidden globals) and
 * what the apply gives back, whichever journey carried it out.
 *
 * @example
 * ```ts
 * import type { ApplyResult } from "./apply_context.ts";
 * const done = (r: ApplyResult) => r.noop || r.operation_id !== null;
 * ```
 * @module
 */
import type { RunnerCredentialsEvidence } from "../plan/runner_credentials.ts";
import type { PlannedAction } from "../plan/plan.ts";
import type { StateStore } from "../state/store.ts";
import type { DockerPort } from "../providers/docker/port.ts";
import type { DockerAt } from "./endpoint_ports.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import type { ConnectPort } from "../providers/connect/port.ts";
import type { Clock, UuidSource } from "./deps.ts";
import type { ProgressListener } from "./progress.ts";
import type { RemovalResult } from "./removal.ts";
import type { ConnectorApplyResult } from "./connectors.ts";

/** Everything an apply needs from the outside, passed in (no hidden globals). */
export interface RuntimeContext {
  docker: DockerPort;
  /**
   * The Docker port of a `docker.endpoints` daemon by name (null: `docker`), for a set's
   * instances (`Session.dockerAt`); absent: only `docker` is reached.
   */
  dockerAt?: DockerAt;
  kafka: KafkaPort;
  /** The Connect port of a declared cluster alias (needed only by plans with connector changes). */
  connect?: (cluster: string) => ConnectPort;
  store: StateStore;
  /** Who is acting (recorded in intents, locks and audit). */
  actor: string;
  /** Bootstrap address runners use on the Docker network. */
  bootstrapInternal: string;
  /** Host directory where mounted plan files live (content-addressed, never overwritten). */
  plansDir: string;
  /** The project's current source hash (re-read from disk by the caller). */
  sourceSha256: string;
  /** Progress events (the CLI prints one line per event on a terminal). */
  onProgress?: ProgressListener;
  /** Cancels the journey at its next durable boundary or inside a bounded wait (`CANCELLED`). */
  signal?: AbortSignal;
  /** Default: the system clock and random UUIDs. */
  clock?: Clock;
  uuids?: UuidSource;
  /** How long a runner may take to report RUNNING (default 120 s). */
  readyTimeoutMs?: number;
  /** Labels added to every container and volume sluice creates (e.g. a test run's label). */
  extraLabels?: Record<string, string>;
  /** Remove a stale local lock left by a dead process first (explicit; never silent). */
  breakStaleLock?: string;
}

/** The result of an apply. */
export interface ApplyResult {
  /** True when nothing needed doing (nothing was written). */
  noop: boolean;
  /** True when the plan was already applied (a verified repeat: nothing written). */
  already_applied: boolean;
  /** The operation's UUID; null for a no-op. */
  operation_id: string | null;
  /** The ownership serial after the apply. */
  serial: number;
  /**
   * The actions carried out.
   * @internal the plan's actions and the connector journal as applied; their shape is not part of
   * the versioned SDK
   */
  actions: PlannedAction[];
  /** Each runner created: its container and its volume's instance UUID. */
  runners: Array<{
    model: string;
    application_id: string;
    container_id: string;
    volume_instance: string;
    /** An instance of a set: its index (absent for a model of one instance). */
    instance?: number;
    /** An instance of a set: the endpoint it was created on (null: the one daemon). */
    endpoint?: string | null;
  }>;
  /**
   * The connector operation, when the plan changes connectors (absent otherwise).
   * @internal the plan's actions and the connector journal as applied; their shape is not part of
   * the versioned SDK
   */
  connectors?: ConnectorApplyResult;
  /** The runner removal operation, when the plan removes runners (absent otherwise). */
  removals?: RemovalResult;
  /**
   * A pending operation continued with other runner credentials than its plan bound
   * (`lib/plan/runner_credentials.ts`): the plan's and the current keyed hashes, never a secret.
   * Absent otherwise.
   */
  runner_client_changed?: RunnerCredentialsEvidence;
}
