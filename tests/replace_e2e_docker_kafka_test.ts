// test-needs: env
// Needs: Docker, the broker, the runner image (shared environment from tools/test.ts).
// The reason sluice exists: the quickstart's filter changes from amount >= 100 to
// amount >= 200 through a reviewed format-6 plan, keeping application ID, volume instance
// and committed offsets; output is exact before, during and after; then a no-op plan.
import { progressLabel } from "../lib/runtime/progress.ts";
import assert from "node:assert/strict";
import { sharedEnv } from "../harness/env.ts";
import { committedOffsets, produce, readAll } from "../harness/kafka.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { apply, observe, plan } from "../lib/runtime/session.ts";
import { writePlanFile } from "../lib/plan/plan_file.ts";
import { executeReviewed } from "../lib/runtime/replacement/execute.ts";
import { openStateStore } from "../lib/state/open.ts";
import { onCrossing } from "../lib/fault/site.ts";
import { OPERATION_WRITES, replacementSites } from "../lib/protocol/replacement.ts";
import { loadRunEventValidator } from "../lib/lineage/validate.ts";
import { type Order, orders } from "./deploy_fixture.ts";
import { UNINTERRUPTED_REPLACEMENT } from "../testing/replacement_progress.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function waitOutput(bootstrap: string, topic: string, n: number) {
  let got: Array<{ key: string | null; value: unknown }> = [];
  for (let i = 0; i < 120 && got.length < n; i++) {
    got = (await readAll(bootstrap, topic, { partitions: [0, 1, 2], expect: n }))
      .map((r) => ({ key: r.key, value: JSON.parse(r.value!) }));
    if (got.length < n) await new Promise((r) => setTimeout(r, 250));
  }
  return got;
}

