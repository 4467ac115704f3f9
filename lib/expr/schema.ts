/**
 * Column types and record schemas shared by the type checker, the decoder, the evaluator
 * and the runner artifact (docs/artifact-format.md).
 *
 * @example
 * ```ts
 * import { isColumnType } from "./schema.ts";
 * import type { SchemaField } from "./schema.ts";
 * const field: SchemaField = { name: "amount", type: "BIGINT", nullable: false };
 * console.log(isColumnType(field.type)); // true
 * ```
 * @module
 */

/** The column types of the SQL subset. BIGINT is signed 64-bit, DOUBLE is IEEE 754. */
export type ColumnType = "STRING" | "BOOLEAN" | "BIGINT" | "DOUBLE";

/** Every column type, in documentation order. */
export const COLUMN_TYPES: readonly ColumnType[] = ["STRING", "BOOLEAN", "BIGINT", "DOUBLE"];

/** One field of a record schema. */
export interface SchemaField {
  /** The JSON field name. */
  name: string;
  /** Its SQL type. */
  type: ColumnType;
  /** Whether null (or an absent field) is allowed. */
  nullable: boolean;
}

/** Whether a string names a column type (exact, upper-case). */
export function isColumnType(value: unknown): value is ColumnType {
  return typeof value === "string" && (COLUMN_TYPES as readonly string[]).includes(value);
}

/**
 * A decoded field value: STRING → string, BOOLEAN → boolean, BIGINT → bigint (exact),
 * DOUBLE → number, SQL NULL → null.
 */
export type Value = string | boolean | bigint | number | null;

/** Smallest BIGINT (−2^63). */
export const BIGINT_MIN = -(2n ** 63n);
/** Largest BIGINT (2^63 − 1). */
export const BIGINT_MAX = 2n ** 63n - 1n;
