/**
 * Private helper: one call of a fake port, in one world transaction. The world's processes
 * are first moved to the current world time; a pending failure hook for this call is taken;
 * the call runs; a mutation is logged. The transaction (with the hook consumed) is durable
 * before the call returns — so a caller killed right after the call has really lost the
 * response — and only then does an injected failure or lost response reach the caller.
 * @module
 */
import type { Clock } from "./clock.ts";
import type { IdSource } from "./ids.ts";
import { advanceWorld } from "./lifecycle.ts";
import type { CallHook, MutationRecord, World, WorldStore } from "./world.ts";
import { logMutation } from "./world.ts";

/** What every fake port works with. */
export interface FakeContext {
  store: WorldStore;
  clock: Clock;
  ids: IdSource;
}

/** An error a fake provider gives, shaped like the real client's (dockerode has `statusCode`). */
export class FakeProviderError extends Error {
  /** The HTTP status Docker would answer with, when it is a Docker error. */
  readonly statusCode?: number;
  /** True when a failure hook made it (a "lost response" or an injected failure). */
  readonly injected: boolean;

  constructor(message: string, options: { statusCode?: number; injected?: boolean } = {}) {
    super(message);
    this.name = "FakeProviderError";
    this.statusCode = options.statusCode;
    this.injected = options.injected ?? false;
  }
}

/** A Docker error as dockerode words it: `(HTTP code 404) no such container - <message>`. */
export function dockerError(statusCode: number, message: string): FakeProviderError {
  const kind: Record<number, string> = {
    304: "container already started",
    404: "no such container",
    409: "unexpected",
  };
  return new FakeProviderError(
    `(HTTP code ${statusCode}) ${kind[statusCode] ?? "server error"} - ${message} `,
    { statusCode },
  );
}

function takeCallHook(w: World, op: string, key: string): CallHook | null {
  const i = w.hooks.findIndex((h) =>
    h.kind === "call" && h.op === op && (h.match === null || h.match === key)
  );
  if (i < 0) return null;
  const h = w.hooks[i] as CallHook;
  if (--h.times <= 0) w.hooks.splice(i, 1);
  return h;
}

/**
 * Returned (not thrown) by a call that fails but leaves a trace, as Docker keeps the error of
 * a failed start on the container: the change is kept and the error thrown afterwards.
 */
export class FailedWithTrace {
  constructor(readonly error: Error) {}
}

type Outcome<T> =
  | { kind: "ok"; value: T; lost: CallHook | null }
  | { kind: "failed"; hook: CallHook }
  | { kind: "traced"; error: Error };

/**
 * Run one port call. `mutation` calls are logged. `fn` checks before it changes anything and
 * throws to refuse; a refused call keeps nothing (not even the time it took). `injected` turns
 * an armed failure into the error the real adapter gives (default: a 500 `FakeProviderError`).
 */
export function portCall<T>(
  ctx: FakeContext,
  by: MutationRecord["by"],
  op: string,
  key: string,
  mutation: boolean,
  fn: (w: World, now: number) => T | FailedWithTrace,
  injected?: (effect: CallHook["effect"], message: string) => Error,
): T {
  const outcome = ctx.store.transact((w): Outcome<T> => {
    const now = ctx.clock.now();
    advanceWorld(w, now, ctx.ids);
    const hook = takeCallHook(w, op, key);
    // an injected failure happens before anything: only the consumed hook is kept
    if (hook?.effect === "fail") return { kind: "failed", hook };
    const value = fn(w, now);
    if (value instanceof FailedWithTrace) return { kind: "traced", error: value.error };
    if (mutation) logMutation(w, now, by, op, key);
    return { kind: "ok", value, lost: hook };
  });
  if (outcome.kind === "traced") throw outcome.error;
  if (outcome.kind === "failed") {
    throw injected?.("fail", outcome.hook.message) ??
      new FakeProviderError(outcome.hook.message, { statusCode: 500, injected: true });
  }
  if (outcome.lost) {
    // applied and durable; the caller just never hears about it
    throw injected?.("lose_response", outcome.lost.message) ??
      new FakeProviderError(outcome.lost.message, { statusCode: 500, injected: true });
  }
  return outcome.value;
}
