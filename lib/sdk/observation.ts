/**
 * What {@link SluiceProject.observe} returns: the read-only observation of every runner model,
 * with snake_case fields as every other SDK result has (docs/sdk-import.md, "Naming"). The
 * runtime's observation (`lib/validation/observation.ts`) keeps its camelCase names: the
 * planner, the journal's evidence and the CLI's `observe` JSON are made of it. The SDK renames
 * at its boundary, by one rule ({@link sdkObservation}): each field name `camelCase` becomes
 * `camel_case`; the keys of a map whose keys are data (a container's networks, a volume's
 * labels, committed offsets by partition, the runner's own status file) and of a value already
 * snake_case (the mounted plan's identity) are kept as they are.
 *
 * @example
 * ```ts
 * import type { ProjectObservation } from "./observation.ts";
 * const volumes = (o: ProjectObservation) =>
 *   o.runners.map((r) => `${r.application_id}: ${r.volume.instance_label ?? "absent"}`);
 * console.log(typeof volumes);
 * ```
 * @module
 */
import type * as runtime from "../validation/observation.ts";
import type { MountedIdentity } from "../protocol/mounted_plan.ts";
import type { ConnectorsObservation } from "../validation/connector_observation.ts";
import {
  runnerStopOf as runtimeRunnerStopOf,
  type RunnerStopReport,
} from "../validation/runner_stop.ts";

/**
 * The observation of every runner model of a project: per runner, what it was observed for
 * (`target`), every container carrying its application ID (`containers`: the evidence of each),
 * its state volume and its Kafka topics, group and offsets. Name a part by indexing:
 * `ProjectObservation["runners"][number]["containers"][number]` is one container's evidence.
 */
export interface ProjectObservation {
  /** When (RFC 3339). */
  observed_at: string;
  /** The Docker daemon's ID. */
  daemon_id: string;
  /** The Kafka cluster's ID. */
  cluster_id: string;
  /** One observation per runner model. */
  runners: Array<{
    /** The application ID. */
    application_id: string;
    /** What was observed. */
    target: {
      /** The model's application ID (container label, volume name, group ID). */
      application_id: string;
      /** The input topic's name. */
      input_topic: string;
      /** The output topic's name. */
      output_topic: string;
      /** The dead-letter topic's name (`on_invalid: dead_letter`); absent when the model stops. */
      dead_letter_topic?: string;
      /** The pinned runner image ID (`sha256:...`). */
      image: string;
      /** The Docker network name. */
      network: string;
    };
    /** When (RFC 3339). */
    observed_at: string;
    /** The Docker daemon's ID. */
    daemon_id: string;
    /** The image's own ID and environment (each value a keyed hash); null if absent. */
    image: { id: string; env: string[] } | null;
    /** The network's ID; null when absent. */
    network_id: string | null;
    /** Every container carrying the application ID. */
    containers: Array<{
      /** The container's exact ID. */
      id: string;
      /** Its name. */
      name: string;
      /** Docker's status (`created`, `running`, `exited`, ...). */
      status: string;
      /** Whether it is running. */
      running: boolean;
      /** The raw exit code (meaningful once exited). */
      exit_code: number;
      /** Whether the kernel's OOM killer stopped it. */
      oom_killed: boolean;
      /** Docker's own error for the container's last run (`State.Error`; empty when none). */
      docker_error: string;
      /** When it last started (RFC 3339; Docker's zero time if never). */
      started_at: string;
      /** When it last finished (RFC 3339; Docker's zero time if never). */
      finished_at: string;
      /** Whether the container has ever been started. */
      ever_started: boolean;
      /** The image ID it was created from. */
      image_id: string;
      /** The network it was created on. */
      network_mode: string;
      /** Network name → network ID it is attached to. */
      networks: Record<string, string>;
      /** Its mounts. */
      mounts: Array<{
        type: string;
        /** Volume name (volumes) or host path (binds). */
        source: string;
        destination: string;
        read_only: boolean;
      }>;
      /** sluice's labels on it (null where absent). */
      labels: {
        application_id: string | null;
        artifact_sha256: string | null;
        plan_sha256: string | null;
        generation: string | null;
        operation_id: string | null;
        action_index: string | null;
        evidence_fingerprint: string | null;
      };
      /** The plan file mounted into it, read through the container. */
      plan: {
        /** sha256 of the exact bytes mounted at /etc/sluice/plan.json; null when unreadable. */
        sha256: string | null;
        /** True when those bytes hash to the container's plan label. */
        matches_label: boolean;
        /** The embedded artifact checksum, when the bytes parse strictly. */
        artifact_sha256: string | null;
        /** The embedded Kafka identities, when the bytes parse strictly. */
        identity: {
          /** The Kafka cluster ID. */
          cluster_id: string;
          /** The input topic's ID (base64url UUID). */
          input_topic_id: string;
          /** The output topic's ID. */
          output_topic_id: string;
          /** The dead-letter topic's ID, exactly when the artifact has `on_invalid`. */
          dead_letter_topic_id?: string;
        } | null;
        /** Why the plan did not parse, when it did not. */
        error: string | null;
        /** The mounted bytes as text (they hold no secret: the artifact has none). */
        text: string | null;
      };
      /**
       * Environment against the pinned image's environment plus sluice's own variables. Entries are
       * `KEY=hmac:…` (values compared as keyed hashes; no value ever leaves the observer).
       */
      environment: { ok: boolean; unexpected: string[]; missing: string[] };
      /** Fixed execution options (image, network, mounts, restart policy, memory, ...). */
      execution: { ok: boolean; problems: string[] };
      /** The volume instance file as seen through this container's mount. */
      volume_instance: string | null;
      /** The runner's status file, parsed, as the runner wrote it; null when absent or not read. */
      runner_status: Record<string, unknown> | null;
    }>;
    /** The state volume. */
    volume: {
      /** The volume name (derived from the application ID). */
      name: string;
      /** Whether it exists. */
      exists: boolean;
      /** Its labels. */
      labels: Record<string, string>;
      /** The instance UUID label written at creation. */
      instance_label: string | null;
      /** The instance file's content (trimmed), as `instance_file_via`'s mount shows it. */
      instance_file: string | null;
      /** The container through whose mount the instance file was read; null when none mounts it. */
      instance_file_via: string | null;
    };
    /** Topics, group and offsets. */
    kafka: {
      /** The cluster ID. */
      cluster_id: string;
      /**
       * The input topic as the broker reports it (its ID a base64url UUID, its partition count);
       * null when absent.
       */
      input: { name: string; id: string; partitions: number } | null;
      /** The output topic; null when absent. */
      output: { name: string; id: string; partitions: number } | null;
      /** The dead-letter topic, for a target with one; null when absent (left out without one). */
      dead_letter?: { name: string; id: string; partitions: number } | null;
      /** The consumer group (the application ID): its state and members. */
      group: {
        state: string;
        members: Array<{
          member_id: string;
          client_id: string;
          client_host: string;
          group_instance_id: string | null;
          /** The partitions the group's last assignment gave it, per topic. */
          assignment: Array<{ topic: string; partitions: number[] }>;
        }>;
      };
      /** Committed offset per input partition (decimal strings); absent partitions have none. */
      committed: Record<string, string>;
      /** Earliest and latest offsets per input partition (decimal strings). */
      ranges: Array<{ partition: number; earliest: string; latest: string }>;
    };
  }>;
  /**
   * The project's connectors (absent when it declares and owns none).
   * @internal the connectors' evidence; its shape is not part of the versioned SDK (`status`
   * reports them)
   */
  connectors?: ConnectorsObservation;
}

