/**
 * Read-only observation of runner models: exact container identities and states, the mounted
 * plan's bytes against the plan label, the environment against the pinned image and the fixed
 * execution options (image, network and attachments, restart policy, memory, stop timeout,
 * mounts, and the image's own entrypoint and command), the state volume and its instance UUID,
 * and the Kafka identities, group and offsets. It never stops, removes, creates or starts
 * anything — not even a helper container: a volume's instance file is read only through a
 * container that already mounts it (with none, the volume's label is the evidence; see
 * `checkVolume`).
 *
 * Its cost does not grow with the model count: one metadata read, one group description, one
 * offsets fetch and one listing of the earliest and latest offsets for every model together;
 * one container listing and one volume listing, then one inspect per container, and one more
 * after its status file is read, so that the file is known to be the reported process's. Files are
 * read through the archive API only when they can have changed: the mounted plan is cached
 * per container ID and plan label, and the instance file per container ID and volume (a
 * container pins its volume: Docker refuses to remove a volume any container references), for
 * as long as the Docker port object lives (one command). The runner's status file is read
 * fresh, and only for the containers {@link ObserveOptions.status} selects.
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
import { type ContainerInfo, type DockerPort, dockerTimeSet } from "../providers/docker/port.ts";
import type {
  ContainerEvidence,
  ProjectObservation,
  RunnerObservation,
  RunnerTarget,
  VolumeEvidence,
} from "../validation/observation.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import {
  instanceOfLabels,
  instanceVolumeName,
  LABEL,
  RUNNER_ENV,
  RUNNER_EXECUTION,
  RUNNER_PATHS,
} from "./labels.ts";
import { parseMountedPlan } from "../protocol/mounted_plan.ts";
import { type Clock, isoNow, SYSTEM_CLOCK } from "./deps.ts";

/** The ports the observer reads through, and the clock that stamps the observation. */
export interface ObserverPorts {
  docker: DockerPort;
  kafka: KafkaPort;
  /** Default: the system clock. */
  clock?: Clock;
}

/** What an observation reads besides the identities, containers, volume and Kafka state. */
export interface ObserveOptions {
  /**
   * Whose runner status file to read (one archive read each, never cached): by default every
   * container's. A caller that decides on only some of them (a replacement row's guard, the
   * planner) selects those; the others report `runnerStatus: null`.
   */
  status?: (c: ContainerInfo) => boolean;
}

/** Containers whose files are read at once. */
const FILE_READS_AT_ONCE = 8;

/** Files that cannot change while their container exists, per Docker port object. */
interface FileCache {
  /** `containerId planLabel` → the mounted plan bytes that hash to that label. */
  plans: Map<string, Uint8Array>;
  /** `containerId volume` → the instance file as that container's mount shows it. */
  instances: Map<string, string>;
}
const CACHES = new WeakMap<DockerPort, FileCache>();

function cacheOf(docker: DockerPort): FileCache {
  let c = CACHES.get(docker);
  if (!c) CACHES.set(docker, c = { plans: new Map(), instances: new Map() });
  return c;
}

/** Observe one runner model. */
export async function observeRunner(
  ports: ObserverPorts,
  target: RunnerTarget,
  options: ObserveOptions = {},
): Promise<RunnerObservation> {
  const p = await observeRunners(ports, [target], options);
  return p.runners[0];
}

/**
 * Observe several runner models with a number of Kafka requests that does not depend on how
 * many there are, and a constant number of Docker requests per container.
 */
