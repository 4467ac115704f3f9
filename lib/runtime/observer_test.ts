// The observer's fixed execution options (issue 26 item 5): a runner's stop timeout is the
// pinned one, and its entrypoint and command are its image's (sluice never overrides them); its
// environment is the image's plus sluice's two variables, and its mounts are exactly the plan
// (bound read-only) and the state volume.
// A runner applied on a fake world, then changed as a container re-created by hand would be;
// what the observer reports, and the blocker the planner gives for it.
import assert from "node:assert/strict";
import { apply, plan } from "./session.ts";
import { CONSISTENT_READS, observeRunner } from "./observer.ts";
import { LABEL, RUNNER_ENV, RUNNER_EXECUTION, RUNNER_PATHS } from "./labels.ts";
import type { ContainerInfo } from "../providers/docker/port.ts";
import { checkGeneration } from "../validation/runner_checks.ts";
import type { RunnerTarget } from "../validation/observation.ts";
import { fakeProject } from "../../testing/ways/fake_project.ts";
import type { FakeProject } from "../../testing/ways/fake_project.ts";
import type { ContainerOptions } from "../../testing/fakes/control.ts";
import type { FakeContainer } from "../../testing/fakes/world.ts";

/** A fake project with its runner applied: the container's name and its target. */
async function applied(f: FakeProject): Promise<{ name: string; target: RunnerTarget }> {
  const created = await plan({ dir: f.p.dir, ...f.deps });
  const done = await apply({
    dir: f.p.dir,
    plan: created.plan,
    planSha256: created.sha256,
    ...f.deps,
  });
  const applicationId = done.runners[0].application_id;
  const [c] = await f.deps.docker.listContainers(LABEL.applicationId, applicationId);
  return { name: c.name, target: created.observation!.runners[0].target };
}

/**
 * The execution problems of the runner's container after `change` (or the change made of the
 * container as the fake keeps it).
 */
async function problemsAfter(
  seed: string,
  change: ContainerOptions | ((c: FakeContainer) => ContainerOptions) | null,
) {
  await using f = await fakeProject(seed);
  const { name, target } = await applied(f);
  const before = await observeRunner(f.deps, target);
  assert.deepEqual(before.containers[0].execution, { ok: true, problems: [] });
  assert.deepEqual(before.containers[0].environment, { ok: true, unexpected: [], missing: [] });
  if (typeof change === "function") {
    f.world.control.reconfigureContainer(name, change(f.world.control.container(name)!));
  } else if (change) f.world.control.reconfigureContainer(name, change);
  const obs = await observeRunner(f.deps, target);
  const c = obs.containers[0];
  const image = f.world.control.snapshot().docker.images[target.image];
  return { c, image, artifact: c.labels.artifactSha256! };
}

/** The blocker codes the generation check gives for a container's evidence. */
const codesOf = (r: Awaited<ReturnType<typeof problemsAfter>>) =>
  checkGeneration(r.c, r.artifact, null).map((b) => b.code);

Deno.test("observer: a runner as sluice created it has no execution problem", async () => {
  const r = await problemsAfter("observer-exec-ok", null);
  assert.deepEqual(r.c.execution, { ok: true, problems: [] });
  assert.deepEqual(codesOf(r), []);
});

Deno.test("observer: a stop timeout other than the pinned one is execution drift", async () => {
  const r = await problemsAfter("observer-exec-stop", {
    stop_timeout: RUNNER_EXECUTION.stopTimeoutSeconds - 20,
  });
  assert.equal(r.c.execution.ok, false);
  assert.deepEqual(r.c.execution.problems, [
    `stop timeout 10 s is not ${RUNNER_EXECUTION.stopTimeoutSeconds} s`,
  ]);
  assert.deepEqual(codesOf(r), ["BLOCKED_EXECUTION_DRIFT"]);
});

Deno.test("observer: a runner without a stop timeout (Docker's default) is execution drift", async () => {
  const r = await problemsAfter("observer-exec-nostop", { stop_timeout: null });
  assert.deepEqual(r.c.execution.problems, [
    `stop timeout unset is not ${RUNNER_EXECUTION.stopTimeoutSeconds} s`,
  ]);
  assert.deepEqual(codesOf(r), ["BLOCKED_EXECUTION_DRIFT"]);
});

