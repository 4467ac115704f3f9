/**
 * The `StateStore` port: ownership, the pending operation journal, history, and the
 * deployment lock of one project and environment, behind one contract that the local and
 * PostgreSQL backends both pass (see `testing/state/contract_suite.ts`).
 *
 * @example
 * ```ts
 * import type { StateStore } from "./store.ts";
 * async function show(store: StateStore) {
 *   await store.acquireLock({ actor: "ci" });
 *   try {
 *     const snap = await store.load();
 *     console.log(snap.revision, snap.ownership?.checksum);
 *   } finally {
 *     await store.releaseLock();
 *   }
 * }
 * ```
 * @module
 */
import type { SealKey } from "./seal_key.ts";
import type { ErrorCode } from "../errors.ts";
import type { Json } from "./_canonical.ts";
import type { CompletionReceipt, DayTwoEvent, HistoryDocument, HistoryEvent } from "./history.ts";
import type {
  Checkpoint,
  Incident,
  OpenedControl,
  OperationIntent,
  OperatorDecision,
  ResumeAuthorization,
  ResumeRecord,
  RunnerAction,
  StoreIdentity,
} from "./journal.ts";
import type { OwnershipDocument } from "./ownership.ts";
import type { LockOwner, LockStatus } from "./primitive.ts";

/** A verified, immutable read of one scope's state, taken under the lock. */
export interface StateSnapshot {
  /** The store's verified identity. */
  identity: StoreIdentity;
  /** The project the store is scoped to. */
  project: string;
  /** The environment, or null. */
  environment: string | null;
  /** The lock UUID held when this snapshot was read (null: read without the lock). */
  lock_id: string | null;
  /** `ownership:<r>/control:<r>/history:<r>`; 0 means absent. */
  revision: string;
  /** The ownership document and its checksum, or null before the first commit. */
  ownership: { document: OwnershipDocument; checksum: string; revision: number } | null;
  /** The pending operation, or null. */
  control: { opened: OpenedControl; checksum: string; revision: number } | null;
  /** The history and its events. */
  history: {
    document: HistoryDocument;
    events: HistoryEvent[];
    revision: number;
    /**
     * Where the store keeps one row per event (PostgreSQL), when it committed each event by the
     * database's clock, by event index (null: an event copied from before migration 4). Absent on
     * local files.
     */
    committed_at?: Array<string | null>;
  };
  /** sha256 of each stored body, what compare-and-set compares. */
  bodies: { ownership: string | null; control: string | null; history: string | null };
}

/** The interruption the caller records (the store adds progress). */
export interface InterruptionInput {
  /** The incident's UUID. */
  incident_id: string;
  /** Who records the interruption. */
  actor: string;
  /** When (RFC 3339). */
  recorded_at: string;
  /** Why the operation was interrupted. */
  reason: string;
}

/** What the caller records when abandoning an operation (the store adds the operation). */
export interface AbandonInput {
  /** The operation the operator names (must be the pending one). */
  operation_id: string;
  /** Who abandons it. */
  actor: string;
  /** When (ISO 8601). */
  recorded_at: string;
  /** Why it can never continue (required). */
  reason: string;
  /** The read-only observation of the runtime as it was left. */
  evidence: { [key: string]: Json };
}

/** Result of finalizing a completed runner update. */
export interface FinalizeResult {
  /** The store after finalization. */
  snapshot: StateSnapshot;
  /** The completion receipt written. */
  receipt: CompletionReceipt;
  /**
   * When the operation completed: on PostgreSQL the receipt row's commit time by the database's
   * clock, on local files the receipt's `recorded_at` (RFC 3339).
   */
  completed_at: string;
  /** True when this call only cleared control after an interrupted clear. */
  retried_clear: boolean;
}

/** Result of the read-only completed-receipt lookup. */
export interface CompletedReceiptLookup {
  /** The receipt of the completed operation. */
  receipt: CompletionReceipt;
  /**
   * When it completed (RFC 3339): derived from the durable receipt, on PostgreSQL its row's commit
   * time by the database's clock, on local files (and older rows) the receipt's `recorded_at`.
   */
  completed_at: string;
  /** False while the terminal control is still pending (an interrupted clear). */
  control_cleared: boolean;
}

/** Result of the terminal pending-snapshot validation gate. */
export interface TerminalPending {
  /** The terminal operation. */
  operation_id: string;
  /** How its action ended. */
  outcome: "success" | "failure";
  /** Whether its completion receipt is already archived. */
  receipt_archived: boolean;
}

/** The result of {@link StateStore.verifyIntegrity}: ok, or the first corruption found. */
export interface IntegrityReport {
  /** Whether every stored byte verified. */
  ok: boolean;
  /** The verified identity (null when corrupt, or when nothing is stored yet). */
  identity: StoreIdentity | null;
  /** The verified revision (null when corrupt). */
  revision: string | null;
  /** The `STATE_CORRUPT_*` error: code, message naming document and field, evidence. */
  problem: { code: ErrorCode; message: string; evidence: Record<string, unknown> } | null;
  /** The pending operation of a verified store, if any (what `sluice status` names). */
  pending: {
    operation_id: string;
    kind: string;
    status: string;
    last_checkpoint: string | null;
  } | null;
}

/** Options for acquiring the deployment lock. */
export interface AcquireLockOptions {
  /** Who takes the lock. */
  actor: string;
  /** Retry STATE_LOCK_HELD (only that error) with backoff until this deadline; 0 = once. */
  timeoutMs?: number;
}

