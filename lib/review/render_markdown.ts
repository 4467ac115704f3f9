/**
 * The review as Markdown, suitable as a pull-request comment (`--format markdown`): a summary
 * line, then per changed model the predicate diff in a `diff` block, what stays, a table of who
 * reads the output (declared applications and live groups, undeclared ones marked), the
 * uncertainties, and the preview's counts and examples. A rendering only.
 *
 * @example
 * ```ts
 * import { renderReviewMarkdown } from "./render_markdown.ts";
 * // await Deno.writeTextFile("comment.md", renderReviewMarkdown(review));
 * ```
 * @module
 */
import type { ModelImpact } from "../plan/impact.ts";
import type { PreviewModel } from "./preview.ts";
import type { ConnectorReview, ModelReview, Review } from "./review.ts";

const TITLE: Record<ModelReview["kind"], string> = {
  replace_predicate: "predicate replacement",
  create: "new runner",
  blocked: "blocked",
  remove: "removed (blocked)",
};

/**
 * Render a review as Markdown.
 * @example
 * ```ts
 * import type { Review } from "./review.ts";
 * const comment = (review: Review) => renderReviewMarkdown(review);
 * ```
 */
export function renderReviewMarkdown(review: Review): string {
  const out: string[] = [];
  const where = `${review.project}${review.environment ? `/${review.environment}` : ""}`;
  out.push(`### sluice review: \`${where}\``, "");
  if (review.git) {
    out.push(
      `Compared \`${review.git.base.ref}\` (\`${review.git.base.commit.slice(0, 12)}\`) → ${
        review.git.head.commit
          ? `\`${review.git.head.ref}\` (\`${review.git.head.commit.slice(0, 12)}\`)`
          : "the working tree"
      }.`,
      "",
    );
  }
  if (review.plan) {
    const p = review.plan;
    out.push(
      `Plan format ${p.format} (${p.mode}${
        p.scope === "selected" ? `, selected: ${(p.selected ?? []).map(code).join(", ")}` : ""
      }), sha256 \`${p.sha256}\`${p.file ? `, file \`${p.file}\`` : ""}.`,
      "",
    );
  }
  const s = review.summary;
  out.push(
    `**${s.replacements}** replacement(s), **${s.creates}** create(s), **${s.blocked}** blocked, **${s.removed}** removed${
      s.unchanged.length > 0 ? `; unchanged: ${s.unchanged.map(code).join(", ")}` : ""
    }.`,
    "",
  );
  if (review.topics.length > 0) {
    out.push(
      `Topics to create: ${
        review.topics.map((t) => `${code(t.topic)} (${t.partitions} partitions)`).join(", ")
      }.`,
      "",
    );
  }
  for (const b of review.blockers) out.push(`> **Blocked** \`${b.code}\`: ${cell(b.message)}`, "");
  for (const c of review.changes) out.push(...renderModel(c));
  if ((review.connectors ?? []).length > 0) out.push(...renderConnectors(review.connectors!));
  if (review.notes.length > 0) {
    for (const n of review.notes) out.push(`- ${n}`);
    out.push("");
  }
  return out.join("\n").trimEnd() + "\n";
}

function renderConnectors(items: ConnectorReview[]): string[] {
  const out = ["#### Connectors", "", "| connector | cluster | change | state | configuration |"];
  out.push("| --- | --- | --- | --- | --- |");
  for (const c of items) {
    const state = c.state
      ? `${c.state.connector}${
        c.state.tasks.length > 0
          ? ` (${c.state.tasks.map((t) => `${t.id}:${t.state}`).join(" ")})`
          : ""
      }`
      : "–";
    const config = c.changes.map((x) =>
      c.change === "create"
        ? `${code(x.key)} = ${code(x.after ?? "")}`
        : `${code(x.key)}: ${code(x.before ?? "(absent)")} → ${code(x.after ?? "(absent)")}`
    ).join("<br>") || "–";
    const why = c.why.map((w) =>
      `<br>\`${w.code}\`: ${cell(w.message)}`
    ).join("");
    out.push(
      `| ${code(c.name)} | ${code(c.cluster)} | ${
        c.change.replace("_", " ")
      }${why} | ${state} | ${config} |`,
    );
  }
  out.push("");
  return out;
}

