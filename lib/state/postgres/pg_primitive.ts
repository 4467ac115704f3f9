/**
 * The PostgreSQL backend's storage primitive. Documents are rows of
 * `<schema>.sluice_documents` keyed by scope (canonical JSON `[project, environment]`) and
 * name; every history event is also a row of `<schema>.sluice_history_events` of its own,
 * inserted with the document that holds it and stamped with the database's clock; a write group
 * commits in one transaction (`atomicWrites: true`). The deployment
 * lock is a session advisory lock whose key is derived from schema, project and
 * environment (so different projects and schemas never collide), plus a metadata row in
 * `sluice_locks` saying who holds it.
 *
 * @example
 * ```ts
 * import { PgPrimitive } from "./pg_primitive.ts";
 * const p = new PgPrimitive({ url: "postgres://postgres@127.0.0.1:5432/postgres",
 *   schema: "sluice", project: "orders", environment: null });
 * await p.init();
 * await p.close();
 * ```
 * @module
 */
// @ts-types="npm:@types/pg@8.23.1"
import pg from "npm:pg@8.23.1";
import { atSite } from "../../fault/site.ts";
import { SluiceError } from "../../errors.ts";
import { canonicalJson, sha256Hex } from "../_canonical.ts";
import { conflictError, corruptDoc, revisionOfBody } from "../_stored.ts";
import { openStoreRecord } from "../identity.ts";
import { newSealKey, type SealKey, sealKeyOf, sealKeyText } from "../seal_key.ts";
import type { StoreIdentity } from "../journal.ts";
import type {
  DocName,
  DocWrite,
  LockOwner,
  LockStatus,
  StatePrimitive,
  StoredBodies,
  StoredHistoryRow,
} from "../primitive.ts";
import {
  lockOperationSite,
  pgCommitSite,
  type StateTransition,
} from "../../protocol/state_sites.ts";
import { CREATED_AT_TEXT, insertHistoryRows, MIGRATIONS, utcText } from "./migrations.ts";
import type { AddressOrigin } from "../../providers/errors.ts";
import { connectFailure, PG_CONNECT_TIMEOUT_MS } from "./connect_failure.ts";
import { pgConnectionOptions } from "./pg_tls.ts";

/** Connection settings of the PostgreSQL backend. */
export interface PgStoreConfig {
  url: string;
  /** Where `url` came from (named when PostgreSQL cannot be reached), e.g. the DSN variable. */
  origin?: AddressOrigin;
  /** Schema holding sluice's tables (default `sluice`). */
  schema?: string;
  project: string;
  environment: string | null;
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The advisory lock key pair for a scope (first 8 bytes of a sha256, as two int4).
 *
 * @example
 * ```ts
 * import { advisoryKey } from "./pg_primitive.ts";
 * const [classid, objid] = advisoryKey("sluice", "orders", null);
 * ```
 */
export function advisoryKey(
  schema: string,
  project: string,
  environment: string | null,
): [number, number] {
  const hex = sha256Hex(canonicalJson(["sluice.lock", schema, project, environment]));
  const a = parseInt(hex.slice(0, 8), 16) | 0;
  const b = parseInt(hex.slice(8, 16), 16) | 0;
  return [a, b];
}

/**
 * The redacted address: no user or password.
 *
 * @example
 * ```ts
 * import { redactPgUrl } from "./pg_primitive.ts";
 * redactPgUrl("postgres://u:p@db:5432/x", "sluice"); // "postgres://db:5432/x?schema=sluice"
 * ```
 */
export function redactPgUrl(url: string, schema: string): string {
  try {
    const u = new URL(url);
    return `postgres://${u.hostname}${u.port ? `:${u.port}` : ""}${u.pathname}?schema=${schema}`;
  } catch {
    return `postgres://(unparseable)?schema=${schema}`;
  }
}

function isMissingSchema(e: unknown): boolean {
  const code = (e as { code?: string })?.code;
  return code === "42P01" || code === "3F000";
}

/**
 * PostgreSQL storage primitive.
 *
 * @example
 * ```ts
 * import { PgPrimitive } from "./pg_primitive.ts";
 * const p = new PgPrimitive({ url: "postgres://db/x", project: "orders", environment: null });
 * p.atomicWrites; // true
 * ```
 */
export class PgPrimitive implements StatePrimitive {
  readonly backend = "postgres" as const;
  readonly atomicWrites = true;
  readonly schema: string;
  readonly scope: string;
  readonly #config: PgStoreConfig;
  readonly #key: [number, number];
  #client: pg.Client | null = null;
  #dead: unknown = null;
  /** The lock this session holds (its advisory lock taken), or null. */
  #holding: string | null = null;

