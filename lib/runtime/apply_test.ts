// The create journey has no stranded state (issue 12 item 3): `apply --plan` of a create plan is
// killed by SIGKILL at the create table's sites (and inside the local commit), through the CLI
// in its own OS process on a file-backed fake world; `apply --plan` with the same plan file then
// continues the same operation, adopting exactly what it created, and a further `apply --plan`
// is a verified no-op. (The exhaustive sweep in testing/sweep kills at every site.)
import assert from "node:assert/strict";
import { writePlanFile } from "../plan/plan_file.ts";
import { createSite } from "../protocol/create.ts";
import { openStateStore } from "../state/open.ts";
import { apply, plan } from "./session.ts";
import { SluiceError } from "../errors.ts";
import { guardPort } from "../providers/errors.ts";
import { KAFKA_MUTATIONS, kafkaCallSubject, kafkaFailure } from "../providers/kafka/_failure.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import type { DockerPort } from "../providers/docker/port.ts";
import { type FakeProject, fakeProject } from "../../testing/ways/fake_project.ts";

const KILLS: Array<[string, "before" | "after"]> = [
  [createSite("intent").name, "before"],
  [createSite("intent").name, "after"],
  [createSite("create_topic").name, "after"],
  [createSite("create_volume").name, "after"],
  [createSite("position_offsets").name, "after"],
  [createSite("write_mounted_plan").name, "after"],
  [createSite("create_container").name, "after"],
  [createSite("start_container").name, "after"],
  ["state.local.commit_ownership.ownership.rename", "after"],
  [createSite("commit").name, "after"],
];

async function killedCreate(site: string, side: "before" | "after") {
  await using f = await fakeProject(`create-${site}-${side}`);
  const { world, p, deps } = f;
  const created = await plan({ dir: p.dir, ...deps });
  assert.deepEqual(created.plan.blockers, []);
  const planPath = `${p.dir}/create.plan.json`;
  await writePlanFile(planPath, created.plan);
  const apply = ["-o", "json", "apply", "--project", p.dir, "--plan", planPath];
  const killed = await f.cli(apply, {
    SLUICE_FAULT_POINT: `${site}:${side}`,
    SLUICE_TEST_ONLY_ALLOW_FAULTS: "1",
  });
  assert.equal(killed.signal, "SIGKILL", `${site}:${side}: exit ${killed.code}\n${killed.stderr}`);
  const shown = (await f.cli(["-o", "json", "state", "show", "--project", p.dir])).json().data!;
  const lock = shown.lock as { stale: boolean; holder: { lock_id: string } | null };
  const lockArgs = lock.stale ? ["--break-stale-lock", lock.holder!.lock_id] : [];

  // the same plan file again continues (or verifies) the same operation
  const again = await f.cli([...apply, ...lockArgs]);
  assert.equal(again.code, 0, `${site}:${side}: ${again.stdout}${again.stderr}`);
  const first = again.json().data!;
  const snap = await load(p.dir, p.name);
  assert.equal(snap.control, null);
  assert.equal(snap.ownership!.document.serial, 1);
  assert.equal(snap.history.events.filter((e) => e.kind === "ownership_committed").length, 1);
  const committedBy = snap.history.events.find((e) => e.kind === "ownership_committed")!;
  const pending = shown.pending_operation as { operation_id: string } | null;
  if (pending) assert.equal(committedBy.operation_id, pending.operation_id);
  assert.equal(first.operation_id, committedBy.operation_id);

  // exactly one of each, the owned identities are the world's, the runner is RUNNING
  const w = world.control.snapshot();
  const owned = snap.ownership!.document;
  const runner = owned.runners[0];
  const containers = Object.values(w.docker.containers);
  assert.equal(containers.length, 1);
  assert.equal(containers[0].name, runner.container_name);
  assert.equal(world.control.runnerStatus(containers[0].id)?.state, "RUNNING");
  const volume = w.docker.volumes[runner.volume.name];
  assert.equal(volume.labels["sluice.volume-instance"], runner.volume.instance_id);
  for (const t of owned.topics) assert.equal(w.kafka.topics[t.name].id, t.topic_id);
  const creates = world.control.mutations().filter((m) =>
    ["createTopic", "createVolume", "createContainer", "setGroupOffsets"].includes(m.op)
  );
  assert.deepEqual(
    creates.map((m) => m.op).sort(),
    ["createContainer", "createTopic", "createTopic", "createVolume", "setGroupOffsets"],
    `${site}:${side}: each resource created once`,
  );

  // a repeated apply of the completed create is a verified no-op
  const count = world.control.mutations().filter((m) => m.by !== "runner").length;
  const third = await f.cli(apply);
  assert.equal(third.code, 0, third.stdout + third.stderr);
  assert.equal(third.json().data!.noop, true);
  assert.equal(third.json().data!.already_applied, true);
  assert.equal(world.control.mutations().filter((m) => m.by !== "runner").length, count);
  assert.equal((await load(p.dir, p.name)).ownership!.document.serial, 1);
}

