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
import type { MountedIdentity } from "../protocol/mounted_plan.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";

/** What to observe for one runner model. */
export interface RunnerTarget {
  /** The model's application ID (container label, volume name, group ID). */
  applicationId: string;
  /** The input topic's name. */
  inputTopic: string;
  /** The output topic's name. */
  outputTopic: string;
  /** The dead-letter topic's name (`on_invalid: dead_letter`); absent when the model stops. */
  deadLetterTopic?: string;
  /** The pinned runner image ID (`sha256:...`). */
  image: string;
  /** The Docker network name. */
  network: string;
  /**
   * One instance of a set (`instances: N > 1`): only the containers labelled as that instance
   * (instance 0: none labelled) and that instance's own state volume. Absent: a single runner,
   * every container carrying the application ID.
   */
  instance?: number;
}

/**
 * What to observe for a runner of this artifact: its application ID, topics (the dead-letter
 * topic when it has one), image and network. The one derivation of a target from an artifact.
 *
 * @example
 * ```ts
 * import { targetOfArtifact } from "./observation.ts";
 * import type { RunnerArtifact } from "../artifact/artifact.ts";
 * const topics = (a: RunnerArtifact) => targetOfArtifact(a).deadLetterTopic ?? "none";
 * ```
 */
export function targetOfArtifact(artifact: RunnerArtifact): RunnerTarget {
  return {
    applicationId: artifact.application_id,
    inputTopic: artifact.input.topic,
    outputTopic: artifact.output.topic,
    ...(artifact.on_invalid ? { deadLetterTopic: artifact.on_invalid.topic } : {}),
    image: artifact.image,
    network: artifact.network,
  };
}

/** Evidence about one container labelled with the application ID. */
export interface ContainerEvidence {
  /** The container's exact ID. */
  id: string;
  /** Its name. */
  name: string;
  /** Docker's status (`created`, `running`, `exited`, ...). */
  status: ContainerInfo["state"]["status"];
  /** Whether it is running. */
  running: boolean;
  /** The raw exit code (meaningful once exited). */
  exitCode: number;
  /** Whether the kernel's OOM killer stopped it. */
  oomKilled: boolean;
  /** Docker's own error for the container's last run (`State.Error`; empty when none). */
  dockerError: string;
  /** When it last started (RFC 3339; Docker's zero time if never). */
  startedAt: string;
  /** When it last finished (RFC 3339; Docker's zero time if never). */
  finishedAt: string;
  /**
   * Whether the container has ever been started: it runs, or its StartedAt is set (Docker keeps a
   * zero StartedAt for a container it never started, and for one a restarted daemon restored as
   * running while its start was under way).
   */
  everStarted: boolean;
  /** The image ID it was created from. */
  imageId: string;
  /** The network it was created on. */
  networkMode: string;
  /** Network name → network ID it is attached to. */
  networks: Record<string, string>;
  /** Its mounts. */
  mounts: ContainerInfo["mounts"];
  /** sluice's labels on it (null where absent). */
  labels: {
    applicationId: string | null;
    artifactSha256: string | null;
    planSha256: string | null;
    generation: string | null;
    operationId: string | null;
    actionIndex: string | null;
    evidenceFingerprint: string | null;
  };
  /** The plan file mounted into it, read through the container. */
  plan: {
    /** sha256 of the exact bytes mounted at /etc/sluice/plan.json; null when unreadable. */
    sha256: string | null;
    /** True when those bytes hash to the container's plan label. */
    matchesLabel: boolean;
    /** The embedded artifact checksum and identities, when the bytes parse strictly. */
    artifactSha256: string | null;
    identity: MountedIdentity | null;
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
  /**
   * Fixed execution options: image, network, mounts, restart policy, memory, stop timeout, and
   * the entrypoint and command (the pinned image's: sluice overrides neither). A problem starting
   * `image ` or `network ` is a wrong image or network; any other is execution drift.
   */
  execution: { ok: boolean; problems: string[] };
  /** The volume instance file as seen through this container's mount. */
  volumeInstance: string | null;
  /**
   * The runner's status file (written by the runner on the volume), parsed; null when absent,
   * or not read (an observation that decides without it, `ObserveOptions.status`).
   */
  runnerStatus: Record<string, unknown> | null;
}

/** Evidence about the state volume. */
export interface VolumeEvidence {
  /** The volume name (derived from the application ID). */
  name: string;
  /** Whether it exists. */
  exists: boolean;
  /** Its labels. */
  labels: Record<string, string>;
  /** The instance UUID label written at creation. */
  instanceLabel: string | null;
  /** The instance file's content (trimmed), as {@link instanceFileVia}'s mount shows it. */
  instanceFile: string | null;
  /**
   * The container through whose mount the instance file was read; null when no container
   * mounts the volume. Observation creates nothing to read it then: the label is the evidence
   * until a container mounts the volume (a replacement's candidate, before its first start).
   */
  instanceFileVia: string | null;
}

/** Kafka evidence for one application. */
export interface KafkaEvidence {
  /** The cluster ID. */
  clusterId: string;
  /** The input topic as the broker reports it; null when absent. */
  input: { name: string; id: string; partitions: number } | null;
  /** The output topic as the broker reports it; null when absent. */
  output: { name: string; id: string; partitions: number } | null;
  /**
   * The dead-letter topic as the broker reports it, for a target with one; null when absent
   * (left out for a target without one).
   */
  deadLetter?: { name: string; id: string; partitions: number } | null;
  /** The consumer group (the application ID): its state and members. */
  group: {
    state: string;
    members: Array<{
      memberId: string;
      clientId: string;
      clientHost: string;
      groupInstanceId: string | null;
      /** The partitions the group's last assignment gave it, per topic. */
      assignment: Array<{ topic: string; partitions: number[] }>;
    }>;
  };
  /** Committed offset per input partition (decimal strings); absent partitions have none. */
  committed: Record<string, string>;
  /** Earliest and latest offsets per input partition (decimal strings). */
  ranges: Array<{ partition: number; earliest: string; latest: string }>;
}

/** Everything observed for one runner model. */
export interface RunnerObservation {
  /** The application ID. */
  applicationId: string;
  /** What was observed. */
  target: RunnerTarget;
  /** When (RFC 3339). */
  observedAt: string;
  /** The Docker daemon's ID. */
  daemonId: string;
  /**
   * The image's own ID and environment as the daemon reports it, each value as a keyed hash
   * (`KEY=hmac:…`); null if the image is absent.
   */
  image: { id: string; env: string[] } | null;
  /** The network's ID; null when absent. */
  networkId: string | null;
  /** Every container carrying the application ID. */
  containers: ContainerEvidence[];
  /** The state volume. */
  volume: VolumeEvidence;
  /** Topics, group and offsets. */
  kafka: KafkaEvidence;
}

/** Observation of several models, sharing one daemon and cluster read. */
export interface ProjectObservation {
  /** When (RFC 3339). */
  observedAt: string;
  /** The Docker daemon's ID. */
  daemonId: string;
  /** The Kafka cluster's ID. */
  clusterId: string;
  /** One observation per runner model. */
  runners: RunnerObservation[];
  /**
   * The project's connectors (`observe` only; absent when it declares and owns none).
   * @internal the connectors' evidence; its shape is not part of the versioned SDK (`status`
   * reports them)
   */
  connectors?: ConnectorsObservation;
}
