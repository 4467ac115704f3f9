// test-needs: postgres
/**
 * PostgreSQL keeps one row per history event (migration 4, `sluice_history_events`): inserted in
 * the transaction of the state write that records the event, with the event's exact bytes and
 * operation ID, stamped with the database's clock at commit; completion time is that row's, not
 * the application's clock. A store written before the migration keeps every byte of its documents
 * and still verifies; history reads give the same answer on both backends.
 * @module
 */
import assert from "node:assert/strict";
import pg from "pg";
import { SluiceError } from "../../errors.ts";
import { canonicalJson } from "../_canonical.ts";
import { openStateStore, type StateStoreConfig } from "../open.ts";
import type { OperationIntent } from "../journal.ts";
import { emptyOwnership, stateChecksum } from "../ownership.ts";
import { restartEvent } from "../../../testing/state/crash_scenarios.ts";
import type { StateSnapshot, StateStore } from "../store.ts";
import { MIGRATIONS, utcText } from "./migrations.ts";
import { PG_URL, testSchema } from "../../../testing/state/pg_env.ts";
import {
  checkpointChain,
  ownedRunner,
  replaceAction,
  resumeRecord,
  runnerIntent,
} from "../../../testing/state/fixtures.ts";

const PROJECT = "orders";
const SCOPE = canonicalJson([PROJECT, null]);
/** The application's clock in these tests: years away from the database's. */
const SKEWED = new Date("2001-02-03T04:05:06.000Z");

interface Row {
  event_index: number;
  kind: string;
  operation_id: string | null;
  bytes: string;
  sha256: string;
  committed_at: string | null;
}

interface Env extends AsyncDisposable {
  schema: string;
  admin: pg.Client;
  config: StateStoreConfig;
  open(): StateStore;
  rows(): Promise<Row[]>;
  /** The database's clock now (the same text form as `committed_at`). */
  dbNow(): Promise<string>;
}

