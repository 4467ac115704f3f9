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

/** The text form of `sluice_store.created_at` that its seal covers (microseconds, UTC). */
export const CREATED_AT_TEXT =
  `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

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
];
