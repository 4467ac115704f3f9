/**
 * PostgreSQL schema migrations, applied in order by `sluice state init` and recorded in
 * `<schema>.sluice_migrations`. Append new migrations; never edit an applied one.
 *
 * @example
 * ```ts
 * import { MIGRATIONS } from "./migrations.ts";
 * console.log(MIGRATIONS.at(-1)?.version);
 * ```
 * @module
 */
import { canonicalJson } from "../_canonical.ts";
import { newStoreRecord, sealStoreRecord } from "../identity.ts";
import { newSealKey, sealKeyText } from "../seal_key.ts";
import { historyRow } from "../history.ts";
import type { HistoryRow } from "../primitive.ts";

/** A query in the migration's transaction (rows as plain objects). */
export type MigrationQuery = (
  sql: string,
  params?: unknown[],
) => Promise<Array<Record<string, unknown>>>;

/** One migration: a version, a name and its SQL (`$schema` is replaced by the quoted schema). */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Data steps computed in TypeScript, run after `sql` in the same transaction. */
  after?: (query: MigrationQuery, schema: string) => Promise<void>;
}

/**
 * The RFC 3339 text of a timestamptz column (microseconds, UTC).
 *
 * @example
 * ```ts
 * import { utcText } from "./migrations.ts";
 * utcText("committed_at"); // to_char(committed_at AT TIME ZONE 'UTC', ...)
 * ```
 */
export function utcText(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/** The text form of `sluice_store.created_at` that its seal covers (microseconds, UTC). */
export const CREATED_AT_TEXT = utcText("created_at");

/** Every migration, in order. Append only: an applied migration is never edited. */
export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "documents, store identity and lock metadata",
    sql: `
      CREATE TABLE $schema.sluice_store (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        store_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      INSERT INTO $schema.sluice_store (store_id) VALUES (gen_random_uuid());
      CREATE TABLE $schema.sluice_documents (
        scope text NOT NULL,
        name text NOT NULL CHECK (name IN ('ownership', 'control', 'history')),
        body text NOT NULL,
        body_sha256 text NOT NULL,
        revision bigint NOT NULL CHECK (revision > 0),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (scope, name)
      );
      CREATE TABLE $schema.sluice_locks (
        scope text PRIMARY KEY,
        lock_id uuid NOT NULL,
        owner text NOT NULL,
        session_pid integer NOT NULL,
        acquired_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    version: 2,
    name: "sealed store identity (a sha256 per field)",
    sql: `
      ALTER TABLE $schema.sluice_store
        ADD COLUMN version integer NOT NULL DEFAULT 2,
        ADD COLUMN sha256 text;
    `,
    async after(query, schema) {
      const rows = await query(
        `SELECT store_id::text AS store_id, ${CREATED_AT_TEXT} AS created_at FROM ${schema}.sluice_store`,
      );
      for (const r of rows) {
        const sealed = sealStoreRecord(
          newStoreRecord(String(r.store_id), String(r.created_at)),
        );
        await query(`UPDATE ${schema}.sluice_store SET sha256 = $1`, [
          canonicalJson(sealed.sha256),
        ]);
      }
      await query(`ALTER TABLE ${schema}.sluice_store ALTER COLUMN sha256 SET NOT NULL`);
    },
  },
  {
    version: 3,
    name: "plan-sealing key",
    sql: `
      CREATE TABLE $schema.sluice_seal_key (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        key_id uuid NOT NULL,
        secret_hex text NOT NULL,
        created_at timestamptz NOT NULL
      );
    `,
    async after(query, schema) {
      // generated here, from the platform's cryptographic random source, never by SQL
      const key = JSON.parse(sealKeyText(newSealKey(new Date().toISOString())));
      await query(
        `INSERT INTO ${schema}.sluice_seal_key (key_id, secret_hex, created_at)
         VALUES ($1::uuid, $2, $3::timestamptz)`,
        [key.key_id, key.secret_hex, key.created_at],
      );
    },
  },
  {
    version: 4,
    name: "one row per history event, committed at the database's clock",
    // append-only: sluice only ever inserts here, in the transaction that writes the history
    // document holding the same events; committed_at is clock_timestamp() in that transaction
    sql: `
      CREATE TABLE $schema.sluice_history_events (
        scope text NOT NULL,
        event_index integer NOT NULL CHECK (event_index >= 0),
        kind text NOT NULL,
        operation_id text,
        bytes text NOT NULL,
        sha256 text NOT NULL,
        committed_at timestamptz,
        PRIMARY KEY (scope, event_index)
      );
      CREATE INDEX sluice_history_events_operation
        ON $schema.sluice_history_events (scope, operation_id);
    `,
    async after(query, schema) {
      // the events of histories written before: copied as rows, with the bytes the documents
      // hold and no commit time (the database did not record one); no document is rewritten
      const docs = await query(
        `SELECT scope, body FROM ${schema}.sluice_documents WHERE name = 'history' ORDER BY scope`,
      );
      for (const d of docs) {
        const rows = rowsOfBody(String(d.body));
        // an unreadable history stays as it is: reading it reports the corruption precisely
        if (rows === null) continue;
        await insertHistoryRows(query, schema, String(d.scope), rows, "NULL");
      }
    },
  },
];

/** The rows of a stored history body's events, or null when it is not a readable history. */
function rowsOfBody(body: string): HistoryRow[] | null {
  try {
    const events = JSON.parse(body)?.document?.events;
    if (!Array.isArray(events)) return null;
    return events.map((e, i) => {
      if (typeof e?.bytes !== "string" || typeof e?.sha256 !== "string") {
        throw new TypeError(`history event ${i} is not a sealed entry`);
      }
      return historyRow(e, i);
    });
  } catch {
    return null;
  }
}

/**
 * Insert history rows in one statement, all with the same `committed_at` SQL expression
 * (`clock_timestamp()` taken once, or `NULL`).
 *
 * @example
 * ```ts
 * import { insertHistoryRows } from "./migrations.ts";
 * const query = async () => [];
 * await insertHistoryRows(query, '"sluice"', '["orders",null]', [], "clock_timestamp()");
 * ```
 */
export async function insertHistoryRows(
  query: MigrationQuery,
  schema: string,
  scope: string,
  rows: HistoryRow[],
  committedAt: "clock_timestamp()" | "NULL",
): Promise<Array<Record<string, unknown>>> {
  if (rows.length === 0) return [];
  return await query(
    `WITH t AS MATERIALIZED (SELECT ${committedAt}::timestamptz AS at)
     INSERT INTO ${schema}.sluice_history_events
       (scope, event_index, kind, operation_id, bytes, sha256, committed_at)
     SELECT $1, r.i, r.kind, r.operation_id, r.bytes, r.sha256, t.at
     FROM t, unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[])
       AS r(i, kind, operation_id, bytes, sha256)
     RETURNING ${utcText("committed_at")} AS committed_at`,
    [
      scope,
      rows.map((r) => r.index),
      rows.map((r) => r.kind),
      rows.map((r) => r.operation_id),
      rows.map((r) => r.bytes),
      rows.map((r) => r.sha256),
    ],
  );
}
