/**
 * The history (audit) envelope: an append-only list of sealed events. Its envelope version
 * is 1 while it holds only incidents and commits, becomes 2 only when it holds a resume
 * authorization, 3 only when it holds a `runner_completed` receipt, 4 only when it holds
 * an operator's decision (`operator_decision`) or an abandonment (`operation_abandoned`), and 5
 * only when it holds a day-two audit event (`runner_restarted`, `record_skipped`), 6 only when it
 * holds an acknowledged drift (`drift_acknowledged`). Earlier events
 * keep their exact bytes and checksums: appending never re-encodes them.
 *
 * @example
 * ```ts
 * import { appendEvents, emptyHistory } from "./history.ts";
 * const h = appendEvents(emptyHistory("orders", null), [{
 *   kind: "ownership_committed", operation_id: "op", recorded_at: "2026-01-01T00:00:00Z",
 *   serial: 1, state_checksum: "0".repeat(64),
 * }]);
 * console.log(h.version); // 1
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { Json } from "./_canonical.ts";
import type { HistoryRow, StoredHistoryRow } from "./primitive.ts";
import {
  type ControlDocument,
  type Incident,
  type OperationIntent,
  type OperatorDecision,
  type ResumeAuthorization,
  seal,
  type SealedEntry,
  unseal,
} from "./journal.ts";

/** The receipt archived when a runner update is finalized (`kind: "runner_completed"`). */
export interface CompletionReceipt {
  /** A runner replacement completed. */
  kind: "runner_completed";
  /** The completed operation. */
  operation_id: string;
  /** When the completion was recorded (RFC 3339). */
  recorded_at: string;
  /** The model whose runner was replaced. */
  model: string;
  /** The sha256 of the artifact before. */
  prior_artifact_sha256: string;
  /** The sha256 of the artifact after. */
  result_artifact_sha256: string;
  /** The ownership checksum before. */
  prior_state_checksum: string;
  /** The ownership checksum after. */
  result_state_checksum: string;
  /** The ownership serial before. */
  prior_serial: number;
  /** The ownership serial after. */
  result_serial: number;
  /** The operation's recorded intent. */
  intent: OperationIntent;
  /** The full terminal control, frozen. */
  terminal_control: ControlDocument;
  /** The interruptions it went through. */
  incidents: Incident[];
  /** The resumes that continued it. */
  resume_history: ResumeAuthorization[];
}

/**
 * The audit record of an abandoned operation: who decided it, why, what the runtime looked like
 * (read-only evidence), and the operation as it was left, frozen. Nothing was mutated.
 */
export interface OperationAbandoned {
  /** Discriminant. */
  kind: "operation_abandoned";
  /** The abandoned operation's UUID. */
  operation_id: string;
  /** Its kind (`runner_update`, `create`, ...). */
  operation_kind: string;
  /** Who abandoned it. */
  actor: string;
  /** When (ISO 8601). */
  recorded_at: string;
  /** Why it can never continue. */
  reason: string;
  /** The read-only observation of the runtime as it was left. */
  evidence: { [key: string]: Json };
  /** The operation's recorded intent. */
  intent: OperationIntent;
  /** The control as it was abandoned. */
  terminal_control: ControlDocument;
}

/**
 * The stopped container a day-two event is about, exactly as observed under the lock: its
 * identity, its generation's labels and the stop Docker reports (`finished_at` names the stop:
 * Docker changes it at every stop, and keeps it while the container runs again).
 */
