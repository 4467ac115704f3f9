// The project handle on the fake world (unit tests: no service runs): its journeys, its typed
// progress events, what it closes and what it leaves to the caller, its refusal once closed, a
// project read again after a failed read, and the logger hearing a lock release that failed
// after a verified result (which keeps committed: true).
import assert from "node:assert/strict";
import { initProject } from "../project/starter.ts";
import { openStateStore } from "../state/open.ts";
import type { StateStore } from "../state/store.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import type { ProgressEvent } from "../runtime/progress.ts";
import { writePlanFile } from "../plan/plan_file.ts";
import { SluiceError } from "../errors.ts";
import { createFakeWorld, type FakeWorld } from "../../testing/fakes/fake_world.ts";
import { openProject } from "./project.ts";

/** The starter, pointed at the fake world. */
async function fakeProject(world: FakeWorld, dir: string): Promise<void> {
  await initProject(dir);
  const manifest = `${dir}/sluice.yaml`;
  await Deno.writeTextFile(
    manifest,
    (await Deno.readTextFile(manifest))
      .replace(/bootstrap_host: .*$/m, `bootstrap_host: ${world.env.bootstrapHost}`)
      .replace(/bootstrap_internal: .*$/m, `bootstrap_internal: ${world.env.bootstrapInternal}`)
      .replace(/^network: .*$/m, `network: ${world.env.network}`)
      .replace(/^image: .*$/m, `image: ${world.env.runnerImage}`),
  );
}

async function setPredicate(dir: string, sql: string): Promise<void> {
  const path = `${dir}/models/eligible_orders.sql`;
  const t = await Deno.readTextFile(path);
  await Deno.writeTextFile(path, t.replace(/WHERE .*$/m, `WHERE ${sql}`));
}

/** A Kafka port that records whether it was closed. */
function spyClose(kafka: KafkaPort): KafkaPort & { closed: number } {
  const spy = Object.create(kafka) as KafkaPort & { closed: number };
  spy.closed = 0;
  spy.close = () => (spy.closed++, Promise.resolve());
  return spy;
}

