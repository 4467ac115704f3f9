/**
 * Two real OS processes race for the deployment lock, against both backends; a holder that
 * dies is diagnosed (local: stale, reported, broken only explicitly; PostgreSQL: the server
 * releases a dead session's advisory lock).
 * @module
 */
import assert from "node:assert/strict";
import pg from "pg";
import { SluiceError } from "../errors.ts";
import { runWorker } from "../../testing/state/spawn.ts";
import { openStateStore, type StateStoreConfig } from "./open.ts";
import { PG_URL, testSchema } from "../../testing/state/pg_env.ts";

async function withBackend(
  backend: "local" | "postgres",
  fn: (config: StateStoreConfig) => Promise<void>,
): Promise<void> {
  if (backend === "local") {
    const dir = await Deno.makeTempDir({ prefix: "sluice_race_" });
    const config: StateStoreConfig = { backend, dir, project: "orders", environment: "prod" };
    try {
      await fn(config);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
    return;
  }
  const schema = testSchema();
  const config: StateStoreConfig = {
    backend,
    url: PG_URL,
    schema,
    project: "orders",
    environment: "prod",
  };
  try {
    await fn(config);
  } finally {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}

for (const backend of ["local", "postgres"] as const) {
  Deno.test(`${backend}: two processes race for the lock; exactly one wins`, async () => {
    await withBackend(backend, async (config) => {
      const init = openStateStore(config);
      await init.init();
      await init.close();
      const startAt = Date.now() + 1500;
      const [a, b] = await Promise.all([
        runWorker("race", config, { actor: "worker-a", startAt, holdMs: 2000 }),
        runWorker("race", config, { actor: "worker-b", startAt, holdMs: 2000 }),
      ]);
      assert.equal(a.code, 0, a.stderr);
      assert.equal(b.code, 0, b.stderr);
      const results = [a.lines[0], b.lines[0]];
      const winners = results.filter((r) => r.won === true);
      assert.equal(winners.length, 1, JSON.stringify(results));
      const loser = results.find((r) => r.won === false)!;
      assert.equal(loser.code, "STATE_LOCK_HELD");
      const holder = loser.holder as { actor: string; pid: number; acquired_at: string };
      const winnerActor = results[0].won ? "worker-a" : "worker-b";
      assert.equal(holder.actor, winnerActor);
      assert.equal(holder.pid, winners[0].pid);
      assert.match(String(loser.message), new RegExp(`held by ${winnerActor}.*since`));
    });
  });

  Deno.test(`${backend}: a holder killed with SIGKILL is diagnosed, never silently broken`, async () => {
    await withBackend(backend, async (config) => {
      const store = openStateStore(config);
      await store.init();
      try {
        const died = await runWorker("die", config, { actor: "doomed" });
        assert.equal(died.signal, "SIGKILL");
        const lockId = died.lines[0].lock_id as string;
        let status = await store.inspectLock();
        // the server notices the dead client's closed socket within moments
        for (let i = 0; backend === "postgres" && status.held && i < 40; i++) {
          await new Promise((r) => setTimeout(r, 50));
          status = await store.inspectLock();
        }
        if (backend === "local") {
          assert.equal(status.held, true);
          assert.equal(status.stale, true);
          assert.match(status.diagnosis, /dead.*stale/);
          try {
            await store.acquireLock({ actor: "next" });
            assert.fail("a stale lock must not be taken over silently");
          } catch (e) {
            assert.ok(e instanceof SluiceError && e.code === "STATE_LOCK_HELD");
            assert.equal(e.evidence?.stale, true);
          }
          await assert.rejects(
            store.breakStaleLock(crypto.randomUUID()),
            (e: unknown) => e instanceof SluiceError && e.code === "STATE_LOCK_NOT_STALE",
          );
          await store.breakStaleLock(lockId);
        } else {
          // the server released the dead session's advisory lock; its metadata row is reported
          assert.equal(status.held, false);
          assert.match(status.diagnosis, /ended session of doomed/);
        }
        const owner = await store.acquireLock({ actor: "next" });
        assert.equal(owner.actor, "next");
        assert.equal((await store.inspectLock()).holder?.actor, "next");
      } finally {
        await store.close();
      }
    });
  });
}

Deno.test("postgres: lock keys are scoped by schema, project and environment", async () => {
  const { advisoryKey } = await import("./postgres/pg_primitive.ts");
  const keys = new Set([
    advisoryKey("a", "orders", null),
    advisoryKey("b", "orders", null),
    advisoryKey("a", "payments", null),
    advisoryKey("a", "orders", "prod"),
    advisoryKey("a", "orders", "null"),
  ].map((k) => k.join(":")));
  assert.equal(keys.size, 5);
});
