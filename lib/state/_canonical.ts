/**
 * Private canonical JSON + sha256 helper for the state store, following
 * docs/artifact-format.md ("Canonical JSON and checksums") exactly. The lead will dedupe it
 * with lib/artifact/canonical.ts later.
 * @module
 */
import { createHash } from "node:crypto";

/** A JSON value as the state store writes it (no undefined, no non-safe numbers). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Canonical JSON text: sorted keys, no whitespace, safe integers only. */
export function canonicalJson(value: unknown): string {
  return encode(value, "$");
}

function encode(value: unknown, path: string): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "string":
      return JSON.stringify(value);
    case "number":
      if (!Number.isSafeInteger(value)) {
        throw new TypeError(`canonical JSON: ${path} is not a safe integer (${value})`);
      }
      return Object.is(value, -0) ? "0" : String(value);
    case "object": {
      if (Array.isArray(value)) {
        return `[${value.map((v, i) => encode(v, `${path}[${i}]`)).join(",")}]`;
      }
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).sort();
      const parts: string[] = [];
      for (const key of keys) {
        const v = obj[key];
        if (v === undefined) throw new TypeError(`canonical JSON: ${path}.${key} is undefined`);
        parts.push(`${JSON.stringify(key)}:${encode(v, `${path}.${key}`)}`);
      }
      return `{${parts.join(",")}}`;
    }
    default:
      throw new TypeError(`canonical JSON: ${path} has unsupported type ${typeof value}`);
  }
}

/** Lower-case hex sha256 of a UTF-8 string. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(new TextEncoder().encode(text)).digest("hex");
}

/** sha256 of the canonical JSON of a value. */
export function checksumOf(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
