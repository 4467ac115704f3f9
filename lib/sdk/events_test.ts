// Every journey's events and its cancellation, on the fake world through the SDK handle (issue 30
// items 3 and 6). For each journey one uncancelled run gives its exact event sequence (started,
// a boundary event right after each durable boundary, committed), numbered 1, 2, 3, ... on the
// injected clock. Then, table-driven like the crash sweep, each of its boundaries in turn: a
// fresh world, the run's AbortSignal aborted by the listener as that boundary's event arrives;
// the run must stop there with CANCELLED (its last event `interrupted` naming that boundary),
// leave its operation pending, and the same plan file again (a format-5 plan) or `resume` (a
// replacement) must finish it exact — the sweep's own invariants (testing/sweep/invariants.ts).
// A run cancelled inside a long wait (the clock's sleep never returns) must stop at once.
import assert from "node:assert/strict";
import { Ajv2020 } from "npm:ajv@8.20.0/dist/2020.js";
import addFormatsModule from "npm:ajv-formats@3.0.1";
import { SluiceError } from "../errors.ts";
import { writePlanFile } from "../plan/plan_file.ts";
import type { ProgressEvent } from "../runtime/progress.ts";
import { plan as planProject } from "../runtime/session.ts";
import type { Clock } from "../runtime/deps.ts";
import { openProject, type SluiceProject } from "./project.ts";
import {
  type CaseWorld,
  deployStarter,
  openCaseWorld,
  prepareConnector,
  prepareRemoval,
} from "../../testing/sweep/fixture.ts";
import {
  checkConnector,
  checkCreate,
  checkRemoval,
  checkReplacement,
} from "../../testing/sweep/invariants.ts";
import type { JourneyRun } from "../../testing/sweep/operator.ts";
import { committedOf, historyEvents, readState, readWorldFile } from "../../testing/sweep/reads.ts";

/** The lifecycle of a run as `kind:boundary` (waits left out: their count follows the clock). */
const shape = (events: ProgressEvent[]) =>
  events.filter((e) => e.kind !== "wait").map((e) => `${e.kind}:${e.boundary ?? ""}`);

// ajv-formats is CommonJS: its callable export is the module itself (or its `default`)
type AddFormats = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as unknown as AddFormats;
const conforms = addFormats(new Ajv2020({ allErrors: true })).compile(
  JSON.parse(await Deno.readTextFile(new URL("../../docs/events.schema.json", import.meta.url))),
);

/**
 * A run's events conform to docs/events.schema.json and are numbered 1, 2, 3, ... on the clock,
 * one operation, one journey, schema 1.
 */
function assertStamped(events: ProgressEvent[], journey: string): void {
  assert.ok(events.length > 0);
  for (const e of events) {
    assert.ok(conforms(e), `${JSON.stringify(e)}: ${JSON.stringify(conforms.errors)}`);
  }
  assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
  assert.ok(events.every((e) => e.schema === 1 && e.journey === journey), journey);
  assert.ok(events.every((e) => e.operation_id === events[0].operation_id));
  assert.ok(events.every((e) => !Number.isNaN(Date.parse(e.at))));
  assert.ok(events.every((e, i) => i === 0 || e.at >= events[i - 1].at), "time goes forward");
}

/** The run a recovery counts as, for the sweep's invariants: completed, no process killed. */
function completedRun(operationId: string): JourneyRun {
  return {
    fault: "cancelled",
    fired: true,
    outcome: "completed",
    codes: [],
    operationId,
    steps: [],
    samples: [],
    brokenLocks: [],
    lockLoss: null,
  };
}

/** A handle on the case's world whose events go to `events`. */
function handle(
  cw: CaseWorld,
  dir: string,
  events: ProgressEvent[],
  onEvent: (e: ProgressEvent) => void = () => {},
  clock?: Clock,
): Promise<SluiceProject> {
  return openProject({
    dir,
    ...cw.deps,
    ...(clock ? { clock } : {}),
    onProgress: (e) => {
      events.push(e);
      onEvent(e);
    },
  });
}

/** A listener that aborts `ctrl` as the `nth` boundary event arrives. */
function abortAt(ctrl: AbortController, nth: number) {
  let seen = 0;
  return (e: ProgressEvent) => {
    if (e.boundary && e.kind !== "committed" && seen++ === nth) ctrl.abort();
  };
}