export interface StoppedContainer {
  /** The container's exact ID. */
  id: string;
  /** Its name. */
  name: string;
  /** Its generation label. */
  generation: string | null;
  /** The operation that created it (label), or null. */
  operation_id: string | null;
  /** The artifact label (the owned artifact's sha256). */
  artifact_sha256: string | null;
  /** The mounted plan's sha256 (equal to its plan label). */
  plan_sha256: string | null;
  /** The image it was created from. */
  image_id: string;
  /** The state volume's instance UUID as its mount shows it. */
  volume_instance: string | null;
  /** The exit code Docker reports. */
  exit_code: number;
  /** Whether Docker reports an OOM kill. */
  oom_killed: boolean;
  /** The exit's kind in the runner's exit table (`closed`, `killed`, `decode`, ...), or null. */
  exit_kind: string | null;
  /** The runner's own stop reason from its status file (`SIGTERM`, `DECODE_WRONG_TYPE`), or null. */
  runner_reason: string | null;
  /** When it last started (Docker's StartedAt). */
  started_at: string;
  /** When it stopped (Docker's FinishedAt): with the ID, what names this stop. */
  finished_at: string;
}

/**
 * A stopped runner started again through sluice (`sluice restart`): who, why, the exact container
 * and stop, the group's state and the committed offsets when it was started. Recorded before
 * the start: the start is what this event authorizes.
 */
export interface RunnerRestarted {
  /** Discriminant. */
  kind: "runner_restarted";
  /** This event's UUID. */
  event_id: string;
  /** Who restarted it. */
  actor: string;
  /** When (RFC 3339). */
  recorded_at: string;
  /** Why (the operator's words). */
  reason: string;
  /** The model. */
  model: string;
  /** Its application ID (the consumer group). */
  application_id: string;
  /** The stopped container. */
  container: StoppedContainer;
  /** The consumer group's state when the start was authorized (`Empty`). */
  group_state: string;
  /** Whether sluice waited for a killed runner's member to leave the group first. */
  waited_for_group: boolean;
  /** Committed offset per input partition (decimal strings) at the start. */
  committed: { [partition: string]: string };
  /** The `record_skipped` event this restart follows, or null. */
  after_skip: string | null;
  /** A set's instance restarted (absent for a single runner). */
  instance?: number;
  /** That instance's Docker endpoint (null: the one daemon; absent for a single runner). */
  endpoint?: string | null;
}

/**
 * A record the runner cannot decode, skipped on the operator's decision (`sluice skip-record`):
 * recorded before the one partition's committed offset moves from `offset` to `offset + 1`.
 */
export interface RecordSkipped {
  /** Discriminant. */
  kind: "record_skipped";
  /** This event's UUID. */
  event_id: string;
  /** Who decided it. */
  actor: string;
  /** When (RFC 3339). */
  recorded_at: string;
  /** Why (the operator's words). */
  reason: string;
  /** The model. */
  model: string;
  /** Its application ID (the consumer group). */
  application_id: string;
  /** The stopped container (its stop is the decode failure). */
  container: StoppedContainer;
  /** The record's coordinates, as the runner reported them. */
  record: { topic: string; partition: number; offset: string };
  /** The runner's reason and rule (`DECODE_WRONG_TYPE`, field and rule), never a value. */
  failure: { reason: string; field: string | null; rule: string | null };
}

/** A change to an owned runner made outside sluice. */
export type RunnerDrift =
  /** A runner started again outside sluice. */
  | {
    /** What changed. */
    kind: "started_outside_sluice";
    /** The container's name. */
    container: string;
    /** Its exact ID. */
    container_id: string;
    /** When it stopped (Docker's FinishedAt), after its generation was committed. */
    stopped_at: string;
    /** When it was started again (Docker's StartedAt). */
    started_at: string;
    /** When sluice committed its generation (the history's event). */
    committed_at: string;
    /** One line a person can act on. */
    summary: string;
  }
  /** Offsets of the runner's group moved while it was not consuming. */
  | {
    /** What changed. */
    kind: "offsets_moved_while_stopped";
    /** The container's name. */
    container: string;
    /** Its exact ID. */
    container_id: string;
    /** The stop the move happened after (Docker's FinishedAt). */
    stopped_at: string;
    /** Its StartedAt (the run that found the move, for a running container). */
    started_at: string;
    /** Whether the container runs (it started on the moved offsets). */
    running: boolean;
    /**
     * The evidence compared: the clean close's vector with the group now (`close_vector`), the
     * previous close's vector with this start's (`start_vector`), or this start's vector with the
     * group now after another stop (`rewound_below_start`).
     */
    evidence: "close_vector" | "start_vector" | "rewound_below_start";
    /** When the runner recorded the `before` vector (RFC 3339, from its status file), or null. */
    recorded_at: string | null;
    /** Each partition that moved, by partition. */
    partitions: Array<{
      /** The input topic. */
      topic: string;
      /** The partition. */
      partition: number;
      /** The offset the runner recorded (decimal; null when it recorded none for it). */
      before: string | null;
      /** The offset found (decimal; null when the group has none). */
      after: string | null;
    }>;
    /** One line a person can act on. */
    summary: string;
  };

