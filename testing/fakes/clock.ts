/**
 * Injected clocks for tests and fakes: a clock is anything with `now(): number` (milliseconds
 * since the epoch), so code under test never reads `Date.now()` itself. The world-backed
 * clock, which survives process death, lives with the world ({@link "./world.ts"}).
 *
 * @example
 * ```ts
 * import { manualClock } from "./clock.ts";
 * const clock = manualClock(Date.parse("2026-01-01T00:00:00Z"));
 * clock.advance(1500);
 * console.log(new Date(clock.now()).toISOString()); // 2026-01-01T00:00:01.500Z
 * ```
 * @module
 */

/**
 * A source of time in milliseconds since the epoch, and a way to wait on it: a fake clock
 * advances instead of waiting, so a journey's polls and bounded waits cost no real time.
 * (The same shape as the runtime's injected clock.)
 */
export interface Clock {
  now(): number;
  sleep?(ms: number): Promise<void>;
}

/** Let other tasks run (a fake sleep must still yield). */
function yieldTurn(): Promise<void> {
  return new Promise((r) => setTimeout(r, 0));
}

/**
 * The real clock.
 *
 * @example
 * ```ts
 * import { systemClock } from "./clock.ts";
 * console.log(systemClock().now() > 0);
 * ```
 */
export function systemClock(): Clock {
  return { now: () => Date.now(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) };
}

/** A clock that moves only when told to. */
export interface ManualClock extends Clock {
  /** Advances the clock by `ms` (and yields) instead of waiting. */
  sleep(ms: number): Promise<void>;
  /** Move forward by `ms` (never backwards). */
  advance(ms: number): void;
  /** Jump to `ms`, which must not be earlier than the current time. */
  set(ms: number): void;
}

/**
 * A clock that stands still until {@link ManualClock.advance} or {@link ManualClock.set}.
 *
 * @example
 * ```ts
 * import { manualClock } from "./clock.ts";
 * const c = manualClock(0);
 * c.advance(10);
 * console.log(c.now()); // 10
 * ```
 */
export function manualClock(startMs: number): ManualClock {
  let t = startMs;
  return {
    now: () => t,
    advance(ms) {
      if (!(ms >= 0)) throw new RangeError(`a clock only moves forward (advance ${ms})`);
      t += ms;
    },
    set(ms) {
      if (!(ms >= t)) throw new RangeError(`a clock only moves forward (${ms} < ${t})`);
      t = ms;
    },
    sleep(ms) {
      t += Math.max(0, ms);
      return yieldTurn();
    },
  };
}

/**
 * A deterministic clock that moves `stepMs` forward each time it is read: strictly
 * increasing, so two stamps taken one after the other always differ.
 *
 * @example
 * ```ts
 * import { steppingClock } from "./clock.ts";
 * const c = steppingClock(1000, 5);
 * console.log(c.now(), c.now()); // 1005 1010
 * ```
 */
export function steppingClock(startMs: number, stepMs = 1): Clock {
  if (!(stepMs > 0)) throw new RangeError(`step must be positive, not ${stepMs}`);
  let t = startMs;
  return {
    now: () => (t += stepMs),
    sleep(ms) {
      t += Math.max(0, ms);
      return yieldTurn();
    },
  };
}

/**
 * Wait on a clock: its own `sleep`, or a real timer.
 *
 * @example
 * ```ts
 * import { manualClock, sleepOn } from "./clock.ts";
 * const c = manualClock(0);
 * await sleepOn(c, 100);
 * console.log(c.now()); // 100
 * ```
 */
export function sleepOn(clock: Clock, ms: number): Promise<void> {
  return clock.sleep ? clock.sleep(ms) : new Promise((r) => setTimeout(r, ms));
}

/**
 * Docker's and the runner's timestamp form (RFC 3339, UTC).
 *
 * @example
 * ```ts
 * import { isoAt } from "./clock.ts";
 * console.log(isoAt(0)); // 1970-01-01T00:00:00.000Z
 * ```
 */
export function isoAt(ms: number): string {
  return new Date(ms).toISOString();
}