Deno.test("observer: an entrypoint other than the image's is execution drift (values not shown)", async () => {
  const r = await problemsAfter("observer-exec-entry", {
    entrypoint: ["sh", "-c", "exec java -Dsecret.token=hunter2 dev.sluice.runner.Main"],
  });
  assert.equal(r.c.execution.ok, false);
  assert.deepEqual(r.c.execution.problems, [
    `entrypoint differs from the pinned image's at argument 0 (3 arguments, the image's has ${r.image.entrypoint.length})`,
  ]);
  assert.ok(!JSON.stringify(r.c.execution).includes("hunter2"), "no argument is shown");
  assert.deepEqual(codesOf(r), ["BLOCKED_EXECUTION_DRIFT"]);
});

Deno.test("observer: a command other than the image's is execution drift, even only appended to", async () => {
  const r = await problemsAfter("observer-exec-cmd", { cmd: ["run", "--skip-checks"] });
  assert.deepEqual(r.image.cmd, ["run"], "the fake runner image's command");
  assert.deepEqual(r.c.execution.problems, [
    "cmd differs from the pinned image's at argument 1 (2 arguments, the image's has 1)",
  ]);
  assert.deepEqual(codesOf(r), ["BLOCKED_EXECUTION_DRIFT"]);
});

Deno.test("observer: a command removed (the image's has one) is execution drift", async () => {
  const r = await problemsAfter("observer-exec-nocmd", { cmd: [] });
  assert.deepEqual(r.c.execution.problems, [
    "cmd differs from the pinned image's at argument 0 (0 arguments, the image's has 1)",
  ]);
});

Deno.test("plan: a runner whose stop timeout was changed by hand is refused with BLOCKED_EXECUTION_DRIFT", async () => {
  await using f = await fakeProject("plan-exec-stop");
  const { name } = await applied(f);
  const clean = await plan({ dir: f.p.dir, ...f.deps });
  assert.deepEqual(clean.plan.blockers, []);
  assert.equal(clean.noop, true);

  f.world.control.reconfigureContainer(name, { stop_timeout: 5 });
  const drifted = await plan({ dir: f.p.dir, ...f.deps });
  assert.equal(drifted.noop, false, "never a silent no-op");
  assert.deepEqual(drifted.plan.actions, []);
  const exec = drifted.plan.blockers.filter((b) => b.code === "BLOCKED_EXECUTION_DRIFT");
  assert.equal(exec.length, 1, JSON.stringify(drifted.plan.blockers));
  assert.match(exec[0].message, /stop timeout 5 s is not 30 s/);
});

Deno.test("plan: a runner whose entrypoint or command was changed by hand is refused with BLOCKED_EXECUTION_DRIFT", async () => {
  await using f = await fakeProject("plan-exec-cmd");
  const { name } = await applied(f);
  f.world.control.reconfigureContainer(name, { cmd: ["sh"] });
  const cmd = await plan({ dir: f.p.dir, ...f.deps });
  assert.deepEqual(cmd.plan.actions, []);
  assert.deepEqual(
    cmd.plan.blockers.filter((b) => b.code === "BLOCKED_EXECUTION_DRIFT").map((b) => b.message)
      .filter((m) => /cmd differs/.test(m)).length,
    1,
    JSON.stringify(cmd.plan.blockers),
  );
  f.world.control.reconfigureContainer(name, { cmd: ["run"], entrypoint: ["sh"] });
  const entry = await plan({ dir: f.p.dir, ...f.deps });
  assert.deepEqual(
    entry.plan.blockers.map((b) => b.code),
    ["BLOCKED_EXECUTION_DRIFT"],
    JSON.stringify(entry.plan.blockers),
  );
  assert.match(entry.plan.blockers[0].message, /entrypoint differs/);
});

