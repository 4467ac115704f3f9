/**
 * Crash safety of both state backends at every fault site of the state layer
 * (`sites.ts`): for each transition, a worker process runs it with one site armed
 * (`SLUICE_FAULT_POINT=<site>:<before|after>` + `SLUICE_TEST_ONLY_ALLOW_FAULTS=1`) and dies by
 * SIGKILL there. Then:
 *
 * - every stored document is byte for byte its content before the transition or after it
 *   (an unfaulted reference run of the same deterministic transition), never torn, and
 *   exactly the combination the site predicts: local files are written one at a time in the
 *   declared order, a PostgreSQL transition is before or after its COMMIT;
 * - a fresh process reads the store with every integrity check passing and continues to the
 *   transition's completed state through the public store operations (breaking the dead
 *   writer's stale local lock explicitly, interrupting and resuming, exact retries).
 *
 * The last test checks coverage both ways: every site the transitions crossed is declared in
 * `STATE_SITES`, and every declared site was crossed and killed on both sides.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import pg from "pg";
import {
  checkpointChain,
  ownedRunner,
  replaceAction,
  resumeRecord,
  runnerIntent,
} from "../../testing/state/fixtures.ts";
import { PG_URL, testSchema } from "../../testing/state/pg_env.ts";
import { runWorker } from "../../testing/state/spawn.ts";
import { sha256Hex } from "./_canonical.ts";
import { revisionOfBody } from "./_stored.ts";
import { TEMP_FILE } from "./local/atomic_write.ts";
import { openStateStore, type StateStoreConfig } from "./open.ts";
import { emptyOwnership, type OwnershipDocument, stateChecksum } from "./ownership.ts";
import { LOCAL_WRITE_ORDER, type LocalFile, STATE_SITES, type StateTransition } from "./sites.ts";
import type { StateSnapshot, StateStore } from "./store.ts";

const PROJECT = "orders";
const DOCS = ["store", "ownership", "control", "history"] as const;
type Doc = typeof DOCS[number];
type Captured = Record<Doc | "lock", string | null> & { temps: string[] };
type Backend = "local" | "postgres";
type Side = "before" | "after";

/** Where one scenario's store lives, with raw capture and restore (bypassing the store). */
interface Location {
  backend: Backend;
  config: StateStoreConfig;
  capture(): Promise<Captured>;
  restore(c: Captured): Promise<void>;
  cleanup(): Promise<void>;
}

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

async function localLocation(): Promise<Location> {
  const root = await Deno.makeTempDir({ prefix: "sluice_crash_" });
  const scope = join(root, PROJECT);
  const temps = async (dir: string) => {
    const out: string[] = [];
    try {
      for await (const e of Deno.readDir(dir)) if (TEMP_FILE.test(e.name)) out.push(e.name);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    return out;
  };
  return {
    backend: "local",
    config: { backend: "local", dir: root, project: PROJECT, environment: null },
    async capture() {
      return {
        store: await readOrNull(join(root, "store.json")),
        ownership: await readOrNull(join(scope, "ownership.json")),
        control: await readOrNull(join(scope, "control.json")),
        history: await readOrNull(join(scope, "history.json")),
        lock: await readOrNull(join(scope, "lock.json")),
        temps: [...await temps(root), ...await temps(scope)],
      };
    },
    async restore(c) {
      await Deno.remove(root, { recursive: true });
      await Deno.mkdir(scope, { recursive: true });
      if (c.store !== null) await Deno.writeTextFile(join(root, "store.json"), c.store);
      for (const name of ["ownership", "control", "history", "lock"] as const) {
        if (c[name] !== null) await Deno.writeTextFile(join(scope, `${name}.json`), c[name]!);
      }
    },
    async cleanup() {
      await Deno.remove(root, { recursive: true });
    },
  };
}

async function pgLocation(): Promise<Location> {
  const schema = testSchema();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const q = `"${schema}"`;
  const scope = JSON.stringify([PROJECT, null]);
  const exists = async () =>
    (await admin.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])).rows.length ===
      1;
  return {
    backend: "postgres",
    config: { backend: "postgres", url: PG_URL, schema, project: PROJECT, environment: null },
    async capture() {
      const c: Captured = {
        store: null,
        ownership: null,
        control: null,
        history: null,
        lock: null,
        temps: [],
      };
      if (!await exists()) return c;
      const s = await admin.query(
        `SELECT store_id::text || '|' || created_at::text || '|' || version || '|' || sha256 AS t
         FROM ${q}.sluice_store`,
      ).catch(() => ({ rows: [] as Array<{ t: string }> }));
      c.store = s.rows[0]?.t ?? null;
      const docs = await admin.query(
        `SELECT name, body FROM ${q}.sluice_documents WHERE scope = $1`,
        [scope],
      ).catch(() => ({ rows: [] as Array<{ name: string; body: string }> }));
      for (const r of docs.rows) c[r.name as "ownership"] = r.body;
      const lock = await admin.query(
        `SELECT lock_id::text, owner, session_pid, acquired_at FROM ${q}.sluice_locks
         WHERE scope = $1`,
        [scope],
      ).catch(() => ({ rows: [] }));
      c.lock = lock.rows[0] ? JSON.stringify(lock.rows[0]) : null;
      return c;
    },
    async restore(c) {
      if (c.store === null) {
        await admin.query(`DROP SCHEMA IF EXISTS ${q} CASCADE`);
        return;
      }
      await admin.query(`DELETE FROM ${q}.sluice_documents`);
      await admin.query(`DELETE FROM ${q}.sluice_locks`);
      for (const name of ["ownership", "control", "history"] as const) {
        const body = c[name];
        if (body === null) continue;
        await admin.query(
          `INSERT INTO ${q}.sluice_documents (scope, name, body, body_sha256, revision)
           VALUES ($1, $2, $3, $4, $5)`,
          [scope, name, body, sha256Hex(body), revisionOfBody(body)],
        );
      }
      if (c.lock !== null) {
        const l = JSON.parse(c.lock);
        await admin.query(
          `INSERT INTO ${q}.sluice_locks (scope, lock_id, owner, session_pid, acquired_at)
           VALUES ($1, $2, $3, $4, $5)`,
          [scope, l.lock_id, l.owner, l.session_pid, l.acquired_at],
        );
      }
    },
    async cleanup() {
      await admin.query(`DROP SCHEMA IF EXISTS ${q} CASCADE`);
      await admin.end();
    },
  };
}

