/**
 * The type checker: resolves an untyped {@link SyntaxExpr} against an input schema into the
 * typed predicate AST. There is no implicit coercion: BIGINT compared with DOUBLE is an
 * error, not a conversion, and the predicate must be BOOLEAN.
 *
 * @example
 * ```ts
 * import { checkPredicate } from "./typecheck.ts";
 * import { SourceFile } from "./diagnostic.ts";
 * const src = new SourceFile("m.sql", "paid");
 * const expr = checkPredicate(
 *   { kind: "column", name: "paid", span: { start: 0, end: 4 } },
 *   [{ name: "paid", type: "BOOLEAN", nullable: false }],
 *   src,
 * );
 * console.log(expr); // { kind: "column", name: "paid", type: "BOOLEAN" }
 * ```
 * @module
 */
import type { Expr, LiteralExpr } from "./ast.ts";
import { diagnostic } from "./diagnostic.ts";
import type { SourceFile } from "./diagnostic.ts";
import type { ColumnType, SchemaField } from "./schema.ts";
import type { SyntaxExpr } from "./syntax.ts";

type ExprType = ColumnType | "NULL";

interface Checked {
  expr: Expr;
  type: ExprType;
  /** A column or a literal (an operand), as opposed to a condition. */
  value: boolean;
}

/**
 * Type-check a predicate against a schema. Throws a located SluiceError with a `TYPE_*`
 * code: `TYPE_UNKNOWN_COLUMN`, `TYPE_MISMATCH`, `TYPE_NOT_BOOLEAN`, `TYPE_INVALID_OPERAND`.
 */
export function checkPredicate(
  syntax: SyntaxExpr,
  schema: readonly SchemaField[],
  source: SourceFile,
): Expr {
  const checker = new Checker(schema, source);
  const root = checker.check(syntax);
  checker.requireBoolean(root, syntax, "the WHERE predicate");
  return root.expr;
}

/**
 * Resolve a column name against a schema, or throw `TYPE_UNKNOWN_COLUMN` at `span`.
 * Column names are case-sensitive; the message suggests a near match.
 */
export function resolveColumn(
  name: string,
  schema: readonly SchemaField[],
  source: SourceFile,
  span: { start: number; end: number },
): SchemaField {
  const field = schema.find((f) => f.name === name);
  if (field) return field;
  const folded = schema.find((f) => f.name.toLowerCase() === name.toLowerCase());
  const hint = folded
    ? `; column names are case-sensitive, did you mean '${folded.name}'?`
    : `; the source has: ${schema.map((f) => f.name).join(", ")}`;
  throw diagnostic(source, "TYPE_UNKNOWN_COLUMN", `unknown column '${name}'${hint}`, span, {
    column: name,
  });
}

function describe(node: SyntaxExpr): string {
  switch (node.kind) {
    case "column":
      return `column '${node.name}'`;
    case "literal":
      return node.literal.type === "NULL" ? "NULL" : `${node.literal.type} literal`;
    case "compare":
      return `comparison '${node.op}'`;
    case "and":
    case "or":
      return `${node.kind.toUpperCase()} expression`;
    case "not":
      return "NOT expression";
    case "is_null":
      return "IS NULL test";
    case "in":
      return "IN test";
    case "between":
      return "BETWEEN test";
  }
}

class Checker {
  constructor(readonly schema: readonly SchemaField[], readonly source: SourceFile) {}

