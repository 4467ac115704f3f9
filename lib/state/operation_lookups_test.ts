// test-needs: postgres
/**
 * The two read-only operation lookups, on both backends' real code:
 *
 * - `pendingResumeAuthorization` verifies before it answers: every check shared with resume
 *   (a runner update, not frozen, not terminal, an interruption recorded, a reviewed plan, the
 *   protected state unchanged) runs before it returns null for "no archived authorization".
 * - `completedReceipt` of a completed create, connector change or runner removal (an
 *   `ownership_committed` event, never a replacement receipt) is the precise blocker
 *   `BLOCKED_NOT_A_REPLACEMENT`; a replacement whose completion lacks its receipt stays
 *   `STATE_CORRUPT_HISTORY`.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import pg from "pg";
import { exitCodeFor, SluiceError } from "../errors.ts";
import { sha256Hex } from "./_canonical.ts";
import { encodeBody, revisionOfBody } from "./_stored.ts";
import { appendEvents, emptyHistory, type HistoryEvent } from "./history.ts";
import type { OperationIntent } from "./journal.ts";
import { openStateStore } from "./open.ts";
import {
  emptyOwnership,
  type OwnershipDocument,
  stateChecksum,
  withConnectors,
} from "./ownership.ts";
import type { DocName } from "./primitive.ts";
import type { StateSnapshot, StateStore } from "./store.ts";
import { begun, checkpoints } from "../../testing/state/contract_suite.ts";
import { PG_URL, syncHistoryRows, testSchema } from "../../testing/state/pg_env.ts";
import { hex, ownedConnector, ownedRunner, resumeRecord } from "../../testing/state/fixtures.ts";

const PROJECT = "orders";
const BACKENDS = ["local", "postgres"] as const;
type Backend = typeof BACKENDS[number];

/** A locked store of one backend, with an out-of-band writer of its stored documents. */
interface Case extends AsyncDisposable {
  store: StateStore;
  /** Write a stored document body, bypassing the store and its lock. */
  rawWrite(name: DocName, body: string): Promise<void>;
}

