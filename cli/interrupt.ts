/**
 * Ctrl-C (and TERM) during a command that changes something (`apply`, `state resume`, `restart`,
 * `skip-record`, ...): the first SIGINT or SIGTERM aborts the run's `AbortSignal`, so the
 * journey stops right after its next durable boundary, or at once inside a bounded wait, with
 * `CANCELLED` (exit 8) and its operation pending (docs/events.md); a line on stderr says so at
 * once. A second signal exits at once without waiting (130 for SIGINT, 143 for SIGTERM): that is
 * like a SIGKILL — the operation stays pending from its last durable boundary and continues the
 * same way (a local lock left behind is broken with `--break-stale-lock`, as after any kill).
 *
 * The listeners live only while the command runs: {@link onInterrupt} returns a `Disposable`
 * that removes them.
 *
 * @example
 * ```ts
 * import { onInterrupt } from "./interrupt.ts";
 * {
 *   using interrupt = onInterrupt();
 *   // await project.apply({ plan, signal: interrupt.signal });
 *   console.log(interrupt.signal.aborted); // false
 * }
 * ```
 * @module
 */
import { EXIT } from "../mod.ts";

/** The signals that cancel a run, and the exit status of a second one (128 + its number). */
const SIGNALS = [["SIGINT", 130], ["SIGTERM", 143]] as const;

/** The signals a command listens to while it runs. */
export type InterruptSignal = typeof SIGNALS[number][0];

/** What {@link onInterrupt} returns: the run's signal; disposing it removes the listeners. */
export interface Interrupt extends Disposable {
  /** Aborted by the first SIGINT or SIGTERM. */
  readonly signal: AbortSignal;
}

/** What {@link onInterrupt} does besides listening (a test replaces both). */
export interface InterruptOptions {
  /** Where the line a first signal prints goes (default: stderr). */
  say?: (line: string) => void;
  /** How a second signal ends the process (default: `Deno.exit`). */
  exit?: (status: number) => void;
}

/**
 * The line a first signal prints: what happens now and how to go on (the same on a terminal and
 * under `-o json`, where stdout stays the one JSON document).
 */
export function interruptLine(signal: InterruptSignal): string {
  return `sluice: ${signal} received: stopping after the next durable step (exit ${EXIT.CANCELLED}, CANCELLED); the operation stays pending (the error that follows names how to continue it: 'sluice state resume', the same 'sluice apply --plan FILE', or the same day-two command). ${
    signal === "SIGINT" ? "Ctrl-C" : "A second TERM"
  } again exits at once, like a kill: the same commands still continue it.`;
}

/**
 * Listen to SIGINT and SIGTERM until disposed (see the module documentation).
 *
 * @example
 * ```ts
 * import { onInterrupt } from "./interrupt.ts";
 * using interrupt = onInterrupt({ say: (l) => console.error(l) });
 * interrupt.signal.addEventListener("abort", () => console.error("cancelling"));
 * ```
 */
export function onInterrupt(options: InterruptOptions = {}): Interrupt {
  const say = options.say ?? ((line: string) => console.error(line));
  const exit = options.exit ?? ((status: number) => Deno.exit(status));
  const ctrl = new AbortController();
  const listeners = SIGNALS.map(([name, status]) => {
    const listener = () => {
      if (ctrl.signal.aborted) return exit(status);
      say(interruptLine(name));
      ctrl.abort();
    };
    Deno.addSignalListener(name, listener);
    return [name, listener] as const;
  });
  return {
    signal: ctrl.signal,
    [Symbol.dispose]() {
      for (const [name, listener] of listeners) Deno.removeSignalListener(name, listener);
    },
  };
}
