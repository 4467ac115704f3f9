// `sluice restart MODEL` (issue 18 item 3) on a file-backed fake world, each command its own OS
// process as an operator runs it: a runner stopped (143) or killed (137) by someone else comes
// back as the same generation, recorded in the audit first; running it again is a no-op; each
// rule blocks with its own code and changes nothing.
import assert from "node:assert/strict";
import { createdStarter } from "../../testing/ways/fake_project.ts";
import { order } from "../../testing/ways/replacement_fixture.ts";
import { historyEvents, readState } from "../../testing/sweep/reads.ts";

const MODEL = "eligible_orders";
const REASON = "stopped during the host's maintenance";

async function runningStarter(seed: string) {
  const f = await createdStarter(seed);
  f.world.control.produce(f.p.inputTopic, [order("a1", 150), order("a2", 250), order("a3", 50)]);
  const applicationId = f.applicationId;
  const name = `sluice-${applicationId.replace(/^sluice-/, "")}`;
  const events = async () =>
    historyEvents(
      await readState({ backend: "local", dir: `${f.p.dir}/.sluice/state`, project: f.p.name }),
    );
  const restart = (extra: string[] = [], env: Record<string, string> = {}) =>
    f.cli(
      ["-o", "json", "restart", MODEL, "--project", f.p.dir, "--reason", REASON, ...extra],
      env,
    );
  /** The group's committed offsets, decimal strings by partition. */
  const committed = async () =>
    Object.fromEntries(
      [...await f.deps.kafka.committedOffsets(applicationId, f.p.inputTopic)].map((
        [p, o],
      ) => [String(p), o.toString()]),
    );
  return Object.assign(f, { applicationId, name, events, restart, committed });
}

type Restarted = {
  container: string;
  container_id: string;
  generation: string;
  event_id: string;
  recorded_now: boolean;
  started_now: boolean;
  waited_for_group: boolean;
  committed: Record<string, string>;
  stop: { exit_code: number; kind: string; killed: boolean; runner_reason: string | null };
};

Deno.test("a runner stopped with docker stop (143) is started again as the same generation, recorded first; the same command again changes nothing", async () => {
  await using f = await runningStarter("restart-term");
  // processed what was produced, then stopped by someone else (TERM: a clean close)
  assert.equal((await f.cli(["-o", "json", "status", "--project", f.p.dir])).code, 0);
  await f.deps.docker.signalTerm(f.name);
  const stopped = f.world.control.container(f.name)!;
  assert.equal(stopped.state.running, false);
  assert.equal(stopped.state.exit_code, 143);
  const blocked = await f.cli(["-o", "json", "plan", "--project", f.p.dir]);
  assert.equal(blocked.json().errors[0].code, "BLOCKED_RUNNER_NOT_RUNNING");
  const before = await f.committed();
  const eventsBefore = (await f.events()).length;

  const r = await f.restart();
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const data = r.json().data as unknown as Restarted;
  assert.equal(data.container, f.name);
  assert.equal(data.container_id, stopped.id, "the same container: the same generation");
  assert.equal(data.stop.exit_code, 143);
  assert.equal(data.stop.kind, "closed");
  assert.equal(data.stop.killed, false);
  assert.equal(data.stop.runner_reason, "SIGTERM");
  assert.equal(data.recorded_now, true);
  assert.equal(data.started_now, true);
  assert.equal(data.waited_for_group, false);
  assert.deepEqual(data.committed, before);
  const after = f.world.control.container(f.name)!;
  assert.equal(after.state.running, true);
  assert.equal(after.id, stopped.id);

  // the audit: exactly one event, before the start, naming the exact stop
  const events = await f.events();
  assert.equal(events.length, eventsBefore + 1);
  const e = events.at(-1)!;
  assert.equal(e.kind, "runner_restarted");
  assert.equal(e.event_id, data.event_id);
  assert.equal(e.reason, REASON);
  assert.equal(e.model, MODEL);
  const container = e.container as Record<string, unknown>;
  assert.equal(container.id, stopped.id);
  assert.equal(container.exit_code, 143);
  assert.equal(container.finished_at, stopped.state.finished_at);
  assert.equal(container.generation, data.generation);
  assert.deepEqual(e.committed, before);
  const start = f.world.control.mutations().filter((m) => m.op === "startContainer").at(-1)!;
  assert.ok(
    Date.parse(e.recorded_at as string) <= Date.parse(start.at),
    "the audit is recorded before the start",
  );

  // the same command again: done, nothing recorded or started
  const again = await f.restart();
  assert.equal(again.code, 0, again.stdout + again.stderr);
  const second = again.json().data as unknown as Restarted;
  assert.equal(second.event_id, data.event_id);
  assert.equal(second.recorded_now, false);
  assert.equal(second.started_now, false);
  assert.equal((await f.events()).length, eventsBefore + 1);

  // the project is whole again: a no-op plan, and new records are processed
  const planned = await f.cli(["-o", "json", "plan", "--project", f.p.dir]);
  assert.equal(planned.code, 0, planned.stdout + planned.stderr);
  f.world.control.produce(f.p.inputTopic, [order("b1", 300)]);
  const status = (await f.cli(["-o", "json", "status", "--project", f.p.dir])).json();
  const row = (status.data!.models as Array<{ healthy: boolean }>)[0];
  assert.equal(row.healthy, true);

  // the text form says what happened
  await f.deps.docker.signalTerm(f.name);
  const text = await f.cli(["restart", MODEL, "--project", f.p.dir, "--reason", REASON]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    new RegExp(`${MODEL}: ${f.name} .* stopped \\(exit 143, closed\\) is running again\\.`),
  );
  assert.match(text.stdout, /restart [0-9a-f-]{36} recorded in the audit/);
});

