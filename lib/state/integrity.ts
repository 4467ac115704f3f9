/**
 * Cross-document integrity of one scope's state, checked on every read after each document
 * has verified its own bytes (`_stored.ts`, `journal.ts`, `history.ts`, `identity.ts`):
 *
 * - **The history is a chain of ownership states.** Each `ownership_committed` event advances
 *   the serial by one; each `runner_completed` receipt starts from exactly the state before it
 *   (prior serial and checksum, which are also its intent's original checksum) and advances
 *   the serial by one.
 * - **Ownership is the state the history last recorded.** An ownership document whose
 *   checksum is not the latest recorded state is corruption, even when its own sha256 was
 *   recomputed: an edit is not a new truth. The only exception is the local backend's named
 *   intermediate state, where the audit is written before the ownership it records: the
 *   ownership is then the state before that event, and the event's operation is still pending
 *   (or the commit had no operation).
 * - **Resume authorizations name this store.** Every archived authorization (history, control,
 *   receipts) records the store identity it ran under; another store ID or backend means the
 *   identity record or the audit was changed.
 *
 * @example
 * ```ts
 * import { verifyScopeIntegrity } from "./integrity.ts";
 * verifyScopeIntegrity({
 *   identity: { store_id: "s", backend: "local", address: "/state/orders" },
 *   project: "orders", environment: null, ownership: null, control: null, events: [],
 *   atomic: false, where: "/state/orders",
 * });
 * ```
 * @module
 */
import { type ErrorCode, SluiceError } from "../errors.ts";
import type { CompletionReceipt, HistoryEvent } from "./history.ts";
import type { OpenedControl, ResumeAuthorization, StoreIdentity } from "./journal.ts";
import { emptyOwnership, type OwnershipDocument, stateChecksum } from "./ownership.ts";

/** What the cross-checks read: the verified documents of one scope. */
export interface ScopeState {
  identity: StoreIdentity;
  project: string;
  environment: string | null;
  ownership: { document: OwnershipDocument; checksum: string } | null;
  control: OpenedControl | null;
  events: HistoryEvent[];
  /** True when every write group commits atomically (PostgreSQL): no intermediate states. */
  atomic: boolean;
  /** The scope's address, for messages. */
  where: string;
}

interface RecordedState {
  serial: number;
  checksum: string;
  /** Index of the event that recorded it (-1: the empty initial state). */
  index: number;
  operation_id: string | null;
  kind: "initial" | "ownership_committed" | "runner_completed";
}

function fail(
  code: ErrorCode,
  where: string,
  document: string,
  field: string,
  message: string,
  evidence: Record<string, unknown> = {},
): never {
  throw new SluiceError(code, `${where}: ${document} ${field}: ${message}`, {
    evidence: { document, where, field, ...evidence },
  });
}

/** Walk the history's state events; returns every recorded state, the initial one first. */
function chain(s: ScopeState): RecordedState[] {
  const initial: RecordedState = {
    serial: 0,
    checksum: stateChecksum(emptyOwnership(s.project, s.environment)),
    index: -1,
    operation_id: null,
    kind: "initial",
  };
  const states = [initial];
  const history = (i: number, field: string, message: string, evidence = {}) =>
    fail("STATE_CORRUPT_HISTORY", s.where, "history", `events[${i}].${field}`, message, evidence);
  for (const [i, e] of s.events.entries()) {
    const at = states.at(-1)!;
    if (e.kind === "ownership_committed") {
      const next: RecordedState = {
        serial: e.serial,
        checksum: e.state_checksum,
        index: i,
        operation_id: e.operation_id,
        kind: e.kind,
      };
      if (e.serial === at.serial + 1) {
        states.push(next);
      } else if (
        !s.atomic && e.operation_id === null && at.kind === "ownership_committed" &&
        at.operation_id === null && e.serial === at.serial
      ) {
        // local: an operation-less commit archived but never applied, superseded by its retry
        states[states.length - 1] = next;
      } else {
        history(
          i,
          "serial",
          `ownership_committed serial ${e.serial} does not follow the recorded serial ${at.serial}`,
          { recorded_serial: at.serial, event_serial: e.serial },
        );
      }
    } else if (e.kind === "runner_completed") {
      const r = e as CompletionReceipt;
      if (r.prior_serial !== at.serial) {
        history(i, "prior_serial", `${r.prior_serial} is not the recorded serial ${at.serial}`);
      }
      if (r.prior_state_checksum !== at.checksum) {
        history(
          i,
          "prior_state_checksum",
          `${r.prior_state_checksum} is not the recorded state ${at.checksum}`,
        );
      }
      if (r.intent?.original_state_checksum !== r.prior_state_checksum) {
        history(i, "intent.original_state_checksum", "differs from the receipt's prior state");
      }
      if (r.result_serial !== r.prior_serial + 1) {
        history(i, "result_serial", `${r.result_serial} is not prior serial + 1`);
      }
      states.push({
        serial: r.result_serial,
        checksum: r.result_state_checksum,
        index: i,
        operation_id: r.operation_id,
        kind: "runner_completed",
      });
    }
  }
  return states;
}

