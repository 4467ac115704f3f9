/**
 * Validation of a fresh runner observation: the "validate" step between observe and reconcile.
 * Each check is written once and returns {@link Blocker}s with a stable code from the spec's
 * rejection list (foreign generation, changed volume instance, wrong mounted plan, wrong
 * topic/cluster/network/image, extra group members, retention loss, ...). The planner checks an
 * owned runner with {@link verifyOwnedRunner}; the replacement driver checks the reviewed
 * runtime with `verifyReviewedRuntime` (`reviewed_runtime.ts`); both are built from the checks
 * below, so their findings and messages cannot drift apart.
 *
 * @example
 * ```ts
 * import { verifyOwnedRunner } from "./runner_checks.ts";
 * import { blockerError } from "./blocker.ts";
 * import type { RunnerObservation } from "./observation.ts";
 * import type { OwnedRunner, OwnedTopic } from "../state/ownership.ts";
 * function check(obs: RunnerObservation, owned: OwnedRunner, topics: OwnedTopic[]) {
 *   const { blockers } = verifyOwnedRunner(obs, owned, topics);
 *   if (blockers.length > 0) throw blockerError(blockers);
 * }
 * ```
 * @module
 */
import type { OwnedRunner, OwnedTopic } from "../state/ownership.ts";
import { runnerStopOf } from "./runner_stop.ts";
import type { PartitionOffset } from "../state/journal.ts";
import { type Blocker, blocker } from "./blocker.ts";
import type { ContainerEvidence, KafkaEvidence, RunnerObservation } from "./observation.ts";
import type { ProviderIdentities } from "./reviewed_evidence.ts";

/** Which runtime state the caller expects the owned runner to be in. */
export type ExpectedRunState = "running" | "any";

/**
 * Check an owned runner's fresh observation (the planner's check): exactly one generation, the
 * owned artifact mounted and labelled, the pinned image and network, the fixed execution
 * options, the same volume instance, the same cluster and topic IDs, at most one group member,
 * resumable committed offsets. Returns the blockers and the one container when there is one.
 *
 * @example
 * ```ts
 * import { verifyOwnedRunner } from "./runner_checks.ts";
 * import type { RunnerObservation } from "./observation.ts";
 * import type { OwnedRunner } from "../state/ownership.ts";
 * const stoppedOk = (o: RunnerObservation, r: OwnedRunner) =>
 *   verifyOwnedRunner(o, r, [], { expect: "any" }).blockers.length === 0;
 * ```
 */
export function verifyOwnedRunner(
  obs: RunnerObservation,
  owned: OwnedRunner,
  ownedTopics: OwnedTopic[],
  options: {
    expect?: ExpectedRunState;
    /** How many group members the owned runner may be: a set's instance count (default 1). */
    members?: number;
  } = {},
): { blockers: Blocker[]; container: ContainerEvidence | null } {
  const model = owned.model;
  const out: Blocker[] = [];
  const containers = obs.containers;
  if (containers.length === 0) {
    out.push(blocker(
      "BLOCKED_RUNNER_MISSING",
      `no container carries application ID ${owned.application_id}`,
      { model },
    ));
  } else if (containers.length > 1) {
    out.push(blocker(
      "BLOCKED_FOREIGN_GENERATION",
      `${containers.length} containers carry application ID ${owned.application_id}; exactly one is owned`,
      {
        model,
        evidence: {
          containers: containers.map((c) => ({
            id: c.id,
            name: c.name,
            generation: c.labels.generation,
          })),
        },
      },
    ));
  }
  const c = containers.length === 1 ? containers[0] : null;
  if (c) out.push(...checkGeneration(c, owned.artifact_sha256, model));
  out.push(...checkVolume(obs, owned.volume.instance_id, model, c?.volumeInstance ?? null));
  const bound = c?.plan.identity ?? null;
  const topicId = (name: string) => ownedTopics.find((o) => o.name === name)?.topic_id ?? null;
  out.push(...checkTopics(obs, model, {
    input: [
      { id: topicId(obs.target.inputTopic), source: "owned" },
      { id: bound?.input_topic_id ?? null, source: "mounted-plan" },
    ],
    output: [
      { id: topicId(obs.target.outputTopic), source: "owned" },
      { id: bound?.output_topic_id ?? null, source: "mounted-plan" },
    ],
    deadLetter: obs.target.deadLetterTopic
      ? [
        { id: topicId(obs.target.deadLetterTopic), source: "owned" },
        { id: bound?.dead_letter_topic_id ?? null, source: "mounted-plan" },
      ]
      : [],
  }));
  if (bound) out.push(...checkCluster(obs, bound.cluster_id, "mounted-plan", model));
  out.push(...checkGroupMembers(obs, model, options.members));
  out.push(...checkProgress(obs, model, null));
  if (c && (options.expect ?? "running") === "running" && !c.running) {
    const stop = runnerStopOf(c);
    const rec = stop?.kind === "decode" ? stop.runner?.record ?? null : null;
    const back = rec
      ? `; past that record: 'sluice skip-record ${model} --partition ${rec.partition} --offset ${rec.offset} --reason TEXT'`
      : stop && stop.kind !== "plan" && stop.kind !== "plan_checksum"
      ? `; to start it again: 'sluice restart ${model} --reason TEXT'`
      : "";
    out.push(blocker(
      "BLOCKED_RUNNER_NOT_RUNNING",
      `container ${c.name} (${c.id.slice(0, 12)}) is ${c.status}${
        stop ? `: ${stop.summary}` : ""
      }; see 'sluice status' and 'sluice logs ${model}', and docs/runbook.md for the way back${back}`,
      {
        model,
        evidence: {
          status: c.status,
          exitCode: c.exitCode,
          oomKilled: c.oomKilled,
          container: c.name,
          stop,
        },
      },
    ));
  }
  return { blockers: out, container: c };
}

