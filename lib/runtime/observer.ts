/**
 * Read-only observation of runner models: exact container identities and states, the mounted
 * plan's bytes against the plan label, the environment against the pinned image and the fixed
 * execution options, the state volume and its instance UUID, and the Kafka identities, group
 * and offsets. It never stops, removes, creates or starts anything (a volume is read through a
 * created, never-started scratch container when no runner container exists).
 *
 * The result is one plain value, serialisable to JSON (offsets are decimal strings).
 *
 * @example
 * ```ts
 * import { observeRunners } from "./observer.ts";
 * import { dockerodePort } from "../providers/docker/dockerode.ts";
 * import { platformaticKafka } from "../providers/kafka/platformatic.ts";
 * const kafka = platformaticKafka("127.0.0.1:9094");
 * const obs = await observeRunners({ docker: dockerodePort(), kafka }, [{
 *   applicationId: "sluice-orders-eligible_orders", inputTopic: "raw_orders",
 *   outputTopic: "eligible_orders", image: "sha256:...", network: "sluice-net",
 * }]);
 * console.log(JSON.stringify(obs, null, 2));
 * await kafka.close();
 * ```
 * @module
 */
import { sha256Hex } from "../artifact/canonical.ts";
import { envFingerprint } from "../artifact/redact.ts";
import type { ContainerInfo, DockerPort } from "../providers/docker/port.ts";
import type {
  ContainerEvidence,
  ProjectObservation,
  RunnerObservation,
  RunnerTarget,
  VolumeEvidence,
} from "../validation/observation.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import { LABEL, RUNNER_ENV, RUNNER_EXECUTION, RUNNER_PATHS, volumeName } from "./labels.ts";
import { parseMountedPlan } from "../protocol/mounted_plan.ts";
import { type Clock, isoNow, SYSTEM_CLOCK } from "./deps.ts";

/** The ports the observer reads through, and the clock that stamps the observation. */
export interface ObserverPorts {
  docker: DockerPort;
  kafka: KafkaPort;
  /** Default: the system clock. */
  clock?: Clock;
}

const ZERO_TIME = "0001-01-01T00:00:00Z";

/** Observe one runner model. */
export async function observeRunner(
  ports: ObserverPorts,
  target: RunnerTarget,
): Promise<RunnerObservation> {
  const p = await observeRunners(ports, [target]);
  return p.runners[0];
}

/**
 * Observe several runner models. Kafka topic identities come from one metadata read for all
 * topics; the daemon ID, the image and the network are read once per distinct value.
 */
export async function observeRunners(
  ports: ObserverPorts,
  targets: RunnerTarget[],
): Promise<ProjectObservation> {
  const { docker, kafka } = ports;
  const observedAt = isoNow(ports.clock ?? SYSTEM_CLOCK);
  const topics = [...new Set(targets.flatMap((t) => [t.inputTopic, t.outputTopic]))];
  const [daemonId, cluster] = await Promise.all([docker.daemonId(), kafka.describe(topics)]);
  const images = new Map<string, Promise<{ id: string; env: string[] } | null>>();
  const networks = new Map<string, Promise<string | null>>();
  const runners: RunnerObservation[] = [];
  for (const target of targets) {
    if (!images.has(target.image)) {
      images.set(
        target.image,
        docker.inspectImage(target.image).then((i) =>
          i ? { id: i.id, env: i.env.map(envFingerprint) } : null
        ),
      );
    }
    if (!networks.has(target.network)) {
      networks.set(target.network, docker.networkId(target.network));
    }
    const image = await images.get(target.image)!;
    const input = cluster.topics.get(target.inputTopic) ?? null;
    const output = cluster.topics.get(target.outputTopic) ?? null;
    const partitions = input ? [...Array(input.partitions).keys()] : [];
    // Kafka and Docker reads are independent: run them concurrently (each is a round trip)
    const kafkaReads = Promise.all([
      kafka.describeGroup(target.applicationId),
      input ? kafka.committedOffsets(target.applicationId, input.name) : new Map<number, bigint>(),
      input ? kafka.offsetRanges(input.name, partitions) : [],
    ]);
    // if a Docker read fails first, the Kafka error must not surface as an unhandled rejection
    kafkaReads.catch(() => {});
    const containers = await docker.listContainers(LABEL.applicationId, target.applicationId);
    const evidence = await Promise.all(
      containers.map((c) => containerEvidence(docker, c, target, image)),
    );
    const volume = await volumeEvidence(docker, target, evidence, image !== null);
    const [group, committed, ranges] = await kafkaReads;
    runners.push({
      applicationId: target.applicationId,
      target,
      observedAt,
      daemonId,
      image,
      networkId: await networks.get(target.network)!,
      containers: evidence,
      volume,
      kafka: {
        clusterId: cluster.clusterId,
        input,
        output,
        group: { state: group.state, members: group.members },
        committed: Object.fromEntries([...committed].map(([p, o]) => [String(p), o.toString()])),
        ranges: ranges.map((r) => ({
          partition: r.partition,
          earliest: r.earliest.toString(),
          latest: r.latest.toString(),
        })),
      },
    });
  }
  return { observedAt, daemonId, clusterId: cluster.clusterId, runners };
}

