/**
 * The history (audit) envelope: an append-only list of sealed events. Its envelope version
 * is 1 while it holds only incidents and commits, becomes 2 only when it holds a resume
 * authorization, 3 only when it holds a `runner_completed` receipt, and 4 only when it holds
 * an operator's decision (`operator_decision`) or an abandonment (`operation_abandoned`). Earlier events keep
 * their exact bytes and checksums: appending never re-encodes them.
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
  kind: "runner_completed";
  operation_id: string;
  recorded_at: string;
  model: string;
  prior_artifact_sha256: string;
  result_artifact_sha256: string;
  prior_state_checksum: string;
  result_state_checksum: string;
  prior_serial: number;
  result_serial: number;
  intent: OperationIntent;
  /** The full terminal control, frozen. */
  terminal_control: ControlDocument;
  incidents: Incident[];
  resume_history: ResumeAuthorization[];
}

/**
 * The audit record of an abandoned operation: who decided it, why, what the runtime looked like
 * (read-only evidence), and the operation as it was left, frozen. Nothing was mutated.
 */
export interface OperationAbandoned {
  kind: "operation_abandoned";
  operation_id: string;
  operation_kind: string;
  actor: string;
  recorded_at: string;
  reason: string;
  evidence: { [key: string]: Json };
  intent: OperationIntent;
  /** The control as it was abandoned. */
  terminal_control: ControlDocument;
}

/** An event of the history envelope. */
export type HistoryEvent =
  | ({ kind: "incident" } & Incident)
  | ({ kind: "resume_authorized" } & ResumeAuthorization)
  | CompletionReceipt
  | OperationAbandoned
  | ({ kind: "operator_decision" } & OperatorDecision)
  | {
    kind: "ownership_committed";
    operation_id: string | null;
    recorded_at: string;
    serial: number;
    state_checksum: string;
  };

/** The stored history envelope. */
export interface HistoryDocument {
  format: "sluice.history";
  version: 1 | 2 | 3 | 4;
  project: string;
  environment: string | null;
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
    if (e.kind === "operation_abandoned" || e.kind === "operator_decision") atLeast(4);
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
  if (![1, 2, 3, 4].includes(d.version)) {
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
