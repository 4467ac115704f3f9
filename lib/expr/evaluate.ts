/**
 * The predicate evaluator: SQL three-valued logic over decoded values (TRUE, FALSE and
 * UNKNOWN as `null`), exactly as docs/artifact-format.md specifies. A record passes the
 * filter only when the result is `true`.
 *
 * @example
 * ```ts
 * import { evaluate } from "./evaluate.ts";
 * const result = evaluate(
 *   {
 *     kind: "compare",
 *     op: ">",
 *     left: { kind: "column", name: "qty", type: "BIGINT" },
 *     right: { kind: "literal", type: "BIGINT", value: "1" },
 *   },
 *   { qty: null },
 * );
 * console.log(result); // null (UNKNOWN)
 * ```
 * @module
 */
import type { Expr, LiteralExpr } from "./ast.ts";
import type { Value } from "./schema.ts";

/** A three-valued truth value: `null` is UNKNOWN. */
export type Truth = boolean | null;

/**
 * Evaluate a predicate against a decoded record.
 *
 * @example
 * ```ts
 * const passes = evaluate(artifact.predicate, decoded.values) === true;
 * ```
 */
export function evaluate(expr: Expr, record: Readonly<Record<string, Value>>): Truth {
  const v = valueOf(expr, record);
  if (v !== null && typeof v !== "boolean") {
    throw new TypeError(`predicate evaluated to a non-BOOLEAN value (${typeof v})`);
  }
  return v;
}

/** The value of a literal node (BIGINT as bigint, DOUBLE as number). */
export function literalValue(lit: LiteralExpr): Value {
  switch (lit.type) {
    case "BIGINT":
      return BigInt(lit.value);
    case "DOUBLE":
      return Number(lit.value);
    default:
      return lit.value;
  }
}

function valueOf(expr: Expr, record: Readonly<Record<string, Value>>): Value {
  switch (expr.kind) {
    case "column": {
      const v = record[expr.name];
      if (v === undefined) throw new TypeError(`record has no field '${expr.name}'`);
      return v;
    }
    case "literal":
      return literalValue(expr);
    case "compare": {
      const c = compare(valueOf(expr.left, record), valueOf(expr.right, record));
      if (c === null) return null;
      switch (expr.op) {
        case "=":
          return c === 0;
        case "<>":
          return c !== 0;
        case "<":
          return c < 0;
        case "<=":
          return c <= 0;
        case ">":
          return c > 0;
        case ">=":
          return c >= 0;
      }
      break;
    }
    case "and": {
      let unknown = false;
      for (const arg of expr.args) {
        const t = truth(arg, record);
        if (t === false) return false;
        if (t === null) unknown = true;
      }
      return unknown ? null : true;
    }
    case "or": {
      let unknown = false;
      for (const arg of expr.args) {
        const t = truth(arg, record);
        if (t === true) return true;
        if (t === null) unknown = true;
      }
      return unknown ? null : false;
    }
    case "not": {
      const t = truth(expr.arg, record);
      return t === null ? null : !t;
    }
    case "is_null": {
      const isNull = valueOf(expr.arg, record) === null;
      return expr.negated ? !isNull : isNull;
    }
    case "in": {
      const x = valueOf(expr.arg, record);
      let unknown = x === null;
      let found = false;
      for (const item of expr.list) {
        const c = compare(x, literalValue(item));
        if (c === 0) {
          found = true;
          break;
        }
        if (c === null) unknown = true;
      }
      const result: Truth = found ? true : unknown ? null : false;
      return negate(result, expr.negated);
    }
    case "between": {
      const x = valueOf(expr.arg, record);
      const lo = compare(x, valueOf(expr.low, record));
      const hi = compare(x, valueOf(expr.high, record));
      const ge: Truth = lo === null ? null : lo >= 0;
      const le: Truth = hi === null ? null : hi <= 0;
      const both: Truth = ge === false || le === false
        ? false
        : ge === null || le === null
        ? null
        : true;
      return negate(both, expr.negated);
    }
  }
  throw new TypeError(`unknown predicate node`);
}

function truth(expr: Expr, record: Readonly<Record<string, Value>>): Truth {
  const v = valueOf(expr, record);
  if (v !== null && typeof v !== "boolean") {
    throw new TypeError("non-BOOLEAN argument of a logical operator");
  }
  return v;
}

function negate(t: Truth, negated: boolean): Truth {
  if (!negated || t === null) return t;
  return !t;
}

/** Compare two values of the same type: −1, 0, 1, or null when either is NULL. */
export function compare(a: Value, b: Value): -1 | 0 | 1 | null {
  if (a === null || b === null) return null;
  if (typeof a === "string" && typeof b === "string") return compareCodePoints(a, b);
  if (typeof a === "boolean" && typeof b === "boolean") return a === b ? 0 : a ? 1 : -1;
  if (typeof a === "bigint" && typeof b === "bigint") return a === b ? 0 : a < b ? -1 : 1;
  if (typeof a === "number" && typeof b === "number") return a === b ? 0 : a < b ? -1 : 1;
  // the type checker rules this out: no implicit coercion
  throw new TypeError(`cannot compare ${typeof a} with ${typeof b}`);
}

/** Order strings by Unicode code point (not UTF-16 code unit, which differs above U+FFFF). */
export function compareCodePoints(a: string, b: string): -1 | 0 | 1 {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    // a surrogate (code point ≥ U+10000) sorts after any BMP unit outside the surrogate range
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
