// Taking a set down (issue 31): a set of two over two daemons (east, the world's default daemon,
// and west, a daemon added to the world), created by its create journey, is taken down by a
// destroy and by a declared runner removal. Each instance is bound on its endpoint, sent TERM,
// observed closed cleanly and removed in turn, the group's emptiness asked at the last one; the
// commit keeps one retained record with every instance's volume, and every volume stays on its
// daemon (--delete-data deletes each on its daemon); the set declared again resumes each
// instance's kept volume where it is, and the group's kept offsets. Killed by SIGKILL at each
// instance's steps, the same plan file continues. The set journeys are open only where
// SLUICE_TEST_ONLY_SETS=1 is set: closed, the plans are blocked.
import assert from "node:assert/strict";
import {
  containersOn,
  createdSetOfTwo,
  killedApply,
  localState,
  SETS_OPEN,
} from "../../testing/ways/fake_project.ts";
import { LABEL } from "./labels.ts";

const OPEN = SETS_OPEN;

type SetProject = Awaited<ReturnType<typeof createdSetOfTwo>>;

/** A plan file of `args` (`plan` options), written through the CLI with the set journeys open. */
async function planFile(f: SetProject, name: string, args: string[]): Promise<string[]> {
  const path = `${f.p.dir}/${name}.plan.json`;
  const out = await f.cli(["plan", "--project", f.p.dir, ...args, "--out", path], OPEN);
  assert.equal(out.code, 0, out.stdout + out.stderr);
  return ["-o", "json", "apply", "--project", f.p.dir, "--plan", path];
}

/**
 * The set is down, read by independent means: no container of it on either daemon, each
 * instance's volume kept on its own daemon with its instance label, the group without members,
 * ownership without the runner and one retained record with every instance's volume.
 */
async function assertTakenDown(f: SetProject, createdOwned: {
  instances?: Array<{ endpoint: string | null; volume: { name: string; instance_id: string } }>;
}) {
  assert.deepEqual(containersOn(f, "east", f.app), []);
  assert.deepEqual(containersOn(f, "west", f.app), []);
  for (const [n, daemon] of [[0, "east"], [1, "west"]] as const) {
    const v = createdOwned.instances![n].volume;
    const w = f.world.endpoint(daemon).control.snapshot();
    assert.equal(w.docker.volumes[v.name]?.labels[LABEL.volumeInstance], v.instance_id, daemon);
  }
  const groups = f.world.control.snapshot().kafka.groups;
  assert.deepEqual(groups[f.app]?.members ?? [], []);
  const snap = await localState(f);
  assert.equal(snap.control, null);
  const doc = snap.ownership!.document;
  assert.deepEqual(doc.runners.filter((r) => r.model === "eligible_orders"), []);
  const kept = doc.retained!.find((r) => r.model === "eligible_orders")!;
  assert.deepEqual(
    kept.instances!.map((i) => [i.instance, i.endpoint, i.volume]),
    createdOwned.instances!.map((i, n) => [n, i.endpoint, i.volume]),
  );
  assert.deepEqual(kept.volume, createdOwned.instances![0].volume);
}