/**
 * `apply --plan` with the create's plan file again, through the CLI: it finishes the same
 * operation, which commits once.
 */
async function continuedByTheSamePlan(f: FakeProject, operationId: string): Promise<void> {
  const again = await f.cli([
    "-o",
    "json",
    "apply",
    "--project",
    f.p.dir,
    "--plan",
    `${f.p.dir}/create.plan.json`,
  ]);
  assert.equal(again.code, 0, again.stdout + again.stderr);
  assert.equal(again.json().data!.operation_id, operationId);
  const done = await load(f.p.dir, f.p.name);
  assert.equal(done.control, null);
  assert.equal(done.ownership!.document.serial, 1);
}

async function load(dir: string, project: string) {
  const store = openStateStore({
    backend: "local",
    dir: `${dir}/.sluice/state`,
    project,
    environment: null,
  });
  try {
    return await store.load();
  } finally {
    await store.close();
  }
}

for (const [site, side] of KILLS) {
  Deno.test(`a create killed at ${site}:${side} is continued by apply --plan with the same file`, () =>
    killedCreate(site, side));
}

// Issue 18 item 7: a completed create's commit names its plan file in the same write, so the plan
// applied again after later changes (a replacement applied since, its SQL edit) names the
// operation that applied it (PLAN_ALREADY_APPLIED) instead of a stale state, and mutates nothing;
// right after the create it stays a verified no-op.
Deno.test("a create plan applied again after a later replacement names the create's operation and changes nothing", async () => {
  await using f = await fakeProject("create-again-later");
  const { world, p, deps } = f;
  const created = await plan({ dir: p.dir, ...deps });
  const createPath = `${p.dir}/create.plan.json`;
  const { sha256 } = await writePlanFile(createPath, created.plan);
  const applyCreate = ["-o", "json", "apply", "--project", p.dir, "--plan", createPath];
  const first = await f.cli(applyCreate);
  assert.equal(first.code, 0, first.stdout + first.stderr);
  const createOp = first.json().data!.operation_id as string;
  const commit = (await load(p.dir, p.name)).history.events.find((e) =>
    e.kind === "ownership_committed"
  )!;
  assert.ok(commit.kind === "ownership_committed");
  assert.equal(commit.operation_id, createOp);
  assert.equal(commit.plan_sha256, sha256, "the commit names the plan file it applied");
  const repeat = await f.cli(applyCreate);
  assert.equal(repeat.code, 0, repeat.stdout + repeat.stderr);
  assert.equal(repeat.json().data!.already_applied, true);

  // a later change: a reviewed replacement of the predicate
  await p.setPredicate("amount >= 200 AND paid = TRUE");
  const reviewed = await plan({ dir: p.dir, ...deps });
  assert.equal(reviewed.plan.format, 6, JSON.stringify(reviewed.plan.blockers));
  const replacePath = `${p.dir}/replace.plan.json`;
  await writePlanFile(replacePath, reviewed.plan);
  const replaced = await f.cli(["-o", "json", "apply", "--project", p.dir, "--plan", replacePath]);
  assert.equal(replaced.code, 0, replaced.stdout + replaced.stderr);

  const before = await load(p.dir, p.name);
  const count = world.control.mutations().filter((m) => m.by !== "runner").length;
  const again = await f.cli(["apply", "--project", p.dir, "--plan", createPath]);
  assert.equal(again.code, 3, again.stdout + again.stderr);
  assert.match(
    again.stderr,
    new RegExp(
      `error\\[PLAN_ALREADY_APPLIED\\]: this plan was already applied by operation ${createOp} \\(completed ${commit.recorded_at}\\); nothing was done`,
    ),
  );
  assert.equal(world.control.mutations().filter((m) => m.by !== "runner").length, count);
  assert.equal((await load(p.dir, p.name)).revision, before.revision, "no state write");
});