/** Every archived authorization must name this store (its ID and backend). */
function checkAuthorizations(s: ScopeState): void {
  const check = (a: ResumeAuthorization, place: string) => {
    if (a?.store?.store_id !== s.identity.store_id || a?.store?.backend !== s.identity.backend) {
      fail(
        "STATE_CORRUPT_STORE",
        s.where,
        "store identity",
        "store_id",
        `${s.identity.backend} store ${s.identity.store_id} is not the store recorded by ${place} (${a?.store?.backend} ${a?.store?.store_id}): the identity record or the audit was changed`,
        { recorded_by: place, recorded: a?.store ?? null, actual: s.identity },
      );
    }
  };
  for (const [i, e] of s.events.entries()) {
    if (e.kind === "resume_authorized") check(e, `history.events[${i}]`);
    if (e.kind === "runner_completed") {
      for (const [j, a] of (e.resume_history ?? []).entries()) {
        check(a, `history.events[${i}].resume_history[${j}]`);
      }
    }
  }
  for (const [j, a] of (s.control?.resume_history ?? []).entries()) {
    check(a, `control.resume_history[${j}]`);
  }
}

/**
 * Verify the cross-document integrity of one scope (throws `STATE_CORRUPT_*` naming the
 * document and field).
 *
 * @example
 * ```ts
 * import { verifyScopeIntegrity } from "./integrity.ts";
 * import { emptyOwnership, stateChecksum } from "./ownership.ts";
 * const own = { ...emptyOwnership("orders", null), serial: 1 };
 * try {
 *   verifyScopeIntegrity({
 *     identity: { store_id: "s", backend: "local", address: "/s" }, project: "orders",
 *     environment: null, ownership: { document: own, checksum: stateChecksum(own) },
 *     control: null, events: [], atomic: false, where: "/s",
 *   });
 * } catch (e) {
 *   console.log((e as Error).message); // ownership present, but history records no commit
 * }
 * ```
 */
export function verifyScopeIntegrity(s: ScopeState): void {
  checkAuthorizations(s);
  const states = chain(s);
  const last = states.at(-1)!;
  const own = s.ownership;
  const matches = (r: RecordedState) =>
    r.kind === "initial" ? own === null : own !== null && own.checksum === r.checksum;
  if (matches(last)) return;
  if (!s.atomic && states.length >= 2) {
    // local: the audit of the last state was written, the ownership it records was not yet
    const before = states.at(-2)!;
    const pending = last.operation_id === null ||
      s.control?.operation_id === last.operation_id;
    if (pending && matches(before)) return;
  }
  const recorded = last.kind === "initial"
    ? "no ownership commit"
    : `${last.kind} serial ${last.serial} state ${last.checksum} (history.events[${last.index}])`;
  fail(
    "STATE_CORRUPT_OWNERSHIP",
    s.where,
    "ownership",
    "document",
    own === null
      ? `is absent, but the history records ${recorded}`
      : `serial ${own.document.serial} state ${own.checksum} is not the state the history records last: ${recorded}; an edited ownership is corruption, not a new state`,
    {
      actual: own?.checksum ?? null,
      recorded: last.kind === "initial" ? null : last.checksum,
      recorded_by: last.index < 0 ? null : `history.events[${last.index}]`,
    },
  );
}
