/**
 * Crash safety of both state backends at every fault site of the state layer
 * (`lib/protocol/state_sites.ts`): for each transition, a worker process runs it with one site armed
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
  PROJECT,
  type Scenario,
  scenarioName,
  SCENARIOS,
  WORKER_LOCK,
} from "../../testing/state/crash_scenarios.ts";
import { PG_URL, syncHistoryRows, testSchema } from "../../testing/state/pg_env.ts";
import { runWorker } from "../../testing/state/spawn.ts";
import { sha256Hex } from "./_canonical.ts";
import { revisionOfBody } from "./_stored.ts";
import { TEMP_FILE } from "../fs/atomic_write.ts";
import type { StateStoreConfig } from "./open.ts";
import {
  LOCAL_WRITE_ORDER,
  type LocalFile,
  STATE_SITES,
  type StateTransition,
} from "../protocol/state_sites.ts";

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
      await syncHistoryRows(admin, schema, scope, c.history);
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

/** A fresh process continues from what the crash left (the worker's `recover` mode). */
async function recoverAndFinish(loc: Location, sc: Scenario, arg: Record<string, unknown>) {
  const res = await runWorker("recover", loc.config, { scenario: scenarioName(sc), ...arg });
  assert.equal(res.code, 0, `recovery failed: ${res.stderr}`);
  assert.equal(res.lines.at(-1)?.recovered, true, res.stderr);
  // the temp file of a write killed before its rename is removed by the next lock holder
  const left = await loc.capture();
  assert.deepEqual(left.temps.filter((t) => !t.startsWith("store.json")), []);
}

const crossedBy = new Map<Backend, Set<string>>([["local", new Set()], ["postgres", new Set()]]);
const killedAt = new Map<Backend, Set<string>>([["local", new Set()], ["postgres", new Set()]]);

for (const backend of ["local", "postgres"] as const) {
  for (const sc of SCENARIOS) {
    const title = scenarioName(sc);
    Deno.test(`${backend} crash: ${title}, killed before and after each of its sites, is never torn`, async () => {
      const loc = backend === "local" ? await localLocation() : await pgLocation();
      try {
        const arg = await sc.prepare(loc.config);
        const workerArg = { transition: sc.transition, lockId: WORKER_LOCK, ...arg };
        const before = await loc.capture();
        // reference: the same deterministic transition, unfaulted
        const ref = await runWorker("transition", loc.config, workerArg);
        assert.equal(ref.code, 0, ref.stderr);
        const crossed = (ref.lines.at(-1)!.crossed as string[]).map((c) => c.split(":")[0]);
        for (const c of crossed) crossedBy.get(backend)!.add(c);
        const after = await loc.capture();
        const changed = DOCS.filter((d) => before[d] !== after[d]);
        const sites = sitesOf(sc, backend, crossed);
        // a PostgreSQL lock ends with its session: its break is no site (D13)
        const siteless = sc.transition === "break" && backend === "postgres";
        assert.equal(sites.length > 0, !siteless, `${sc.transition} ${backend} sites: ${sites}`);
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
