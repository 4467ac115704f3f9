/**
 * The reviewed evidence of a predicate replacement, typed once: what the format-6 plan binds
 * (spec, "Reviewed and durable evidence") — the old exact container, the volume instance, the
 * immutable provider identities, the observed offsets as lower bounds, and both artifact
 * preimages. The journal and the plan store it as opaque JSON inside the typed action
 * (`RunnerAction.evidence`); {@link reviewedEvidence} reads it back strictly and
 * {@link evidenceJson} writes it, so no caller ever casts it.
 *
 * @example
 * ```ts
 * import { reviewedEvidence } from "./reviewed_evidence.ts";
 * import type { RunnerAction } from "../state/journal.ts";
 * const oldContainer = (a: RunnerAction) => reviewedEvidence(a).old_container_id;
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { validateArtifact } from "../artifact/artifact.ts";
import type { PartitionOffset, RunnerAction } from "../state/journal.ts";

/** The immutable identities of the providers a reviewed plan binds. */
export interface ProviderIdentities {
  cluster_id: string;
  input_topic_id: string;
  output_topic_id: string;
  /**
   * The dead-letter topic's ID, exactly when the artifacts have `on_invalid` (a replacement
   * never changes the policy: `BLOCKED_INVALID_POLICY_CHANGE`).
   */
  dead_letter_topic_id?: string;
  docker_daemon_id: string;
  image_id: string;
  network_id: string;
}

/** What the reviewed plan bound about the running replacement target. */
export interface ReviewedEvidence {
  old_container_id: string;
  old_container_name: string;
  old_generation: string | null;
  old_plan_sha256: string | null;
  /** The state volume and its generated instance UUID (never redacted: it is not a secret). */
  volume: { name: string; instance_id: string };
  identities: ProviderIdentities;
  /** Reviewed offsets are lower bounds: processing may advance while a plan is reviewed. */
  offsets_lower_bounds: PartitionOffset[];
  prior_artifact: RunnerArtifact;
  desired_artifact: RunnerArtifact;
}

/** The JSON value type the journal stores evidence as. */
type JsonValue = RunnerAction["evidence"][string];

const KEYS = [
  "desired_artifact",
  "identities",
  "offsets_lower_bounds",
  "old_container_id",
  "old_container_name",
  "old_generation",
  "old_plan_sha256",
  "prior_artifact",
  "volume",
] as const;

const IDENTITY_KEYS = [
  "cluster_id",
  "docker_daemon_id",
  "image_id",
  "input_topic_id",
  "network_id",
  "output_topic_id",
] as const;

function invalid(path: string, what: string): never {
  throw new SluiceError(
    "PLAN_INVALID",
    `the typed action's reviewed evidence is invalid: ${path} ${what}`,
    { evidence: { path } },
  );
}

function record(v: unknown, path: string, keys: readonly string[]): Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) invalid(path, "must be an object");
  const r = v as Record<string, unknown>;
  const actual = Object.keys(r).sort();
  if (JSON.stringify(actual) !== JSON.stringify([...keys].sort())) {
    invalid(path, `has fields ${actual.join(",")}, not ${[...keys].sort().join(",")}`);
  }
  return r;
}

function str(v: unknown, path: string): string {
  if (typeof v !== "string" || v === "") invalid(path, "must be a non-empty string");
  return v;
}

function nullableStr(v: unknown, path: string): string | null {
  return v === null ? null : str(v, path);
}

function offsets(v: unknown, path: string): PartitionOffset[] {
  if (!Array.isArray(v)) invalid(path, "must be an array");
  return v.map((o, i) => {
    const r = record(o, `${path}[${i}]`, ["offset", "partition", "topic"]);
    if (!Number.isSafeInteger(r.partition) || (r.partition as number) < 0) {
      invalid(`${path}[${i}].partition`, "must be a partition number");
    }
    if (typeof r.offset !== "string" || !/^[0-9]+$/.test(r.offset)) {
      invalid(`${path}[${i}].offset`, "must be a decimal offset");
    }
    return {
      topic: str(r.topic, `${path}[${i}].topic`),
      partition: r.partition as number,
      offset: r.offset,
    };
  });
}

