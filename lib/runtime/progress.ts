/**
 * What a journey tells its caller while it runs, instead of printing: typed
 * {@link ProgressEvent}s to an optional callback, and {@link Logger} warnings about what went
 * wrong without changing the result (a lock release that failed after a verified result, a port
 * that would not close). `lib/` never writes to the console; the CLI renders these.
 *
 * Every journey emits the same lifecycle (schema {@link EVENT_SCHEMA_VERSION}, docs/events.md):
 * `started`, then one event per durable boundary (an event with `boundary` set, sent right after
 * the boundary is durable), with detail events between them (an action, a wait's poll), then
 * exactly one of `committed`, `interrupted` or `blocked`. Each event carries the schema version,
 * a sequence number (1, 2, ... per operation run), the time on the journey's injected clock, the
 * operation ID and the journey. One {@link OperationEvents} per run stamps them, and is where a
 * run is cancelled: right after a boundary is durable, or inside a bounded wait, never between a
 * mutation and its checkpoint.
 *
 * @example
 * ```ts
 * import type { ProgressEvent } from "./progress.ts";
 * const onProgress = (e: ProgressEvent) => {
 *   if (e.boundary) console.log(`#${e.seq} ${e.at} durable: ${e.boundary}`);
 *   else if (e.kind === "wait") console.log(`waiting ${e.waited_ms} ms: ${e.message}`);
 * };
 * onProgress({
 *   schema: 1, seq: 3, at: "2026-12-01T00:00:00.000Z", journey: "create",
 *   operation_id: "x", kind: "committed", serial: 2, boundary: "commit",
 *   message: "ownership serial 2",
 * });
 * ```
 * @module
 */
import type { CheckpointName } from "../state/journal.ts";
import type { Stage } from "../protocol/replacement.ts";
import { EXIT, exitCodeFor, SluiceError } from "../errors.ts";
import { pendingCommands } from "../plan/plan.ts";
import { type Clock, isoNow, sleep, SYSTEM_CLOCK } from "./deps.ts";

/**
 * The version of the event schema (docs/events.md, docs/events.schema.json): every event's
 * `schema`. A change to a field's meaning, or a removed field or kind, raises it.
 *
 * @example
 * ```ts
 * import { EVENT_SCHEMA_VERSION, type ProgressEvent } from "./progress.ts";
 * const known = (e: ProgressEvent) => e.schema === EVENT_SCHEMA_VERSION;
 * console.log(EVENT_SCHEMA_VERSION); // 1
 * ```
 */
export const EVENT_SCHEMA_VERSION = 1;

/**
 * One step of an operation as it happens, as the listener receives it: one discriminated union
 * (by `kind`) whose members are written inline, each with the fields every event has (the run's
 * stamp — `schema`, `seq`, `at`, `journey`, `operation_id` — and `message`, `boundary`).
 * docs/events.md is its schema (docs/events.schema.json the same as a JSON Schema); a journey
 * sends an event without its stamp, which its run adds.
 */
