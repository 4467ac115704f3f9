// Labels given at apply are recorded and reapplied by resume (issue 30 item 7): an operation
// started in process with extraLabels dies right after its intent (a crossing listener throws at
// the intent's "after" point: the intent is written, nothing else), and a handle without them —
// the CLI in its own process on the same file-backed fake world — continues it: what it creates
// carries the recorded labels; a key in sluice's namespace is refused when given, never taken. An intent without
// the field (recorded before it existed, or without labels) continues with none, whatever the
// continuing handle gives.
import assert from "node:assert/strict";
import { onCrossing } from "../fault/site.ts";
import { writePlanFile } from "../plan/plan_file.ts";
import { createSite } from "../protocol/create.ts";
import { OPERATION_WRITES } from "../protocol/replacement.ts";
import { apply, plan } from "./session.ts";
import { LABEL, volumeName } from "./labels.ts";
import { EXTRA_LABELS_DETAIL, extraLabelsDetail, recordedExtraLabels } from "./operation_labels.ts";
import { executeReviewed } from "./replacement/execute.ts";
import { resumeReviewed } from "./replacement/resume.ts";
import { type FakeProject, fakeProject, localState } from "../../testing/ways/fake_project.ts";

const GIVEN = { "ci.run": "labels-test" };
const RECORDED = GIVEN;
/** Extra labels that reach into sluice's namespace: refused when given, dropped when recorded. */
const FORGED = { ...GIVEN, [LABEL.model]: "forged" };

/**
 * Run `call`, dying (a throw) right after the site's write: the intent recorded, no more. The
 * journey answers the lost acknowledgement as it answers any (a throw, or an unknown outcome);
 * the caller reads the state to see what was recorded.
 */
async function killedAfter(site: string, call: () => Promise<unknown>): Promise<void> {
  let fired = false;
  const stop = onCrossing((c) => {
    if (c.site.name !== site || c.side !== "after") return;
    fired = true;
    throw new Error(`killed after ${site}`);
  });
  try {
    const answer = await call().catch((e: Error) => e);
    assert.ok(fired, `${site} was crossed`);
    assert.ok(
      answer instanceof Error || (answer as { committed?: unknown }).committed !== true,
      JSON.stringify(answer),
    );
  } finally {
    stop();
  }
}

async function pendingIntent(f: FakeProject) {
  const snap = await localState(f);
  assert.ok(snap.control, "the operation is pending");
  return snap.control.opened.intent;
}

const order = (i: number, amount: number) => ({
  key: `o${i}`,
  value: JSON.stringify({ order_id: `o${i}`, amount, paid: true, customer: null }),
});

/** A created runner and a reviewed replacement plan of it, written to a file. */
async function reviewedReplacement(f: FakeProject): Promise<string> {
  const { world, p, deps } = f;
  const created = await plan({ dir: p.dir, ...deps });
  await apply({ dir: p.dir, plan: created.plan, planSha256: created.sha256, ...deps });
  world.control.produce(p.inputTopic, [order(1, 150), order(2, 250)]);
  await p.setPredicate("amount >= 200 AND paid = TRUE");
  const reviewed = await plan({ dir: p.dir, ...deps });
  assert.equal(reviewed.plan.format, 6, JSON.stringify(reviewed.plan.blockers));
  const planPath = `${p.dir}/replace.plan.json`;
  await writePlanFile(planPath, reviewed.plan);
  return planPath;
}

async function candidateLabels(f: FakeProject, operationId: string) {
  const found = await f.deps.docker.listContainers(LABEL.operationId, operationId);
  assert.equal(found.length, 1, `one candidate of ${operationId}`);
  return found[0].labels;
}

Deno.test("the intent records the extra labels; a key in sluice's namespace is refused when given and dropped when read", () => {
  assert.deepEqual(extraLabelsDetail(GIVEN), { [EXTRA_LABELS_DETAIL]: RECORDED });
  assert.deepEqual(extraLabelsDetail(undefined), {});
  const refused: Record<string, string>[] = [FORGED, { [LABEL.project]: "x" }, {
    "sluice.run": "t",
  }];
  for (const given of refused) {
    assert.throws(
      () => extraLabelsDetail(given),
      (e: Error & { code?: string }) =>
        e.code === "USAGE_EXTRA_LABELS" && e.message.includes(Object.keys(given).at(-1)!),
    );
  }
  const details = { model: "m", ...extraLabelsDetail(GIVEN) };
  assert.deepEqual(recordedExtraLabels({ operation_id: "op", details }), RECORDED);
  // an intent without the field (recorded before it existed) continues with none
  assert.deepEqual(recordedExtraLabels({ operation_id: "op", details: { model: "m" } }), {});
  // a recorded sluice key (an edited state) is still never taken
  assert.deepEqual(
    recordedExtraLabels({ operation_id: "op", details: { [EXTRA_LABELS_DETAIL]: FORGED } }),
    RECORDED,
  );
  assert.throws(
    () => recordedExtraLabels({ operation_id: "op", details: { [EXTRA_LABELS_DETAIL]: ["x"] } }),
    (e: Error & { code?: string }) => e.code === "BLOCKED_INVALID_INTENT",
  );
});