  check(node: SyntaxExpr): Checked {
    switch (node.kind) {
      case "column": {
        const field = resolveColumn(node.name, this.schema, this.source, node.span);
        return {
          expr: { kind: "column", name: field.name, type: field.type },
          type: field.type,
          value: true,
        };
      }
      case "literal":
        return { expr: node.literal, type: node.literal.type, value: true };
      case "compare": {
        const left = this.operand(node.left, `'${node.op}'`);
        const right = this.operand(node.right, `'${node.op}'`);
        this.compatible(left, node.left, right, node.right, `compare`);
        return {
          expr: { kind: "compare", op: node.op, left: left.expr, right: right.expr },
          type: "BOOLEAN",
          value: false,
        };
      }
      case "and":
      case "or": {
        const args: Expr[] = [];
        for (const arg of node.args) {
          const checked = this.check(arg);
          this.requireBoolean(checked, arg, `an argument of ${node.kind.toUpperCase()}`);
          // a AND (b AND c) is the same predicate as a AND b AND c; the AST keeps it flat
          if (checked.expr.kind === node.kind) args.push(...checked.expr.args);
          else args.push(checked.expr);
        }
        return { expr: { kind: node.kind, args }, type: "BOOLEAN", value: false };
      }
      case "not": {
        const arg = this.check(node.arg);
        this.requireBoolean(arg, node.arg, "the argument of NOT");
        return { expr: { kind: "not", arg: arg.expr }, type: "BOOLEAN", value: false };
      }
      case "is_null": {
        const arg = this.operand(node.arg, "IS NULL");
        return {
          expr: { kind: "is_null", arg: arg.expr, negated: node.negated },
          type: "BOOLEAN",
          value: false,
        };
      }
      case "in": {
        const arg = this.operand(node.arg, "IN");
        const list: LiteralExpr[] = [];
        let seen: { checked: Checked; node: SyntaxExpr } = { checked: arg, node: node.arg };
        for (const item of node.list) {
          if (item.kind !== "literal") {
            throw diagnostic(
              this.source,
              "TYPE_INVALID_OPERAND",
              `an IN list holds literals only, found ${describe(item)}`,
              item.span,
            );
          }
          const checked = this.operand(item, "IN");
          this.compatible(seen.checked, seen.node, checked, item, "compare", item.span);
          if (checked.type !== "NULL") seen = { checked, node: item };
          list.push(item.literal);
        }
        return {
          expr: { kind: "in", arg: arg.expr, list, negated: node.negated },
          type: "BOOLEAN",
          value: false,
        };
      }
      case "between": {
        const arg = this.operand(node.arg, "BETWEEN");
        const low = this.operand(node.low, "BETWEEN");
        const high = this.operand(node.high, "BETWEEN");
        this.compatible(arg, node.arg, low, node.low, "compare");
        this.compatible(arg, node.arg, high, node.high, "compare");
        this.compatible(low, node.low, high, node.high, "compare");
        return {
          expr: {
            kind: "between",
            arg: arg.expr,
            low: low.expr,
            high: high.expr,
            negated: node.negated,
          },
          type: "BOOLEAN",
          value: false,
        };
      }
    }
  }

  /** Operands of comparisons, IS NULL, IN and BETWEEN are columns or literals. */
  operand(node: SyntaxExpr, context: string): Checked {
    const checked = this.check(node);
    if (!checked.value) {
      throw diagnostic(
        this.source,
        "TYPE_INVALID_OPERAND",
        `an operand of ${context} must be a column or a literal, found ${describe(node)}`,
        node.span,
      );
    }
    return checked;
  }

  compatible(
    a: Checked,
    aNode: SyntaxExpr,
    b: Checked,
    bNode: SyntaxExpr,
    verb: string,
    at?: { start: number; end: number },
  ): void {
    if (a.type === "NULL" || b.type === "NULL" || a.type === b.type) return;
    const numeric = (a.type === "BIGINT" && b.type === "DOUBLE") ||
      (a.type === "DOUBLE" && b.type === "BIGINT");
    const hint = numeric
      ? "; there is no implicit conversion between BIGINT and DOUBLE (write the literal in the column's type)"
      : "; there is no implicit conversion";
    throw diagnostic(
      this.source,
      "TYPE_MISMATCH",
      `cannot ${verb} ${a.type} (${describe(aNode)}) with ${b.type} (${describe(bNode)})${hint}`,
      at ?? { start: Math.min(aNode.span.start, bNode.span.start), end: bNode.span.end },
      { left: a.type, right: b.type },
    );
  }

  requireBoolean(checked: Checked, node: SyntaxExpr, what: string): void {
    if (checked.type === "BOOLEAN" || checked.type === "NULL") return;
    throw diagnostic(
      this.source,
      "TYPE_NOT_BOOLEAN",
      `${what} must be BOOLEAN, found ${checked.type} (${describe(node)})`,
      node.span,
      { found: checked.type },
    );
  }
}
