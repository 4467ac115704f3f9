// Unit tests of the review object and its renderings: a create plan and a replacement plan of
// the starter (fraud_app must appear; the predicates as canonical SQL with their source lines;
// what stays), text and Markdown carrying exactly the object's facts, secrets never shown.
import assert from "node:assert/strict";
import { compile } from "../project/compile.ts";
import { loadProject } from "../project/load.ts";
import type { Project } from "../project/load.ts";
import { tempStarter } from "../project/_test_project.ts";
import type { Plan } from "../plan/plan.ts";
import { planProject } from "../plan/plan.ts";
import { sealPlan } from "../plan/plan_file.ts";
import type { RunnerAction, StoreIdentity } from "../state/journal.ts";
import { reviewOfPlan } from "./review.ts";
import { renderReviewMarkdown } from "./render_markdown.ts";
import { renderReviewText } from "./render_text.ts";
import type { PreviewModel } from "./preview.ts";

const STORE: StoreIdentity = {
  store_id: "11111111-2222-4333-8444-555555555555",
  backend: "local",
  address: "/tmp/state",
};

async function starter(sql?: (t: string) => string): Promise<Project> {
  const dir = await tempStarter();
  const path = `${dir}/models/eligible_orders.sql`;
  if (sql) await Deno.writeTextFile(path, sql(await Deno.readTextFile(path)));
  try {
    return await loadProject(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A format-6 replacement plan of the starter, 100 → 200, as the planner shapes it. */
async function replacementPlan(): Promise<{ project: Project; plan: Plan }> {
  const prior = compile(await starter()).artifacts[0];
  const project = await starter((t) => t.replace("amount >= 100", "amount >= 200"));
  const compiled = compile(project);
  const desired = compiled.artifacts[0];
  const base = planProject({
    project,
    compiled,
    state: { ownership: null, checksum: null, identity: STORE },
    observation: null,
    topics: null,
    now: "2026-12-07T00:00:00.000Z",
    sourceSha256: "a".repeat(64),
  });
  const action: RunnerAction = {
    type: "replace_runner_predicate",
    model: "eligible_orders",
    application_id: desired.artifact.application_id,
    prior_artifact_sha256: prior.sha256,
    desired_artifact_sha256: desired.sha256,
    evidence: {
      volume: { name: "sluice-orders-eligible_orders-state", instance_id: "0b6c7a0e-0000" },
      offsets_lower_bounds: [{ topic: "raw_orders", partition: 0, offset: "4" }],
      prior_artifact: prior.artifact as unknown as Record<string, never>,
      desired_artifact: desired.artifact as unknown as Record<string, never>,
    },
  };
  const plan: Plan = {
    ...base,
    format: 6,
    mode: "online",
    actions: [action],
    blockers: [],
    typed_action: { action, sha256: "f".repeat(64) },
    impact: {
      models: [{
        ...base.impact!.models[0],
        change: "replace_predicate",
        live: {
          observed: true,
          observed_at: "2026-12-07T00:00:00.000Z",
          groups: [
            {
              group_id: "fraud_app",
              state: "Stable",
              members: 1,
              committed: { "0": "3" },
              declared_as: "fraud_app",
            },
            { group_id: "shadow", state: "Empty", members: 0, committed: {}, declared_as: null },
          ],
        },
        uncertainties: ["consumer group shadow holds committed offsets ... undeclared"],
      }],
    },
  };
  return { project, plan };
}

Deno.test("review of a replacement: old and new WHERE as canonical SQL, source lines, what stays, fraud_app", async () => {
  const { project, plan } = await replacementPlan();
  const review = reviewOfPlan({ project, plan, sha256: sealPlan(plan).sha256, file: "r.json" });
  assert.equal(review.format, "sluice.review");
  assert.deepEqual(review.summary, {
    replacements: 1,
    creates: 0,
    blocked: 0,
    removed: 0,
    unchanged: [],
  });
  const [c] = review.changes;
  assert.equal(c.kind, "replace_predicate");
  assert.equal(c.reviewable, true);
  assert.deepEqual(c.changed, ["predicate"]);
  assert.equal(c.predicate!.old!.sql, "amount >= 100 AND paid = TRUE");
  assert.equal(c.predicate!.old!.source, null); // the running artifact has no file
  assert.equal(c.predicate!.new!.sql, "amount >= 200 AND paid = TRUE");
  assert.deepEqual(c.predicate!.new!.source, {
    file: "models/eligible_orders.sql",
    first_line: 4,
    last_line: 4,
    text: "WHERE amount >= 200 AND paid = TRUE",
  });
  assert.deepEqual(c.predicate!.new!.columns, ["amount", "paid"]);
  assert.deepEqual(c.stays, {
    application_id: "sluice-orders-eligible_orders",
    volume: { name: "sluice-orders-eligible_orders-state", instance_id: "0b6c7a0e-0000" },
    offsets_lower_bounds: [{ topic: "raw_orders", partition: 0, offset: "4" }],
  });
  assert.equal(c.impact!.declared[0].external, "fraud_app");
  assert.ok(review.notes.some((n) => /never rewound/.test(n)));

  const text = renderReviewText(review);
  for (
    const expected of [
      "~ replace predicate of sluice-orders-eligible_orders (model eligible_orders)",
      "- WHERE amount >= 100 AND paid = TRUE    (the running artifact)",
      "+ WHERE amount >= 200 AND paid = TRUE    (models/eligible_orders.sql:4)",
      "fraud_app declared, reads order_id STRING, amount BIGINT",
      "live group shadow: Empty, 0 member(s), committed  — UNDECLARED",
      "committed offsets, as lower bounds: raw_orders-0@4",
    ]
  ) assert.ok(text.includes(expected), `missing ${JSON.stringify(expected)} in\n${text}`);

  const md = renderReviewMarkdown(review);
  assert.ok(
    md.includes(
      "```diff\n- WHERE amount >= 100 AND paid = TRUE\n+ WHERE amount >= 200 AND paid = TRUE\n```",
    ),
    md,
  );
  assert.ok(
    md.includes("| `fraud_app` | yes | `order_id` STRING, `amount` BIGINT | Stable, 1 member(s) |"),
    md,
  );
  assert.ok(md.includes("| `shadow` | **no** |"), md);
});

Deno.test("review of a create plan: topics, new runner, declared consumers; no-op says so", async () => {
  const project = await starter();
  const compiled = compile(project);
  const plan = planProject({
    project,
    compiled,
    state: { ownership: null, checksum: null, identity: STORE },
    observation: { observedAt: "t", daemonId: "d", clusterId: "c", runners: [] },
    topics: new Map(),
    now: "2026-12-07T00:00:00.000Z",
    sourceSha256: "a".repeat(64),
    consumers: { observed_at: "t", topics: {} },
  });
  const review = reviewOfPlan({ project, plan, sha256: "s".repeat(64), file: null });
  assert.deepEqual(review.topics.map((t) => t.topic), ["raw_orders", "eligible_orders"]);
  assert.equal(review.changes[0].kind, "create");
  assert.equal(review.changes[0].predicate!.new!.sql, "amount >= 100 AND paid = TRUE");
  assert.equal(review.changes[0].impact!.declared[0].external, "fraud_app");
  assert.match(
    renderReviewText(review),
    /\+ create topic raw_orders \(3 partitions\)\n {2}\+ create topic eligible_orders \(3 partitions\)\n {2}\+ create runner sluice-orders-eligible_orders \(model eligible_orders\)/,
  );

  const noop = reviewOfPlan({
    project,
    plan: { ...plan, actions: [], impact: { models: [] } },
    sha256: "s".repeat(64),
    file: null,
  });
  assert.equal(noop.plan!.noop, true);
  assert.deepEqual(noop.summary.unchanged, ["eligible_orders"]);
  assert.match(renderReviewText(noop), /No changes: the running system matches the project/);
});

Deno.test("review: a predicate comparing a secret-named column shows neither the literal nor the source", async () => {
  const dir = await tempStarter();
  const m = `${dir}/sluice.yaml`;
  await Deno.writeTextFile(
    m,
    (await Deno.readTextFile(m)).replace(
      "      - { name: customer, type: STRING, nullable: true }",
      "      - { name: customer, type: STRING, nullable: true }\n      - { name: api_token, type: STRING, nullable: true }",
    ),
  );
  await Deno.writeTextFile(
    `${dir}/models/eligible_orders.sql`,
    "SELECT order_id, api_token FROM raw_orders WHERE api_token <> 'tok_live_s3cr3t'\n",
  );
  const project = await loadProject(dir);
  await Deno.remove(dir, { recursive: true });
  const plan = planProject({
    project,
    compiled: compile(project),
    state: { ownership: null, checksum: null, identity: STORE },
    observation: null,
    topics: null,
    now: "2026-12-07T00:00:00.000Z",
    sourceSha256: "a".repeat(64),
  });
  const previews: PreviewModel[] = [];
  const review = reviewOfPlan({ project, plan, sha256: "s".repeat(64), file: null, previews });
  const all = [JSON.stringify(review), renderReviewText(review), renderReviewMarkdown(review)];
  for (const out of all) assert.doesNotMatch(out, /tok_live_s3cr3t/);
});
