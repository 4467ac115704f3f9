/**
 * The review: one canonical object that says, in the user's words, what a change does before it
 * happens. Text, JSON (`-o json`) and Markdown (`--format markdown`, a pull-request comment) are
 * renderings of this object (`render_text.ts`, `render_markdown.ts`); nothing is computed while
 * rendering. It is built by pure functions from a plan (`reviewOfPlan`) or from a Git base/head
 * comparison (`compare.ts`), and it is display-safe by construction: predicate text hides
 * literals compared with secret-named columns, and every string passes the display redaction.
 *
 * Field names are stable (docs/cli.md, "The review object").
 *
 * @example
 * ```ts
 * import { reviewOfPlan } from "./review.ts";
 * // const review = reviewOfPlan({ project, plan, sha256, file: "replace.plan.json" });
 * // review.changes[0].predicate?.old?.sql  → "amount >= 100 AND paid = TRUE"
 * ```
 * @module
 */
import {
  DESTROY_DELETE_NOTE,
  DESTROY_NOTE,
  destroyDataLines,
  RUNNER_REMOVAL_NOTE,
} from "../plan/removals.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { isSensitiveKey, REDACTED, redactForDisplay } from "../artifact/redact.ts";
import type { Expr } from "../expr/ast.ts";
import { SourceFile } from "../expr/diagnostic.ts";
import { HIDDEN_LITERAL, predicateColumns, printPredicate } from "../expr/print.ts";
import type { ModelImpact } from "../plan/impact.ts";
import type { Plan } from "../plan/plan.ts";
import type { Project, ProjectModel } from "../project/load.ts";
import { parseModelSql } from "../project/sql_parser.ts";
import type { PreviewModel } from "./preview.ts";
import type { ConnectorPlanItem } from "../plan/connectors.ts";
import { runnerPermissionWarnings } from "../validation/runner_permissions.ts";

/** What kind of change a model sees. */
export type ChangeKind = "replace_predicate" | "create" | "blocked" | "remove";

/** One side of a predicate diff. */
export interface PredicateSide {
  /** Canonical SQL of the WHERE predicate (`TRUE` without WHERE). */
  sql: string;
  /** The columns it reads. */
  columns: string[];
  /** Where it is written; null for the running artifact (no source file). */
  source: { file: string; first_line: number; last_line: number; text: string } | null;
}

/** The review of one model. */
export interface ModelReview {
  /** The model. */
  model: string;
  /** Its application ID. */
  application_id: string;
  /** What kind of change it is. */
  kind: ChangeKind;
  /** True for a change sluice can carry out (a create, a predicate-only replacement). */
  reviewable: boolean;
  /**
   * What changed, in the user's words: `predicate`, `projection`, `schema`, `input topic`,
   * `output topic`, `partitions`, `image`, `network`, `initial offsets`, `application identity`,
   * `new model`, `removed model`.
   */
  changed: string[];
  /** Why it is blocked (empty when reviewable). */
  why: Array<{ code: string; message: string }>;
  /** Old and new predicate; null when neither side is known. */
  predicate: { old: PredicateSide | null; new: PredicateSide | null; changed: boolean } | null;
  /** For a replacement: what stays. Offsets are lower bounds (processing may advance). */
  stays: {
    application_id: string;
    volume: { name: string; instance_id: string | null } | null;
    offsets_lower_bounds: Array<{ topic: string; partition: number; offset: string | null }>;
    /** For a removal: the topics that stay (absent for a replacement). */
    topics?: string[];
  } | null;
  /** For a removal: the exact generation it stops and removes (absent otherwise). */
  stops?: { container_id: string; container_name: string; generation: string };
  /** Who reads the model's output (declared, downstream models, live groups, uncertainties). */
  impact: ModelImpact | null;
  /** The live preview of this model, when one was run. */
  preview: PreviewModel | null;
}

