// test-needs: postgres
/**
 * Private test settings for the PostgreSQL backend.
 * @module
 */
import { historyRow } from "../../lib/state/history.ts";

/** The test server URL (`SLUICE_PG_URL`, default the local trust-auth server). */
export const PG_URL = Deno.env.get("SLUICE_PG_URL") ??
  "postgres://postgres@127.0.0.1:5432/postgres";

/** A fresh schema name for one test; each test drops its schema at the end. */
export function testSchema(): string {
  return `sluice_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
}

/** A query on an admin connection (rows as plain objects). */
export type AdminQuery = (
  sql: string,
  params?: unknown[],
) => Promise<{ rows: Array<Record<string, unknown>> }>;

/**
 * Make a scope's history event rows (`sluice_history_events`) the events of `body`, as an
 * out-of-band test write of the history document must (the store reads both, one row per event,
 * and refuses them apart): a row whose event keeps its bytes keeps its commit time, a new one gets
 * the server's clock. A body that is not a readable history leaves no rows (reading it fails on the
 * document first).
 */
export async function syncHistoryRows(
  admin: { query: AdminQuery },
  schema: string,
  scope: string,
  body: string | null,
): Promise<void> {
  const t = `"${schema}".sluice_history_events`;
  const before = new Map<number, { sha256: unknown; committed_at: unknown }>();
  for (
    const r of (await admin.query(
      `SELECT event_index, sha256, committed_at::text AS committed_at FROM ${t} WHERE scope = $1`,
      [scope],
    )).rows
  ) before.set(Number(r.event_index), { sha256: r.sha256, committed_at: r.committed_at });
  await admin.query(`DELETE FROM ${t} WHERE scope = $1`, [scope]);
  let entries: unknown;
  try {
    entries = body === null ? [] : JSON.parse(body)?.document?.events;
  } catch {
    return;
  }
  if (!Array.isArray(entries)) return;
  for (const [i, entry] of entries.entries()) {
    let row;
    try {
      row = historyRow(entry, i);
    } catch {
      return;
    }
    const kept = before.get(i);
    await admin.query(
      `INSERT INTO ${t} (scope, event_index, kind, operation_id, bytes, sha256, committed_at)
       VALUES ($1, $2, $3, $4, $5, $6, COALESCE($7::timestamptz, clock_timestamp()))`,
      [
        scope,
        i,
        row.kind,
        row.operation_id,
        row.bytes,
        row.sha256,
        kept && kept.sha256 === row.sha256 ? kept.committed_at : null,
      ],
    );
  }
}