export type ProgressEvent =
  & {
    /** The schema version ({@link EVENT_SCHEMA_VERSION}). */
    schema: typeof EVENT_SCHEMA_VERSION;
    /** 1, 2, 3, ... within one operation run (one apply, resume or day-two command's journey). */
    seq: number;
    /** When the event was sent, on the journey's clock (RFC 3339, UTC). */
    at: string;
    /** The journey the operation run belongs to. */
    journey:
      | "create"
      | "runner_removal"
      | "destroy"
      | "connector_change"
      | "replacement"
      | "restart"
      | "skip_record"
      | "abandon"
      | "accept_retention_loss";
    /** The operation the event belongs to. */
    operation_id: string;
    /** One line for a human. */
    message: string;
    /**
     * Set on the event that marks a durable boundary (sent right after it is durable): the step
     * of the journey's table (`intent`, `create_topic`, `old_closed`, `commit`, ...).
     */
    boundary?: string;
  }
  & (
    /**
     * The run began: a new operation (`continued: false`, its intent follows) or a pending one
     * continued from its last durable boundary (`apply --plan` again, `state resume`).
     */
    | {
      kind: "started";
      /** Whether a pending operation is continued. */
      continued: boolean;
    }
    /** The operation's intent was recorded (the write-ahead record before any mutation). */
    | { kind: "intent" }
    /** A replacement's journal checkpoint was durably recorded (a boundary was crossed). */
    | {
      kind: "checkpoint";
      /** The checkpoint recorded. */
      checkpoint: CheckpointName;
    }
    /** A provider action was carried out (TERM, remove, create, start). */
    | {
      kind: "action";
      /** The action. */
      action: "term" | "remove" | "create" | "start";
    }
    /** An apply created a resource: a topic, the state volume, the group's offsets, a container. */
    | {
      kind: "created";
      /** What was created (`offsets`: the group positioned at its initial offsets). */
      resource: "topic" | "volume" | "offsets" | "container";
      /** The topic, volume, group or container name. */
      name: string;
    }
    /**
     * A continued apply found a resource this operation had already created (its response was
     * lost) and adopted it by the identity its intent recorded.
     */
    | {
      kind: "adopted";
      /** What was adopted. */
      resource: "topic" | "volume" | "container";
      /** The topic, volume or container name. */
      name: string;
    }
    /** A runner created by an apply reported RUNNING for its generation and plan. */
    | {
      kind: "ready";
      /** The runner's container name. */
      container: string;
    }
    /** The operation committed (its last write): the run's last event when it succeeds. */
    | {
      kind: "committed";
      /** The ownership serial committed (null for a journey that commits no ownership). */
      serial: number | null;
    }
    /**
     * The run stopped with its operation left pending, resumable from `last_boundary`:
     * cancelled (`CANCELLED`), a provider that stopped answering, a lost lock or
     * acknowledgement, a wait that timed out. The run's last event.
     */
    | {
      kind: "interrupted";
      /** The stable error code (`CANCELLED`, `ENV_KAFKA_UNREACHABLE`, `TIMEOUT`, ...). */
      code: string;
      /** The last boundary this run crossed (null: none in this run). */
      last_boundary: string | null;
    }
    /**
     * The evidence did not authorize the next step (a `BLOCKED_*` or `PLAN_*` code): nothing
     * was done past `last_boundary`. The run's last event.
     */
    | {
      kind: "blocked";
      /** The stable code of the (first) blocker. */
      code: string;
      /** The last boundary this run crossed (null: none in this run). */
      last_boundary: string | null;
    }
    /** A resume was authorized and recorded at the operation's last durable boundary. */
    | {
      kind: "resume_authorized";
      /** The authorization's UUID. */
      authorization_id: string;
      /** The durable stage the operation resumes from. */
      stage: Stage;
    }
    /** An operator's explicit decision about a pending operation was recorded in the audit. */
    | {
      kind: "decision";
      /** Which decision. */
      decision: "abandon" | "accept_retention_loss";
    }
    /** Committed positions were moved by an operator's recorded decision (never otherwise). */
    | {
      kind: "offsets_moved";
      /** How many partitions moved. */
      partitions: number;
    }
    /**
     * A step of a connector operation: a create, update or delete of one exact connector (or
     * one found already done by an exact read), the wait for it to run.
     */
    | {
      kind: "connector";
      /** The step (`create_connector`, `update_connector`, `delete_connector`, `running`, ...). */
      step: string;
    }
    /**
     * One poll of a bounded wait (a runner closing, a runner becoming ready): sent once per
     * poll, with the time waited so far on the journey's clock and the bound after which the
     * journey stops waiting and leaves everything as it is.
     */
    | {
      kind: "wait";
      /** Milliseconds waited so far (on the journey's clock). */
      waited_ms: number;
      /** The bound in milliseconds. */
      bound_ms: number;
    }
  );

/** The journey an operation run belongs to. */
export type Journey = ProgressEvent["journey"];

/** The fields a run's {@link OperationEvents} stamps on every event. */
type StampField = "schema" | "seq" | "at" | "journey" | "operation_id";

/**
 * What a journey says about one step (an event without its stamp); its run stamps it into a
 * {@link ProgressEvent}.
 */
export type ProgressEventBody = ProgressEvent extends infer E
  ? E extends ProgressEvent ? Omit<E, StampField> : never
  : never;

/** The progress callback of the journeys. */
export type ProgressListener = (event: ProgressEvent) => void;