function renderModel(c: ModelReview): string[] {
  const out: string[] = [];
  const title = c.kind === "remove" && c.stops ? "runner removal" : TITLE[c.kind];
  out.push(`#### ${code(c.model)}: ${title}${c.reviewable ? "" : " ⛔"}`, "");
  if (c.stops) {
    out.push(
      `Stops container ${code(c.stops.container_name)} (${
        code(c.stops.container_id.slice(0, 12))
      }, generation ${code(c.stops.generation)}) with TERM and removes it.`,
      "",
    );
  }
  out.push(
    `Application ID ${code(c.application_id || "–")}. Changed: ${c.changed.join(", ") || "–"}.`,
    "",
  );
  for (const w of c.why) out.push(`- \`${w.code}\`: ${cell(w.message)}`);
  if (c.why.length > 0) out.push("");
  if (c.predicate && (c.predicate.old || c.predicate.new)) {
    out.push("```diff");
    if (c.predicate.old) out.push(`- WHERE ${c.predicate.old.sql}`);
    if (c.predicate.new) {
      out.push(
        `${c.predicate.old || c.kind === "create" ? "+" : " "} WHERE ${c.predicate.new.sql}`,
      );
    }
    out.push("```", "");
    const src = [c.predicate.old?.source, c.predicate.new?.source].filter((x) => x);
    for (const side of src) {
      out.push(
        `Source ${
          code(
            `${side!.file}:${side!.first_line}${
              side!.last_line !== side!.first_line ? `-${side!.last_line}` : ""
            }`,
          )
        }:`,
        "",
        "```sql",
        side!.text,
        "```",
        "",
      );
    }
    const cols = [
      ...new Set([...(c.predicate.old?.columns ?? []), ...(c.predicate.new?.columns ?? [])]),
    ];
    if (cols.length > 0) out.push(`The filter reads ${cols.map(code).join(", ")}.`, "");
  }
  if (c.stays) {
    out.push(
      `**Stays:** application ID ${code(c.stays.application_id)}${
        c.stays.volume
          ? `, state volume ${code(c.stays.volume.name)} (instance ${
            code(c.stays.volume.instance_id ?? "?")
          })`
          : ""
      }, committed offsets as lower bounds ${
        c.stays.offsets_lower_bounds.map((o) =>
          code(`${o.topic}-${o.partition}@${o.offset ?? "none"}`)
        )
          .join(", ") || "–"
      }${c.stays.topics ? `, topics ${c.stays.topics.map(code).join(", ")}` : ""}.`,
      "",
    );
  }
  if (c.impact) out.push(...renderImpact(c.impact));
  if (c.preview) out.push(...renderPreview(c.preview));
  return out;
}

function renderImpact(m: ModelImpact): string[] {
  const out: string[] = [`**Downstream of ${code(m.output_topic ?? m.model)}**`, ""];
  out.push("| consumer | declared | reads | live |", "|---|---|---|---|");
  const liveGroups = m.live.observed ? m.live.groups : [];
  for (const d of m.declared) {
    const g = liveGroups.find((x) => x.group_id === d.group_id);
    const live = !m.live.observed
      ? "not observed"
      : g
      ? `${g.state}, ${g.members ?? "?"} member(s)`
      : "no committed offsets";
    out.push(
      `| ${code(d.external)}${
        d.group_id !== d.external ? ` (group ${code(d.group_id)})` : ""
      } | yes | ${
        d.columns.map((c) => `${code(c.name)} ${c.type}${c.in_output ? "" : " **not output**"}`)
          .join(", ")
      } | ${live} |`,
    );
  }
  for (const g of liveGroups.filter((x) => x.declared_as === null)) {
    out.push(`| ${code(g.group_id)} | **no** | ? | ${g.state}, ${g.members ?? "?"} member(s) |`);
  }
  for (const name of m.downstream_models) out.push(`| model ${code(name)} | yes | all | – |`);
  if (m.declared.length === 0 && liveGroups.length === 0 && m.downstream_models.length === 0) {
    out.push("| – | – | – | none seen |");
  }
  out.push("");
  if (!m.live.observed) out.push(`Live groups not observed: ${m.live.reason}.`, "");
  for (const u of m.uncertainties) out.push(`- ⚠️ ${cell(u)}`);
  if (m.uncertainties.length > 0) out.push("");
  return out;
}

function renderPreview(p: PreviewModel): string[] {
  const out: string[] = [
    `**Preview** (last ${p.requested} records of ${code(p.input_topic)}${
      p.stopped ? `, stopped early at the ${p.stopped} bound` : ""
    })`,
    "",
    "| sampled | admitted (old) | admitted (new) | newly admitted | newly dropped | undecodable |",
    "|---:|---:|---:|---:|---:|---:|",
    `| ${p.sampled} | ${p.admitted_old} | ${p.admitted_new} | ${p.newly_admitted} | ${p.newly_dropped} | ${p.undecodable} |`,
    "",
  ];
  for (
    const [label, list] of [
      ["Newly admitted", p.examples.newly_admitted],
      ["Newly dropped", p.examples.newly_dropped],
    ] as const
  ) {
    if (list.length === 0) continue;
    const cols = Object.keys(list[0].values);
    out.push(`${label} (up to 5):`, "");
    out.push(
      `| record | ${cols.map(code).join(" | ")} |`,
      `|---|${cols.map(() => "---").join("|")}|`,
    );
    for (const e of list) {
      out.push(
        `| ${code(`${e.partition}@${e.offset}`)} | ${
          cols.map((k) => cell(JSON.stringify(e.values[k]))).join(" | ")
        } |`,
      );
    }
    out.push("");
  }
  if (p.undecodable > 0) {
    out.push(
      `Undecodable (the runner stops on such a record): ${
        Object.entries(p.undecodable_by_reason).map(([k, v]) => `${code(k)} ×${v}`).join(", ")
      }.`,
      "",
    );
  }
  return out;
}

/** Inline code that survives any content (backticks inside are widened around). */
function code(s: string): string {
  const fence = s.includes("`") ? "`` " : "`";
  return `${fence}${s}${fence.split("").reverse().join("")}`;
}

/** A table cell: pipes and line breaks escaped. */
function cell(s: string): string {
  return s.replaceAll("|", "\\|").replaceAll("\n", " ");
}