Deno.test("observer: with the pinned image absent, the entrypoint is unverifiable (no comparison)", async () => {
  await using f = await fakeProject("observer-exec-noimage");
  const { target } = await applied(f);
  const absent = `sha256:${"0".repeat(64)}`;
  const obs = await observeRunner(f.deps, { ...target, image: absent });
  assert.equal(obs.image, null);
  assert.deepEqual(obs.containers[0].execution.problems, [
    `image ${target.image} is not the pinned ${absent}`,
    "image absent: entrypoint unverifiable",
  ]);
});

Deno.test("observer: the observation's image stays its ID and environment", async () => {
  await using f = await fakeProject("observer-exec-image");
  const { target } = await applied(f);
  const obs = await observeRunner(f.deps, target);
  assert.deepEqual(Object.keys(obs.image ?? {}), ["id", "env"]);
});

/** The project's Docker port, whose inspects after the listing report `state(n)` (n: 1, 2, …). */
function inspectedAs(
  docker: FakeProject["deps"]["docker"],
  state: (n: number) => Partial<ContainerInfo["state"]>,
) {
  let n = 0;
  const reads: string[] = [];
  const port = new Proxy(docker, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      if (prop === "readContainerFile") {
        return (id: string, path: string) => {
          reads.push(path);
          return v.call(target, id, path);
        };
      }
      if (prop !== "inspectContainer") return v.bind(target);
      return async (id: string) => {
        const c = await v.call(target, id) as ContainerInfo | null;
        return c && { ...c, state: { ...c.state, ...state(++n) } };
      };
    },
  });
  return { port, reads, inspects: () => n };
}

Deno.test("observer: a process that changed while its status file was read is read again, from the new inspect", async () => {
  await using f = await fakeProject("observer-reread-once");
  const { target } = await applied(f);
  const exited = { status: "exited", running: false, exitCode: 143 } as const;
  const { port, reads, inspects } = inspectedAs(
    f.deps.docker,
    () => ({ ...exited, finishedAt: "2026-12-06T01:00:00Z" }),
  );
  const obs = await observeRunner({ ...f.deps, docker: port }, target);
  const c = obs.containers[0];
  // the listing said running; the inspect after the first read said exited: read again from it
  assert.equal(c.status, "exited");
  assert.equal(c.exitCode, 143);
  assert.equal(inspects(), 2);
  assert.equal(reads.filter((p) => p === RUNNER_PATHS.statusFile).length, 2);
  assert.notEqual(c.runnerStatus, null);
});

Deno.test("observer: a process that changes on every read gives an unreadable status, never a stale one", async () => {
  await using f = await fakeProject("observer-reread-always");
  const { target } = await applied(f);
  const { port, inspects } = inspectedAs(
    f.deps.docker,
    (n) => ({ startedAt: `2026-12-06T01:00:0${n}Z` }),
  );
  const obs = await observeRunner({ ...f.deps, docker: port }, target);
  assert.equal(inspects(), CONSISTENT_READS);
  assert.deepEqual(obs.containers[0].runnerStatus, {
    unreadable: true,
    reason:
      `the container's process changed while its status file was read, ${CONSISTENT_READS} times`,
  });
});

Deno.test("observer: a steady process costs one inspect after its files, and its status is read once", async () => {
  await using f = await fakeProject("observer-reread-steady");
  const { target } = await applied(f);
  const { port, reads, inspects } = inspectedAs(f.deps.docker, () => ({}));
  const obs = await observeRunner({ ...f.deps, docker: port }, target);
  assert.equal(inspects(), 1);
  assert.equal(reads.filter((p) => p === RUNNER_PATHS.statusFile).length, 1);
  assert.equal(obs.containers[0].running, true);
});

Deno.test("observer: a memory limit or restart policy other than the pinned one is execution drift", async () => {
  const memory = await problemsAfter("observer-exec-memory", {
    memory: RUNNER_EXECUTION.memoryBytes * 2,
  });
  assert.deepEqual(memory.c.execution.problems, [
    `memory limit ${RUNNER_EXECUTION.memoryBytes * 2}`,
  ]);
  assert.deepEqual(codesOf(memory), ["BLOCKED_EXECUTION_DRIFT"]);
  const restart = await problemsAfter("observer-exec-restart", { restart_policy: "always" });
  assert.deepEqual(restart.c.execution.problems, ["restart policy always"]);
  assert.deepEqual(codesOf(restart), ["BLOCKED_EXECUTION_DRIFT"]);
});

