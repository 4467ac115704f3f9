/**
 * The plan: pure data computed from desired (compiled project) × ownership state ×
 * observation. Reading and writing plan files is `plan_file.ts`; executing them is
 * `lib/runtime`. Nothing here performs I/O.
 *
 * Formats (spec, "Reviewed and durable evidence"): format 6 is the reviewed plan of a sole
 * typed predicate replacement in an online full-project plan; every other plan is format 5.
 * The format alone never bypasses a blocker.
 *
 * @example
 * ```ts
 * import { planProject } from "./plan.ts";
 * // const plan = planProject({ compiled, project, state, observation, topics, now, sourceSha256 });
 * // plan.blockers.length === 0 && plan.actions.length === 0  → nothing to do
 * ```
 * @module
 */
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { artifactSha256, changedArtifactFields, validateArtifact } from "../artifact/artifact.ts";
import { canonicalSha256 } from "../artifact/canonical.ts";
import type { CompileResult } from "../project/compile.ts";
import type { Project } from "../project/load.ts";
import { projectTopics } from "../project/topics.ts";
import type { OwnershipDocument } from "../state/ownership.ts";
import type { RunnerAction, StoreIdentity } from "../state/journal.ts";
import type { Blocker } from "../runtime/checks.ts";
import { verifyOwnedRunner } from "../runtime/checks.ts";
import type { ProjectObservation, RunnerObservation } from "../runtime/observer.ts";
import { parseMountedPlan } from "../runtime/mounted_plan.ts";

/** A planned provider mutation. */
export type PlannedAction =
  | {
    type: "create_topic";
    topic: string;
    partitions: number;
    role: "source" | "output" | "dead_letter";
  }
  | { type: "create_runner"; model: string; application_id: string; artifact_sha256: string }
  | RunnerAction;

/** The identities of providers a reviewed plan binds. */
export interface ProviderIdentities {
  cluster_id: string;
  input_topic_id: string;
  output_topic_id: string;
  docker_daemon_id: string;
  image_id: string;
  network_id: string;
}

/** A computed plan (immutable value). */
export interface Plan {
  format: 5 | 6;
  project: string;
  environment: string | null;
  mode: "online" | "offline";
  scope: "full";
  created_at: string;
  /** sha256 over the manifest and every SQL model's bytes. */
  source_sha256: string;
  /** The ownership state the plan was computed from (the protected state). */
  protected_state: { checksum: string | null; serial: number };
  store: StoreIdentity;
  /** Desired artifacts (full preimages) by model. */
  artifacts: Array<{ model: string; sha256: string; artifact: RunnerArtifact }>;
  actions: PlannedAction[];
  blockers: Blocker[];
  /** Format 6 only: the typed replacement and its own checksum over its complete content. */
  typed_action: { action: RunnerAction; sha256: string } | null;
}

/** What the planner reads. */
export interface PlanInput {
  project: Project;
  compiled: CompileResult;
  state: { ownership: OwnershipDocument | null; checksum: string | null; identity: StoreIdentity };
  /** Null for `plan --offline`. */
  observation: ProjectObservation | null;
  /** Online only: every desired topic that exists, with its Kafka-form ID. */
  topics: Map<string, { id: string; partitions: number }> | null;
  now: string;
  sourceSha256: string;
}

/** True when the plan changes nothing and nothing blocks it. */
export function isNoop(plan: Plan): boolean {
  return plan.actions.length === 0 && plan.blockers.length === 0;
}

/** The checksum of a typed action over its complete content (never a redacted view). */
export function typedActionSha256(action: RunnerAction): string {
  return canonicalSha256(action);
}

