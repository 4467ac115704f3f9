// The Git base/head comparison on a temporary repository holding the starter through several
// commits: a predicate change, its revert (a new change, never a rewind), a projection change
// (blocked, with fraud_app affected), a partition change, a new model and the working tree.
import assert from "node:assert/strict";
import { SluiceError } from "../errors.ts";
import { starterFiles } from "../project/starter.ts";
import { gitRepo } from "../../testing/git_repo.ts";
import type { GitRepo } from "../../testing/git_repo.ts";
import { diff } from "./journey.ts";
import { renderReviewMarkdown } from "./render_markdown.ts";
import { renderReviewText } from "./render_text.ts";

const SQL = "orders/models/eligible_orders.sql";
const YAML = "orders/sluice.yaml";

async function history(): Promise<{ repo: GitRepo; commits: string[] }> {
  const repo = await gitRepo();
  for (const f of starterFiles()) await repo.write(`orders/${f.path}`, f.content);
  const commits = [await repo.commit("the starter")];
  const edit = async (path: string, from: string, to: string, message: string) => {
    const text = await Deno.readTextFile(`${repo.dir}/${path}`);
    assert.ok(text.includes(from), `${path} has no ${from}`);
    await repo.write(path, text.replace(from, to));
    commits.push(await repo.commit(message));
  };
  await edit(SQL, "amount >= 100", "amount >= 200", "raise the bar"); // 1
  await edit(SQL, "amount >= 200", "amount >= 100", "Revert: raise the bar"); // 2
  await edit(SQL, "SELECT order_id, amount, paid", "SELECT order_id, paid", "drop amount"); // 3
  return { repo, commits };
}

const code = (c: string) => (e: unknown) => e instanceof SluiceError && e.code === c;

Deno.test("diff: a predicate change between two commits is a reviewable replacement with both WHEREs", async () => {
  const { repo, commits } = await history();
  try {
    const r = await diff({ dir: `${repo.dir}/orders`, base: commits[0], head: commits[1] });
    assert.deepEqual(r.git, {
      base: { ref: commits[0], commit: commits[0] },
      head: { ref: commits[1], commit: commits[1] },
    });
    assert.equal(r.plan, null);
    assert.equal(r.changes.length, 1);
    const c = r.changes[0];
    assert.equal(c.kind, "replace_predicate");
    assert.equal(c.reviewable, true);
    assert.deepEqual(c.changed, ["predicate"]);
    assert.equal(c.predicate!.old!.sql, "amount >= 100 AND paid = TRUE");
    assert.equal(c.predicate!.new!.sql, "amount >= 200 AND paid = TRUE");
    assert.equal(c.predicate!.old!.source!.file, `${commits[0]}:orders/models/eligible_orders.sql`);
    assert.equal(c.predicate!.old!.source!.first_line, 4);
    assert.equal(c.impact!.declared[0].external, "fraud_app");
    assert.deepEqual(c.impact!.live, { observed: false, reason: "a Git comparison is offline" });
  } finally {
    await repo.remove();
  }
});

Deno.test("diff: a revert is shown as a new change from base to head, never as a rewind", async () => {
  const { repo } = await history();
  try {
    const r = await diff({ dir: `${repo.dir}/orders`, base: "HEAD~2", head: "HEAD~1" });
    const c = r.changes[0];
    assert.equal(c.kind, "replace_predicate");
    assert.equal(c.predicate!.old!.sql, "amount >= 200 AND paid = TRUE");
    assert.equal(c.predicate!.new!.sql, "amount >= 100 AND paid = TRUE");
    assert.ok(r.notes.some((n) => /A revert is a new change, not a rewind/.test(n)));
    assert.ok(r.notes.some((n) => /never rewound/.test(n)));
    // from the starter to the revert there is nothing to change at all
    const same = await diff({ dir: `${repo.dir}/orders`, base: "HEAD~3", head: "HEAD~1" });
    assert.deepEqual(same.changes, []);
    assert.deepEqual(same.summary.unchanged, ["eligible_orders"]);
  } finally {
    await repo.remove();
  }
});

Deno.test("diff: a projection change is blocked with the planner's code, and fraud_app's missing column shows", async () => {
  const { repo } = await history();
  try {
    const r = await diff({ dir: `${repo.dir}/orders`, base: "HEAD~1", head: "HEAD" });
    const c = r.changes[0];
    assert.equal(c.kind, "blocked");
    assert.equal(c.reviewable, false);
    assert.deepEqual(c.changed, ["projection"]);
    assert.deepEqual(c.why.map((w) => w.code), ["BLOCKED_PROJECTION_CHANGE"]);
    assert.equal(c.predicate!.changed, false);
    assert.deepEqual(
      c.impact!.declared[0].columns.map((x) => [x.name, x.in_output]),
      [["order_id", true], ["amount", false]],
    );
    assert.match(renderReviewText(r), /amount BIGINT \(NOT OUTPUT\)/);
    assert.match(renderReviewMarkdown(r), /`amount` BIGINT \*\*not output\*\*/);
  } finally {
    await repo.remove();
  }
});

