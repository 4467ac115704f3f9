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

/** A source of time in milliseconds since the epoch. */
export interface Clock {
  now(): number;
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
  return { now: () => Date.now() };
}

/** A clock that moves only when told to. */
export interface ManualClock extends Clock {
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
  return { now: () => (t += stepMs) };
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
