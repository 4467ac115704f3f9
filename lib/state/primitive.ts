/**
 * The narrow storage primitive each backend implements. All envelope, version, receipt and
 * checksum logic lives once above it (see `engine.ts`); backends differ only where their
 * atomicity differs: the local backend applies a write group one atomic file replacement
 * at a time (`atomicWrites: false`), PostgreSQL in one transaction (`atomicWrites: true`).
 *
 * @example
 * ```ts
 * import type { StatePrimitive } from "./primitive.ts";
 * function describe(p: StatePrimitive): string {
 *   return `${p.backend} ${p.atomicWrites ? "transactional" : "sequential"}`;
 * }
 * ```
 * @module
 */
import type { SealKey } from "./seal_key.ts";
import type { StoreIdentity } from "./journal.ts";
import type { StateTransition } from "../protocol/state_sites.ts";

/** The three documents of one project/environment scope. */
export type DocName = "ownership" | "control" | "history";

/**
 * One history event as a row of its own (PostgreSQL, migration 4): its position in the history,
 * the sealed entry's exact bytes and checksum, and what a row is looked up by.
 */
export interface HistoryRow {
  /** The event's index in the history (0 = oldest). */
  index: number;
  /** The event's `kind`. */
  kind: string;
  /** The event's `operation_id`, or null (day-two events, operation-less commits). */
  operation_id: string | null;
  /** The sealed entry's canonical bytes, exactly as the history document holds them. */
  bytes: string;
  /** The sha256 of `bytes`. */
  sha256: string;
}

/** A history row as read back, with the time the store committed it. */
export interface StoredHistoryRow extends HistoryRow {
  /**
   * When the store committed the event, by the database's own clock in the committing transaction
   * (RFC 3339, microseconds, UTC); null for an event written before migration 4 (copied by it).
   */
  committed_at: string | null;
}

/**
 * The stored body of every document (canonical JSON of `{document, revision, sha256}`), and, on
 * a backend that keeps one row per history event, those rows (read in the same consistent read).
 */
export type StoredBodies = Record<DocName, string | null> & { historyRows?: StoredHistoryRow[] };

/** One write of a group: replace (body) or delete (null), if the current body hashes as expected. */
export interface DocWrite {
  name: DocName;
  body: string | null;
  /** sha256 of the body this write replaces; null when the document must be absent. */
  expectedSha256: string | null;
  /** Revision of the body it replaces (0 when absent), for a precise conflict message. */
  expectedRevision: number;
  /**
   * History writes only: the events this write appends, one row each where the backend keeps
   * rows (PostgreSQL inserts them in the same transaction; local files ignore them).
   */
  appended?: HistoryRow[];
}

/** A lock inspection (read-only). */
export interface LockStatus {
  /** Whether anyone holds the lock. */
  held: boolean;
  /** Who holds it. */
  holder: {
    /** The lock's UUID (the ID to name when breaking a stale lock). */
    lock_id: string;
    /** The project it locks. */
    project: string;
    /** The environment it locks, or null. */
    environment: string | null;
    /** Who holds it. */
    actor: string;
    /** The host of the holding process. */
    host: string;
    /** The holding process's ID. */
    pid: number;
    /** When it was acquired (RFC 3339). */
    acquired_at: string;
    /** PostgreSQL only: the backend PID of the session holding the advisory lock. */
    session_pid?: number | null;
  } | null;
  /** True when the holder is a dead process on this host (reported, never broken silently). */
  stale: boolean;
  /** One line for a human: free, held by whom since when, or stale. */
  diagnosis: string;
}

/** The storage primitive a backend implements. */
export interface StatePrimitive {
  readonly backend: "local" | "postgres";
  /** True when `commit` applies the whole group atomically. */
  readonly atomicWrites: boolean;
  /** Create the store (idempotent) and return its identity. */
  init(): Promise<StoreIdentity>;
  /** The identity, or null before init. */
  identity(): Promise<StoreIdentity | null>;
  /** The plan-sealing key (created by init; `seal_key.ts`). */
  sealKey(): Promise<SealKey>;
  /** Replace the plan-sealing key by a fresh one, at once and whole; returns the new key. */
  rotateSealKey(): Promise<SealKey>;
  /** Take the exclusive lock or throw STATE_LOCK_HELD with the holder. */
  acquireLock(owner: LockOwner): Promise<void>;
  /** Release a lock this process holds. */
  releaseLock(lockId: string): Promise<void>;
  /** Throw STATE_LOCK_LOST unless the lock is still held by `lockId`. */
  verifyLock(lockId: string): Promise<void>;
  /** Report who holds the lock (read-only). */
  inspectLock(): Promise<LockStatus>;
  /** Remove a stale lock, only if it is still `lockId` and still stale. */
  breakStaleLock(lockId: string): Promise<void>;
  /** Where a document is stored, for messages: a file path, or a table row. */
  locate(name: DocName): string;
  /** Read the three document bodies (one consistent read). */
  read(): Promise<StoredBodies>;
  /**
   * Apply a write group under the lock, checking each expected body (STATE_CONFLICT). The
   * transition names the group's fault sites (`lib/protocol/state_sites.ts`): local files in its declared order,
   * PostgreSQL one transaction.
   */
  commit(writes: DocWrite[], lockId: string, transition: StateTransition): Promise<void>;
  /** Release connections/handles. */
  close(): Promise<void>;
}

/** Who holds a deployment lock. */
export type LockOwner = NonNullable<LockStatus["holder"]>;
