/**
 * The one small loop a journey that decides from its table runs after its intent: read fresh,
 * decide (the journey's pure function over its table's rows), then cross the one step the
 * decision names — or wait, bounded, for the change a row waits for — and read again, until a
 * step ends the run. A blocked decision throws its blockers, or the journey's own refusal of them
 * (nothing more is done); a wait past its bound throws `UNKNOWN_OUTCOME_TIMEOUT` (or the code the
 * wait names) and leaves everything as it is (no force, ever). `state runner-status` renders the
 * same decision from the same readings, so the continuation and the report cannot disagree about
 * the next row.
 *
 * Each wait is bounded per subject (a runner, a connector, …): the bound starts with that
 * subject's first wait in this run. A wait blocks on the journey's own wake-up (an exit, a short
 * sleep), which the run's cancellation ends at once (`CANCELLED`), then reads again in full.
 *
 * @example
 * ```ts
 * import { driveJourney } from "./journey_driver.ts";
 * import { OperationEvents } from "./progress.ts";
 * const events = new OperationEvents({ journey: "create", operationId: "op" });
 * let n = 0;
 * const result = await driveJourney<number, { kind: "bump" } | { kind: "stop" }, string>({
 *   events,
 *   boundMs: 1_000,
 *   read: () => Promise.resolve(n),
 *   decide: (seen) => (seen < 2 ? { kind: "bump" } : { kind: "stop" }),
 *   wake: () => Promise.resolve(),
 *   cross: (d) => Promise.resolve(d.kind === "bump" ? (n++, undefined) : `done after ${n}`),
 * });
 * console.log(result); // done after 2
 * ```
 * @module
 */
import { type ErrorCode, SluiceError } from "../errors.ts";
import { type Blocker, blockerError } from "../validation/blocker.ts";
import { type Clock, SYSTEM_CLOCK } from "./deps.ts";
import type { OperationEvents } from "./progress.ts";

/** A decision that stops the run: the blockers its row gave (declared by that row). */
export interface BlockedDecision {
  readonly kind: "blocked";
  readonly blockers: Blocker[];
}

/** A decision to wait, bounded, on a row that waits (read-only). */
export interface WaitDecision {
  readonly kind: "wait";
  /** What the bound is kept for (a runner's model, a connector's name). */
  readonly subject: string;
  /** The error message when the bound passed (code {@link WaitDecision.timeoutCode}). */
  timedOut(boundMs: number): string;
  /** The code of that error (default `UNKNOWN_OUTCOME_TIMEOUT`). */
  readonly timeoutCode?: ErrorCode;
}

/** What {@link driveJourney} runs: the journey's readings, its decision, its steps. */
export interface JourneyLoop<
  Readings,
  Step extends { kind: string },
  Result,
  Wait extends WaitDecision = WaitDecision,
> {
  /** The run's events (cancellation inside a wait). */
  events: OperationEvents;
  /** The journey's clock (default: the system clock). */
  clock?: Clock;
  /** How long one subject may wait in this run. */
  boundMs: number;
  /** A fresh read of what the decision needs (the same reads `state runner-status` makes). */
  read(): Promise<Readings>;
  /** The journey's decision over its table: a step to cross, a wait, or blockers. */
  decide(readings: Readings): Step | Wait | BlockedDecision;
  /** Block until the waited-for change may have happened, at most `leftMs` (never trusted). */
  wake(wait: Wait, readings: Readings, leftMs: number): Promise<void>;
  /** Cross the step at its row's site; a result ends the run, undefined reads again. */
  cross(step: Step, readings: Readings): Promise<Result | undefined>;
  /** The error a blocked decision throws (default: `blockerError` of its blockers). */
  refuse?(blocked: BlockedDecision): Error;
}

function isWait<W extends WaitDecision>(d: { kind: string } | W): d is W {
  return d.kind === "wait";
}

function isBlocked(d: { kind: string } | BlockedDecision): d is BlockedDecision {
  return d.kind === "blocked";
}

/**
 * Run the loop until a crossed step returns the run's result (see the module documentation).
 *
 * @example
 * ```ts
 * import { driveJourney } from "./journey_driver.ts";
 * // const r = await driveJourney({ events, boundMs, read, decide, wake, cross });
 * ```
 */
export async function driveJourney<
  Readings,
  Step extends { kind: string },
  Result,
  Wait extends WaitDecision = WaitDecision,
>(loop: JourneyLoop<Readings, Step, Result, Wait>): Promise<Result> {
  const clock = loop.clock ?? SYSTEM_CLOCK;
  const deadlines = new Map<string, number>();
  while (true) {
    const readings = await loop.read();
    const decided = loop.decide(readings);
    if (isBlocked(decided)) {
      throw loop.refuse ? loop.refuse(decided) : blockerError(decided.blockers);
    }
    if (isWait<Wait>(decided)) {
      let deadline = deadlines.get(decided.subject);
      if (deadline === undefined) {
        deadline = clock.now() + loop.boundMs;
        deadlines.set(decided.subject, deadline);
      }
      if (clock.now() > deadline) {
        // no force on timeout: everything is left as it is, the operation stays pending
        throw new SluiceError(
          decided.timeoutCode ?? "UNKNOWN_OUTCOME_TIMEOUT",
          decided.timedOut(loop.boundMs),
        );
      }
      await loop.events.wait(loop.wake(decided, readings, deadline - clock.now()));
      continue;
    }
    const done = await loop.cross(decided as Step, readings);
    if (done !== undefined) return done;
  }
}