  constructor(config: PgStoreConfig) {
    this.schema = config.schema ?? "sluice";
    if (!SCHEMA.test(this.schema)) {
      throw new SluiceError("USAGE_SCHEMA", `invalid PostgreSQL schema name ${this.schema}`);
    }
    this.#config = config;
    this.scope = canonicalJson([config.project, config.environment]);
    this.#key = advisoryKey(this.schema, config.project, config.environment);
  }

  get #q(): string {
    return `"${this.schema}"`;
  }

  async #conn(): Promise<pg.Client> {
    if (this.#client && !this.#dead) return this.#client;
    if (this.#client && this.#dead) {
      if (this.#holding !== null) {
        this.#holding = null;
        throw new SluiceError("STATE_LOCK_LOST", "the PostgreSQL session holding the lock ended", {
          cause: this.#dead,
        });
      }
      // the loss was reported: a read after it (what is pending now?) gets a fresh session,
      // which holds no lock — every write verifies the lock in its own transaction
      this.#client.end().catch(() => {});
      this.#client = null;
      this.#dead = null;
    }
    const { connectionString, ssl } = await pgConnectionOptions(
      this.#config.url,
      this.#config.origin ?? {},
    );
    const c = new pg.Client({
      connectionString,
      ...(ssl !== undefined ? { ssl } : {}),
      connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
    });
    c.on("error", (e: unknown) => {
      // a replaced session's late error says nothing of the current one
      if (this.#client === c || this.#client === null) {
        this.#dead = e ?? new Error("connection error");
      }
    });
    try {
      await c.connect();
    } catch (e) {
      throw connectFailure(e, {
        provider: "postgres",
        address: redactPgUrl(this.#config.url, this.schema),
        origin: this.#config.origin ?? {},
      });
    }
    // a session ended by the server (the lock taken over: its holder terminated) answers the
    // next query with the server's FATAL message: while this session holds the lock, any query
    // that fails so is the lock's loss, whichever read or write it was
    const query = c.query.bind(c) as (...args: unknown[]) => Promise<unknown>;
    (c as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = async (
      ...args: unknown[]
    ) => {
      try {
        return await query(...args);
      } catch (e) {
        if (this.#client === c && this.#holding !== null && sessionEnded(e)) {
          const lost = this.#holding;
          this.#holding = null;
          this.#dead ??= e;
          throw new SluiceError(
            "STATE_LOCK_LOST",
            `deployment lock ${lost} was lost: the PostgreSQL session holding it was ended (${
              (e as Error).message
            })`,
            { cause: e },
          );
        }
        throw e;
      }
    };
    this.#client = c;
    return c;
  }

  async init(): Promise<StoreIdentity> {
    const c = await this.#conn();
    await c.query("BEGIN");
    try {
      // serialize concurrent inits of the same schema
      const [a] = advisoryKey(this.schema, "sluice.init", null);
      await c.query("SELECT pg_advisory_xact_lock($1)", [a]);
      await c.query(`CREATE SCHEMA IF NOT EXISTS ${this.#q}`);
      await c.query(
        `CREATE TABLE IF NOT EXISTS ${this.#q}.sluice_migrations (
           version integer PRIMARY KEY, name text NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const done = new Set(
        (await c.query(`SELECT version FROM ${this.#q}.sluice_migrations`)).rows.map((r) =>
          Number(r.version)
        ),
      );
      let applied = 0;
      for (const m of MIGRATIONS) {
        if (done.has(m.version)) continue;
        await c.query(m.sql.replaceAll("$schema", this.#q));
        if (m.after) {
          await m.after(async (sql, params) => (await c.query(sql, params)).rows, this.#q);
        }
        await c.query(`INSERT INTO ${this.#q}.sluice_migrations (version, name) VALUES ($1, $2)`, [
          m.version,
          m.name,
        ]);
        applied++;
      }
      if (applied > 0) await atSite(pgCommitSite("init"), () => c.query("COMMIT"));
      else await c.query("COMMIT");
    } catch (e) {
      await c.query("ROLLBACK").catch(() => {});
      throw e;
    }
    return (await this.identity())!;
  }

  /** Applied migration versions (empty before init). */
  async migrations(): Promise<number[]> {
    const c = await this.#conn();
    try {
      const r = await c.query(`SELECT version FROM ${this.#q}.sluice_migrations ORDER BY version`);
      return r.rows.map((x) => Number(x.version));
    } catch (e) {
      if (isMissingSchema(e)) return [];
      throw e;
    }
  }

  async identity(): Promise<StoreIdentity | null> {
    const c = await this.#conn();
    let versions: Array<{ version: number; name: string }>;
    try {
      versions = (await c.query(
        `SELECT version, name FROM ${this.#q}.sluice_migrations ORDER BY version`,
      )).rows.map((r) => ({ version: Number(r.version), name: String(r.name) }));
    } catch (e) {
      if (isMissingSchema(e)) return null;
      throw e;
    }
    this.#checkMigrations(versions);
    if (versions.length < MIGRATIONS.length) {
      throw new SluiceError(
        "STATE_NOT_INITIALIZED",
        `the state schema ${this.schema} is at migration ${
          versions.at(-1)?.version ?? 0
        } of ${MIGRATIONS.length}; run \`sluice state init\` to migrate it`,
      );
    }
    const where = `${this.schema}.sluice_store`;
    const r = await c.query(
      `SELECT store_id::text AS store_id, ${CREATED_AT_TEXT} AS created_at, version, sha256
       FROM ${this.#q}.sluice_store`,
    );
    if (r.rows.length !== 1) {
      throw new SluiceError(
        "STATE_CORRUPT_STORE",
        `${where}: store identity record: must hold exactly one row, holds ${r.rows.length}`,
        { evidence: { document: "store", where, field: "record", rows: r.rows.length } },
      );
    }
    const row = r.rows[0];
    let seals: unknown;
    try {
      seals = JSON.parse(row.sha256);
    } catch {
      throw new SluiceError(
        "STATE_CORRUPT_STORE",
        `${where}: store identity sha256: is not valid JSON`,
        { evidence: { document: "store", where, field: "sha256" } },
      );
    }
    const record = openStoreRecord({
      format: "sluice.store",
      version: row.version,
      store_id: row.store_id,
      created_at: row.created_at,
      sha256: seals,
    }, where);
    return {
      store_id: record.store_id,
      backend: "postgres",
      address: `${redactPgUrl(this.#config.url, this.schema)}#${this.scope}`,
    };
  }

  async rotateSealKey(): Promise<SealKey> {
    const c = await this.#conn();
    const key = newSealKey(new Date().toISOString());
    const row = JSON.parse(sealKeyText(key));
    const r = await c.query(
      `UPDATE ${this.#q}.sluice_seal_key SET key_id = $1::uuid, secret_hex = $2,
         created_at = $3::timestamptz`,
      [row.key_id, row.secret_hex, row.created_at],
    );
    if (r.rowCount !== 1) {
      throw new SluiceError(
        "STATE_CORRUPT_STORE",
        `${this.schema}.sluice_seal_key: plan-sealing key: must hold exactly one row, holds ${r.rowCount}`,
        {
          evidence: {
            document: "seal_key",
            where: `${this.schema}.sluice_seal_key`,
            field: "record",
          },
        },
      );
    }
    return key;
  }

  async sealKey(): Promise<SealKey> {
    const c = await this.#conn();
    const where = `${this.schema}.sluice_seal_key`;
    const r = await c.query(
      `SELECT key_id::text AS key_id, secret_hex, ${CREATED_AT_TEXT} AS created_at
       FROM ${this.#q}.sluice_seal_key`,
    );
    if (r.rows.length !== 1) {
      throw new SluiceError(
        "STATE_CORRUPT_STORE",
        `${where}: plan-sealing key: must hold exactly one row, holds ${r.rows.length}`,
        { evidence: { document: "seal_key", where, field: "record", rows: r.rows.length } },
      );
    }
    return sealKeyOf(r.rows[0], where);
  }

  /** The recorded migrations must be a prefix of {@link MIGRATIONS}, row for row. */
  #checkMigrations(rows: Array<{ version: number; name: string }>): void {
    const where = `${this.schema}.sluice_migrations`;
    for (const [i, r] of rows.entries()) {
      const m = MIGRATIONS[i];
      const field = !m || m.version !== r.version ? "version" : m.name !== r.name ? "name" : null;
      if (field) {
        throw new SluiceError(
          "STATE_CORRUPT_STORE",
          `${where}: row ${i + 1} ${field}: recorded (${r.version}, ${
            JSON.stringify(r.name)
          }) is not migration ${m ? `(${m.version}, ${JSON.stringify(m.name)})` : "(none)"}`,
          { evidence: { document: "migrations", where, field, row: i + 1 } },
        );
      }
    }
  }

  acquireLock(owner: LockOwner): Promise<void> {
    return atSite(lockOperationSite("postgres", "acquire"), () => this.#acquire(owner));
  }

  async #acquire(owner: LockOwner): Promise<void> {
    const c = await this.#conn();
    const r = await c.query("SELECT pg_try_advisory_lock($1, $2) AS ok", this.#key);
    if (!r.rows[0].ok) {
      let status = await this.inspectLock();
      // the winner writes its metadata row just after taking the advisory lock
      for (let i = 0; i < 40 && status.held && !status.holder; i++) {
        await new Promise((done) => setTimeout(done, 25));
        status = await this.inspectLock();
      }
      throw new SluiceError(
        "STATE_LOCK_HELD",
        `deployment lock for ${owner.project}${
          owner.environment === null ? "" : `/${owner.environment}`
        } is ${status.diagnosis}`,
        { evidence: { holder: status.holder, stale: false } },
      );
    }
    this.#holding = owner.lock_id;
    const pid = (await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
    const full: LockOwner = { ...owner, session_pid: pid };
    await c.query(
      `INSERT INTO ${this.#q}.sluice_locks (scope, lock_id, owner, session_pid, acquired_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (scope) DO UPDATE SET lock_id = EXCLUDED.lock_id, owner = EXCLUDED.owner,
         session_pid = EXCLUDED.session_pid, acquired_at = EXCLUDED.acquired_at`,
      [this.scope, owner.lock_id, canonicalJson(full), pid, owner.acquired_at],
    );
  }

  releaseLock(lockId: string): Promise<void> {
    return atSite(lockOperationSite("postgres", "release"), () => this.#release(lockId));
  }

  async #release(lockId: string): Promise<void> {
    await this.verifyLock(lockId);
    const c = await this.#conn();
    await c.query(`DELETE FROM ${this.#q}.sluice_locks WHERE scope = $1 AND lock_id = $2`, [
      this.scope,
      lockId,
    ]);
    await c.query("SELECT pg_advisory_unlock($1, $2)", this.#key);
    this.#holding = null;
  }

  async #verifyOn(c: pg.Client, lockId: string): Promise<void> {
    let ok = false;
    try {
      const r = await c.query(
        `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::int::oid
           AND objid = $2::int::oid AND objsubid = 2 AND pid = pg_backend_pid() AND granted) AS held,
         (SELECT lock_id::text FROM ${this.#q}.sluice_locks WHERE scope = $3) AS lock_id`,
        [this.#key[0], this.#key[1], this.scope],
      );
      ok = r.rows[0].held === true && r.rows[0].lock_id === lockId;
    } catch (e) {
      throw new SluiceError(
        "STATE_LOCK_LOST",
        `deployment lock ${lockId} was lost: the PostgreSQL session failed (${
          (e as Error).message
        })`,
        { cause: e },
      );
    }
    if (!ok) {
      throw new SluiceError(
        "STATE_LOCK_LOST",
        `deployment lock ${lockId} is no longer held by this session; no further mutation is allowed`,
      );
    }
  }

  async verifyLock(lockId: string): Promise<void> {
    let c: pg.Client;
    try {
      c = await this.#conn();
    } catch (e) {
      if (e instanceof SluiceError && e.code === "STATE_LOCK_LOST") throw e;
      throw new SluiceError("STATE_LOCK_LOST", `deployment lock ${lockId} was lost`, { cause: e });
    }
    await this.#verifyOn(c, lockId);
  }

  async inspectLock(): Promise<LockStatus> {
    const c = await this.#conn();
    const r = await c.query(
      `SELECT (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::int::oid
           AND objid = $2::int::oid AND objsubid = 2 AND granted LIMIT 1) AS pid,
         (SELECT owner FROM ${this.#q}.sluice_locks WHERE scope = $3) AS owner`,
      [this.#key[0], this.#key[1], this.scope],
    );
    const pid = r.rows[0].pid as number | null;
    const owner = r.rows[0].owner ? JSON.parse(r.rows[0].owner) as LockOwner : null;
    if (pid === null) {
      return {
        held: false,
        holder: null,
        stale: false,
        diagnosis: owner
          ? `not held (metadata of an ended session of ${owner.actor} since ${owner.acquired_at} remains)`
          : "not held",
      };
    }
    if (!owner || owner.session_pid !== pid) {
      return {
        held: true,
        holder: null,
        stale: false,
        diagnosis: `held by PostgreSQL session ${pid} (metadata not yet written)`,
      };
    }
    return {
      held: true,
      holder: owner,
      stale: false,
      diagnosis:
        `held by ${owner.actor} (pid ${owner.pid} on ${owner.host}, session ${pid}) since ${owner.acquired_at}`,
    };
  }

  /**
   * Tidy the metadata row of an ended session. No fault site (docs/decisions.md D13): the server
   * releases a session's advisory lock when the session ends, and the next acquire overwrites
   * this row, so no state depends on whether this delete happened.
   */
  async breakStaleLock(lockId: string): Promise<void> {
    const status = await this.inspectLock();
    if (status.held) {
      throw new SluiceError("STATE_LOCK_NOT_STALE", `lock is ${status.diagnosis}`);
    }
    const c = await this.#conn();
    await c.query(`DELETE FROM ${this.#q}.sluice_locks WHERE scope = $1 AND lock_id = $2`, [
      this.scope,
      lockId,
    ]);
  }

  async #rows(c: pg.Client, forUpdate: boolean): Promise<Map<DocName, string>> {
    const r = await c.query(
      `SELECT name, body, body_sha256, revision FROM ${this.#q}.sluice_documents
       WHERE scope = $1 ORDER BY name${forUpdate ? " FOR UPDATE" : ""}`,
      [this.scope],
    );
    const out = new Map<DocName, string>();
    for (const row of r.rows) {
      const name = row.name as DocName;
      const where = this.locate(name);
      const body = row.body as string;
      if (sha256Hex(body) !== row.body_sha256) {
        throw corruptDoc(
          name,
          where,
          "body_sha256",
          "the row's body does not hash to its body_sha256 column (altered row)",
        );
      }
      const bodyRevision = revisionOfBody(body);
      // an unreadable body is reported precisely by the decoder above this primitive
      if (bodyRevision >= 0 && bodyRevision !== Number(row.revision)) {
        throw corruptDoc(
          name,
          where,
          "revision",
          `revision column ${row.revision} differs from the body's revision ${bodyRevision}`,
        );
      }
      out.set(name, body);
    }
    return out;
  }

  /** The scope's history event rows, oldest first (verified against the document above). */
  async #historyRows(c: pg.Client): Promise<StoredHistoryRow[]> {
    const r = await c.query(
      `SELECT event_index, kind, operation_id, bytes, sha256,
         ${utcText("committed_at")} AS committed_at
       FROM ${this.#q}.sluice_history_events WHERE scope = $1 ORDER BY event_index`,
      [this.scope],
    );
    return r.rows.map((row) => ({
      index: Number(row.event_index),
      kind: row.kind,
      operation_id: row.operation_id,
      bytes: row.bytes,
      sha256: row.sha256,
      committed_at: row.committed_at,
    }));
  }

  locate(name: DocName): string {
    return `${this.schema}.sluice_documents ${this.scope} ${name}`;
  }

  async read(): Promise<StoredBodies> {
    const c = await this.#conn();
    await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    try {
      const rows = await this.#rows(c, false);
      const historyRows = await this.#historyRows(c);
      await c.query("COMMIT");
      return {
        ownership: rows.get("ownership") ?? null,
        control: rows.get("control") ?? null,
        history: rows.get("history") ?? null,
        historyRows,
      };
    } catch (e) {
      await c.query("ROLLBACK").catch(() => {});
      throw e;
    }
  }

  async commit(writes: DocWrite[], lockId: string, transition: StateTransition): Promise<void> {
    const c = await this.#conn().catch((e) => {
      throw new SluiceError("STATE_LOCK_LOST", `deployment lock ${lockId} was lost`, { cause: e });
    });
    try {
      await c.query("BEGIN");
    } catch (e) {
      throw new SluiceError("STATE_LOCK_LOST", `deployment lock ${lockId} was lost`, { cause: e });
    }
    try {
      await this.#verifyOn(c, lockId);
      const rows = await this.#rows(c, true);
      for (const w of writes) {
        const current = rows.get(w.name) ?? null;
        const actual = current === null ? null : sha256Hex(current);
        if (actual !== w.expectedSha256) throw conflictError(w.name, w.expectedRevision, current);
        if (w.body === null) {
          await c.query(`DELETE FROM ${this.#q}.sluice_documents WHERE scope = $1 AND name = $2`, [
            this.scope,
            w.name,
          ]);
          rows.delete(w.name);
        } else {
          await c.query(
            `INSERT INTO ${this.#q}.sluice_documents (scope, name, body, body_sha256, revision)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (scope, name) DO UPDATE SET body = EXCLUDED.body,
               body_sha256 = EXCLUDED.body_sha256, revision = EXCLUDED.revision, updated_at = now()`,
            [this.scope, w.name, w.body, sha256Hex(w.body), revisionOfBody(w.body)],
          );
          rows.set(w.name, w.body);
        }
        if (w.appended && w.appended.length > 0) {
          // one row per event, in this transaction, at the database's clock (append only: a row
          // already at that index is history kept beside a document that lost it, corruption)
          await insertHistoryRows(
            async (sql, params) => (await c.query(sql, params)).rows,
            this.#q,
            this.scope,
            w.appended,
            "clock_timestamp()",
          ).catch((e) => {
            if ((e as { code?: string })?.code !== "23505") throw e;
            throw corruptDoc(
              "history",
              `${this.schema}.sluice_history_events ${this.scope}`,
              "rows",
              `an event row already exists at index ${w.appended![0].index} or after`,
            );
          });
        }
      }
    } catch (e) {
      await c.query("ROLLBACK").catch(() => {});
      throw e;
    }
    try {
      await atSite(pgCommitSite(transition), () => c.query("COMMIT"));
    } catch (e) {
      throw new SluiceError(
        "UNKNOWN_OUTCOME_STATE_WRITE",
        `the state commit was sent but not acknowledged: ${(e as Error).message}`,
        { cause: e },
      );
    }
  }

  async close(): Promise<void> {
    const c = this.#client;
    this.#client = null;
    if (c) await c.end().catch(() => {});
  }
}

/**
 * Whether an error says the server ended this session: SQLSTATE class 57 (`57P01`
 * admin_shutdown — what `pg_terminate_backend` sends — `57P02`, `57P03`), or the client's own
 * "Connection terminated" once the socket closed.
 */
function sessionEnded(e: unknown): boolean {
  const x = e as { code?: unknown; message?: unknown } | null;
  if (typeof x?.code === "string" && /^57P0[123]$/.test(x.code)) return true;
  return typeof x?.message === "string" && /Connection terminated/i.test(x.message);
}
