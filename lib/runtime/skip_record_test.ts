// `sluice skip-record MODEL --partition P --offset O` (issue 18 item 2a) on a file-backed fake
// world, each command its own OS process: past a record the runner cannot decode, recorded
// first, exactly that partition moved by exactly one, the runner started again; each rule blocks
// with its own code and changes nothing.
import assert from "node:assert/strict";
import { createdStarter } from "../../testing/ways/fake_project.ts";
import { order } from "../../testing/ways/replacement_fixture.ts";
import { historyEvents, readState } from "../../testing/sweep/reads.ts";

const MODEL = "eligible_orders";
const REASON = "a test order with a text amount";

async function stoppedOnBadRecord(seed: string) {
  const f = await createdStarter(seed);
  const applicationId = f.applicationId;
  const name = `sluice-${applicationId.replace(/^sluice-/, "")}`;
  f.world.control.produce(f.p.inputTopic, [order("a1", 150), order("a2", 250)]);
  const secret = "do-not-print-5500";
  f.world.control.produce(f.p.inputTopic, [{
    key: "bad",
    value: JSON.stringify({ order_id: secret, amount: "lots", paid: true, customer: null }),
  }]);
  f.world.control.produce(f.p.inputTopic, [order("b1", 300), order("b2", 120), order("b3", 40)]);
  // status shows the coordinates, as the runbook tells the operator
  const status = (await f.cli(["-o", "json", "status", "--project", f.p.dir])).json();
  const row = (status.data!.models as Array<{
    stop: { exit_code: number; runner: { record: { partition: number; offset: number } } };
  }>)[0];
  assert.equal(row.stop.exit_code, 13);
  const rec = row.stop.runner.record;
  const seq0 = f.world.control.mutations().at(-1)!.seq;
  /** Offset moves of the group since the runner stopped (apply positioned it once before). */
  const moves = () =>
    f.world.control.mutations().filter((m) => m.seq > seq0 && m.op === "setGroupOffsets");
  const events = async () =>
    historyEvents(
      await readState({ backend: "local", dir: `${f.p.dir}/.sluice/state`, project: f.p.name }),
    );
  const committed = async () =>
    Object.fromEntries(
      [...await f.deps.kafka.committedOffsets(applicationId, f.p.inputTopic)].map((
        [p, o],
      ) => [String(p), o.toString()]),
    );
  const skip = (partition: string, offset: string, extra: string[] = []) =>
    f.cli([
      "-o",
      "json",
      "skip-record",
      MODEL,
      "--project",
      f.p.dir,
      "--partition",
      partition,
      "--offset",
      offset,
      "--reason",
      REASON,
      ...extra,
    ]);
  return Object.assign(f, { applicationId, name, rec, secret, events, committed, skip, moves });
}

Deno.test("skip-record: recorded first, exactly that partition moved by one, the runner started again; the same command again changes nothing", async () => {
  await using f = await stoppedOnBadRecord("skip-ok");
  const before = await f.committed();
  assert.equal(before[String(f.rec.partition)], String(f.rec.offset), "kept at the bad record");
  // plan's blocker names the command, with the record's coordinates
  const planned = await f.cli(["-o", "json", "plan", "--project", f.p.dir]);
  assert.equal(planned.json().errors[0].code, "BLOCKED_RUNNER_NOT_RUNNING");
  assert.match(
    (planned.json().errors[0] as unknown as { message: string }).message,
    new RegExp(
      `past that record: 'sluice skip-record ${MODEL} --partition ${f.rec.partition} --offset ${f.rec.offset} --reason TEXT'`,
    ),
  );
  const n = (await f.events()).length;
  const r = await f.skip(String(f.rec.partition), String(f.rec.offset));
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.ok(!r.stdout.includes(f.secret), "no value of the record is shown");
  const data = r.json().data as {
    event_id: string;
    recorded_now: boolean;
    moved_now: boolean;
    committed: string;
    record: { topic: string; partition: number; offset: string };
    failure: { reason: string; field: string | null };
    restart: {
      after_skip: string;
      recorded_now: boolean;
      started_now: boolean;
      stop: { exit_code: number };
    };
  };
  assert.deepEqual(data.record, {
    topic: f.p.inputTopic,
    partition: f.rec.partition,
    offset: String(f.rec.offset),
  });
  assert.equal(data.failure.reason, "DECODE_WRONG_TYPE");
  assert.equal(data.failure.field, "amount");
  assert.equal(data.recorded_now, true);
  assert.equal(data.moved_now, true);
  assert.equal(data.restart.after_skip, data.event_id);
  assert.equal(data.restart.stop.exit_code, 13);
  assert.equal(data.restart.started_now, true);
  assert.equal(f.world.control.container(f.name)!.state.running, true);

  // the audit: the skip, then the restart naming it
  const events = (await f.events()).slice(n);
  assert.deepEqual(events.map((e) => e.kind), ["record_skipped", "runner_restarted"]);
  assert.equal(events[0].reason, REASON);
  assert.deepEqual(events[0].record, data.record);
  assert.ok(!JSON.stringify(events).includes(f.secret), "no value in the audit");
  assert.equal(events[1].after_skip, data.event_id);
  // exactly one offset move: that partition, to the record's offset + 1, after the record
  const log = f.world.control.mutations();
  const moves = f.moves();
  assert.equal(moves.length, 1);
  const startAt = log.findLastIndex((m) => m.op === "startContainer");
  assert.ok(log.indexOf(moves[0]) < startAt, "moved before the start");
  assert.ok(
    Date.parse(events[0].recorded_at as string) <= Date.parse(moves[0].at),
    "recorded first",
  );
  const restartEvent = events[1] as unknown as { committed: Record<string, string> };
  assert.deepEqual(restartEvent.committed, {
    ...before,
    [String(f.rec.partition)]: String(f.rec.offset + 1),
  }, "no other partition touched");

  // the records after it are processed, the bad one never
  const status = (await f.cli(["-o", "json", "status", "--project", f.p.dir])).json();
  assert.equal((status.data!.models as Array<{ healthy: boolean }>)[0].healthy, true);
  const out = f.world.control.snapshot().kafka.topics[f.p.outputTopic].partitions.flatMap((p) =>
    p.records.map((r) => r.key)
  ).sort();
  assert.deepEqual(out, ["a1", "a2", "b1", "b2"]);

  // again: done, nothing recorded or moved
  const again = await f.skip(String(f.rec.partition), String(f.rec.offset));
  assert.equal(again.code, 0, again.stdout + again.stderr);
  const second = again.json().data as { recorded_now: boolean; moved_now: boolean };
  assert.equal(second.recorded_now, false);
  assert.equal(second.moved_now, false);
  assert.equal(f.moves().length, 1);
  assert.equal((await f.events()).length, n + 2);
  assert.equal((await f.cli(["-o", "json", "plan", "--project", f.p.dir])).code, 0);
});

