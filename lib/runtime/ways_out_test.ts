// A way out of every blocker (issue 12 item 4), tried as an operator would through the CLI,
// each command its own OS process on a file-backed fake world (seconds per case). The same ways
// out on Docker, Kafka and both state backends: tests/ways_out_docker_kafka_pg_test.ts.
import assert from "node:assert/strict";
import { order, reviewedReplacement } from "../../testing/ways/replacement_fixture.ts";
import { containersOf } from "../../testing/sweep/reads.ts";

const FAULTS = { SLUICE_TEST_ONLY_ALLOW_FAULTS: "1" };

/** Kill `apply --plan` at `point`; the pending operation and the stale lock it left. */
async function killApplyAt(r: Awaited<ReturnType<typeof reviewedReplacement>>, point: string) {
  const killed = await r.cli(["apply", "--project", r.p.dir, "--plan", r.planPath], {
    ...FAULTS,
    SLUICE_FAULT_POINT: point,
  });
  assert.equal(killed.signal, "SIGKILL", killed.stderr);
  const shown = (await r.cli(["-o", "json", "state", "show", "--project", r.p.dir])).json().data!;
  const pending = shown.pending_operation as { operation_id: string; last_checkpoint: string };
  const lock = (shown.lock as { holder: { lock_id: string } }).holder.lock_id;
  return { operationId: pending.operation_id, lastCheckpoint: pending.last_checkpoint, lock };
}

/** `state resume` of `operationId`, breaking the stale lock `lock` a killed apply left. */
function resumeBreaking(
  r: Awaited<ReturnType<typeof reviewedReplacement>>,
  operationId: string,
  lock: string,
) {
  return r.cli([
    "-o",
    "json",
    "state",
    "resume",
    ...r.common(operationId),
    "--break-stale-lock",
    lock,
  ]);
}

/** Kill `apply --plan` once the old runner is removed and before the candidate is created. */
async function killAfterOldRemoved(r: Awaited<ReturnType<typeof reviewedReplacement>>) {
  const { operationId, lastCheckpoint, lock } = await killApplyAt(
    r,
    "docker.create_candidate:before",
  );
  assert.equal(lastCheckpoint, "old_removed");
  return { operationId, lock };
}

