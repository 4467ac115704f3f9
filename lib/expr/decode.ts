/**
 * Strict record decoding (docs/artifact-format.md, "Strict record decoding"): a JSON object
 * is decoded against the schema or rejected with one of the stable `DECODE_*` outcomes the
 * runner uses. Checks run in this order: malformed, then each member in document order
 * (duplicate, unknown field, null not allowed, wrong type, out of range), then missing fields.
 *
 * @example
 * ```ts
 * import { decodeRecord } from "./decode.ts";
 * const result = decodeRecord('{"amount": 9223372036854775807}', [
 *   { name: "amount", type: "BIGINT", nullable: false },
 * ]);
 * if (result.ok) console.log(result.values.amount); // 9223372036854775807n
 * ```
 * @module
 */
import { JsonSyntaxError, readJson } from "./json_reader.ts";
import type { JsonValue } from "./json_reader.ts";
import { BIGINT_MAX, BIGINT_MIN } from "./schema.ts";
import type { SchemaField, Value } from "./schema.ts";

/** The stable decoding outcomes shared with the runner. */
export type DecodeErrorCode =
  | "DECODE_MISSING_FIELD"
  | "DECODE_NULL_NOT_ALLOWED"
  | "DECODE_UNKNOWN_FIELD"
  | "DECODE_DUPLICATE_FIELD"
  | "DECODE_WRONG_TYPE"
  | "DECODE_OUT_OF_RANGE"
  | "DECODE_MALFORMED";

/** A decoded record (field name → value) or the reason it was rejected. */
export type DecodeResult =
  | { ok: true; values: Record<string, Value> }
  | { ok: false; code: DecodeErrorCode; field: string | null; message: string };

function reject(code: DecodeErrorCode, field: string | null, message: string): DecodeResult {
  return { ok: false, code, field, message };
}

/**
 * Decode a record value (text or UTF-8 bytes) against a schema. Invalid UTF-8 is
 * `DECODE_MALFORMED`. A null record (tombstone) is dropped by callers before decoding.
 * @example
 * ```ts
 * const r = decodeRecord('{"amount":1}', [{ name: "amount", type: "BIGINT", nullable: false }]);
 * console.log(r.ok ? r.values.amount : r.code); // 1n
 * ```
 */
export function decodeRecord(
  input: string | Uint8Array,
  schema: readonly SchemaField[],
): DecodeResult {
  let text: string;
  if (typeof input === "string") text = input;
  else {
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(input);
    } catch {
      return reject("DECODE_MALFORMED", null, "record is not valid UTF-8");
    }
  }
  let doc: JsonValue;
  try {
    doc = readJson(text);
  } catch (e) {
    if (e instanceof JsonSyntaxError) {
      return reject("DECODE_MALFORMED", null, `record is not JSON: ${e.message}`);
    }
    throw e;
  }
  if (doc.kind !== "object") {
    return reject("DECODE_MALFORMED", null, `record is a JSON ${doc.kind}, not an object`);
  }
  const byName = new Map(schema.map((f) => [f.name, f]));
  const values: Record<string, Value> = Object.create(null);
  const seen = new Set<string>();
  for (const { key, value } of doc.members) {
    if (seen.has(key)) return reject("DECODE_DUPLICATE_FIELD", key, `field '${key}' appears twice`);
    seen.add(key);
    const field = byName.get(key);
    if (!field) return reject("DECODE_UNKNOWN_FIELD", key, `field '${key}' is not in the schema`);
    const decoded = decodeValue(field, value);
    if (!decoded.ok) return decoded;
    values[key] = decoded.value;
  }
  for (const field of schema) {
    if (!seen.has(field.name)) {
      return reject(
        "DECODE_MISSING_FIELD",
        field.name,
        `declared field '${field.name}' is missing`,
      );
    }
  }
  return { ok: true, values };
}

function decodeValue(
  field: SchemaField,
  value: JsonValue,
): { ok: true; value: Value } | Extract<DecodeResult, { ok: false }> {
  const wrong = () =>
    reject(
      "DECODE_WRONG_TYPE",
      field.name,
      `field '${field.name}' must be ${field.type}, found a JSON ${value.kind}`,
    ) as Extract<
      DecodeResult,
      { ok: false }
    >;
  if (value.kind === "null") {
    if (field.nullable) return { ok: true, value: null };
    return reject(
      "DECODE_NULL_NOT_ALLOWED",
      field.name,
      `field '${field.name}' is not nullable`,
    ) as Extract<
      DecodeResult,
      { ok: false }
    >;
  }
  switch (field.type) {
    case "STRING":
      return value.kind === "string" ? { ok: true, value: value.value } : wrong();
    case "BOOLEAN":
      return value.kind === "boolean" ? { ok: true, value: value.value } : wrong();
    case "BIGINT": {
      if (value.kind !== "number" || /[.eE]/.test(value.text)) return wrong();
      const n = BigInt(value.text);
      if (n < BIGINT_MIN || n > BIGINT_MAX) {
        return reject(
          "DECODE_OUT_OF_RANGE",
          field.name,
          `field '${field.name}' is outside the BIGINT range`,
        ) as Extract<
          DecodeResult,
          { ok: false }
        >;
      }
      return { ok: true, value: n };
    }
    case "DOUBLE": {
      if (value.kind !== "number") return wrong();
      const n = Number(value.text);
      if (!Number.isFinite(n)) {
        return reject(
          "DECODE_OUT_OF_RANGE",
          field.name,
          `field '${field.name}' is outside the DOUBLE range`,
        ) as Extract<
          DecodeResult,
          { ok: false }
        >;
      }
      return { ok: true, value: n };
    }
  }
}
