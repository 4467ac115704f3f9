// test-needs: postgres
/**
 * PostgreSQL-only behaviour: versioned migrations, redacted address, altered rows.
 * @module
 */
import assert from "node:assert/strict";
import pg from "pg";
import type { SluiceError } from "../../errors.ts";
import { openStateStore } from "../open.ts";
import { ownedRunner } from "../../../testing/state/fixtures.ts";
import { PgPrimitive, redactPgUrl } from "./pg_primitive.ts";
import { MIGRATIONS } from "./migrations.ts";
import { PG_URL, testSchema } from "../../../testing/state/pg_env.ts";

async function withSchema(fn: (schema: string, admin: pg.Client) => Promise<void>) {
  const schema = testSchema();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await fn(schema, admin);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}

Deno.test("postgres: init creates the schema once and records versioned migrations", async () => {
  await withSchema(async (schema) => {
    const p = new PgPrimitive({ url: PG_URL, schema, project: "orders", environment: null });
    try {
      assert.deepEqual(await p.migrations(), []);
      assert.equal(await p.identity(), null);
      const a = await p.init();
      const b = await p.init();
      assert.equal(a.store_id, b.store_id);
      assert.deepEqual(await p.migrations(), MIGRATIONS.map((m) => m.version));
    } finally {
      await p.close();
    }
  });
});

Deno.test("postgres: concurrent inits of one schema agree on one store ID", async () => {
  await withSchema(async (schema) => {
    const ps = [0, 1, 2].map(() =>
      new PgPrimitive({ url: PG_URL, schema, project: "orders", environment: null })
    );
    try {
      const ids = await Promise.all(ps.map((p) => p.init()));
      assert.equal(new Set(ids.map((i) => i.store_id)).size, 1);
    } finally {
      for (const p of ps) await p.close();
    }
  });
});

Deno.test("postgres: the store address never shows credentials", () => {
  const a = redactPgUrl("postgres://admin:s3cret@db.example:6543/prod", "sluice");
  assert.equal(a, "postgres://db.example:6543/prod?schema=sluice");
});

Deno.test("postgres: an altered row (body, revision column, migrations) is rejected naming the column", async () => {
  await withSchema(async (schema, admin) => {
    const store = openStateStore({
      backend: "postgres",
      url: PG_URL,
      schema,
      project: "orders",
      environment: null,
    });
    try {
      await store.init();
      await store.acquireLock({ actor: "t" });
      await store.commitOwnership(await store.load(), ownedRunner("orders", null));
      await admin.query(
        `UPDATE "${schema}".sluice_documents SET body = replace(body, '"serial":1', '"serial":2') WHERE name = 'ownership'`,
      );
      const corrupt = (code: string, field: string, message: RegExp) => (e: unknown) => {
        const err = e as SluiceError;
        assert.equal(err.code, code, err.message);
        assert.equal(err.evidence?.field, field, err.message);
        assert.match(err.message, message);
        return true;
      };
      await assert.rejects(
        store.load(),
        corrupt("STATE_CORRUPT_OWNERSHIP", "body_sha256", /altered row/),
      );
      // the revision column is covered too
      const t = `"${schema}".sluice_documents`;
      await admin.query(
        `UPDATE ${t} SET body = replace(body, '"serial":2', '"serial":1') WHERE name = 'ownership'`,
      );
      await admin.query(`UPDATE ${t} SET revision = revision + 1 WHERE name = 'history'`);
      await assert.rejects(
        store.load(),
        corrupt("STATE_CORRUPT_HISTORY", "revision", /revision column 2 differs/),
      );
      await admin.query(`UPDATE ${t} SET revision = revision - 1 WHERE name = 'history'`);
      assert.equal((await store.verifyIntegrity()).ok, true);
      // and so is every recorded migration
      await admin.query(
        `UPDATE "${schema}".sluice_migrations SET name = name || '.' WHERE version = 2`,
      );
      await assert.rejects(
        store.load(),
        corrupt("STATE_CORRUPT_STORE", "name", /sluice_migrations: row 2 name/),
      );
      await admin.query(`DELETE FROM "${schema}".sluice_migrations WHERE version = 1`);
      await assert.rejects(
        store.load(),
        corrupt("STATE_CORRUPT_STORE", "version", /row 1 version/),
      );
    } finally {
      await store.close();
    }
  });
});

Deno.test("postgres: a schema of an earlier sluice is migrated and its identity sealed, same store ID", async () => {
  await withSchema(async (schema, admin) => {
    const q = `"${schema}"`;
    // what migration 1 alone (an earlier sluice) left
    await admin.query(`CREATE SCHEMA ${q}`);
    await admin.query(
      `CREATE TABLE ${q}.sluice_migrations (version integer PRIMARY KEY, name text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    await admin.query(MIGRATIONS[0].sql.replaceAll("$schema", q));
    await admin.query(`INSERT INTO ${q}.sluice_migrations (version, name) VALUES (1, $1)`, [
      MIGRATIONS[0].name,
    ]);
    const id = (await admin.query(`SELECT store_id::text AS id FROM ${q}.sluice_store`)).rows[0].id;
    const p = new PgPrimitive({ url: PG_URL, schema, project: "orders", environment: null });
    try {
      await assert.rejects(p.identity(), /migration 1 of 4; run `sluice state init`/);
      assert.equal((await p.init()).store_id, id);
      assert.equal((await p.identity())?.store_id, id);
      assert.deepEqual(await p.migrations(), [1, 2, 3, 4]);
    } finally {
      await p.close();
    }
  });
});