/** The rejection of a cancelled run, checked: CANCELLED naming the operation and boundary. */
async function cancelled(run: Promise<unknown>, boundary: string): Promise<string> {
  const error = await run.then(
    () => assert.fail(`the run was not cancelled at ${boundary}`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof SluiceError, String(error));
  assert.equal(error.code, "CANCELLED", error.message);
  assert.equal(error.evidence?.last_boundary, boundary);
  return error.evidence?.operation_id as string;
}

/** The cancelled run's last event: interrupted with CANCELLED at that boundary. */
function assertInterrupted(events: ProgressEvent[], boundary: string): void {
  const last = events.at(-1)!;
  assert.equal(last.kind, "interrupted");
  assert.equal(last.kind === "interrupted" && last.code, "CANCELLED");
  assert.equal(last.kind === "interrupted" && last.last_boundary, boundary);
  assert.ok(!events.some((e) => e.kind === "committed"));
}

// ---------------------------------------------------------------------------------------------
// create

const CREATE = [
  "started:",
  "intent:intent",
  "created:create_topic",
  "created:create_topic",
  "created:create_volume",
  "created:position_offsets",
  "created:create_container",
  "ready:await_ready",
  "committed:commit",
];

async function createCase(seed: string, config?: { runner_startup_ms: number }) {
  const cw = await openCaseWorld({ backend: "local", seed, config });
  const created = await planProject({ dir: cw.project.dir, ...cw.deps });
  const planPath = `${cw.project.dir}/create.plan.json`;
  await writePlanFile(planPath, created.plan);
  return { cw, planPath };
}

Deno.test("create: started, each boundary, committed — numbered on the clock", async () => {
  const { cw, planPath } = await createCase("events-create");
  await using _cw = cw;
  const events: ProgressEvent[] = [];
  await using project = await handle(cw, cw.project.dir, events);
  const r = await project.apply({ plan: planPath });
  assert.equal(r.kind === "change" && r.result.operation_id, events[0].operation_id);
  assert.deepEqual(shape(events), CREATE);
  assertStamped(events, "create");
  // the schema refuses what the stamp must never be
  assert.equal(conforms({ ...events[0], seq: 0 }), false);
  assert.equal(conforms({ ...events[0], at: "yesterday" }), false);
  const { continued: _, ...noContinued } = events[0] as Extract<ProgressEvent, { kind: "started" }>;
  assert.equal(conforms(noContinued), false);
});

Deno.test("create: cancelled at each boundary, then the same plan file finishes it exact", async (t) => {
  const boundaries = CREATE.slice(1, -1).map((s) => s.split(":")[1]);
  for (const [nth, boundary] of boundaries.entries()) {
    await t.step(`#${nth} ${boundary}`, async () => {
      const { cw, planPath } = await createCase(`events-create-${nth}`);
      await using _cw = cw;
      const ctrl = new AbortController();
      const events: ProgressEvent[] = [];
      {
        await using project = await handle(cw, cw.project.dir, events, abortAt(ctrl, nth));
        const op = await cancelled(
          project.apply({ plan: planPath, signal: ctrl.signal }),
          boundary,
        );
        assertInterrupted(events, boundary);
        assert.equal((await readState(cw.state)).control?.operation_id ?? op, op);
        assert.ok((await readState(cw.state)).control, "the operation stays pending");
      }
      const again: ProgressEvent[] = [];
      await using project = await handle(cw, cw.project.dir, again);
      const r = await project.apply({ plan: planPath });
      assert.equal(r.kind === "change" && r.result.operation_id, events[0].operation_id);
      assert.equal(again[0].kind === "started" && again[0].continued, true);
      assert.equal(again.at(-1)!.kind, "committed");
      assertStamped(again, "create");
      assert.deepEqual(await checkCreate(cw, completedRun(events[0].operation_id)), []);
    });
  }
});

Deno.test("create: cancelled inside the readiness wait, it stops at once", async () => {
  const { cw, planPath } = await createCase("events-create-wait", { runner_startup_ms: 60_000 });
  await using _cw = cw;
  const ctrl = new AbortController();
  const events: ProgressEvent[] = [];
  // a clock whose sleep never returns: only the cancellation can end the wait
  const stuck: Clock = { now: () => cw.deps.clock!.now(), sleep: () => new Promise(() => {}) };
  const abortOnWait = (e: ProgressEvent) => {
    if (e.kind === "wait" && !ctrl.signal.aborted) setTimeout(() => ctrl.abort(), 20);
  };
  {
    await using project = await handle(cw, cw.project.dir, events, abortOnWait, stuck);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("the wait did not end on abort")), 30_000);
    });
    try {
      await cancelled(
        Promise.race([project.apply({ plan: planPath, signal: ctrl.signal }), bound]),
        "create_container",
      );
    } finally {
      clearTimeout(timer);
    }
    assert.ok(events.some((e) => e.kind === "wait"));
    assertInterrupted(events, "create_container");
  }
  await using project = await handle(cw, cw.project.dir, []);
  await project.apply({ plan: planPath });
  assert.deepEqual(await checkCreate(cw, completedRun(events[0].operation_id)), []);
});