/**
 * The container is the generation of `artifactSha256`: artifact label, mounted plan bytes
 * against the plan label and the artifact they hold, pinned image and network, fixed execution
 * options, environment.
 *
 * @example
 * ```ts
 * import { checkGeneration } from "./runner_checks.ts";
 * import type { ContainerEvidence } from "./observation.ts";
 * const isOwned = (c: ContainerEvidence, sha: string) => checkGeneration(c, sha, null).length === 0;
 * ```
 */
export function checkGeneration(
  c: ContainerEvidence,
  artifactSha256: string,
  model: string | null,
): Blocker[] {
  const out: Blocker[] = [];
  const id = c.id.slice(0, 12);
  if (c.labels.artifactSha256 !== artifactSha256) {
    out.push(blocker(
      "BLOCKED_FOREIGN_GENERATION",
      `container ${id} is labelled with artifact ${c.labels.artifactSha256}, not ${artifactSha256}`,
      { model, evidence: { container: c.id, label: c.labels.artifactSha256, artifactSha256 } },
    ));
  }
  if (!c.plan.matchesLabel) {
    out.push(blocker(
      "BLOCKED_WRONG_MOUNTED_PLAN",
      `container ${id}: the mounted plan hashes to ${c.plan.sha256}, not its plan label ${c.labels.planSha256}`,
      { model, evidence: { container: c.id, mounted: c.plan.sha256, label: c.labels.planSha256 } },
    ));
  } else if (c.plan.artifactSha256 !== artifactSha256) {
    out.push(blocker(
      "BLOCKED_WRONG_MOUNTED_PLAN",
      `container ${id}: the mounted plan holds artifact ${c.plan.artifactSha256}, not ${artifactSha256}${
        c.plan.error ? ` (${c.plan.error})` : ""
      }`,
      { model, evidence: { container: c.id, mounted: c.plan.artifactSha256, artifactSha256 } },
    ));
  }
  for (const p of c.execution.problems) {
    const code = p.startsWith("image ")
      ? "BLOCKED_WRONG_IMAGE"
      : p.startsWith("network ")
      ? "BLOCKED_WRONG_NETWORK"
      : "BLOCKED_EXECUTION_DRIFT";
    out.push(blocker(code, `container ${id}: ${p}`, { model, evidence: { container: c.id } }));
  }
  if (!c.environment.ok) {
    out.push(blocker(
      "BLOCKED_ENVIRONMENT_DRIFT",
      `container ${id}: environment differs from the pinned image's plus sluice's variables`,
      {
        model,
        evidence: {
          unexpected: c.environment.unexpected.map(redactEnv),
          missing: c.environment.missing.map(redactEnv),
        },
      },
    ));
  }
  return out;
}

function redactEnv(e: string): string {
  const [k] = e.split("=", 1);
  return /token|password|secret/i.test(k) ? `${k}=<redacted>` : e;
}