export async function observeRunners(
  ports: ObserverPorts,
  targets: RunnerTarget[],
  options: ObserveOptions = {},
): Promise<ProjectObservation> {
  const { docker, kafka } = ports;
  const observedAt = isoNow(ports.clock ?? SYSTEM_CLOCK);
  const appIds = [...new Set(targets.map((t) => t.applicationId))];
  const topics = [
    ...new Set(
      targets.flatMap((
        t,
      ) => [t.inputTopic, t.outputTopic, ...(t.deadLetterTopic ? [t.deadLetterTopic] : [])]),
    ),
  ];
  const images = distinct(
    targets.map((t) => t.image),
    (id) =>
      docker.inspectImage(id).then((i): PinnedImage | null =>
        i
          ? { id: i.id, env: i.env.map(envFingerprint), entrypoint: i.entrypoint, cmd: i.cmd }
          : null
      ),
  );
  const networks = distinct(targets.map((t) => t.network), (n) => docker.networkId(n));

  // Kafka: the topics first (the offset listing needs the partitions), the groups meanwhile
  const clusterRead = kafka.describe(topics);
  const groupsRead = kafka.describeGroups(appIds);
  const committedRead = kafka.committedOffsetsOf(appIds);
  const rangesRead = clusterRead.then((cluster) => {
    const inputs = new Map<string, number[]>();
    for (const t of targets) {
      const input = cluster.topics.get(t.inputTopic);
      if (input) inputs.set(input.name, [...Array(input.partitions).keys()]);
    }
    return kafka.offsetRangesOf([...inputs].map(([topic, partitions]) => ({ topic, partitions })));
  });
  const kafkaReads = Promise.all([clusterRead, groupsRead, committedRead, rangesRead]);
  // if a Docker read fails first, a Kafka error must not surface as an unhandled rejection
  kafkaReads.catch(() => {});
  for (const p of [...images.values(), ...networks.values()]) p.catch(() => {});

  // the daemon's ID (its slowest read) is awaited last: the containers' files need only the
  // listing
  const daemonRead = docker.daemonId();
  daemonRead.catch(() => {});
  const [containers, volumes] = await Promise.all([
    docker.listContainersLabelled(LABEL.applicationId, appIds),
    docker.listVolumes(targets.map(stateVolumeOf)),
  ]);
  // an application ID asked twice (a destroy's plan reads a declared, owned runner as declared
  // and as owned) is read once; an instance of a set is read alone, in its own call
  const targetOf = new Map(targets.map((t) => [t.applicationId, t]));
  const byApp = new Map<string, ContainerInfo[]>();
  const read: ContainerInfo[] = [];
  for (const c of containers) {
    const app = c.labels[LABEL.applicationId];
    const instance = targetOf.get(app)?.instance;
    // an instance of a set is read alone: the application's other instances are not its own
    if (instance !== undefined && instanceOfLabels(c.labels) !== instance) continue;
    byApp.set(app, [...(byApp.get(app) ?? []), c]);
    read.push(c);
  }
  const evidence = new Map<string, ContainerEvidence>();
  const want = options.status ?? (() => true);
  for (let i = 0; i < read.length; i += FILE_READS_AT_ONCE) {
    await Promise.all(
      read.slice(i, i + FILE_READS_AT_ONCE).map(async (c) => {
        const target = targetOf.get(c.labels[LABEL.applicationId])!;
        const image = await images.get(target.image)!;
        evidence.set(c.id, await consistentEvidence(docker, c, target, image, want(c)));
      }),
    );
  }
  const [cluster, groups, committed, ranges] = await kafkaReads;
  const daemonId = await daemonRead;

  const runners: RunnerObservation[] = [];
  for (const target of targets) {
    const input = cluster.topics.get(target.inputTopic) ?? null;
    const output = cluster.topics.get(target.outputTopic) ?? null;
    const mine = (byApp.get(target.applicationId) ?? []).map((c) => evidence.get(c.id)!);
    const group = groups.get(target.applicationId)!;
    const offsets = input ? committed.get(target.applicationId)?.get(input.name) : undefined;
    runners.push({
      applicationId: target.applicationId,
      target,
      observedAt,
      daemonId,
      image: observedImage(await images.get(target.image)!),
      networkId: await networks.get(target.network)!,
      containers: mine,
      volume: volumeEvidence(target, volumes, mine),
      kafka: {
        clusterId: cluster.clusterId,
        input,
        output,
        ...(target.deadLetterTopic
          ? { deadLetter: cluster.topics.get(target.deadLetterTopic) ?? null }
          : {}),
        group: { state: group.state, members: group.members },
        committed: Object.fromEntries(
          [...(offsets ?? new Map<number, bigint>())].map(([p, o]) => [String(p), o.toString()]),
        ),
        ranges: (input ? ranges.get(input.name) ?? [] : []).map((r) => ({
          partition: r.partition,
          earliest: r.earliest.toString(),
          latest: r.latest.toString(),
        })),
      },
    });
  }
  return { observedAt, daemonId, clusterId: cluster.clusterId, runners };
}

/**
 * The pinned image as the containers are compared with it: its environment (keyed hashes) and
 * the entrypoint and command a runner inherits (sluice overrides neither).
 */
interface PinnedImage {
  id: string;
  env: string[];
  entrypoint: string[];
  cmd: string[];
}

