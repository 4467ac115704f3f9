/**
 * What a journey tells its caller while it runs, instead of printing: typed
 * {@link ProgressEvent}s (each durable boundary crossed, each provider action, each resource
 * created, each poll of a bounded wait) to an optional callback, and {@link Logger} warnings
 * about what went wrong without changing the result (a lock release that failed after a
 * verified result, a port that would not close). `lib/` never writes to the console; the CLI
 * renders these.
 *
 * @example
 * ```ts
 * import type { ProgressEvent } from "./progress.ts";
 * const onProgress = (e: ProgressEvent) => {
 *   if (e.kind === "checkpoint") console.log(`durable: ${e.checkpoint}`);
 *   else if (e.kind === "wait") console.log(`waiting ${e.waited_ms} ms: ${e.message}`);
 * };
 * onProgress({ kind: "committed", operation_id: "x", serial: 2, message: "ownership serial 2" });
 * ```
 * @module
 */
import type { CheckpointName } from "../state/journal.ts";
import type { Stage } from "../protocol/replacement.ts";

/**
 * One step of an operation as it happens. Every event names its operation and carries a
 * one-line `message` for a human; the other fields are for a program.
 */
export type ProgressEvent =
  | IntentEvent
  | ContinuedEvent
  | CheckpointEvent
  | ActionEvent
  | CreatedEvent
  | AdoptedEvent
  | ReadyEvent
  | CommittedEvent
  | ResumeAuthorizedEvent
  | DecisionEvent
  | OffsetsMovedEvent
  | ConnectorEvent
  | WaitEvent;

/** What every progress event carries. */
export interface ProgressBase {
  /** The operation the event belongs to. */
  operation_id: string;
  /** One line for a human. */
  message: string;
}

/** The operation's intent was recorded (the write-ahead record before any mutation). */
export interface IntentEvent extends ProgressBase {
  /** Discriminant. */
  kind: "intent";
}

/**
 * A pending operation continues from its recorded intent (`apply --plan` with the same plan
 * file after an interruption).
 */
export interface ContinuedEvent extends ProgressBase {
  /** Discriminant. */
  kind: "continued";
}

/** A replacement's journal checkpoint was durably recorded (a boundary was crossed). */
export interface CheckpointEvent extends ProgressBase {
  /** Discriminant. */
  kind: "checkpoint";
  /** The checkpoint recorded. */
  checkpoint: CheckpointName;
}

/** A replacement's provider action was carried out (TERM, remove, create, start). */
export interface ActionEvent extends ProgressBase {
  /** Discriminant. */
  kind: "action";
  /** The action. */
  action: "term" | "remove" | "create" | "start";
}

/** An apply created a resource: a topic, the state volume, the group's offsets, a container. */
export interface CreatedEvent extends ProgressBase {
  /** Discriminant. */
  kind: "created";
  /** What was created (`offsets`: the group positioned at its initial offsets). */
  resource: "topic" | "volume" | "offsets" | "container";
  /** The topic, volume, group or container name. */
  name: string;
}

/**
 * A continued apply found a resource this operation had already created (its response was lost)
 * and adopted it by the identity its intent recorded.
 */
export interface AdoptedEvent extends ProgressBase {
  /** Discriminant. */
  kind: "adopted";
  /** What was adopted. */
  resource: "topic" | "volume" | "container";
  /** The topic, volume or container name. */
  name: string;
}

/** A runner created by an apply reported RUNNING for its generation and plan. */
export interface ReadyEvent extends ProgressBase {
  /** Discriminant. */
  kind: "ready";
  /** The runner's container name. */
  container: string;
}

/** Ownership was committed (an apply's last write). */
export interface CommittedEvent extends ProgressBase {
  /** Discriminant. */
  kind: "committed";
  /** The ownership serial committed. */
  serial: number;
}

/** A resume was authorized and recorded at the operation's last durable boundary. */
export interface ResumeAuthorizedEvent extends ProgressBase {
  /** Discriminant. */
  kind: "resume_authorized";
  /** The authorization's UUID. */
  authorization_id: string;
  /** The durable stage the operation resumes from. */
  stage: Stage;
}

/** An operator's explicit decision about a pending operation was recorded in the audit. */
export interface DecisionEvent extends ProgressBase {
  /** Discriminant. */
  kind: "decision";
  /** Which decision. */
  decision: "abandon" | "accept_retention_loss";
}

/** Committed positions were moved by an operator's recorded decision (never otherwise). */
export interface OffsetsMovedEvent extends ProgressBase {
  /** Discriminant. */
  kind: "offsets_moved";
  /** How many partitions moved. */
  partitions: number;
}

/**
 * A step of a connector operation: its intent, a create, update or delete of one exact
 * connector (or one found already done by an exact read), its commit, the wait for it to run.
 */
export interface ConnectorEvent extends ProgressBase {
  /** Discriminant. */
  kind: "connector";
  /** The step (`intent`, `create_connector`, `update_connector`, `delete_connector`, ...). */
  step: string;
}

/**
 * One poll of a bounded wait (a runner closing, a runner becoming ready): sent once per poll,
 * with the time waited so far on the journey's clock and the bound after which the journey
 * stops waiting and leaves everything as it is.
 */
export interface WaitEvent extends ProgressBase {
  /** Discriminant. */
  kind: "wait";
  /** Milliseconds waited so far (on the journey's clock). */
  waited_ms: number;
  /** The bound in milliseconds. */
  bound_ms: number;
}

/** The progress callback of the journeys. */
export type ProgressListener = (event: ProgressEvent) => void;

/** Where warnings go that do not change a result. */
export interface Logger {
  /** A warning: something failed without changing the result. */
  warn(message: string): void;
}

/**
 * The logger used when none is given: it drops warnings (lib never prints).
 *
 * @example
 * ```ts
 * import { SILENT_LOGGER } from "./progress.ts";
 * SILENT_LOGGER.warn("nobody hears this");
 * ```
 */
export const SILENT_LOGGER: Logger = { warn: () => {} };

/**
 * The short label of an event for a one-line rendering: the checkpoint, the action or the
 * resource created, `commit` for a commit, `resume` for a resume authorization, else the kind.
 *
 * @example
 * ```ts
 * import { progressLabel, type ProgressEvent } from "./progress.ts";
 * const show = (e: ProgressEvent) => console.log(`${progressLabel(e).padEnd(20)} ${e.message}`);
 * show({ kind: "action", operation_id: "x", action: "term", message: "TERM requested" });
 * ```
 */
export function progressLabel(e: ProgressEvent): string {
  switch (e.kind) {
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
