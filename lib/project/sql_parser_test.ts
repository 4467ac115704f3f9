import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { SluiceError } from "../errors.ts";
import type { Expr } from "../expr/ast.ts";
import { SourceFile } from "../expr/diagnostic.ts";
import type { SchemaField } from "../expr/schema.ts";
import { checkPredicateSql } from "./model.ts";
import { parseModelSql } from "./sql_parser.ts";

const vectors = JSON.parse(
  await Deno.readTextFile(new URL("../../tests/vectors/predicates.json", import.meta.url)),
) as { schema: SchemaField[]; predicates: Array<{ name: string; sql: string; ast: Expr }> };

for (const p of vectors.predicates) {
  Deno.test(`shared vector: parse and type-check ${p.name}`, () => {
    deepStrictEqual(checkPredicateSql(p.sql, vectors.schema), p.ast);
  });
}

function parse(sql: string) {
  return parseModelSql(new SourceFile("m.sql", sql));
}

function rejects(sql: string, code: string, at: string, fragment: string): void {
  throws(() => parse(sql), (e: unknown) => {
    if (!(e instanceof SluiceError)) throw e;
    strictEqual(e.code, code, e.message);
    strictEqual(`${e.location?.file}:${e.location?.line}:${e.location?.column}`, at, e.message);
    strictEqual(e.message.startsWith(`${at}: `), true, e.message);
    strictEqual(e.message.includes(fragment), true, `${e.message} lacks ${fragment}`);
    strictEqual(e.message.includes("^"), true, "caret excerpt");
    return true;
  });
}

Deno.test("a model parses into select items, source and predicate", () => {
  const m = parse("select order_id, amount AS total\nFROM raw_orders\nwhere amount >= 100;");
  deepStrictEqual(m.select.map((s) => [s.column, s.alias]), [["order_id", null], [
    "amount",
    "total",
  ]]);
  strictEqual(m.from.name, "raw_orders");
  strictEqual(m.where?.kind, "compare");
});

Deno.test("WHERE is optional; comments and quoted identifiers are allowed", () => {
  const m = parse('-- all orders\nSELECT "order", b /* the b */ FROM t');
  deepStrictEqual(m.select.map((s) => s.column), ["order", "b"]);
  strictEqual(m.where, null);
});

Deno.test("SQL_SYNTAX points at the unexpected token", () => {
  rejects("SELECT a FROM t WHERE a >", "SQL_SYNTAX", "m.sql:1:26", "found end of input");
  rejects("SELECT a b FROM t", "SQL_SYNTAX", "m.sql:1:10", "write 'AS b'");
  rejects("SELECT a FROM t WHERE a = 1 = 2", "SQL_SYNTAX", "m.sql:1:29", "cannot be chained");
  rejects("SELECT a FROM t WHERE a IN ()", "SQL_SYNTAX", "m.sql:1:28", "cannot be empty");
  rejects("SELECT from FROM t", "SQL_SYNTAX", "m.sql:1:8", 'quote it as "from"');
  rejects("SELECT a\nFROM t\nWHERE (a > 1", "SQL_SYNTAX", "m.sql:3:13", "expected ')'");
});