// ---------------------------------------------------------------------------------------------
// replacement (apply of a reviewed plan, then resume)

const REPLACEMENT = [
  "started:",
  "intent:intent",
  "checkpoint:action_started",
  "action:",
  "checkpoint:old_closed",
  "action:",
  "checkpoint:old_removed",
  "action:",
  "checkpoint:replacement_created",
  "action:",
  "checkpoint:action_completed",
  "committed:finalized",
];

Deno.test("replacement: started, each checkpoint, committed — the commit reaches onProgress", async () => {
  await using cw = await openCaseWorld({ backend: "local", seed: "events-replace" });
  const d = await deployStarter(cw);
  const events: ProgressEvent[] = [];
  await using project = await handle(cw, cw.project.dir, events);
  const r = await project.apply({ plan: d.planPath });
  assert.equal(r.kind === "replacement" && r.result.outcome, "completed");
  assert.deepEqual(shape(events), REPLACEMENT);
  assertStamped(events, "replacement");
  const committed = events.at(-1)!;
  assert.equal(committed.kind === "committed" && committed.serial, 2);
});

Deno.test("replacement: cancelled at each boundary, then resume finishes it exact", async (t) => {
  const boundaries = REPLACEMENT.filter((s) => /^(intent|checkpoint):/.test(s))
    .map((s) => s.split(":")[1]);
  for (const [nth, boundary] of boundaries.entries()) {
    await t.step(`#${nth} ${boundary}`, async () => {
      await using cw = await openCaseWorld({ backend: "local", seed: `events-replace-${nth}` });
      const d = await deployStarter(cw);
      const before = committedOf(
        readWorldFile(cw.worldPath),
        cw.applicationId,
        cw.project.inputTopic,
      );
      const ctrl = new AbortController();
      const events: ProgressEvent[] = [];
      let op: string;
      {
        await using project = await handle(cw, cw.project.dir, events, abortAt(ctrl, nth));
        op = await cancelled(project.apply({ plan: d.planPath, signal: ctrl.signal }), boundary);
        assertInterrupted(events, boundary);
        assert.equal((await readState(cw.state)).control?.operation_id, op);
      }
      const resumed: ProgressEvent[] = [];
      await using project = await handle(cw, cw.project.dir, resumed);
      const r = await project.resume({ plan: d.planPath, operationId: op });
      assert.equal(r.kind === "replacement" && r.result.outcome, "completed", JSON.stringify(r));
      assert.equal(resumed[0].kind === "started" && resumed[0].continued, true);
      assert.equal(resumed.at(-1)!.kind, "committed");
      assertStamped(resumed, "replacement");
      assert.deepEqual(await checkReplacement(cw, d, completedRun(op), before), []);
    });
  }
});

Deno.test("replacement: a resume cancelled at its authorization is resumed again", async () => {
  await using cw = await openCaseWorld({ backend: "local", seed: "events-resume" });
  const d = await deployStarter(cw);
  const before = committedOf(readWorldFile(cw.worldPath), cw.applicationId, cw.project.inputTopic);
  const first = new AbortController();
  let op: string;
  {
    await using project = await handle(cw, cw.project.dir, [], abortAt(first, 1));
    op = await cancelled(
      project.apply({ plan: d.planPath, signal: first.signal }),
      "action_started",
    );
  }
  const second = new AbortController();
  const events: ProgressEvent[] = [];
  {
    await using project = await handle(cw, cw.project.dir, events, abortAt(second, 0));
    await cancelled(
      project.resume({ plan: d.planPath, operationId: op, signal: second.signal }),
      "resume_authorized",
    );
    assert.deepEqual(shape(events), [
      "started:",
      "resume_authorized:resume_authorized",
      "interrupted:",
    ]);
  }
  await using project = await handle(cw, cw.project.dir, []);
  const done = await project.resume({ plan: d.planPath, operationId: op });
  assert.equal(done.kind === "replacement" && done.result.outcome, "completed");
  assert.deepEqual(await checkReplacement(cw, d, completedRun(op), before), []);
});

