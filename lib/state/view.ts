/**
 * The `state show` view of a store: a summary of the store's identity, lock, ownership, pending
 * operation and history, not the raw documents. {@link inspectState} reads it without taking
 * the lock (so it works while someone else holds it); {@link showStateStore} and
 * {@link initStateStore} open a store by its configuration, act and close it.
 *
 * @example
 * ```ts
 * import { initStateStore, showStateStore } from "./view.ts";
 * const config = {
 *   backend: "local" as const, dir: await Deno.makeTempDir(), project: "orders", environment: null,
 * };
 * console.log((await initStateStore(config)).backend); // local
 * console.log((await showStateStore(config)).pending_operation); // null
 * ```
 * @module
 */
import { findReceipt } from "./engine.ts";
import type { StoreIdentity } from "./journal.ts";
import { openStateStore, type StateStoreConfig } from "./open.ts";
import type { LockStatus } from "./primitive.ts";
import type { StateSnapshot, StateStore } from "./store.ts";

/** The `state show` view: a summary, not the raw documents. */
export interface StateView {
  /** The store's identity. */
  store: { store_id: string; backend: string; address: string };
  /** The project the store is scoped to. */
  project: string;
  /** The environment, or null. */
  environment: string | null;
  /** The store's revision. */
  revision: string;
  /** The deployment lock. */
  lock: LockStatus;
  /** What sluice owns; null before the first commit. */
  ownership: {
    serial: number;
    state_checksum: string;
    topics: string[];
    runners: Array<{ model: string; application_id: string; artifact_sha256: string }>;
    /** Owned connectors (present when the ownership document has its connector section). */
    connectors?: Array<{ name: string; cluster: string; config_fingerprint: string }>;
    /** What runner removals kept (present only when a removal kept something). */
    retained?: Array<
      { model: string; application_id: string; volume: string; removed_by: string }
    >;
  } | null;
  /** The pending operation; null when none. */
  pending_operation: {
    operation_id: string;
    kind: string;
    envelope_version: number;
    status: string;
    last_checkpoint: string | null;
    incidents: number;
    resume_authorizations: number;
    /**
     * Whether the operation's completion receipt is already archived in the history (a
     * finalization interrupted after its receipt: `state resume` finishes it, and its control
     * is frozen — no new incident may be added).
     */
    receipt_archived: boolean;
  } | null;
  /** The history envelope: version, event count, last event kind. */
  history: { envelope_version: number; events: number; last_event: string | null };
}

/**
 * Summarize a snapshot and the lock's status.
 *
 * @example
 * ```ts
 * import { stateView } from "./view.ts";
 * // const v = stateView(await store.load(), await store.inspectLock());
 * ```
 */
export function stateView(snap: StateSnapshot, lock: LockStatus): StateView {
  const c = snap.control?.opened ?? null;
  return {
    store: snap.identity,
    project: snap.project,
    environment: snap.environment,
    revision: snap.revision,
    lock,
    ownership: snap.ownership
      ? {
        serial: snap.ownership.document.serial,
        state_checksum: snap.ownership.checksum,
        topics: snap.ownership.document.topics.map((t) => t.name),
        runners: snap.ownership.document.runners.map((r) => ({
          model: r.model,
          application_id: r.application_id,
          artifact_sha256: r.artifact_sha256,
        })),
        ...(snap.ownership.document.connectors
          ? {
            connectors: snap.ownership.document.connectors.map((c) => ({
              name: c.name,
              cluster: c.cluster,
              config_fingerprint: c.config_fingerprint,
            })),
          }
          : {}),
        ...(snap.ownership.document.retained
          ? {
            retained: snap.ownership.document.retained.map((r) => ({
              model: r.model,
              application_id: r.application_id,
              volume: r.volume.name,
              removed_by: r.removed_by,
            })),
          }
          : {}),
      }
      : null,
    pending_operation: c
      ? {
        operation_id: c.operation_id,
        kind: c.kind,
        envelope_version: c.version,
        status: c.status,
        last_checkpoint: c.checkpoints.at(-1)?.name ?? null,
        incidents: c.incidents.length,
        resume_authorizations: c.resume_history.length,
        // the rule the store's validateTerminalPending applies
        receipt_archived: findReceipt(snap.history.events, c.operation_id) !== null,
      }
      : null,
    history: {
      envelope_version: snap.history.document.version,
      events: snap.history.events.length,
      last_event: snap.history.events.at(-1)?.kind ?? null,
    },
  };
}

