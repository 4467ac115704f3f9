// test-needs: postgres
/**
 * Private test settings for the PostgreSQL backend.
 * @module
 */

/** The test server URL (`SLUICE_PG_URL`, default the local trust-auth server). */
export const PG_URL = Deno.env.get("SLUICE_PG_URL") ??
  "postgres://postgres@127.0.0.1:5432/postgres";

/** A fresh schema name for one test; each test drops its schema at the end. */
export function testSchema(): string {
  return `sluice_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
}
