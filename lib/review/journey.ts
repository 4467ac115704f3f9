/**
 * The review journeys of the SDK: {@link planReview} (a plan with its review: predicate diff,
 * downstream impact, optionally a live preview sealed as a summary, optionally a Git base
 * comparison) and {@link diff} (the Git base/head comparison alone, offline). Each returns the
 * canonical {@link Review}; the CLI only renders it.
 *
 * @example
 * ```ts
 * import { diff, planReview } from "./journey.ts";
 * // offline here; online, `preview: true` also runs each changed filter on recent records
 * const r = await planReview({ dir: "./orders", offline: true });
 * console.log(r.review.changes[0]?.predicate?.new?.sql);
 * const d = await diff({ dir: "./orders", base: "HEAD~1" });
 * console.log(d.summary);
 * ```
 * @module
 */
import { resolve } from "node:path";
import { SluiceError } from "../errors.ts";
import { loadProject } from "../project/load.ts";
import type { SettingsOverride } from "../project/settings_override.ts";
import type { Project, ProjectFiles } from "../project/load.ts";
import type { Plan } from "../plan/plan.ts";
import { sealPlan } from "../plan/plan_file.ts";
import { openRevision } from "../providers/git/git.ts";
import type { GitLimits, Revision } from "../providers/git/git.ts";
import { openSession, planSession } from "../runtime/session.ts";
import type { PlanOptions, PlanResult } from "../runtime/session.ts";
import { compareProjects } from "./compare.ts";
import type { RevisionProject } from "./compare.ts";
import { PREVIEW_DEFAULTS, previewSummary, previewTargets, sampleModel } from "./preview.ts";
import type { PreviewLimits, PreviewModel } from "./preview.ts";
import { reviewOfPlan, safe, summarize } from "./review.ts";
import type { Review } from "./review.ts";

/** Options of {@link planReview}. */
export interface PlanReviewOptions extends PlanOptions {
  /**
   * Run a live preview of each changed model (online only): `true` for the defaults, or the
   * number of records, or full bounds. Its summary is sealed into the plan.
   */
  preview?: boolean | number | Partial<PreviewLimits>;
  /** Compare with the project at this Git revision (implies an offline plan). */
  base?: string;
  /** The plan file the plan will be written to, for the review's record (unless it is blocked). */
  file?: string | null;
  /** Bounds of every Git call. */
  git?: GitLimits;
}

/** A plan with its review. */
export interface PlanReviewResult extends PlanResult {
  /** The canonical review (render it with renderReviewText or renderReviewMarkdown). */
  review: Review;
  /** The full preview of each changed model, examples included (the plan seals only counts). */
  previews: PreviewModel[];
}

/**
 * Compute a plan and its review. Writes nothing; mutates nothing (the preview and the live
 * consumer reads are read-only).
 * @example
 * ```ts
 * import { planReview } from "./journey.ts";
 * const { plan, review } = await planReview({ dir: "./orders", offline: true });
 * console.log(plan.format, review.summary);
 * ```
 */
export async function planReview(options: PlanReviewOptions = {}): Promise<PlanReviewResult> {
  const offline = checkPlanReviewOptions(options);
  await using p = await openSession(options);
  const computed = await planSession(p, offline, options.select ?? null, options.destroy ?? null);
  let plan: Plan = computed.plan;
  const previews: PreviewModel[] = [];
  if (options.preview) {
    const limits = previewLimits(options.preview);
    for (const target of previewTargets(plan)) {
      try {
        previews.push(await sampleModel(p.kafka, target, limits));
      } catch (error) {
        if (error instanceof SluiceError) throw error;
        // the preview is never required: say which read failed and how to plan without it
        throw new SluiceError(
          "ENV_PREVIEW_FAILED",
          `the preview of ${target.model} could not read ${target.input_topic}: ${
            (error as Error).message
          } (nothing was changed; plan without --preview to skip it)`,
          { cause: error },
        );
      }
    }
    // the reviewer's view is recorded with the plan: the counts, never the records
    plan = { ...plan, preview: previews.map(previewSummary) };
  }
  // the preview section is part of what the key seals: sealed again, under the store's key
  const { bytes, sha256, sealed: { seal: _seal, ...keyed } } = sealPlan(
    plan,
    await p.store.sealKey(),
  );
  plan = keyed;
  let review = reviewOfPlan({
    project: p.project,
    plan,
    sha256,
    file: options.file ?? null,
    previews,
  });
  if (options.base !== undefined) {
    // the Git comparison says what changes between the revisions; the offline plan says what
    // applying now would do: its blockers are kept, each naming its model
    const compared = await compareWithBase(options, p.project);
    const inGit = new Set(compared.changes.map((c) => c.model));
    const changes = [...compared.changes, ...review.changes.filter((c) => !inGit.has(c.model))];
    review = {
      ...compared,
      plan: review.plan,
      summary: summarize(
        changes,
        compared.summary.unchanged.filter((m) => !changes.some((c) => c.model === m)),
      ),
      changes,
      topics: review.topics,
      blockers: plan.blockers.map((b) => ({
        code: b.code,
        message: b.model ? `${b.model}: ${b.message}` : b.message,
      })),
      notes: [
        ...compared.notes,
        ...review.notes.filter((n) => !compared.notes.includes(n)),
        ...(plan.blockers.some((b) => b.code === "BLOCKED_OFFLINE_REPLACEMENT")
          ? [offlineGateNote(options.base)]
          : []),
        ...review.changes.filter((c) => inGit.has(c.model)).map((c) =>
          `From deployment state, this plan's action for ${c.model} is: ${
            c.kind === "create" ? "create the runner" : c.kind.replace("_", " ")
          }${c.why.length > 0 ? ` (${c.why.map((w) => w.code).join(", ")})` : ""}.`
        ),
      ],
    };
    review = safe(review);
  }
  return {
    plan,
    bytes,
    sha256,
    observation: computed.observation,
    noop: computed.noop,
    review,
    previews,
  };
}

