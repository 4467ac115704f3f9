/**
 * The typed predicate AST of docs/artifact-format.md ("Predicate AST"). These objects are
 * serialised into the runner artifact as they are, so field names follow the document.
 *
 * @example
 * ```ts
 * import type { Expr } from "./ast.ts";
 * const paid: Expr = {
 *   kind: "compare",
 *   op: "=",
 *   left: { kind: "column", name: "paid", type: "BOOLEAN" },
 *   right: { kind: "literal", type: "BOOLEAN", value: true },
 * };
 * console.log(paid.kind);
 * ```
 * @module
 */
import type { ColumnType } from "./schema.ts";

/** A reference to an input field. */
export interface ColumnExpr {
  /** Discriminant. */
  kind: "column";
  /** The field name. */
  name: string;
  /** Its declared type. */
  type: ColumnType;
}

/** A literal. STRING/BIGINT/DOUBLE values are strings so 64-bit integers stay exact. */
export type LiteralExpr =
  | { kind: "literal"; type: "STRING" | "BIGINT" | "DOUBLE"; value: string }
  | { kind: "literal"; type: "BOOLEAN"; value: boolean }
  | { kind: "literal"; type: "NULL"; value: null };

/** Comparison operators (`!=` in SQL is written `<>` here). */
export type CompareOp = "=" | "<>" | "<" | "<=" | ">" | ">=";

/** `left op right`. */
export interface CompareExpr {
  /** Discriminant. */
  kind: "compare";
  /** The operator. */
  op: CompareOp;
  /** The left operand. */
  left: Expr;
  /** The right operand. */
  right: Expr;
}

/** `a AND b AND ...` (two or more arguments). */
export interface AndExpr {
  /** Discriminant. */
  kind: "and";
  /** The conjuncts. */
  args: Expr[];
}

/** `a OR b OR ...` (two or more arguments). */
export interface OrExpr {
  /** Discriminant. */
  kind: "or";
  /** The disjuncts. */
  args: Expr[];
}

/** `NOT a`. */
export interface NotExpr {
  /** Discriminant. */
  kind: "not";
  /** The negated expression. */
  arg: Expr;
}

/** `a IS [NOT] NULL`. */
export interface IsNullExpr {
  /** Discriminant. */
  kind: "is_null";
  /** The tested expression. */
  arg: Expr;
  /** True for `IS NOT NULL`. */
  negated: boolean;
}

/** `a [NOT] IN (l1, ...)`: the list holds literals only. */
export interface InExpr {
  /** Discriminant. */
  kind: "in";
  /** The tested expression. */
  arg: Expr;
  /** The literals it may equal. */
  list: LiteralExpr[];
  /** True for `NOT IN`. */
  negated: boolean;
}

/** `a [NOT] BETWEEN low AND high` (inclusive). */
export interface BetweenExpr {
  /** Discriminant. */
  kind: "between";
  /** The tested expression. */
  arg: Expr;
  /** The lower bound (inclusive). */
  low: Expr;
  /** The upper bound (inclusive). */
  high: Expr;
  /** True for `NOT BETWEEN`. */
  negated: boolean;
}

/** Any node of the predicate AST. */
export type Expr =
  | ColumnExpr
  | LiteralExpr
  | CompareExpr
  | AndExpr
  | OrExpr
  | NotExpr
  | IsNullExpr
  | InExpr
  | BetweenExpr;

/** The predicate of a model without a WHERE clause. */
export const TRUE_PREDICATE: Expr = { kind: "literal", type: "BOOLEAN", value: true };
