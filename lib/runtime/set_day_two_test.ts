// The day-two commands on a set (issue 31): a set of two over two daemons (east, the world's
// default daemon, and west, a daemon added to the world), created by its create journey. `restart`
// brings back a stopped instance on its own daemon (the set's other members stay in the group);
// `skip-record` moves past a record every instance stopped at, with the whole set stopped, and
// `restart` brings back the others past the same skip. Each command is its own OS process on the
// file-backed fake world, read afterwards by independent means (the worlds' daemons, the state
// files, `status`).
import assert from "node:assert/strict";
import {
  containersOn,
  createdSetOfTwo,
  localState,
  SETS_OPEN,
} from "../../testing/ways/fake_project.ts";
import { order } from "../../testing/ways/replacement_fixture.ts";
import type { WorldConfig } from "../../testing/fakes/world.ts";

const OPEN = SETS_OPEN;

Deno.test("a set's instance killed from outside is started again by restart on its own daemon, audited with its index; the set is one group again", async () => {
  await using f = await createdSetOfTwo("set-restart");
  const restart = (extra: string[] = []) =>
    f.cli([
      "-o",
      "json",
      "restart",
      "eligible_orders",
      "--reason",
      "the west host was rebooted",
      "--project",
      f.p.dir,
      ...extra,
    ], OPEN);
  // instance 1 killed on west (137, its member stays until the session times out)
  const [one] = containersOn(f, "west", f.app);
  f.world.endpoint("west").control.killContainer(one);
  assert.equal(f.world.control.container(one), null, "not on east");
  // an instance the set does not have is a usage error
  const none = await restart(["--instance", "2"]);
  assert.equal(none.code, 2, none.stdout + none.stderr);
  assert.equal(none.json().errors[0].code, "USAGE_INSTANCE");

  const done = await restart();
  assert.equal(done.code, 0, done.stdout + done.stderr);
  const r = done.json().data! as {
    instance: { index: number; endpoint: string; still_stopped: number[] };
    container: string;
    waited_for_group: boolean;
    stop: { exit_code: number; killed: boolean };
  };
  assert.deepEqual(r.instance, { index: 1, endpoint: "west", still_stopped: [] });
  assert.equal(r.container, one);
  assert.deepEqual([r.stop.exit_code, r.stop.killed], [137, true]);
  assert.equal(r.waited_for_group, true, "its killed member left the group first");
  // independent reads: running on west, the audit names the instance, one group of two again
  assert.equal(f.world.endpoint("west").control.container(one)!.state.running, true);
  const event = (await localState(f)).history.events.find((e) => e.kind === "runner_restarted");
  assert.ok(event && event.kind === "runner_restarted");
  assert.deepEqual([event.instance, event.endpoint, event.container.name], [1, "west", one]);
  const status = await f.cli(["-o", "json", "status", "--project", f.p.dir], OPEN);
  const model = (status.json().data!.models as Array<{ healthy: boolean }>)[0];
  assert.equal(model.healthy, true, status.stdout);
  // nothing stopped now: the same command names the instance running (the restart is done)
  const again = await restart(["--instance", "0"]);
  assert.equal(again.code, 4, again.stdout + again.stderr);
  assert.match(again.stdout, /BLOCKED_RUNNER_RUNNING/);
  const finished = await restart();
  assert.equal(finished.code, 0, finished.stdout + finished.stderr);
  assert.equal(finished.json().data!.started_now, false, "an earlier run had started it");
});

/**
 * A created set of two that met a record it cannot decode: every instance stopped at it (its
 * partition reaches each in turn, exit 13), the record as `status` names it, and `skip-record`
 * of it through the CLI.
 */
