/**
 * The parser of SQL models: `SELECT col [AS alias], ... FROM source [WHERE predicate] [;]`.
 * It produces an untyped tree with source spans; {@link import("./model.ts")} resolves it
 * against the source schema. Anything outside the subset (JOIN, GROUP BY, aggregates,
 * function calls, `*`, CAST, CASE, subqueries, ORDER BY, LIMIT, arithmetic, LIKE, ...) is
 * rejected with `SQL_UNSUPPORTED` and a message naming the construct.
 *
 * @example
 * ```ts
 * import { parseModelSql } from "./sql_parser.ts";
 * import { SourceFile } from "../expr/diagnostic.ts";
 * const parsed = parseModelSql(
 *   new SourceFile("models/m.sql", "SELECT order_id FROM raw_orders WHERE amount >= 100"),
 * );
 * console.log(parsed.from.name); // raw_orders
 * ```
 * @module
 */
import type { CompareOp, LiteralExpr } from "../expr/ast.ts";
import { diagnostic } from "../expr/diagnostic.ts";
import type { SourceFile, Span } from "../expr/diagnostic.ts";
import { BIGINT_MAX, BIGINT_MIN } from "../expr/schema.ts";
import type { SyntaxExpr } from "../expr/syntax.ts";
import { RESERVED } from "../expr/keywords.ts";
import { tokenize } from "./sql_lexer.ts";
import type { Token } from "./sql_lexer.ts";

/** One SELECT item: a source column and its output name. */
export interface SelectItem {
  column: string;
  /** The `AS` alias, or null when the output name is the column name. */
  alias: string | null;
  span: Span;
}

/** A parsed (untyped) model. */
export interface ParsedModel {
  select: SelectItem[];
  from: { name: string; span: Span };
  /** The WHERE predicate, or null when the model has no WHERE clause. */
  where: SyntaxExpr | null;
}

/** Constructs named in `SQL_UNSUPPORTED` messages, by their leading keyword. */
const UNSUPPORTED_CLAUSE: Record<string, string> = {
  JOIN: "JOIN",
  INNER: "JOIN",
  LEFT: "JOIN",
  RIGHT: "JOIN",
  FULL: "JOIN",
  OUTER: "JOIN",
  CROSS: "JOIN",
  NATURAL: "JOIN",
  ON: "JOIN",
  USING: "JOIN",
  LATERAL: "LATERAL",
  UNNEST: "UNNEST",
  GROUP: "GROUP BY",
  HAVING: "HAVING",
  ORDER: "ORDER BY",
  LIMIT: "LIMIT",
  OFFSET: "OFFSET",
  FETCH: "FETCH",
  UNION: "UNION",
  INTERSECT: "INTERSECT",
  EXCEPT: "EXCEPT",
  MINUS: "MINUS",
  WINDOW: "WINDOW",
  EMIT: "EMIT",
  PARTITION: "PARTITION BY",
  QUALIFY: "QUALIFY",
  WITH: "WITH (common table expressions)",
  INSERT: "INSERT",
  UPDATE: "UPDATE",
  DELETE: "DELETE",
  CREATE: "CREATE",
  DROP: "DROP",
  VALUES: "VALUES",
  INTO: "INTO",
};

const AGGREGATES = new Set(["COUNT", "SUM", "AVG", "MIN", "MAX"]);

const OPERATOR_NAMES: Record<string, string> = {
  "+": "arithmetic ('+')",
  "-": "arithmetic ('-')",
  "*": "arithmetic ('*')",
  "/": "arithmetic ('/')",
  "%": "arithmetic ('%')",
  "||": "string concatenation ('||')",
  "::": "casts ('::')",
  ".": "qualified names ('.')",
  "[": "subscripts ('[')",
  "&": "bitwise operators ('&')",
  "|": "bitwise operators ('|')",
  "^": "bitwise operators ('^')",
  "~": "bitwise operators ('~')",
};

const COMPARE_OPS: Record<string, CompareOp> = {
  "=": "=",
  "<>": "<>",
  "!=": "<>",
  "<": "<",
  "<=": "<=",
  ">": ">",
  ">=": ">=",
};

/**
 * Parse one SQL model. Throws located SluiceErrors: `SQL_SYNTAX`, `SQL_UNSUPPORTED`,
 * `SQL_INTEGER_OUT_OF_RANGE`, `SQL_NUMBER_OUT_OF_RANGE` and the lexer's codes.
 */