async function containerEvidence(
  docker: DockerPort,
  c: ContainerInfo,
  target: RunnerTarget,
  image: { id: string; env: string[] } | null,
): Promise<ContainerEvidence> {
  const label = (k: string) => c.labels[k] ?? null;
  const planLabel = label(LABEL.planSha256);
  const [bytes, instanceBytes, statusBytes] = await Promise.all([
    docker.readContainerFile(c.id, RUNNER_PATHS.plan),
    docker.readContainerFile(c.id, RUNNER_PATHS.instanceFile),
    docker.readContainerFile(c.id, RUNNER_PATHS.statusFile),
  ]);
  const plan: ContainerEvidence["plan"] = {
    sha256: null,
    matchesLabel: false,
    artifactSha256: null,
    identity: null,
    error: null,
    text: null,
  };
  if (bytes === null) {
    plan.error = `no file at ${RUNNER_PATHS.plan}`;
  } else {
    plan.sha256 = sha256Hex(bytes);
    plan.matchesLabel = planLabel !== null && plan.sha256 === planLabel;
    plan.text = new TextDecoder().decode(bytes);
    try {
      const parsed = parseMountedPlan(bytes);
      plan.artifactSha256 = parsed.artifact_sha256;
      plan.identity = parsed.identity;
    } catch (error) {
      plan.error = (error as Error).message;
    }
  }

  // The environment is the image's plus exactly sluice's two variables, nothing else. Values
  // are compared as keyed hashes (the image's already are) so none is kept or shown.
  const expectedEnv = [...(image?.env ?? [])];
  if (planLabel !== null) expectedEnv.push(envFingerprint(`${RUNNER_ENV.planSha256}=${planLabel}`));
  const generation = label(LABEL.generation);
  if (generation !== null) {
    expectedEnv.push(envFingerprint(`${RUNNER_ENV.generation}=${generation}`));
  }
  const actualEnv = c.env.map(envFingerprint);
  const unexpected = actualEnv.filter((e) => !expectedEnv.includes(e));
  const missing = expectedEnv.filter((e) => !actualEnv.includes(e));

  const problems: string[] = [];
  if (c.imageId !== target.image) {
    problems.push(`image ${c.imageId} is not the pinned ${target.image}`);
  }
  if (c.networkMode !== target.network) {
    problems.push(`network ${c.networkMode} is not ${target.network}`);
  }
  // attached networks must be exactly the target one: a runner connected to another network
  // afterwards (docker network connect) is not the reviewed execution
  const extra = Object.keys(c.networks).filter((n) => n !== target.network);
  if (extra.length > 0) {
    problems.push(`network attachments ${extra.join(", ")} besides ${target.network}`);
  }
  if (c.restartPolicy !== RUNNER_EXECUTION.restartPolicy && c.restartPolicy !== "") {
    problems.push(`restart policy ${c.restartPolicy}`);
  }
  if (c.memory !== RUNNER_EXECUTION.memoryBytes) problems.push(`memory limit ${c.memory}`);
  const planMount = c.mounts.find((m) => m.destination === RUNNER_PATHS.plan);
  if (!planMount || planMount.type !== "bind" || !planMount.readOnly) {
    problems.push(`plan is not bind-mounted read-only at ${RUNNER_PATHS.plan}`);
  }
  const volMount = c.mounts.find((m) => m.destination === RUNNER_PATHS.volume);
  if (
    !volMount || volMount.type !== "volume" || volMount.source !== volumeName(target.applicationId)
  ) {
    problems.push(
      `volume ${volumeName(target.applicationId)} is not mounted at ${RUNNER_PATHS.volume}`,
    );
  }
  if (c.mounts.length !== 2) problems.push(`${c.mounts.length} mounts instead of 2`);
  if (c.entrypoint.length > 0 && image === null) {
    problems.push("image absent: entrypoint unverifiable");
  }

  let runnerStatus: Record<string, unknown> | null = null;
  if (statusBytes) {
    try {
      runnerStatus = JSON.parse(new TextDecoder().decode(statusBytes));
    } catch {
      runnerStatus = { unreadable: true };
    }
  }
  return {
    id: c.id,
    name: c.name,
    status: c.state.status,
    running: c.state.running,
    exitCode: c.state.exitCode,
    oomKilled: c.state.oomKilled,
    startedAt: c.state.startedAt,
    finishedAt: c.state.finishedAt,
    everStarted: c.state.startedAt !== ZERO_TIME && c.state.startedAt !== "",
    imageId: c.imageId,
    networkMode: c.networkMode,
    networks: c.networks,
    mounts: c.mounts,
    labels: {
      applicationId: label(LABEL.applicationId),
      artifactSha256: label(LABEL.artifactSha256),
      planSha256: planLabel,
      generation,
      operationId: label(LABEL.operationId),
      actionIndex: label(LABEL.actionIndex),
      evidenceFingerprint: label(LABEL.evidenceFingerprint),
    },
    plan,
    environment: { ok: unexpected.length === 0 && missing.length === 0, unexpected, missing },
    execution: { ok: problems.length === 0, problems },
    volumeInstance: instanceBytes ? new TextDecoder().decode(instanceBytes).trim() : null,
    runnerStatus,
  };
}

async function volumeEvidence(
  docker: DockerPort,
  target: RunnerTarget,
  containers: ContainerEvidence[],
  imagePresent: boolean,
): Promise<VolumeEvidence> {
  const name = volumeName(target.applicationId);
  const v = await docker.inspectVolume(name);
  if (!v) return { name, exists: false, labels: {}, instanceLabel: null, instanceFile: null };
  // Read the instance file through a container that mounts this volume when there is one;
  // otherwise through a never-started scratch container of the pinned image.
  const viaContainer = containers.find((c) =>
    c.mounts.some((m) => m.type === "volume" && m.source === name) && c.volumeInstance !== null
  );
  let instanceFile = viaContainer?.volumeInstance ?? null;
  if (instanceFile === null && imagePresent) {
    instanceFile = (await docker.readVolumeFile(name, target.image, RUNNER_PATHS.instanceFile))
      ?.trim() ?? null;
  }
  return {
    name,
    exists: true,
    labels: v.labels,
    instanceLabel: v.labels[LABEL.volumeInstance] ?? null,
    instanceFile,
  };
}