Deno.test("a handle creates, observes and plans a no-op on the fake world, with typed events", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice-sdk-" });
  const world = createFakeWorld({ seed: "sdk-create" });
  await fakeProject(world, dir);
  const kafka = spyClose(world.kafka(world.env.bootstrapHost));
  const events: ProgressEvent[] = [];
  try {
    {
      await using project = await openProject({
        dir,
        docker: world.docker,
        kafka,
        clock: world.clock,
        uuids: world.ids,
        onProgress: (e) => events.push(e),
      });
      const planned = await project.plan();
      assert.equal(planned.noop, false);
      assert.deepEqual(planned.plan.blockers, []);
      await writePlanFile(`${dir}/create.plan.json`, planned.plan);
      const outcome = await project.apply({ plan: `${dir}/create.plan.json` });
      assert.equal(outcome.kind, "change");
      if (outcome.kind !== "change") return;
      assert.equal(outcome.plan_sha256, planned.sha256);
      const operation = outcome.result.operation_id!;
      assert.deepEqual(
        events.filter((e) => e.kind !== "wait").map((e) => `${e.kind}:${e.boundary ?? ""}`),
        [
          "started:",
          "intent:intent",
          "created:create_topic",
          "created:create_topic",
          "created:create_volume",
          "created:position_offsets",
          "created:create_container",
          "ready:await_ready",
          "committed:commit",
        ],
      );
      assert.ok(events.every((e) => e.operation_id === operation));
      // one run: numbered 1, 2, 3, ... on the injected clock, schema 1, the create journey
      assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
      assert.ok(events.every((e) => e.schema === 1 && e.journey === "create"));
      assert.ok(events.every((e, i) => i === 0 || e.at >= events[i - 1].at));
      const committed = events.find((e) => e.kind === "committed");
      assert.equal(committed?.kind === "committed" && committed.serial, 1);

      const status = await project.status();
      assert.equal(status.models.length, 1);
      assert.equal(status.models[0].healthy, true, JSON.stringify(status.models[0]));
      assert.equal(status.models[0].lag, "0");
      // the runner's one member holds every input partition (the fake group's assignment)
      assert.deepEqual(status.models[0].unowned_partitions, []);
      assert.equal((await project.state()).ownership?.serial, 1);
      assert.equal((await project.observe()).runners[0].containers.length, 1);
      assert.equal((await project.plan()).noop, true);
    }
    // an injected port is the caller's: disposing the handle did not close it
    assert.equal(kafka.closed, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a closed handle refuses every call with USAGE_PROJECT_CLOSED", async () => {
  const project = await openProject({ dir: "/nonexistent-sluice-project" });
  await project.close();
  await project.close(); // closing twice is harmless
  await assert.rejects(
    () => project.plan(),
    (e: unknown) => e instanceof SluiceError && e.code === "USAGE_PROJECT_CLOSED",
  );
});

Deno.test("a project that could not be read is read again at the next call", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice-sdk-" });
  const world = createFakeWorld({ seed: "sdk-retry" });
  try {
    await using project = await openProject({
      dir,
      docker: world.docker,
      kafka: world.kafka(world.env.bootstrapHost),
      clock: world.clock,
    });
    await assert.rejects(
      () => project.status(),
      (e: unknown) => e instanceof SluiceError && e.code === "PROJECT_NOT_FOUND",
    );
    await fakeProject(world, dir);
    const status = await project.status();
    assert.equal(status.models[0].state, "absent");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("calls on one handle run one at a time, in the order they were made", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice-sdk-" });
  const world = createFakeWorld({ seed: "sdk-order" });
  await fakeProject(world, dir);
  const order: string[] = [];
  let active = 0;
  let overlapped = false;
  const base = world.kafka(world.env.bootstrapHost);
  const kafka = Object.create(base) as KafkaPort;
  kafka.describe = async (topics) => {
    if (++active > 1) overlapped = true;
    await new Promise((r) => setTimeout(r, 20));
    active--;
    return base.describe(topics);
  };
  try {
    await using project = await openProject({ dir, docker: world.docker, kafka });
    await Promise.all([
      project.observe().then(() => order.push("observe")),
      project.plan().then(() => order.push("plan")),
      project.status().then(() => order.push("status")),
    ]);
    assert.deepEqual(order, ["observe", "plan", "status"]);
    assert.equal(overlapped, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a lock release that fails after a verified replacement is a logged warning; committed stays true", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice-sdk-" });
  const world = createFakeWorld({ seed: "sdk-release" });
  await fakeProject(world, dir);
  const real = openStateStore({
    backend: "local",
    dir: `${dir}/.sluice/state`,
    project: "orders",
    environment: null,
  }, { clock: () => new Date(world.clock.now()) });
  let failRelease = false;
  // the real store, except that its release fails once asked to
  const store = new Proxy(real, {
    get(target, key) {
      if (key === "releaseLock" && failRelease) {
        return () => Promise.reject(new Error("the lock file vanished"));
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as StateStore;
  const warnings: string[] = [];
  try {
    await using project = await openProject({
      dir,
      docker: world.docker,
      kafka: world.kafka(world.env.bootstrapHost),
      store,
      clock: world.clock,
      uuids: world.ids,
      logger: { warn: (m) => warnings.push(m) },
    });
    const created = await project.plan();
    await writePlanFile(`${dir}/create.plan.json`, created.plan);
    await project.apply({ plan: `${dir}/create.plan.json` });
    await setPredicate(dir, "amount >= 200 AND paid = TRUE");
    const reviewed = await project.plan();
    assert.equal(reviewed.plan.format, 6);
    await writePlanFile(`${dir}/replace.plan.json`, reviewed.plan);
    failRelease = true;
    const outcome = await project.apply({ plan: `${dir}/replace.plan.json` });
    assert.equal(outcome.kind, "replacement");
    if (outcome.kind !== "replacement") return;
    assert.equal(outcome.result.outcome, "completed", JSON.stringify(outcome.result));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /deployment lock could not be released: the lock file vanished/);
  } finally {
    await real.close();
    await Deno.remove(dir, { recursive: true });
  }
});
