// test-needs: postgres
/**
 * Integrity of every stored byte, through the CLI as a user meets it: one byte of the store
 * identity, the ownership, the pending operation journal (control) or the history is changed
 * out-of-band, on the local files and on PostgreSQL (a database of its own, so the shared
 * server's `sluice` schema is never touched). `state show`, `status` and `plan` then all exit
 * 3 with the precise `STATE_CORRUPT_*` code naming the document and field, and write nothing.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { ownedRunner, replaceAction, runnerIntent } from "../../testing/state/fixtures.ts";
import { PG_URL } from "../../testing/state/pg_env.ts";
import { initProject } from "../../lib/project/starter.ts";
import { sha256Hex } from "../../lib/state/_canonical.ts";
import { openStateStore, type StateStoreConfig } from "../../lib/state/open.ts";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));
const DSN_ENV = "SLUICE_STATE_DSN";

async function sluice(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "-o", "json", ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  return { code: out.code, stdout, envelope: JSON.parse(stdout) };
}

/** One project whose state lives on one backend, with raw access to its stored bytes. */
interface Fixture {
  dir: string;
  env: Record<string, string>;
  config: StateStoreConfig;
  raw(): Promise<Record<string, string | null>>;
  tamper(kind: Kind): Promise<void>;
  cleanup(): Promise<void>;
}

type Kind = "store" | "ownership" | "control" | "history";
const FIELD: Record<Kind, [string, string]> = {
  store: ["STATE_CORRUPT_STORE", "store_id"],
  ownership: ["STATE_CORRUPT_OWNERSHIP", "document"],
  control: ["STATE_CORRUPT_JOURNAL", "document"],
  history: ["STATE_CORRUPT_HISTORY", "document"],
};

const flip = (v: string, at: number) =>
  v.slice(0, at) + (v[at] === "1" ? "2" : "1") + v.slice(at + 1);
/** One byte of a document's content (its format name), leaving the envelope intact. */
const editDocument = (body: string) => body.replace('"format":"sluice.', '"format":"sluicE.');

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return null;
  }
}

async function localFixture(): Promise<Fixture> {
  const dir = await Deno.makeTempDir({ prefix: "sluice_integrity_" });
  await initProject(dir);
  const root = join(dir, ".sluice", "state");
  const scope = join(root, "orders");
  const file = (k: Kind) => k === "store" ? join(root, "store.json") : join(scope, `${k}.json`);
  return {
    dir,
    env: {},
    config: { backend: "local", dir: root, project: "orders", environment: null },
    async raw() {
      const out: Record<string, string | null> = {};
      for (const k of ["store", "ownership", "control", "history", "lock"] as const) {
        out[k] = await readOrNull(k === "lock" ? join(scope, "lock.json") : file(k as Kind));
      }
      return out;
    },
    async tamper(kind) {
      const text = await Deno.readTextFile(file(kind));
      const edited = kind === "store"
        ? text.replace(JSON.parse(text).store_id, flip(JSON.parse(text).store_id, 0))
        : editDocument(text);
      assert.notEqual(edited, text);
      await Deno.writeTextFile(file(kind), edited);
    },
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}

async function pgFixture(): Promise<Fixture> {
  const dir = await Deno.makeTempDir({ prefix: "sluice_integrity_pg_" });
  await initProject(dir);
  const manifest = join(dir, "sluice.yaml");
  const yaml = await Deno.readTextFile(manifest);
  await Deno.writeTextFile(
    manifest,
    yaml.replace(
      "state:\n  backend: local\n  dir: .sluice/state\n",
      `state:\n  backend: postgres\n  dsn_env: ${DSN_ENV}\n`,
    ),
  );
  const db = `sluice_it_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${db}`);
  const url = new URL(PG_URL);
  url.pathname = `/${db}`;
  const dsn = url.toString();
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  const scope = JSON.stringify(["orders", null]);
  return {
    dir,
    env: { [DSN_ENV]: dsn },
    config: { backend: "postgres", url: dsn, project: "orders", environment: null },
    async raw() {
      const out: Record<string, string | null> = {};
      const s = await client.query("SELECT row_to_json(s)::text AS t FROM sluice.sluice_store s");
      out.store = s.rows[0]?.t ?? null;
      for (const k of ["ownership", "control", "history"]) {
        const r = await client.query(
          `SELECT row_to_json(d)::text AS t FROM sluice.sluice_documents d
           WHERE scope = $1 AND name = $2`,
          [scope, k],
        );
        out[k] = r.rows[0]?.t ?? null;
      }
      const l = await client.query("SELECT row_to_json(l)::text AS t FROM sluice.sluice_locks l");
      out.lock = l.rows[0]?.t ?? null;
      return out;
    },
    async tamper(kind) {
      if (kind === "store") {
        const id = (await client.query("SELECT store_id::text FROM sluice.sluice_store")).rows[0]
          .store_id;
        await client.query("UPDATE sluice.sluice_store SET store_id = $1", [flip(id, 0)]);
        return;
      }
      const body = (await client.query(
        "SELECT body FROM sluice.sluice_documents WHERE scope = $1 AND name = $2",
        [scope, kind],
      )).rows[0].body as string;
      const edited = editDocument(body);
      assert.notEqual(edited, body);
      // the row's own checksum is recomputed: only the body's seals can tell
      await client.query(
        "UPDATE sluice.sluice_documents SET body = $1, body_sha256 = $2 WHERE scope = $3 AND name = $4",
        [edited, sha256Hex(edited), scope, kind],
      );
    },
    async cleanup() {
      await client.end();
      await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await admin.end();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function seed(config: StateStoreConfig): Promise<void> {
  const store = openStateStore(config);
  try {
    await store.init();
    await store.acquireLock({ actor: "seed" });
    const own = ownedRunner("orders", null);
    const snap = await store.commitOwnership(await store.load(), own);
    await store.beginOperation(snap, runnerIntent(own), [replaceAction(own)]);
  } finally {
    await store.close();
  }
}

for (const backend of ["local", "postgres"] as const) {
  for (const kind of ["store", "ownership", "control", "history"] as const) {
    Deno.test(`${backend}: one changed byte of ${kind} makes state show, status and plan exit 3, writing nothing`, async () => {
      const f = backend === "local" ? await localFixture() : await pgFixture();
      try {
        await seed(f.config);
        const show = await sluice(["state", "show", "--project", f.dir], f.env);
        assert.equal(show.code, 0, show.stdout);
        await f.tamper(kind);
        const before = await f.raw();
        const [code, field] = FIELD[kind];
        for (const args of [["state", "show"], ["status"], ["plan", "--offline"]]) {
          const r = await sluice([...args, "--project", f.dir], f.env);
          assert.equal(r.code, 3, `${args.join(" ")}: ${r.stdout}`);
          assert.equal(r.envelope.ok, false);
          const err = r.envelope.errors[0];
          assert.equal(err.code, code, `${args.join(" ")}: ${err.message}`);
          assert.equal(err.evidence?.field, field, err.message);
          assert.match(err.message, new RegExp(`${kind === "store" ? "store identity" : kind}`));
          assert.deepEqual(await f.raw(), before, `${args.join(" ")} wrote nothing`);
        }
      } finally {
        await f.cleanup();
      }
    });
  }
}
