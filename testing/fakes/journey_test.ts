// The fakes are enough for sluice's own journeys: the public SDK creates the starter's
// runner, replaces its predicate through a reviewed format-6 plan and plans a no-op, all on a
// file-backed fake world, with the same checks as tests/replace_e2e_docker_kafka_test.ts on
// the real services: output follows the predicate in force, identity, volume and offsets kept.
import { progressLabel } from "../../lib/runtime/progress.ts";
import assert from "node:assert/strict";
import { writePlanFile } from "../../lib/plan/plan_file.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { apply, observe, plan } from "../../lib/runtime/session.ts";
import { openStateStore } from "../../lib/state/open.ts";
import { systemClock } from "./clock.ts";
import { fakeProject } from "../ways/fake_project.ts";
import { UNINTERRUPTED_REPLACEMENT } from "../replacement_progress.ts";

type Order = { order_id: string; amount: number; paid: boolean; customer: string | null };

function orders(prefix: string, amounts: number[]): Order[] {
  return amounts.map((amount, i) => ({
    order_id: `${prefix}-${i}`,
    amount,
    paid: i % 4 !== 3,
    customer: null,
  }));
}

const record = (o: Order) => ({ key: o.order_id, value: JSON.stringify(o) });

Deno.test("create, reviewed predicate replacement and no-op plan run to completion on the fake world", async () => {
  // sluice stamps its checkpoints with the system clock until the runtime takes an injected
  // one; the world must then use the same clock (its finishedAt is compared with them)
  await using f = await fakeProject("journey", { clock: systemClock() });
  const { world, p } = f;
  const kafka = f.deps.kafka;
  const ports = { docker: world.docker, kafka };
  const created = await plan({ dir: p.dir, ...ports });
  assert.deepEqual(created.plan.blockers, []);
  const c = await apply({ dir: p.dir, plan: created.plan, planSha256: created.sha256, ...ports });
  assert.equal(c.noop, false);
  const appId = c.runners[0].application_id;
  const instance = c.runners[0].volume_instance;
  const oldId = c.runners[0].container_id;
  assert.equal(world.control.runnerStatus(oldId)?.state, "RUNNING");

  const before = orders("a", [50, 150, 250, 120, 300, 90, 210, 180]);
  world.control.produce(p.inputTopic, before.map(record));
  const offsetsBefore = await kafka.committedOffsets(appId, p.inputTopic);
  assert.equal([...offsetsBefore.values()].reduce((a, b) => a + b, 0n), 8n);

  await p.setPredicate("amount >= 200 AND paid = TRUE");
  const reviewed = await plan({ dir: p.dir, ...ports });
  assert.deepEqual(reviewed.plan.blockers, []);
  assert.equal(reviewed.plan.format, 6);
  const planPath = `${p.dir}/replace.plan.json`;
  await writePlanFile(planPath, reviewed.plan);
  const logBefore = world.control.mutations().length;
  const steps: string[] = [];
  const r = await executeReviewed({
    dir: p.dir,
    planPath,
    ...ports,
    onProgress: (e) => e.kind !== "wait" && steps.push(progressLabel(e)),
  });
  assert.equal(r.committed, true, JSON.stringify(r));
  assert.equal(r.outcome, "completed");
  assert.equal(r.serial, 2);
  assert.deepEqual(steps, UNINTERRUPTED_REPLACEMENT);
  // exactly one of each provider mutation, in the boundary table's order
  const mutations = world.control.mutations().slice(logBefore)
    .filter((m) => m.by === "docker" || m.by === "kafka").map((m) => m.op);
  assert.deepEqual(mutations, [
    "signalTerm",
    "removeContainer",
    "createContainer",
    "startContainer",
  ]);

  const after = orders("b", [150, 250, 199, 200, 500, 90, 201, 230]);
  world.control.produce(p.inputTopic, after.map(record));
  const expected = [
    ...before.filter((o) => o.amount >= 100 && o.paid),
    ...after.filter((o) => o.amount >= 200 && o.paid),
  ].map((
    o,
  ) => [o.order_id, JSON.stringify({ order_id: o.order_id, amount: o.amount, paid: o.paid })]);
  const output = world.control.snapshot().kafka.topics[p.outputTopic].partitions
    .flatMap((part) => part.records.map((r) => [r.key, r.value]));
  assert.deepEqual(output.sort(), expected.sort());
  const obs = (await observe({ dir: p.dir, ...ports })).runners[0];
  assert.equal(obs.applicationId, appId);
  assert.equal(obs.volume.instanceLabel, instance);
  assert.equal(obs.volume.instanceFile, instance);
  assert.equal(obs.containers.length, 1);
  assert.notEqual(obs.containers[0].id, oldId);
  assert.equal(obs.containers[0].running, true);
  assert.equal(obs.containers[0].labels.operationId, r.operation_id);
  assert.equal(obs.kafka.group.members.length, 1);
  const offsetsAfter = await kafka.committedOffsets(appId, p.inputTopic);
  for (const [part, off] of offsetsBefore) {
    assert.ok(offsetsAfter.get(part)! >= off, `partition ${part} moved backwards`);
  }
  assert.equal([...offsetsAfter.values()].reduce((a, b) => a + b, 0n), 16n);

  const again = await plan({ dir: p.dir, ...ports });
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
  await store.close();
});