Deno.test("SQL_UNSUPPORTED names the construct", () => {
  const cases: Array<[string, string, string]> = [
    ["SELECT a FROM t JOIN u ON t.a = u.a", "m.sql:1:17", "JOIN"],
    ["SELECT a FROM t, u", "m.sql:1:16", "JOIN"],
    ["SELECT a FROM t GROUP BY a", "m.sql:1:17", "GROUP BY"],
    ["SELECT COUNT(a) FROM t", "m.sql:1:8", "aggregate function COUNT()"],
    ["SELECT upper(a) FROM t", "m.sql:1:8", "function calls (upper())"],
    ["SELECT * FROM t", "m.sql:1:8", "SELECT *"],
    ["SELECT a FROM t WHERE CAST(a AS BIGINT) > 1", "m.sql:1:23", "CAST"],
    ["SELECT a FROM t WHERE a IN (SELECT b FROM u)", "m.sql:1:29", "subqueries"],
    ["SELECT a FROM (SELECT a FROM t)", "m.sql:1:16", "subqueries"],
    ["SELECT a FROM t ORDER BY a", "m.sql:1:17", "ORDER BY"],
    ["SELECT a FROM t WHERE a > 1 LIMIT 5", "m.sql:1:29", "LIMIT"],
    ["SELECT a FROM t WHERE a + 1 > 2", "m.sql:1:25", "arithmetic ('+')"],
    ["SELECT a * 2 FROM t", "m.sql:1:10", "arithmetic ('*')"],
    ["SELECT a FROM t WHERE a LIKE 'x%'", "m.sql:1:25", "LIKE"],
    ["SELECT a FROM t WHERE a NOT LIKE 'x%'", "m.sql:1:29", "LIKE"],
    ["SELECT DISTINCT a FROM t", "m.sql:1:8", "SELECT DISTINCT"],
    ["SELECT a FROM t WHERE CASE WHEN a THEN 1 END", "m.sql:1:23", "CASE"],
    ["SELECT a FROM t UNION SELECT a FROM u", "m.sql:1:17", "UNION"],
    ["SELECT 1 FROM t", "m.sql:1:8", "computed SELECT items"],
    ["SELECT a FROM t WHERE a || 'x' = 'y'", "m.sql:1:25", "string concatenation"],
    ["SELECT t.a FROM t", "m.sql:1:9", "qualified names"],
    ["SELECT a FROM t x", "m.sql:1:17", "table aliases"],
    ["SELECT a FROM t WHERE -a > 1", "m.sql:1:23", "unary '-'"],
    ["SELECT a FROM t WHERE a IS TRUE", "m.sql:1:28", "IS [NOT] TRUE"],
    ["SELECT a FROM t; SELECT b FROM t", "m.sql:1:18", "more than one statement"],
  ];
  for (const [sql, at, construct] of cases) {
    rejects(sql, "SQL_UNSUPPORTED", at, `${construct}`);
  }
});

Deno.test("lexer errors: characters, strings, comments, numbers", () => {
  rejects("SELECT a FROM t WHERE a = 'x", "SQL_UNTERMINATED_STRING", "m.sql:1:27", "never closed");
  rejects("SELECT a FROM t /* x", "SQL_UNTERMINATED_COMMENT", "m.sql:1:17", "never closed");
  rejects("SELECT a FROM t WHERE a = $1", "SQL_UNEXPECTED_CHARACTER", "m.sql:1:27", "'$'");
  rejects("SELECT a FROM t WHERE a = 12abc", "SQL_INVALID_NUMBER", "m.sql:1:27", "12abc");
});

Deno.test("SQL_INTEGER_OUT_OF_RANGE and SQL_NUMBER_OUT_OF_RANGE", () => {
  rejects(
    "SELECT a FROM t WHERE a = 9223372036854775808",
    "SQL_INTEGER_OUT_OF_RANGE",
    "m.sql:1:27",
    "BIGINT range",
  );
  rejects(
    "SELECT a FROM t WHERE a > -9223372036854775809",
    "SQL_INTEGER_OUT_OF_RANGE",
    "m.sql:1:27",
    "-9223372036854775809",
  );
  rejects("SELECT a FROM t WHERE a > 1e999", "SQL_NUMBER_OUT_OF_RANGE", "m.sql:1:27", "DOUBLE");
});

Deno.test("strings use '' for a quote; != is <>", () => {
  const schema: SchemaField[] = [{ name: "s", type: "STRING", nullable: false }];
  deepStrictEqual(checkPredicateSql("s != 'it''s'", schema), {
    kind: "compare",
    op: "<>",
    left: { kind: "column", name: "s", type: "STRING" },
    right: { kind: "literal", type: "STRING", value: "it's" },
  });
});