export function parseModelSql(source: SourceFile): ParsedModel {
  return new Parser(source).model();
}

/**
 * Parse a bare predicate (the text after WHERE), as the shared test vectors write it.
 * Same errors as {@link parseModelSql}.
 */
export function parsePredicateSql(source: SourceFile): SyntaxExpr {
  const parser = new Parser(source);
  const expr = parser.expression();
  parser.expectEnd("end of the predicate");
  return expr;
}

function describeToken(token: Token): string {
  switch (token.kind) {
    case "eof":
      return "end of input";
    case "string":
      return `string '${token.text}'`;
    case "quoted":
      return `identifier "${token.text}"`;
    default:
      return `'${token.text}'`;
  }
}

class Parser {
  readonly tokens: Token[];
  pos = 0;

  constructor(readonly source: SourceFile) {
    this.tokens = tokenize(source);
  }

  get peek(): Token {
    return this.tokens[this.pos];
  }

  lookahead(n: number): Token {
    return this.tokens[Math.min(this.pos + n, this.tokens.length - 1)];
  }

  next(): Token {
    const token = this.tokens[this.pos];
    if (token.kind !== "eof") this.pos++;
    return token;
  }

  isWord(token: Token, word: string): boolean {
    return token.kind === "word" && token.text.toUpperCase() === word;
  }

  acceptWord(word: string): Token | null {
    return this.isWord(this.peek, word) ? this.next() : null;
  }

  acceptSymbol(symbol: string): Token | null {
    const token = this.peek;
    return token.kind === "symbol" && token.text === symbol ? this.next() : null;
  }

  syntax(message: string, span: Span): never {
    throw diagnostic(this.source, "SQL_SYNTAX", message, span);
  }

  unsupported(construct: string, span: Span, detail = ""): never {
    throw diagnostic(
      this.source,
      "SQL_UNSUPPORTED",
      `${construct} is not supported in sluice models${detail}`,
      span,
      { construct },
    );
  }

  expected(what: string): never {
    const token = this.peek;
    this.clauseCheck(token);
    this.syntax(`expected ${what}, found ${describeToken(token)}`, token.span);
  }

  /** Name the construct when a token starts a clause outside the subset. */
  clauseCheck(token: Token): void {
    if (token.kind === "word") {
      const construct = UNSUPPORTED_CLAUSE[token.text.toUpperCase()];
      if (construct) this.unsupported(construct, token.span);
    }
    if (token.kind === "symbol" && token.text === ",") {
      // FROM a, b
      return;
    }
  }

  expectWord(word: string, what = word): Token {
    const token = this.acceptWord(word);
    if (!token) this.expected(what);
    return token;
  }

  expectSymbol(symbol: string, what = `'${symbol}'`): Token {
    const token = this.acceptSymbol(symbol);
    if (!token) this.expected(what);
    return token;
  }

  expectEnd(what: string): void {
    const semicolon = this.acceptSymbol(";");
    const token = this.peek;
    if (token.kind === "eof") return;
    if (semicolon) this.unsupported("more than one statement", token.span);
    this.clauseCheck(token);
    this.operatorCheck(token);
    this.syntax(`expected ${what}, found ${describeToken(token)}`, token.span);
  }

  /** An identifier: an unquoted non-reserved word or a quoted identifier. */
  identifier(what: string): { name: string; span: Span } {
    const token = this.peek;
    if (token.kind === "quoted") {
      this.next();
      return { name: token.text, span: token.span };
    }
    if (token.kind === "word") {
      if (RESERVED.has(token.text.toUpperCase())) {
        this.clauseCheck(token);
        this.keywordOperandCheck(token);
        this.syntax(
          `expected ${what}, found keyword ${token.text.toUpperCase()} (quote it as "${token.text}" to use it as a name)`,
          token.span,
        );
      }
      this.next();
      return { name: token.text, span: token.span };
    }
    if (token.kind === "symbol" && token.text === "*") {
      this.unsupported("SELECT *", token.span, "; list the columns");
    }
    this.expected(what);
  }

