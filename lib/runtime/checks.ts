/**
 * Validation of a fresh observation against what sluice owns: the "validate" step between
 * observe and reconcile. Every finding is a {@link Blocker} with a stable code from the spec's
 * rejection list (foreign generation, changed volume instance, wrong mounted plan, wrong
 * topic/cluster/network/image, extra group members, retention loss, ...). The planner and
 * the replacement driver call the same functions, so they cannot drift apart.
 *
 * @example
 * ```ts
 * import { verifyOwnedRunner } from "./checks.ts";
 * // const { blockers, container } = verifyOwnedRunner(observation, ownedRunner, ownedTopics);
 * // if (blockers.length > 0) throw blockerError(blockers);
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { OwnedRunner, OwnedTopic } from "../state/ownership.ts";
import type { ContainerEvidence, RunnerObservation } from "./observer.ts";

/** One reason a step is not authorized. */
export interface Blocker {
  code: string;
  model: string | null;
  message: string;
  evidence?: Record<string, unknown>;
}

/** An error carrying every blocker found (its code is the first blocker's). */
export function blockerError(blockers: Blocker[]): SluiceError {
  const first = blockers[0];
  const message = blockers.length === 1 ? first.message : `${blockers.length} blockers:\n` +
    blockers.map((b) => `  [${b.code}] ${b.message}`).join("\n");
  return new SluiceError(first.code, message, { evidence: { blockers } });
}

function b(
  code: string,
  model: string,
  message: string,
  evidence?: Record<string, unknown>,
): Blocker {
  // always present: blockers are sealed into plan files (canonical JSON has no undefined)
  return { code, model, message, evidence: evidence ?? {} };
}

/** Which runtime state the caller expects the owned runner to be in. */
export type ExpectedRunState = "running" | "any";

/**
 * Check an owned runner's fresh observation: exactly one generation, the owned artifact
 * mounted and labelled, the pinned image and network, the fixed execution options, the same
 * volume instance, the same cluster and topic IDs, at most one group member, resumable
 * committed offsets. Returns the blockers and the one container when there is exactly one.
 */
export function verifyOwnedRunner(
  obs: RunnerObservation,
  owned: OwnedRunner,
  ownedTopics: OwnedTopic[],
  options: { expect?: ExpectedRunState } = {},
): { blockers: Blocker[]; container: ContainerEvidence | null } {
  const model = owned.model;
  const out: Blocker[] = [];
  const containers = obs.containers;
  if (containers.length === 0) {
    out.push(
      b(
        "BLOCKED_RUNNER_MISSING",
        model,
        `no container carries application ID ${owned.application_id}`,
      ),
    );
  } else if (containers.length > 1) {
    out.push(b(
      "BLOCKED_FOREIGN_GENERATION",
      model,
      `${containers.length} containers carry application ID ${owned.application_id}; exactly one is owned`,
      {
        containers: containers.map((c) => ({
          id: c.id,
          name: c.name,
          generation: c.labels.generation,
        })),
      },
    ));
  }
  const container = containers.length === 1 ? containers[0] : null;
  if (container) out.push(...verifyGeneration(container, owned, model));
  out.push(...verifyVolume(obs, owned, container));
  out.push(...verifyKafka(obs, owned, ownedTopics, container));
  if (container && (options.expect ?? "running") === "running" && !container.running) {
    out.push(b(
      "BLOCKED_RUNNER_NOT_RUNNING",
      model,
      `container ${container.id.slice(0, 12)} is ${container.status} (exit ${container.exitCode}${
        container.oomKilled ? ", OOM-killed" : ""
      })`,
      { status: container.status, exitCode: container.exitCode, oomKilled: container.oomKilled },
    ));
  }
  return { blockers: out, container };
}

/** The container is the owned generation: artifact label, mounted plan, image, network, options. */
export function verifyGeneration(
  c: ContainerEvidence,
  owned: { artifact_sha256: string; application_id: string },
  model: string,
): Blocker[] {
  const out: Blocker[] = [];
  const id = c.id.slice(0, 12);
  if (c.labels.artifactSha256 !== owned.artifact_sha256) {
    out.push(b(
      "BLOCKED_FOREIGN_GENERATION",
      model,
      `container ${id} is labelled with artifact ${c.labels.artifactSha256}, not the owned ${owned.artifact_sha256}`,
      { container: c.id, label: c.labels.artifactSha256, owned: owned.artifact_sha256 },
    ));
  }
  if (!c.plan.matchesLabel) {
    out.push(b(
      "BLOCKED_WRONG_MOUNTED_PLAN",
      model,
      `container ${id}: the mounted plan hashes to ${c.plan.sha256}, not its plan label ${c.labels.planSha256}`,
      { container: c.id, mounted: c.plan.sha256, label: c.labels.planSha256 },
    ));
  } else if (c.plan.artifactSha256 !== owned.artifact_sha256) {
    out.push(b(
      "BLOCKED_WRONG_MOUNTED_PLAN",
      model,
      `container ${id}: the mounted plan holds artifact ${c.plan.artifactSha256}, not the owned ${owned.artifact_sha256}${
        c.plan.error ? ` (${c.plan.error})` : ""
      }`,
      { container: c.id, mounted: c.plan.artifactSha256, owned: owned.artifact_sha256 },
    ));
  }
  for (const p of c.execution.problems) {
    const code = p.startsWith("image ")
      ? "BLOCKED_WRONG_IMAGE"
      : p.startsWith("network ")
      ? "BLOCKED_WRONG_NETWORK"
      : "BLOCKED_EXECUTION_DRIFT";
    out.push(b(code, model, `container ${id}: ${p}`, { container: c.id }));
  }
  if (!c.environment.ok) {
    out.push(b(
      "BLOCKED_ENVIRONMENT_DRIFT",
      model,
      `container ${id}: environment differs from the pinned image's plus sluice's variables`,
      {
        unexpected: c.environment.unexpected.map(redactEnv),
        missing: c.environment.missing.map(redactEnv),
      },
    ));
  }
  return out;
}

