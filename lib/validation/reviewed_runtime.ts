/**
 * Validation of the runtime against a reviewed replacement: the invariants that hold at every
 * durable boundary of the spec's table (provider identities, volume instance, the inventory of
 * containers carrying the application ID, group members, resumable progress above the reviewed
 * lower bounds), and the candidate's exact generation and inputs. Built from the same checks as
 * the planner's ({@link "./runner_checks.ts"}).
 *
 * @example
 * ```ts
 * import { verifyReviewedRuntime } from "./reviewed_runtime.ts";
 * // const { blockers, old, cand } = verifyReviewedRuntime(obs, evidence, candidate, model);
 * ```
 * @module
 */
import { type Blocker, blocker } from "./blocker.ts";
import type { ContainerEvidence, RunnerObservation } from "./observation.ts";
import type { ReviewedEvidence } from "./reviewed_evidence.ts";
import {
  checkCluster,
  checkGeneration,
  checkGroupMembers,
  checkProgress,
  checkProviders,
  checkTopics,
  checkVolume,
} from "./runner_checks.ts";

/** What the reviewed action fixes about the candidate's identity (derived, never observed). */
export interface CandidateIdentity {
  /** The unique container name derived from the operation and action. */
  name: string;
  generation: string;
  operationId: string;
  actionIndex: number;
  /** sha256 of the typed action: the candidate's evidence-fingerprint label. */
  fingerprint: string;
  /** sha256 of the exact mounted plan bytes (the candidate's plan label). */
  planSha256: string;
  desiredArtifactSha256: string;
}

/** The runtime split into the reviewed old runner, this operation's candidate, and blockers. */
export interface ReviewedRuntime {
  blockers: Blocker[];
  old: ContainerEvidence | null;
  cand: ContainerEvidence | null;
}

/**
 * A container is this operation's candidate only by its exact generation labels (written
 * atomically by `docker create`); a name alone is never enough.
 *
 * @example
 * ```ts
 * import { isCandidateOf } from "./reviewed_runtime.ts";
 * // isCandidateOf(container, candidate) → true only for this operation's own candidate
 * ```
 */
export function isCandidateOf(c: ContainerEvidence, x: CandidateIdentity): boolean {
  return c.labels.operationId === x.operationId &&
    c.labels.actionIndex === String(x.actionIndex) &&
    c.labels.generation === x.generation && c.labels.evidenceFingerprint === x.fingerprint;
}

/**
 * The invariants that hold at every stage: provider identities, the volume instance, the
 * container inventory (exactly the reviewed old runner and/or this operation's candidate),
 * group members, and progress that is resumable and at or above the reviewed lower bounds.
 *
 * @example
 * ```ts
 * import { verifyReviewedRuntime } from "./reviewed_runtime.ts";
 * // const r = verifyReviewedRuntime(obs, reviewedEvidence(action), candidate, action.model);
 * // if (r.blockers.length === 0 && r.old === null && r.cand === null) { ... }
 * ```
 */
export function verifyReviewedRuntime(
  obs: RunnerObservation,
  e: ReviewedEvidence,
  candidate: CandidateIdentity,
  model: string,
): ReviewedRuntime {
  const out: Blocker[] = [];
  out.push(...checkCluster(obs, e.identities.cluster_id, "reviewed", model));
  out.push(...checkTopics(obs, model, {
    input: [{ id: e.identities.input_topic_id, source: "reviewed" }],
    output: [{ id: e.identities.output_topic_id, source: "reviewed" }],
    deadLetter: [{ id: e.identities.dead_letter_topic_id ?? null, source: "reviewed" }],
  }));
  out.push(...checkProviders(obs, e.identities, model));
  let old: ContainerEvidence | null = null;
  let cand: ContainerEvidence | null = null;
  for (const c of obs.containers) {
    if (c.id === e.old_container_id) old = c;
    else if (isCandidateOf(c, candidate)) cand = c;
    else {
      out.push(blocker(
        "BLOCKED_FOREIGN_GENERATION",
        `container ${
          c.id.slice(0, 12)
        } (${c.name}) carries application ID ${obs.applicationId} but is neither the reviewed old runner nor this operation's candidate`,
        {
          model,
          evidence: {
            container: c.id,
            name: c.name,
            generation: c.labels.generation,
            operation: c.labels.operationId,
          },
        },
      ));
    }
  }
  const via = old?.volumeInstance ?? cand?.volumeInstance ?? null;
  out.push(...checkVolume(obs, e.volume.instance_id, model, via));
  out.push(...checkGroupMembers(obs, model));
  out.push(...checkProgress(obs, model, e.offsets_lower_bounds));
  return { blockers: out, old, cand };
}

/**
 * The candidate's exact desired inputs: the desired generation (artifact label, mounted plan,
 * image, network, options, environment), its derived name and its exact plan label. Whether it
 * was ever started is the caller's question.
 *
 * @example
 * ```ts
 * import { checkCandidateInputs } from "./reviewed_runtime.ts";
 * // const blockers = checkCandidateInputs(cand, candidate, action.model);
 * ```
 */
export function checkCandidateInputs(
  c: ContainerEvidence,
  x: CandidateIdentity,
  model: string,
): Blocker[] {
  const out = checkGeneration(c, x.desiredArtifactSha256, model);
  if (c.name !== x.name) {
    out.push(blocker(
      "BLOCKED_FOREIGN_GENERATION",
      `candidate ${c.id.slice(0, 12)} is named ${c.name}, not ${x.name}`,
      { model, evidence: { container: c.id, name: c.name, expected: x.name } },
    ));
  }
  if (c.labels.planSha256 !== x.planSha256 || c.plan.sha256 !== x.planSha256) {
    out.push(blocker(
      "BLOCKED_WRONG_MOUNTED_PLAN",
      `candidate ${
        c.id.slice(0, 12)
      } mounts plan ${c.plan.sha256}, not the desired ${x.planSha256}`,
      { model, evidence: { container: c.id, mounted: c.plan.sha256, desired: x.planSha256 } },
    ));
  }
  return out;
}
