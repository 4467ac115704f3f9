/**
 * The state store's plan-sealing key: 32 random bytes and an ID, generated once when the store
 * is created (local: `seal-key.json` beside `store.json`, mode 0600; PostgreSQL: the
 * `sluice_seal_key` row) and kept with the state, so that only someone who can read the state
 * can seal a plan file that apply accepts (`lib/plan/key_seal.ts`, docs/trust.md).
 *
 * @example
 * ```ts
 * import { newSealKey, parseSealKey, sealKeyText } from "./seal_key.ts";
 * const key = newSealKey(new Date().toISOString());
 * console.log(parseSealKey(sealKeyText(key), "seal-key.json").key_id === key.key_id); // true
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { canonicalJson } from "./_canonical.ts";

/** A plan-sealing key. */
export interface SealKey {
  /** A UUID naming the key (recorded in every plan it seals). */
  key_id: string;
  /** The secret: 32 random bytes. */
  secret: Uint8Array;
  /** When the key was generated (ISO-8601 UTC). */
  created_at: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEX64 = /^[0-9a-f]{64}$/;

/** A fresh key from the platform's cryptographic random source. */
export function newSealKey(createdAt: string): SealKey {
  return {
    key_id: crypto.randomUUID(),
    secret: crypto.getRandomValues(new Uint8Array(32)),
    created_at: createdAt,
  };
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The stored form of a key (canonical JSON; the secret in lower-case hex). */
export function sealKeyText(key: SealKey): string {
  return canonicalJson({
    format: "sluice.seal-key",
    version: 1,
    key_id: key.key_id,
    secret_hex: hex(key.secret),
    created_at: key.created_at,
  });
}

/** The stored columns of a key (PostgreSQL row) checked as the file form is. */
export function sealKeyOf(
  fields: { key_id: unknown; secret_hex: unknown; created_at: unknown },
  where: string,
): SealKey {
  const corrupt = (field: string, why: string): never => {
    throw new SluiceError(
      "STATE_CORRUPT_STORE",
      `${where}: plan-sealing key: ${field} ${why}`,
      { evidence: { document: "seal_key", where, field } },
    );
  };
  if (typeof fields.key_id !== "string" || !UUID.test(fields.key_id)) {
    return corrupt("key_id", "is not a lower-case UUID");
  }
  if (typeof fields.secret_hex !== "string" || !HEX64.test(fields.secret_hex)) {
    return corrupt("secret", "is not 32 bytes of lower-case hex");
  }
  if (typeof fields.created_at !== "string" || Number.isNaN(Date.parse(fields.created_at))) {
    return corrupt("created_at", "is not a time");
  }
  const secret = new Uint8Array(32);
  for (let i = 0; i < 32; i++) secret[i] = parseInt(fields.secret_hex.slice(i * 2, i * 2 + 2), 16);
  return { key_id: fields.key_id, secret, created_at: fields.created_at };
}

/** Read a key's stored form; anything else is `STATE_CORRUPT_STORE` (the secret never shown). */
export function parseSealKey(text: string, where: string): SealKey {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new SluiceError(
      "STATE_CORRUPT_STORE",
      `${where}: plan-sealing key: is not valid JSON (truncated?)`,
      { evidence: { document: "seal_key", where, field: "record" } },
    );
  }
  if (
    doc === null || typeof doc !== "object" || doc.format !== "sluice.seal-key" ||
    doc.version !== 1
  ) {
    throw new SluiceError(
      "STATE_CORRUPT_STORE",
      `${where}: plan-sealing key: not a sluice.seal-key record of version 1`,
      { evidence: { document: "seal_key", where, field: "format" } },
    );
  }
  const key = sealKeyOf(
    { key_id: doc.key_id, secret_hex: doc.secret_hex, created_at: doc.created_at },
    where,
  );
  if (sealKeyText(key) !== text) {
    throw new SluiceError(
      "STATE_CORRUPT_STORE",
      `${where}: plan-sealing key: is not in canonical form (edited by hand?)`,
      { evidence: { document: "seal_key", where, field: "record" } },
    );
  }
  return key;
}