/** The canonical review. */
export interface Review {
  /** Document format name. */
  format: "sluice.review";
  /** Document version. */
  version: 1;
  /** The project name (the head side of a comparison). */
  project: string;
  /** The environment, or null. */
  environment: string | null;
  /** The plan reviewed, when the review comes from one. */
  plan: {
    format: 5 | 6;
    mode: "online" | "offline";
    scope: "full" | "selected";
    selected: string[] | null;
    sha256: string;
    /** The plan file it is written to; null when none is, and always for a blocked plan. */
    file: string | null;
    noop: boolean;
  } | null;
  /** The Git comparison, when the review comes from one (head commit null: working tree). */
  git: {
    base: { ref: string; commit: string };
    head: { ref: string; commit: string | null };
  } | null;
  /** How many models each kind of change concerns, and the unchanged ones. */
  summary: {
    replacements: number;
    creates: number;
    blocked: number;
    removed: number;
    unchanged: string[];
  };
  /** One entry per changed model. */
  changes: ModelReview[];
  /** Topics a plan creates. */
  topics: Array<{ topic: string; partitions: number; role: "source" | "output" | "dead_letter" }>;
  /** Blockers that concern no single model or connector. */
  blockers: Array<{ code: string; message: string }>;
  /** What the reviewer should know, e.g. that a replacement is forward-only. */
  notes: string[];
  /**
   * What the plan does with each declared, removed or owned connector (with its redacted
   * configuration diff); absent when the project has none.
   */
  connectors?: ConnectorReview[];
}

/** The review of one connector: the plan's item (`lib/plan/connectors.ts`). */
export type ConnectorReview = ConnectorPlanItem;

/** Removal is of the connector object only: said once, wherever a removal is reviewed. */
export const CONNECTOR_REMOVAL_NOTE =
  "Removing a connector deletes the connector object only: its topics, their records, its consumer group offsets, its stored source offsets and the external systems it reads or writes stay.";

/** A replacement is forward-only: said once, wherever a replacement is reviewed. */
export const FORWARD_ONLY_NOTE =
  "A replacement applies forward from the committed offsets: records already emitted under the old predicate stay, and source offsets are never rewound. A revert is a new change, not a rewind.";

/** What {@link reviewOfPlan} reads. */
export interface PlanReviewInput {
  /** The project the plan was computed from (for source lines and declarations). */
  project: Project;
  plan: Plan;
  sha256: string;
  file: string | null;
  /** Live previews by model, when run. */
  previews?: PreviewModel[];
}

/**
 * The review of a plan. Pure.
 * @example
 * ```ts
 * import type { Project } from "../project/load.ts";
 * import type { Plan } from "../plan/plan.ts";
 * const review = (project: Project, plan: Plan, sha256: string) =>
 *   reviewOfPlan({ project, plan, sha256, file: null });
 * ```
 */
