/**
 * What a change to a running model's artifact is, decided as data: every top-level field of the
 * artifact has a policy — the journey that carries a change of it out, or the blocker that
 * refuses it (code and words). {@link classifyChange} compares two artifacts field by field and
 * reads the policy; the planner, the format-6 coordinator's re-check and the Git comparison all
 * classify through it. The table is total over the artifact's fields (the type requires an entry
 * for each), so a new field cannot go unclassified, and the next kind of change is one entry here
 * plus its journey.
 *
 * @example
 * ```ts
 * import { classifyChange } from "./change_policy.ts";
 * import type { RunnerArtifact } from "../artifact/artifact.ts";
 * declare const prior: RunnerArtifact, desired: RunnerArtifact;
 * const c = classifyChange("eligible_orders", prior, desired);
 * console.log(c.fields, c.journey, c.blockers.map((b) => b.code));
 * ```
 * @module
 */
import type { ErrorCode } from "../errors.ts";
import { changedArtifactFields, type RunnerArtifact } from "../artifact/artifact.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";

/** A journey that changes a running model in place. */
export type ChangeJourney = "replace_predicate";

/** What a change of one field is: carried out by a journey, or refused. */
export type FieldPolicy =
  | { readonly kind: "journey"; readonly journey: ChangeJourney }
  | { readonly kind: "blocked"; readonly code: ErrorCode; readonly what: string };

const blocked = (code: ErrorCode, what: string): FieldPolicy => ({ kind: "blocked", code, what });
const identity = (field: string) => blocked("BLOCKED_IDENTITY_CHANGE", `the ${field} changed`);

/** The policy of every artifact field (required and optional). */
export const CHANGE_POLICY: { readonly [F in keyof Required<RunnerArtifact>]: FieldPolicy } = {
  format: identity("format"),
  version: identity("version"),
  project: identity("project"),
  environment: identity("environment"),
  model: identity("model"),
  application_id: identity("application_id"),
  input: blocked("BLOCKED_TOPIC_CHANGE", "the input topic changed"),
  output: blocked("BLOCKED_TOPIC_CHANGE", "the output topic changed"),
  schema: blocked("BLOCKED_SCHEMA_CHANGE", "the source schema changed"),
  projection: blocked("BLOCKED_PROJECTION_CHANGE", "the projection changed"),
  predicate: { kind: "journey", journey: "replace_predicate" },
  image: blocked("BLOCKED_IMAGE_CHANGE", "the runner image changed"),
  network: blocked("BLOCKED_NETWORK_CHANGE", "the Docker network changed"),
  initial_offsets: blocked("BLOCKED_OFFSET_POLICY_CHANGE", "the initial-offset policy changed"),
  ownership: identity("ownership"),
  on_invalid: blocked(
    "BLOCKED_INVALID_POLICY_CHANGE",
    "the on_invalid policy or its dead-letter topic changed",
  ),
};

/** A change between two artifacts of one model, classified. */
export interface ClassifiedChange {
  /** The fields whose content differs, in the artifact's order. */
  fields: Array<keyof RunnerArtifact>;
  /** The journey that carries the change out (null: nothing changed, or something is refused). */
  journey: ChangeJourney | null;
  /** One blocker per refused field, with both sides as evidence. */
  blockers: Blocker[];
}

/** What a journey may change, in words (the refusal says it). */
function allowed(): string {
  const fields = Object.entries(CHANGE_POLICY).filter(([, p]) => p.kind === "journey")
    .map(([f]) => `the ${f}`);
  return `only ${fields.join(" or ")} of a running runner may be replaced`;
}

/**
 * Classify the change from `prior` (running) to `desired` (compiled) of `model`.
 *
 * @example
 * ```ts
 * import { classifyChange } from "./change_policy.ts";
 * import type { RunnerArtifact } from "../artifact/artifact.ts";
 * declare const a: RunnerArtifact;
 * classifyChange("m", a, a); // { fields: [], journey: null, blockers: [] }
 * ```
 */
export function classifyChange(
  model: string,
  prior: RunnerArtifact,
  desired: RunnerArtifact,
): ClassifiedChange {
  const fields = changedArtifactFields(prior, desired);
  const blockers: Blocker[] = [];
  const journeys = new Set<ChangeJourney>();
  for (const field of fields) {
    const policy = CHANGE_POLICY[field];
    if (policy.kind === "journey") {
      journeys.add(policy.journey);
      continue;
    }
    blockers.push(blocker(
      policy.code,
      `model ${model}: ${policy.what}; ${allowed()}`,
      // an absent optional field (on_invalid) is null: canonical JSON has no undefined
      { model, evidence: { field, prior: prior[field] ?? null, desired: desired[field] ?? null } },
    ));
  }
  const journey = blockers.length === 0 && journeys.size === 1 ? [...journeys][0] : null;
  return { fields, journey, blockers };
}
