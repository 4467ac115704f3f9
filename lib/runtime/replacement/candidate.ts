/**
 * The candidate of a replacement, derived from the reviewed action and the operation (never
 * observed): its unique name, generation labels, the exact mounted plan bytes and their
 * sha256, and the container spec `docker create` receives. A lost create response is resolved
 * by looking up exactly this name with exactly these labels.
 *
 * @example
 * ```ts
 * import { expectCandidate } from "./candidate.ts";
 * // const x = expectCandidate(action, operationId, 0, typedActionSha256(action), "kafka:9092");
 * // x.name === "<application-id>.op-<operation-id>.a0"
 * ```
 * @module
 */
import type { RunnerArtifact } from "../../artifact/artifact.ts";
import type { RunnerAction } from "../../state/journal.ts";
import type { ContainerSpec, DockerPort } from "../../providers/docker/port.ts";
import { createOnExistingVolume } from "../../providers/docker/existing_volume.ts";
import { SluiceError } from "../../errors.ts";
import { blocker, blockerError } from "../../validation/blocker.ts";
import { buildMountedPlan, mountedPlanBytes } from "../../protocol/mounted_plan.ts";
import type { RunnerTarget } from "../../validation/observation.ts";
import { targetOfArtifact } from "../../validation/observation.ts";
import type { CandidateIdentity } from "../../validation/reviewed_runtime.ts";
import type { ReviewedEvidence } from "../../validation/reviewed_evidence.ts";
import { reviewedEvidence } from "../../validation/reviewed_evidence.ts";
import {
  candidateContainerName,
  generationOf,
  LABEL,
  RUNNER_ENV,
  RUNNER_EXECUTION,
  RUNNER_PATHS,
  volumeName,
} from "../labels.ts";

/** What the reviewed action fixes about the candidate (derived, never observed). */
export interface CandidateExpectation extends CandidateIdentity {
  /** The reviewed evidence of the action (typed once). */
  evidence: ReviewedEvidence;
  desiredArtifact: RunnerArtifact;
  /** The exact bytes the candidate mounts (their sha256 is `planSha256`). */
  planBytes: Uint8Array;
}

/**
 * Build the candidate expectation from the reviewed action (throws `PLAN_INVALID` when the
 * action's evidence is malformed).
 *
 * @example
 * ```ts
 * import { expectCandidate } from "./candidate.ts";
 * // const x = expectCandidate(action, operationId, 0, fingerprint, bootstrapInternal);
 * ```
 */
export function expectCandidate(
  action: RunnerAction,
  operationId: string,
  actionIndex: number,
  fingerprint: string,
  bootstrapInternal: string,
): CandidateExpectation {
  const evidence = reviewedEvidence(action);
  const desired = evidence.desired_artifact;
  const mounted = buildMountedPlan(desired, bootstrapInternal, {
    cluster_id: evidence.identities.cluster_id,
    input_topic_id: evidence.identities.input_topic_id,
    output_topic_id: evidence.identities.output_topic_id,
    ...(evidence.identities.dead_letter_topic_id !== undefined
      ? { dead_letter_topic_id: evidence.identities.dead_letter_topic_id }
      : {}),
  });
  const { bytes, sha256 } = mountedPlanBytes(mounted);
  return {
    name: candidateContainerName(action.application_id, operationId, actionIndex),
    generation: generationOf(operationId, actionIndex),
    operationId,
    actionIndex,
    fingerprint,
    evidence,
    desiredArtifact: desired,
    desiredArtifactSha256: action.desired_artifact_sha256,
    planBytes: bytes,
    planSha256: sha256,
  };
}

/**
 * What the observer reads for this replacement.
 *
 * @example
 * ```ts
 * import { candidateTarget } from "./candidate.ts";
 * // const obs = await observeRunner(ports, candidateTarget(x));
 * ```
 */
export function candidateTarget(x: CandidateExpectation): RunnerTarget {
  return targetOfArtifact(x.desiredArtifact);
}

/**
 * The spec of the stopped candidate: the desired image and network, the retained volume, the
 * mounted plan, the generation labels (written atomically by create) and the fixed execution
 * options; the environment is the image's plus exactly sluice's two variables.
 *
 * @example
 * ```ts
 * import { candidateSpec } from "./candidate.ts";
 * // const spec = candidateSpec(x, planPath, image.env, { "ci.run": "t1" });
 * ```
 */
export function candidateSpec(
  x: CandidateExpectation,
  planPath: string,
  imageEnv: string[],
  extraLabels: Record<string, string> = {},
): ContainerSpec {
  const a = x.desiredArtifact;
  return {
    name: x.name,
    image: a.image,
    labels: {
      ...extraLabels,
      [LABEL.managedBy]: "sluice",
      [LABEL.project]: a.project,
      [LABEL.environment]: a.environment ?? "",
      [LABEL.model]: a.model,
      [LABEL.applicationId]: a.application_id,
      [LABEL.artifactSha256]: x.desiredArtifactSha256,
      [LABEL.planSha256]: x.planSha256,
      [LABEL.generation]: x.generation,
      [LABEL.operationId]: x.operationId,
      [LABEL.actionIndex]: String(x.actionIndex),
      [LABEL.evidenceFingerprint]: x.fingerprint,
    },
    env: [
      ...imageEnv,
      `${RUNNER_ENV.planSha256}=${x.planSha256}`,
      `${RUNNER_ENV.generation}=${x.generation}`,
    ],
    network: a.network,
    planHostPath: planPath,
    planContainerPath: RUNNER_PATHS.plan,
    volume: volumeName(a.application_id),
    volumeContainerPath: RUNNER_PATHS.volume,
    memoryBytes: RUNNER_EXECUTION.memoryBytes,
    stopTimeoutSeconds: RUNNER_EXECUTION.stopTimeoutSeconds,
  };
}

/**
 * Create the stopped candidate on the retained state volume, never on one Docker's create makes
 * in its place ("It never creates a missing volume"): the volume must exist and carry the
 * reviewed instance label right before and right after the create — a volume that vanished in
 * between is undone with the candidate ({@link createOnExistingVolume}; the undo re-verifies the
 * lock first). A refusal is the blocker `BLOCKED_VOLUME_MISSING` or
 * `BLOCKED_VOLUME_INSTANCE_CHANGED`, naming the operator's way out.
 *
 * @example
 * ```ts
 * import { createCandidate } from "./candidate.ts";
 * // const id = await createCandidate(docker, x, candidateSpec(x, planPath, env), verifyLock);
 * ```
 */
export async function createCandidate(
  docker: DockerPort,
  x: CandidateExpectation,
  spec: ContainerSpec,
  verifyLock: () => Promise<void>,
): Promise<string> {
  try {
    return await createOnExistingVolume(
      docker,
      spec,
      { [LABEL.volumeInstance]: x.evidence.volume.instance_id },
      { beforeUndo: verifyLock },
    );
  } catch (error) {
    const volume = error instanceof SluiceError &&
      (error.code === "BLOCKED_VOLUME_MISSING" || error.code === "BLOCKED_VOLUME_INSTANCE_CHANGED");
    if (!volume) throw error;
    throw blockerError([
      blocker(
        error.code,
        `${error.message}. sluice never recreates a state volume: the operation stays pending with no candidate; way out: 'sluice state abandon --operation-id ${x.operationId} --reason TEXT' (docs/runbook.md, "The runner's identities and the inventory")`,
        { model: x.desiredArtifact.model, evidence: error.evidence ?? {} },
      ),
    ]);
  }
}
