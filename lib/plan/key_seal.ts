/**
 * The keyed seal of a plan: an HMAC-SHA256, under the state store's plan-sealing key
 * (`lib/state/seal_key.ts`), of the plan's canonical JSON without the keyed seal itself. The
 * file's sha256 seal (`plan_file.ts`) says the bytes are the ones sluice wrote; the keyed seal
 * says who wrote them: someone who could read this store's key. Whoever can write a plan file
 * but cannot read the state can re-compute the first, never the second.
 *
 * Apply checks the keyed seal before it starts an operation from a plan file
 * ({@link verifyKeySeal}); continuing a pending operation needs none, because its intent,
 * recorded in the state, already binds the plan's sha256. The same key keys the plan's binding of
 * the runner's credentials (`runner_credentials.ts`), for the same reason: only who reads the
 * state can recompute it.
 *
 * @example
 * ```ts
 * import { keySealOf, verifyKeySeal } from "./key_seal.ts";
 * import { newSealKey } from "../state/seal_key.ts";
 * import type { Plan } from "./plan.ts";
 * function roundTrip(plan: Plan) {
 *   const key = newSealKey(new Date().toISOString());
 *   verifyKeySeal({ ...plan, key_seal: keySealOf(plan, key) }, key); // passes
 * }
 * ```
 * @module
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { SluiceError } from "../errors.ts";
import { canonicalJson } from "../artifact/canonical.ts";
import type { SealKey } from "../state/seal_key.ts";
import type { KeySeal, Plan } from "./plan.ts";

/** The plan's content the keyed seal covers: everything but the keyed seal. */
function covered(plan: Plan): string {
  const { key_seal: _ignored, ...rest } = plan;
  return canonicalJson(rest);
}

/** The keyed seal of a plan under `key`. */
export function keySealOf(plan: Plan, key: SealKey): KeySeal {
  const hmac = createHmac("sha256", key.secret).update(covered(plan)).digest("hex");
  return { key_id: key.key_id, hmac_sha256: hmac };
}

/**
 * Refuse a plan whose keyed seal is not this store's key's seal of its content:
 * `PLAN_UNSEALED` (no keyed seal: written by a sluice before keyed seals, or assembled by
 * hand), `PLAN_SEAL_KEY_UNKNOWN` (sealed under another key: another store's, or this store's
 * before its key was rotated), `PLAN_SEAL_FORGED` (the content is not what the key sealed). All
 * exit 3, before anything is mutated; the way out is always a fresh `sluice plan`.
 */
export function verifyKeySeal(plan: Plan, key: SealKey, where = "the plan file"): void {
  const seal = plan.key_seal;
  if (!seal) {
    throw new SluiceError(
      "PLAN_UNSEALED",
      `${where} carries no keyed seal of this state store (made by an earlier sluice, or not by 'sluice plan'); plan again with 'sluice plan --out FILE'`,
    );
  }
  if (seal.key_id !== key.key_id) {
    throw new SluiceError(
      "PLAN_SEAL_KEY_UNKNOWN",
      `${where} was sealed with key ${seal.key_id}, not with this state store's key ${key.key_id} (another store's plan, or one sealed before the key was rotated); plan again with 'sluice plan --out FILE'`,
      { evidence: { plan_key_id: seal.key_id, store_key_id: key.key_id } },
    );
  }
  const expected = Buffer.from(keySealOf(plan, key).hmac_sha256, "hex");
  const actual = /^[0-9a-f]{64}$/.test(seal.hmac_sha256)
    ? Buffer.from(seal.hmac_sha256, "hex")
    : new Uint8Array(0);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    throw new SluiceError(
      "PLAN_SEAL_FORGED",
      `${where}: its content is not what this state store's key sealed (the plan was edited and re-sealed by someone without the key); nothing was done — plan again with 'sluice plan --out FILE'`,
      { evidence: { key_id: key.key_id } },
    );
  }
}

/**
 * What may start an operation from a plan: a plan under this store's keyed seal
 * ({@link verifyKeySeal}). The plan of the pending operation needs none: the intent recorded in
 * the state binds its sha256, so a plan sealed before keyed seals existed (or before a key
 * rotation) can still finish what it began.
 */
export function verifyPlanAuthority(
  plan: Plan,
  sha256: string,
  pendingPlanSha256: string | null,
  key: SealKey,
  where?: string,
): void {
  if (pendingPlanSha256 === sha256) return;
  verifyKeySeal(plan, key, where);
}
