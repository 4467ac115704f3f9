/**
 * Wires the state contract suite to the PostgreSQL backend (a real server; URL from
 * `SLUICE_PG_URL`). Every test gets its own freshly created schema, dropped at the end.
 * @module
 */
import pg from "pg";
import { canonicalJson, sha256Hex } from "../_canonical.ts";
import { PG_URL, testSchema } from "../../../testing/state/pg_env.ts";
import { revisionOfBody } from "../_stored.ts";
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
    async cleanup() {
      for (const s of opened) await s.close().catch(() => {});
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}

stateStoreContract("postgres", makePgBackend);