/**
 * What `plan --base` says when its offline plan blocks a reviewable predicate change: the offline
 * gate a pull request wants is `diff`, which reviews the change without planning it.
 */
function offlineGateNote(base: string): string {
  return `A predicate replacement is planned only online, so this offline plan blocks it ` +
    `(BLOCKED_OFFLINE_REPLACEMENT). For an offline gate on a pull request, review the change ` +
    `with 'sluice diff --base ${base}' (it exits 0 and reports each change as reviewable or ` +
    `blocked: gate on its summary.blocked); plan it online with 'sluice plan --out FILE' where ` +
    `the runner is observed.`;
}

/**
 * Refuse options that contradict each other before anything is opened
 * (`USAGE_PREVIEW_OFFLINE`, `USAGE_DESTROY_OPTIONS`); returns whether the plan is offline.
 *
 * @example
 * ```ts
 * import { checkPlanReviewOptions } from "./journey.ts";
 * console.log(checkPlanReviewOptions({ base: "HEAD~1" })); // true: a Git comparison is offline
 * ```
 */
export function checkPlanReviewOptions(
  options: {
    offline?: boolean;
    base?: string;
    preview?: unknown;
    select?: string[] | null;
    destroy?: { deleteData: boolean } | null;
  },
): boolean {
  const offline = options.offline === true || options.base !== undefined;
  if (options.destroy) {
    // a destroy plans the removal of what is owned, never the project's changes
    const other = [
      options.select ? "--select" : null,
      options.preview ? "--preview" : null,
      options.base !== undefined ? "--base" : null,
    ].filter((x) => x !== null);
    if (other.length > 0) {
      throw new SluiceError(
        "USAGE_DESTROY_OPTIONS",
        `--destroy plans the removal of everything the project owns; it takes no ${
          other.join(", ")
        } (they plan the project's changes)`,
      );
    }
  }
  if (offline && options.preview) {
    throw new SluiceError(
      "USAGE_PREVIEW_OFFLINE",
      "--preview reads the input topics live; it cannot run with --offline or --base",
    );
  }
  return offline;
}

/** Options of {@link diff}. */
export interface DiffOptions {
  /** Project directory inside a Git working tree (default "."). */
  dir?: string;
  environment?: string | null;
  /** A settings override given in code, applied to both sides (`lib/project/settings_override.ts`). */
  settings?: SettingsOverride;
  /** The base revision. */
  base: string;
  /** The head revision; the working tree when absent. */
  head?: string | null;
  git?: GitLimits;
}

/**
 * Compare the project at `base` with `head` (or the working tree). Offline: reads only Git's
 * objects and the working tree.
 * @example
 * ```ts
 * import { diff } from "./journey.ts";
 * const review = await diff({ dir: "./orders", base: "HEAD~1" });
 * console.log(review.summary);
 * ```
 */
export async function diff(options: DiffOptions): Promise<Review> {
  const dir = resolve(options.dir ?? ".");
  const environment = options.environment ?? null;
  const settings = options.settings;
  const head = options.head
    ? await revisionProject(dir, options.head, environment, options.git, settings)
    : {
      project: await loadProject(dir, { environment, settings }),
      ref: "working tree",
      commit: null,
    };
  return await compareWithBase({ ...options, dir }, head.project, head);
}

async function compareWithBase(
  options: {
    dir?: string;
    environment?: string | null;
    base?: string;
    git?: GitLimits;
    settings?: SettingsOverride;
  },
  headProject: Project,
  head?: RevisionProject,
): Promise<Review> {
  const dir = resolve(options.dir ?? ".");
  const base = await revisionProject(
    dir,
    options.base!,
    options.environment ?? null,
    options.git,
    options.settings,
  );
  return compareProjects(base, head ?? { project: headProject, ref: "working tree", commit: null });
}

async function revisionProject(
  dir: string,
  ref: string,
  environment: string | null,
  limits?: GitLimits,
  settings?: SettingsOverride,
): Promise<RevisionProject> {
  const rev = await openRevision(dir, ref, limits);
  const project = await loadProject(dir, { environment, files: revisionFiles(rev), settings });
  return {
    project,
    ref,
    commit: rev.commit,
    fileLabel: (path) => `${ref}:${rev.prefix}${path}`,
  };
}

/** A revision's files as a project reads them; diagnostics name them `REF:path`. */
export function revisionFiles(rev: Revision): ProjectFiles {
  return {
    read: (path) => rev.read(path),
    name: (path) => `${rev.ref}:${rev.prefix}${path}`,
    noProject: `the project does not exist at ${rev.ref} (commit ${rev.commit.slice(0, 12)}): ` +
      `it was added after that revision, or lives at another path there; compare from a ` +
      `revision that has it`,
  };
}

function previewLimits(p: true | number | Partial<PreviewLimits>): PreviewLimits {
  if (p === true) return PREVIEW_DEFAULTS;
  if (typeof p === "number") {
    if (!Number.isInteger(p) || p < 1 || p > 1_000_000) {
      throw new SluiceError(
        "USAGE_PREVIEW_RECORDS",
        `--preview=N takes a record count between 1 and 1,000,000, found ${p}`,
      );
    }
    return { ...PREVIEW_DEFAULTS, records: p };
  }
  return { ...PREVIEW_DEFAULTS, ...p };
}
