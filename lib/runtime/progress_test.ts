// OperationEvents: the stamp of every event, the one last event of a run, and where a cancelled
// run stops (after a boundary's event, at once inside a wait or a real sleep, which must leave no
// timer behind: the test sanitizer fails on a leaked one).
import assert from "node:assert/strict";
import { SluiceError } from "../errors.ts";
import type { Clock } from "./deps.ts";
import { OperationEvents, type ProgressEvent } from "./progress.ts";

const T0 = Date.parse("2026-12-01T00:00:00Z");

function run(signal?: AbortSignal, clock?: Clock) {
  let t = T0;
  const events: ProgressEvent[] = [];
  const events_ = new OperationEvents({
    journey: "create",
    operationId: "op-1",
    listener: (e) => events.push(e),
    clock: clock ?? { now: () => (t += 1000), sleep: () => Promise.resolve() },
    signal,
    planSha256: "abc",
  });
  return { run: events_, events };
}

const cancelledCode = (e: unknown) => e instanceof SluiceError && e.code === "CANCELLED";

Deno.test("every event is stamped: schema 1, seq 1, 2, 3, the clock's time, the run's operation and journey", async () => {
  const { run: r, events } = run();
  await r.run(() => {
    r.started(false, "go");
    r.emit({ kind: "wait", waited_ms: 0, bound_ms: 10, message: "waiting" });
    r.boundary({ kind: "intent", boundary: "intent", message: "recorded" });
    r.committed(1, "done");
    return Promise.resolve();
  });
  assert.deepEqual(
    events.map((e) => [e.seq, e.at, e.kind, e.boundary ?? null]),
    [
      [1, "2026-12-01T00:00:01.000Z", "started", null],
      [2, "2026-12-01T00:00:02.000Z", "wait", null],
      [3, "2026-12-01T00:00:03.000Z", "intent", "intent"],
      [4, "2026-12-01T00:00:04.000Z", "committed", "commit"],
    ],
  );
  assert.ok(events.every((e) => e.schema === 1 && e.journey === "create"));
  assert.ok(events.every((e) => e.operation_id === "op-1"));
  assert.equal(r.lastBoundary, "commit");
});

Deno.test("an error ends the run once: blocked for a blocker, interrupted otherwise", async () => {
  const blocked = run();
  await assert.rejects(() =>
    blocked.run.run(() => {
      blocked.run.started(false, "go");
      blocked.run.boundary({ kind: "intent", boundary: "intent", message: "recorded" });
      throw new SluiceError("BLOCKED_UNOWNED_TOPIC", "not ours\nsecond line");
    })
  );
  const last = blocked.events.at(-1)!;
  assert.equal(last.kind, "blocked");
  assert.deepEqual(
    last.kind === "blocked" && [last.code, last.last_boundary, last.message],
    ["BLOCKED_UNOWNED_TOPIC", "intent", "not ours"],
  );
  const lost = run();
  await assert.rejects(() =>
    lost.run.run(() => {
      lost.run.started(true, "go on");
      throw new SluiceError("ENV_KAFKA_UNREACHABLE", "gone");
    })
  );
  assert.deepEqual(lost.events.map((e) => e.kind), ["started", "interrupted"]);
});

Deno.test("cancelled before the intent: CANCELLED, nothing recorded", async () => {
  const ctrl = new AbortController();
  ctrl.abort();
  const { run: r, events } = run(ctrl.signal);
  const error = await r.run(() => Promise.resolve(r.started(false, "go"))).then(
    () => assert.fail("not cancelled"),
    (e) => e,
  );
  assert.ok(cancelledCode(error));
  assert.equal((error as SluiceError).evidence?.operation_id, null);
  assert.deepEqual(events.map((e) => e.kind), ["started", "interrupted"]);
});

Deno.test("cancelled: the run stops right after the next boundary's event, naming it and the way on", async () => {
  const ctrl = new AbortController();
  const { run: r, events } = run(ctrl.signal);
  const error = await r.run(() => {
    r.started(false, "go");
    r.boundary({ kind: "intent", boundary: "intent", message: "recorded" });
    ctrl.abort();
    // a detail event is no stopping point
    r.emit({ kind: "action", action: "term", message: "TERM" });
    r.boundary({
      kind: "created",
      resource: "topic",
      name: "t",
      boundary: "create_topic",
      message: "made",
    });
    return Promise.resolve("went past the boundary");
  }).then(() => assert.fail("not cancelled"), (e) => e);
  assert.ok(cancelledCode(error), String(error));
  const e = error as SluiceError;
  assert.equal(e.evidence?.last_boundary, "create_topic");
  assert.equal(e.evidence?.operation_id, "op-1");
  assert.match(e.message, /sluice apply --plan .*abc/);
  assert.deepEqual(events.map((x) => x.kind), [
    "started",
    "intent",
    "action",
    "created",
    "interrupted",
  ]);
  const last = events.at(-1)!;
  assert.equal(last.kind === "interrupted" && last.code, "CANCELLED");
});

Deno.test("cancelled inside a wait that never ends, or a real sleep: it stops at once", async () => {
  const ctrl = new AbortController();
  const { run: r } = run(ctrl.signal, { now: () => T0 });
  const waiting = r.wait(new Promise<never>(() => {}));
  const sleeping = r.sleep(3_600_000);
  ctrl.abort();
  await assert.rejects(waiting, cancelledCode);
  await assert.rejects(sleeping, cancelledCode);
  // already cancelled: a new wait or sleep ends at once too
  await assert.rejects(r.sleep(3_600_000), cancelledCode);
  await assert.rejects(r.wait(Promise.resolve(1)), cancelledCode);
});

Deno.test("a wait that ends before any cancellation gives its value or its error", async () => {
  const ctrl = new AbortController();
  const { run: r } = run(ctrl.signal, { now: () => T0 });
  assert.equal(await r.wait(Promise.resolve(7)), 7);
  await assert.rejects(r.wait(Promise.reject(new Error("boom"))), /boom/);
  await r.sleep(1);
  ctrl.abort();
});