/**
 * Read a store's view (read-only: no lock is taken).
 *
 * @example
 * ```ts
 * import { inspectState } from "./view.ts";
 * // const view = await inspectState(store);
 * ```
 */
export async function inspectState(store: StateStore): Promise<StateView> {
  const snap = await store.load();
  return stateView(snap, await store.inspectLock());
}

/**
 * Open the configured store, read its view, close it.
 *
 * @example
 * ```ts
 * import { initStateStore, showStateStore } from "./view.ts";
 * import type { StateStoreConfig } from "./open.ts";
 * const config: StateStoreConfig = {
 *   backend: "local", dir: await Deno.makeTempDir(), project: "orders", environment: null,
 * };
 * await initStateStore(config);
 * const v = await showStateStore(config);
 * console.log(v.ownership); // null: nothing deployed
 * ```
 */
export async function showStateStore(config: StateStoreConfig): Promise<StateView> {
  await using closing = new AsyncDisposableStack();
  const store = openStateStore(config);
  closing.defer(() => store.close());
  return await inspectState(store);
}

/**
 * Create the configured store (for PostgreSQL: its schema, with versioned migrations); running
 * it again changes nothing.
 *
 * @example
 * ```ts
 * import { initStateStore } from "./view.ts";
 * const id = await initStateStore({
 *   backend: "local", dir: await Deno.makeTempDir(), project: "orders", environment: null,
 * });
 * console.log(id.store_id);
 * ```
 */
export async function initStateStore(config: StateStoreConfig): Promise<StoreIdentity> {
  await using closing = new AsyncDisposableStack();
  const store = openStateStore(config);
  closing.defer(() => store.close());
  return await store.init();
}

/**
 * Replace the configured store's plan-sealing key (docs/trust.md): every plan file sealed
 * before is refused from then on (`PLAN_SEAL_KEY_UNKNOWN`; plan again), except the plan of a
 * pending operation, which its intent binds.
 *
 * @example
 * ```ts
 * import { initStateStore, rotateSealKeyOf } from "./view.ts";
 * const config = {
 *   backend: "local" as const, dir: await Deno.makeTempDir(), project: "orders", environment: null,
 * };
 * await initStateStore(config);
 * const r = await rotateSealKeyOf(config);
 * console.log(r.previous_key_id !== r.key_id); // true
 * ```
 */
export async function rotateSealKeyOf(config: StateStoreConfig): Promise<{
  /** The store whose key was rotated. */
  store_id: string;
  /** The key plans sealed before the rotation carry (refused from now on). */
  previous_key_id: string;
  /** The key every plan is sealed with from now on. */
  key_id: string;
  /** When the new key was made (ISO-8601 UTC). */
  rotated_at: string;
}> {
  await using closing = new AsyncDisposableStack();
  const store = openStateStore(config);
  closing.defer(() => store.close());
  const identity = await store.identity();
  const previous = await store.sealKey();
  const key = await store.rotateSealKey();
  return {
    store_id: identity.store_id,
    previous_key_id: previous.key_id,
    key_id: key.key_id,
    rotated_at: key.created_at,
  };
}

/** What `sluice state rotate-seal-key` reports: key IDs and times, never a secret. */
export type SealKeyRotation = Awaited<ReturnType<typeof rotateSealKeyOf>>;