Deno.test("observer: a variable added to the environment is environment drift (values not shown)", async () => {
  const r = await problemsAfter("observer-env-added", (c) => ({
    env: [...c.env, "DEBUG_TOKEN=hunter2"],
  }));
  assert.deepEqual(r.c.execution, { ok: true, problems: [] }, "environment only");
  assert.equal(r.c.environment.ok, false);
  assert.deepEqual(r.c.environment.missing, []);
  assert.equal(r.c.environment.unexpected.length, 1);
  assert.match(r.c.environment.unexpected[0], /^DEBUG_TOKEN=/);
  const blockers = checkGeneration(r.c, r.artifact, null);
  assert.deepEqual(blockers.map((b) => b.code), ["BLOCKED_ENVIRONMENT_DRIFT"]);
  assert.deepEqual(blockers[0].evidence, {
    unexpected: ["DEBUG_TOKEN=<redacted>"],
    missing: [],
  });
  assert.ok(!JSON.stringify([r.c.environment, blockers]).includes("hunter2"), "no value shown");
});

Deno.test("observer: a sluice variable changed, or an image variable removed, is environment drift", async () => {
  const generation = await problemsAfter("observer-env-generation", (c) => ({
    env: c.env.map((e) =>
      e.startsWith(`${RUNNER_ENV.generation}=`) ? `${RUNNER_ENV.generation}=another` : e
    ),
  }));
  assert.equal(generation.c.environment.ok, false);
  assert.equal(generation.c.environment.unexpected.length, 1);
  assert.equal(generation.c.environment.missing.length, 1);
  assert.match(generation.c.environment.missing[0], new RegExp(`^${RUNNER_ENV.generation}=`));
  assert.deepEqual(codesOf(generation), ["BLOCKED_ENVIRONMENT_DRIFT"]);

  const removed = await problemsAfter("observer-env-removed", (c) => {
    const own = new Set(Object.values(RUNNER_ENV).map((k) => `${k}=`));
    const imageVar = c.env.find((e) => ![...own].some((k) => e.startsWith(k)));
    assert.ok(imageVar, `the runner image sets a variable of its own: ${c.env.length} variables`);
    return { env: c.env.filter((e) => e !== imageVar) };
  });
  assert.equal(removed.c.environment.ok, false);
  assert.deepEqual(removed.c.environment.unexpected, []);
  assert.equal(removed.c.environment.missing.length, 1);
  assert.deepEqual(codesOf(removed), ["BLOCKED_ENVIRONMENT_DRIFT"]);
});

Deno.test("observer: the state volume mounted as another type, or a mount added, is execution drift", async () => {
  const retyped = await problemsAfter("observer-mount-type", (c) => ({
    mounts: c.mounts.map((m) =>
      m.destination === RUNNER_PATHS.volume ? { ...m, type: "bind" as const } : m
    ),
  }));
  assert.deepEqual(retyped.c.execution.problems, [
    `volume ${
      retyped.c.mounts.find((m) => m.destination === RUNNER_PATHS.volume)!.source
    } is not mounted at ${RUNNER_PATHS.volume}`,
  ]);
  assert.deepEqual(codesOf(retyped), ["BLOCKED_EXECUTION_DRIFT"]);

  const writable = await problemsAfter("observer-mount-rw", (c) => ({
    mounts: c.mounts.map((m) =>
      m.destination === RUNNER_PATHS.plan ? { ...m, readOnly: false } : m
    ),
  }));
  assert.deepEqual(writable.c.execution.problems, [
    `plan is not bind-mounted read-only at ${RUNNER_PATHS.plan}`,
  ]);
  assert.deepEqual(codesOf(writable), ["BLOCKED_EXECUTION_DRIFT"]);

  const added = await problemsAfter("observer-mount-added", (c) => ({
    mounts: [...c.mounts, {
      type: "bind",
      source: "/srv/extra",
      destination: "/opt/extra",
      readOnly: true,
    }],
  }));
  assert.deepEqual(added.c.execution.problems, ["3 mounts instead of 2"]);
  assert.deepEqual(codesOf(added), ["BLOCKED_EXECUTION_DRIFT"]);
});