Deno.test("diff: the working tree is the default head; partitions, identity and new models are named", async () => {
  const { repo } = await history();
  try {
    const yaml = `${repo.dir}/${YAML}`;
    let text = await Deno.readTextFile(yaml);
    text = text.replace("    partitions: 3", "    partitions: 6")
      .replace(
        "externals:",
        "  big_orders:\n    sql: models/eligible_orders.sql\n    output:\n      topic: big_orders\n\nexternals:",
      );
    await Deno.writeTextFile(yaml, text);
    const r = await diff({ dir: `${repo.dir}/orders`, base: "HEAD" });
    assert.equal(r.git!.head.commit, null);
    const byModel = Object.fromEntries(r.changes.map((c) => [c.model, c]));
    assert.equal(byModel.big_orders.kind, "create");
    assert.equal(byModel.eligible_orders.kind, "blocked");
    assert.deepEqual(byModel.eligible_orders.changed, ["partitions"]);
    assert.deepEqual(byModel.eligible_orders.why.map((w) => w.code), [
      "BLOCKED_PARTITION_CHANGE",
      "BLOCKED_PARTITION_CHANGE",
    ]);
    // renaming the project changes every application ID: an identity change
    await Deno.writeTextFile(yaml, text.replace("project: orders", "project: orders2"));
    const renamed = await diff({ dir: `${repo.dir}/orders`, base: "HEAD" });
    const e = renamed.changes.find((c) => c.model === "eligible_orders")!;
    assert.ok(e.changed.includes("application identity"), JSON.stringify(e.changed));
    assert.ok(e.why.some((w) => w.code === "BLOCKED_IDENTITY_CHANGE"));
  } finally {
    await repo.remove();
  }
});

Deno.test("diff: a missing ref or a base without the project is an error, not an empty project", async () => {
  const { repo } = await history();
  try {
    await assert.rejects(
      () => diff({ dir: `${repo.dir}/orders`, base: "HEAD~9" }),
      code("GIT_REF_NOT_FOUND"),
    );
    await repo.write("README", "x");
    await repo.git("add", "README");
    await repo.git("commit", "-q", "-m", "readme");
    // an orphan commit without the project
    await repo.git("checkout", "-q", "--orphan", "empty");
    await repo.git("rm", "-rq", "--cached", ".");
    await repo.git("commit", "-q", "--allow-empty", "-m", "empty");
    await repo.git("checkout", "-q", "-f", "main");
    await assert.rejects(
      () => diff({ dir: `${repo.dir}/orders`, base: "empty" }),
      (e) =>
        e instanceof SluiceError && e.code === "PROJECT_NOT_FOUND" &&
        /empty:orders\/sluice\.yaml/.test(e.message) &&
        // a revision before the project: no advice to create one
        /does not exist at empty \(commit [0-9a-f]{12}\)/.test(e.message) &&
        !e.message.includes("sluice init"),
    );
  } finally {
    await repo.remove();
  }
});

Deno.test("diff: a model dropped without a removal declaration is blocked; with one it is a reviewable removal", async () => {
  const { repo } = await history();
  try {
    const yaml = await Deno.readTextFile(`${repo.dir}/${YAML}`);
    const second = yaml.replace(
      "models:\n",
      "models:\n  big_orders:\n    sql: models/eligible_orders.sql\n    output:\n      topic: big_orders\n",
    );
    await repo.write(YAML, second);
    const base = await repo.commit("a second model");
    const without = second.replace(
      /^ {2}eligible_orders:\n {4}sql: .*\n {4}output:\n {6}topic: .*\n/m,
      "",
    ).replace("consumes: eligible_orders", "consumes: big_orders");
    await repo.write(YAML, without);
    const dropped = await repo.commit("drop eligible_orders");
    await repo.write(
      YAML,
      without + "lifecycle:\n  runner_removals:\n    - model: eligible_orders\n",
    );
    const declared = await repo.commit("declare its removal");
    const blocked = await diff({ dir: `${repo.dir}/orders`, base, head: dropped });
    const b = blocked.changes.find((c) => c.model === "eligible_orders")!;
    assert.equal(b.kind, "remove");
    assert.equal(b.reviewable, false);
    assert.deepEqual(b.why.map((w) => w.code), ["BLOCKED_RUNNER_REMOVAL"]);
    assert.match(b.why[0].message, /lifecycle\.runner_removals/);
    const r = await diff({ dir: `${repo.dir}/orders`, base, head: declared });
    const c = r.changes.find((x) => x.model === "eligible_orders")!;
    assert.equal(c.kind, "remove");
    assert.equal(c.reviewable, true);
    assert.deepEqual(c.why, []);
    assert.ok(r.notes.some((n) => n.startsWith("Removing a runner stops it")), r.notes.join("\n"));
  } finally {
    await repo.remove();
  }
});