Deno.test("skip-record blockers: each names what it found, records nothing, moves nothing, starts nothing", async (t) => {
  await using f = await stoppedOnBadRecord("skip-blockers");
  const p = String(f.rec.partition);
  const o = String(f.rec.offset);
  const unchanged = async (code: string, partition: string, offset: string) => {
    const n = (await f.events()).length;
    const offsets = await f.committed();
    const running = f.world.control.container(f.name)!.state.running;
    const r = await f.skip(partition, offset);
    const err = r.json().errors[0] as { code: string; message: string };
    assert.equal(err.code, code, err.message);
    assert.equal((await f.events()).length, n, "nothing recorded");
    assert.deepEqual(await f.committed(), offsets, "nothing moved");
    assert.equal(f.world.control.container(f.name)!.state.running, running, "nothing started");
    return { code: r.code, message: err.message };
  };

  await t.step("another partition or offset than the record the runner stopped at", async () => {
    const m = await unchanged("BLOCKED_SKIP_MISMATCH", p, String(f.rec.offset + 1));
    assert.equal(m.code, 4);
    assert.match(m.message, new RegExp(`stopped at ${f.p.inputTopic}-${p}@${o}, not at`));
    await unchanged("BLOCKED_SKIP_MISMATCH", String((f.rec.partition + 1) % 3), o);
  });

  await t.step("malformed coordinates are usage errors", async () => {
    assert.equal((await unchanged("USAGE_PARTITION", "-1", o)).code, 2);
    assert.equal((await unchanged("USAGE_OFFSET", p, "ten")).code, 2);
  });

  await t.step("the offset was moved by hand while stopped", async () => {
    await f.deps.kafka.setGroupOffsets(
      f.applicationId,
      f.p.inputTopic,
      new Map([[f.rec.partition, BigInt(f.rec.offset) + 1n]]),
    );
    await unchanged("BLOCKED_OFFSETS_MOVED", p, o);
    await f.deps.kafka.setGroupOffsets(
      f.applicationId,
      f.p.inputTopic,
      new Map([[f.rec.partition, BigInt(f.rec.offset)]]),
    );
  });

  await t.step("a runner stopped otherwise, or running, has no record to skip", async () => {
    const ok = await f.skip(p, o);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    // a running runner whose skip is done answers with it; another stop is not a decode failure
    await f.deps.docker.signalTerm(f.name);
    await unchanged("BLOCKED_NOT_DECODE_FAILURE", p, o);
    await f.deps.docker.startContainer(f.name);
    await unchanged("BLOCKED_NOT_DECODE_FAILURE", p, o);
  });
});

Deno.test("a skip killed after its record and before the move is finished by the same command, moving once", async () => {
  await using f = await stoppedOnBadRecord("skip-kill-site");
  const n = (await f.events()).length;
  const killed = await f.cli([
    "-o",
    "json",
    "skip-record",
    MODEL,
    "--project",
    f.p.dir,
    "--partition",
    String(f.rec.partition),
    "--offset",
    String(f.rec.offset),
    "--reason",
    REASON,
  ], { SLUICE_TEST_ONLY_ALLOW_FAULTS: "1", SLUICE_FAULT_POINT: "kafka.skip_record_offset:after" });
  assert.equal(killed.signal, "SIGKILL", killed.stdout + killed.stderr);
  assert.equal((await f.events()).length, n + 1, "the skip is recorded");
  assert.equal((await f.committed())[String(f.rec.partition)], String(f.rec.offset + 1), "moved");
  const show = (await f.cli(["-o", "json", "state", "show", "--project", f.p.dir])).json();
  const lock = (show.data!.lock as { holder: { lock_id: string } }).holder.lock_id;
  const done = await f.skip(String(f.rec.partition), String(f.rec.offset), [
    "--break-stale-lock",
    lock,
  ]);
  assert.equal(done.code, 0, done.stdout + done.stderr);
  const data = done.json().data as { recorded_now: boolean; moved_now: boolean };
  assert.equal(data.recorded_now, false);
  assert.equal(data.moved_now, false);
  assert.equal(f.moves().length, 1);
  assert.equal(f.world.control.container(f.name)!.state.running, true);
});
