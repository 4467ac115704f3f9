/**
 * The store identity record (local `store.json`, PostgreSQL `sluice_store` row): its fields
 * `format`, `version`, `store_id` and `created_at`, each sealed by its own sha256 so that an
 * edit of any byte is `STATE_CORRUPT_STORE` naming the field (a plan made against the store
 * is never blamed for a changed identity).
 *
 * @example
 * ```ts
 * import { newStoreRecord, openStoreRecord, sealStoreRecord } from "./identity.ts";
 * const sealed = sealStoreRecord(newStoreRecord(crypto.randomUUID(), new Date().toISOString()));
 * console.log(openStoreRecord(sealed, "store.json").store_id);
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { checksumOf } from "./_canonical.ts";

/** The store identity record version this sluice writes (1 was the unsealed record). */
export const STORE_VERSION = 2;

/** The identity record's fields. */
export interface StoreRecord {
  format: "sluice.store";
  /** 2: the sealed record (1 was the unsealed record of earlier versions). */
  version: typeof STORE_VERSION;
  store_id: string;
  /** ISO-8601 UTC. */
  created_at: string;
}

/** The record with one sha256 per field (the form stored). */
export interface SealedStoreRecord extends StoreRecord {
  sha256: Record<keyof StoreRecord, string>;
}

const FIELDS = ["created_at", "format", "store_id", "version"] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

/**
 * A new identity record.
 *
 * @example
 * ```ts
 * import { newStoreRecord } from "./identity.ts";
 * newStoreRecord("0b7f1c1e-8a43-4c55-9d0a-51b0f2e1c9aa", "2026-01-01T00:00:00.000Z").version; // 2
 * ```
 */
export function newStoreRecord(storeId: string, createdAt: string): StoreRecord {
  return {
    format: "sluice.store",
    version: STORE_VERSION,
    store_id: storeId,
    created_at: createdAt,
  };
}

/**
 * Seal each field of a record with its own sha256 (of the field value's canonical JSON).
 *
 * @example
 * ```ts
 * import { newStoreRecord, sealStoreRecord } from "./identity.ts";
 * sealStoreRecord(newStoreRecord("0b7f1c1e-8a43-4c55-9d0a-51b0f2e1c9aa", "2026-01-01T00:00:00Z"));
 * ```
 */
export function sealStoreRecord(record: StoreRecord): SealedStoreRecord {
  const sha256 = Object.fromEntries(FIELDS.map((f) => [f, checksumOf(record[f])])) as Record<
    keyof StoreRecord,
    string
  >;
  return { ...record, sha256 };
}

function corrupt(where: string, field: string, message: string): never {
  throw new SluiceError("STATE_CORRUPT_STORE", `${where}: store identity ${field}: ${message}`, {
    evidence: { document: "store", where, field },
  });
}

/**
 * Verify a stored identity record: every field present, each matching its own sha256, and
 * well-formed. Throws `STATE_CORRUPT_STORE` naming the field.
 *
 * @example
 * ```ts
 * import { newStoreRecord, openStoreRecord, sealStoreRecord } from "./identity.ts";
 * const r = sealStoreRecord(newStoreRecord("0b7f1c1e-8a43-4c55-9d0a-51b0f2e1c9aa", "2026-01-01T00:00:00Z"));
 * openStoreRecord({ ...r, store_id: r.store_id.replace("0b", "0c") }, "x"); // throws: store_id
 * ```
 */
export function openStoreRecord(value: unknown, where: string): StoreRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    corrupt(where, "record", "is not an object");
  }
  const v = value as Record<string, unknown>;
  if (v.format === "sluice.store" && v.version === 1 && v.sha256 === undefined) {
    corrupt(
      where,
      "version",
      "is an unsealed version-1 identity of an earlier sluice; its bytes cannot be verified",
    );
  }
  const keys = Object.keys(v).sort();
  const expected = [...FIELDS, "sha256"].sort();
  for (const k of keys) if (!expected.includes(k)) corrupt(where, k, "is not an identity field");
  for (const k of expected) if (!(k in v)) corrupt(where, k, "is missing");
  const seals = v.sha256 as Record<string, unknown>;
  if (typeof seals !== "object" || seals === null || Array.isArray(seals)) {
    corrupt(where, "sha256", "is not a map of field checksums");
  }
  for (const k of Object.keys(seals)) {
    if (!(FIELDS as readonly string[]).includes(k)) corrupt(where, `sha256.${k}`, "is unknown");
  }
  for (const f of FIELDS) {
    const actual = checksumOf(v[f]);
    if (seals[f] !== actual) {
      corrupt(
        where,
        f,
        `${JSON.stringify(v[f])} does not match its recorded sha256 (recorded ${
          String(seals[f])
        }, value hashes to ${actual})`,
      );
    }
  }
  if (v.format !== "sluice.store") corrupt(where, "format", `${JSON.stringify(v.format)}`);
  if (v.version !== STORE_VERSION) {
    corrupt(where, "version", `unsupported version ${JSON.stringify(v.version)}`);
  }
  if (typeof v.store_id !== "string" || !UUID.test(v.store_id)) {
    corrupt(where, "store_id", "is not a lower-case UUID");
  }
  if (typeof v.created_at !== "string" || !ISO.test(v.created_at)) {
    corrupt(where, "created_at", "is not an ISO-8601 UTC time");
  }
  return newStoreRecord(v.store_id as string, v.created_at as string);
}
