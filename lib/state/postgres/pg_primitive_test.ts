/**
 * PostgreSQL-only behaviour: versioned migrations, redacted address, altered rows.
 * @module
 */
import assert from "node:assert/strict";
import pg from "pg";
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

Deno.test("postgres: an altered row (body no longer matching its row checksum) is rejected", async () => {
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
      await assert.rejects(store.load(), /STATE_CORRUPT_OWNERSHIP|altered row/);
      await assert.rejects(
        store.load(),
        (e: Error & { code?: string }) =>
          e.code === "STATE_CORRUPT_OWNERSHIP" && /altered row/.test(e.message),
      );
    } finally {
      await store.close();
    }
  });
});