Deno.test("a set is destroyed: each instance closed cleanly and removed on its daemon, every volume kept and recorded; closed, the plan is blocked", async () => {
  await using f = await createdSetOfTwo("set-destroy");
  const owned = (await localState(f)).ownership!.document.runners[0];

  // the set journeys closed: a destroy of a set is not offered
  const closed = await f.cli(["-o", "json", "plan", "--destroy", "--project", f.p.dir]);
  assert.equal(closed.code, 4, closed.stdout + closed.stderr);
  assert.deepEqual(
    (closed.json().data!.plan as { blockers: Array<{ code: string }> }).blockers.map((b) => b.code),
    ["BLOCKED_INSTANCES_UNSUPPORTED"],
  );

  // acknowledge-drift does not act on a set (the drift rule does not apply to one): refused
  // before anything is read or written; restart finds every instance running
  const ack = await f.cli(
    [
      "-o",
      "json",
      "acknowledge-drift",
      "eligible_orders",
      "--reason",
      "test",
      "--project",
      f.p.dir,
    ],
    OPEN,
  );
  assert.equal(ack.code, 4, ack.stdout + ack.stderr);
  assert.match(ack.stdout, /BLOCKED_INSTANCES_UNSUPPORTED/);
  const restart = await f.cli(
    ["-o", "json", "restart", "eligible_orders", "--reason", "test", "--project", f.p.dir],
    OPEN,
  );
  assert.equal(restart.code, 4, restart.stdout + restart.stderr);
  assert.match(restart.stdout, /BLOCKED_RUNNER_RUNNING/);

  const args = await planFile(f, "destroy", ["--destroy"]);
  const done = await f.cli(args, OPEN);
  assert.equal(done.code, 0, done.stdout + done.stderr);
  await assertTakenDown(f, owned);
  // TERM and removal per instance, each on its own daemon, instance 0 first
  const terms = f.world.control.mutations().filter((m) =>
    m.op === "signalTerm" || m.op === "removeContainer"
  ).map((m) => m.op);
  assert.deepEqual(terms, ["signalTerm", "removeContainer", "signalTerm", "removeContainer"]);

  // the same plan again: verified, nothing written
  const again = await f.cli(args, OPEN);
  assert.equal(again.code, 0, again.stdout + again.stderr);
});

Deno.test("a set's declared removal takes both instances down and keeps their volumes; declared again, each instance resumes its own", async () => {
  await using f = await createdSetOfTwo("set-removal", { spare: true });
  const owned = (await localState(f)).ownership!.document.runners
    .find((r) => r.model === "eligible_orders")!;
  const declared = await Deno.readTextFile(`${f.p.dir}/sluice.yaml`);
  // the model leaves the project as a declared removal (its reader now consumes the spare)
  await f.p.editManifest((t) =>
    t.replace(/^ {2}eligible_orders:\n(?: {4}.*\n| {6}.*\n)*/m, "")
      .replace(/consumes: eligible_orders$/m, "consumes: spare_orders") +
    "lifecycle:\n  runner_removals:\n    - model: eligible_orders\n"
  );
  const args = await planFile(f, "removal", []);
  const done = await f.cli(args, OPEN);
  assert.equal(done.code, 0, done.stdout + done.stderr);
  const removed = done.json().data!.removals as {
    removed: Array<{ instance: number; endpoint: string; exit_code: number }>;
  };
  assert.deepEqual(removed.removed.map((r) => [r.instance, r.endpoint]), [[0, "east"], [
    1,
    "west",
  ]]);
  assert.ok(removed.removed.every((r) => r.exit_code === 0 || r.exit_code === 143));
  await assertTakenDown(f, owned);
  const committed = f.world.control.snapshot().kafka.groups[f.app].offsets;

  // declared again as the same set: each instance resumes its kept volume on its own daemon and
  // the group its kept offsets (nothing repositions them)
  await f.p.editManifest(() => declared);
  const again = await planFile(f, "again", []);
  const shown = JSON.parse(
    await Deno.readTextFile(again[again.length - 1]),
  ) as {
    actions: Array<{ type: string; instances?: Array<{ resume?: { volume_kept: boolean } }> }>;
  };
  const create = shown.actions.find((a) => a.type === "create_runner")!;
  assert.deepEqual(create.instances!.map((i) => i.resume?.volume_kept), [true, true]);
  const before = f.world.control.mutations().length;
  const resumed = await f.cli(again, OPEN);
  assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
  const made = f.world.control.mutations().slice(before).map((m) => m.op);
  assert.ok(!made.includes("setGroupOffsets"), made.join(", "));
  assert.ok(!made.includes("createVolume"), made.join(", "));
  const doc = (await localState(f)).ownership!.document;
  const back = doc.runners.find((r) => r.model === "eligible_orders")!;
  assert.deepEqual(
    back.instances!.map((i) => [i.endpoint, i.volume]),
    owned.instances!.map((i) => [i.endpoint, i.volume]),
  );
  assert.equal(doc.retained?.find((r) => r.model === "eligible_orders"), undefined);
  assert.deepEqual(containersOn(f, "east", f.app), [f.app]);
  assert.deepEqual(containersOn(f, "west", f.app), [`${f.app}.1`]);
  // the group resumed from where the removal left it
  const now = f.world.control.snapshot().kafka.groups[f.app];
  assert.equal(now.members.length, 2);
  for (const [p, o] of Object.entries(committed[f.p.inputTopic] ?? {})) {
    assert.ok(BigInt(now.offsets[f.p.inputTopic][p]) >= BigInt(o), `partition ${p}`);
  }
});

