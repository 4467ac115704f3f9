// test-needs: postgres
/**
 * Wires the state contract suite to the PostgreSQL backend (a real server; URL from
 * `SLUICE_PG_URL`). Every test gets its own freshly created schema, dropped at the end.
 * @module
 */
import pg from "pg";
import { canonicalJson, sha256Hex } from "../_canonical.ts";
import { PG_URL, syncHistoryRows, testSchema } from "../../../testing/state/pg_env.ts";
import { revisionOfBody } from "../_stored.ts";
import { newStoreRecord, sealStoreRecord } from "../identity.ts";
import { CREATED_AT_TEXT } from "./migrations.ts";
import {
  type ContractBackend,
  PROJECT,
  stateStoreContract,
} from "../../../testing/state/contract_suite.ts";
import { openStateStore } from "../open.ts";
import type { DocName } from "../primitive.ts";
import type { StateStore } from "../store.ts";

async function makePgBackend(): Promise<ContractBackend> {
  const schema = testSchema();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const opened: StateStore[] = [];
  const scope = canonicalJson([PROJECT, null]);
  return {
    atomic: true,
    historyRows: true,
    open(project = PROJECT, environment: string | null = null) {
      const s = openStateStore({ backend: "postgres", url: PG_URL, schema, project, environment });
      opened.push(s);
      return s;
    },
    async rawRead(name: DocName) {
      const r = await admin.query(
        `SELECT body FROM "${schema}".sluice_documents WHERE scope = $1 AND name = $2`,
        [scope, name],
      );
      return r.rows[0]?.body ?? null;
    },
    async rawWrite(name: DocName, body: string | null) {
      // the history's event rows follow its document, as the store writes them
      if (name === "history") await syncHistoryRows(admin, schema, scope, body);
      if (body === null) {
        await admin.query(
          `DELETE FROM "${schema}".sluice_documents WHERE scope = $1 AND name = $2`,
          [scope, name],
        );
        return;
      }
      // an out-of-band write that keeps the row columns consistent with the body
      await admin.query(
        `INSERT INTO "${schema}".sluice_documents (scope, name, body, body_sha256, revision)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (scope, name) DO UPDATE
         SET body = EXCLUDED.body, body_sha256 = EXCLUDED.body_sha256, revision = EXCLUDED.revision`,
        [scope, name, body, sha256Hex(body), Math.max(1, revisionOfBody(body))],
      );
    },
    async loseLock(store: StateStore) {
      const pid = (await store.inspectLock()).holder?.session_pid;
      await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      await new Promise((r) => setTimeout(r, 100));
    },
    identityFields: ["version", "store_id", "created_at", "sha256"],
    async rawIdentity() {
      const r = await admin.query(
        `SELECT store_id::text, ${CREATED_AT_TEXT} AS created_at, version, sha256
         FROM "${schema}".sluice_store`,
      ).catch(() => null);
      return r && r.rows.length > 0 ? JSON.stringify(r.rows) : null;
    },
    async tamperIdentity(field: string) {
      const t = `"${schema}".sluice_store`;
      const flip = (v: string, at: number) =>
        v.slice(0, at) + (v[at] === "1" ? "2" : "1") + v.slice(at + 1);
      const row = (await admin.query(`SELECT store_id::text, sha256 FROM ${t}`)).rows[0];
      if (field === "version") await admin.query(`UPDATE ${t} SET version = version + 1`);
      if (field === "store_id") {
        await admin.query(`UPDATE ${t} SET store_id = $1`, [flip(row.store_id, 0)]);
      }
      if (field === "created_at") {
        await admin.query(`UPDATE ${t} SET created_at = created_at + interval '1 microsecond'`);
      }
      if (field === "sha256") {
        const seals = JSON.parse(row.sha256);
        seals.created_at = flip(seals.created_at, 0);
        await admin.query(`UPDATE ${t} SET sha256 = $1`, [canonicalJson(seals)]);
      }
    },
    async forgeIdentity(storeId: string) {
      const t = `"${schema}".sluice_store`;
      const r = await admin.query(`SELECT ${CREATED_AT_TEXT} AS created_at FROM ${t}`);
      const sealed = sealStoreRecord(newStoreRecord(storeId, r.rows[0].created_at));
      await admin.query(`UPDATE ${t} SET store_id = $1, sha256 = $2`, [
        storeId,
        canonicalJson(sealed.sha256),
      ]);
    },
    async restoreIdentity(raw: string) {
      const [row] = JSON.parse(raw);
      await admin.query(
        `UPDATE "${schema}".sluice_store SET store_id = $1, created_at = $2, version = $3,
           sha256 = $4`,
        [row.store_id, row.created_at, row.version, row.sha256],
      );
    },
    async cleanup() {
      for (const s of opened) await s.close().catch(() => {});
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}

stateStoreContract("postgres", makePgBackend);