Deno.test("a runner killed with docker kill (137) is reported as a kill, and started only after its member left the group", async () => {
  await using f = await runningStarter("restart-kill");
  await f.cli(["-o", "json", "status", "--project", f.p.dir]);
  f.world.control.killContainer(f.name);
  const group = await f.deps.kafka.describeGroup(f.applicationId);
  assert.equal(group.members.length, 1, "the dead member lingers until the session timeout");

  const r = await f.restart();
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const data = r.json().data as unknown as Restarted;
  assert.equal(data.stop.exit_code, 137);
  assert.equal(data.stop.kind, "killed");
  assert.equal(data.stop.killed, true);
  assert.equal(data.waited_for_group, true);
  const e = (await f.events()).at(-1)!;
  assert.equal(e.kind, "runner_restarted");
  assert.equal(e.waited_for_group, true);
  assert.equal(e.group_state, "Empty");
  // recorded (and so started) only once the session timeout had passed since the kill
  const killedAt = Date.parse((e.container as { finished_at: string }).finished_at);
  assert.ok(Date.parse(e.recorded_at as string) - killedAt >= 45_000, "waited out the session");
  assert.equal(f.world.control.container(f.name)!.state.running, true);
});

Deno.test("restart blockers: each names what it found, records nothing and starts nothing", async (t) => {
  await using f = await runningStarter("restart-blockers");
  await f.cli(["-o", "json", "status", "--project", f.p.dir]);
  const unchanged = async (code: string, extra: string[] = []) => {
    const n = (await f.events()).length;
    const running = f.world.control.container(f.name)!.state.running;
    const r = await f.restart(extra);
    assert.equal(r.code, 4, r.stdout + r.stderr);
    const err = r.json().errors[0] as { code: string; message: string };
    assert.equal(err.code, code, err.message);
    assert.equal((await f.events()).length, n, "nothing recorded");
    assert.equal(f.world.control.container(f.name)!.state.running, running, "nothing started");
    return err.message;
  };

  await t.step("a running runner never stopped: nothing to restart", async () => {
    const m = await unchanged("BLOCKED_RUNNER_RUNNING");
    assert.match(m, /is running: there is nothing to restart$/);
  });

  await t.step(
    "a runner started again by hand after its stop: named as started outside sluice",
    async () => {
      await f.deps.docker.signalTerm(f.name);
      await f.deps.docker.startContainer(f.name);
      const m = await unchanged("BLOCKED_RUNNER_RUNNING");
      assert.match(
        m,
        /started again outside sluice after its stop at \S+, and no restart of that stop is recorded$/,
      );
    },
  );

  await t.step("someone else consumes with the group while the runner is stopped", async () => {
    await f.deps.docker.signalTerm(f.name);
    const member = f.world.control.joinGroup(f.applicationId, "someone-else");
    await unchanged("BLOCKED_GROUP_ACTIVE");
    f.world.control.leaveGroup(f.applicationId, member);
  });

  await t.step("a missing reason is a usage error", async () => {
    const r = await f.cli(["-o", "json", "restart", MODEL, "--project", f.p.dir, "--reason", " "]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.equal(r.json().errors[0].code, "USAGE_REASON");
  });

  await t.step("an unknown model", async () => {
    const r = await f.cli([
      "-o",
      "json",
      "restart",
      "nope",
      "--project",
      f.p.dir,
      "--reason",
      REASON,
    ]);
    assert.equal(r.json().errors[0].code, "PROJECT_MODEL_NOT_FOUND");
  });

  await t.step(
    "a decode failure: a restart stops at the same record; the way out is skip-record",
    async () => {
      const ok = await f.restart();
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      const [bad] = f.world.control.produce(f.p.inputTopic, [{
        key: "k9",
        value: JSON.stringify({ order_id: "x", amount: "lots", paid: true, customer: null }),
      }]);
      await f.cli(["-o", "json", "status", "--project", f.p.dir]);
      assert.equal(f.world.control.container(f.name)!.state.exit_code, 13);
      const m = await unchanged("BLOCKED_POISON_RECORD");
      assert.match(m, new RegExp(`--offset ${bad} --reason TEXT`));
      assert.match(m, /sluice skip-record eligible_orders --partition \d+/);
    },
  );

  await t.step("a decode failure whose offset was moved by hand while stopped", async () => {
    const st = f.world.control.runnerStatus(f.name) as {
      stop: { record: { partition: number; offset: number } };
    };
    const { partition, offset } = st.stop.record;
    await f.deps.kafka.setGroupOffsets(
      f.applicationId,
      f.p.inputTopic,
      new Map([[partition, BigInt(offset) + 1n]]),
    );
    const m = await unchanged("BLOCKED_OFFSETS_MOVED");
    assert.match(
      m,
      new RegExp(`is ${offset + 1}, not ${offset} \\(the record the runner stopped at\\)`),
    );
  });
});

Deno.test("an exit the same generation repeats is refused (its mounted plan refused, exit 11)", async () => {
  await using f = await runningStarter("restart-repeat");
  await f.cli(["-o", "json", "status", "--project", f.p.dir]);
  f.world.control.crashContainer(f.name, { code: 11, reason: "PLAN_SHA256_MISMATCH" });
  const r = await f.restart();
  assert.equal(r.code, 4, r.stdout + r.stderr);
  assert.equal(r.json().errors[0].code, "BLOCKED_RESTART_WOULD_FAIL");
  assert.equal(f.world.control.container(f.name)!.state.running, false);
});

Deno.test("a restart killed after its audit record and before the start is finished by the same command", async () => {
  await using f = await runningStarter("restart-kill-site");
  await f.cli(["-o", "json", "status", "--project", f.p.dir]);
  await f.deps.docker.signalTerm(f.name);
  const n = (await f.events()).length;
  const killed = await f.restart([], {
    SLUICE_TEST_ONLY_ALLOW_FAULTS: "1",
    SLUICE_FAULT_POINT: "docker.start_stopped:before",
  });
  assert.equal(killed.signal, "SIGKILL", killed.stdout + killed.stderr);
  assert.equal((await f.events()).length, n + 1, "recorded");
  assert.equal(f.world.control.container(f.name)!.state.running, false, "not started");
  const show = (await f.cli(["-o", "json", "state", "show", "--project", f.p.dir])).json();
  const lock = (show.data!.lock as { holder: { lock_id: string } }).holder.lock_id;
  const done = await f.restart(["--break-stale-lock", lock]);
  assert.equal(done.code, 0, done.stdout + done.stderr);
  const data = done.json().data as unknown as Restarted;
  assert.equal(data.recorded_now, false);
  assert.equal(data.started_now, true);
  assert.equal((await f.events()).length, n + 1, "one record for one stop");
  assert.equal(f.world.control.container(f.name)!.state.running, true);
});