  model(): ParsedModel {
    this.expectWord("SELECT", "SELECT");
    const distinct = this.acceptWord("DISTINCT") ?? this.acceptWord("ALL");
    if (distinct) this.unsupported(`SELECT ${distinct.text.toUpperCase()}`, distinct.span);
    const select: SelectItem[] = [this.selectItem()];
    while (this.acceptSymbol(",")) select.push(this.selectItem());
    if (!this.isWord(this.peek, "FROM")) {
      const token = this.peek;
      this.operatorCheck(token);
      if (token.kind === "word" || token.kind === "quoted") {
        this.clauseCheck(token);
        this.syntax(
          `expected ',' or FROM, found ${
            describeToken(token)
          } (write 'AS ${token.text}' to name an output column)`,
          token.span,
        );
      }
      this.expected("',' or FROM");
    }
    this.next();
    if (this.peek.kind === "symbol" && this.peek.text === "(") {
      const inner = this.lookahead(1);
      if (this.isWord(inner, "SELECT")) this.unsupported("subqueries", inner.span);
      this.unsupported("derived tables", this.peek.span);
    }
    const from = this.identifier("a source name");
    if (this.peek.kind === "symbol" && this.peek.text === "(") {
      this.unsupported("table functions", this.peek.span);
    }
    if (this.peek.kind === "symbol" && this.peek.text === ".") {
      this.unsupported("qualified source names ('.')", this.peek.span);
    }
    if (this.peek.kind === "symbol" && this.peek.text === ",") {
      this.unsupported("JOIN", this.peek.span, " (FROM lists more than one source)");
    }
    if (this.isWord(this.peek, "AS") || this.peek.kind === "quoted") {
      this.unsupported("table aliases", this.peek.span);
    }
    if (this.peek.kind === "word" && !RESERVED.has(this.peek.text.toUpperCase())) {
      this.unsupported("table aliases", this.peek.span);
    }
    let where: SyntaxExpr | null = null;
    if (this.acceptWord("WHERE")) where = this.expression();
    this.expectEnd(where ? "AND, OR or end of model" : "WHERE or end of model");
    return { select, from, where };
  }

  selectItem(): SelectItem {
    const token = this.peek;
    if (token.kind === "symbol" && token.text === "*") {
      this.unsupported("SELECT *", token.span, "; list the columns");
    }
    if (token.kind !== "word" && token.kind !== "quoted") {
      if (
        token.kind === "string" || token.kind === "integer" || token.kind === "decimal" ||
        (token.kind === "symbol" && (token.text === "-" || token.text === "("))
      ) {
        this.unsupported(
          "computed SELECT items",
          token.span,
          " (a SELECT item is a source column, optionally AS alias)",
        );
      }
      this.expected("a column name");
    }
    if (token.kind === "word") {
      const upper = token.text.toUpperCase();
      if (upper === "TRUE" || upper === "FALSE" || upper === "NULL") {
        this.unsupported(
          "computed SELECT items",
          token.span,
          " (a SELECT item is a source column, optionally AS alias)",
        );
      }
      this.keywordOperandCheck(token);
    }
    const column = this.identifier("a column name");
    this.callCheck(column.name, column.span);
    this.operatorCheck(this.peek);
    let alias: string | null = null;
    let end = column.span.end;
    if (this.acceptWord("AS")) {
      const name = this.identifier("an output column name after AS");
      alias = name.name;
      end = name.span.end;
    }
    return { column: column.name, alias, span: { start: column.span.start, end } };
  }

  /** `name(` is a function call: reject it by name. */
  callCheck(name: string, span: Span): void {
    const token = this.peek;
    if (token.kind === "symbol" && token.text === "(") {
      const upper = name.toUpperCase();
      if (AGGREGATES.has(upper)) {
        this.unsupported(`aggregate function ${upper}()`, {
          start: span.start,
          end: token.span.end,
        });
      }
      this.unsupported(`function calls (${name}())`, { start: span.start, end: token.span.end });
    }
  }

  /** Arithmetic and other operators after an operand. */
  operatorCheck(token: Token): void {
    if (token.kind === "symbol" && OPERATOR_NAMES[token.text]) {
      this.unsupported(OPERATOR_NAMES[token.text], token.span);
    }
  }

