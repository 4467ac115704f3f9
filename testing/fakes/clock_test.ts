import assert from "node:assert/strict";
import { isoAt, manualClock, sleepOn, steppingClock, systemClock } from "./clock.ts";

Deno.test("a manual clock stands still, moves only forward when told", () => {
  const c = manualClock(1_000);
  assert.equal(c.now(), 1_000);
  assert.equal(c.now(), 1_000);
  c.advance(250);
  assert.equal(c.now(), 1_250);
  c.set(2_000);
  assert.equal(c.now(), 2_000);
  assert.throws(() => c.advance(-1), RangeError);
  assert.throws(() => c.set(1_999), RangeError);
  assert.equal(c.now(), 2_000, "a refused move leaves the time as it was");
});

Deno.test("a stepping clock is strictly increasing and deterministic", () => {
  const a = steppingClock(0, 5);
  const b = steppingClock(0, 5);
  const xs = [a.now(), a.now(), a.now()];
  assert.deepEqual(xs, [5, 10, 15]);
  assert.deepEqual([b.now(), b.now(), b.now()], xs);
  assert.throws(() => steppingClock(0, 0), RangeError);
});

Deno.test("the system clock and ISO stamps", () => {
  const before = Date.now();
  const t = systemClock().now();
  assert.ok(t >= before);
  assert.equal(isoAt(Date.parse("2026-01-01T00:00:01.500Z")), "2026-01-01T00:00:01.500Z");
});

Deno.test("a fake clock's sleep advances it instead of waiting", async () => {
  const m = manualClock(0);
  await m.sleep(60_000);
  assert.equal(m.now(), 60_000);
  const st = steppingClock(0, 1);
  await sleepOn(st, 1_000);
  assert.equal(st.now(), 1_001);
  await sleepOn(systemClock(), 1); // real timers, resolved
  await sleepOn({ now: () => 0 }, 1); // a clock without sleep waits on a timer
});
