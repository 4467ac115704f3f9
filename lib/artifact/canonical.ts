/**
 * Canonical JSON and sha256 checksums (docs/artifact-format.md, "Canonical JSON and
 * checksums"): UTF-8, no insignificant whitespace, keys sorted by UTF-16 code units,
 * strings escaped as `JSON.stringify` does, only safe integers as numbers, no trailing
 * newline. The same value gives the same bytes on every run and machine.
 *
 * @example
 * ```ts
 * import { canonicalJson, sha256Hex } from "./canonical.ts";
 * const text = canonicalJson({ b: 1, a: [true, null, "x"] });
 * console.log(text); // {"a":[true,null,"x"],"b":1}
 * console.log(sha256Hex(text).length); // 64
 * ```
 * @module
 */
import { createHash } from "node:crypto";
import { SluiceError } from "../errors.ts";

/**
 * Serialise a JSON-compatible value canonically. Throws `ARTIFACT_NOT_CANONICAL` for values
 * that have no canonical form (non-safe or non-integer numbers, bigint, undefined,
 * functions, non-plain objects).
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: "x" }); // '{"a":"x","b":1}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  write(value, out, "$");
  return out.join("");
}

function write(value: unknown, out: string[], path: string): void {
  if (value === null) {
    out.push("null");
    return;
  }
  switch (typeof value) {
    case "boolean":
      out.push(value ? "true" : "false");
      return;
    case "string":
      out.push(JSON.stringify(value));
      return;
    case "number":
      if (!Number.isSafeInteger(value)) {
        throw new SluiceError(
          "ARTIFACT_NOT_CANONICAL",
          `${path}: ${value} is not a safe integer; write large or fractional numbers as strings`,
        );
      }
      out.push(String(Object.is(value, -0) ? 0 : value));
      return;
    case "object": {
      if (Array.isArray(value)) {
        out.push("[");
        value.forEach((item, i) => {
          if (i > 0) out.push(",");
          write(item, out, `${path}[${i}]`);
        });
        out.push("]");
        return;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new SluiceError("ARTIFACT_NOT_CANONICAL", `${path}: not a plain object`);
      }
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record).sort();
      out.push("{");
      keys.forEach((key, i) => {
        if (record[key] === undefined) {
          throw new SluiceError(
            "ARTIFACT_NOT_CANONICAL",
            `${path}.${key} is undefined; write null for an absent value`,
          );
        }
        if (i > 0) out.push(",");
        out.push(JSON.stringify(key), ":");
        write(record[key], out, `${path}.${key}`);
      });
      out.push("}");
      return;
    }
    default:
      throw new SluiceError(
        "ARTIFACT_NOT_CANONICAL",
        `${path}: a ${typeof value} has no JSON form`,
      );
  }
}

/** sha256 of a string's UTF-8 bytes (or of bytes), as lower-case hex. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The sha256 of a value's canonical JSON. */
export function canonicalSha256(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/**
 * Parse text that must already be canonical JSON (e.g. a mounted plan or a stored artifact).
 * Throws `ARTIFACT_NOT_CANONICAL` when it is not JSON, or when re-serialising it does not
 * give back the same text (whitespace, key order, duplicate keys, unsafe numbers...).
 */
export function parseCanonicalJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new SluiceError("ARTIFACT_NOT_CANONICAL", `not JSON: ${(e as Error).message}`);
  }
  let again: string;
  try {
    again = canonicalJson(value);
  } catch (e) {
    throw new SluiceError("ARTIFACT_NOT_CANONICAL", (e as Error).message);
  }
  if (again !== text) {
    throw new SluiceError(
      "ARTIFACT_NOT_CANONICAL",
      "text is JSON but not in canonical form (whitespace, key order, duplicate keys or numbers)",
    );
  }
  return value;
}
