/**
 * Crash safety of the local backend: a writer process is killed with SIGKILL before and
 * after each durable write of each transition. The store is then before or after each file
 * write, never torn, and the non-atomic sequences leave exactly the intermediate states the
 * spec names (an unarchived incident, an archived pending authorization, an archived
 * receipt before ownership, result ownership before clear), each completed by a retry.
 * @module
 */
import assert from "node:assert/strict";
import {
  checkpointChain,
  ownedRunner,
  replaceAction,
  resumeRecord,
  runnerIntent,
} from "../_fixtures.ts";
import { runWorker } from "../_spawn.ts";
import type { ControlV45 } from "../journal.ts";
import { openStateStore, type StateStoreConfig } from "../open.ts";
import { emptyOwnership, stateChecksum } from "../ownership.ts";
import type { StateSnapshot, StateStore } from "../store.ts";

const PROJECT = "orders";
type Side = "before" | "mid" | "after";

interface Scenario {
  name: string;
  writes: number;
  /** Prepare state in-process (under a lock released before the worker runs). */
  prepare(store: StateStore, snap: StateSnapshot): Promise<Record<string, unknown>>;
  /** Check the state after a crash at `n`/`side`, then finish by retrying; return a label. */
  verify(
    store: StateStore,
    snap: StateSnapshot,
    n: number,
    side: Side,
    arg: Record<string, unknown>,
  ): Promise<string>;
}

const incident = () => ({
  incident_id: crypto.randomUUID(),
  actor: "t",
  recorded_at: "2026-11-29T10:04:00.000Z",
  reason: "worker died",
});

/** Position k in a sequence of writes: how many writes are durable after the crash. */
function durable(n: number, side: Side): number {
  return side === "after" ? n : n - 1;
}

async function seedRunner(store: StateStore, snap: StateSnapshot) {
  const own = ownedRunner(PROJECT, null);
  return { own, snap: await store.commitOwnership(snap, own) };
}

