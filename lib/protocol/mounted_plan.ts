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

/** The plan a runner container mounts. */
export interface MountedPlan {
  format: typeof MOUNTED_PLAN_FORMAT;
  version: typeof MOUNTED_PLAN_VERSION;
  artifact: RunnerArtifact;
  artifact_sha256: string;
  bootstrap_servers: string;
  identity: { cluster_id: string; input_topic_id: string; output_topic_id: string };
}

/** Build the mounted plan for an artifact and the observed identities. */
export function buildMountedPlan(
  artifact: RunnerArtifact,
  bootstrapServers: string,
  identity: MountedPlan["identity"],
): MountedPlan {
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
  for (const k of ["cluster_id", "input_topic_id", "output_topic_id"]) {
    if (typeof id?.[k] !== "string") throw invalid(`identity.${k} must be a string`);
  }
  if (typeof v.bootstrap_servers !== "string") throw invalid("bootstrap_servers must be a string");
  return value as MountedPlan;
}

function invalid(message: string): SluiceError {
  return new SluiceError("PLAN_MOUNTED_INVALID", `mounted runner plan: ${message}`);
}