/** A runner started outside sluice (one kind of {@link RunnerDrift}). */
export type StartedOutsideSluice = Extract<RunnerDrift, { kind: "started_outside_sluice" }>;

/** Offsets moved while the runner was stopped (one kind of {@link RunnerDrift}). */
export type OffsetsMovedWhileStopped = Extract<
  RunnerDrift,
  { kind: "offsets_moved_while_stopped" }
>;

/**
 * Drift an operator accepted explicitly (`sluice acknowledge-drift`): exactly the drifts found
 * (`lib/validation/drift.ts`: a hand start with the container's ID, FinishedAt and StartedAt;
 * moved offsets with each partition's offset before and after), who, why and when. `plan` and
 * `status` no longer report those drifts; a later change is a new drift.
 */
export interface DriftAcknowledged {
  /** Discriminant. */
  kind: "drift_acknowledged";
  /** This event's UUID. */
  event_id: string;
  /** Who acknowledged it. */
  actor: string;
  /** When (RFC 3339). */
  recorded_at: string;
  /** Why (the operator's words). */
  reason: string;
  /** The model. */
  model: string;
  /** Its application ID (the consumer group). */
  application_id: string;
  /** The container as Docker reported it. */
  container: {
    id: string;
    name: string;
    running: boolean;
    started_at: string;
    finished_at: string;
  };
  /** The drifts acknowledged, as found. */
  drifts: RunnerDrift[];
}

/** The day-two audit events: recorded with no pending operation. */
export type DayTwoEvent = RunnerRestarted | RecordSkipped | DriftAcknowledged;

/** An event of the history envelope. */
export type HistoryEvent =
  | DayTwoEvent
  | ({ kind: "incident" } & Incident)
  | ({ kind: "resume_authorized" } & ResumeAuthorization)
  | CompletionReceipt
  | OperationAbandoned
  | ({ kind: "operator_decision" } & OperatorDecision)
  | OwnershipCommitted;

/**
 * An ownership commit of a non-runner operation (create, connector change, runner removal) or of
 * an operation-less write, archived in the same durable write as the ownership it records.
 */
export interface OwnershipCommitted {
  /** Event kind. */
  kind: "ownership_committed";
  /** The committed operation, or null for an operation-less write. */
  operation_id: string | null;
  /** When (RFC 3339). */
  recorded_at: string;
  /** The ownership serial committed. */
  serial: number;
  /** The committed ownership's checksum. */
  state_checksum: string;
  /**
   * The sha256 of the plan file the operation applied (its intent's `reviewed_plan_sha256`):
   * what a later `apply --plan` of that file names. Absent for an operation-less write, an
   * intent with no plan file, and in events written before sluice recorded it.
   */
  plan_sha256?: string;
}

/**
 * The history envelope versions this sluice reads and writes: 1, 2 once it holds a resume
 * authorization, 3 once it holds a completion receipt, 4 once it holds an operator's decision
 * or an abandonment, 5 once it holds a day-two audit event, 6 once it holds an acknowledged drift.
 */
export const HISTORY_VERSIONS: readonly HistoryDocument["version"][] = [1, 2, 3, 4, 5, 6];

/** The stored history envelope. */
export interface HistoryDocument {
  /** Document format name. */
  format: "sluice.history";
  /** Envelope version. */
  version: 1 | 2 | 3 | 4 | 5 | 6;
  /** The project name. */
  project: string;
  /** The environment, or null. */
  environment: string | null;
  /** The sealed events, oldest first. */
  events: SealedEntry[];
}

