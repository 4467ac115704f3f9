/**
 * The conformance suite every state backend passes. A backend test file only wires it up:
 *
 * @example
 * ```ts
 * import { stateStoreContract } from "./contract_suite.ts";
 * // stateStoreContract("local", async () => makeLocalBackend());
 * ```
 * @module
 */
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import { canonicalJson } from "../../lib/state/_canonical.ts";
import {
  checkpointChain,
  hex,
  ownedConnector,
  ownedRunner,
  replaceAction,
  resumeRecord,
  runnerIntent,
} from "./fixtures.ts";
import { encodeBody } from "../../lib/state/_stored.ts";
import { restartEvent } from "./crash_scenarios.ts";
import { appendEvents, commitOfPlan, type HistoryDocument } from "../../lib/state/history.ts";
import {
  type ControlV45,
  type OperationIntent,
  RESUME_LIMIT,
  seal,
  type SealedEntry,
} from "../../lib/state/journal.ts";
import {
  emptyOwnership,
  type OwnershipDocument,
  stateChecksum,
  validateOwnership,
  withConnectors,
} from "../../lib/state/ownership.ts";
import type { DocName } from "../../lib/state/primitive.ts";
import type { StateSnapshot, StateStore } from "../../lib/state/store.ts";

/** What a backend provides to the suite. */
export interface ContractBackend {
  /** True when a write group commits atomically (PostgreSQL). */
  atomic: boolean;
  /**
   * True when the backend keeps one row per history event, stamped with the database's clock at
   * commit (PostgreSQL): completion time is then that row's, not the application's clock.
   */
  historyRows?: boolean;
  /** Open a new store instance over the same storage (a second "client"). */
  open(project?: string, environment?: string | null): StateStore;
  /** Read a stored document body of the default scope (bypassing the store). */
  rawRead(name: DocName): Promise<string | null>;
  /** Write a stored document body of the default scope (bypassing the store and its lock). */
  rawWrite(name: DocName, body: string | null): Promise<void>;
  /** Make `store` lose its lock out-of-band. */
  loseLock(store: StateStore): Promise<void>;
  /** The identity fields this backend stores (each is tampered with by the suite). */
  identityFields: string[];
  /** The raw identity record (file text or row), for "nothing written" checks. */
  rawIdentity(): Promise<string | null>;
  /** Change one byte of one stored identity field out-of-band (`sha256`: a field's seal). */
  tamperIdentity(field: string): Promise<void>;
  /** Replace the identity by a consistent, correctly sealed one with another store ID. */
  forgeIdentity(storeId: string): Promise<void>;
  /** Put back a raw identity record taken by {@link rawIdentity}. */
  restoreIdentity(raw: string): Promise<void>;
  /** Close every opened store and remove the storage. */
  cleanup(): Promise<void>;
}

/** The default scope used by the suite. */
export const PROJECT = "orders";

async function rejects(p: Promise<unknown>, code: string, message?: RegExp): Promise<SluiceError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof SluiceError, `expected SluiceError ${code}, got ${e}`);
    assert.equal(e.code, code, `expected ${code}, got ${e.code}: ${e.message}`);
    if (message) assert.match(e.message, message);
    return e;
  }
  assert.fail(`expected ${code}, but it succeeded`);
}

async function lockedStore(b: ContractBackend, env: string | null = null) {
  const store = b.open(PROJECT, env);
  await store.init();
  await store.acquireLock({ actor: "tester" });
  return store;
}

/** Seed ownership with one runner and return it with a fresh snapshot. */
async function seeded(store: StateStore): Promise<[OwnershipDocument, StateSnapshot]> {
  const own = ownedRunner(PROJECT, store.environment);
  const snap = await store.commitOwnership(await store.load(), own);
  return [own, snap];
}

/** Seed one owned runner and begin a runner update over it. */
export async function begun(store: StateStore, opts: { reviewed?: boolean } = {}) {
  const [own, s0] = await seeded(store);
  const intent = runnerIntent(own, opts);
  const snap = await store.beginOperation(s0, intent, [replaceAction(own)]);
  return { own, intent, snap };
}

/** Record the checkpoint chain's entries `from`..`n` over `snap`. */
export async function checkpoints(
  store: StateStore,
  snap: StateSnapshot,
  n: number,
  from = 0,
) {
  for (const cp of checkpointChain().slice(from, n)) snap = await store.recordCheckpoint(snap, cp);
  return snap;
}

async function interruptAndResume(store: StateStore, snap: StateSnapshot, id?: string) {
  snap = await store.recordInterruption(snap, {
    incident_id: crypto.randomUUID(),
    actor: "tester",
    recorded_at: "2026-11-29T10:04:00.000Z",
    reason: "lost create response",
  });
  return await store.resumeOperation(snap, resumeRecord(id));
}

function sealedOf(snap: StateSnapshot): ControlV45 {
  return snap.control!.opened.document as ControlV45;
}

/**
 * Register the contract tests for a backend.
 *
 * @example
 * ```ts
 * import { stateStoreContract } from "./contract_suite.ts";
 * // stateStoreContract("postgres", () => makePgBackend());
 * ```
 */