Deno.test("a candidate that failed at start-up before processing is named as the operation's and started again by state resume", async () => {
  await using r = await reviewedReplacement("startup-failed");
  // the candidate's first start cannot reach the broker (runner exit 15 KAFKA_UNREACHABLE)
  r.world.control.failRunner("start", { code: 15, reason: "KAFKA_UNREACHABLE" }, {
    match: r.applicationId,
  });
  const applied = await r.cli(["-o", "json", "apply", "--project", r.p.dir, "--plan", r.planPath]);
  assert.equal(applied.code, 4, applied.stdout);
  const err = applied.json().errors[0] as unknown as {
    code: string;
    evidence: { result: { operation_id: string } };
  };
  assert.equal(err.code, "BLOCKED_CANDIDATE_STARTUP_FAILED");
  const operationId = err.evidence.result.operation_id;

  // plan names the pending operation and its own candidate, never a foreign generation
  const planned = await r.cli(["-o", "json", "plan", "--project", r.p.dir]);
  assert.equal(planned.code, 4);
  const codes = (planned.json().errors[0] as unknown as {
    evidence: { blockers: Array<{ code: string; message: string }> };
  })
    .evidence.blockers;
  assert.deepEqual([...new Set(codes.map((b) => b.code))], ["BLOCKED_OPERATION_PENDING"]);
  assert.ok(
    codes.some((b) => /is that operation's candidate/.test(b.message)),
    JSON.stringify(codes),
  );
  const status = (await r.cli(["-o", "json", "status", "--project", r.p.dir])).json().data!;
  const models = status.models as Array<{ candidate_of: string | null }>;
  assert.equal(models[0].candidate_of, operationId);
  assert.equal(
    (status.state as { pending: { operation_id: string } }).pending.operation_id,
    operationId,
  );

  // runner-status: the next proven step restarts the candidate
  const diag = (await r.cli(["-o", "json", "state", "runner-status", ...r.common(operationId)]))
    .json().data!;
  assert.deepEqual(diag.next, {
    ...(diag.next as object),
    step: "start",
    row: "restart_failed_candidate",
  });

  // the cause is fixed (the armed failure was used once): resume starts the same candidate again
  const before = await r.committed();
  const resumed = await r.cli(["-o", "json", "state", "resume", ...r.common(operationId)]);
  assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
  assert.equal(resumed.json().data!.committed, true);
  const snap = await r.state();
  const receipt = snap.history.events.find((e) => e.kind === "runner_completed");
  assert.ok(receipt && receipt.kind === "runner_completed");
  // the evidence of the restart is kept with the authorization
  assert.equal(receipt.resume_history.length, 1);
  const recovery = receipt.resume_history[0].recovery as {
    startup_failure: { exit_code: number; reason: string; committed_equals_clean_close: boolean };
    next_step: { row: string };
  };
  assert.equal(recovery.next_step.row, "restart_failed_candidate");
  assert.deepEqual(
    [recovery.startup_failure.exit_code, recovery.startup_failure.reason],
    [15, "KAFKA_UNREACHABLE"],
  );
  // the candidate resumed from the clean close: nothing reset, then it advanced
  r.world.control.produce(r.p.inputTopic, [order("b1", 500)]);
  const after = await r.committed();
  for (const [p, o] of Object.entries(before)) assert.ok(BigInt(after[p]) >= BigInt(o));
  assert.equal(
    r.world.control.snapshot().kafka.topics[r.p.outputTopic].partitions
      .flatMap((x) => x.records.map((y) => y.key)).includes("b1"),
    true,
  );
});

Deno.test("a candidate killed from outside after it committed is no dead end: apply names it, state resume starts it again from its committed positions", async () => {
  await using r = await reviewedReplacement("killed-after-commit");
  // the apply dies once the candidate is started; the candidate runs and commits new input
  const { operationId, lock } = await killApplyAt(r, "docker.start_candidate:after");
  r.world.control.produce(r.p.inputTopic, [order("k1", 500), order("k2", 600)]);
  r.world.control.advanceClock(30_000);
  const processed = await r.committed();
  const [cand] = containersOf(r.world.control.snapshot(), r.applicationId);
  assert.equal(r.world.control.runnerStatus(cand.id)!.state, "RUNNING");
  // then it is killed from outside (a docker kill: 137, not OOM, its own status RUNNING)
  r.world.control.killContainer(cand.id);
  const resumed = await resumeBreaking(r, operationId, lock);
  assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
  assert.equal(resumed.json().data!.committed, true);
  const receipt = (await r.state()).history.events.find((e) => e.kind === "runner_completed");
  assert.ok(receipt && receipt.kind === "runner_completed");
  const recovery = receipt.resume_history[0].recovery as {
    startup_failure: { exit_code: number; reason: string; committed_equals_clean_close: boolean };
    next_step: { row: string };
  };
  // authorized while its killed member was still in the group: the resume waited, then started it
  assert.deepEqual(recovery.next_step, { kind: "wait", row: "restart_candidate" });
  assert.deepEqual(
    [
      recovery.startup_failure.exit_code,
      recovery.startup_failure.reason,
      recovery.startup_failure.committed_equals_clean_close,
    ],
    [137, "KILLED_WHILE_RUNNING", false],
  );
  // it continued from its committed positions: nothing rewound, each record once
  r.world.control.produce(r.p.inputTopic, [order("k3", 700)]);
  const after = await r.committed();
  for (const [p, o] of Object.entries(processed)) assert.ok(BigInt(after[p]) >= BigInt(o));
  const keys = r.world.control.snapshot().kafka.topics[r.p.outputTopic].partitions
    .flatMap((x) => x.records.map((y) => y.key));
  for (const k of ["k1", "k2", "k3"]) assert.equal(keys.filter((x) => x === k).length, 1, k);
});

Deno.test("a blocked resume writes nothing and spends no authorization", async () => {
  await using r = await reviewedReplacement("blocked-resume");
  const { operationId, lock } = await killAfterOldRemoved(r);
  // the state volume is removed by hand: no resume can ever continue
  r.world.control.removeVolume(`${r.applicationId}-state`);
  const before = await r.state();
  for (let i = 0; i < 2; i++) {
    const resumed = await r.cli([
      "-o",
      "json",
      "state",
      "resume",
      ...r.common(operationId),
      ...(i === 0 ? ["--break-stale-lock", lock] : []),
    ]);
    assert.equal(resumed.code, 4, resumed.stdout);
    assert.equal(resumed.json().errors[0].code, "BLOCKED_VOLUME_MISSING");
  }
  const after = await r.state();
  assert.equal(after.control!.checksum, before.control!.checksum);
  assert.equal(after.history.events.length, before.history.events.length);
  assert.equal(after.control!.opened.resume_history.length, 0);
});

Deno.test("state abandon records the decision, mutates nothing and frees the project without resetting offsets", async () => {
  await using r = await reviewedReplacement("abandon");
  const { operationId, lock } = await killAfterOldRemoved(r);
  r.world.control.removeVolume(`${r.applicationId}-state`);
  const mutations = r.mutations();
  const offsets = await r.committed();
  const serial = (await r.state()).ownership!.document.serial;

  // plan never says "no changes" while the operation is pending: it names it and the commands
  const pendingPlan = await r.cli(["-o", "json", "plan", "--project", r.p.dir]);
  assert.equal(pendingPlan.code, 4);
  assert.match(pendingPlan.stdout, new RegExp(`operation ${operationId}`));
  assert.match(pendingPlan.stdout, /state abandon --operation-id/);

  const noReason = await r.cli([
    "state",
    "abandon",
    "--project",
    r.p.dir,
    "--operation-id",
    operationId,
    "--reason",
    " ",
  ]);
  assert.equal(noReason.code, 2, noReason.stderr);
  const abandoned = await r.cli([
    "-o",
    "json",
    "state",
    "abandon",
    "--project",
    r.p.dir,
    "--operation-id",
    operationId,
    "--reason",
    "the state volume was removed by hand",
    "--break-stale-lock",
    lock,
  ]);
  assert.equal(abandoned.code, 0, abandoned.stdout + abandoned.stderr);
  assert.equal(abandoned.json().data!.recorded_now, true);
  // no Docker or Kafka mutation, ownership unchanged, the audit kept, control cleared
  assert.equal(r.mutations(), mutations);
  const snap = await r.state();
  assert.equal(snap.control, null);
  assert.equal(snap.ownership!.document.serial, serial);
  const event = snap.history.events.find((e) => e.kind === "operation_abandoned");
  assert.ok(event && event.kind === "operation_abandoned");
  assert.equal(event.operation_id, operationId);
  assert.equal(event.reason, "the state volume was removed by hand");
  assert.equal(snap.history.document.version, 4);

  // resume and a second abandon say what happened; nothing is written
  const resumed = await r.cli(["-o", "json", "state", "resume", ...r.common(operationId)]);
  assert.equal(resumed.code, 4);
  assert.equal(resumed.json().errors[0].code, "BLOCKED_OPERATION_ABANDONED");
  const again = await r.cli([
    "-o",
    "json",
    "state",
    "abandon",
    "--project",
    r.p.dir,
    "--operation-id",
    operationId,
    "--reason",
    "again",
  ]);
  assert.equal(again.code, 0);
  assert.equal(again.json().data!.recorded_now, false);

  // after the abandonment no plan or apply repositions the existing group: the runner is
  // missing and stays blocked; committed offsets are exactly as they were
  const planned = await r.cli(["-o", "json", "plan", "--project", r.p.dir]);
  assert.equal(planned.code, 4, planned.stdout);
  const applied = await r.cli(["-o", "json", "apply", "--project", r.p.dir]);
  assert.equal(applied.code, 4, applied.stdout);
  assert.deepEqual(await r.committed(), offsets);
  assert.equal(r.mutations(), mutations);
});

Deno.test("state accept-retention-loss records the lost ranges, moves only those positions (crash-safe), and resume continues", async () => {
  await using r = await reviewedReplacement("retention");
  const { operationId, lock } = await killAfterOldRemoved(r);
  const clean = await r.committed();
  // while nothing runs, records arrive and retention deletes them and more
  const produced = r.world.control.produce(r.p.inputTopic, [
    order("x1", 300),
    order("x2", 400),
    order("x3", 500),
    order("x4", 600),
  ]);
  assert.equal(produced.length, 4);
  const topic = r.world.control.snapshot().kafka.topics[r.p.inputTopic];
  const cut = new Map<number, bigint>();
  topic.partitions.forEach((part, i) => {
    const latest = BigInt(part.records.length === 0 ? 0 : Number(part.records.at(-1)!.offset) + 1);
    if (latest > BigInt(clean[String(i)] ?? "0")) {
      r.world.control.deleteRecords(r.p.inputTopic, i, latest);
      cut.set(i, latest);
    }
  });
  assert.ok(cut.size > 0, "retention deleted records below some committed position");

  const blocked = await resumeBreaking(r, operationId, lock);
  assert.equal(blocked.code, 4);
  assert.equal(blocked.json().errors[0].code, "BLOCKED_RETENTION_LOSS");

  // the acceptance is killed between its decision and the move: the decision is recorded, the
  // positions are not moved yet
  const accept = [
    "-o",
    "json",
    "state",
    "accept-retention-loss",
    ...r.common(operationId),
    "--reason",
    "the expired orders were replayed elsewhere",
  ];
  const killed = await r.cli(accept, {
    ...FAULTS,
    SLUICE_FAULT_POINT: "kafka.move_offsets_to_retained:before",
  });
  assert.equal(killed.signal, "SIGKILL", killed.stderr);
  assert.deepEqual(await r.committed(), clean);
  assert.equal((await r.state()).control!.opened.decisions.length, 1);
  const stale = ((await r.cli(["-o", "json", "state", "show", "--project", r.p.dir])).json()
    .data!.lock as { holder: { lock_id: string } }).holder.lock_id;

  // the same command again finds the recorded decision and only moves the positions
  const done = await r.cli([...accept, "--break-stale-lock", stale]);
  assert.equal(done.code, 0, done.stdout + done.stderr);
  const result = done.json().data! as {
    recorded_now: boolean;
    decision: { partitions: Array<{ partition: number; from: string; to: string }> };
  };
  assert.equal(result.recorded_now, false);
  const moved = await r.committed();
  // killed after the move (or simply run again): the same command finds decision and move done,
  // answers 0 and writes nothing
  const again = await r.cli(accept);
  assert.equal(again.code, 0, again.stdout + again.stderr);
  const repeat = again.json().data! as { already_moved: boolean; moved: unknown[] };
  assert.equal(repeat.already_moved, true);
  assert.deepEqual(repeat.moved, []);
  assert.deepEqual(await r.committed(), moved);
  assert.equal((await r.state()).control!.opened.decisions.length, 1);
  for (const [p, o] of Object.entries(clean)) {
    const c = cut.get(Number(p));
    assert.equal(moved[p], c === undefined ? o : String(c), `partition ${p}`);
  }
  for (const x of result.decision.partitions) {
    assert.equal(x.from, clean[String(x.partition)]);
    assert.equal(x.to, String(cut.get(x.partition)));
  }

  // resume continues from the moved positions and completes; the decision is in the audit
  const resumed = await r.cli(["-o", "json", "state", "resume", ...r.common(operationId)]);
  assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
  const snap = await r.state();
  assert.equal(snap.control, null);
  assert.equal(snap.history.events.filter((e) => e.kind === "operator_decision").length, 1);
  const after = await r.committed();
  for (const [p, o] of Object.entries(moved)) assert.ok(BigInt(after[p]) >= BigInt(o));
});

// The runbook's way out of an old runner that did not close cleanly (killed before its close was
// recorded: BLOCKED_UNCLEAN_EXIT): abandon the replacement, `sluice restart` the owned generation
// (it resumes from its committed offsets; a `docker start` by hand would be drift), plan again.
Deno.test("an old runner killed before its clean close: abandon, sluice restart brings it back, and the replacement plans again", async () => {
  await using r = await reviewedReplacement("unclean-old");
  const { operationId, lock } = await killApplyAt(r, "docker.signal_term:before");
  const [old] = containersOf(r.world.control.snapshot(), r.applicationId);
  r.world.control.killContainer(old.id);
  const resumed = await resumeBreaking(r, operationId, lock);
  assert.equal(resumed.code, 4, resumed.stdout + resumed.stderr);
  assert.ok(resumed.json().errors.some((e) => e.code === "BLOCKED_UNCLEAN_EXIT"), resumed.stdout);
  // the refusal names the way out below
  assert.ok(
    resumed.stdout.includes(
      "then 'sluice restart eligible_orders --reason TEXT' (the same container runs again from its committed offsets)",
    ),
    resumed.stdout,
  );
  const abandoned = await r.cli([
    "state",
    "abandon",
    "--project",
    r.p.dir,
    "--operation-id",
    operationId,
    "--reason",
    "the old runner was killed before its close",
  ]);
  assert.equal(abandoned.code, 0, abandoned.stdout + abandoned.stderr);
  const restarted = await r.cli([
    "-o",
    "json",
    "restart",
    "eligible_orders",
    "--project",
    r.p.dir,
    "--reason",
    "killed during a replacement",
  ]);
  assert.equal(restarted.code, 0, restarted.stdout + restarted.stderr);
  const data = restarted.json().data as { container_id: string; stop: { exit_code: number } };
  assert.equal(data.container_id, old.id);
  assert.equal(data.stop.exit_code, 137);
  assert.equal(r.world.control.container(old.id)?.state.running, true);
  // the project is free and the change is planned again, reviewed as before
  const planned = await r.cli(["-o", "json", "plan", "--project", r.p.dir]);
  assert.equal(planned.code, 0, planned.stdout + planned.stderr);
  const p = (planned.json().data as { plan: { format: number; actions: Array<{ type: string }> } })
    .plan;
  assert.equal(p.format, 6);
  assert.deepEqual(p.actions.map((a) => a.type), ["replace_runner_predicate"]);
});