function artifact(v: unknown, path: string): RunnerArtifact {
  try {
    return validateArtifact(v);
  } catch (error) {
    invalid(path, `is not a runner artifact (${(error as Error).message})`);
  }
}

/**
 * Read a typed action's evidence strictly (exact fields, types, both artifacts valid). Throws
 * `PLAN_INVALID` naming the offending path.
 *
 * @example
 * ```ts
 * import { reviewedEvidence } from "./reviewed_evidence.ts";
 * import type { RunnerAction } from "../state/journal.ts";
 * const volume = (a: RunnerAction) => reviewedEvidence(a).volume.instance_id;
 * ```
 */
export function reviewedEvidence(action: RunnerAction): ReviewedEvidence {
  const e = record(action.evidence, "evidence", KEYS);
  const desired = artifact(e.desired_artifact, "evidence.desired_artifact");
  if (desired.application_id !== action.application_id || desired.model !== action.model) {
    invalid("evidence.desired_artifact", "is not the action's model and application ID");
  }
  const v = record(e.volume, "evidence.volume", ["instance_id", "name"]);
  // the dead-letter topic is bound exactly when the desired artifact sends records to one
  const deadLetter = desired.on_invalid !== undefined;
  const id = record(
    e.identities,
    "evidence.identities",
    deadLetter ? [...IDENTITY_KEYS, "dead_letter_topic_id"] : IDENTITY_KEYS,
  );
  const ids = (k: typeof IDENTITY_KEYS[number]) => str(id[k], `evidence.identities.${k}`);
  const prior = artifact(e.prior_artifact, "evidence.prior_artifact");
  if ((prior.on_invalid === undefined) === deadLetter) {
    invalid("evidence.prior_artifact", "has another on_invalid policy than the desired artifact");
  }
  return {
    old_container_id: str(e.old_container_id, "evidence.old_container_id"),
    old_container_name: str(e.old_container_name, "evidence.old_container_name"),
    old_generation: nullableStr(e.old_generation, "evidence.old_generation"),
    old_plan_sha256: nullableStr(e.old_plan_sha256, "evidence.old_plan_sha256"),
    volume: {
      name: str(v.name, "evidence.volume.name"),
      instance_id: str(v.instance_id, "evidence.volume.instance_id"),
    },
    identities: {
      cluster_id: ids("cluster_id"),
      input_topic_id: ids("input_topic_id"),
      output_topic_id: ids("output_topic_id"),
      ...(deadLetter
        ? {
          dead_letter_topic_id: str(
            id.dead_letter_topic_id,
            "evidence.identities.dead_letter_topic_id",
          ),
        }
        : {}),
      docker_daemon_id: ids("docker_daemon_id"),
      image_id: ids("image_id"),
      network_id: ids("network_id"),
    },
    offsets_lower_bounds: offsets(e.offsets_lower_bounds, "evidence.offsets_lower_bounds"),
    prior_artifact: prior,
    desired_artifact: desired,
  };
}

function json(v: unknown, path: string): JsonValue {
  if (v === null || typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) invalid(path, "must be a finite number");
    return v;
  }
  if (Array.isArray(v)) return v.map((x, i) => json(x, `${path}[${i}]`));
  if (typeof v === "object") {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, x] of Object.entries(v)) out[k] = json(x, `${path}.${k}`);
    return out;
  }
  return invalid(path, `cannot be stored as JSON (${typeof v})`);
}

/**
 * The evidence as the JSON the typed action stores (a checked conversion, not a cast).
 *
 * @example
 * ```ts
 * import { evidenceJson, reviewedEvidence } from "./reviewed_evidence.ts";
 * import type { RunnerAction } from "../state/journal.ts";
 * const roundTrip = (a: RunnerAction) => evidenceJson(reviewedEvidence(a));
 * ```
 */
export function evidenceJson(e: ReviewedEvidence): RunnerAction["evidence"] {
  const out = json(e, "evidence");
  if (out === null || typeof out !== "object" || Array.isArray(out)) {
    return invalid("evidence", "must be an object");
  }
  return out;
}