/** Compute the plan. Pure: the same input gives the same plan. */
export function planProject(input: PlanInput): Plan {
  const { project, compiled, state, observation } = input;
  const online = observation !== null;
  const ownership = state.ownership;
  const ownedTopics = ownership?.topics ?? [];
  const actions: PlannedAction[] = [];
  const blockers: Blocker[] = [];

  // ---- topics: managed sources, model outputs and dead-letter topics are sluice's; external
  // ones must exist
  const wanted = new Map<
    string,
    { partitions: number; role: "source" | "output" | "dead_letter" }
  >();
  for (const t of projectTopics(project)) {
    if (t.role !== "external") wanted.set(t.topic, { partitions: t.partitions ?? 1, role: t.role });
  }
  for (const [topic, want] of wanted) {
    const owned = ownedTopics.find((t) => t.name === topic);
    const seen = input.topics?.get(topic);
    if (owned) {
      if (online && !seen) {
        blockers.push(
          blocker("BLOCKED_TOPIC_MISSING", null, `owned topic ${topic} does not exist`),
        );
      } else if (online && seen && owned.topic_id !== null && owned.topic_id !== seen.id) {
        blockers.push(blocker(
          "BLOCKED_TOPIC_REPLACED",
          null,
          `owned topic ${topic} has ID ${seen.id}, not ${owned.topic_id}: it was deleted and recreated`,
          { topic, observed: seen.id, owned: owned.topic_id },
        ));
      } else if (online && seen && seen.partitions !== want.partitions) {
        blockers.push(blocker(
          "BLOCKED_PARTITION_CHANGE",
          null,
          `topic ${topic} has ${seen.partitions} partitions; the project declares ${want.partitions}`,
        ));
      }
    } else if (online && seen) {
      blockers.push(blocker(
        "BLOCKED_UNOWNED_TOPIC",
        null,
        `topic ${topic} exists but is not owned by this project; sluice never adopts it`,
        { topic, id: seen.id },
      ));
    } else {
      actions.push({ type: "create_topic", topic, partitions: want.partitions, role: want.role });
    }
  }
  if (online) {
    for (const s of project.manifest.sources) {
      if (s.kind === "external" && !input.topics?.get(s.topic)) {
        blockers.push(blocker(
          "BLOCKED_EXTERNAL_TOPIC_MISSING",
          null,
          `external source topic ${s.topic} does not exist; sluice never creates external resources`,
        ));
      }
    }
  }

  // ---- runners
  const desiredModels = new Set(compiled.artifacts.map((a) => a.model));
  for (const r of ownership?.runners ?? []) {
    if (!desiredModels.has(r.model)) {
      blockers.push(blocker(
        "BLOCKED_RUNNER_REMOVAL",
        r.model,
        `model ${r.model} is owned but no longer declared; removing a runner is not supported`,
      ));
    }
  }
  for (const a of compiled.artifacts) {
    const owned = ownership?.runners.find((r) => r.model === a.model);
    const obs = observation?.runners.find((r) => r.applicationId === a.artifact.application_id);
    if (!owned) {
      if (
        obs && (obs.containers.length > 0 || obs.volume.exists ||
          Object.keys(obs.kafka.committed).length > 0)
      ) {
        blockers.push(blocker(
          "BLOCKED_UNOWNED_RUNTIME",
          a.model,
          `application ID ${a.artifact.application_id} already has containers, a volume or committed offsets that this project does not own`,
          {
            containers: obs.containers.map((c) => c.id),
            volume: obs.volume.exists,
            committed: obs.kafka.committed,
          },
        ));
      } else {
        actions.push({
          type: "create_runner",
          model: a.model,
          application_id: a.artifact.application_id,
          artifact_sha256: a.sha256,
        });
      }
      continue;
    }
    if (!obs) {
      // offline: ownership alone decides; a changed artifact needs evidence only an online
      // plan collects
      if (owned.artifact_sha256 !== a.sha256) {
        blockers.push(blocker(
          "BLOCKED_OFFLINE_REPLACEMENT",
          a.model,
          `model ${a.model} changed; a replacement is planned only online (format 6 binds observed evidence)`,
        ));
      }
      continue;
    }
    const checked = verifyOwnedRunner(obs, owned, ownedTopics);
    if (checked.blockers.length > 0) {
      blockers.push(...checked.blockers);
      continue;
    }
    if (owned.artifact_sha256 === a.sha256) continue; // no-op
    const prior = priorArtifact(obs);
    if (!prior || artifactSha256(prior) !== owned.artifact_sha256) {
      blockers.push(blocker(
        "BLOCKED_WRONG_MOUNTED_PLAN",
        a.model,
        `the running artifact of ${a.model} cannot be reconstructed to the owned checksum ${owned.artifact_sha256}`,
      ));
      continue;
    }
    const changes = changedFields(prior, a.artifact);
    const forbidden = changes.filter((f) => f !== "predicate");
    if (forbidden.length > 0) {
      for (const f of forbidden) blockers.push(fieldBlocker(f, a.model, prior, a.artifact));
      continue;
    }
    actions.push(replacementAction(obs, owned.artifact_sha256, prior, a.artifact, a.sha256));
  }

  const replacements = actions.filter((x) => x.type === "replace_runner_predicate");
  if (replacements.length > 0 && actions.length > 1) {
    blockers.push(blocker(
      "BLOCKED_MIXED_REPLACEMENT",
      null,
      `a predicate replacement must be the only mutation of an apply; this plan has ${actions.length} actions (${
        actions.map((x) => x.type).join(", ")
      })`,
    ));
  }
  const sole = replacements.length === 1 && actions.length === 1 && blockers.length === 0 && online
    ? replacements[0] as RunnerAction
    : null;
  return {
    format: sole ? 6 : 5,
    project: compiled.project,
    environment: compiled.environment,
    mode: online ? "online" : "offline",
    scope: "full",
    created_at: input.now,
    source_sha256: input.sourceSha256,
    protected_state: { checksum: state.checksum, serial: ownership?.serial ?? 0 },
    store: state.identity,
    artifacts: compiled.artifacts.map((x) => ({
      model: x.model,
      sha256: x.sha256,
      artifact: x.artifact,
    })),
    actions,
    blockers,
    typed_action: sole ? { action: sole, sha256: typedActionSha256(sole) } : null,
  };
}