/** The deployment state contract. Every write names the snapshot (revisions) it read. */
export interface StateStore {
  /** The project the store is scoped to. */
  readonly project: string;
  /** The environment, or null. */
  readonly environment: string | null;
  /** Create the store (schema/dirs and store ID); idempotent. */
  init(): Promise<StoreIdentity>;
  /** The store identity (STATE_NOT_INITIALIZED before init). */
  identity(): Promise<StoreIdentity>;
  /** The store's plan-sealing key (`seal_key.ts`; created by init). */
  sealKey(): Promise<SealKey>;
  /**
   * Replace the plan-sealing key by a fresh one (`sluice state rotate-seal-key`): plan files
   * sealed before are refused from then on (`PLAN_SEAL_KEY_UNKNOWN`), except the plan of a
   * pending operation, which its intent binds.
   */
  rotateSealKey(): Promise<SealKey>;
  /** Take the exclusive deployment lock (STATE_LOCK_HELD says who and since when). */
  acquireLock(options: AcquireLockOptions): Promise<LockOwner>;
  /** Release the lock this store holds (no-op when none). */
  releaseLock(): Promise<void>;
  /** Who holds the lock; stale locks are diagnosed, never broken. */
  inspectLock(): Promise<LockStatus>;
  /**
   * Throw `STATE_LOCK_LOST` unless this store still holds its lock (checked by the runtime
   * before every provider mutation; journal writes check it themselves).
   */
  verifyLock(): Promise<void>;
  /** Explicitly remove a stale lock identified by its UUID. */
  breakStaleLock(lockId: string): Promise<void>;
  /**
   * Read and verify the identity, ownership, control and history: every byte of each, and
   * their cross-checks (`integrity.ts`). Any corruption is `STATE_CORRUPT_*` naming the
   * document and field.
   */
  load(): Promise<StateSnapshot>;
  /**
   * The same verification as {@link load}, without the lock and without throwing for
   * corruption: a report for `sluice status`. Other failures (unreachable, not initialized)
   * still throw.
   */
  verifyIntegrity(): Promise<IntegrityReport>;
  /** Commit ownership for a non-runner operation (e.g. create), clearing its v3 control. */
  commitOwnership(
    snapshot: StateSnapshot,
    ownership: OwnershipDocument,
    options?: { operationId?: string; recordedAt?: string },
  ): Promise<StateSnapshot>;
  /** Record an intent (v4 for runner_update with its typed action, v3 otherwise). */
  beginOperation(
    snapshot: StateSnapshot,
    intent: OperationIntent,
    actions?: RunnerAction[],
  ): Promise<StateSnapshot>;
  /** Record the next boundary checkpoint of the active runner update. */
  recordCheckpoint(snapshot: StateSnapshot, checkpoint: Checkpoint): Promise<StateSnapshot>;
  /** Record an interruption (an incident) of the pending operation. */
  recordInterruption(snapshot: StateSnapshot, input: InterruptionInput): Promise<StateSnapshot>;
  /** Authorize resuming a recorded interruption (first resume upgrades control to v5). */
  resumeOperation(snapshot: StateSnapshot, record: ResumeRecord): Promise<StateSnapshot>;
  /** The sole archived authorization left before its control update, or null. Read-only. */
  pendingResumeAuthorization(snapshot: StateSnapshot): Promise<ResumeAuthorization | null>;
  /**
   * Record an operator's decision about the pending runner update (control, then its audit
   * event). Makes no provider change: the caller performs what it authorizes afterwards.
   */
  recordDecision(snapshot: StateSnapshot, decision: OperatorDecision): Promise<StateSnapshot>;
  /**
   * Abandon the pending operation: archive who, why, the evidence and the operation as it was
   * (`operation_abandoned`), then clear control. Ownership is unchanged; a completed operation
   * (receipt archived) cannot be abandoned.
   */
  abandonOperation(snapshot: StateSnapshot, input: AbandonInput): Promise<StateSnapshot>;
  /**
   * Append one day-two audit event (`runner_restarted`, `record_skipped`, `drift_acknowledged`) to the history: the
   * record of an operator's command on a running project, made before the provider change it
   * authorizes. Needs no pending operation and refuses one (`BLOCKED_OPERATION_PENDING`) unless
   * that operation's journey admits the event (the registry's `admitsDayTwo`: a runner removal,
   * for a runner it takes down); an
   * event whose `event_id` is already archived is refused (`BLOCKED_DUPLICATE_EVENT`). Ownership
   * and control are unchanged.
   */
  recordAudit(snapshot: StateSnapshot, event: DayTwoEvent): Promise<StateSnapshot>;
  /**
   * Commit the desired runner checksum (serial + 1), archive the receipt and clear control: the
   * runner update's completion rule (`runner_completion.ts`) over the engine's receipt protocol.
   */
  finalizeCompletedRunner(snapshot: StateSnapshot, options?: { recordedAt?: string }): Promise<
    FinalizeResult
  >;
  /** Verify an archived runner_completed receipt against the current state. Read-only. */
  completedReceipt(operationId: string): Promise<CompletedReceiptLookup | null>;
  /** Verify the snapshot is current and its pending control is terminal. Read-only. */
  validateTerminalPending(snapshot: StateSnapshot): Promise<TerminalPending>;
  /** Release the lock and connections. */
  close(): Promise<void>;
}

export type { Incident };
