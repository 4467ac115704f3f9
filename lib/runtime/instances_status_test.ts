// status of a model run as a set of instances over two daemons (issue 31), on a file-backed fake
// world with a second daemon: each instance is read on its own endpoint, so status names the one
// that is missing, stopped or on a daemon that does not answer, and a set is healthy only as N
// running instances of one generation that are the group's N members holding every partition.
// The set here grows from a created single runner: instance 1 is created by hand, as the create
// journey makes it (lib/runtime/set_create_test.ts), so each degraded state can be set up.
import assert from "node:assert/strict";
import { asSetOfTwo, createdStarter } from "../../testing/ways/fake_project.ts";
import { instanceSpecLike } from "../../testing/set_instance.ts";
import { order } from "../../testing/ways/replacement_fixture.ts";
import { projectStatus } from "./status.ts";
import { plan } from "./session.ts";
import { type InstanceStatus, setProblem } from "./instances_status.ts";
import { LABEL } from "./labels.ts";

/**
 * The created starter's model declared as two instances over east (the world's default daemon,
 * the one instance 0 was created on) and west (a daemon added to the world).
 */
async function starterAsSetOfTwo(seed: string) {
  return await asSetOfTwo(await createdStarter(seed));
}

Deno.test("status of a set over two daemons: each instance on its endpoint, degraded precisely, healthy as N members holding every partition", async () => {
  await using f = await starterAsSetOfTwo("set-status");
  const { dockerEndpoint } = f;
  const app = f.applicationId;
  f.world.control.produce(f.p.inputTopic, [order("a1", 150), order("a2", 250), order("a3", 50)]);
  const west = f.world.endpoint("west");
  const status = async () => {
    const s = await projectStatus({
      dir: f.p.dir,
      ...f.deps,
      dockerEndpoint,
    });
    assert.equal(s.models.length, 1);
    return s.models[0];
  };

  // instance 0 is the runner that was there; instance 1 has no container on west yet
  let m = await status();
  assert.equal(m.state, "set");
  assert.deepEqual(
    m.instances!.map((i) => [i.instance, i.endpoint, i.reachable, i.state, i.runner]),
    [[0, "east", true, "running", "RUNNING"], [1, "west", true, "absent", null]],
  );
  assert.equal(m.set_problem, "instance 1 on west: no container");
  assert.equal(m.healthy, false);

  // instance 1 created on west as instance 0 is on east, with its own volume and name
  const zero = (await f.deps.docker.inspectContainer(app))!;
  const spec = instanceSpecLike(zero, app, 1);
  await west.docker.createVolume(spec.volume, { [LABEL.applicationId]: app });
  const id1 = await west.docker.createContainer(spec);
  await west.docker.startContainer(id1);
  m = await status();
  assert.deepEqual(
    m.instances!.map((i) => [i.instance, i.state, i.container, i.generation, i.runner]),
    [
      [0, "running", app, zero.labels[LABEL.generation], "RUNNING"],
      [1, "running", spec.name, zero.labels[LABEL.generation], "RUNNING"],
    ],
  );
  assert.equal(m.members, 2);
  assert.deepEqual(m.unowned_partitions, []);
  assert.equal(m.generation, zero.labels[LABEL.generation]);
  assert.equal(m.set_problem, null);
  assert.equal(m.healthy, true);

  // west stops answering: instance 1 is unknown, named with the endpoint's problem
  f.world.control.setDaemonReachable("west", false);
  m = await status();
  assert.deepEqual(
    m.instances!.map((i) => [i.instance, i.reachable, i.state, i.problem?.code ?? null]),
    [[0, true, "running", null], [1, false, "unknown", "ENV_DOCKER_UNREACHABLE"]],
  );
  assert.match(m.set_problem!, /^instance 1 on west: its daemon does not answer/);
  assert.equal(m.healthy, false);
  // its runner goes on without its daemon's API: still one of the group's two members
  assert.equal(m.members, 2);

  // back, and instance 1 killed: it is named as exited; the group falls to one member
  f.world.control.setDaemonReachable("west", true);
  west.control.killContainer(spec.name);
  f.world.control.advanceClock(60_000);
  m = await status();
  assert.deepEqual(m.instances!.map((i) => i.state), ["running", "exited"]);
  // why it stopped, as a single runner's stop is reported
  assert.equal(m.instances![0].stop, null);
  assert.equal(m.instances![1].stop?.exit_code, 137);
  assert.equal(m.set_problem, `instance 1 on west: exited, ${m.instances![1].stop!.summary}`);
  assert.equal(m.members, 1);

  // the CLI says the same, one line per instance
  const out = await f.cli(["status", "--health", "--project", f.p.dir]);
  assert.equal(out.code, 4, out.stdout + out.stderr);
  assert.match(out.stderr, /BLOCKED_UNHEALTHY.*1 model/);
  assert.match(
    out.stdout,
    /^ok {3}endpoint west {2}unix:\/\/\/run\/sluice-west\/docker.sock {2}daemon /m,
  );
  assert.match(out.stdout, /instance 0 on east: running {2}container=/);
  assert.match(out.stdout, /instance 1 on west: exited/);
  assert.match(out.stdout, /^ {7}stopped: exit 137/m);
  assert.match(out.stdout, /set not ready: instance 1 on west: exited, exit 137/);

  // instance 1's container found on east, not on its placed west: named, never counted
  await west.docker.removeContainer(id1);
  await f.deps.docker.createVolume(spec.volume, { [LABEL.applicationId]: app });
  await f.deps.docker.createContainer(spec);
  m = await status();
  assert.deepEqual(
    m.instances!.map((i) => [i.instance, i.state, i.elsewhere]),
    [[0, "running", []], [1, "absent", [{ endpoint: "east", container: spec.name }]]],
  );
  assert.equal(
    m.set_problem,
    `instance 1 on west: a container of it is on east (${spec.name}), not its placed endpoint`,
  );

  // containers of the application that are no instance of the set: reported, label not echoed
  const odd = { ...spec, name: `${app}.odd`, labels: { ...spec.labels, [LABEL.instance]: "0x1" } };
  const beyond = { ...spec, name: `${app}.5`, labels: { ...spec.labels, [LABEL.instance]: "5" } };
  await west.docker.createContainer(odd);
  await west.docker.createContainer(beyond);
  m = await status();
  assert.deepEqual(m.unplaced, [
    { endpoint: "west", container: odd.name, instance: null },
    { endpoint: "west", container: beyond.name, instance: 5 },
  ]);
  const cli = await f.cli(["status", "--project", f.p.dir]);
  assert.match(cli.stdout, /^ {7}also on east: .*\.1 \(not its placed endpoint\)$/m);
  assert.match(
    cli.stdout,
    /^ {5}not an instance of the set: .*\.odd on west \(unreadable sluice\.instance label\)$/m,
  );
  assert.match(cli.stdout, /^ {5}not an instance of the set: .*\.5 on west \(instance 5\)$/m);
  assert.ok(!cli.stdout.includes("0x1"), "an unreadable label is not echoed");
});

