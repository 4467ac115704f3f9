// Needs: git (no Docker, Kafka or PostgreSQL). The review commands through the real launcher:
// `sluice diff --base HEAD~1` in the starter's directory when it is a Git repository (text,
// -o json, --format markdown), `plan --offline --base`, and the usage errors of the new flags.
import assert from "node:assert/strict";
import { compile } from "../lib/project/compile.ts";
import { loadProject } from "../lib/project/load.ts";
import { initProject } from "../lib/project/starter.ts";
import type { Plan } from "../lib/plan/plan.ts";
import { planProject } from "../lib/plan/plan.ts";
import { sealPlan } from "../lib/plan/plan_file.ts";
import { gitRepo } from "../testing/git_repo.ts";
import { assertExit, sluice, sluiceJson } from "./deploy_fixture.ts";

/** The quickstart's directory as a Git repository: the starter, then the filter change. */
async function quickstartRepo() {
  const dir = await Deno.makeTempDir({ prefix: "sluice-quickstart-git-" });
  await initProject(dir);
  const repo = await gitRepo(dir);
  await repo.commit("sluice init");
  const sql = `${dir}/models/eligible_orders.sql`;
  await Deno.writeTextFile(
    sql,
    (await Deno.readTextFile(sql)).replace("amount >= 100", "amount >= 200"),
  );
  await repo.commit("raise the bar to 200");
  return repo;
}