async function openCase(backend: Backend): Promise<Case> {
  if (backend === "local") {
    const dir = await Deno.makeTempDir({ prefix: "sluice_lookups_" });
    const store = openStateStore({ backend: "local", dir, project: PROJECT, environment: null });
    await store.init();
    await store.acquireLock({ actor: "tester" });
    return {
      store,
      rawWrite: (name, body) => Deno.writeTextFile(join(dir, PROJECT, `${name}.json`), body),
      async [Symbol.asyncDispose]() {
        await store.close().catch(() => {});
        await Deno.remove(dir, { recursive: true });
      },
    };
  }
  const schema = testSchema();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const scope = JSON.stringify([PROJECT, null]);
  const store = openStateStore({
    backend: "postgres",
    url: PG_URL,
    schema,
    project: PROJECT,
    environment: null,
  });
  await store.init();
  await store.acquireLock({ actor: "tester" });
  return {
    store,
    async rawWrite(name, body) {
      await admin.query(
        `UPDATE "${schema}".sluice_documents SET body = $3, body_sha256 = $4, revision = $5
         WHERE scope = $1 AND name = $2`,
        [scope, name, body, sha256Hex(body), Math.max(1, revisionOfBody(body))],
      );
      if (name === "history") await syncHistoryRows(admin, schema, scope, body);
    },
    async [Symbol.asyncDispose]() {
      await store.close().catch(() => {});
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}

async function rejects(p: Promise<unknown>, code: string): Promise<SluiceError> {
  const e = await p.then(() => null, (x) => x);
  assert.ok(e instanceof SluiceError, `expected SluiceError ${code}, got ${e}`);
  assert.equal(e.code, code, `expected ${code}, got ${e.code}: ${e.message}`);
  return e;
}

function interrupt(store: StateStore, snap: StateSnapshot): Promise<StateSnapshot> {
  return store.recordInterruption(snap, {
    incident_id: crypto.randomUUID(),
    actor: "tester",
    recorded_at: "2026-11-29T10:04:00.000Z",
    reason: "the previous invocation ended without finishing",
  });
}

/** Replace the stored history by `events` (re-sealed; the envelope version follows them). */
async function rewriteHistory(c: Case, snap: StateSnapshot, events: HistoryEvent[]) {
  const h = appendEvents(emptyHistory(PROJECT, null), events);
  await c.rawWrite("history", encodeBody(h, snap.history.revision + 1));
  return await c.store.load();
}

/** A resume authorization archived in history only (what a local resume killed mid-way leaves). */
function archivedAuthorization(snap: StateSnapshot, controlSha256: string): HistoryEvent {
  const c = snap.control!.opened;
  const r = resumeRecord();
  return {
    kind: "resume_authorized",
    authorization_id: r.authorization_id,
    operation_id: c.operation_id,
    actor: r.actor,
    authorized_at: r.authorized_at,
    store: snap.identity,
    original_state_checksum: c.intent.original_state_checksum,
    progress: { checkpoint_count: c.checkpoints.length, last_checkpoint: null },
    interrupted_control_sha256: controlSha256,
    recovery: r.recovery,
  } as HistoryEvent;
}

for (const backend of BACKENDS) {
  // ---- pendingResumeAuthorization: every check runs before any answer -------------------

  Deno.test(`[${backend}] the pending lookup of a runner update left in progress is BLOCKED_INTERRUPTION_REQUIRED, not null`, async () => {
    await using c = await openCase(backend);
    const { snap } = await begun(c.store);
    const s = await checkpoints(c.store, snap, 2);
    assert.equal(s.control!.opened.status, "in_progress");
    const e = await rejects(c.store.pendingResumeAuthorization(s), "BLOCKED_INTERRUPTION_REQUIRED");
    assert.equal(exitCodeFor(e), 4);
    assert.equal((await c.store.load()).revision, s.revision, "the lookup writes nothing");
  });

  Deno.test(`[${backend}] the pending lookup of a runner update recorded completed is BLOCKED_OPERATION_TERMINAL, not null`, async () => {
    await using c = await openCase(backend);
    const { snap } = await begun(c.store);
    const s = await interrupt(c.store, await checkpoints(c.store, snap, 5));
    await rejects(c.store.pendingResumeAuthorization(s), "BLOCKED_OPERATION_TERMINAL");
  });

  Deno.test(`[${backend}] the pending lookup of an interrupted runner update without a reviewed plan is BLOCKED_NOT_REVIEWED, not null`, async () => {
    await using c = await openCase(backend);
    const { snap } = await begun(c.store, { reviewed: false });
    const s = await interrupt(c.store, await checkpoints(c.store, snap, 2));
    await rejects(c.store.pendingResumeAuthorization(s), "BLOCKED_NOT_REVIEWED");
  });

  Deno.test(`[${backend}] the pending lookup of a verified interrupted runner update without an archived authorization is null and writes nothing`, async () => {
    await using c = await openCase(backend);
    const { snap } = await begun(c.store);
    const s = await interrupt(c.store, await checkpoints(c.store, snap, 2));
    assert.equal(await c.store.pendingResumeAuthorization(s), null);
    assert.equal((await c.store.load()).revision, s.revision, "the lookup writes nothing");
  });

  Deno.test(`[${backend}] the pending lookup with two competing archived authorizations is BLOCKED_RESUME_CONFLICT`, async () => {
    await using c = await openCase(backend);
    const { snap } = await begun(c.store);
    const s = await interrupt(c.store, snap);
    const fresh = await rewriteHistory(c, s, [
      ...s.history.events,
      archivedAuthorization(s, s.control!.checksum),
      archivedAuthorization(s, s.control!.checksum),
    ]);
    await rejects(c.store.pendingResumeAuthorization(fresh), "BLOCKED_RESUME_CONFLICT");
  });

  Deno.test(`[${backend}] the pending lookup of an archived authorization made for another control is BLOCKED_RESUME_CONFLICT`, async () => {
    await using c = await openCase(backend);
    const { snap } = await begun(c.store);
    const s = await interrupt(c.store, snap);
    const fresh = await rewriteHistory(c, s, [
      ...s.history.events,
      archivedAuthorization(s, hex("another control")),
    ]);
    await rejects(c.store.pendingResumeAuthorization(fresh), "BLOCKED_RESUME_CONFLICT");
  });

  // ---- completedReceipt: an ownership commit is not a corrupt replacement ------------------

  for (const kind of ["create", "connector_change", "runner_removal"] as const) {
    Deno.test(`[${backend}] the completed-receipt lookup of a completed ${kind} is BLOCKED_NOT_A_REPLACEMENT, not a corrupt store`, async () => {
      await using c = await openCase(backend);
      let snap = await c.store.load();
      let next: OwnershipDocument = ownedRunner(PROJECT, null);
      if (kind !== "create") {
        snap = await c.store.commitOwnership(snap, next);
        next = kind === "connector_change"
          ? withConnectors({ ...next, serial: 2 }, [ownedConnector(PROJECT, null)])
          : { ...emptyOwnership(PROJECT, null), serial: 2 };
      }
      const intent: OperationIntent = {
        operation_id: crypto.randomUUID(),
        kind,
        project: PROJECT,
        environment: null,
        actor: "tester",
        created_at: "2026-11-29T10:00:00.000Z",
        original_state_checksum: snap.ownership?.checksum ??
          stateChecksum(emptyOwnership(PROJECT, null)),
        reviewed_plan_sha256: hex(`plan-${kind}`),
        details: {},
      };
      snap = await c.store.beginOperation(snap, intent);
      // an interruption (an incident naming the operation) does not make it a replacement
      if (kind === "connector_change") snap = await interrupt(c.store, snap);
      snap = await c.store.commitOwnership(snap, next, { operationId: intent.operation_id });
      assert.equal(snap.control, null);
      const e = await rejects(
        c.store.completedReceipt(intent.operation_id),
        "BLOCKED_NOT_A_REPLACEMENT",
      );
      assert.equal(exitCodeFor(e), 4);
      assert.match(e.message, new RegExp(intent.operation_id));
      assert.match(e.message, /not a runner replacement/);
      assert.match(e.message, /nothing to resume/);
      assert.equal((await c.store.load()).revision, snap.revision, "the lookup writes nothing");
    });
  }

  Deno.test(`[${backend}] a replacement that completed with an ownership commit but no receipt stays STATE_CORRUPT_HISTORY`, async () => {
    await using c = await openCase(backend);
    const { intent, snap } = await begun(c.store);
    // interrupted and resumed: history names it a replacement (a resume authorization)
    let s = await interrupt(c.store, await checkpoints(c.store, snap, 3));
    s = await c.store.resumeOperation(s, resumeRecord());
    s = await checkpoints(c.store, s, 5, 3);
    const done = await c.store.finalizeCompletedRunner(s);
    const receipt = done.receipt;
    // the receipt is replaced by a consistent ownership commit of the same result state
    const forged = await rewriteHistory(
      c,
      done.snapshot,
      done.snapshot.history.events.map((e): HistoryEvent =>
        e.kind === "runner_completed"
          ? {
            kind: "ownership_committed",
            operation_id: receipt.operation_id,
            recorded_at: receipt.recorded_at,
            serial: receipt.result_serial,
            state_checksum: receipt.result_state_checksum,
          }
          : e
      ),
    );
    assert.ok(forged.history.events.some((e) => e.kind === "resume_authorized"));
    const e = await rejects(c.store.completedReceipt(intent.operation_id), "STATE_CORRUPT_HISTORY");
    assert.equal(exitCodeFor(e), 3);
    assert.match(e.message, /no operation receipt: .*resume_authorized/);
  });
}