/**
 * The state volume exists and is the expected instance — by its label and, when a container
 * mounts it, the instance file as that container sees it. A missing volume is never recreated.
 *
 * @example
 * ```ts
 * import { checkVolume } from "./runner_checks.ts";
 * import type { RunnerObservation } from "./observation.ts";
 * const same = (o: RunnerObservation, id: string) => checkVolume(o, id, null, null).length === 0;
 * ```
 */
export function checkVolume(
  obs: RunnerObservation,
  instanceId: string,
  model: string | null,
  viaContainer: string | null,
): Blocker[] {
  const v = obs.volume;
  if (!v.exists) {
    return [blocker(
      "BLOCKED_VOLUME_MISSING",
      `state volume ${v.name} does not exist (sluice never recreates a state volume)`,
      { model },
    )];
  }
  // The file is evidence only where a container already mounts the volume: observation never
  // creates one to read it. Until then the label is; a candidate's own mount proves the file
  // before the candidate first starts (docs/decisions.md).
  const seen = [v.instanceLabel, viaContainer ?? instanceId];
  if (v.instanceFileVia !== null) seen.push(v.instanceFile);
  if (seen.some((s) => s !== instanceId)) {
    return [blocker(
      "BLOCKED_VOLUME_INSTANCE_CHANGED",
      `state volume ${v.name} is not the instance ${instanceId}`,
      {
        model,
        evidence: {
          expected: instanceId,
          label: v.instanceLabel,
          file: v.instanceFile,
          fileVia: v.instanceFileVia,
          viaContainer,
        },
      },
    )];
  }
  return [];
}

/** An expected topic ID and where the expectation comes from (null: nothing to compare). */
export interface ExpectedTopicId {
  id: string | null;
  source: "owned" | "mounted-plan" | "reviewed";
}

/**
 * Both topics, and the dead-letter topic of a target with one, exist and have the expected IDs
 * (a different ID: deleted and recreated).
 *
 * @example
 * ```ts
 * import { checkTopics } from "./runner_checks.ts";
 * import type { RunnerObservation } from "./observation.ts";
 * const ok = (o: RunnerObservation, inId: string, outId: string) =>
 *   checkTopics(o, null, {
 *     input: [{ id: inId, source: "reviewed" }],
 *     output: [{ id: outId, source: "reviewed" }],
 *   }).length === 0;
 * ```
 */
export function checkTopics(
  obs: RunnerObservation,
  model: string | null,
  expected: { input: ExpectedTopicId[]; output: ExpectedTopicId[]; deadLetter?: ExpectedTopicId[] },
): Blocker[] {
  const out: Blocker[] = [];
  const k = obs.kafka;
  const roles: Array<[string, string, KafkaEvidence["input"], ExpectedTopicId[]]> = [
    ["input", obs.target.inputTopic, k.input, expected.input],
    ["output", obs.target.outputTopic, k.output, expected.output],
  ];
  if (obs.target.deadLetterTopic) {
    roles.push([
      "dead-letter",
      obs.target.deadLetterTopic,
      k.deadLetter ?? null,
      expected.deadLetter ?? [],
    ]);
  }
  for (const [role, name, t, ids] of roles) {
    if (!t) {
      out.push(blocker("BLOCKED_TOPIC_MISSING", `${role} topic ${name} does not exist`, { model }));
      continue;
    }
    const wrong = ids.find((e) => e.id !== null && e.id !== t.id);
    if (wrong) {
      out.push(blocker(
        "BLOCKED_TOPIC_REPLACED",
        `${role} topic ${name} has ID ${t.id}, not the ${wrong.source} ${wrong.id}: it was deleted and recreated`,
        {
          model,
          evidence: { topic: name, observed: t.id, expected: wrong.id, source: wrong.source },
        },
      ));
    }
  }
  return out;
}

/**
 * The broker reports the expected cluster ID.
 *
 * @example
 * ```ts
 * import { checkCluster } from "./runner_checks.ts";
 * import type { RunnerObservation } from "./observation.ts";
 * const same = (o: RunnerObservation, id: string) => checkCluster(o, id, "reviewed", null).length === 0;
 * ```
 */
export function checkCluster(
  obs: RunnerObservation,
  clusterId: string,
  source: "mounted-plan" | "reviewed",
  model: string | null,
): Blocker[] {
  if (obs.kafka.clusterId === clusterId) return [];
  return [blocker(
    "BLOCKED_CLUSTER_CHANGED",
    `the broker reports cluster ${obs.kafka.clusterId}, not the ${source} ${clusterId}`,
    { model, evidence: { observed: obs.kafka.clusterId, expected: clusterId, source } },
  )];
}