async function stoppedAtBadRecord(seed: string, config: Partial<WorldConfig> = {}) {
  const f = await createdSetOfTwo(seed, { config });
  f.world.control.produce(f.p.inputTopic, [order("a1", 150)]);
  f.world.control.produce(f.p.inputTopic, [{
    key: "bad",
    value: JSON.stringify({ order_id: "x", amount: "lots", paid: true, customer: null }),
  }]);
  f.world.control.produce(f.p.inputTopic, [order("b1", 300)]);
  f.world.control.advanceClock(30_000);
  const [zero] = containersOn(f, "east", f.app);
  const [one] = containersOn(f, "west", f.app);
  const stopped = () =>
    [f.world.control.container(zero)!, f.world.endpoint("west").control.container(one)!]
      .map((c) => [c.state.running, c.state.exit_code]);
  assert.deepEqual(stopped(), [[false, 13], [false, 13]]);
  const status = (await f.cli(["-o", "json", "status", "--project", f.p.dir], OPEN)).json();
  const rec = (status.data!.models as Array<{
    instances: Array<{ stop: { runner: { record: { partition: number; offset: number } } } }>;
  }>)[0].instances[0].stop.runner.record;
  const skip = () =>
    f.cli([
      "-o",
      "json",
      "skip-record",
      "eligible_orders",
      "--partition",
      String(rec.partition),
      "--offset",
      String(rec.offset),
      "--reason",
      "a test order with a text amount",
      "--project",
      f.p.dir,
    ], OPEN);
  return Object.assign(f, { zero, one, stopped, skip });
}

Deno.test("a set stopped at a record it cannot decode is moved past it by skip-record, once, and each instance is started again", async () => {
  await using f = await stoppedAtBadRecord("set-skip");
  const { stopped, skip } = f;
  const skipped = await skip();
  assert.equal(skipped.code, 0, skipped.stdout + skipped.stderr);
  const r = skipped.json().data! as {
    moved_now: boolean;
    restart: { instance: { index: number; still_stopped: number[] }; after_skip: string };
    event_id: string;
  };
  assert.equal(r.moved_now, true);
  assert.deepEqual(r.restart.instance.index, 0);
  assert.deepEqual(r.restart.instance.still_stopped, [1]);
  assert.equal(r.restart.after_skip, r.event_id);
  // the group's offset of that partition moved by exactly one, once
  const moves = f.world.control.mutations().filter((m) => m.op === "setGroupOffsets");
  assert.equal(moves.length, 2, "the create's positioning and the skip's one move");

  // instance 1 stopped at the same record: restart brings it back past the same skip
  const back = await f.cli([
    "-o",
    "json",
    "restart",
    "eligible_orders",
    "--reason",
    "past the skipped record",
    "--project",
    f.p.dir,
  ], OPEN);
  assert.equal(back.code, 0, back.stdout + back.stderr);
  const b = back.json().data! as { instance: { index: number }; after_skip: string };
  assert.deepEqual([b.instance.index, b.after_skip], [1, r.event_id]);
  f.world.control.advanceClock(5_000);
  assert.deepEqual(stopped().map(([running]) => running), [true, true], "both run again");
  const events = (await localState(f)).history.events;
  assert.deepEqual(
    events.filter((e) => e.kind === "record_skipped" || e.kind === "runner_restarted")
      .map((e) => [e.kind, e.kind === "runner_restarted" ? e.instance : null]),
    [["record_skipped", null], ["runner_restarted", 0], ["runner_restarted", 1]],
  );
  // the same skip again: done, nothing moved twice
  const again = await skip();
  assert.equal(again.code, 0, again.stdout + again.stderr);
  assert.equal(again.json().data!.moved_now, false);
  assert.equal(f.world.control.mutations().filter((m) => m.op === "setGroupOffsets").length, 2);
});

Deno.test("skip-record of a set refuses while an instance runs: the group's offset moves only with every instance stopped", async () => {
  // a runner takes 20 s of world time to start: one started by hand still runs when skip reads
  await using f = await stoppedAtBadRecord("set-skip-held", { runner_startup_ms: 20_000 });
  const seq = f.world.control.mutations().at(-1)!.seq;
  await f.world.endpoint("west").docker.startContainer(f.one);
  const held = await f.skip();
  assert.equal(held.code, 4, held.stdout + held.stderr);
  const error = held.json().errors[0];
  assert.equal(error.code, "BLOCKED_GROUP_ACTIVE");
  assert.match(error.message, /instance 1 still run/);
  assert.deepEqual(
    f.world.control.mutations().filter((m) => m.seq > seq && m.op === "setGroupOffsets"),
    [],
    "nothing moved",
  );
  assert.equal(
    (await localState(f)).history.events.some((e) => e.kind === "record_skipped"),
    false,
    "nothing recorded",
  );
});