export function reviewOfPlan(input: PlanReviewInput): Review {
  const { project, plan } = input;
  const changes: ModelReview[] = [];
  const impactOf = (model: string) => plan.impact?.models.find((m) => m.model === model) ?? null;
  const previewOf = (model: string) => input.previews?.find((p) => p.model === model) ?? null;
  // a destroy's runners are reviewed as removals are (what stops, what stays)
  const destroy = plan.actions.find((a) => a.type === "destroy");
  for (const a of plan.actions.flatMap((x) => x.type === "destroy" ? x.runners : [x])) {
    if (a.type === "create_runner") {
      const artifact = plan.artifacts.find((x) => x.model === a.model)!.artifact;
      changes.push({
        model: a.model,
        application_id: a.application_id,
        kind: "create",
        reviewable: true,
        changed: a.resume
          ? [
            `declared again: resumes from the consumer group offsets removal ${a.resume.removed_by} kept${
              a.resume.volume_kept
                ? `, with its state volume (instance ${a.resume.volume_instance})`
                : ""
            }`,
          ]
          : [
            "new model",
            // a set: where each instance is created (each its own container and state volume)
            ...(a.instances
              ? [
                `${a.instances.length} instances, each its own container and state volume: ${
                  a.instances.map((i) => `${i.instance} on ${i.endpoint ?? "the one daemon"}`)
                    .join(", ")
                }`,
              ]
              : []),
          ],
        why: [],
        predicate: {
          old: null,
          new: predicateSide(artifact.predicate, modelOf(project, a.model)),
          changed: true,
        },
        stays: null,
        impact: impactOf(a.model),
        preview: previewOf(a.model),
      });
    } else if (a.type === "remove_runner") {
      changes.push({
        model: a.model,
        application_id: a.application_id,
        kind: "remove",
        reviewable: true,
        changed: [destroy ? "taken down by the destroy" : "removed model"],
        why: [],
        predicate: null,
        stays: {
          application_id: a.application_id,
          volume: a.volume,
          offsets_lower_bounds: a.keeps.committed,
          topics: a.keeps.topics,
        },
        stops: {
          container_id: a.container.id,
          container_name: a.container.name,
          generation: a.container.generation,
        },
        impact: impactOf(a.model),
        preview: null,
      });
    } else if (a.type === "replace_runner_predicate") {
      const prior = a.evidence.prior_artifact as unknown as RunnerArtifact;
      const desired = a.evidence.desired_artifact as unknown as RunnerArtifact;
      const ev = a.evidence as unknown as {
        volume?: { name: string; instance_id: string | null };
        offsets_lower_bounds?: Array<{ topic: string; partition: number; offset?: string }>;
      };
      changes.push({
        model: a.model,
        application_id: a.application_id,
        kind: "replace_predicate",
        reviewable: true,
        changed: ["predicate"],
        why: [],
        predicate: {
          old: predicateSide(prior.predicate, null),
          new: predicateSide(desired.predicate, modelOf(project, a.model)),
          changed: true,
        },
        stays: {
          application_id: a.application_id,
          volume: ev.volume ?? null,
          offsets_lower_bounds: (ev.offsets_lower_bounds ?? []).map((o) => ({
            topic: o.topic,
            partition: o.partition,
            offset: o.offset ?? null,
          })),
        },
        impact: impactOf(a.model),
        preview: previewOf(a.model),
      });
    }
  }
  const general: Array<{ code: string; message: string }> = [];
  const connectorNames = new Set((plan.connectors?.items ?? []).map((i) => i.name));
  for (const b of plan.blockers) {
    // a connector's blockers are shown with the connector
    if (b.model === null && connectorNames.has(b.evidence.connector as string)) continue;
    if (b.model === null) {
      general.push({ code: b.code, message: b.message });
      continue;
    }
    let entry = changes.find((c) => c.model === b.model);
    if (!entry) {
      const m = modelOf(project, b.model);
      const artifact = plan.artifacts.find((x) => x.model === b.model)?.artifact ?? null;
      entry = {
        model: b.model,
        // a removed model has no artifact: its blockers name the owned runner's application ID
        application_id: artifact?.application_id ??
          (typeof b.evidence.application_id === "string" ? b.evidence.application_id : ""),
        kind: m ? "blocked" : "remove",
        reviewable: false,
        changed: m ? [] : ["removed model"],
        why: [],
        predicate: artifact
          ? { old: null, new: predicateSide(artifact.predicate, m), changed: false }
          : null,
        stays: null,
        impact: impactOf(b.model),
        preview: previewOf(b.model),
      };
      changes.push(entry);
    }
    entry.kind = entry.kind === "remove" ? "remove" : "blocked";
    entry.reviewable = false;
    entry.why.push({ code: b.code, message: b.message });
    const field = (b.evidence as { field?: unknown } | undefined)?.field;
    const word = typeof field === "string" ? FIELD_WORDS[field] ?? field : null;
    if (word && !entry.changed.includes(word)) entry.changed.push(word);
    if (b.code === "BLOCKED_SELECTED_REPLACEMENT" || b.code === "BLOCKED_OFFLINE_REPLACEMENT") {
      if (!entry.changed.includes("predicate")) entry.changed.push("predicate");
    }
    if (b.code === "BLOCKED_PARTITION_CHANGE" && !entry.changed.includes("partitions")) {
      entry.changed.push("partitions");
    }
  }
  const changed = new Set(changes.map((c) => c.model));
  const notes: string[] = [];
  if (changes.some((c) => c.kind === "replace_predicate")) notes.push(FORWARD_ONLY_NOTE);
  if (plan.connectors?.items.some((i) => i.change === "remove")) notes.push(CONNECTOR_REMOVAL_NOTE);
  if (plan.actions.some((a) => a.type === "remove_runner")) notes.push(RUNNER_REMOVAL_NOTE);
  if (destroy) {
    notes.push(destroy.deletes ? DESTROY_DELETE_NOTE : DESTROY_NOTE, ...destroyDataLines(destroy));
  }
  notes.push(...runnerPermissionWarnings(plan.runner_permissions));
  if (plan.scope === "selected") {
    notes.push(
      `This plan covers only ${
        (plan.selected ?? []).join(", ")
      }: it carries creates and no-ops, never a replacement.`,
    );
  }
  return safe({
    format: "sluice.review",
    version: 1,
    project: plan.project,
    environment: plan.environment,
    plan: {
      format: plan.format,
      mode: plan.mode,
      scope: plan.scope,
      selected: plan.selected,
      sha256: input.sha256,
      // a blocked plan is never written (apply could only refuse it)
      file: plan.blockers.length > 0 ? null : input.file,
      noop: plan.actions.length === 0 && plan.blockers.length === 0,
    },
    git: null,
    summary: summarize(changes, plan.artifacts.map((a) => a.model).filter((m) => !changed.has(m))),
    changes,
    topics: plan.actions.flatMap((a) =>
      a.type === "create_topic" ? [{ topic: a.topic, partitions: a.partitions, role: a.role }] : []
    ),
    blockers: general,
    notes,
    ...(plan.connectors ? { connectors: plan.connectors.items } : {}),
  });
}