/**
 * Where a value's keys are data, not field names, or already snake_case (kept as they are), as
 * paths from a
 * {@link ProjectObservation} (`*` is any array element).
 */
export const OBSERVATION_DATA_KEYS: readonly string[] = [
  "connectors",
  "runners.*.containers.*.networks",
  "runners.*.containers.*.plan.identity",
  "runners.*.containers.*.runner_status",
  "runners.*.volume.labels",
  "runners.*.kafka.committed",
];

/** `camelCase` → `camel_case`. */
function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function renamed(value: unknown, path: string): unknown {
  if (OBSERVATION_DATA_KEYS.includes(path)) return value;
  if (Array.isArray(value)) return value.map((v) => renamed(v, path ? `${path}.*` : "*"));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => {
      const name = snake(k);
      return [name, renamed(v, path ? `${path}.${name}` : name)];
    }),
  );
}

/**
 * The SDK's observation from the runtime's: every field name in snake_case, the data keys of
 * {@link OBSERVATION_DATA_KEYS} as they are.
 *
 * @example
 * ```ts
 * import { sdkObservation } from "./observation.ts";
 * import type { ProjectObservation } from "../validation/observation.ts";
 * const cluster = (o: ProjectObservation) => sdkObservation(o).cluster_id;
 * console.log(typeof cluster);
 * ```
 */
export function sdkObservation(o: runtime.ProjectObservation): ProjectObservation {
  return renamed(o, "") as ProjectObservation;
}

/**
 * Why a container of an observation is stopped: the runner's own reason when its status file
 * explains this exit, else what its exit code means in the shared exit table; null while it
 * runs or before its first start.
 *
 * @example
 * ```ts
 * import { runnerStopOf, type ProjectObservation } from "./observation.ts";
 * const why = (o: ProjectObservation) =>
 *   o.runners.flatMap((r) => r.containers.map((c) => runnerStopOf(c)?.summary ?? "running"));
 * console.log(typeof why);
 * ```
 */
export function runnerStopOf(
  c: ProjectObservation["runners"][number]["containers"][number],
): RunnerStopReport | null {
  return runtimeRunnerStopOf({
    running: c.running,
    everStarted: c.ever_started,
    exitCode: c.exit_code,
    oomKilled: c.oom_killed,
    runnerStatus: c.runner_status,
  });
}

/** The mounted plan's identity, as the observation's inline copy of it (checked when this compiles). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _sameIdentity: Same<
  NonNullable<ProjectObservation["runners"][number]["containers"][number]["plan"]["identity"]>,
  MountedIdentity
> = true;