// the logger is declared with the other outside dependencies (deps.ts, below this module):
// re-exported here, beside the events, for the SDK and mod.ts
export { type Logger, SILENT_LOGGER } from "./deps.ts";

/** What one operation run's {@link OperationEvents} needs. */
export interface OperationEventsOptions {
  /** The journey. */
  journey: Journey;
  /** The operation the run carries out. */
  operationId: string;
  /** Where the stamped events go (none: they are only counted). */
  listener?: ProgressListener;
  /** The journey's clock (timestamps and waits; default: the system clock). */
  clock?: Clock;
  /** Cancels the run at its next durable boundary or inside a bounded wait. */
  signal?: AbortSignal;
  /** The plan file the operation runs (named in the commands a cancelled run gives). */
  planSha256?: string | null;
}

/**
 * The events of one operation run: stamps every event (schema, sequence number, time on the
 * journey's clock, operation, journey), remembers the last boundary crossed, sends exactly one
 * last event (`committed`, `interrupted` or `blocked`), and is where the run is cancelled: right
 * after a durable boundary's event ({@link OperationEvents.boundary}), never between a mutation
 * and its checkpoint, or inside a bounded wait ({@link OperationEvents.wait}), where a timeout
 * would leave the operation too.
 *
 * @example
 * ```ts
 * import { OperationEvents } from "./progress.ts";
 * const seen: string[] = [];
 * const run = new OperationEvents({
 *   journey: "create", operationId: "op", listener: (e) => seen.push(`${e.seq} ${e.kind}`),
 * });
 * await run.run(async () => {
 *   run.started(false, "create op");
 *   run.boundary({ kind: "intent", boundary: "intent", message: "recorded" });
 *   run.committed(1, "ownership serial 1");
 * });
 * console.log(seen); // ["1 started", "2 intent", "3 committed"]
 * ```
 */
export class OperationEvents {
  readonly #o: OperationEventsOptions;
  #seq = 0;
  #last: string | null = null;
  #recorded = false;
  #ended = false;

  constructor(options: OperationEventsOptions) {
    this.#o = options;
  }

  /** The cancellation signal of the run, if any. */
  get signal(): AbortSignal | undefined {
    return this.#o.signal;
  }

  /** The last boundary this run crossed (null: none yet). */
  get lastBoundary(): string | null {
    return this.#last;
  }

