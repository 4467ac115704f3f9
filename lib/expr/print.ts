/**
 * The canonical SQL printer: the typed predicate AST back to the text a reviewer reads.
 * Keywords are upper-case, `!=` is written `<>`, one space around operators, parentheses only
 * where the grammar needs them (an OR inside an AND or under NOT). Parsing and type-checking
 * the printed text gives back the same AST (round-trip tested against the parser); a DOUBLE
 * literal always carries a `.` or an exponent so that it cannot come back as a BIGINT.
 *
 * For display, literals compared with a column whose name looks secret can be hidden
 * (`hideLiteralsOf`); such text is for people only and is not meant to be parsed again.
 *
 * @example
 * ```ts
 * import { printPredicate } from "./print.ts";
 * console.log(printPredicate({
 *   kind: "and",
 *   args: [
 *     {
 *       kind: "compare",
 *       op: ">=",
 *       left: { kind: "column", name: "amount", type: "BIGINT" },
 *       right: { kind: "literal", type: "BIGINT", value: "200" },
 *     },
 *     { kind: "column", name: "paid", type: "BOOLEAN" },
 *   ],
 * })); // amount >= 200 AND paid
 * ```
 * @module
 */
import type { Expr, LiteralExpr } from "./ast.ts";
import { isReservedWord } from "./keywords.ts";

/** Options of {@link printPredicate}. */
export interface PrintOptions {
  /**
   * Columns whose compared literals are shown as `<redacted>` (display only: the result is
   * then not valid SQL). Typically `isSensitiveKey` of `lib/artifact/redact.ts`.
   */
  hideLiteralsOf?: (column: string) => boolean;
}

/** The placeholder printed instead of a hidden literal. */
export const HIDDEN_LITERAL = "<redacted>";

/**
 * Print a predicate as canonical SQL (the text after WHERE).
 * @example
 * ```ts
 * printPredicate({ kind: "literal", type: "BOOLEAN", value: true }); // TRUE
 * ```
 */
export function printPredicate(expr: Expr, options: PrintOptions = {}): string {
  return print(expr, options, false);
}

/** An identifier as the lexer reads it back: bare when it can be, else double-quoted. */
export function printIdentifier(name: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !isReservedWord(name)) return name;
  return `"${name.replaceAll('"', '""')}"`;
}

/** A literal in SQL form. */
export function printLiteral(lit: LiteralExpr): string {
  switch (lit.type) {
    case "NULL":
      return "NULL";
    case "BOOLEAN":
      return lit.value ? "TRUE" : "FALSE";
    case "STRING":
      return `'${lit.value.replaceAll("'", "''")}'`;
    case "BIGINT":
      return lit.value;
    case "DOUBLE":
      // "100" would lex as a BIGINT: keep the DOUBLE visible as one
      return /[.eE]/.test(lit.value) ? lit.value : `${lit.value}.0`;
  }
}

/** The column names a predicate reads, in first-use order. */
export function predicateColumns(expr: Expr): string[] {
  const out: string[] = [];
  const visit = (e: Expr) => {
    switch (e.kind) {
      case "column":
        if (!out.includes(e.name)) out.push(e.name);
        return;
      case "literal":
        return;
      case "compare":
        visit(e.left);
        visit(e.right);
        return;
      case "and":
      case "or":
        e.args.forEach(visit);
        return;
      case "not":
      case "is_null":
        visit(e.arg);
        return;
      case "in":
        visit(e.arg);
        return;
      case "between":
        visit(e.arg);
        visit(e.low);
        visit(e.high);
        return;
    }
  };
  visit(expr);
  return out;
}

function print(expr: Expr, o: PrintOptions, hide: boolean): string {
  switch (expr.kind) {
    case "column":
      return printIdentifier(expr.name);
    case "literal":
      return hide && expr.type !== "NULL" ? HIDDEN_LITERAL : printLiteral(expr);
    case "compare": {
      const h = hides(o, expr.left, expr.right);
      return `${print(expr.left, o, h)} ${expr.op} ${print(expr.right, o, h)}`;
    }
    case "and":
      return expr.args.map((a) =>
        a.kind === "or" || a.kind === "and" ? paren(a, o) : print(a, o, false)
      )
        .join(" AND ");
    case "or":
      return expr.args.map((a) => a.kind === "or" ? paren(a, o) : print(a, o, false)).join(" OR ");
    case "not": {
      const a = expr.arg;
      return `NOT ${a.kind === "and" || a.kind === "or" ? paren(a, o) : print(a, o, false)}`;
    }
    case "is_null":
      return `${print(expr.arg, o, false)} IS ${expr.negated ? "NOT " : ""}NULL`;
    case "in": {
      const h = hides(o, expr.arg);
      return `${print(expr.arg, o, h)} ${expr.negated ? "NOT " : ""}IN (${
        expr.list.map((l) => print(l, o, h)).join(", ")
      })`;
    }
    case "between": {
      const h = hides(o, expr.arg, expr.low, expr.high);
      return `${print(expr.arg, o, h)} ${expr.negated ? "NOT " : ""}BETWEEN ${
        print(expr.low, o, h)
      } AND ${print(expr.high, o, h)}`;
    }
  }
}

function paren(expr: Expr, o: PrintOptions): string {
  return `(${print(expr, o, false)})`;
}

/** Whether the literals of a comparison are hidden: one of its operands is a hidden column. */
function hides(o: PrintOptions, ...operands: Expr[]): boolean {
  const hidden = o.hideLiteralsOf;
  if (!hidden) return false;
  return operands.some((e) => e.kind === "column" && hidden(e.name));
}
