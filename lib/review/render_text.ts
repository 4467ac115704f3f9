/**
 * The review as text for a terminal: one block per changed model (predicate diff with its
 * source lines, what stays, who reads the output, uncertainties, the preview), then topics,
 * blockers and notes. A rendering only: everything shown is in the {@link Review} object.
 *
 * @example
 * ```ts
 * import { renderReviewText } from "./render_text.ts";
 * // console.log(renderReviewText(review));
 * ```
 * @module
 */
import type { ModelImpact } from "../plan/impact.ts";
import type { PreviewModel } from "./preview.ts";
import type { ConnectorReview, ModelReview, PredicateSide, Review } from "./review.ts";

/** The headline of a model's change (the plan's action line, as before the review existed). */
function headline(c: ModelReview): string {
  const id = c.application_id || "no application ID";
  switch (c.kind) {
    case "replace_predicate":
      return `~ replace predicate of ${id} (model ${c.model})`;
    case "create":
      return `+ create runner ${id} (model ${c.model})`;
    case "blocked":
      return `! blocked: model ${c.model} (${id})`;
    case "remove":
      return c.stops
        ? `- remove runner ${id} (model ${c.model}): stop container ${c.stops.container_name} (${
          c.stops.container_id.slice(0, 12)
        }, generation ${c.stops.generation}) with TERM and remove it`
        : `- remove model ${c.model} (${id}): blocked`;
  }
}

/**
 * Render a review as text.
 * @example
 * ```ts
 * import type { Review } from "./review.ts";
 * const show = (review: Review) => console.log(renderReviewText(review));
 * ```
 */
export function renderReviewText(review: Review): string {
  const lines: string[] = [];
  const where = `${review.project}${review.environment ? `/${review.environment}` : ""}`;
  if (review.git) {
    lines.push(
      `Changes from ${review.git.base.ref} (${review.git.base.commit.slice(0, 12)}) to ${
        review.git.head.commit
          ? `${review.git.head.ref} (${review.git.head.commit.slice(0, 12)})`
          : "the working tree"
      } for ${where}:`,
    );
  }
  if (review.plan) {
    const p = review.plan;
    lines.push(
      `Plan (format ${p.format}, ${p.mode}${
        p.scope === "selected" ? `, selected: ${(p.selected ?? []).join(", ")}` : ""
      }) for ${where}:`,
    );
  }
  const connectors = review.connectors ?? [];
  const changing = connectors.filter((c) => c.change !== "none");
  if (
    review.changes.length === 0 && review.topics.length === 0 && review.blockers.length === 0 &&
    changing.length === 0
  ) {
    lines.push(
      review.plan
        ? "  No changes: the running system matches the project."
        : "  No changes to any model.",
    );
  }
  for (const t of review.topics) {
    lines.push(`  + create topic ${t.topic} (${t.partitions} partitions)`);
  }
  for (const c of review.changes) lines.push(...renderModel(c));
  for (const c of changing) lines.push(...renderConnector(c));
  for (const b of review.blockers) lines.push(`  ! [${b.code}] ${b.message}`);
  if (review.summary.unchanged.length > 0) {
    lines.push(`  unchanged: ${review.summary.unchanged.join(", ")}`);
  }
  const same = connectors.filter((c) => c.change === "none");
  if (same.length > 0) {
    lines.push(`  unchanged connectors: ${same.map((c) => `${c.name}${stateText(c)}`).join(", ")}`);
  }
  for (const n of review.notes) lines.push(`note: ${n}`);
  if (review.plan) {
    lines.push(
      `sha256 ${review.plan.sha256}${review.plan.file ? `, written to ${review.plan.file}` : ""}`,
    );
  }
  return lines.join("\n");
}

function renderModel(c: ModelReview): string[] {
  const out: string[] = [];
  out.push(
    `  ${headline(c)}${c.reviewable ? "" : " — not reviewable"}${
      c.changed.length > 0 ? `; changed: ${c.changed.join(", ")}` : ""
    }`,
  );
  for (const w of c.why) out.push(`      ! [${w.code}] ${w.message}`);
  if (c.predicate) {
    if (c.predicate.old) {
      out.push(
        `      - WHERE ${c.predicate.old.sql}${
          sourceNote(c.predicate.old, "the running artifact")
        }`,
      );
    }
    if (c.predicate.new) {
      out.push(
        `      ${c.predicate.old || c.kind === "create" ? "+" : " "} WHERE ${c.predicate.new.sql}${
          sourceNote(c.predicate.new, "")
        }`,
      );
    }
    const cols = [
      ...new Set([...(c.predicate.old?.columns ?? []), ...(c.predicate.new?.columns ?? [])]),
    ];
    if (cols.length > 0) out.push(`      the filter reads: ${cols.join(", ")}`);
  }
  if (c.stays) {
    const s = c.stays;
    out.push(`      stays: application ID ${s.application_id}`);
    if (s.volume) {
      out.push(
        `             state volume ${s.volume.name} (instance ${s.volume.instance_id ?? "?"})`,
      );
    }
    if (s.offsets_lower_bounds.length > 0) {
      out.push(
        `             committed offsets, as lower bounds: ${
          s.offsets_lower_bounds.map((o) => `${o.topic}-${o.partition}@${o.offset ?? "none"}`)
            .join(", ")
        }`,
      );
    }
    if (s.topics) out.push(`             topics ${s.topics.join(", ")} (and their records)`);
  }
  if (c.impact) out.push(...renderImpact(c.impact));
  if (c.preview) out.push(...renderPreview(c.preview));
  return out;
}