Deno.test(
  "a reviewed predicate replacement keeps identity, volume and offsets, and output follows the predicate in force",
  opts,
  async () => {
    const env = await sharedEnv();
    const p = await starterProject(env, { image: await runnerImageId() });
    const created = await plan({ dir: p.dir });
    const c = await apply({
      dir: p.dir,
      plan: created.plan,
      planSha256: created.sha256,
      extraLabels: env.labels,
    });
    const appId = c.runners[0].application_id;
    const instance = c.runners[0].volume_instance;

    const before = orders("a", [50, 150, 250, 120, 300, 90, 210, 180]);
    await produce(
      env.bootstrapHost,
      p.inputTopic,
      before.map((o) => ({ key: o.key, value: JSON.stringify(o.value) })),
    );
    const passOld = (o: Order) => o.amount >= 100 && o.paid;
    const passNew = (o: Order) => o.amount >= 200 && o.paid;
    const expectOld = before.filter((o) => passOld(o.value));
    assert.equal(
      (await waitOutput(env.bootstrapHost, p.outputTopic, expectOld.length)).length,
      expectOld.length,
    );
    const offsetsBefore = await committedOffsets(env.bootstrapHost, appId, p.inputTopic);

    await p.setPredicate("amount >= 200 AND paid = TRUE");
    const reviewed = await plan({ dir: p.dir });
    assert.deepEqual(reviewed.plan.blockers, []);
    assert.equal(reviewed.plan.format, 6);
    assert.equal(reviewed.plan.actions.length, 1);
    assert.equal(reviewed.plan.actions[0].type, "replace_runner_predicate");
    const planPath = `${p.dir}/replace.plan.json`;
    await writePlanFile(planPath, reviewed.plan);

    const steps: string[] = [];
    const lineageFile = `${p.dir}/lineage.jsonl`;
    const ours = new Set(replacementSites().map((x) => x.name));
    const crossed: string[] = [];
    const stop = onCrossing((c) => {
      if (c.side === "after" && ours.has(c.site.name)) crossed.push(c.site.name);
    });
    let r;
    try {
      r = await executeReviewed({
        dir: p.dir,
        planPath,
        extraLabels: env.labels,
        onProgress: (e) => e.kind !== "wait" && steps.push(progressLabel(e)),
        openlineage: lineageFile,
      });
    } finally {
      stop();
    }
    // an uninterrupted replacement crosses every site of the table once, in order; only the
    // writes of `state resume` are not crossed
    const resumeOnly = [OPERATION_WRITES.interruption.name, OPERATION_WRITES.resume.name];
    assert.deepEqual(
      crossed,
      replacementSites().map((x) => x.name).filter((n) => !resumeOnly.includes(n)),
    );
    assert.equal(r.committed, true, JSON.stringify(r));
    assert.equal(r.outcome, "completed");
    assert.equal(r.serial, 2);
    // OpenLineage: START after the intent, COMPLETE after verified finalization, run ID = operation
    const events = (await Deno.readTextFile(lineageFile)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assert.deepEqual(events.map((e) => e.eventType), ["START", "COMPLETE"]);
    assert.deepEqual(events.map((e) => e.run.runId), [r.operation_id, r.operation_id]);
    assert.deepEqual(r.lineage_warnings, []);
    // every emitted event conforms to the official OpenLineage 2-0-2 schemas
    const conforms = await loadRunEventValidator();
    for (const e of events) {
      assert.deepEqual(conforms(e), { valid: true, errors: [] }, `${e.eventType} event`);
    }
    assert.deepEqual(steps, UNINTERRUPTED_REPLACEMENT);

    // records produced after the change follow the new predicate; nothing lost or duplicated
    const after = orders("b", [150, 250, 199, 200, 500, 90, 201, 230]);
    await produce(
      env.bootstrapHost,
      p.inputTopic,
      after.map((o) => ({ key: o.key, value: JSON.stringify(o.value) })),
    );
    const expected = [...expectOld, ...after.filter((o) => passNew(o.value))]
      .map((o) => ({
        key: o.key,
        value: { order_id: o.value.order_id, amount: o.value.amount, paid: o.value.paid },
      }));
    const got = await waitOutput(env.bootstrapHost, p.outputTopic, expected.length);
    const byKey = (x: { key: string | null }, y: { key: string | null }) =>
      (x.key ?? "").localeCompare(y.key ?? "");
    assert.deepEqual(got.sort(byKey), expected.sort(byKey));

    // same application ID and volume instance; one running candidate; offsets only moved forward
    const obs = (await observe({ dir: p.dir })).runners[0];
    assert.equal(obs.applicationId, appId);
    assert.equal(obs.volume.instanceLabel, instance);
    assert.equal(obs.volume.instanceFile, instance);
    assert.equal(obs.containers.length, 1);
    assert.equal(obs.containers[0].running, true);
    assert.equal(obs.containers[0].labels.operationId, r.operation_id);
    assert.equal(obs.kafka.group.members.length, 1);
    const offsetsAfter = await committedOffsets(env.bootstrapHost, appId, p.inputTopic);
    for (const [part, off] of offsetsBefore) {
      assert.ok(
        offsetsAfter.get(part)! >= off,
        `partition ${part} moved backwards`,
      );
    }
    const total = [...offsetsAfter.values()].reduce((a, b) => a + b, 0n);
    assert.equal(total, BigInt(before.length + after.length));

    // then a no-op plan; ownership serial incremented exactly once; the receipt is kept
    const again = await plan({ dir: p.dir });
    assert.deepEqual(again.plan.actions, []);
    assert.deepEqual(again.plan.blockers, []);
    const store = openStateStore({
      backend: "local",
      dir: `${p.dir}/.sluice/state`,
      project: p.name,
      environment: null,
    });
    const snap = await store.load();
    assert.equal(snap.ownership?.document.serial, 2);
    assert.equal(snap.control, null);
    assert.equal(
      snap.ownership?.document.runners[0].artifact_sha256,
      reviewed.plan.typed_action!.action.desired_artifact_sha256,
    );
    assert.ok(snap.history.events.some((e) => e.kind === "runner_completed"));
    await store.close();
  },
);
