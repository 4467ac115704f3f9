// test-needs: env
// Needs: Docker, the broker, the runner image (shared environment from tools/test.ts).
// The first user journey through the SDK: plan → apply creates topics, volume and runner →
// exact output → a repeated plan/apply is a no-op that writes nothing.
import { progressLabel } from "../lib/runtime/progress.ts";
import assert from "node:assert/strict";
import { sharedEnv } from "../harness/env.ts";
import { produce, readAll } from "../harness/kafka.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { apply, observe, plan } from "../lib/runtime/session.ts";
import { openStateStore } from "../lib/state/open.ts";
import { onCrossing } from "../lib/fault/site.ts";
import { CREATE_TABLE, createSites } from "../lib/protocol/create.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "create then no-op: topics, volume, runner, exact output, and a repeated apply writes nothing",
  opts,
  async () => {
    const env = await sharedEnv();
    const p = await starterProject(env, { image: await runnerImageId() });
    const first = await plan({ dir: p.dir });
    assert.deepEqual(first.plan.blockers, []);
    assert.equal(first.plan.format, 5);
    assert.deepEqual(first.plan.actions.map((a) => a.type), [
      "create_topic",
      "create_topic",
      "create_runner",
    ]);

    const steps: string[] = [];
    const ours = new Set(createSites().map((x) => x.name));
    const crossed: string[] = [];
    const stop = onCrossing((c) => {
      if (c.side === "after" && ours.has(c.site.name)) crossed.push(c.site.name);
    });
    let applied;
    try {
      applied = await apply({
        dir: p.dir,
        plan: first.plan,
        planSha256: first.sha256,
        extraLabels: env.labels,
        onProgress: (e) => e.kind !== "wait" && steps.push(progressLabel(e)),
      });
    } finally {
      stop();
    }
    // every mutation crossed its row's fault site, in the create table's order
    const count = { operation: 1, topic: 2, runner: 1 };
    assert.deepEqual(
      crossed,
      CREATE_TABLE.flatMap((row) =>
        row.site ? Array(count[row.per]).fill(row.site.name) as string[] : []
      ),
    );
    assert.equal(applied.noop, false);
    assert.equal(applied.serial, 1);
    assert.deepEqual(steps, [
      "started",
      "intent",
      "topic",
      "topic",
      "volume",
      "offsets",
      "container",
      "ready",
      "commit",
    ]);

    // the runner filters the sample records exactly: amount >= 100 AND paid = TRUE
    const samples = (await Deno.readTextFile(`${p.dir}/samples/raw_orders.jsonl`)).trim().split(
      "\n",
    )
      .map((l) => JSON.parse(l) as { key: string; value: Record<string, unknown> });
    await produce(
      env.bootstrapHost,
      p.inputTopic,
      samples.map((s) => ({ key: s.key, value: JSON.stringify(s.value) })),
    );
    const expected = samples.filter((s) =>
      (s.value.amount as number) >= 100 && s.value.paid === true
    )
      .map((s) => ({
        key: s.key,
        value: { order_id: s.value.order_id, amount: s.value.amount, paid: s.value.paid },
      }));
    const partitions = [0, 1, 2];
    let got: Array<{ key: string | null; value: unknown }> = [];
    for (let i = 0; i < 100 && got.length < expected.length; i++) {
      got = (await readAll(env.bootstrapHost, p.outputTopic, { partitions }))
        .map((r) => ({ key: r.key, value: JSON.parse(r.value!) }));
      if (got.length < expected.length) await new Promise((r) => setTimeout(r, 300));
    }
    const byKey = (a: { key: string | null }, b: { key: string | null }) =>
      (a.key ?? "").localeCompare(b.key ?? "");
    assert.deepEqual(got.sort(byKey), expected.sort(byKey));

    // the observer sees exactly one healthy generation with the owned artifact mounted
    const obs = await observe({ dir: p.dir });
    const r = obs.runners[0];
    assert.equal(r.containers.length, 1);
    const c = r.containers[0];
    assert.equal(c.id, applied.runners[0].container_id);
    assert.equal(c.running, true);
    assert.equal(c.plan.matchesLabel, true);
    assert.equal(c.plan.artifactSha256, first.plan.artifacts[0].sha256);
    assert.deepEqual(c.environment, { ok: true, unexpected: [], missing: [] });
    assert.deepEqual(c.execution, { ok: true, problems: [] });
    assert.equal(r.volume.instanceLabel, applied.runners[0].volume_instance);
    assert.equal(r.volume.instanceFile, applied.runners[0].volume_instance);
    assert.equal(c.volumeInstance, applied.runners[0].volume_instance);
    assert.equal(r.kafka.group.members.length, 1);
    assert.equal(c.runnerStatus?.state, "RUNNING");

    // a repeated plan is a no-op; applying it writes nothing
    const store = openStateStore({
      backend: "local",
      dir: `${p.dir}/.sluice/state`,
      project: p.name,
      environment: null,
    });
    const before = await store.load();
    const again = await plan({ dir: p.dir });
    assert.deepEqual(again.plan.actions, []);
    assert.deepEqual(again.plan.blockers, []);
    const noop = await apply({ dir: p.dir, plan: again.plan, planSha256: again.sha256 });
    assert.equal(noop.noop, true);
    const after = await store.load();
    assert.equal(after.revision, before.revision);
    assert.equal(after.ownership?.document.serial, 1);
    await store.close();
  },
);
