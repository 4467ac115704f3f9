// The create journey of a set (issue 31): a model of `instances: 2` over two daemons (east, the
// world's default daemon, and west, a daemon added to the world) is created by one plan and one
// operation: each instance its own container and state volume on its placed endpoint, one
// application ID, the group positioned once, ready as one group of two members holding every
// input partition; killed by SIGKILL at each instance's steps it is continued by the same plan
// file; and a plan of a set is offered only where sets are open (SLUICE_TEST_ONLY_SETS=1:
// no journey replaces a set yet), which apply checks too.
import assert from "node:assert/strict";
import { writePlanFile } from "../plan/plan_file.ts";
import { SETS_GATE } from "../plan/instances.ts";
import { createSite } from "../protocol/create.ts";
import {
  asSetOfTwo,
  containersOn,
  fakeProject,
  killedApply,
  localState,
  SETS_OPEN,
  withSetsOpen,
} from "../../testing/ways/fake_project.ts";
import { projectStatus } from "./status.ts";
import { apply, plan } from "./session.ts";
import { LABEL } from "./labels.ts";
import { verifyPlanBindsProject } from "../plan/bind.ts";
import type { Plan } from "../plan/plan.ts";
import { compile } from "../project/compile.ts";
import { loadProject } from "../project/load.ts";
import { SluiceError } from "../errors.ts";
import { order } from "../../testing/ways/replacement_fixture.ts";

const OPEN = SETS_OPEN;

/** The starter (nothing created) with its model declared as two instances over east and west. */
async function setOfTwo(seed: string) {
  return await asSetOfTwo(await fakeProject(seed));
}

/** The set's plan, written to a file (sets open). */
async function setPlan(f: Awaited<ReturnType<typeof setOfTwo>>) {
  const planned = await withSetsOpen(() =>
    plan({ dir: f.p.dir, ...f.deps, dockerEndpoint: f.dockerEndpoint })
  );
  assert.deepEqual(planned.plan.blockers, []);
  const path = `${f.p.dir}/create.plan.json`;
  await writePlanFile(path, planned.plan);
  return { planned, path, args: ["-o", "json", "apply", "--project", f.p.dir, "--plan", path] };
}

/**
 * What a created set of two is, read by independent means (the worlds' daemons, the broker, the
 * state files, `status`): one container and one volume per instance on its placed daemon, each
 * volume its own instance, the ownership record's instances, two members holding every partition.
 */
async function assertCreatedSet(f: Awaited<ReturnType<typeof setOfTwo>>) {
  const snap = await localState(f);
  assert.equal(snap.control, null);
  assert.equal(snap.ownership!.document.serial, 1);
  const owned = snap.ownership!.document.runners[0];
  const app = owned.application_id;
  assert.deepEqual(
    owned.instances!.map((i) => [i.instance, i.endpoint, i.container_name, i.volume.name]),
    [[0, "east", app, `${app}-state`], [1, "west", `${app}.1`, `${app}-state-1`]],
  );
  assert.notEqual(owned.instances![0].volume.instance_id, owned.instances![1].volume.instance_id);
  for (const [daemon, i] of [["east", 0], ["west", 1]] as const) {
    const w = f.world.endpoint(daemon).control.snapshot();
    const mine = Object.values(w.docker.containers).filter((c) =>
      c.labels[LABEL.applicationId] === app
    );
    assert.deepEqual(mine.map((c) => c.name), [owned.instances![i].container_name], daemon);
    assert.equal(mine[0].labels[LABEL.instance], i === 0 ? undefined : String(i));
    const volume = w.docker.volumes[owned.instances![i].volume.name];
    assert.equal(volume.labels[LABEL.volumeInstance], owned.instances![i].volume.instance_id);
    assert.equal(f.world.endpoint(daemon).control.runnerStatus(mine[0].id)?.state, "RUNNING");
  }
  // one group, positioned once, its two members holding every input partition
  const positioned = f.world.control.mutations().filter((m) => m.op === "setGroupOffsets");
  assert.equal(positioned.length, 1);
  const s = await projectStatus({ dir: f.p.dir, ...f.deps, dockerEndpoint: f.dockerEndpoint });
  const m = s.models[0];
  assert.equal(m.state, "set");
  assert.deepEqual(m.instances!.map((i) => [i.instance, i.state, i.runner]), [
    [0, "running", "RUNNING"],
    [1, "running", "RUNNING"],
  ]);
  assert.equal(m.members, 2);
  assert.deepEqual(m.unowned_partitions, []);
  assert.equal(m.set_problem, null);
  assert.equal(m.healthy, true);
}