// Issue 18 item 7: a broker that restarts under a create loses createTopic's response. The error
// keeps its code (UNKNOWN_OUTCOME_KAFKA, exit 6) and the client's error as its cause, and says
// what was being done (creating which topic), against which broker, that the operation stays
// pending, and the next commands; the named way out (apply --plan with the same file) works.
Deno.test("a create whose createTopic response was lost names the topic, the broker and the way on, which works", async () => {
  await using f = await fakeProject("create-lost-topic");
  const { world, p, deps } = f;
  const created = await plan({ dir: p.dir, ...deps });
  const { sha256 } = await writePlanFile(`${p.dir}/create.plan.json`, created.plan);
  const address = world.env.bootstrapHost;
  let lose = true;
  const lossy: KafkaPort = {
    ...deps.kafka,
    async createTopic(name, partitions) {
      const id = await deps.kafka.createTopic(name, partitions);
      if (!lose) return id;
      lose = false;
      // the broker applied it; the connection broke before its answer (as the client says it)
      const reset = Object.assign(new Error("read ECONNRESET"), {
        code: "ECONNRESET",
        syscall: "read",
      });
      throw new AggregateError([reset], "Creating topics failed.");
    },
  };
  const kafka = guardPort(lossy, {
    target: { provider: "kafka", address, origin: { setting: "kafka.bootstrap_host" } },
    mutations: KAFKA_MUTATIONS,
    specific: kafkaFailure,
    what: kafkaCallSubject,
  });
  const e = await apply({ dir: p.dir, plan: created.plan, planSha256: sha256, ...deps, kafka })
    .then(() => assert.fail("no error"), (e: SluiceError) => e);
  assert.ok(e instanceof SluiceError, String(e));
  assert.equal(e.code, "UNKNOWN_OUTCOME_KAFKA");
  const snap = await load(p.dir, p.name);
  const operationId = snap.control!.opened.operation_id;
  const topic = created.plan.actions.find((a) => a.type === "create_topic")!;
  assert.ok(topic.type === "create_topic");
  const [first, next] = e.message.split("\n");
  assert.match(
    first,
    new RegExp(
      `^createTopic \\(creating topic ${topic.topic} with \\d+ partitions?\\) on Kafka at ${address} \\(kafka\\.bootstrap_host\\) lost its response \\(read ECONNRESET\\)`,
    ),
  );
  assert.equal(
    next,
    `create operation ${operationId} stays pending: check that Kafka at ${address} answers ('sluice status'), then continue it with 'sluice apply --plan PLAN_FILE (the plan file with sha256 ${sha256})' (each step observes first and adopts what this operation already made), or abandon it ('sluice state abandon --operation-id ${operationId} --reason TEXT')`,
  );
  assert.equal((e.cause as Error).message, "Creating topics failed.", "the client's error");
  assert.equal(e.evidence?.operation_id, operationId);

  // the way on: the same plan file continues the operation, adopting the topic it created
  await continuedByTheSamePlan(f, operationId);
  const creates = world.control.mutations().filter((m) =>
    m.op === "createTopic" && m.key === topic.topic
  );
  assert.equal(creates.length, 1, "the topic was created once and adopted");
});

Deno.test("a create whose new volume vanishes in the instant before the runner's create: undone, refused, then continued by the same plan file", async () => {
  await using f = await fakeProject("create-vanished-volume");
  const { world, p, deps } = f;
  const created = await plan({ dir: p.dir, ...deps });
  const { sha256 } = await writePlanFile(`${p.dir}/create.plan.json`, created.plan);
  let raced = 0;
  // the outside world removes the volume this operation just made, before the container's create
  const racing: DockerPort = {
    ...deps.docker,
    createContainer: (spec) => {
      if (raced++ === 0) world.control.removeVolume(spec.volume);
      return deps.docker.createContainer(spec);
    },
  };
  const e = await apply({
    dir: p.dir,
    plan: created.plan,
    planSha256: sha256,
    ...deps,
    docker: racing,
  }).then(() => assert.fail("no error"), (e: SluiceError) => e);
  assert.equal(raced, 1);
  assert.ok(e instanceof SluiceError, String(e));
  assert.equal(e.code, "BLOCKED_VOLUME_MISSING", e.message);
  assert.match(e.message, /vanished during the create .* the container was removed/);
  // no runner and no volume of Docker's making are left
  const w = world.control.snapshot().docker;
  assert.deepEqual(Object.values(w.containers), []);
  assert.deepEqual(Object.keys(w.volumes), []);
  // the way on: the same plan file continues the same operation, which makes its volume again
  const pending = (await load(p.dir, p.name)).control!.opened.operation_id;
  await continuedByTheSamePlan(f, pending);
});
