/**
 * Canonical JSON and sha256 for state documents: the one implementation in
 * `lib/artifact/canonical.ts` (docs/artifact-format.md), re-exported with the JSON value type
 * the state modules use.
 * @module
 */
import { canonicalSha256 } from "../artifact/canonical.ts";

export { canonicalJson, sha256Hex } from "../artifact/canonical.ts";

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** sha256 hex of the canonical JSON of `value`. */
export function checksumOf(value: unknown): string {
  return canonicalSha256(value);
}