Deno.test("a set of two over two daemons is created by one plan: each instance on its endpoint, ready as one group; the plan again is a verified no-op", async () => {
  await using f = await setOfTwo("set-create");
  // sets closed (every user today): the plan offers no set
  const closed = await plan({ dir: f.p.dir, ...f.deps, dockerEndpoint: f.dockerEndpoint });
  assert.deepEqual(closed.plan.blockers.map((b) => b.code), ["BLOCKED_INSTANCES_UNSUPPORTED"]);

  const { planned, args } = await setPlan(f);
  // the review says where each instance is created
  const shown = await f.cli(["plan", "--project", f.p.dir], OPEN);
  assert.equal(shown.code, 0, shown.stdout + shown.stderr);
  assert.match(
    shown.stdout,
    /2 instances, each its own container and state volume: 0 on east, 1 on west/,
  );
  const create = planned.plan.actions.find((a) => a.type === "create_runner");
  assert.ok(create?.type === "create_runner");
  assert.deepEqual(create.instances, [
    { instance: 0, endpoint: "east" },
    { instance: 1, endpoint: "west" },
  ]);
  const applied = await f.cli(args, OPEN);
  assert.equal(applied.code, 0, applied.stdout + applied.stderr);
  const result = applied.json().data!;
  assert.deepEqual(
    (result.runners as Array<{ instance: number; endpoint: string }>).map((r) => [
      r.instance,
      r.endpoint,
    ]),
    [[0, "east"], [1, "west"]],
  );
  await assertCreatedSet(f);

  // the same plan again: verified on both daemons, nothing written
  const count = f.world.control.mutations().filter((m) => m.by !== "runner").length;
  const again = await f.cli(args, OPEN);
  assert.equal(again.code, 0, again.stdout + again.stderr);
  assert.equal(again.json().data!.already_applied, true);
  assert.equal(f.world.control.mutations().filter((m) => m.by !== "runner").length, count);
});