Deno.test("sluice diff --base HEAD~1 in the quickstart's directory shows both filters and fraud_app", async () => {
  const repo = await quickstartRepo();
  try {
    const text = await sluice([
      "diff",
      "--project",
      repo.dir,
      "--base",
      "HEAD~1",
      "--head",
      "HEAD",
    ]);
    assertExit(text, 0);
    assert.match(
      text.stdout,
      /~ replace predicate of sluice-orders-eligible_orders \(model eligible_orders\)/,
    );
    assert.match(
      text.stdout,
      /- WHERE amount >= 100 AND paid = TRUE {4}\(HEAD~1:models\/eligible_orders\.sql:4\)/,
    );
    assert.match(
      text.stdout,
      /\+ WHERE amount >= 200 AND paid = TRUE {4}\(HEAD:models\/eligible_orders\.sql:4\)/,
    );
    assert.match(text.stdout, /fraud_app declared, reads order_id STRING, amount BIGINT/);

    // the default head is the working tree, and the command runs from the directory itself
    const cwd = await new Deno.Command(`${new URL("..", import.meta.url).pathname}bin/sluice`, {
      args: ["diff", "--base", "HEAD~1"],
      cwd: repo.dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(cwd.code, 0, new TextDecoder().decode(cwd.stderr));
    assert.match(new TextDecoder().decode(cwd.stdout), /to the working tree for orders/);

    const json = await sluiceJson(["diff", "--project", repo.dir, "--base", "HEAD~1"]);
    assertExit(json, 0);
    const review = json.envelope.data as Record<string, unknown>;
    assert.equal(review.format, "sluice.review");
    const change = (review.changes as Array<Record<string, unknown>>)[0];
    assert.equal(change.kind, "replace_predicate");
    assert.deepEqual(change.predicate, {
      old: {
        sql: "amount >= 100 AND paid = TRUE",
        columns: ["amount", "paid"],
        source: {
          file: "HEAD~1:models/eligible_orders.sql",
          first_line: 4,
          last_line: 4,
          text: "WHERE amount >= 100 AND paid = TRUE",
        },
      },
      new: {
        sql: "amount >= 200 AND paid = TRUE",
        columns: ["amount", "paid"],
        source: {
          file: "models/eligible_orders.sql",
          first_line: 4,
          last_line: 4,
          text: "WHERE amount >= 200 AND paid = TRUE",
        },
      },
      changed: true,
    });

    const md = await sluice([
      "diff",
      "--project",
      repo.dir,
      "--base",
      "HEAD~1",
      "--format",
      "markdown",
    ]);
    assertExit(md, 0);
    assert.match(md.stdout, /^### sluice review: `orders`/);
    assert.match(
      md.stdout,
      /```diff\n- WHERE amount >= 100 AND paid = TRUE\n\+ WHERE amount >= 200 AND paid = TRUE\n```/,
    );
    assert.match(md.stdout, /\| `fraud_app` \| yes \|/);
  } finally {
    await repo.remove();
  }
});

Deno.test("sluice diff: an unknown ref exits 3 (GIT_REF_NOT_FOUND); markdown and -o json exclude each other", async () => {
  const repo = await quickstartRepo();
  try {
    const missing = await sluiceJson(["diff", "--project", repo.dir, "--base", "v9.9.9"]);
    assertExit(missing, 3);
    assert.equal(missing.envelope.errors[0].code, "GIT_REF_NOT_FOUND");
    const both = await sluiceJson([
      "diff",
      "--project",
      repo.dir,
      "--base",
      "HEAD~1",
      "--format",
      "markdown",
    ]);
    assertExit(both, 2);
    assert.equal(both.envelope.errors[0].code, "USAGE_FORMAT");
    const notGit = await Deno.makeTempDir({ prefix: "sluice-nogit-" });
    try {
      await initProject(notGit);
      const r = await sluiceJson(["diff", "--project", notGit, "--base", "HEAD~1"]);
      assertExit(r, 3);
      assert.equal(r.envelope.errors[0].code, "GIT_NOT_A_REPOSITORY");
    } finally {
      await Deno.remove(notGit, { recursive: true });
    }
  } finally {
    await repo.remove();
  }
});

Deno.test("sluice plan --offline --base HEAD~1: the offline plan with the Git comparison", async () => {
  const repo = await quickstartRepo();
  try {
    const r = await sluice(["plan", "--project", repo.dir, "--base", "HEAD~1"]);
    assertExit(r, 0); // nothing deployed: the offline plan creates, and the comparison shows the change
    assert.match(r.stdout, /Changes from HEAD~1 \([0-9a-f]{12}\) to the working tree for orders/);
    assert.match(r.stdout, /Plan \(format 5, offline\) for orders/);
    assert.match(r.stdout, /\+ create topic raw_orders/);
    assert.match(r.stdout, /- WHERE amount >= 100 AND paid = TRUE/);
    assert.match(r.stdout, /\+ WHERE amount >= 200 AND paid = TRUE/);
  } finally {
    await repo.remove();
  }
});

Deno.test("sluice plan: --select of an unknown model exits 2; --preview offline exits 2", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice-select-" });
  try {
    await initProject(dir);
    const unknown = await sluiceJson(["plan", "--project", dir, "--offline", "--select", "nope"]);
    assertExit(unknown, 2);
    assert.equal(unknown.envelope.errors[0].code, "USAGE_SELECT_UNKNOWN_MODEL");
    const selected = await sluiceJson([
      "plan",
      "--project",
      dir,
      "--offline",
      "--select",
      "eligible_orders",
    ]);
    assertExit(selected, 0);
    const plan = (selected.envelope.data as { plan: Record<string, unknown> }).plan;
    assert.equal(plan.scope, "selected");
    assert.deepEqual(plan.selected, ["eligible_orders"]);
    const offline = await sluiceJson(["plan", "--project", dir, "--offline", "--preview"]);
    assertExit(offline, 2);
    assert.equal(offline.envelope.errors[0].code, "USAGE_PREVIEW_OFFLINE");
    const bad = await sluiceJson(["plan", "--project", dir, "--preview=lots"]);
    assertExit(bad, 2);
    assert.equal(bad.envelope.errors[0].code, "USAGE_PREVIEW_RECORDS");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sluice apply of a selected plan that carries a replacement exits 3 before touching anything", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice-select-apply-" });
  try {
    await initProject(dir);
    const project = await loadProject(dir);
    const planned = planProject({
      project,
      compiled: compile(project),
      state: {
        ownership: null,
        checksum: null,
        identity: { store_id: crypto.randomUUID(), backend: "local", address: dir },
      },
      observation: null,
      topics: null,
      now: new Date().toISOString(),
      sourceSha256: "a".repeat(64),
      select: ["eligible_orders"],
    });
    // a forged but correctly sealed file: selected scope, yet a replacement action
    const forged: Plan = {
      ...planned,
      actions: [{
        type: "replace_runner_predicate",
        model: "eligible_orders",
        application_id: "sluice-orders-eligible_orders",
        prior_artifact_sha256: "1".repeat(64),
        desired_artifact_sha256: "2".repeat(64),
        evidence: {},
      }],
    };
    const file = `${dir}/forged.plan.json`;
    await Deno.writeFile(file, sealPlan(forged).bytes);
    const r = await sluiceJson(["apply", "--project", dir, "--plan", file]);
    assertExit(r, 3);
    assert.equal(r.envelope.errors[0].code, "PLAN_SELECTED_REPLACEMENT");
    await assert.rejects(() => Deno.stat(`${dir}/.sluice`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