const scenarios: Scenario[] = [
  {
    name: "begin and every checkpoint",
    writes: 6,
    async prepare(store, snap) {
      await seedRunner(store, snap);
      return { scenario: "drive", operationId: crypto.randomUUID() };
    },
    verify(_store, snap, n, side) {
      const k = durable(n, side);
      if (k === 0) {
        assert.equal(snap.control, null);
        return Promise.resolve("before intent");
      }
      const names = snap.control!.opened.checkpoints.map((c) => c.name);
      assert.deepEqual(names, checkpointChain().slice(0, k - 1).map((c) => c.name));
      assert.equal(snap.control!.opened.version, 4);
      return Promise.resolve(`intent + ${k - 1} checkpoints`);
    },
  },
  {
    name: "record interruption",
    writes: 2,
    async prepare(store, snap) {
      const { own, snap: s1 } = await seedRunner(store, snap);
      let s = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
      s = await store.recordCheckpoint(s, checkpointChain()[0]);
      return { scenario: "interrupt", incident: incident() };
    },
    async verify(store, snap, n, side, arg) {
      const k = durable(n, side);
      const id = (arg.incident as { incident_id: string }).incident_id;
      const archived = snap.history.events.some((e) => e.kind === "incident");
      if (k === 0) {
        assert.equal(snap.control!.opened.status, "in_progress");
        assert.equal(archived, false);
        return "before";
      }
      assert.equal(snap.control!.opened.status, "interrupted");
      assert.equal(snap.control!.opened.incidents[0].incident_id, id);
      if (k === 1) {
        // named intermediate: the incident is in control, not yet in history; the next
        // history write (here: resume) archives it first
        assert.equal(archived, false);
        const resumed = await store.resumeOperation(snap, resumeRecord());
        const kinds = resumed.history.events.map((e) => e.kind);
        assert.deepEqual(kinds.slice(-2), ["incident", "resume_authorized"]);
        return "unarchived incident (archived by the next history write)";
      }
      assert.equal(archived, true);
      return "after";
    },
  },
  {
    name: "resume",
    writes: 2,
    async prepare(store, snap) {
      const { own, snap: s1 } = await seedRunner(store, snap);
      let s = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
      s = await store.recordCheckpoint(s, checkpointChain()[0]);
      await store.recordInterruption(s, incident());
      return { scenario: "resume", record: resumeRecord() };
    },
    async verify(store, snap, n, side, arg) {
      const k = durable(n, side);
      const record = arg.record as ReturnType<typeof resumeRecord>;
      const c = snap.control!.opened;
      if (k === 0) {
        assert.equal(c.version, 4);
        assert.equal(await store.pendingResumeAuthorization(snap), null);
        return "before";
      }
      if (k === 1) {
        // named intermediate: an archived authorization without its control transition
        assert.equal(c.version, 4);
        assert.equal(c.status, "interrupted");
        assert.equal(snap.history.document.version, 2);
        const pending = await store.pendingResumeAuthorization(snap);
        assert.equal(pending?.authorization_id, record.authorization_id);
        await assert.rejects(store.resumeOperation(snap, resumeRecord()), /only an exact retry/);
        const retried = await store.resumeOperation(snap, record);
        assert.equal(retried.control!.opened.version, 5);
        assert.equal(
          retried.history.events.filter((e) => e.kind === "resume_authorized").length,
          1,
        );
        return "archived pending authorization (exact retry completes it)";
      }
      assert.equal(c.version, 5);
      assert.equal(c.resume_history[0].authorization_id, record.authorization_id);
      assert.equal(await store.pendingResumeAuthorization(snap), null);
      return "after";
    },
  },
  {
    name: "finalize completed runner",
    writes: 3,
    async prepare(store, snap) {
      const { own, snap: s1 } = await seedRunner(store, snap);
      let s = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
      for (const cp of checkpointChain()) s = await store.recordCheckpoint(s, cp);
      await store.recordInterruption(s, incident());
      return { scenario: "finalize", own };
    },
    async verify(store, snap, n, side, arg) {
      const k = durable(n, side);
      const own = arg.own as ReturnType<typeof ownedRunner>;
      const receipts = snap.history.events.filter((e) => e.kind === "runner_completed");
      const opId = (snap.control?.opened.operation_id ??
        (receipts[0] as { operation_id: string } | undefined)?.operation_id)!;
      let label: string;
      if (k === 0) {
        assert.equal(receipts.length, 0);
        assert.equal(snap.ownership!.checksum, stateChecksum(own));
        label = "before";
      } else if (k === 1) {
        // named intermediate: receipt archived, ownership still prior, control pending
        assert.equal(receipts.length, 1);
        assert.equal(snap.history.document.version, 3);
        assert.equal(snap.ownership!.checksum, stateChecksum(own));
        assert.ok(snap.control);
        label = "receipt archived before ownership";
      } else if (k === 2) {
        // named intermediate: result ownership written, clear interrupted
        assert.equal(snap.ownership!.document.serial, own.serial + 1);
        assert.ok(snap.control);
        assert.equal((await store.completedReceipt(opId))?.control_cleared, false);
        label = "result ownership before clear";
      } else {
        assert.equal(snap.control, null);
        label = "after";
      }
      if (snap.control) {
        const done = await store.finalizeCompletedRunner(snap);
        assert.equal(done.retried_clear, k === 2);
        snap = done.snapshot;
      }
      // exactly one serial increment and one receipt, whatever the crash point
      assert.equal(snap.control, null);
      assert.equal(snap.ownership!.document.serial, own.serial + 1);
      assert.equal(snap.history.events.filter((e) => e.kind === "runner_completed").length, 1);
      assert.equal((await store.completedReceipt(opId))?.control_cleared, true);
      return label;
    },
  },
  {
    name: "commit ownership of a create",
    writes: 3,
    async prepare(store, snap) {
      const intent = {
        operation_id: crypto.randomUUID(),
        kind: "create",
        project: PROJECT,
        environment: null,
        actor: "t",
        created_at: "2026-11-29T09:00:00.000Z",
        original_state_checksum: stateChecksum(emptyOwnership(PROJECT, null)),
        reviewed_plan_sha256: null,
        details: {},
      };
      await store.beginOperation(snap, intent);
      return { scenario: "commit", ownership: ownedRunner(PROJECT, null) };
    },
    async verify(store, snap, n, side, arg) {
      const k = durable(n, side);
      const desired = arg.ownership as ReturnType<typeof ownedRunner>;
      const commits = () =>
        snap.history.events.filter((e) => e.kind === "ownership_committed").length;
      const label =
        ["before", "commit archived before ownership", "ownership before clear", "after"][k];
      assert.equal(commits(), k === 0 ? 0 : 1);
      assert.equal(snap.ownership === null, k < 2);
      assert.equal(snap.control === null, k === 3);
      if (snap.control) {
        snap = await store.commitOwnership(snap, desired, {
          operationId: snap.control.opened.operation_id,
        });
      }
      assert.equal(snap.control, null);
      assert.equal(snap.ownership!.checksum, stateChecksum(desired));
      assert.equal(commits(), 1);
      return label;
    },
  },
];