/**
 * An empty history envelope (version 1).
 *
 * @example
 * ```ts
 * import { emptyHistory } from "./history.ts";
 * emptyHistory("orders", null).version; // 1
 * ```
 */
export function emptyHistory(project: string, environment: string | null): HistoryDocument {
  return { format: "sluice.history", version: 1, project, environment, events: [] };
}

type HistoryVersion = HistoryDocument["version"];

function versionFor(events: HistoryEvent[], current: HistoryVersion): HistoryVersion {
  let v: HistoryVersion = current;
  const atLeast = (n: HistoryVersion) => {
    if (v < n) v = n;
  };
  for (const e of events) {
    if (e.kind === "drift_acknowledged") atLeast(6);
    else if (e.kind === "runner_restarted" || e.kind === "record_skipped") atLeast(5);
    else if (e.kind === "operation_abandoned" || e.kind === "operator_decision") atLeast(4);
    else if (e.kind === "runner_completed") atLeast(3);
    else if (e.kind === "resume_authorized") atLeast(2);
  }
  return v;
}

/**
 * Verify and parse every event of a history envelope (STATE_CORRUPT_HISTORY).
 *
 * @example
 * ```ts
 * import { emptyHistory, openHistory } from "./history.ts";
 * openHistory(emptyHistory("orders", null)).length; // 0
 * ```
 */
export function openHistory(value: unknown): HistoryEvent[] {
  const d = value as HistoryDocument;
  if (d?.format !== "sluice.history" || !Array.isArray(d.events)) {
    throw new SluiceError("STATE_CORRUPT_HISTORY", "history: not a sluice.history envelope");
  }
  if (!HISTORY_VERSIONS.includes(d.version)) {
    throw new SluiceError("STATE_CORRUPT_HISTORY", `history: unsupported version ${d.version}`);
  }
  const events = d.events.map((e, i) => {
    try {
      return unseal<HistoryEvent>(e, `history.events[${i}]`);
    } catch (err) {
      if (err instanceof SluiceError) {
        throw new SluiceError("STATE_CORRUPT_HISTORY", err.message, { evidence: err.evidence });
      }
      throw err;
    }
  });
  const expected = versionFor(events, 1);
  if (expected !== d.version) {
    throw new SluiceError(
      "STATE_CORRUPT_HISTORY",
      `history: envelope version ${d.version} does not match its events (expected ${expected})`,
    );
  }
  return events;
}

/**
 * Append events, keeping earlier sealed bytes untouched; bumps the version only as needed.
 *
 * @example
 * ```ts
 * import { appendEvents, emptyHistory } from "./history.ts";
 * const h = appendEvents(emptyHistory("orders", null), []);
 * h.events.length; // 0
 * ```
 */
export function appendEvents(doc: HistoryDocument, events: HistoryEvent[]): HistoryDocument {
  return {
    ...doc,
    version: versionFor(events, doc.version),
    events: [...doc.events, ...events.map((e) => seal(e as unknown as Json))],
  };
}

/**
 * The row a backend that keeps one row per history event stores for a sealed entry: its exact
 * bytes and checksum, its kind and operation. Throws when the bytes are not a JSON event.
 *
 * @example
 * ```ts
 * import { historyRow } from "./history.ts";
 * import { seal } from "./journal.ts";
 * historyRow(seal({ kind: "incident", operation_id: "op" }), 0).operation_id; // "op"
 * ```
 */
export function historyRow(entry: SealedEntry, index: number): HistoryRow {
  const value = JSON.parse(entry.bytes) as { kind?: unknown; operation_id?: unknown };
  if (typeof value?.kind !== "string") throw new TypeError(`history event ${index} has no kind`);
  const op = value.operation_id;
  return {
    index,
    kind: value.kind,
    operation_id: typeof op === "string" ? op : null,
    bytes: entry.bytes,
    sha256: entry.sha256,
  };
}