export function stateStoreContract(name: string, factory: () => Promise<ContractBackend>): void {
  const test = (title: string, fn: (b: ContractBackend) => Promise<void>) =>
    Deno.test(`${name}: ${title}`, async () => {
      const b = await factory();
      try {
        await fn(b);
      } finally {
        await b.cleanup();
      }
    });

  test("init is idempotent and gives a stable store identity", async (b) => {
    const s = b.open();
    const a = await s.init();
    const again = await s.init();
    assert.equal(a.store_id, again.store_id);
    assert.match(a.store_id, /^[0-9a-f-]{36}$/);
    assert.equal((await b.open().identity()).store_id, a.store_id);
    assert.doesNotMatch(a.address, /password|postgres@/);
  });

  test("an uninitialized store says so", async (b) => {
    await rejects(b.open().load(), "STATE_NOT_INITIALIZED");
  });

  test("the deployment lock is exclusive and says who holds it since when", async (b) => {
    const one = await lockedStore(b);
    const two = b.open();
    const err = await rejects(two.acquireLock({ actor: "rival" }), "STATE_LOCK_HELD", /tester/);
    const holder = err.evidence?.holder as { actor: string; acquired_at: string };
    assert.equal(holder.actor, "tester");
    assert.ok(holder.acquired_at);
    const status = await two.inspectLock();
    assert.equal(status.held, true);
    assert.equal(status.stale, false);
    assert.equal(status.holder?.actor, "tester");
    await one.releaseLock();
    await two.acquireLock({ actor: "rival" });
    assert.equal((await one.inspectLock()).holder?.actor, "rival");
  });

  test("acquire retries only a held lock, with backoff, until its deadline", async (b) => {
    const one = await lockedStore(b);
    const two = b.open();
    setTimeout(() => one.releaseLock(), 150);
    const owner = await two.acquireLock({ actor: "patient", timeoutMs: 5000 });
    assert.equal(owner.actor, "patient");
  });

  test("environments and projects are separate lock scopes; null is not 'default'", async (b) => {
    const single = await lockedStore(b, null);
    const prod = await lockedStore(b, "prod");
    const other = b.open("payments", null);
    await other.acquireLock({ actor: "x" });
    const snap = await single.commitOwnership(
      await single.load(),
      ownedRunner(PROJECT, null),
    );
    assert.equal(snap.ownership?.document.environment, null);
    assert.equal((await prod.load()).ownership, null);
    assert.doesNotMatch(snap.identity.address, /default/);
    assert.notEqual(snap.identity.address, (await prod.load()).identity.address);
    await rejects(b.open(PROJECT, "prod").acquireLock({ actor: "x" }), "STATE_LOCK_HELD");
  });

  test("transitions require the lock and a snapshot read under it", async (b) => {
    const store = b.open();
    await store.init();
    const snap = await store.load();
    await rejects(
      store.commitOwnership(snap, ownedRunner(PROJECT, null)),
      "STATE_LOCK_REQUIRED",
    );
    await store.acquireLock({ actor: "t" });
    await rejects(
      store.commitOwnership(snap, ownedRunner(PROJECT, null)),
      "STATE_LOCK_REQUIRED",
      /load it again/,
    );
  });

  test("compare-and-set: a write from a stale snapshot fails with both revisions", async (b) => {
    const store = await lockedStore(b);
    const s0 = await store.load();
    const s1 = await store.commitOwnership(s0, ownedRunner(PROJECT, null));
    assert.equal(s1.ownership?.revision, 1);
    const next = { ...s1.ownership!.document, serial: 2 };
    const s2 = await store.commitOwnership(s1, next);
    assert.equal(s2.ownership?.revision, 2);
    // s1 is stale: it names revision 1 but the store holds revision 2
    const err = await rejects(
      store.commitOwnership(s1, { ...next, serial: 2 }),
      "STATE_CONFLICT",
      /expected revision 1, found revision 2/,
    );
    assert.equal(err.evidence?.document, "history");
    assert.equal((await store.load()).revision, s2.revision);
  });

  test("compare-and-set: an out-of-band change between read and write is a conflict", async (b) => {
    const store = await lockedStore(b);
    const [own, s1] = await seeded(store);
    await b.rawWrite("ownership", encodeBody({ ...own, serial: 7 }, 5));
    const historyBefore = await b.rawRead("history");
    await rejects(
      store.commitOwnership(s1, { ...own, serial: 2 }),
      "STATE_CONFLICT",
      /ownership changed concurrently: expected revision 1, found revision 5/,
    );
    // nothing of the group was written, not even the history that still matched
    assert.equal(await b.rawRead("history"), historyBefore);
    // and the out-of-band ownership is not a new truth: the history never recorded it
    const err = await rejects(store.load(), "STATE_CORRUPT_OWNERSHIP", /not the state the history/);
    assert.equal(err.evidence?.field, "document");
    assert.equal(err.evidence?.recorded_by, "history.events[0]");
  });

  test("ownership serial must advance by exactly one", async (b) => {
    const store = await lockedStore(b);
    const s0 = await store.load();
    await rejects(
      store.commitOwnership(s0, { ...ownedRunner(PROJECT, null), serial: 3 }),
      "BLOCKED_SERIAL",
    );
  });

  test("a create operation keeps envelope version 3 and clears on commit", async (b) => {
    const store = await lockedStore(b);
    const s0 = await store.load();
    const intent: OperationIntent = {
      operation_id: crypto.randomUUID(),
      kind: "create",
      project: PROJECT,
      environment: null,
      actor: "t",
      created_at: "2026-11-29T09:00:00.000Z",
      original_state_checksum: stateChecksum(emptyOwnership(PROJECT, null)),
      reviewed_plan_sha256: null,
      details: { models: ["eligible_orders"] },
    };
    const s1 = await store.beginOperation(s0, intent);
    assert.equal(s1.control?.opened.version, 3);
    assert.equal(s1.control?.opened.kind, "create");
    await rejects(
      store.beginOperation(s1, { ...intent, operation_id: crypto.randomUUID() }),
      "BLOCKED_OPERATION_PENDING",
    );
    await rejects(
      store.commitOwnership(s1, ownedRunner(PROJECT, null)),
      "BLOCKED_OPERATION_PENDING",
    );
    const s2 = await store.commitOwnership(s1, ownedRunner(PROJECT, null), {
      operationId: intent.operation_id,
    });
    assert.equal(s2.control, null);
    assert.equal(s2.ownership?.document.serial, 1);
    assert.equal(s2.history.document.version, 1);
    assert.equal(s2.history.events.at(-1)?.kind, "ownership_committed");
    // an intent with no plan file names none
    assert.equal(Object.hasOwn(s2.history.events.at(-1)!, "plan_sha256"), false);
  });

  test("a create's commit names its plan file in the same write (what a later apply --plan names)", async (b) => {
    const store = await lockedStore(b);
    const s0 = await store.load();
    const plan = "c".repeat(64);
    const intent: OperationIntent = {
      operation_id: crypto.randomUUID(),
      kind: "create",
      project: PROJECT,
      environment: null,
      actor: "t",
      created_at: "2026-11-29T09:00:00.000Z",
      original_state_checksum: stateChecksum(emptyOwnership(PROJECT, null)),
      reviewed_plan_sha256: plan,
      details: { plan_sha256: plan },
    };
    const s1 = await store.beginOperation(s0, intent);
    const s2 = await store.commitOwnership(s1, ownedRunner(PROJECT, null), {
      operationId: intent.operation_id,
      recordedAt: "2026-11-29T09:01:00.000Z",
    });
    // one write: the commit, its audit event naming the plan, the clear (no extra history write)
    const [o0, , h0] = s1.revision.split("/").map((x) => Number(x.split(":")[1]));
    const [o1, c1, h1] = s2.revision.split("/").map((x) => Number(x.split(":")[1]));
    assert.deepEqual([o1 - o0, c1, h1 - h0], [1, 0, 1], `${s1.revision} → ${s2.revision}`);
    const reread = await b.open().load();
    assert.equal(reread.history.document.version, 1);
    assert.deepEqual(commitOfPlan(reread.history.events, plan), {
      kind: "ownership_committed",
      operation_id: intent.operation_id,
      recorded_at: "2026-11-29T09:01:00.000Z",
      serial: 1,
      state_checksum: reread.ownership!.checksum,
      plan_sha256: plan,
    });
    assert.equal(commitOfPlan(reread.history.events, "d".repeat(64)), null);
  });

  test("owned connectors: version 2 round-trips; a malformed or edited record is refused", async (b) => {
    const store = await lockedStore(b);
    const [own, s1] = await seeded(store);
    const v2 = withConnectors({ ...own, serial: 2 }, [ownedConnector(PROJECT, null)]);
    const s2 = await store.commitOwnership(s1, v2);
    assert.deepEqual((await b.open().load()).ownership?.document, v2);
    assert.equal(s2.ownership?.checksum, stateChecksum(v2));
    // a malformed section is refused before anything is written
    const bad = withConnectors({ ...v2, serial: 3 }, [
      { ...ownedConnector(PROJECT, null), name: "sluice-other-orders_out" },
    ]);
    const historyBefore = await b.rawRead("history");
    await rejects(store.commitOwnership(s2, bad), "BLOCKED_INVALID_OWNERSHIP", /name must be/);
    assert.equal(await b.rawRead("history"), historyBefore);
    // an edited record, correctly re-encoded, is corruption on every read: as a shape ...
    const ownershipBefore = (await b.rawRead("ownership"))!;
    const shape = structuredClone(v2);
    (shape.connectors![0] as unknown as Record<string, unknown>).endpoint = "http://connect:8083";
    await b.rawWrite("ownership", encodeBody(shape, 2));
    await rejects(b.open().load(), "STATE_CORRUPT_OWNERSHIP", /fields must be exactly/);
    // ... and as a value the history never recorded (a fingerprint changed to match a drift)
    const drifted = structuredClone(v2);
    drifted.connectors![0].config_fingerprint = hex("hand-edited");
    assert.doesNotThrow(() => validateOwnership(drifted));
    await b.rawWrite("ownership", encodeBody(drifted, 2));
    await rejects(b.open().load(), "STATE_CORRUPT_OWNERSHIP", /not the state the history records/);
    await b.rawWrite("ownership", ownershipBefore);
    assert.deepEqual((await b.open().load()).ownership?.document, v2);
  });

  test("a runner update records version 4 with sealed intent, action and checkpoints", async (b) => {
    const store = await lockedStore(b);
    const { intent, snap } = await begun(store);
    const c = snap.control!.opened;
    assert.equal(c.version, 4);
    assert.equal(c.kind, "runner_update");
    assert.deepEqual(c.intent, intent);
    const doc = sealedOf(snap);
    assert.equal(typeof doc.intent.bytes, "string");
    assert.equal(doc.intent.bytes, canonicalJson(intent));
    const s2 = await checkpoints(store, snap, 2);
    assert.deepEqual(s2.control!.opened.checkpoints.map((x) => x.name), [
      "action_started",
      "old_closed",
    ]);
    const closed = s2.control!.opened.checkpoints[1];
    assert.ok(closed.name === "old_closed" && closed.exit_code === 143);
    assert.deepEqual(sealedOf(s2).intent, doc.intent);
  });

  test("a day-two audit event is appended alone (history v5), never beside a pending operation, never twice", async (b) => {
    const store = await lockedStore(b);
    const [own, s0] = await seeded(store);
    const event = restartEvent();
    const s1 = await store.recordAudit(s0, event);
    assert.equal(s1.history.document.version, 5);
    assert.equal(s1.history.events.length, s0.history.events.length + 1);
    assert.deepEqual(s1.history.events.at(-1), event);
    assert.deepEqual(s1.history.document.events.slice(0, -1), s0.history.document.events);
    assert.equal(s1.ownership!.checksum, stateChecksum(own));
    assert.equal(s1.control, null);
    await rejects(store.recordAudit(s1, event), "BLOCKED_DUPLICATE_EVENT");
    await rejects(
      store.recordAudit(s1, { ...event, event_id: "e2", reason: " " }),
      "BLOCKED_INVALID_DECISION",
    );
    const s2 = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
    await rejects(
      store.recordAudit(s2, { ...event, event_id: "e3" }),
      "BLOCKED_OPERATION_PENDING",
    );
    assert.equal((await store.load()).history.events.length, s1.history.events.length);
  });

  test("a pending runner removal records a day-two event of its own runner only", async (b) => {
    const store = await lockedStore(b);
    const [own, s0] = await seeded(store);
    const event = restartEvent();
    const removal = (applicationId: string): OperationIntent => ({
      operation_id: crypto.randomUUID(),
      kind: "runner_removal",
      project: PROJECT,
      environment: null,
      actor: "t",
      created_at: "2026-11-29T09:00:00.000Z",
      original_state_checksum: stateChecksum(own),
      reviewed_plan_sha256: "e".repeat(64),
      details: {
        plan_sha256: "e".repeat(64),
        actions: [{
          model: "eligible_orders",
          application_id: applicationId,
          container_id: "c".repeat(64),
          generation: "g1",
        }],
        released: [],
      },
    });
    // another runner's removal: the event is refused and nothing is written
    const other = await store.beginOperation(s0, removal("sluice-orders-other"));
    await rejects(store.recordAudit(other, event), "BLOCKED_OPERATION_PENDING");
    assert.equal((await store.load()).history.events.length, s0.history.events.length);
    const abandoned = await store.abandonOperation(other, {
      operation_id: other.control!.opened.operation_id,
      actor: "t",
      recorded_at: "2026-11-29T09:01:00.000Z",
      reason: "test",
      evidence: {},
    });
    // its own runner's removal: recorded, the operation still pending and unchanged
    const mine = await store.beginOperation(abandoned, removal(event.application_id));
    const s1 = await store.recordAudit(mine, event);
    assert.deepEqual(s1.history.events.at(-1), event);
    assert.deepEqual(s1.control!.opened.intent, mine.control!.opened.intent);
    assert.equal(s1.ownership!.checksum, mine.ownership!.checksum);
  });

  test("a pending operation blocks a new one", async (b) => {
    const store = await lockedStore(b);
    const { own, snap } = await begun(store);
    await rejects(
      store.beginOperation(snap, runnerIntent(own), [replaceAction(own)]),
      "BLOCKED_OPERATION_PENDING",
    );
  });

  test("begin rejects an intent over changed protected state", async (b) => {
    const store = await lockedStore(b);
    const [own, s1] = await seeded(store);
    const stale = runnerIntent({ ...own, serial: 0 });
    await rejects(store.beginOperation(s1, stale, [replaceAction(own)]), "BLOCKED_STATE_CHANGED");
    assert.equal((await store.load()).control, null);
  });

  test("checkpoints follow the boundary table; a raw exit other than 0/143 is refused", async (b) => {
    const store = await lockedStore(b);
    const { snap } = await begun(store);
    const chain = checkpointChain();
    await rejects(
      store.recordCheckpoint(snap, chain[1]),
      "BLOCKED_CHECKPOINT_ORDER",
      /action_started/,
    );
    const s1 = await store.recordCheckpoint(snap, chain[0]);
    await rejects(
      store.recordCheckpoint(s1, { ...chain[1], name: "old_closed", exit_code: 137 } as never),
      "BLOCKED_CHECKPOINT_ORDER",
      /137/,
    );
    await rejects(
      store.recordCheckpoint(s1, { ...chain[4] }),
      "BLOCKED_CHECKPOINT_ORDER",
      /replacement_created/,
    );
    const failed = await store.recordCheckpoint(s1, {
      name: "action_completed",
      action_index: 0,
      recorded_at: "2026-11-29T10:00:02.000Z",
      outcome: "failure",
      detail: "close timed out",
    });
    await rejects(store.recordCheckpoint(failed, chain[1]), "BLOCKED_CHECKPOINT_ORDER", /terminal/);
  });

  test("finalize needs the complete successful chain, then changes only the runner checksum", async (b) => {
    const store = await lockedStore(b);
    const { own, intent, snap } = await begun(store);
    const s4 = await checkpoints(store, snap, 4);
    await rejects(store.finalizeCompletedRunner(s4), "BLOCKED_INCOMPLETE_OPERATION");
    const s5 = await checkpoints(store, s4, 5, 4);
    const before = await store.validateTerminalPending(s5);
    assert.deepEqual(before, {
      operation_id: intent.operation_id,
      outcome: "success",
      receipt_archived: false,
    });
    const { snapshot, receipt, completed_at, retried_clear } = await store.finalizeCompletedRunner(
      s5,
    );
    assert.equal(retried_clear, false);
    assert.equal(snapshot.control, null);
    const expected: OwnershipDocument = {
      ...own,
      serial: own.serial + 1,
      runners: [{ ...own.runners[0], artifact_sha256: hex("artifact-v2") }],
    };
    assert.deepEqual(snapshot.ownership?.document, expected);
    assert.equal(receipt.prior_state_checksum, stateChecksum(own));
    assert.equal(receipt.result_state_checksum, stateChecksum(expected));
    assert.equal(snapshot.history.document.version, 3);
    const found = await store.completedReceipt(intent.operation_id);
    assert.equal(found?.control_cleared, true);
    // the completion time derives from the durable receipt: PostgreSQL's row, stamped by the
    // database's clock at commit; local files' receipt, stamped by the application
    const last = snapshot.history.events.length - 1;
    assert.equal(snapshot.history.events[last].kind, "runner_completed");
    assert.equal(
      completed_at,
      b.historyRows ? snapshot.history.committed_at?.[last] : receipt.recorded_at,
    );
    assert.equal(found?.completed_at, completed_at);
    assert.deepEqual(found?.receipt, receipt);
    assert.equal(await store.completedReceipt(crypto.randomUUID()), null);
    assert.equal((await store.load()).revision, snapshot.revision, "lookups write nothing");
  });

  test("finalize refuses a failed action", async (b) => {
    const store = await lockedStore(b);
    const { snap } = await begun(store);
    const s1 = await checkpoints(store, snap, 1);
    const failed = await store.recordCheckpoint(s1, {
      name: "action_completed",
      action_index: 0,
      recorded_at: "2026-11-29T10:00:02.000Z",
      outcome: "failure",
      detail: null,
    });
    await rejects(store.finalizeCompletedRunner(failed), "BLOCKED_INCOMPLETE_OPERATION");
    assert.equal((await store.validateTerminalPending(failed)).outcome, "failure");
    await rejects(store.resumeOperation(failed, resumeRecord()), "BLOCKED_OPERATION_TERMINAL");
  });

  test("validateTerminalPending rejects a non-terminal or stale snapshot", async (b) => {
    const store = await lockedStore(b);
    const { snap } = await begun(store);
    await rejects(store.validateTerminalPending(snap), "BLOCKED_NOT_TERMINAL");
    const s1 = await checkpoints(store, snap, 1);
    await rejects(store.validateTerminalPending(snap), "STATE_CONFLICT");
    assert.ok(s1);
  });

  test("an operation left in progress needs its interruption recorded under a new lock", async (b) => {
    const first = await lockedStore(b);
    const { snap } = await begun(first);
    await checkpoints(first, snap, 2);
    await first.releaseLock(); // the first worker is gone
    const second = await lockedStore(b);
    const s = await second.load();
    await rejects(
      second.recordCheckpoint(s, checkpointChain()[2]),
      "BLOCKED_INTERRUPTION_REQUIRED",
    );
    await rejects(second.resumeOperation(s, resumeRecord()), "BLOCKED_INTERRUPTION_REQUIRED");
    const i = await second.recordInterruption(s, {
      incident_id: crypto.randomUUID(),
      actor: "second",
      recorded_at: "2026-11-29T10:04:00.000Z",
      reason: "worker exited",
    });
    assert.equal(i.control?.opened.status, "interrupted");
    assert.equal(i.control?.opened.incidents[0].last_checkpoint, "old_closed");
    assert.equal(i.history.events.at(-1)?.kind, "incident");
    assert.equal(i.history.document.version, 1);
    await rejects(
      second.recordCheckpoint(i, checkpointChain()[2]),
      "BLOCKED_OPERATION_INTERRUPTED",
    );
  });

  test("the first resume upgrades to version 5 and keeps every earlier byte", async (b) => {
    const store = await lockedStore(b);
    const { snap } = await begun(store);
    const s2 = await checkpoints(store, snap, 3);
    const v4 = sealedOf(s2);
    const interrupted = await store.recordInterruption(s2, {
      incident_id: crypto.randomUUID(),
      actor: "t",
      recorded_at: "2026-11-29T10:04:00.000Z",
      reason: "lost create response",
    });
    const record = resumeRecord();
    const resumed = await store.resumeOperation(interrupted, record);
    const v5 = sealedOf(resumed);
    assert.equal(v5.version, 5);
    assert.equal(resumed.control?.opened.status, "in_progress");
    const same = (a: SealedEntry[], c: SealedEntry[]) => assert.deepEqual(c.slice(0, a.length), a);
    assert.deepEqual(v5.intent, v4.intent);
    same(v4.actions, v5.actions);
    same(v4.checkpoints, v5.checkpoints);
    same(sealedOf(interrupted).incidents, v5.incidents);
    const auth = resumed.control!.opened.resume_history[0];
    assert.equal(auth.authorization_id, record.authorization_id);
    assert.equal(auth.actor, "operator");
    assert.deepEqual(auth.store, resumed.identity);
    assert.equal(
      auth.original_state_checksum,
      interrupted.control!.opened.intent.original_state_checksum,
    );
    assert.deepEqual(auth.progress, { checkpoint_count: 3, last_checkpoint: "old_removed" });
    assert.equal(auth.interrupted_control_sha256, interrupted.control!.checksum);
    assert.deepEqual(auth.recovery, record.recovery);
    assert.equal(resumed.history.document.version, 2);
    // the lookup verifies before it answers: a resumed operation is in progress, not interrupted
    await rejects(store.pendingResumeAuthorization(resumed), "BLOCKED_INTERRUPTION_REQUIRED");
    // progress continues, history is kept, then finalize archives incident + resume
    const s4 = await checkpoints(store, resumed, 5, 3);
    assert.equal(sealedOf(s4).version, 5);
    same(v5.resume_history!, sealedOf(s4).resume_history!);
    const h2 = s4.history.document.events;
    const done = await store.finalizeCompletedRunner(s4);
    assert.equal(done.receipt.incidents.length, 1);
    assert.equal(done.receipt.resume_history.length, 1);
    assert.equal(done.snapshot.history.document.version, 3);
    assert.deepEqual(done.snapshot.history.document.events.slice(0, h2.length), h2);
  });

  test("resume refuses an unreviewed operation; ownership cannot change under a pending one", async (b) => {
    const store = await lockedStore(b);
    const { snap } = await begun(store, { reviewed: false });
    const i = await store.recordInterruption(snap, {
      incident_id: crypto.randomUUID(),
      actor: "t",
      recorded_at: "2026-11-29T10:04:00.000Z",
      reason: "x",
    });
    await rejects(store.resumeOperation(i, resumeRecord()), "BLOCKED_NOT_REVIEWED");

    const b2 = b.open(PROJECT, "staging");
    await b2.init();
    await b2.acquireLock({ actor: "t" });
    const { own, snap: s } = await begun(b2);
    const i2 = await b2.recordInterruption(s, {
      incident_id: crypto.randomUUID(),
      actor: "t",
      recorded_at: "2026-11-29T10:04:00.000Z",
      reason: "x",
    });
    assert.ok(own);
    // ownership cannot change through the store while an operation is pending
    await rejects(
      b2.commitOwnership(i2, { ...i2.ownership!.document, serial: 2 }),
      "BLOCKED_OPERATION_PENDING",
    );
  });

  test("an interruption from a stale snapshot cannot overwrite a newer durable boundary", async (b) => {
    const store = await lockedStore(b);
    const { snap } = await begun(store);
    const s1 = await checkpoints(store, snap, 2); // the old_closed write landed...
    // ...but its caller kept only the last acknowledged snapshot (action_started)
    await rejects(
      store.recordInterruption(snap, {
        incident_id: crypto.randomUUID(),
        actor: "t",
        recorded_at: "2026-11-29T10:04:00.000Z",
        reason: "lost acknowledgement",
      }),
      "STATE_CONFLICT",
      /control changed concurrently/,
    );
    const fresh = await store.load();
    assert.equal(fresh.revision, s1.revision);
    const i = await store.recordInterruption(fresh, {
      incident_id: crypto.randomUUID(),
      actor: "t",
      recorded_at: "2026-11-29T10:04:00.000Z",
      reason: "lost acknowledgement",
    });
    assert.equal(i.control!.opened.incidents[0].last_checkpoint, "old_closed");
  });

  test("resume refuses out-of-band changed protected state", async (b) => {
    const store = await lockedStore(b);
    const { own, snap } = await begun(store);
    const i = await store.recordInterruption(snap, {
      incident_id: crypto.randomUUID(),
      actor: "t",
      recorded_at: "2026-11-29T10:04:00.000Z",
      reason: "x",
    });
    // a consistent out-of-band change (ownership and an audit event recording it)
    const changed = { ...own, serial: 2 };
    const h = appendEvents(i.history.document, [{
      kind: "ownership_committed",
      operation_id: null,
      recorded_at: "2026-11-29T10:05:00.000Z",
      serial: 2,
      state_checksum: stateChecksum(changed),
    }]);
    await b.rawWrite("history", encodeBody(h, i.history.revision + 1));
    await b.rawWrite("ownership", encodeBody(changed, i.ownership!.revision + 1));
    const fresh = await store.load();
    await rejects(store.resumeOperation(fresh, resumeRecord()), "BLOCKED_STATE_CHANGED");
    await rejects(store.finalizeCompletedRunner(fresh), "BLOCKED_INCOMPLETE_OPERATION");
  });

  test(`the resume authorization after ${RESUME_LIMIT} is blocked (BLOCKED_RESUME_LIMIT)`, async (b) => {
    const store = await lockedStore(b);
    let { snap } = await begun(store);
    for (let i = 0; i < RESUME_LIMIT; i++) snap = await interruptAndResume(store, snap);
    assert.equal(snap.control!.opened.resume_history.length, RESUME_LIMIT);
    const i = await store.recordInterruption(snap, {
      incident_id: crypto.randomUUID(),
      actor: "t",
      recorded_at: "2026-11-29T10:04:00.000Z",
      reason: "again",
    });
    await rejects(store.resumeOperation(i, resumeRecord()), "BLOCKED_RESUME_LIMIT", /32/);
    assert.equal((await store.load()).revision, i.revision);
  });

  test("an archived authorization without its control transition", async (b) => {
    const store = await lockedStore(b);
    const { snap } = await begun(store);
    const i = await store.recordInterruption(snap, {
      incident_id: crypto.randomUUID(),
      actor: "t",
      recorded_at: "2026-11-29T10:04:00.000Z",
      reason: "x",
    });
    const record = resumeRecord();
    // what a local resume leaves when killed between its two file writes
    const c = i.control!.opened;
    const entry = {
      kind: "resume_authorized",
      authorization_id: record.authorization_id,
      operation_id: c.operation_id,
      actor: record.actor,
      authorized_at: record.authorized_at,
      store: i.identity,
      original_state_checksum: c.intent.original_state_checksum,
      progress: { checkpoint_count: 0, last_checkpoint: null },
      interrupted_control_sha256: i.control!.checksum,
      recovery: record.recovery,
    };
    const h = appendEvents(i.history.document as HistoryDocument, [entry as never]);
    await b.rawWrite("history", encodeBody(h, i.history.revision + 1));
    const fresh = await store.load();
    if (b.atomic) {
      await rejects(store.pendingResumeAuthorization(fresh), "STATE_CORRUPT_HISTORY");
      return;
    }
    const pending = await store.pendingResumeAuthorization(fresh);
    assert.equal(pending?.authorization_id, record.authorization_id);
    assert.equal((await store.load()).revision, fresh.revision, "the lookup writes nothing");
    await rejects(store.resumeOperation(fresh, resumeRecord()), "BLOCKED_RESUME_CONFLICT");
    const resumed = await store.resumeOperation(fresh, record); // the exact retry
    assert.equal(resumed.control?.opened.version, 5);
    assert.equal(
      resumed.history.events.filter((e) => e.kind === "resume_authorized").length,
      1,
    );
    // the lookup verifies before it answers: a resumed operation is in progress, not interrupted
    await rejects(store.pendingResumeAuthorization(resumed), "BLOCKED_INTERRUPTION_REQUIRED");
  });

  test("an interrupted clear after finalization", async (b) => {
    const store = await lockedStore(b);
    const { intent, snap } = await begun(store);
    const s5 = await checkpoints(store, snap, 5);
    const control = await b.rawRead("control");
    const done = await store.finalizeCompletedRunner(s5);
    // what a local finalize leaves when killed between ownership and clear
    await b.rawWrite("control", control);
    if (b.atomic) {
      await rejects(store.load(), "STATE_CORRUPT_STATE");
      return;
    }
    const fresh = await store.load();
    const lookup = await store.completedReceipt(intent.operation_id);
    assert.equal(lookup?.control_cleared, false);
    await rejects(
      store.recordInterruption(fresh, {
        incident_id: crypto.randomUUID(),
        actor: "t",
        recorded_at: "2026-11-29T10:09:00.000Z",
        reason: "x",
      }),
      "BLOCKED_OPERATION_FROZEN",
    );
    const retry = await store.finalizeCompletedRunner(fresh);
    assert.equal(retry.retried_clear, true);
    assert.equal(retry.snapshot.control, null);
    assert.deepEqual(retry.snapshot.ownership, done.snapshot.ownership);
    assert.equal(retry.snapshot.history.revision, done.snapshot.history.revision);
  });

  test("corruption: an edited ownership document is rejected, never accepted", async (b) => {
    const store = await lockedStore(b);
    await seeded(store);
    const body = (await b.rawRead("ownership"))!;
    await b.rawWrite("ownership", body.replace('"serial":1', '"serial":2'));
    await rejects(store.load(), "STATE_CORRUPT_OWNERSHIP", /checksum mismatch/);
  });

  test("corruption: a truncated journal is rejected", async (b) => {
    const store = await lockedStore(b);
    await begun(store);
    const body = (await b.rawRead("control"))!;
    await b.rawWrite("control", body.slice(0, Math.floor(body.length / 2)));
    await rejects(store.load(), "STATE_CORRUPT_JOURNAL", /not valid JSON/);
  });

  test("corruption: an edited checkpoint byte is caught by its own sha256", async (b) => {
    const store = await lockedStore(b);
    const { snap } = await begun(store);
    const s2 = await checkpoints(store, snap, 2);
    const doc = structuredClone(sealedOf(s2));
    doc.checkpoints[1].bytes = doc.checkpoints[1].bytes.replace('"offset":"5"', '"offset":"6"');
    // even with a consistent outer checksum, the entry's own sha256 rejects it
    await b.rawWrite("control", encodeBody(doc, s2.control!.revision));
    await rejects(store.load(), "STATE_CORRUPT_JOURNAL", /checkpoints\[1\].*sha256 mismatch/);
  });

  test("corruption: an edited history event is rejected", async (b) => {
    const store = await lockedStore(b);
    await seeded(store);
    const s = await store.load();
    const doc = structuredClone(s.history.document);
    doc.events[0].bytes = doc.events[0].bytes.replace('"serial":1', '"serial":3');
    await b.rawWrite("history", encodeBody(doc, s.history.revision));
    await rejects(store.load(), "STATE_CORRUPT_HISTORY", /sha256 mismatch/);
  });

  test("corruption: a wrong history envelope version is rejected", async (b) => {
    const store = await lockedStore(b);
    await seeded(store);
    const s = await store.load();
    await b.rawWrite("history", encodeBody({ ...s.history.document, version: 2 }, 1));
    await rejects(store.load(), "STATE_CORRUPT_HISTORY", /version 2/);
  });

  test("a lost lock stops the next write with STATE_LOCK_LOST", async (b) => {
    const store = await lockedStore(b);
    const [, s1] = await seeded(store);
    await b.loseLock(store);
    await rejects(
      store.commitOwnership(s1, { ...s1.ownership!.document, serial: 2 }),
      "STATE_LOCK_LOST",
    );
    const reader = b.open();
    assert.equal((await reader.load()).ownership?.document.serial, 1);
  });

  // ---- integrity of every stored byte ----------------------------------------------------

  /** Every raw stored byte of the default scope, for "nothing written" checks. */
  const rawAll = async (b: ContractBackend) => ({
    identity: await b.rawIdentity(),
    ownership: await b.rawRead("ownership"),
    control: await b.rawRead("control"),
    history: await b.rawRead("history"),
  });

  /** A store with ownership, a pending runner update with a resume, and its audit. */
  async function fullStore(b: ContractBackend) {
    const store = await lockedStore(b);
    const { snap } = await begun(store);
    const s1 = await checkpoints(store, snap, 1);
    await interruptAndResume(store, s1);
    await store.releaseLock();
    return store;
  }

  /** The corruption is reported precisely by every read path, and nothing is written. */
  async function refusedEverywhere(
    b: ContractBackend,
    store: StateStore,
    code: string,
    field: string,
    message?: RegExp,
  ) {
    const before = await rawAll(b);
    const e = await rejects(store.load(), code, message);
    assert.equal(e.evidence?.field, field, e.message);
    const report = await b.open().verifyIntegrity();
    assert.equal(report.ok, false);
    assert.equal(report.problem?.code, code);
    assert.equal(report.problem?.evidence.field, field);
    // a fresh client cannot init over it, lock it or plan from it
    const other = b.open();
    await rejects(
      (async () => {
        await other.init();
        await other.acquireLock({ actor: "next" });
        await other.load();
      })(),
      code,
    );
    await other.close();
    assert.deepEqual(await rawAll(b), before, "a refused read writes nothing");
  }

  test("integrity: an intact store verifies", async (b) => {
    const store = await fullStore(b);
    const report = await store.verifyIntegrity();
    assert.equal(report.ok, true, report.problem?.message);
    assert.equal(report.identity?.store_id, (await store.identity()).store_id);
    const fresh = b.open();
    assert.deepEqual(await fresh.verifyIntegrity(), { ...report });
  });

  test("integrity: each field of the store identity is sealed", async (b) => {
    const store = await fullStore(b);
    const intact = (await b.rawIdentity())!;
    for (const field of b.identityFields) {
      await b.tamperIdentity(field);
      assert.notEqual(await b.rawIdentity(), intact);
      const named = field === "sha256" ? "created_at" : field;
      await refusedEverywhere(b, store, "STATE_CORRUPT_STORE", named, new RegExp(named));
      await b.restoreIdentity(intact);
      assert.equal((await store.verifyIntegrity()).ok, true);
    }
  });

  test("integrity: a consistently re-sealed identity with another store ID is caught by the audit", async (b) => {
    const store = await fullStore(b);
    await b.forgeIdentity(crypto.randomUUID());
    await refusedEverywhere(b, store, "STATE_CORRUPT_STORE", "store_id", /resume_history|events/);
  });

  for (const name of ["ownership", "control", "history"] as const) {
    test(`integrity: one byte of ${name}'s document or revision is caught`, async (b) => {
      const store = await fullStore(b);
      const body = (await b.rawRead(name))!;
      const code = {
        ownership: "STATE_CORRUPT_OWNERSHIP",
        control: "STATE_CORRUPT_JOURNAL",
        history: "STATE_CORRUPT_HISTORY",
      }[name];
      // a byte of the content
      const i = body.indexOf('"project":"orders"');
      const edited = i >= 0
        ? body.slice(0, i) + '"project":"ordert"' + body.slice(i + 18)
        : body.replace('"format":"sluice.', '"format":"sluicE.');
      assert.notEqual(edited, body);
      await b.rawWrite(name, edited);
      await refusedEverywhere(b, store, code, "document", /checksum mismatch/);
      // a byte of the revision
      const rev = /"revision":(\d+)/.exec(body)!;
      await b.rawWrite(name, body.replace(rev[0], `"revision":${Number(rev[1]) + 1}`));
      await refusedEverywhere(b, store, code, "revision", /revision_sha256/);
      await b.rawWrite(name, body);
      assert.equal((await store.verifyIntegrity()).ok, true);
    });
  }

  test("integrity: an edited ownership with a recomputed checksum is corruption, not a new state", async (b) => {
    const store = await lockedStore(b);
    const [own] = await seeded(store);
    const { snap } = await (async () => {
      const s = await store.load();
      return { snap: s };
    })();
    await store.releaseLock();
    const forged = { ...own, runners: [{ ...own.runners[0], artifact_sha256: hex("forged") }] };
    await b.rawWrite("ownership", encodeBody(forged, snap.ownership!.revision));
    await refusedEverywhere(
      b,
      store,
      "STATE_CORRUPT_OWNERSHIP",
      "document",
      /not the state the history records last: ownership_committed serial 1/,
    );
  });

  test("integrity: ownership is cross-checked against the latest completion receipt", async (b) => {
    const store = await lockedStore(b);
    const { snap } = await begun(store);
    const done = await store.finalizeCompletedRunner(await checkpoints(store, snap, 5));
    await store.releaseLock();
    const result = done.snapshot.ownership!;
    // the receipt's result, with one more change and a recomputed checksum
    const forged = { ...result.document, topics: result.document.topics.slice(1) };
    await b.rawWrite("ownership", encodeBody(forged, result.revision));
    const e = await rejects(store.load(), "STATE_CORRUPT_OWNERSHIP", /runner_completed serial 2/);
    assert.equal(e.evidence?.recorded, done.receipt.result_state_checksum);
    await refusedEverywhere(b, store, "STATE_CORRUPT_OWNERSHIP", "document");
  });

  test("integrity: a re-sealed history event that breaks the state chain is caught", async (b) => {
    const store = await lockedStore(b);
    await seeded(store);
    const s = await store.load();
    await store.releaseLock();
    const doc = structuredClone(s.history.document);
    const event = JSON.parse(doc.events[0].bytes);
    doc.events[0] = seal({ ...event, serial: 2 });
    await b.rawWrite("history", encodeBody(doc, s.history.revision));
    await refusedEverywhere(b, store, "STATE_CORRUPT_HISTORY", "events[0].serial", /serial 2/);
  });
}
