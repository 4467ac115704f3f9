/**
 * The untyped expression tree the SQL parser produces: the shape of the predicate AST
 * before columns are resolved against a schema, with the source span of every node so the
 * type checker can point at the offending text.
 *
 * @example
 * ```ts
 * import type { SyntaxExpr } from "./syntax.ts";
 * const amount: SyntaxExpr = { kind: "column", name: "amount", span: { start: 0, end: 6 } };
 * console.log(amount.kind);
 * ```
 * @module
 */
import type { CompareOp, LiteralExpr } from "./ast.ts";
import type { Span } from "./diagnostic.ts";

/** A syntax node: like {@link import("./ast.ts").Expr} but untyped and with spans. */
export type SyntaxExpr =
  | { kind: "column"; name: string; span: Span }
  | { kind: "literal"; literal: LiteralExpr; span: Span }
  | { kind: "compare"; op: CompareOp; left: SyntaxExpr; right: SyntaxExpr; span: Span }
  | { kind: "and" | "or"; args: SyntaxExpr[]; span: Span }
  | { kind: "not"; arg: SyntaxExpr; span: Span }
  | { kind: "is_null"; arg: SyntaxExpr; negated: boolean; span: Span }
  | { kind: "in"; arg: SyntaxExpr; list: SyntaxExpr[]; negated: boolean; span: Span }
  | {
    kind: "between";
    arg: SyntaxExpr;
    low: SyntaxExpr;
    high: SyntaxExpr;
    negated: boolean;
    span: Span;
  };