async function pgEnv(): Promise<Env> {
  const schema = testSchema();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const opened: StateStore[] = [];
  const config: StateStoreConfig = {
    backend: "postgres",
    url: PG_URL,
    schema,
    project: PROJECT,
    environment: null,
  };
  return {
    schema,
    admin,
    config,
    open() {
      const s = openStateStore(config, { clock: () => SKEWED });
      opened.push(s);
      return s;
    },
    async rows() {
      const r = await admin.query(
        `SELECT event_index, kind, operation_id, bytes, sha256,
           ${utcText("committed_at")} AS committed_at
         FROM "${schema}".sluice_history_events WHERE scope = $1 ORDER BY event_index`,
        [SCOPE],
      );
      return r.rows;
    },
    async dbNow() {
      const r = await admin.query(`SELECT ${utcText("clock_timestamp()")} AS t`);
      return r.rows[0].t;
    },
    async [Symbol.asyncDispose]() {
      for (const s of opened) await s.close().catch(() => {});
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}

/** A create (operation and ownership commit) then a replacement interrupted, resumed, finalized. */
async function createThenReplace(store: StateStore, own = ownedRunner(PROJECT, null)) {
  let snap = await store.load();
  const create: OperationIntent = {
    operation_id: crypto.randomUUID(),
    kind: "create",
    project: PROJECT,
    environment: null,
    actor: "tester",
    created_at: "2026-11-29T09:00:00.000Z",
    original_state_checksum: stateChecksum(emptyOwnership(PROJECT, null)),
    reviewed_plan_sha256: null,
    details: {},
  };
  snap = await store.beginOperation(snap, create);
  const created = await store.commitOwnership(snap, own, { operationId: create.operation_id });
  const intent = runnerIntent(own);
  snap = await store.beginOperation(created, intent, [replaceAction(own)]);
  snap = await store.recordCheckpoint(snap, checkpointChain()[0]);
  snap = await store.recordInterruption(snap, {
    incident_id: crypto.randomUUID(),
    actor: "tester",
    recorded_at: "2026-11-29T10:04:00.000Z",
    reason: "the previous invocation ended",
  });
  snap = await store.resumeOperation(snap, resumeRecord());
  for (const cp of checkpointChain().slice(1)) snap = await store.recordCheckpoint(snap, cp);
  const done = await store.finalizeCompletedRunner(snap);
  return { create, intent, created, done };
}

async function rejects(p: Promise<unknown>, code: string, field?: string): Promise<SluiceError> {
  const e = await p.then(() => null, (x) => x);
  assert.ok(e instanceof SluiceError, `expected SluiceError ${code}, got ${e}`);
  assert.equal(e.code, code, `expected ${code}, got ${e.code}: ${e.message}`);
  if (field) assert.equal(e.evidence?.field, field, e.message);
  return e;
}

function assertRowsAreEvents(rows: Row[], snap: StateSnapshot): void {
  assert.equal(rows.length, snap.history.events.length);
  for (const [i, row] of rows.entries()) {
    const entry = snap.history.document.events[i];
    const event = snap.history.events[i] as { kind: string; operation_id?: string | null };
    assert.equal(row.event_index, i);
    assert.equal(row.bytes, entry.bytes, `row ${i} holds the event's canonical bytes`);
    assert.equal(row.sha256, entry.sha256);
    assert.equal(row.kind, event.kind);
    assert.equal(row.operation_id, event.operation_id ?? null);
  }
}

Deno.test("postgres: a create and a replacement leave one row per history event, written with it", async () => {
  await using env = await pgEnv();
  const store = env.open();
  await store.init();
  await store.acquireLock({ actor: "tester" });
  const { create, intent, created, done } = await createThenReplace(store);
  const rows = await env.rows();
  assert.deepEqual(
    rows.map((r) => [r.kind, r.operation_id]),
    [
      ["ownership_committed", create.operation_id],
      ["incident", intent.operation_id],
      ["resume_authorized", intent.operation_id],
      ["runner_completed", intent.operation_id],
    ],
  );
  assertRowsAreEvents(rows, done.snapshot);
  // append only: the create's row kept its bytes and its commit time through every later write
  const [first] = rows;
  assert.equal(first.committed_at, created.history.committed_at?.[0]);
  assert.equal(first.bytes, created.history.document.events[0].bytes);
  // in the state write's transaction: when the row cannot be inserted (an out-of-band row holds
  // its index), the history document written just before it in that transaction is rolled back
  const t = `"${env.schema}".sluice_history_events`;
  await env.admin.query(
    `INSERT INTO ${t} (scope, event_index, kind, operation_id, bytes, sha256)
     VALUES ($1, $2, 'planted', NULL, '{}', 'x')`,
    [SCOPE, rows.length],
  );
  const body = async () =>
    (await env.admin.query(
      `SELECT body FROM "${env.schema}".sluice_documents WHERE scope = $1 AND name = 'history'`,
      [SCOPE],
    )).rows[0].body;
  const document = await body();
  await rejects(store.recordAudit(done.snapshot, restartEvent()), "STATE_CORRUPT_HISTORY", "rows");
  assert.equal(await body(), document, "the document write was rolled back with the row");
  await env.admin.query(`DELETE FROM ${t} WHERE kind = 'planted'`);
  assert.deepEqual(await env.rows(), rows);
  const audited = await store.recordAudit(done.snapshot, restartEvent());
  assertRowsAreEvents(await env.rows(), audited);
});

Deno.test("postgres: completion time is the database's clock at commit, not the application's", async () => {
  await using env = await pgEnv();
  const store = env.open();
  await store.init();
  await store.acquireLock({ actor: "tester" });
  const own = ownedRunner(PROJECT, null);
  const s1 = await store.commitOwnership(await store.load(), own);
  const intent = runnerIntent(own);
  let snap = await store.beginOperation(s1, intent, [replaceAction(own)]);
  for (const cp of checkpointChain()) snap = await store.recordCheckpoint(snap, cp);
  const before = await env.dbNow();
  const done = await store.finalizeCompletedRunner(snap);
  const after = await env.dbNow();
  // the application's (injected, skewed) clock stamps the receipt's own recorded_at ...
  assert.equal(done.receipt.recorded_at, SKEWED.toISOString());
  // ... the completion time is the receipt row's, from the database's clock in its transaction
  const row = (await env.rows()).at(-1)!;
  assert.equal(row.kind, "runner_completed");
  assert.ok(row.committed_at !== null);
  assert.equal(done.completed_at, row.committed_at);
  assert.ok(
    before <= row.committed_at && row.committed_at <= after,
    `${before} ${row.committed_at} ${after}`,
  );
  assert.notEqual(done.completed_at, done.receipt.recorded_at);
  const lookup = await store.completedReceipt(intent.operation_id);
  assert.equal(lookup?.completed_at, row.committed_at);
  // every event's row is stamped by the database, none by the application
  const stamps = (await env.rows()).map((r) => r.committed_at);
  assert.equal(stamps.length, 2);
  assert.ok(stamps.every((t) => t !== null && t > "2026-01-01"), stamps.join(" "));
});

Deno.test("postgres: a store written before migration 4 is migrated keeping every byte and still verifies", async () => {
  await using env = await pgEnv();
  const t = (name: string) => `"${env.schema}".${name}`;
  const writer = env.open();
  await writer.init();
  await writer.acquireLock({ actor: "tester" });
  const { intent, done } = await createThenReplace(writer);
  await writer.close();
  // the schema as migration 3 left it: no event rows, the documents as they were written
  await env.admin.query(`DROP TABLE ${t("sluice_history_events")}`);
  await env.admin.query(`DELETE FROM ${t("sluice_migrations")} WHERE version = 4`);
  const raw = async () =>
    (await env.admin.query(
      `SELECT row_to_json(d)::text AS row FROM ${t("sluice_documents")} d ORDER BY scope, name`,
    )).rows.map((r) => r.row);
  const rawStore = async () =>
    (await env.admin.query(`SELECT row_to_json(s)::text AS row FROM ${t("sluice_store")} s`))
      .rows[0].row;
  const documents = await raw();
  const identity = await rawStore();
  assert.equal(documents.length, 2, "ownership and history (control cleared)");
  const store = env.open();
  await rejects(store.load(), "STATE_NOT_INITIALIZED");
  await store.init();
  assert.equal(MIGRATIONS.at(-1)?.version, 4);
  // no document was rewritten: every byte of every row, updated_at included, is as it was
  assert.deepEqual(await raw(), documents);
  assert.equal(await rawStore(), identity);
  const report = await store.verifyIntegrity();
  assert.equal(report.ok, true, JSON.stringify(report.problem));
  const migrated = await store.load();
  assert.deepEqual(migrated.history.document, done.snapshot.history.document);
  // one row per earlier event, the document's bytes, no commit time the database never recorded
  const rows = await env.rows();
  assertRowsAreEvents(rows, migrated);
  assert.equal(rows.length, 4);
  assert.ok(rows.every((r) => r.committed_at === null));
  // a receipt from before the migration completes at its own recorded_at
  await store.acquireLock({ actor: "tester" });
  const lookup = await store.completedReceipt(intent.operation_id);
  assert.equal(lookup?.completed_at, done.receipt.recorded_at);
  // the next write appends one stamped row; the earlier rows and events keep their bytes
  const locked = await store.load();
  const next = await store.commitOwnership(locked, {
    ...locked.ownership!.document,
    serial: locked.ownership!.document.serial + 1,
  });
  const after = await env.rows();
  assert.deepEqual(after.slice(0, 4), rows);
  assert.equal(after.length, 5);
  assert.equal(after[4].kind, "ownership_committed");
  assert.ok(after[4].committed_at !== null);
  assertRowsAreEvents(after, next);
  assert.deepEqual(next.history.document.events.slice(0, 4), migrated.history.document.events);
});

Deno.test("postgres: an event row edited, removed or added beside its document is STATE_CORRUPT_HISTORY", async () => {
  await using env = await pgEnv();
  const store = env.open();
  await store.init();
  await store.acquireLock({ actor: "tester" });
  await createThenReplace(store);
  const t = `"${env.schema}".sluice_history_events`;
  const intact = await env.rows();
  assert.equal((await store.verifyIntegrity()).ok, true);
  await env.admin.query(
    `UPDATE ${t} SET operation_id = 'someone-else' WHERE scope = $1 AND event_index = 1`,
    [SCOPE],
  );
  await rejects(store.load(), "STATE_CORRUPT_HISTORY", "rows[1].operation_id");
  const report = await store.verifyIntegrity();
  assert.equal(report.problem?.code, "STATE_CORRUPT_HISTORY");
  await env.admin.query(
    `UPDATE ${t} SET operation_id = $2, bytes = replace(bytes, 'tester', 'intruder')
     WHERE scope = $1 AND event_index = 1`,
    [SCOPE, intact[1].operation_id],
  );
  await rejects(store.load(), "STATE_CORRUPT_HISTORY", "rows[1].bytes");
  await env.admin.query(`DELETE FROM ${t} WHERE scope = $1 AND event_index = 1`, [SCOPE]);
  await rejects(store.load(), "STATE_CORRUPT_HISTORY", "rows");
  // an extra row after the last event: the next append meets it, and reading refuses it
  await env.admin.query(
    `INSERT INTO ${t} (scope, event_index, kind, operation_id, bytes, sha256, committed_at)
     SELECT scope, 1, kind, operation_id, bytes, sha256, committed_at FROM ${t}
     WHERE scope = $1 AND event_index = 0`,
    [SCOPE],
  );
  await rejects(store.load(), "STATE_CORRUPT_HISTORY", "rows[1].bytes");
});

Deno.test("history reads give the same answer on both backends (same events, same bytes)", async () => {
  await using env = await pgEnv();
  const dir = await Deno.makeTempDir({ prefix: "sluice_rows_" });
  const own = ownedRunner(PROJECT, null);
  const intent = runnerIntent(own);
  const record = resumeRecord();
  const incident = crypto.randomUUID();
  const histories = [];
  for (
    const config of [env.config, { backend: "local", dir, project: PROJECT, environment: null }]
  ) {
    const store = openStateStore(config as StateStoreConfig, {
      clock: () => SKEWED,
      uuid: () => "6f1c2c1e-1111-4222-8333-444455556666",
    });
    try {
      await store.init();
      await store.acquireLock({ actor: "tester" });
      let snap = await store.commitOwnership(await store.load(), own);
      snap = await store.beginOperation(snap, intent, [replaceAction(own)]);
      snap = await store.recordInterruption(snap, {
        incident_id: incident,
        actor: "tester",
        recorded_at: "2026-11-29T10:04:00.000Z",
        reason: "x",
      });
      snap = await store.resumeOperation(snap, record);
      for (const cp of checkpointChain()) snap = await store.recordCheckpoint(snap, cp);
      const done = await store.finalizeCompletedRunner(snap);
      const read = await store.load();
      histories.push({ backend: config.backend, read, done, identity: read.identity });
    } finally {
      await store.close();
    }
  }
  await Deno.remove(dir, { recursive: true });
  const [onPg, onLocal] = histories;
  assert.equal(onPg.read.history.events.length, 4);
  // the resume authorization names its store (ID, backend, address); everything else is equal
  const named = (h: typeof onPg) =>
    h.read.history.events.map((e) =>
      e.kind === "resume_authorized" ? { ...e, store: null } : e.kind === "runner_completed"
        ? {
          ...e,
          resume_history: e.resume_history.map((r) => ({ ...r, store: null })),
          terminal_control: null,
        }
        : e
    );
  assert.deepEqual(named(onPg), named(onLocal));
  assert.equal(onPg.read.history.document.version, onLocal.read.history.document.version);
  // the events the store stamps without a store name have the same bytes on both backends
  for (const i of [0, 1]) {
    assert.equal(
      onPg.read.history.document.events[i].bytes,
      onLocal.read.history.document.events[i].bytes,
    );
  }
  assert.equal(onLocal.read.history.committed_at, undefined);
  assert.equal(onLocal.done.completed_at, SKEWED.toISOString());
  assert.notEqual(onPg.done.completed_at, SKEWED.toISOString());
});