/** The image as the observation reports it: its ID and environment. */
function observedImage(i: PinnedImage | null): RunnerObservation["image"] {
  return i ? { id: i.id, env: i.env } : null;
}

/**
 * Where a container's argument list first differs from its image's, or null when equal. Only
 * the position and the lengths are reported: an argument may hold a value that must not be
 * shown (as the environment's values are never shown).
 */
function argumentsDrift(what: string, actual: string[], pinned: string[]): string | null {
  const n = Math.max(actual.length, pinned.length);
  for (let i = 0; i < n; i++) {
    if (actual[i] !== pinned[i]) {
      return `${what} differs from the pinned image's at argument ${i} (${actual.length} arguments, the image's has ${pinned.length})`;
    }
  }
  return null;
}

/** The state volume a target's runner mounts: its instance's own in a set. */
function stateVolumeOf(target: RunnerTarget): string {
  return instanceVolumeName(target.applicationId, target.instance ?? 0);
}

/** One read per distinct key. */
function distinct<T>(keys: string[], read: (key: string) => Promise<T>): Map<string, Promise<T>> {
  return new Map([...new Set(keys)].map((k) => [k, read(k)]));
}

/** The mounted plan, from the cache when this container's bytes already hashed to its label. */
async function mountedPlan(
  docker: DockerPort,
  c: ContainerInfo,
  label: string | null,
): Promise<Uint8Array | null> {
  const cache = cacheOf(docker).plans;
  const key = `${c.id} ${label}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const bytes = await docker.readContainerFile(c.id, RUNNER_PATHS.plan);
  if (bytes !== null && label !== null && sha256Hex(bytes) === label) cache.set(key, bytes);
  return bytes;
}

/** The instance file through this container's volume mount, cached while the container lives. */
async function instanceFile(docker: DockerPort, c: ContainerInfo): Promise<string | null> {
  const volume = c.mounts.find((m) => m.destination === RUNNER_PATHS.volume);
  const cache = cacheOf(docker).instances;
  const key = `${c.id} ${volume?.type ?? ""}:${volume?.source ?? ""}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const bytes = await docker.readContainerFile(c.id, RUNNER_PATHS.instanceFile);
  const text = bytes === null ? null : new TextDecoder().decode(bytes).trim();
  // only a named volume is pinned by the container; anything else is read again next time
  if (text !== null && volume?.type === "volume") cache.set(key, text);
  return text;
}

/** How many times one container's files are read before its process is taken as changing. */
export const CONSISTENT_READS = 3;

/** The process state two inspects must agree on for the files read between them to be its. */
function processOf(c: ContainerInfo): string {
  const s = c.state;
  return JSON.stringify([
    s.status,
    s.running,
    s.exitCode,
    s.oomKilled,
    s.startedAt,
    s.finishedAt,
    s.error,
  ]);
}

/**
 * A container's evidence whose status file belongs to the process it reports: the container is
 * inspected again after its files are read, and read again (from that inspect) when its process
 * changed meanwhile — a runner that closed, started or was killed between the listing and the
 * file read. A process that changes on each of {@link CONSISTENT_READS} reads gives a status
 * that says so (`unreadable`), which no clean close or readiness accepts. A container removed
 * meanwhile keeps what was read: the next observation finds it gone.
 */
async function consistentEvidence(
  docker: DockerPort,
  listed: ContainerInfo,
  target: RunnerTarget,
  image: PinnedImage | null,
  readStatus: boolean,
): Promise<ContainerEvidence> {
  let c = listed;
  for (let read = 1;; read++) {
    const e = await containerEvidence(docker, c, target, image, readStatus);
    if (!readStatus) return e;
    const again = await docker.inspectContainer(c.id);
    if (again === null || processOf(again) === processOf(c)) return e;
    if (read === CONSISTENT_READS) {
      const fresh = await containerEvidence(docker, again, target, image, false);
      return {
        ...fresh,
        runnerStatus: {
          unreadable: true,
          reason:
            `the container's process changed while its status file was read, ${CONSISTENT_READS} times`,
        },
      };
    }
    c = again;
  }
}