const CONNECTOR_HEADLINE: Record<ConnectorReview["change"], string> = {
  create: "+ create connector",
  update: "~ update connector",
  remove: "- remove connector",
  release: "= already absent: release connector",
  already_absent: "= already absent: connector",
  blocked: "! blocked: connector",
  none: "  connector",
};

function stateText(c: ConnectorReview): string {
  if (!c.state) return "";
  const tasks = c.state.tasks.map((t) => `${t.id}:${t.state}`).join(" ");
  return ` (${c.state.connector}${tasks ? `, tasks ${tasks}` : ""})`;
}

function renderConnector(c: ConnectorReview): string[] {
  const kind = c.kind ? `${c.kind}, ` : "";
  const topics = c.topics.length > 0
    ? ` ${c.kind === "source" ? "→" : "←"} ${c.topics.join(", ")}`
    : "";
  const out = [
    `  ${CONNECTOR_HEADLINE[c.change]} ${c.name} (${kind}cluster ${c.cluster})${topics}${
      c.change === "remove"
        ? ": the connector object only (its topics, offsets and files stay)"
        : c.change === "release"
        ? ": its ownership record is dropped, no Connect call"
        : ""
    }`,
  ];
  for (const w of c.why) out.push(`      ! [${w.code}] ${w.message}`);
  for (const ch of c.changes) {
    const show = (v: string | null) => v === null ? "(absent)" : JSON.stringify(v);
    out.push(
      c.change === "create"
        ? `      ${ch.key}: ${show(ch.after)}`
        : `      ${ch.key}: ${show(ch.before)} → ${show(ch.after)}`,
    );
  }
  return out;
}

function sourceNote(side: PredicateSide, fallback: string): string {
  if (side.source) {
    const lines = side.source.first_line === side.source.last_line
      ? `${side.source.first_line}`
      : `${side.source.first_line}-${side.source.last_line}`;
    return `    (${side.source.file}:${lines})`;
  }
  return fallback ? `    (${fallback})` : "";
}

function renderImpact(m: ModelImpact): string[] {
  const out: string[] = [];
  out.push(`      downstream of ${m.output_topic ?? m.model}:`);
  for (const d of m.declared) {
    const cols = d.columns.map((c) => `${c.name} ${c.type}${c.in_output ? "" : " (NOT OUTPUT)"}`);
    const group = d.group_id === d.external ? "" : ` (group ${d.group_id})`;
    out.push(`        ${d.external}${group} declared, reads ${cols.join(", ")}`);
  }
  for (const name of m.downstream_models) out.push(`        model ${name} reads this output`);
  if (m.live.observed) {
    if (m.live.groups.length === 0) out.push("        live groups: none hold committed offsets");
    for (const g of m.live.groups) {
      out.push(
        `        live group ${g.group_id}: ${g.state}, ${g.members ?? "?"} member(s), committed ${
          Object.entries(g.committed).map(([p, o]) => `${p}@${o}`).join(" ")
        } — ${g.declared_as ? `declared as ${g.declared_as}` : "UNDECLARED"}`,
      );
    }
  } else {
    out.push(`        live groups: not observed (${m.live.reason})`);
  }
  if (m.declared.length === 0 && m.downstream_models.length === 0) {
    out.push("        no declared consumer");
  }
  for (const u of m.uncertainties) out.push(`        ? ${u}`);
  return out;
}

function renderPreview(p: PreviewModel): string[] {
  const out: string[] = [];
  out.push(
    `      preview: last ${p.requested} record(s) of ${p.input_topic}: ${p.sampled} sampled${
      p.tombstones > 0 ? ` (+${p.tombstones} tombstones)` : ""
    }${p.stopped ? `, stopped early (${p.stopped} bound)` : ""}`,
  );
  out.push(
    `        admitted by old ${p.admitted_old}, by new ${p.admitted_new}; newly admitted ${p.newly_admitted}, newly dropped ${p.newly_dropped}; undecodable ${p.undecodable}${
      p.undecodable > 0
        ? ` (${Object.entries(p.undecodable_by_reason).map(([k, v]) => `${k} ${v}`).join(", ")})`
        : ""
    }`,
  );
  for (
    const [label, list] of [
      ["newly admitted", p.examples.newly_admitted],
      ["newly dropped", p.examples.newly_dropped],
    ] as const
  ) {
    for (const e of list) {
      out.push(`        ${label}: ${p.input_topic}-${e.partition}@${e.offset} ${values(e.values)}`);
    }
  }
  for (const u of p.undecodable_examples) {
    out.push(
      `        undecodable: ${p.input_topic}-${u.partition}@${u.offset} ${u.code}: ${u.message}`,
    );
  }
  return out;
}

/** Output columns as `{name: value}` (BIGINT as quoted decimal text: it may exceed 2^53). */
export function values(v: Record<string, string | number | boolean | null>): string {
  return `{${Object.entries(v).map(([k, x]) => `${k}: ${JSON.stringify(x)}`).join(", ")}}`;
}