Deno.test("a set's destroy --delete-data deletes every instance's volume on its own daemon, and the group", async () => {
  await using f = await createdSetOfTwo("set-destroy-data");
  const owned = (await localState(f)).ownership!.document.runners[0];
  const args = await planFile(f, "destroy", ["--destroy", "--delete-data"]);
  const done = await f.cli(args, OPEN);
  assert.equal(done.code, 0, done.stdout + done.stderr);
  assert.deepEqual(containersOn(f, "east", f.app), []);
  assert.deepEqual(containersOn(f, "west", f.app), []);
  for (const [n, daemon] of [[0, "east"], [1, "west"]] as const) {
    const w = f.world.endpoint(daemon).control.snapshot();
    assert.equal(w.docker.volumes[owned.instances![n].volume.name], undefined, daemon);
  }
  const removed = f.world.control.mutations().filter((m) => m.op === "removeOwnedVolume")
    .map((m) => m.key).sort();
  assert.deepEqual(removed, owned.instances!.map((i) => i.volume.name).sort());
  assert.equal(f.world.control.snapshot().kafka.groups[f.app], undefined);
  const doc = (await localState(f)).ownership!.document;
  assert.deepEqual([doc.runners, doc.retained ?? []], [[], []]);
});

Deno.test("a set's destroy is planned only on every instance read: a daemon down, or instance 0 gone, is named", async () => {
  await using f = await createdSetOfTwo("set-destroy-unread");
  const blockers = async () => {
    const out = await f.cli(["-o", "json", "plan", "--destroy", "--project", f.p.dir], OPEN);
    assert.equal(out.code, 4, out.stdout + out.stderr);
    return (out.json().data!.plan as { blockers: Array<{ code: string; message: string }> })
      .blockers;
  };
  // west does not answer: instance 1 is named with its endpoint
  f.world.control.setDaemonReachable("west", false);
  const down = await blockers();
  assert.deepEqual(down.map((b) => b.code), ["BLOCKED_ENDPOINT_UNREACHABLE"]);
  assert.match(
    down[0].message,
    /instance 1 on west could not be read \(its daemon did not answer\)/,
  );
  f.world.control.setDaemonReachable("west", true);
  // instance 0's container removed by hand: nothing says what the set runs
  const east = f.world.endpoint("east");
  east.control.killContainer(f.app);
  await east.docker.removeContainer((await east.docker.inspectContainer(f.app))!.id);
  const gone = await blockers();
  assert.deepEqual(gone.map((b) => b.code), ["BLOCKED_RUNNER_MISSING"]);
  assert.match(gone[0].message, new RegExp(`instance 0's container ${f.app} is gone`));
});

// each instance's steps are their own crossings of the destroy's runner sites: @1 is instance
// 0's, @2 instance 1's
const KILLS: Array<[string, "before" | "after", number]> = [
  ["docker.term_destroyed_runner", "after", 1],
  ["docker.remove_destroyed_runner", "after", 1],
  ["docker.term_destroyed_runner", "after", 2],
  ["docker.remove_destroyed_runner", "after", 2],
  ["state.commit_destroy", "after", 1],
];

for (const [site, side, n] of KILLS) {
  Deno.test(`a set's destroy killed at ${site}:${side}@${n} is continued by the same plan file`, async () => {
    await using f = await createdSetOfTwo(`set-destroy-${site}-${side}-${n}`);
    const owned = (await localState(f)).ownership!.document.runners[0];
    const args = await planFile(f, "destroy", ["--destroy"]);
    const { lockArgs } = await killedApply(f, args, `${site}:${side}@${n}`);
    const again = await f.cli([...args, ...lockArgs], OPEN);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    await assertTakenDown(f, owned);
  });
}