Deno.test("replacement: cancelled inside the clean-close wait, it stops at once", async () => {
  await using cw = await openCaseWorld({
    backend: "local",
    seed: "events-replace-wait",
    config: { runner_close_ms: 60_000 },
  });
  const d = await deployStarter(cw);
  const before = committedOf(readWorldFile(cw.worldPath), cw.applicationId, cw.project.inputTopic);
  const ctrl = new AbortController();
  const events: ProgressEvent[] = [];
  const stuck: Clock = { now: () => cw.deps.clock!.now(), sleep: () => new Promise(() => {}) };
  const abortAfterTerm = (e: ProgressEvent) => {
    if (e.kind === "action" && e.action === "term") setTimeout(() => ctrl.abort(), 20);
  };
  let op: string;
  {
    await using project = await handle(cw, cw.project.dir, events, abortAfterTerm, stuck);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("the wait did not end on abort")), 30_000);
    });
    try {
      op = await cancelled(
        Promise.race([project.apply({ plan: d.planPath, signal: ctrl.signal }), bound]),
        "action_started",
      );
    } finally {
      clearTimeout(timer);
    }
    assertInterrupted(events, "action_started");
  }
  await using project = await handle(cw, cw.project.dir, []);
  const done = await project.resume({ plan: d.planPath, operationId: op });
  assert.equal(done.kind === "replacement" && done.result.outcome, "completed");
  assert.deepEqual(await checkReplacement(cw, d, completedRun(op), before), []);
});

// ---------------------------------------------------------------------------------------------
// runner removal

const REMOVAL = [
  "started:",
  "intent:intent",
  "action:",
  "action:remove_container",
  "committed:commit",
];