for (const sc of scenarios) {
  Deno.test(`local crash: ${sc.name} killed at each write is never torn`, async () => {
    const seen: string[] = [];
    for (let n = 1; n <= sc.writes; n++) {
      for (const side of ["before", "mid", "after"] as const) {
        const dir = await Deno.makeTempDir({ prefix: "sluice_crash_" });
        const config: StateStoreConfig = {
          backend: "local",
          dir,
          project: PROJECT,
          environment: null,
        };
        const store = openStateStore(config);
        try {
          await store.init();
          await store.acquireLock({ actor: "setup" });
          const arg = await sc.prepare(store, await store.load());
          await store.releaseLock();
          const res = await runWorker("transition", config, arg, {
            SLUICE_STATE_CRASH_AT: String(n),
            SLUICE_STATE_CRASH_SIDE: side,
          });
          assert.equal(res.signal, "SIGKILL", `worker was not killed: ${res.stderr}`);
          // the dead writer's lock is reported stale and broken explicitly
          const status = await store.inspectLock();
          assert.equal(status.stale, true, status.diagnosis);
          let temps = 0;
          for await (const e of Deno.readDir(`${dir}/${PROJECT}`)) {
            if (/\.tmp-/.test(e.name)) temps++;
          }
          // only a kill between temp fsync and rename leaves a temp file, which is ignored
          if (side !== "mid") assert.equal(temps, 0);
          await store.breakStaleLock(status.holder!.lock_id);
          await store.acquireLock({ actor: "recovery" });
          const snap = await store.load(); // throws on a torn or edited file
          for await (const e of Deno.readDir(`${dir}/${PROJECT}`)) {
            assert.doesNotMatch(e.name, /\.tmp-/, "a temp file is never mistaken for state");
          }
          const label = await sc.verify(store, snap, n, side, arg);
          seen.push(`${n}/${side}: ${label}${temps > 0 ? ` (${temps} temp file ignored)` : ""}`);
        } finally {
          await store.close();
          await Deno.remove(dir, { recursive: true });
        }
      }
    }
    // every write was crossed on both sides
    assert.equal(seen.length, sc.writes * 3);
    console.log(seen.join("\n"));
  });
}

Deno.test("local crash: a completed run without a crash leaves no lock", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice_crash_" });
  const config: StateStoreConfig = { backend: "local", dir, project: PROJECT, environment: null };
  const store = openStateStore(config);
  try {
    await store.init();
    await store.acquireLock({ actor: "setup" });
    await seedRunner(store, await store.load());
    await store.releaseLock();
    const res = await runWorker("transition", config, {
      scenario: "drive",
      operationId: crypto.randomUUID(),
    });
    assert.equal(res.code, 0, res.stderr);
    assert.equal((await store.inspectLock()).held, false);
    await store.acquireLock({ actor: "check" });
    const snap = await store.load();
    assert.equal((snap.control!.opened.document as ControlV45).checkpoints.length, 5);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
