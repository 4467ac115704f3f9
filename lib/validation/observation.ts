/**
 * The shape of a fresh observation (what `lib/runtime/observer.ts` reads from Docker and Kafka):
 * exact container identities and states, the mounted plan against its label, the environment
 * and execution options, the state volume and its instance UUID, the Kafka identities, group
 * and offsets. The planner and the driver validate these values; neither reads a provider.
 *
 * Plain data, serialisable to JSON (offsets are decimal strings).
 *
 * @example
 * ```ts
 * import type { RunnerObservation } from "./observation.ts";
 * const lag = (o: RunnerObservation) =>
 *   o.kafka.ranges.map((r) => BigInt(r.latest) - BigInt(o.kafka.committed[r.partition] ?? "0"));
 * ```
 * @module
 */
import type { ContainerInfo } from "../providers/docker/port.ts";
import type { ConnectorsObservation } from "./connector_observation.ts";

/** What to observe for one runner model. */
export interface RunnerTarget {
  applicationId: string;
  inputTopic: string;
  outputTopic: string;
  /** The pinned runner image ID (`sha256:...`). */
  image: string;
  /** The Docker network name. */
  network: string;
}

/** Evidence about one container labelled with the application ID. */
export interface ContainerEvidence {
  id: string;
  name: string;
  status: ContainerInfo["state"]["status"];
  running: boolean;
  exitCode: number;
  oomKilled: boolean;
  startedAt: string;
  finishedAt: string;
  /** Whether the container has ever been started (Docker keeps a zero StartedAt otherwise). */
  everStarted: boolean;
  imageId: string;
  networkMode: string;
  networks: Record<string, string>;
  mounts: ContainerInfo["mounts"];
  labels: {
    applicationId: string | null;
    artifactSha256: string | null;
    planSha256: string | null;
    generation: string | null;
    operationId: string | null;
    actionIndex: string | null;
    evidenceFingerprint: string | null;
  };
  plan: {
    /** sha256 of the exact bytes mounted at /etc/sluice/plan.json; null when unreadable. */
    sha256: string | null;
    /** True when those bytes hash to the container's plan label. */
    matchesLabel: boolean;
    /** The embedded artifact checksum and identities, when the bytes parse strictly. */
    artifactSha256: string | null;
    identity: { cluster_id: string; input_topic_id: string; output_topic_id: string } | null;
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
  /** Fixed execution options: image, network, mounts, restart policy, memory, entrypoint. */
  execution: { ok: boolean; problems: string[] };
  /** The volume instance file as seen through this container's mount. */
  volumeInstance: string | null;
  /** The runner's status file (written by the runner on the volume), parsed, if present. */
  runnerStatus: Record<string, unknown> | null;
}

/** Evidence about the state volume. */
export interface VolumeEvidence {
  name: string;
  exists: boolean;
  labels: Record<string, string>;
  /** The instance UUID label written at creation. */
  instanceLabel: string | null;
  /** The instance file's content (trimmed). */
  instanceFile: string | null;
}

/** Kafka evidence for one application. */
export interface KafkaEvidence {
  clusterId: string;
  input: { name: string; id: string; partitions: number } | null;
  output: { name: string; id: string; partitions: number } | null;
  group: {
    state: string;
    members: Array<
      { memberId: string; clientId: string; clientHost: string; groupInstanceId: string | null }
    >;
  };
  /** Committed offset per input partition (decimal strings); absent partitions have none. */
  committed: Record<string, string>;
  /** Earliest and latest offsets per input partition (decimal strings). */
  ranges: Array<{ partition: number; earliest: string; latest: string }>;
}

/** Everything observed for one runner model. */
export interface RunnerObservation {
  applicationId: string;
  target: RunnerTarget;
  observedAt: string;
  daemonId: string;
  /**
   * The image's own ID and environment as the daemon reports it, each value as a keyed hash
   * (`KEY=hmac:…`); null if the image is absent.
   */
  image: { id: string; env: string[] } | null;
  networkId: string | null;
  containers: ContainerEvidence[];
  volume: VolumeEvidence;
  kafka: KafkaEvidence;
}

/** Observation of several models, sharing one daemon and cluster read. */
export interface ProjectObservation {
  observedAt: string;
  daemonId: string;
  clusterId: string;
  runners: RunnerObservation[];
  /** The project's connectors (`observe` only; absent when it declares and owns none). */
  connectors?: ConnectorsObservation;
}