const incident = () => ({
  incident_id: crypto.randomUUID(),
  actor: "t",
  recorded_at: "2026-11-29T10:04:00.000Z",
  reason: "worker died",
});

/** The worker's lock UUID (deterministic, so reference and crash runs write the same bytes). */
const WORKER_LOCK = "0badc0de-0000-4000-8000-000000000001";

/** Prepare state in-process, under a lock released before the worker runs. */
async function prepared(
  loc: Location,
  fn: (store: StateStore, snap: StateSnapshot) => Promise<Record<string, unknown>>,
  options: { lockId?: string } = {},
): Promise<Record<string, unknown>> {
  const store = openStateStore(loc.config, options.lockId ? { uuid: () => options.lockId! } : {});
  try {
    await store.init();
    await store.acquireLock({ actor: "setup" });
    const arg = await fn(store, await store.load());
    await store.releaseLock();
    return arg;
  } finally {
    await store.close();
  }
}

async function seedRunner(store: StateStore, snap: StateSnapshot) {
  const own = ownedRunner(PROJECT, null);
  return { own, snap: await store.commitOwnership(snap, own) };
}

/** One transition run by the worker, with its preparation and its continuation. */
interface Scenario {
  transition: StateTransition | "lock" | "break";
  /** What distinguishes it from another scenario of the same transition. */
  variant?: string;
  prepare(loc: Location): Promise<Record<string, unknown>>;
  /**
   * From whatever a crash left (read under a fresh lock, integrity verified), continue with
   * public store operations to the transition's completed state and check it.
   */
  finish(store: StateStore, snap: StateSnapshot, arg: Record<string, unknown>): Promise<void>;
}

const count = (snap: StateSnapshot, kind: string) =>
  snap.history.events.filter((e) => e.kind === kind).length;