function blocker(
  code: string,
  model: string | null,
  message: string,
  evidence?: Record<string, unknown>,
): Blocker {
  // always present: a plan is canonical JSON, which has no undefined
  return { code, model, message, evidence: evidence ?? {} };
}

/** The running artifact reconstructed from the mounted plan's bytes. */
function priorArtifact(obs: RunnerObservation): RunnerArtifact | null {
  const text = obs.containers[0]?.plan.text;
  if (!text) return null;
  try {
    return validateArtifact(parseMountedPlan(new TextEncoder().encode(text)).artifact);
  } catch {
    return null;
  }
}

function changedFields(prior: RunnerArtifact, desired: RunnerArtifact): string[] {
  return changedArtifactFields(prior, desired);
}

const FIELD_BLOCKERS: Record<string, [string, string]> = {
  projection: ["BLOCKED_PROJECTION_CHANGE", "the projection changed"],
  schema: ["BLOCKED_SCHEMA_CHANGE", "the source schema changed"],
  input: ["BLOCKED_TOPIC_CHANGE", "the input topic changed"],
  output: ["BLOCKED_TOPIC_CHANGE", "the output topic changed"],
  image: ["BLOCKED_IMAGE_CHANGE", "the runner image changed"],
  network: ["BLOCKED_NETWORK_CHANGE", "the Docker network changed"],
  initial_offsets: ["BLOCKED_OFFSET_POLICY_CHANGE", "the initial-offset policy changed"],
  on_invalid: [
    "BLOCKED_INVALID_POLICY_CHANGE",
    "the on_invalid policy or its dead-letter topic changed",
  ],
};

function fieldBlocker(
  field: string,
  model: string,
  prior: RunnerArtifact,
  desired: RunnerArtifact,
): Blocker {
  const [code, what] = FIELD_BLOCKERS[field] ?? ["BLOCKED_IDENTITY_CHANGE", `the ${field} changed`];
  const key = field as keyof RunnerArtifact;
  return blocker(
    code,
    model,
    `model ${model}: ${what}; only the predicate of a running runner may be replaced`,
    // an absent optional field (on_invalid) is null: canonical JSON has no undefined
    { field, prior: prior[key] ?? null, desired: desired[key] ?? null },
  );
}

function replacementAction(
  obs: RunnerObservation,
  priorSha: string,
  prior: RunnerArtifact,
  desired: RunnerArtifact,
  desiredSha: string,
): RunnerAction {
  const c = obs.containers[0];
  const identities: ProviderIdentities = {
    cluster_id: obs.kafka.clusterId,
    input_topic_id: obs.kafka.input!.id,
    output_topic_id: obs.kafka.output!.id,
    docker_daemon_id: obs.daemonId,
    image_id: obs.image!.id,
    network_id: obs.networkId ?? "",
  };
  return {
    type: "replace_runner_predicate",
    model: desired.model,
    application_id: desired.application_id,
    prior_artifact_sha256: priorSha,
    desired_artifact_sha256: desiredSha,
    evidence: {
      old_container_id: c.id,
      old_container_name: c.name,
      old_generation: c.labels.generation,
      old_plan_sha256: c.labels.planSha256,
      volume: { name: obs.volume.name, instance_id: obs.volume.instanceLabel },
      identities: { ...identities },
      // reviewed offsets are lower bounds: processing may advance while a plan is reviewed
      offsets_lower_bounds: obs.kafka.ranges.map((r) => ({
        topic: obs.target.inputTopic,
        partition: r.partition,
        offset: obs.kafka.committed[String(r.partition)],
      })),
      prior_artifact: prior as unknown as Record<string, never>,
      desired_artifact: desired as unknown as Record<string, never>,
    },
  };
}