Deno.test("setProblem: an instance's own problem first, then a container that is no instance of the set, then generations, then the group", () => {
  const row = (instance: number, over: Partial<InstanceStatus> = {}): InstanceStatus => ({
    instance,
    endpoint: instance === 0 ? "east" : "west",
    reachable: true,
    containers: 1,
    state: "running",
    container: `c${instance}`,
    generation: "g",
    runner: "RUNNING",
    stop: null,
    elsewhere: [],
    problem: null,
    ...over,
  });
  const stray = [{ endpoint: "west", container: "x", instance: 2 }];
  assert.equal(setProblem([row(0), row(1)], null), null);
  assert.equal(setProblem([row(0), row(1)], "the group is short"), "the group is short");
  assert.equal(
    setProblem([row(0), row(1)], null, stray),
    "x on west is a container of the application labelled instance 2, beyond the set's 2",
  );
  assert.match(
    setProblem([row(0), row(1)], null, [{ endpoint: null, container: "y", instance: null }])!,
    /^y on the daemon .* whose sluice\.instance label is not one sluice writes$/,
  );
  assert.equal(
    setProblem([row(0), row(1, { state: "created", runner: null })], null, stray),
    "instance 1 on west: created",
  );
  assert.equal(
    setProblem([row(0, { generation: "a" }), row(1, { generation: "b" })], "short"),
    "the instances run 2 generations",
  );
});

Deno.test("a plan of a set reads each placed endpoint: one that does not answer is BLOCKED_ENDPOINT_UNREACHABLE naming it and its instances", async () => {
  await using f = await starterAsSetOfTwo("set-plan");
  const { dockerEndpoint } = f;
  const codes = async () => {
    const p = await plan({ dir: f.p.dir, ...f.deps, dockerEndpoint });
    return p.plan.blockers;
  };
  // both daemons answer: only that sets are not run yet
  assert.deepEqual((await codes()).map((b) => b.code), ["BLOCKED_INSTANCES_UNSUPPORTED"]);

  // west does not answer: named, with the instance placed there and its daemon's code
  f.world.control.setDaemonReachable("west", false);
  const blocked = await codes();
  assert.deepEqual(blocked.map((b) => b.code), [
    "BLOCKED_INSTANCES_UNSUPPORTED",
    "BLOCKED_ENDPOINT_UNREACHABLE",
  ]);
  assert.equal(blocked[1].model, "eligible_orders");
  assert.deepEqual(blocked[1].evidence, {
    endpoint: "west",
    instances: [1],
    code: "ENV_DOCKER_UNREACHABLE",
  });
  assert.match(
    blocked[1].message,
    /^model eligible_orders: instance 1 placed on west, whose daemon does not answer \(ENV_DOCKER_UNREACHABLE: .*\); .* \(or correct docker\.endpoints\.west\) and plan again$/,
  );

  // offline, nothing is read: only the placement's blocker
  const offline = await plan({ dir: f.p.dir, ...f.deps, dockerEndpoint, offline: true });
  assert.deepEqual(offline.plan.blockers.map((b) => b.code), ["BLOCKED_INSTANCES_UNSUPPORTED"]);
});