/**
 * At most the owned runner may be a member of the application's consumer group.
 *
 * @example
 * ```ts
 * import { checkGroupMembers } from "./runner_checks.ts";
 * import type { RunnerObservation } from "./observation.ts";
 * const alone = (o: RunnerObservation) => checkGroupMembers(o, null).length === 0;
 * ```
 */
export function checkGroupMembers(
  obs: RunnerObservation,
  model: string | null,
  allowed = 1,
): Blocker[] {
  const members = obs.kafka.group.members;
  if (members.length <= allowed) return [];
  return [blocker(
    "BLOCKED_EXTRA_GROUP_MEMBERS",
    `consumer group ${obs.applicationId} has ${members.length} members; at most ${
      allowed === 1 ? "the owned runner may be one" : `the owned set's ${allowed} instances may be`
    }`,
    { model, evidence: { members } },
  )];
}

/**
 * Every input partition has a committed offset inside the retained range and, when reviewed
 * lower bounds are given, at or above them (reviewed offsets are lower bounds: fresh reads
 * never replace them).
 *
 * @example
 * ```ts
 * import { checkProgress } from "./runner_checks.ts";
 * import type { RunnerObservation } from "./observation.ts";
 * const resumable = (o: RunnerObservation) => checkProgress(o, null, null).length === 0;
 * ```
 */
export function checkProgress(
  obs: RunnerObservation,
  model: string | null,
  lowerBounds: PartitionOffset[] | null,
): Blocker[] {
  const out: Blocker[] = [];
  const topic = obs.target.inputTopic;
  for (const r of obs.kafka.ranges) {
    const committed = obs.kafka.committed[String(r.partition)];
    const lower = lowerBounds?.find((x) => x.partition === r.partition)?.offset;
    if (committed === undefined) {
      out.push(blocker(
        "BLOCKED_OFFSETS_MISSING",
        `group ${obs.applicationId} has no committed offset for ${topic}-${r.partition}`,
        { model, evidence: { partition: r.partition } },
      ));
    } else if (BigInt(committed) < BigInt(r.earliest)) {
      out.push(blocker(
        "BLOCKED_RETENTION_LOSS",
        `committed offset ${committed} of ${topic}-${r.partition} is below the earliest retained offset ${r.earliest}`,
        { model, evidence: { partition: r.partition, committed, earliest: r.earliest } },
      ));
    } else if (lower !== undefined && BigInt(committed) < BigInt(lower)) {
      out.push(blocker(
        "BLOCKED_OFFSET_REGRESSION",
        `committed offset ${committed} of ${topic}-${r.partition} is below the reviewed lower bound ${lower}`,
        { model, evidence: { partition: r.partition, committed, lowerBound: lower } },
      ));
    }
  }
  return out;
}

/**
 * The Docker daemon, the runner image and the network are the reviewed ones.
 *
 * @example
 * ```ts
 * import { checkProviders } from "./runner_checks.ts";
 * import type { RunnerObservation } from "./observation.ts";
 * import type { ProviderIdentities } from "./reviewed_evidence.ts";
 * const same = (o: RunnerObservation, ids: ProviderIdentities) =>
 *   checkProviders(o, ids, null).length === 0;
 * ```
 */
export function checkProviders(
  obs: RunnerObservation,
  ids: ProviderIdentities,
  model: string | null,
): Blocker[] {
  const out: Blocker[] = [];
  if (obs.daemonId !== ids.docker_daemon_id) {
    out.push(blocker(
      "BLOCKED_DOCKER_DAEMON_CHANGED",
      `Docker daemon ${obs.daemonId} is not the reviewed ${ids.docker_daemon_id}`,
      { model, evidence: { observed: obs.daemonId, reviewed: ids.docker_daemon_id } },
    ));
  }
  if (!obs.image || obs.image.id !== ids.image_id) {
    out.push(blocker(
      "BLOCKED_WRONG_IMAGE",
      `runner image ${ids.image_id} is ${obs.image ? `now ${obs.image.id}` : "absent"}`,
      { model, evidence: { observed: obs.image?.id ?? null, reviewed: ids.image_id } },
    ));
  }
  if (obs.networkId !== ids.network_id) {
    out.push(blocker(
      "BLOCKED_WRONG_NETWORK",
      `network ${obs.target.network} has ID ${obs.networkId}, not the reviewed ${ids.network_id}`,
      { model, evidence: { observed: obs.networkId, reviewed: ids.network_id } },
    ));
  }
  return out;
}