const SCENARIOS: Scenario[] = [
  {
    transition: "init",
    prepare: () => Promise.resolve({}),
    async finish(store) {
      const a = await store.identity();
      assert.equal((await store.init()).store_id, a.store_id);
    },
  },
  {
    transition: "begin",
    prepare: (loc) =>
      prepared(loc, async (store, snap) => {
        const { own } = await seedRunner(store, snap);
        return { intent: runnerIntent(own), action: replaceAction(own) };
      }),
    async finish(store, snap, arg) {
      if (!snap.control) {
        snap = await store.beginOperation(snap, arg.intent as never, [arg.action as never]);
      }
      assert.equal(snap.control!.opened.version, 4);
      assert.equal(
        snap.control!.opened.operation_id,
        (arg.intent as { operation_id: string })
          .operation_id,
      );
      assert.equal(snap.control!.opened.checkpoints.length, 0);
    },
  },
  {
    transition: "checkpoint",
    prepare: (loc) =>
      prepared(loc, async (store, snap) => {
        const { own, snap: s1 } = await seedRunner(store, snap);
        const s = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
        await store.recordCheckpoint(s, checkpointChain()[0]);
        return { checkpoint: checkpointChain()[1] };
      }, { lockId: WORKER_LOCK }),
    async finish(store, snap) {
      let c = snap.control!.opened;
      if (c.checkpoints.length === 1) {
        // the worker died before its checkpoint: interrupt, resume, record it again
        snap = await store.recordInterruption(snap, incident());
        snap = await store.resumeOperation(snap, resumeRecord());
        snap = await store.recordCheckpoint(snap, checkpointChain()[1]);
        c = snap.control!.opened;
      }
      assert.deepEqual(c.checkpoints.map((x) => x.name), ["action_started", "old_closed"]);
    },
  },
  {
    transition: "interrupt",
    prepare: (loc) =>
      prepared(loc, async (store, snap) => {
        const { own, snap: s1 } = await seedRunner(store, snap);
        const s = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
        await store.recordCheckpoint(s, checkpointChain()[0]);
        return { incident: incident() };
      }),
    async finish(store, snap, arg) {
      const id = (arg.incident as { incident_id: string }).incident_id;
      if (snap.control!.opened.status === "in_progress") {
        snap = await store.recordInterruption(snap, arg.incident as never);
      }
      assert.equal(snap.control!.opened.incidents[0].incident_id, id);
      // the next history write archives an incident that only control holds (local)
      snap = await store.resumeOperation(snap, resumeRecord());
      assert.deepEqual(snap.history.events.map((e) => e.kind).slice(-2), [
        "incident",
        "resume_authorized",
      ]);
      assert.equal(count(snap, "incident"), 1);
    },
  },
  {
    transition: "resume",
    prepare: (loc) =>
      prepared(loc, async (store, snap) => {
        const { own, snap: s1 } = await seedRunner(store, snap);
        let s = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
        s = await store.recordCheckpoint(s, checkpointChain()[0]);
        await store.recordInterruption(s, incident());
        return { record: resumeRecord() };
      }),
    async finish(store, snap, arg) {
      const record = arg.record as ReturnType<typeof resumeRecord>;
      if (snap.control!.opened.version === 4) {
        const pending = await store.pendingResumeAuthorization(snap);
        if (pending) {
          // the archived authorization permits only its exact retry
          assert.equal(pending.authorization_id, record.authorization_id);
          await assert.rejects(store.resumeOperation(snap, resumeRecord()), /exact retry/);
        }
        snap = await store.resumeOperation(snap, record);
      }
      assert.equal(snap.control!.opened.version, 5);
      assert.equal(
        snap.control!.opened.resume_history[0].authorization_id,
        record.authorization_id,
      );
      assert.equal(count(snap, "resume_authorized"), 1);
      assert.equal(await store.pendingResumeAuthorization(snap), null);
    },
  },
  {
    transition: "finalize",
    prepare: (loc) =>
      prepared(loc, async (store, snap) => {
        const { own, snap: s1 } = await seedRunner(store, snap);
        let s = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
        for (const cp of checkpointChain()) s = await store.recordCheckpoint(s, cp);
        await store.recordInterruption(s, incident());
        return { own };
      }),
    async finish(store, snap, arg) {
      const own = arg.own as OwnershipDocument;
      const opId = snap.control?.opened.operation_id;
      if (snap.control) snap = (await store.finalizeCompletedRunner(snap)).snapshot;
      // exactly one serial increment and one receipt, whatever the crash point
      assert.equal(snap.control, null);
      assert.equal(snap.ownership!.document.serial, own.serial + 1);
      assert.equal(count(snap, "runner_completed"), 1);
      const receipt = snap.history.events.find((e) => e.kind === "runner_completed")!;
      assert.ok(opId === undefined || receipt.operation_id === opId);
      assert.equal((await store.completedReceipt(receipt.operation_id!))?.control_cleared, true);
    },
  },
  {
    transition: "commit_ownership",
    prepare: (loc) =>
      prepared(loc, async (store, snap) => {
        await store.beginOperation(snap, {
          operation_id: crypto.randomUUID(),
          kind: "create",
          project: PROJECT,
          environment: null,
          actor: "t",
          created_at: "2026-11-29T09:00:00.000Z",
          original_state_checksum: stateChecksum(emptyOwnership(PROJECT, null)),
          reviewed_plan_sha256: null,
          details: {},
        });
        return { ownership: ownedRunner(PROJECT, null) };
      }),
    async finish(store, snap, arg) {
      const desired = arg.ownership as OwnershipDocument;
      if (snap.control) {
        snap = await store.commitOwnership(snap, desired, {
          operationId: snap.control.opened.operation_id,
        });
      }
      assert.equal(snap.control, null);
      assert.equal(snap.ownership!.checksum, stateChecksum(desired));
      assert.equal(count(snap, "ownership_committed"), 1);
    },
  },
  {
    transition: "commit_ownership",
    variant: "without an operation",
    prepare: (loc) =>
      prepared(loc, () => Promise.resolve({ ownership: ownedRunner(PROJECT, null) })),
    async finish(store, snap, arg) {
      const desired = arg.ownership as OwnershipDocument;
      if (snap.ownership === null) {
        // local: the commit was archived, never applied; its exact retry supersedes it
        snap = await store.commitOwnership(snap, desired);
      }
      assert.equal(snap.ownership!.checksum, stateChecksum(desired));
      assert.ok(count(snap, "ownership_committed") >= 1);
      const last = snap.history.events.at(-1)!;
      assert.ok(last.kind === "ownership_committed" && last.serial === 1);
    },
  },
  {
    transition: "lock",
    prepare: (loc) => prepared(loc, (store, snap) => seedRunner(store, snap).then(() => ({}))),
    finish: () => Promise.resolve(), // the fresh process holds the lock: that is the check
  },
  {
    transition: "break",
    async prepare(loc) {
      await prepared(loc, (store, snap) => seedRunner(store, snap).then(() => ({})));
      const died = await runWorker("die", loc.config, { actor: "doomed" });
      assert.equal(died.signal, "SIGKILL");
      const staleLockId = died.lines[0].lock_id as string;
      const probe = openStateStore(loc.config);
      try {
        // PostgreSQL: wait until the server has ended the dead session
        for (let i = 0; i < 200 && loc.backend === "postgres"; i++) {
          if (!(await probe.inspectLock()).held) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        const status = await probe.inspectLock();
        assert.equal(status.held, loc.backend === "local", status.diagnosis);
        assert.equal(status.stale, loc.backend === "local", status.diagnosis);
      } finally {
        await probe.close();
      }
      return { staleLockId };
    },
    finish: () => Promise.resolve(),
  },
];

/**
 * The sites a scenario kills at on a backend: the declared sites of its transition that its
 * reference run crossed (the coverage test checks every declared site is killed somewhere).
 */
function sitesOf(sc: Scenario, backend: Backend, crossed: string[]): string[] {
  return STATE_SITES.filter((s) => s.backends!.includes(backend)).map((s) => s.name).filter(
    (name) => crossed.includes(name),
  ).filter(
    (name) => {
      const parts = name.split(".");
      if (sc.transition === "lock") {
        return name === `lock.${backend}.acquire` ||
          name === `lock.${backend}.release`;
      }
      if (sc.transition === "break") return name === `lock.${backend}.break`;
      return parts[0] === "state" && parts[2] === sc.transition;
    },
  );
}

/**
 * The documents a crash at `site`/`side` must leave at their "after" content (the rest at
 * "before"), for a reference run that changed `changed` documents.
 */
function expectedAfter(
  backend: Backend,
  site: string,
  side: Side,
  transition: Scenario["transition"],
  changed: Doc[],
): Set<Doc> {
  if (site.startsWith("lock.")) return new Set(); // lock operations write no document
  if (backend === "postgres") return new Set(side === "after" ? changed : []);
  const [, , , file, step] = site.split(".");
  const order = LOCAL_WRITE_ORDER[transition as StateTransition].map((w) => w.file)
    .filter((f) => changed.includes(f));
  const at = order.indexOf(file as LocalFile);
  assert.ok(at >= 0, `${site}: ${file} is not written by the reference run`);
  const done = step === "dirsync" || (side === "after" && step !== "temp");
  return new Set(order.slice(0, done ? at + 1 : at));
}

const crossedBy = new Map<Backend, Set<string>>([["local", new Set()], ["postgres", new Set()]]);
const killedAt = new Map<Backend, Set<string>>([["local", new Set()], ["postgres", new Set()]]);

async function recoverAndFinish(loc: Location, sc: Scenario, arg: Record<string, unknown>) {
  const store = openStateStore(loc.config);
  try {
    await store.init();
    const status = await store.inspectLock();
    if (loc.backend === "local" && status.held) {
      // the dead writer's lock is reported stale and broken explicitly, never silently
      assert.equal(status.stale, true, status.diagnosis);
      await store.breakStaleLock(status.holder!.lock_id);
    }
    // PostgreSQL: the server releases the dead session's lock once it sees the socket close
    await store.acquireLock({ actor: "recovery", timeoutMs: 30_000 });
    const snap = await store.load(); // every integrity check: throws on a torn or edited byte
    await sc.finish(store, snap, arg);
    const final = await store.load();
    assert.ok(final.identity.store_id);
  } finally {
    await store.close();
  }
  // the temp file of a write killed before its rename is removed by the next lock holder
  const left = await loc.capture();
  assert.deepEqual(left.temps.filter((t) => !t.startsWith("store.json")), []);
}

for (const backend of ["local", "postgres"] as const) {
  for (const sc of SCENARIOS) {
    const title = `${sc.transition}${sc.variant ? ` ${sc.variant}` : ""}`;
    Deno.test(`${backend} crash: ${title}, killed before and after each of its sites, is never torn`, async () => {
      const loc = backend === "local" ? await localLocation() : await pgLocation();
      try {
        const arg = await sc.prepare(loc);
        const workerArg = { scenario: sc.transition, lockId: WORKER_LOCK, ...arg };
        const before = await loc.capture();
        // reference: the same deterministic transition, unfaulted
        const ref = await runWorker("transition", loc.config, workerArg);
        assert.equal(ref.code, 0, ref.stderr);
        const crossed = (ref.lines.at(-1)!.crossed as string[]).map((c) => c.split(":")[0]);
        for (const c of crossed) crossedBy.get(backend)!.add(c);
        const after = await loc.capture();
        const changed = DOCS.filter((d) => before[d] !== after[d]);
        const sites = sitesOf(sc, backend, crossed);
        assert.ok(sites.length > 0, `${sc.transition} has no ${backend} sites`);
        const seen: string[] = [];
        for (const site of sites) {
          for (const side of ["before", "after"] as const) {
            await loc.restore(before);
            const res = await runWorker("transition", loc.config, workerArg, {
              SLUICE_FAULT_POINT: `${site}:${side}`,
              SLUICE_TEST_ONLY_ALLOW_FAULTS: "1",
            });
            assert.equal(res.signal, "SIGKILL", `${site}:${side} did not kill: ${res.stderr}`);
            assert.match(res.stderr, new RegExp(`SLUICE_FAULT_FIRED ${site}:${side}@1`));
            killedAt.get(backend)!.add(`${site}:${side}`);
            const crashed = await loc.capture();
            const want = expectedAfter(backend, site, side, sc.transition, changed);
            for (const d of DOCS) {
              if (sc.transition === "init" && d === "store") {
                // a new identity is random: present (and verified below) or absent
                assert.equal(crashed.store !== null, want.has("store"), `${site}:${side} store`);
                continue;
              }
              const expected = want.has(d) ? after[d] : before[d];
              assert.equal(
                crashed[d],
                expected,
                `${site}:${side}: ${d} must be its ${want.has(d) ? "after" : "before"} bytes`,
              );
            }
            // the lock: held through every document write; a lock operation is before or after
            const op = site.startsWith("lock.") ? site.split(".")[2] : null;
            const lockHeld = op === null
              ? sc.transition !== "init"
              : op === "acquire"
              ? side === "after"
              : side === "before";
            assert.equal(crashed.lock !== null, lockHeld, `${site}:${side}: lock ${crashed.lock}`);
            await recoverAndFinish(loc, sc, arg);
            const state = changed.map((d) => `${d}=${want.has(d) ? "after" : "before"}`);
            seen.push(
              `${site}:${side}: ${state.join(" ") || "no document changes"}${
                crashed.temps.length ? ` (${crashed.temps.length} temp file ignored)` : ""
              }`,
            );
          }
        }
        assert.equal(seen.length, sites.length * 2);
        console.log(seen.join("\n"));
      } finally {
        await loc.cleanup();
      }
    });
  }

  Deno.test(`${backend} crash: every declared state site was crossed and killed on both sides`, () => {
    const declared = STATE_SITES.filter((s) => s.backends!.includes(backend)).map((s) => s.name)
      .sort();
    const crossed = crossedBy.get(backend)!;
    // every crossed site is declared (for this backend) ...
    assert.deepEqual([...crossed].filter((s) => !declared.includes(s)), []);
    // ... and every declared site was crossed by some transition and killed before and after
    assert.deepEqual(declared.filter((s) => !crossed.has(s)), []);
    const killed = killedAt.get(backend)!;
    assert.deepEqual(
      declared.flatMap((s) => [`${s}:before`, `${s}:after`]).filter((k) => !killed.has(k)),
      [],
    );
    console.log(`${backend}: ${declared.length} sites, ${killed.size} kills`);
  });
}