/**
 * The rows a history write appends: one per entry of `next` after the first `from` (the events
 * the write read), which keep their bytes.
 *
 * @example
 * ```ts
 * import { appendedRows, appendEvents, emptyHistory } from "./history.ts";
 * appendedRows(appendEvents(emptyHistory("orders", null), []), 0); // []
 * ```
 */
export function appendedRows(next: HistoryDocument, from: number): HistoryRow[] {
  return next.events.slice(from).map((e, k) => historyRow(e, from + k));
}

/**
 * Verify that a backend's history rows are exactly the history's events, one row per event in
 * order, each with the event's bytes, checksum, kind and operation (STATE_CORRUPT_HISTORY naming
 * the row and field): a row missing, extra or differing from the sealed event is corruption.
 *
 * @example
 * ```ts
 * import { verifyHistoryRows } from "./history.ts";
 * verifyHistoryRows([], [], "sluice.sluice_history_events"); // no rows, no events: fine
 * ```
 */
export function verifyHistoryRows(
  entries: readonly SealedEntry[],
  rows: readonly StoredHistoryRow[],
  where: string,
): void {
  const corrupt = (field: string, message: string) =>
    new SluiceError("STATE_CORRUPT_HISTORY", `${where}: history ${field}: ${message}`, {
      evidence: { document: "history", where, field },
    });
  if (rows.length !== entries.length) {
    throw corrupt(
      "rows",
      `${rows.length} event rows for ${entries.length} events (one row per event)`,
    );
  }
  for (const [i, row] of rows.entries()) {
    const expected: Record<string, unknown> = { ...historyRow(entries[i], i) };
    for (const field of ["index", "bytes", "sha256", "kind", "operation_id"] as const) {
      if (row[field] !== expected[field]) {
        throw corrupt(
          `rows[${i}].${field}`,
          `the event row differs from history.events[${i}]`,
        );
      }
    }
  }
}

/**
 * The completion receipt of the operation that applied the reviewed plan file with this sha256,
 * or null: what a repeated `apply --plan` of a completed replacement names.
 *
 * @example
 * ```ts
 * import { receiptOfPlan } from "./history.ts";
 * receiptOfPlan([], "0".repeat(64)); // null
 * ```
 */
export function receiptOfPlan(
  events: readonly HistoryEvent[],
  planSha256: string,
): CompletionReceipt | null {
  const found = events.filter((e): e is CompletionReceipt =>
    e.kind === "runner_completed" && e.intent.reviewed_plan_sha256 === planSha256
  );
  return found.at(-1) ?? null;
}

/**
 * The last ownership commit of an operation that applied the plan file with this sha256, or null:
 * what a later `apply --plan` of a completed create, connector change or removal names.
 *
 * @example
 * ```ts
 * import { commitOfPlan } from "./history.ts";
 * commitOfPlan([], "0".repeat(64)); // null
 * ```
 */
export function commitOfPlan(
  events: readonly HistoryEvent[],
  planSha256: string,
): OwnershipCommitted | null {
  const found = events.filter((e): e is OwnershipCommitted =>
    e.kind === "ownership_committed" && e.plan_sha256 === planSha256
  );
  return found.at(-1) ?? null;
}

/**
 * The ownership commit of an operation, or null: how a create, connector change or runner
 * removal is known to have completed (a lost acknowledgement, a lost clear).
 *
 * @example
 * ```ts
 * import { commitOfOperation } from "./history.ts";
 * commitOfOperation([], "6f1c2c1e-1111-4222-8333-444455556666"); // null
 * ```
 */
export function commitOfOperation(
  events: readonly HistoryEvent[],
  operationId: string,
): OwnershipCommitted | null {
  return events.find((e): e is OwnershipCommitted =>
    e.kind === "ownership_committed" && e.operation_id === operationId
  ) ?? null;
}

/** One input partition whose committed offset moved outside sluice. */
export type MovedPartition = OffsetsMovedWhileStopped["partitions"][number];