  /** Keywords that start an expression form outside the subset. */
  keywordOperandCheck(token: Token): void {
    if (token.kind !== "word") return;
    const upper = token.text.toUpperCase();
    switch (upper) {
      case "CAST":
        this.unsupported("CAST", token.span);
        break;
      case "CASE":
        this.unsupported("CASE", token.span);
        break;
      case "EXISTS":
        this.unsupported("EXISTS (subqueries)", token.span);
        break;
      case "SELECT":
        this.unsupported("subqueries", token.span);
        break;
      case "INTERVAL":
        this.unsupported("INTERVAL", token.span);
        break;
      case "DISTINCT":
        this.unsupported("DISTINCT", token.span);
        break;
    }
  }

  expression(): SyntaxExpr {
    return this.orExpr();
  }

  orExpr(): SyntaxExpr {
    const first = this.andExpr();
    const args = [first];
    while (this.acceptWord("OR")) args.push(this.andExpr());
    if (args.length === 1) return first;
    return { kind: "or", args, span: { start: first.span.start, end: args.at(-1)!.span.end } };
  }

  andExpr(): SyntaxExpr {
    const first = this.notExpr();
    const args = [first];
    while (this.acceptWord("AND")) args.push(this.notExpr());
    if (args.length === 1) return first;
    return { kind: "and", args, span: { start: first.span.start, end: args.at(-1)!.span.end } };
  }

  notExpr(): SyntaxExpr {
    const not = this.acceptWord("NOT");
    if (!not) return this.predicate();
    const arg = this.notExpr();
    return { kind: "not", arg, span: { start: not.span.start, end: arg.span.end } };
  }

  predicate(): SyntaxExpr {
    const left = this.operand();
    const token = this.peek;
    if (token.kind === "symbol" && COMPARE_OPS[token.text]) {
      this.next();
      const right = this.operand();
      const after = this.peek;
      if (after.kind === "symbol" && COMPARE_OPS[after.text]) {
        this.syntax(
          `comparisons cannot be chained ('${token.text}' then '${after.text}'); combine them with AND`,
          after.span,
        );
      }
      return {
        kind: "compare",
        op: COMPARE_OPS[token.text],
        left,
        right,
        span: { start: left.span.start, end: right.span.end },
      };
    }
    if (this.acceptWord("IS")) {
      const negated = this.acceptWord("NOT") !== null;
      if (this.isWord(this.peek, "DISTINCT")) {
        this.unsupported("IS [NOT] DISTINCT FROM", this.peek.span);
      }
      if (this.isWord(this.peek, "TRUE") || this.isWord(this.peek, "FALSE")) {
        this.unsupported(
          `IS [NOT] ${this.peek.text.toUpperCase()}`,
          this.peek.span,
          " (compare with = instead)",
        );
      }
      const end = this.expectWord("NULL", negated ? "NULL after IS NOT" : "NULL or NOT after IS");
      return {
        kind: "is_null",
        arg: left,
        negated,
        span: { start: left.span.start, end: end.span.end },
      };
    }
    let negated = false;
    if (this.isWord(this.peek, "NOT")) {
      const following = this.lookahead(1);
      if (
        this.isWord(following, "IN") || this.isWord(following, "BETWEEN") ||
        this.isWord(following, "LIKE") || this.isWord(following, "ILIKE") ||
        this.isWord(following, "SIMILAR") || this.isWord(following, "REGEXP") ||
        this.isWord(following, "RLIKE")
      ) {
        this.next();
        negated = true;
      }
    }
    for (const word of ["LIKE", "ILIKE", "SIMILAR", "REGEXP", "RLIKE"]) {
      if (this.isWord(this.peek, word)) this.unsupported(word, this.peek.span);
    }
    if (this.acceptWord("IN")) {
      const open = this.expectSymbol("(", "'(' after IN");
      if (this.isWord(this.peek, "SELECT")) this.unsupported("subqueries", this.peek.span);
      if (this.peek.kind === "symbol" && this.peek.text === ")") {
        this.syntax("an IN list cannot be empty", {
          start: open.span.start,
          end: this.peek.span.end,
        });
      }
      const list = [this.operand()];
      while (this.acceptSymbol(",")) list.push(this.operand());
      const close = this.expectSymbol(")", "',' or ')' in the IN list");
      return {
        kind: "in",
        arg: left,
        list,
        negated,
        span: { start: left.span.start, end: close.span.end },
      };
    }
    if (this.acceptWord("BETWEEN")) {
      for (const word of ["SYMMETRIC", "ASYMMETRIC"]) {
        if (this.isWord(this.peek, word)) this.unsupported(`BETWEEN ${word}`, this.peek.span);
      }
      const low = this.operand();
      this.expectWord("AND", "AND in BETWEEN ... AND ...");
      const high = this.operand();
      return {
        kind: "between",
        arg: left,
        low,
        high,
        negated,
        span: { start: left.span.start, end: high.span.end },
      };
    }
    if (negated) this.expected("IN, BETWEEN");
    return left;
  }