Deno.test("a create given labels in sluice's namespace is refused with USAGE_EXTRA_LABELS before anything is written", async () => {
  await using f = await fakeProject("labels-refused");
  const { p, deps } = f;
  const created = await plan({ dir: p.dir, ...deps });
  await assert.rejects(
    apply({
      dir: p.dir,
      plan: created.plan,
      planSha256: created.sha256,
      extraLabels: FORGED,
      ...deps,
    }),
    (e: Error & { code?: string }) => e.code === "USAGE_EXTRA_LABELS",
  );
  assert.equal((await localState(f)).control, null, "no operation was started");
  assert.deepEqual(await deps.docker.listContainers(LABEL.project, p.name), []);
});

Deno.test("a replacement killed after its intent is resumed by the CLI with the labels given at apply", async () => {
  await using f = await fakeProject("labels-replacement");
  const planPath = await reviewedReplacement(f);
  await killedAfter(
    OPERATION_WRITES.intent.name,
    () => executeReviewed({ dir: f.p.dir, planPath, extraLabels: GIVEN, ...f.deps }),
  );
  const intent = await pendingIntent(f);
  assert.deepEqual(intent.details[EXTRA_LABELS_DETAIL], RECORDED);

  const resumed = await f.cli([
    "-o",
    "json",
    "state",
    "resume",
    "--project",
    f.p.dir,
    "--plan",
    planPath,
    "--operation-id",
    intent.operation_id,
  ]);
  assert.equal(resumed.code, 0, resumed.stderr + resumed.stdout);
  assert.equal(resumed.json().data!.committed, true);
  const labels = await candidateLabels(f, intent.operation_id);
  assert.equal(labels["ci.run"], "labels-test");
  // sluice's own labels win over extra ones
  assert.equal(labels[LABEL.model], intent.details.model);
});

Deno.test("a replacement intent without extra labels resumes with none, whatever the resuming handle gives", async () => {
  await using f = await fakeProject("labels-old-intent");
  const planPath = await reviewedReplacement(f);
  await killedAfter(
    OPERATION_WRITES.intent.name,
    () => executeReviewed({ dir: f.p.dir, planPath, ...f.deps }),
  );
  const intent = await pendingIntent(f);
  assert.equal(EXTRA_LABELS_DETAIL in intent.details, false);

  const resumed = await resumeReviewed({
    dir: f.p.dir,
    planPath,
    operationId: intent.operation_id,
    extraLabels: { "ci.run": "other" },
    ...f.deps,
  });
  assert.equal(resumed.committed, true, JSON.stringify(resumed));
  const labels = await candidateLabels(f, intent.operation_id);
  assert.equal(labels["ci.run"], undefined);
});

Deno.test("a create killed after its intent is continued by the CLI with the labels given at apply", async () => {
  await using f = await fakeProject("labels-create");
  const { p, deps } = f;
  const created = await plan({ dir: p.dir, ...deps });
  const planPath = `${p.dir}/create.plan.json`;
  const { sha256 } = await writePlanFile(planPath, created.plan);
  assert.equal(sha256, created.sha256);
  await killedAfter(
    createSite("intent").name,
    () =>
      apply({
        dir: p.dir,
        plan: created.plan,
        planSha256: created.sha256,
        extraLabels: GIVEN,
        ...deps,
      }),
  );
  const intent = await pendingIntent(f);
  assert.equal(intent.kind, "create");
  assert.deepEqual(intent.details[EXTRA_LABELS_DETAIL], RECORDED);

  const continued = await f.cli(["-o", "json", "apply", "--project", p.dir, "--plan", planPath]);
  assert.equal(continued.code, 0, continued.stderr + continued.stdout);
  const runners = await deps.docker.listContainers(LABEL.operationId, intent.operation_id);
  assert.ok(runners.length > 0, "the continuation created the runners");
  for (const c of runners) {
    assert.equal(c.labels["ci.run"], "labels-test", c.name);
    const volume = await deps.docker.inspectVolume(volumeName(c.labels[LABEL.applicationId]));
    assert.equal(volume?.labels["ci.run"], "labels-test", c.name);
    assert.equal(volume?.labels[LABEL.model], c.labels[LABEL.model]);
  }
});