Deno.test("runner removal: its events, and cancelled at each boundary, continued exact", async (t) => {
  {
    await using cw = await openCaseWorld({ backend: "local", seed: "events-removal" });
    const ch = await prepareRemoval(cw);
    const events: ProgressEvent[] = [];
    await using project = await handle(cw, cw.project.dir, events);
    await project.apply({ plan: ch.planPath });
    assert.deepEqual(shape(events), REMOVAL);
    assertStamped(events, "runner_removal");
  }
  for (const [nth, boundary] of ["intent", "remove_container"].entries()) {
    await t.step(`#${nth} ${boundary}`, async () => {
      await using cw = await openCaseWorld({ backend: "local", seed: `events-removal-${nth}` });
      const ch = await prepareRemoval(cw);
      const ctrl = new AbortController();
      const events: ProgressEvent[] = [];
      let op: string;
      {
        await using project = await handle(cw, cw.project.dir, events, abortAt(ctrl, nth));
        op = await cancelled(project.apply({ plan: ch.planPath, signal: ctrl.signal }), boundary);
        assertInterrupted(events, boundary);
        assert.equal((await readState(cw.state)).control?.operation_id, op);
      }
      const again: ProgressEvent[] = [];
      await using project = await handle(cw, cw.project.dir, again);
      await project.apply({ plan: ch.planPath });
      assert.equal(again.at(-1)!.kind, "committed");
      assert.deepEqual(await checkRemoval(cw, completedRun(op), ch), []);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// connector change

const CONNECTORS = [
  "started:",
  "intent:intent",
  "connector:update_connector",
  "connector:",
  "committed:commit",
];

Deno.test("connector change: its events, and cancelled at each boundary, continued exact", async (t) => {
  {
    await using cw = await openCaseWorld({ backend: "local", seed: "events-conn", pipeline: true });
    const ch = await prepareConnector(cw, "update");
    const events: ProgressEvent[] = [];
    await using project = await handle(cw, cw.pipeline!.dir, events);
    await project.apply({ plan: ch.planPath });
    assert.deepEqual(shape(events), CONNECTORS);
    assertStamped(events, "connector_change");
  }
  for (const [nth, boundary] of ["intent", "update_connector"].entries()) {
    await t.step(`#${nth} ${boundary}`, async () => {
      await using cw = await openCaseWorld({
        backend: "local",
        seed: `events-conn-${nth}`,
        pipeline: true,
      });
      const ch = await prepareConnector(cw, "update");
      const ctrl = new AbortController();
      const events: ProgressEvent[] = [];
      let op: string;
      {
        await using project = await handle(cw, cw.pipeline!.dir, events, abortAt(ctrl, nth));
        op = await cancelled(project.apply({ plan: ch.planPath, signal: ctrl.signal }), boundary);
        assertInterrupted(events, boundary);
        assert.equal((await readState(cw.state)).control?.operation_id, op);
      }
      await using project = await handle(cw, cw.pipeline!.dir, []);
      await project.apply({ plan: ch.planPath });
      assert.deepEqual(await checkConnector(cw, completedRun(op), ch), []);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// restart and skip-record (day-two commands: no pending operation; what a run records names the
// runner's stop, and the same command again finishes it)

const MODEL = "eligible_orders";
const REASON = "events test: bring the stopped runner back";
const RESTART = ["started:", "intent:record_restart", "action:start_stopped", "committed:running"];
const SKIP = [
  "started:",
  "intent:record_skip",
  "offsets_moved:advance_offset",
  "intent:record_restart",
  "action:start_stopped",
  "committed:running",
];

/**
 * The starter deployed, its runner then stopped by someone else: TERM (`docker stop`, exit 143)
 * for a restart, a record it cannot decode (exit 13) for a skip-record, or SIGKILL (exit 137:
 * its member stays in the group for the session timeout).
 */
async function stoppedStarter(seed: string, how: "term" | "decode" | "kill") {
  const cw = await openCaseWorld({ backend: "local", seed });
  const d = await deployStarter(cw);
  cw.world.control.snapshot();
  let bad: { partition: number; offset: string } | null = null;
  if (how === "decode") {
    cw.world.control.produce(cw.project.inputTopic, [{
      key: "bad-record",
      value: JSON.stringify({ order_id: "bad", amount: "lots", paid: true, customer: null }),
    }]);
    cw.world.control.snapshot();
    const st = cw.world.control.runnerStatus(d.oldContainerId) as {
      stop?: { record?: { partition: number; offset: number } };
    } | null;
    const rec = st?.stop?.record;
    if (!rec) throw new Error("setup: the runner did not stop on the bad record");
    bad = { partition: rec.partition, offset: String(rec.offset) };
  } else if (how === "kill") {
    cw.world.control.killContainer(d.oldContainerId);
  } else {
    await cw.deps.docker!.signalTerm(d.oldContainerId);
  }
  const stopSeq = cw.world.control.mutations().at(-1)?.seq ?? 0;
  return { cw, d, bad, stopSeq };
}

type Stopped = Awaited<ReturnType<typeof stoppedStarter>>;

/** The day-two command of a stopped starter through a handle (its signal: the handle's). */
async function dayTwo(s: Stopped, events: ProgressEvent[], o: {
  onEvent?: (e: ProgressEvent) => void;
  clock?: Clock;
  signal?: AbortSignal;
} = {}) {
  await using project = await openProject({
    dir: s.cw.project.dir,
    ...s.cw.deps,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    onProgress: (e) => {
      events.push(e);
      o.onEvent?.(e);
    },
  });
  return s.bad
    ? await project.skipRecord({ model: MODEL, reason: REASON, ...s.bad })
    : await project.restart({ model: MODEL, reason: REASON });
}

/**
 * What a finished restart (or skip) leaves, as the crash sweep's day-two case checks it: the
 * same container running, exactly one start and one `runner_restarted` event (after exactly one
 * `record_skipped` for a skip, that partition moved once to the record's offset + 1), no
 * pending operation, no lock.
 */
async function checkDayTwo(s: Stopped): Promise<string[]> {
  const problems: string[] = [];
  const c = s.cw.world.control.container(s.d.oldContainerId);
  if (!c?.state.running) problems.push("the stopped container is not running again");
  const after = s.cw.world.control.mutations().filter((m) => m.seq > s.stopSeq);
  const starts = after.filter((m) => m.by === "docker").map((m) => m.op);
  if (JSON.stringify(starts) !== '["startContainer"]') problems.push(`docker: ${starts}`);
  const moves = after.filter((m) => m.by === "kafka").map((m) => m.op);
  if (JSON.stringify(moves) !== JSON.stringify(s.bad ? ["setGroupOffsets"] : [])) {
    problems.push(`kafka: ${moves}`);
  }
  const state = await readState(s.cw.state);
  const kinds = historyEvents(state).map((e) => e.kind);
  const count = (k: string) => kinds.filter((x: string) => x === k).length;
  if (count("runner_restarted") !== 1) problems.push(`${count("runner_restarted")} restarts`);
  if (count("record_skipped") !== (s.bad ? 1 : 0)) {
    problems.push(`${count("record_skipped")} skips`);
  }
  if (s.bad) {
    const at = committedOf(
      readWorldFile(s.cw.worldPath),
      s.cw.applicationId,
      s.cw.project.inputTopic,
    )[String(s.bad.partition)];
    if (at !== BigInt(s.bad.offset) + 1n) problems.push(`partition at ${at}, not past the record`);
  }
  if (state.control !== null) problems.push("an operation is pending");
  if (state.lockFile) problems.push("lock.json left");
  return problems;
}

for (
  const [journey, how, expected] of [
    ["restart", "term", RESTART],
    ["skip_record", "decode", SKIP],
  ] as const
) {
  Deno.test(`${journey}: started, each boundary, committed — numbered on the clock`, async () => {
    const s = await stoppedStarter(`events-${journey}`, how);
    await using _cw = s.cw;
    const events: ProgressEvent[] = [];
    const r = await dayTwo(s, events);
    assert.deepEqual(shape(events), expected);
    assertStamped(events, journey);
    assert.equal(events[0].operation_id, r.event_id, "the operation is the audit event");
    assert.deepEqual(await checkDayTwo(s), []);
  });

  Deno.test(`${journey}: cancelled at each boundary, then the same command finishes it exact`, async (t) => {
    const boundaries = expected.slice(1, -1).map((x) => x.split(":")[1]);
    for (const [nth, boundary] of boundaries.entries()) {
      await t.step(`#${nth} ${boundary}`, async () => {
        const s = await stoppedStarter(`events-${journey}-${nth}`, how);
        await using _cw = s.cw;
        const ctrl = new AbortController();
        const events: ProgressEvent[] = [];
        const op = await cancelled(
          dayTwo(s, events, { onEvent: abortAt(ctrl, nth), signal: ctrl.signal }),
          boundary,
        );
        assertInterrupted(events, boundary);
        assert.equal(op, events[0].operation_id);
        // resumable, not pending: no operation, no lock, what was recorded kept
        const state = await readState(s.cw.state);
        assert.equal(state.control, null);
        assert.equal(state.lockFile, false, "no lock left");
        const again: ProgressEvent[] = [];
        const r = await dayTwo(s, again);
        assert.equal(r.event_id, op, "the same command continues the same run's record");
        assert.equal(again[0].kind === "started" && again[0].continued, true);
        assert.deepEqual(shape(again), ["started:", ...expected.slice(nth + 2)]);
        assertStamped(again, journey);
        assert.deepEqual(await checkDayTwo(s), []);
      });
    }
  });
}

Deno.test("restart: cancelled inside the group wait after a kill, it stops at once with nothing recorded", async () => {
  const s = await stoppedStarter("events-restart-wait", "kill");
  await using _cw = s.cw;
  const ctrl = new AbortController();
  const events: ProgressEvent[] = [];
  const stuck: Clock = { now: () => s.cw.deps.clock!.now(), sleep: () => new Promise(() => {}) };
  const abortOnWait = (e: ProgressEvent) => {
    if (e.kind === "wait" && !ctrl.signal.aborted) setTimeout(() => ctrl.abort(), 20);
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("the wait did not end on abort")), 30_000);
  });
  const error = await Promise.race([
    dayTwo(s, events, { onEvent: abortOnWait, clock: stuck, signal: ctrl.signal }),
    bound,
  ]).then(() => assert.fail("not cancelled"), (e: unknown) => e).finally(() => clearTimeout(timer));
  assert.ok(error instanceof SluiceError && error.code === "CANCELLED", String(error));
  assert.equal(error.evidence?.operation_id, null, "nothing was recorded");
  assert.deepEqual(shape(events), ["started:", "interrupted:"]);
  assertInterrupted(events, null as unknown as string);
  // clean: nothing recorded, nothing started, no operation, no lock
  const state = await readState(s.cw.state);
  assert.equal(state.control, null);
  assert.equal(state.lockFile, false, "no lock left");
  assert.ok(!historyEvents(state).some((e) => e.kind === "runner_restarted"));

  assert.equal(s.cw.world.control.container(s.d.oldContainerId)?.state.running, false);
});
