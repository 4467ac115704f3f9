/**
 * The Git base/head comparison: the project compiled at two revisions, compared model by model.
 * For each model it says what changed (predicate, projection, schema, topics, partitions,
 * image, network, initial offsets, application identity), whether that is a reviewable
 * replacement (predicate only), a create, or a blocked kind and why (the same blocker codes an
 * online plan gives), and the downstream impact as declared at the head. Pure: both projects
 * are loaded beforehand. A revert is reviewed as what it is: a new change from base to head.
 *
 * @example
 * ```ts
 * import { compareProjects } from "./compare.ts";
 * // const review = compareProjects({ project: base, ref: "HEAD~1", commit }, { project: head, ref: "working tree", commit: null });
 * ```
 * @module
 */
import { RUNNER_REMOVAL_NOTE } from "../plan/removals.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";
import type { CompiledArtifact } from "../project/compile.ts";
import { compile } from "../project/compile.ts";
import type { Project } from "../project/load.ts";
import { planImpact } from "../plan/impact.ts";
import type { ImpactChange } from "../plan/impact.ts";
import { classifyChange } from "../plan/change_policy.ts";
import type { ModelReview, Review } from "./review.ts";
import {
  FIELD_WORDS,
  FORWARD_ONLY_NOTE,
  modelOf,
  predicateSide,
  safe,
  summarize,
} from "./review.ts";

/** One side of the comparison. */
export interface RevisionProject {
  project: Project;
  /** The ref as given, or "working tree". */
  ref: string;
  /** The commit, or null for the working tree. */
  commit: string | null;
  /** How source lines name their file (e.g. `HEAD~1:models/m.sql`); default the path. */
  fileLabel?: (path: string) => string;
}

/**
 * Compare the project at `base` with the project at `head`.
 * @example
 * ```ts
 * const review = compareProjects(base, head);
 * for (const c of review.changes) console.log(c.model, c.kind, c.changed);
 * ```
 */
export function compareProjects(base: RevisionProject, head: RevisionProject): Review {
  const before = new Map(compile(base.project).artifacts.map((a) => [a.model, a]));
  const after = new Map(compile(head.project).artifacts.map((a) => [a.model, a]));
  const changes: ModelReview[] = [];
  const unchanged: string[] = [];
  const label = (side: RevisionProject, path: string) => side.fileLabel?.(path) ?? path;
  for (const [model, desired] of after) {
    const prior = before.get(model);
    const m = modelOf(head.project, model)!;
    const newSide = predicateSide(desired.artifact.predicate, m, label(head, m.decl.sql));
    if (!prior) {
      changes.push(entry(model, desired, "create", ["new model"], [], {
        old: null,
        new: newSide,
        changed: true,
      }));
      continue;
    }
    const { fields, blockers } = classifyChange(model, prior.artifact, desired.artifact);
    const extra = partitionBlockers(base.project, head.project, model);
    const all = [...blockers, ...extra];
    const changed = [
      ...new Set([
        ...fields.map((f) => FIELD_WORDS[f] ?? f),
        ...(extra.length > 0 ? ["partitions"] : []),
      ]),
    ];
    if (changed.length === 0) {
      unchanged.push(model);
      continue;
    }
    const bm = modelOf(base.project, model)!;
    const predicate = {
      old: predicateSide(prior.artifact.predicate, bm, label(base, bm.decl.sql)),
      new: newSide,
      changed: fields.includes("predicate"),
    };
    changes.push(
      entry(
        model,
        desired,
        all.length === 0 ? "replace_predicate" : "blocked",
        changed,
        all,
        predicate,
      ),
    );
  }
  for (const [model, prior] of before) {
    if (after.has(model)) continue;
    // removal is never inferred from absence: only a declared one is a change to make
    const declared = (head.project.manifest.runnerRemovals ?? []).some((r) => r.model === model);
    changes.push(
      entry(
        model,
        prior,
        "remove",
        [declared ? "removed model (lifecycle.runner_removals)" : "removed model"],
        declared ? [] : [blocker(
          "BLOCKED_RUNNER_REMOVAL",
          `model ${model} is removed at ${head.ref} without a removal declaration; declare it (lifecycle.runner_removals: [{ model: ${model} }]) to take its runner down`,
          { model },
        )],
        null,
      ),
    );
  }
  const impact = planImpact({
    project: head.project,
    changes: changes.map((c) => ({ model: c.model, change: c.kind as ImpactChange })),
    live: null,
    liveUnobserved: "a Git comparison is offline",
  });
  for (const c of changes) c.impact = impact.models.find((m) => m.model === c.model) ?? null;
  const notes = [
    `Compared from ${base.ref} (${base.commit!.slice(0, 12)}) to ${
      head.commit ? `${head.ref} (${head.commit.slice(0, 12)})` : "the working tree"
    }: each difference is a change to make from base to head, whatever the history between them.`,
  ];
  if (changes.some((c) => c.predicate?.changed)) notes.push(FORWARD_ONLY_NOTE);
  if (changes.some((c) => c.kind === "remove" && c.reviewable)) notes.push(RUNNER_REMOVAL_NOTE);
  if (changes.some((c) => c.kind === "replace_predicate")) {
    notes.push(
      "A reviewable replacement is carried out from an online plan (sluice plan --out FILE, then sluice apply --plan FILE), which binds the running evidence.",
    );
  }
  return safe({
    format: "sluice.review",
    version: 1,
    project: head.project.manifest.project,
    environment: head.project.manifest.environment,
    plan: null,
    git: {
      base: { ref: base.ref, commit: base.commit! },
      head: { ref: head.ref, commit: head.commit },
    },
    summary: summarize(changes, unchanged),
    changes,
    topics: [],
    blockers: [],
    notes,
  });
}

function entry(
  model: string,
  artifact: CompiledArtifact,
  kind: ModelReview["kind"],
  changed: string[],
  blockers: Blocker[],
  predicate: ModelReview["predicate"],
): ModelReview {
  return {
    model,
    application_id: artifact.artifact.application_id,
    kind,
    reviewable: blockers.length === 0,
    changed,
    why: blockers.map((b) => ({ code: b.code, message: b.message })),
    predicate,
    stays: null,
    impact: null,
    preview: null,
  };
}

/** Declared partition counts of the model's output and its managed source. */
function partitionBlockers(base: Project, head: Project, model: string): Blocker[] {
  const b = modelOf(base, model)!;
  const h = modelOf(head, model)!;
  const out: Blocker[] = [];
  const pairs: Array<[string, number | null, number | null]> = [
    [`output topic ${h.decl.outputTopic}`, b.outputPartitions, h.outputPartitions],
    [`source topic ${h.source.topic}`, b.source.partitions, h.source.partitions],
  ];
  for (const [what, from, to] of pairs) {
    if (from !== to) {
      out.push({
        code: "BLOCKED_PARTITION_CHANGE",
        model,
        message:
          `model ${model}: ${what} is declared with ${to} partitions instead of ${from}; partition counts of a running runner's topics never change`,
        evidence: { from, to },
      });
    }
  }
  return out;
}