  /** Stamp and send one event. */
  emit(body: ProgressEventBody): void {
    const event = {
      ...body,
      schema: EVENT_SCHEMA_VERSION,
      seq: ++this.#seq,
      at: isoNow(this.#o.clock ?? SYSTEM_CLOCK),
      journey: this.#o.journey,
      operation_id: this.#o.operationId,
    } as ProgressEvent;
    this.#o.listener?.(event);
  }

  /**
   * The run's first event; a cancelled run that has recorded nothing stops here. A continued
   * run starts from a recorded operation.
   */
  started(continued: boolean, message: string): void {
    this.#recorded ||= continued;
    this.emit({ kind: "started", continued, message });
    this.throwIfCancelled();
  }

  /**
   * A durable boundary was crossed (call right after its write or mutation is durable): its
   * event, then the run stops if it was cancelled.
   */
  boundary(body: ProgressEventBody & { boundary: string }): void {
    this.#recorded = true;
    this.#last = body.boundary;
    this.emit(body);
    this.throwIfCancelled();
  }

  /** The operation committed: the run's last event (never cancelled: it is done). */
  committed(serial: number | null, message: string, boundary = "commit"): void {
    this.#last = boundary;
    this.#ended = true;
    this.emit({ kind: "committed", serial, boundary, message });
  }

  /**
   * The run's last event for an error or outcome that ends it without a commit: `blocked` for
   * a blocker's code, `interrupted` for anything else (the operation stays pending). Sent once.
   */
  end(error: unknown): void {
    const code = error instanceof SluiceError ? error.code : "INTERNAL";
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    const blocked = error instanceof SluiceError && exitCodeFor(error) === EXIT.BLOCKED;
    this.stopped(blocked ? "blocked" : "interrupted", code, message);
  }

  /** {@link OperationEvents.end} for `error`, then `error` (to throw: `throw events.ended(e)`). */
  ended(error: unknown): unknown {
    this.end(error);
    return error;
  }

  /** The run's last event for an outcome without a commit (a result, not an error). Sent once. */
  stopped(kind: "blocked" | "interrupted", code: string, message: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.emit({ kind, code, last_boundary: this.#last, message });
  }

  /** Run the journey's body; an error ends the run ({@link OperationEvents.end}) and is rethrown. */
  async run<T>(body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      this.end(error);
      throw error;
    }
  }

  /** Throw `CANCELLED` if the run was cancelled (its `interrupted` event sent first). */
  throwIfCancelled(): void {
    if (!this.#o.signal?.aborted) return;
    const error = this.cancelled();
    this.end(error);
    throw error;
  }

  /** The `CANCELLED` error of this run: where it stopped and how to go on. */
  cancelled(): SluiceError {
    const { journey, operationId } = this.#o;
    if (!this.#recorded) {
      return new SluiceError(
        "CANCELLED",
        `${journey} cancelled before its intent was recorded: nothing was done`,
        { evidence: { journey, operation_id: null } },
      );
    }
    const cmds = pendingCommands({
      operation_id: operationId,
      kind: journey === "replacement" ? "runner_update" : journey,
      status: "interrupted",
      last_boundary: this.#last,
      plan_sha256: this.#o.planSha256 ?? null,
    });
    return new SluiceError(
      "CANCELLED",
      `${journey} operation ${operationId} cancelled after ${
        this.#last ?? "its last recorded boundary"
      }: it stays pending; continue it with '${cmds.continue}' or abandon it ('${cmds.abandon}')`,
      {
        evidence: {
          journey,
          operation_id: operationId,
          last_boundary: this.#last,
          commands: cmds,
        },
      },
    );
  }

  /**
   * A bounded wait that the run's cancellation ends at once (`CANCELLED`); what it waited for is
   * left to finish or fail on its own, unobserved.
   */
  wait<T>(waiting: Promise<T>): Promise<T> {
    const signal = this.#o.signal;
    if (!signal) return waiting;
    if (signal.aborted) {
      waiting.catch(() => {});
      return Promise.reject(this.cancelled());
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        waiting.catch(() => {});
        reject(this.cancelled());
      };
      signal.addEventListener("abort", onAbort, { once: true });
      waiting.then(
        (v) => {
          signal.removeEventListener("abort", onAbort);
          resolve(v);
        },
        (e) => {
          signal.removeEventListener("abort", onAbort);
          reject(e);
        },
      );
    });
  }

  /** Sleep on the journey's clock, ended at once by cancellation (a real timer is cleared). */
  sleep(ms: number): Promise<void> {
    const clock = this.#o.clock ?? SYSTEM_CLOCK;
    const signal = this.#o.signal;
    if (clock.sleep || !signal) return this.wait(sleep(clock, ms));
    if (signal.aborted) return Promise.reject(this.cancelled());
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(this.cancelled());
      };
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}

/**
 * The short label of an event for a one-line rendering: the checkpoint, the action or the
 * resource created, `commit` for a commit, `resume` for a resume authorization, `continued` for
 * a continued run's start, the kind and code of an interruption or a block, else the kind.
 *
 * @example
 * ```ts
 * import { progressLabel, type ProgressEvent } from "./progress.ts";
 * const show = (e: ProgressEvent) => console.log(`${progressLabel(e).padEnd(20)} ${e.message}`);
 * show({
 *   schema: 1, seq: 4, at: "2026-12-01T00:00:00.000Z", journey: "replacement",
 *   operation_id: "x", kind: "action", action: "term", message: "TERM requested",
 * });
 * ```
 */
export function progressLabel(e: ProgressEvent): string {
  switch (e.kind) {
    case "started":
      return e.continued ? "continued" : "started";
    case "interrupted":
    case "blocked":
      return `${e.kind} ${e.code}`;
    case "checkpoint":
      return e.checkpoint;
    case "action":
      return e.action;
    case "created":
      return e.resource;
    case "committed":
      return "commit";
    case "resume_authorized":
      return "resume";
    case "connector":
      return e.step;
    default:
      return e.kind;
  }
}