  /** A column, a literal, or a parenthesised expression; rejects operators after it. */
  operand(): SyntaxExpr {
    const expr = this.primary();
    this.operatorCheck(this.peek);
    return expr;
  }

  primary(): SyntaxExpr {
    const token = this.peek;
    switch (token.kind) {
      case "string":
        this.next();
        return this.literal({ kind: "literal", type: "STRING", value: token.text }, token.span);
      case "integer":
      case "decimal":
        this.next();
        return this.number(token, false, token.span);
      case "quoted": {
        this.next();
        this.callCheck(token.text, token.span);
        return { kind: "column", name: token.text, span: token.span };
      }
      case "symbol": {
        if (token.text === "(") {
          this.next();
          if (this.isWord(this.peek, "SELECT")) this.unsupported("subqueries", this.peek.span);
          const inner = this.expression();
          const close = this.expectSymbol(")", "')'");
          return { ...inner, span: { start: token.span.start, end: close.span.end } };
        }
        if (token.text === "-") {
          const number = this.lookahead(1);
          if (
            (number.kind === "integer" || number.kind === "decimal") &&
            number.span.start === token.span.end
          ) {
            this.next();
            this.next();
            return this.number(number, true, { start: token.span.start, end: number.span.end });
          }
          this.unsupported(
            "arithmetic (unary '-')",
            token.span,
            " (only numeric literals may be negative, written '-5')",
          );
        }
        this.operatorCheck(token);
        if (token.text === "?") this.unsupported("parameters ('?')", token.span);
        this.expected("a column, a literal or '('");
        break;
      }
      case "word": {
        const upper = token.text.toUpperCase();
        if (upper === "TRUE" || upper === "FALSE") {
          this.next();
          return this.literal(
            { kind: "literal", type: "BOOLEAN", value: upper === "TRUE" },
            token.span,
          );
        }
        if (upper === "NULL") {
          this.next();
          return this.literal({ kind: "literal", type: "NULL", value: null }, token.span);
        }
        this.keywordOperandCheck(token);
        if (RESERVED.has(upper)) {
          this.clauseCheck(token);
          this.expected("a column, a literal or '('");
        }
        if (this.lookahead(1).kind === "string" && ["DATE", "TIME", "TIMESTAMP"].includes(upper)) {
          this.unsupported(`${upper} literals`, token.span);
        }
        this.next();
        this.callCheck(token.text, token.span);
        return { kind: "column", name: token.text, span: token.span };
      }
      default:
        this.expected("a column, a literal or '('");
    }
  }

  literal(literal: LiteralExpr, span: Span): SyntaxExpr {
    return { kind: "literal", literal, span };
  }

  number(token: Token, negative: boolean, span: Span): SyntaxExpr {
    const text = negative ? `-${token.text}` : token.text;
    if (token.kind === "integer") {
      const value = BigInt(text);
      if (value < BIGINT_MIN || value > BIGINT_MAX) {
        throw diagnostic(
          this.source,
          "SQL_INTEGER_OUT_OF_RANGE",
          `integer ${text} is outside the BIGINT range [-9223372036854775808, 9223372036854775807]`,
          span,
        );
      }
      return this.literal({ kind: "literal", type: "BIGINT", value: value.toString() }, span);
    }
    const value = Number(text);
    if (!Number.isFinite(value)) {
      throw diagnostic(
        this.source,
        "SQL_NUMBER_OUT_OF_RANGE",
        `number ${text} is outside the DOUBLE range`,
        span,
      );
    }
    // shortest round-trip form, as JavaScript prints it (docs/artifact-format.md)
    return this.literal({ kind: "literal", type: "DOUBLE", value: String(value) }, span);
  }
}