async function containerEvidence(
  docker: DockerPort,
  c: ContainerInfo,
  target: RunnerTarget,
  image: PinnedImage | null,
  readStatus: boolean,
): Promise<ContainerEvidence> {
  const label = (k: string) => c.labels[k] ?? null;
  const planLabel = label(LABEL.planSha256);
  const [bytes, volumeInstance, statusBytes] = await Promise.all([
    mountedPlan(docker, c, planLabel),
    instanceFile(docker, c),
    readStatus ? docker.readContainerFile(c.id, RUNNER_PATHS.statusFile) : null,
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
  if (c.stopTimeout !== RUNNER_EXECUTION.stopTimeoutSeconds) {
    problems.push(
      `stop timeout ${
        c.stopTimeout === null ? "unset" : `${c.stopTimeout} s`
      } is not ${RUNNER_EXECUTION.stopTimeoutSeconds} s`,
    );
  }
  const planMount = c.mounts.find((m) => m.destination === RUNNER_PATHS.plan);
  if (!planMount || planMount.type !== "bind" || !planMount.readOnly) {
    problems.push(`plan is not bind-mounted read-only at ${RUNNER_PATHS.plan}`);
  }
  const volMount = c.mounts.find((m) => m.destination === RUNNER_PATHS.volume);
  if (
    !volMount || volMount.type !== "volume" || volMount.source !== stateVolumeOf(target)
  ) {
    problems.push(`volume ${stateVolumeOf(target)} is not mounted at ${RUNNER_PATHS.volume}`);
  }
  if (c.mounts.length !== 2) problems.push(`${c.mounts.length} mounts instead of 2`);
  // sluice overrides neither the entrypoint nor the command: both are the pinned image's
  if (c.entrypoint.length > 0 && image === null) {
    problems.push("image absent: entrypoint unverifiable");
  }
  if (image !== null) {
    const entrypoint = argumentsDrift("entrypoint", c.entrypoint, image.entrypoint);
    if (entrypoint) problems.push(entrypoint);
    const cmd = argumentsDrift("cmd", c.cmd, image.cmd);
    if (cmd) problems.push(cmd);
  }

  const runnerStatus = runnerStatusOf(statusBytes);
  return {
    id: c.id,
    name: c.name,
    status: c.state.status,
    running: c.state.running,
    exitCode: c.state.exitCode,
    oomKilled: c.state.oomKilled,
    dockerError: c.state.error,
    startedAt: c.state.startedAt,
    finishedAt: c.state.finishedAt,
    // a running container has started, whatever its StartedAt says: a Docker daemon restarted
    // while it started one (its task outliving the daemon) restores it running with a zero
    // StartedAt, answers a start with 304 "already started", and reports it `created` once it
    // stops (seen in the dockerd-restart disruption)
    everStarted: c.state.running || dockerTimeSet(c.state.startedAt),
    imageId: c.imageId,
    networkMode: c.networkMode,
    networks: c.networks,
    // by destination: Docker's inspect gives its mounts in no promised order
    mounts: [...c.mounts].sort((a, b) => a.destination.localeCompare(b.destination)),
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
    volumeInstance,
    runnerStatus,
  };
}

/**
 * The state volume: its labels from the listing, and its instance file as a container that
 * mounts it sees it. With no such container the file is not read: observing creates nothing.
 */
function volumeEvidence(
  target: RunnerTarget,
  volumes: Map<string, { labels: Record<string, string> }>,
  containers: ContainerEvidence[],
): VolumeEvidence {
  const name = stateVolumeOf(target);
  const v = volumes.get(name);
  if (!v) {
    return {
      name,
      exists: false,
      labels: {},
      instanceLabel: null,
      instanceFile: null,
      instanceFileVia: null,
    };
  }
  const mounting = containers.filter((c) =>
    c.mounts.some((m) => m.type === "volume" && m.source === name)
  );
  const via = mounting.find((c) => c.volumeInstance !== null) ?? mounting[0] ?? null;
  return {
    name,
    exists: true,
    labels: v.labels,
    instanceLabel: v.labels[LABEL.volumeInstance] ?? null,
    instanceFile: via?.volumeInstance ?? null,
    instanceFileVia: via?.id ?? null,
  };
}

/**
 * A runner's status file as read: null when there is none, `{ unreadable: true }` when its bytes
 * are not JSON (the runner replaces it atomically, so that is not a half-written file).
 *
 * @example
 * ```ts
 * import { runnerStatusOf } from "./observer.ts";
 * runnerStatusOf(new TextEncoder().encode('{"state":"RUNNING"}')); // { state: "RUNNING" }
 * runnerStatusOf(null); // null
 * ```
 */
export function runnerStatusOf(bytes: Uint8Array | null): Record<string, unknown> | null {
  if (!bytes) return null;
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return { unreadable: true };
  }
}