Deno.test("plan: a runner whose environment was changed by hand is refused with BLOCKED_ENVIRONMENT_DRIFT", async () => {
  await using f = await fakeProject("plan-env");
  const { name } = await applied(f);
  const clean = await plan({ dir: f.p.dir, ...f.deps });
  assert.deepEqual(clean.plan.blockers, []);
  assert.equal(clean.noop, true);
  const mutations = f.world.control.mutations().length;

  const env = f.world.control.container(name)!.env;
  f.world.control.reconfigureContainer(name, { env: [...env, "JAVA_TOOL_OPTIONS=-Xmx4g"] });
  const drifted = await plan({ dir: f.p.dir, ...f.deps });
  assert.equal(drifted.noop, false, "never a silent no-op");
  assert.deepEqual(drifted.plan.actions, []);
  assert.deepEqual(
    drifted.plan.blockers.map((b) => b.code),
    ["BLOCKED_ENVIRONMENT_DRIFT"],
    JSON.stringify(drifted.plan.blockers),
  );
  assert.match(drifted.plan.blockers[0].message, /environment differs from the pinned image's/);
  // planning is read-only: the one mutation since is the test's own
  assert.deepEqual(
    f.world.control.mutations().slice(mutations).map((m) => m.op),
    ["reconfigureContainer"],
  );
});

Deno.test("plan: a runner whose mounts were changed by hand is refused with BLOCKED_EXECUTION_DRIFT", async () => {
  await using f = await fakeProject("plan-mounts");
  const { name } = await applied(f);
  const mounts = f.world.control.container(name)!.mounts;
  f.world.control.reconfigureContainer(name, {
    mounts: [...mounts, {
      type: "volume",
      source: "scratch",
      destination: "/tmp",
      readOnly: false,
    }],
  });
  const added = await plan({ dir: f.p.dir, ...f.deps });
  assert.equal(added.noop, false, "never a silent no-op");
  assert.deepEqual(added.plan.actions, []);
  assert.deepEqual(
    added.plan.blockers.map((b) => b.code),
    ["BLOCKED_EXECUTION_DRIFT"],
    JSON.stringify(added.plan.blockers),
  );
  assert.match(added.plan.blockers[0].message, /3 mounts instead of 2/);

  f.world.control.reconfigureContainer(name, {
    mounts: mounts.map((m) =>
      m.destination === RUNNER_PATHS.volume ? { ...m, type: "bind" as const } : m
    ),
  });
  const retyped = await plan({ dir: f.p.dir, ...f.deps });
  assert.deepEqual(retyped.plan.actions, []);
  const exec = retyped.plan.blockers.filter((b) => b.code === "BLOCKED_EXECUTION_DRIFT");
  assert.equal(exec.length, 1, JSON.stringify(retyped.plan.blockers));
  assert.match(exec[0].message, /is not mounted at \/var\/lib\/sluice/);
});

Deno.test("observer: a container the daemon reports running has started, even with a zero StartedAt (a daemon restarted mid-start restores it so)", async () => {
  await using f = await fakeProject("observer-running-zero-start");
  const { name, target } = await applied(f);
  assert.equal((await observeRunner(f.deps, target)).containers[0].everStarted, true);
  // as dockerd 20.10 restores a container whose task outlived it while its start was under way
  f.world.store.transact((w) => {
    const c = Object.values(w.docker.containers).find((x) => x.name === name)!;
    c.state.started_at = "0001-01-01T00:00:00Z";
  });
  const c = (await observeRunner(f.deps, target)).containers[0];
  assert.equal(c.running, true);
  assert.equal(c.startedAt, "0001-01-01T00:00:00Z");
  assert.equal(c.everStarted, true, "a running container is never 'never started'");
});
