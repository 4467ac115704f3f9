/**
 * The mounted runner plan (docs/artifact-format.md, "Mounted runner plan"): an artifact bound
 * to the runtime identities the container-side gate checks. Its canonical bytes are the file
 * mounted at `/etc/sluice/plan.json`; their sha256 is the container's plan label.
 *
 * @example
 * ```ts
 * import { mountedPlanBytes, parseMountedPlan } from "./mounted_plan.ts";
 * // const { bytes, sha256 } = mountedPlanBytes(plan);
 * // const back = parseMountedPlan(bytes); // strict: checks canonical form and artifact checksum
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { canonicalJson, parseCanonicalJson, sha256Hex } from "../artifact/canonical.ts";
import { artifactSha256, validateArtifact } from "../artifact/artifact.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";

/** The format name of the mounted plan. */
export const MOUNTED_PLAN_FORMAT = "sluice.runner-plan";
/** Its version. */
export const MOUNTED_PLAN_VERSION = 1;

/**
 * The runtime identities a mounted plan binds: the cluster, and the topic ID of each topic the
 * runner reads or writes. `dead_letter_topic_id` is present exactly when the artifact has
 * `on_invalid` (so the mounted plans of models that do not opt in keep their bytes).
 */
export interface MountedIdentity {
  /** The Kafka cluster ID. */
  cluster_id: string;
  /** The input topic's ID (base64url UUID). */
  input_topic_id: string;
  /** The output topic's ID. */
  output_topic_id: string;
  /** The dead-letter topic's ID, exactly when the artifact has `on_invalid`. */
  dead_letter_topic_id?: string;
}

/** The plan a runner container mounts. */
export interface MountedPlan {
  format: typeof MOUNTED_PLAN_FORMAT;
  version: typeof MOUNTED_PLAN_VERSION;
  artifact: RunnerArtifact;
  artifact_sha256: string;
  bootstrap_servers: string;
  identity: MountedIdentity;
}

/**
 * Build the mounted plan for an artifact and the observed identities. The dead-letter topic ID
 * must be given exactly when the artifact has `on_invalid` (`PLAN_MOUNTED_INVALID` otherwise:
 * a runner must never start with a dead-letter topic it cannot check).
 */
export function buildMountedPlan(
  artifact: RunnerArtifact,
  bootstrapServers: string,
  identity: MountedIdentity,
): MountedPlan {
  checkDeadLetterBinding(artifact, identity);
  return {
    format: MOUNTED_PLAN_FORMAT,
    version: MOUNTED_PLAN_VERSION,
    artifact,
    artifact_sha256: artifactSha256(artifact),
    bootstrap_servers: bootstrapServers,
    identity,
  };
}

/** The exact bytes to mount and their sha256 (the plan label). */
export function mountedPlanBytes(plan: MountedPlan): { bytes: Uint8Array; sha256: string } {
  const bytes = new TextEncoder().encode(canonicalJson(plan));
  return { bytes, sha256: sha256Hex(bytes) };
}

/**
 * Read mounted plan bytes back strictly: canonical form, known format and version, a valid
 * artifact whose checksum equals `artifact_sha256`. Throws `PLAN_MOUNTED_INVALID`.
 */
export function parseMountedPlan(bytes: Uint8Array): MountedPlan {
  const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  let value: unknown;
  try {
    value = parseCanonicalJson(text);
  } catch (error) {
    throw invalid(`not canonical JSON: ${(error as Error).message}`);
  }
  const v = value as Record<string, unknown>;
  const keys = [
    "artifact",
    "artifact_sha256",
    "bootstrap_servers",
    "format",
    "identity",
    "version",
  ];
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw invalid("not an object");
  const actual = Object.keys(v).sort();
  if (JSON.stringify(actual) !== JSON.stringify(keys)) {
    throw invalid(`fields ${actual.join(",")} differ from ${keys.join(",")}`);
  }
  if (v.format !== MOUNTED_PLAN_FORMAT || v.version !== MOUNTED_PLAN_VERSION) {
    throw invalid(`unknown format ${String(v.format)} version ${String(v.version)}`);
  }
  const artifact = validateArtifact(v.artifact);
  if (artifactSha256(artifact) !== v.artifact_sha256) {
    throw invalid("artifact_sha256 does not match the embedded artifact");
  }
  const id = v.identity as Record<string, unknown>;
  if (id === null || typeof id !== "object" || Array.isArray(id)) {
    throw invalid("identity must be an object");
  }
  for (const k of ["cluster_id", "input_topic_id", "output_topic_id"]) {
    if (typeof id[k] !== "string") throw invalid(`identity.${k} must be a string`);
  }
  for (const k of Object.keys(id)) {
    if (!IDENTITY_KEYS.includes(k)) throw invalid(`identity.${k} is not a known field`);
  }
  if ("dead_letter_topic_id" in id && typeof id.dead_letter_topic_id !== "string") {
    throw invalid("identity.dead_letter_topic_id must be a string");
  }
  checkDeadLetterBinding(artifact, id as unknown as MountedIdentity);
  if (typeof v.bootstrap_servers !== "string") throw invalid("bootstrap_servers must be a string");
  return value as MountedPlan;
}

const IDENTITY_KEYS = ["cluster_id", "input_topic_id", "output_topic_id", "dead_letter_topic_id"];

/** `dead_letter_topic_id` is bound exactly when the artifact has `on_invalid`. */
function checkDeadLetterBinding(artifact: RunnerArtifact, identity: MountedIdentity): void {
  const bound = identity.dead_letter_topic_id !== undefined;
  if (artifact.on_invalid && !bound) {
    throw invalid(
      `identity.dead_letter_topic_id is missing: the artifact sends undecodable records to ${artifact.on_invalid.topic}`,
    );
  }
  if (!artifact.on_invalid && bound) {
    throw invalid("identity.dead_letter_topic_id is bound, but the artifact has no on_invalid");
  }
}

function invalid(message: string): SluiceError {
  return new SluiceError("PLAN_MOUNTED_INVALID", `mounted runner plan: ${message}`);
}