Deno.test("a plan of an owned set, unchanged, is a verified no-op on both daemons; a changed predicate or count names what is not built", async () => {
  await using f = await setOfTwo("set-owned-plan");
  const { args } = await setPlan(f);
  const applied = await f.cli(args, OPEN);
  assert.equal(applied.code, 0, applied.stdout + applied.stderr);
  const planned = () =>
    withSetsOpen(() => plan({ dir: f.p.dir, ...f.deps, dockerEndpoint: f.dockerEndpoint }));
  const codes = async () => (await planned()).plan.blockers.map((b) => b.code);

  // unchanged: nothing to do, read on both endpoints
  const same = await planned();
  assert.deepEqual(same.plan.blockers, []);
  assert.deepEqual(same.plan.actions, []);
  const offline = await withSetsOpen(() =>
    plan({ dir: f.p.dir, ...f.deps, dockerEndpoint: f.dockerEndpoint, offline: true })
  );
  assert.deepEqual([offline.plan.blockers, offline.plan.actions], [[], []]);

  // a changed predicate: replacing a set is not built, nothing is planned
  await f.p.setPredicate("amount >= 200 AND paid = TRUE");
  const changed = (await planned()).plan;
  assert.deepEqual(changed.blockers.map((b) => b.code), ["BLOCKED_INSTANCES_UNSUPPORTED"]);
  assert.match(changed.blockers[0].message, /replacing a set's predicate is not built yet/);
  assert.equal(changed.actions.filter((a) => a.type !== "create_topic").length, 0);

  // one instance declared: changing the count is not built
  await f.p.editManifest((t) => t.replace("    instances: 2\n", "    instances: 1\n"));
  assert.deepEqual(await codes(), ["BLOCKED_INSTANCES_UNSUPPORTED"]);
  assert.match(
    (await planned()).plan.blockers[0].message,
    /owned as a set of 2 instances \(0 on east, 1 on west\) and declared as 1 \(0 on the one daemon\): changing a set's number of instances/,
  );

  // an instance not as owned is named before what the change needs: instance 1's container
  // stopped from outside on west
  await f.p.editManifest((t) => t.replace("    instances: 1\n", "    instances: 2\n"));
  const app = (await localState(f)).ownership!.document.runners[0].application_id;
  const [one] = containersOn(f, "west", app);
  f.world.endpoint("west").control.killContainer(one);
  const stopped = (await planned()).plan.blockers;
  assert.deepEqual(stopped.map((b) => b.code), ["BLOCKED_RUNNER_NOT_RUNNING"]);
  assert.match(stopped[0].message, /^instance 1: /);
  // west does not answer: named with its instance
  f.world.control.setDaemonReachable("west", false);
  const down = (await planned()).plan.blockers;
  assert.deepEqual(down.map((b) => b.code), ["BLOCKED_ENDPOINT_UNREACHABLE"]);
  assert.deepEqual(down[0].evidence, { endpoint: "west", instances: [1] });
  f.world.control.setDaemonReachable("west", true);
});

Deno.test("a plan of a set is refused by apply where sets are not open: it does only what may be done", async () => {
  await using f = await setOfTwo("set-create-closed");
  const { planned } = await setPlan(f);
  await assert.rejects(
    () =>
      apply({
        dir: f.p.dir,
        ...f.deps,
        dockerEndpoint: f.dockerEndpoint,
        plan: planned.plan,
        planSha256: planned.sha256,
      }),
    (e: Error & { code?: string }) => {
      assert.equal(e.code, "PLAN_ACTION_MISMATCH");
      assert.match(e.message, /its instances create a set, which no plan offers yet/);
      return true;
    },
  );
  assert.equal((await localState(f)).control, null);
  assert.deepEqual(
    f.world.control.mutations().filter((m) => m.by !== "runner" && m.by !== "control"),
    [],
  );
});

Deno.test("a plan file cannot place a set otherwise than the project: apply's check names its instances", async () => {
  await using f = await setOfTwo("set-create-forged");
  const { planned } = await setPlan(f);
  const project = await loadProject(f.p.dir);
  const truth = { project, compiled: compile(project), connectors: () => [] };
  const withInstances = (instances: unknown): Plan => ({
    ...planned.plan,
    actions: planned.plan.actions.map((a) =>
      a.type === "create_runner" ? { ...a, instances } as typeof a : a
    ),
  });
  const refused = (p: Plan, why: RegExp) =>
    assert.throws(
      () => verifyPlanBindsProject(p, truth),
      (e: unknown) =>
        e instanceof SluiceError && e.code === "PLAN_ACTION_MISMATCH" && why.test(e.message),
    );
  // as made, where sets are open: it binds the project
  Deno.env.set(SETS_GATE, "1");
  try {
    verifyPlanBindsProject(planned.plan, truth);
    const placement = /its instances are not the project's placement/;
    // the two instances swapped between the daemons, one dropped, or none: refused
    refused(
      withInstances([{ instance: 0, endpoint: "west" }, { instance: 1, endpoint: "east" }]),
      placement,
    );
    refused(withInstances([{ instance: 0, endpoint: "east" }]), placement);
    refused(withInstances(undefined), placement);
  } finally {
    Deno.env.delete(SETS_GATE);
  }
  // where sets are not open: the plan as made is refused
  refused(planned.plan, /create a set, which no plan offers yet/);
});

Deno.test("a set's create stopped by a daemon that stops answering stays pending, names it, and completes once it is back", async () => {
  await using f = await setOfTwo("set-create-daemon-down");
  const { planned, args } = await setPlan(f);
  const app = planned.plan.actions.find((a) => a.type === "create_runner")!.application_id;
  // instance 0 made and started on east, then the process dies
  const { pending, lockArgs } = await killedApply(
    f,
    args,
    `${createSite("start_container").name}:after@1`,
  );

  // west does not answer: the continuation cannot read instance 1's endpoint and says so
  f.world.control.setDaemonReachable("west", false);
  const down = await f.cli([...args, ...lockArgs], OPEN);
  assert.equal(down.code, 7, down.stdout + down.stderr);
  const error = down.json().errors[0] as { code: string; message: string };
  assert.equal(error.code, "ENV_DOCKER_UNREACHABLE");
  assert.match(error.message, /west/);
  assert.match(
    error.message,
    new RegExp(`create operation ${pending!.operation_id} stays pending`),
  );
  const snap = await localState(f);
  assert.equal(snap.control?.opened.operation_id, pending!.operation_id);
  assert.deepEqual(containersOn(f, "west", app), []);

  // back: the same plan file completes the same operation
  f.world.control.setDaemonReachable("west", true);
  const again = await f.cli(args, OPEN);
  assert.equal(again.code, 0, again.stdout + again.stderr);
  assert.equal(again.json().data!.operation_id, pending!.operation_id);
  await assertCreatedSet(f);
});

Deno.test("a set's instance 0 killed from outside after it processed (a daemon's shutdown) is started again by the same plan file: no dead end", async () => {
  await using f = await setOfTwo("set-create-instance-killed");
  const { planned, args } = await setPlan(f);
  const app = planned.plan.actions.find((a) => a.type === "create_runner")!.application_id;
  // instance 0 started on east, then the apply dies; input flows and instance 0 processes it
  const { lockArgs } = await killedApply(f, args, `${createSite("start_container").name}:after@1`);
  f.world.control.produce(f.p.inputTopic, [order("k1", 150), order("k2", 250)]);
  f.world.control.advanceClock(30_000);
  const committed = () =>
    Object.values(f.world.control.snapshot().kafka.groups[app]?.offsets ?? {})
      .flatMap((t) => Object.values(t)).reduce((a, o) => a + BigInt(o), 0n);
  const moved = committed();
  assert.ok(moved > 0n, "instance 0 processed and committed: its positions moved");
  // then it is killed from outside while RUNNING (exit 137, its own status RUNNING)
  const [zero] = containersOn(f, "east", app);
  f.world.control.killContainer(zero);
  assert.equal(f.world.control.container(zero)!.state.exit_code, 137);
  assert.equal(f.world.control.runnerStatus(zero)!.state, "RUNNING");
  const again = await f.cli([...args, ...lockArgs], OPEN);
  assert.equal(again.code, 0, again.stdout + again.stderr);
  await assertCreatedSet(f);
  // started again from its committed positions: nothing rewound
  assert.ok(committed() >= moved);
});

// each instance's steps are their own crossings of the create table's sites: @1 is instance 0's,
// @2 instance 1's (the group is positioned once: its site is crossed once)
const KILLS: Array<[string, "before" | "after", number]> = [
  [createSite("create_volume").name, "after", 2],
  [createSite("position_offsets").name, "after", 1],
  [createSite("create_container").name, "after", 1],
  [createSite("create_container").name, "after", 2],
  [createSite("write_volume_instance").name, "after", 2],
  [createSite("start_container").name, "after", 1],
  [createSite("start_container").name, "after", 2],
  [createSite("commit").name, "after", 1],
];

for (const [site, side, n] of KILLS) {
  Deno.test(`a set's create killed at ${site}:${side}@${n} is continued by the same plan file`, async () => {
    await using f = await setOfTwo(`set-create-${site}-${side}-${n}`);
    const { args } = await setPlan(f);
    const { pending, lockArgs } = await killedApply(f, args, `${site}:${side}@${n}`);
    let continueArgs = lockArgs;
    if (site === createSite("create_container").name && n === 2) {
      // the pending set's next row, read on each instance's endpoint: instance 1's container was
      // created (its response lost), so its volume's instance file is written through it next
      const diag = await f.cli([
        "-o",
        "json",
        "state",
        "runner-status",
        "--project",
        f.p.dir,
        "--plan",
        args[args.length - 1],
        "--operation-id",
        pending!.operation_id,
        ...lockArgs,
      ], OPEN);
      continueArgs = [];
      assert.equal(diag.code, 0, diag.stdout + diag.stderr);
      const next = diag.json().data!.next as { step: string; detail: string };
      assert.equal(next.step, "write_volume_instance", JSON.stringify(next));
      assert.match(next.detail, /model eligible_orders instance 1 /);
    }
    const again = await f.cli([...args, ...continueArgs], OPEN);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    await assertCreatedSet(f);
    const creates = f.world.control.mutations().filter((m) =>
      ["createVolume", "createContainer"].includes(m.op)
    );
    assert.deepEqual(
      creates.map((m) => m.op).sort(),
      ["createContainer", "createContainer", "createVolume", "createVolume"],
      "each instance's volume and container created once",
    );
  });
}
