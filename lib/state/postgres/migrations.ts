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

/** One migration: a version, a name and its SQL (`$schema` is replaced by the quoted schema). */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Every migration, in order. */
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
];