/** The user's word for an artifact field (or a project setting) that changed. */
export const FIELD_WORDS: Record<string, string> = {
  predicate: "predicate",
  projection: "projection",
  schema: "schema",
  input: "input topic",
  output: "output topic",
  image: "image",
  network: "network",
  initial_offsets: "initial offsets",
  application_id: "application identity",
  project: "application identity",
  environment: "application identity",
  model: "application identity",
  ownership: "application identity",
  format: "artifact format",
  version: "artifact format",
};

/** Counts by kind, plus the unchanged models. */
export function summarize(changes: ModelReview[], unchanged: string[]): Review["summary"] {
  return {
    replacements: changes.filter((c) => c.kind === "replace_predicate").length,
    creates: changes.filter((c) => c.kind === "create").length,
    blocked: changes.filter((c) => c.kind === "blocked").length,
    removed: changes.filter((c) => c.kind === "remove").length,
    unchanged,
  };
}

/** The model of a project by name. */
export function modelOf(project: Project, name: string): ProjectModel | null {
  return project.models.find((m) => m.name === name) ?? null;
}

/**
 * One side of a predicate diff: canonical SQL (literals of secret-named columns hidden), the
 * columns read and, when the model file is known, the lines the WHERE predicate spans.
 */
export function predicateSide(
  predicate: Expr,
  model: ProjectModel | null,
  fileLabel?: string,
): PredicateSide {
  const sql = printPredicate(predicate, { hideLiteralsOf: isSensitiveKey });
  let source: PredicateSide["source"] = null;
  if (model) {
    const file = new SourceFile(fileLabel ?? model.decl.sql, model.sqlText);
    const where = parseModelSql(file).where;
    if (where) {
      const first = file.locate(where.span.start).line;
      const last = file.locate(where.span.end).line;
      const lines: string[] = [];
      for (let l = first; l <= last; l++) lines.push(file.lineText(l));
      source = {
        file: file.file,
        first_line: first,
        last_line: last,
        // the source shows the literal the canonical text hides
        text: sql.includes(HIDDEN_LITERAL) ? REDACTED : lines.join("\n"),
      };
    }
  }
  return { sql, columns: predicateColumns(predicate), source };
}

/** Every string of the review through the display redaction (a review is display-only). */
export function safe(review: Review): Review {
  return redactForDisplay(review);
}