function redactEnv(e: string): string {
  const [k] = e.split("=", 1);
  return /token|password|secret/i.test(k) ? `${k}=<redacted>` : e;
}

function verifyVolume(
  obs: RunnerObservation,
  owned: OwnedRunner,
  c: ContainerEvidence | null,
): Blocker[] {
  const model = owned.model;
  const v = obs.volume;
  if (!v.exists) {
    return [b("BLOCKED_VOLUME_MISSING", model, `state volume ${v.name} does not exist`)];
  }
  const expected = owned.volume.instance_id;
  const seen = [v.instanceLabel, v.instanceFile, c?.volumeInstance ?? expected];
  if (seen.some((s) => s !== expected)) {
    return [b(
      "BLOCKED_VOLUME_INSTANCE_CHANGED",
      model,
      `state volume ${v.name} is not the owned instance ${expected}`,
      {
        owned: expected,
        label: v.instanceLabel,
        file: v.instanceFile,
        viaContainer: c?.volumeInstance ?? null,
      },
    )];
  }
  return [];
}

function verifyKafka(
  obs: RunnerObservation,
  owned: OwnedRunner,
  ownedTopics: OwnedTopic[],
  c: ContainerEvidence | null,
): Blocker[] {
  const model = owned.model;
  const out: Blocker[] = [];
  const k = obs.kafka;
  for (const [role, t] of [["input", k.input], ["output", k.output]] as const) {
    const name = role === "input" ? obs.target.inputTopic : obs.target.outputTopic;
    if (!t) {
      out.push(b("BLOCKED_TOPIC_MISSING", model, `${role} topic ${name} does not exist`));
      continue;
    }
    const ownedId = ownedTopics.find((o) => o.name === name)?.topic_id ?? null;
    const bound = c?.plan.identity
      ? (role === "input" ? c.plan.identity.input_topic_id : c.plan.identity.output_topic_id)
      : null;
    for (const expected of [ownedId, bound]) {
      if (expected !== null && expected !== t.id) {
        out.push(b(
          "BLOCKED_TOPIC_REPLACED",
          model,
          `${role} topic ${name} has ID ${t.id}, not ${expected}: it was deleted and recreated`,
          { topic: name, observed: t.id, expected },
        ));
        break;
      }
    }
  }
  if (c?.plan.identity && c.plan.identity.cluster_id !== k.clusterId) {
    out.push(b(
      "BLOCKED_CLUSTER_CHANGED",
      model,
      `the broker reports cluster ${k.clusterId}, not ${c.plan.identity.cluster_id} bound in the mounted plan`,
      { observed: k.clusterId, bound: c.plan.identity.cluster_id },
    ));
  }
  if (k.group.members.length > 1) {
    out.push(b(
      "BLOCKED_EXTRA_GROUP_MEMBERS",
      model,
      `consumer group ${obs.applicationId} has ${k.group.members.length} members; at most the owned runner may be one`,
      { members: k.group.members },
    ));
  }
  out.push(...verifyProgress(obs, model));
  return out;
}

/** Every input partition has a committed offset inside the retained range. */
export function verifyProgress(obs: RunnerObservation, model: string): Blocker[] {
  const out: Blocker[] = [];
  for (const r of obs.kafka.ranges) {
    const committed = obs.kafka.committed[String(r.partition)];
    if (committed === undefined) {
      out.push(b(
        "BLOCKED_OFFSETS_MISSING",
        model,
        `group ${obs.applicationId} has no committed offset for ${obs.target.inputTopic}-${r.partition}`,
        { partition: r.partition },
      ));
    } else if (BigInt(committed) < BigInt(r.earliest)) {
      out.push(b(
        "BLOCKED_RETENTION_LOSS",
        model,
        `committed offset ${committed} of ${obs.target.inputTopic}-${r.partition} is below the earliest retained offset ${r.earliest}`,
        { partition: r.partition, committed, earliest: r.earliest },
      ));
    }
  }
  return out;
}
