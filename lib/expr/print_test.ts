// The canonical printer against the parser: every shared vector, the fuzz seeds' predicates and
// thousands of generated typed predicates print to text that parses and type-checks back to
// the very same AST. Plus the exact canonical text of a few known predicates.
import assert from "node:assert/strict";
import { checkPredicateSql } from "../project/model.ts";
import type { Expr, LiteralExpr } from "./ast.ts";
import type { ColumnType, SchemaField } from "./schema.ts";
import { HIDDEN_LITERAL, predicateColumns, printIdentifier, printPredicate } from "./print.ts";
import { seeded } from "../../testing/seeded.ts";

const VECTORS = JSON.parse(
  await Deno.readTextFile(new URL("../../tests/vectors/predicates.json", import.meta.url)),
) as { schema: SchemaField[]; predicates: Array<{ name: string; sql: string; ast: Expr }> };

Deno.test("every shared vector prints to SQL that parses back to its AST", () => {
  assert.ok(VECTORS.predicates.length > 10);
  for (const v of VECTORS.predicates) {
    const text = printPredicate(v.ast);
    assert.deepEqual(checkPredicateSql(text, VECTORS.schema), v.ast, `${v.name}: ${text}`);
    // and the printed form is a fixed point
    assert.equal(printPredicate(checkPredicateSql(text, VECTORS.schema)), text);
  }
});

Deno.test("canonical text: upper-case keywords, <> for !=, parentheses only where needed", () => {
  const schema: SchemaField[] = [
    { name: "amount", type: "BIGINT", nullable: false },
    { name: "paid", type: "BOOLEAN", nullable: false },
    { name: "region", type: "STRING", nullable: true },
    { name: "score", type: "DOUBLE", nullable: true },
    { name: "order", type: "STRING", nullable: true },
  ];
  const cases: Array<[string, string]> = [
    ["amount>=100 and paid=true", "amount >= 100 AND paid = TRUE"],
    ["(amount >= 100) AND (paid = TRUE)", "amount >= 100 AND paid = TRUE"],
    ["region != 'x' or amount < -5", "region <> 'x' OR amount < -5"],
    ["paid and (amount = 1 or amount = 2)", "paid AND (amount = 1 OR amount = 2)"],
    ["not (paid or amount > 3)", "NOT (paid OR amount > 3)"],
    ["not amount > 3", "NOT amount > 3"],
    [
      "region is not null and score between 0.5 and 1e3",
      "region IS NOT NULL AND score BETWEEN 0.5 AND 1000.0",
    ],
    ["region not in ('it''s', null)", "region NOT IN ('it''s', NULL)"],
    ["\"order\" = 'x'", "\"order\" = 'x'"],
    ["score = 100.0", "score = 100.0"],
    ["amount = -9223372036854775808", "amount = -9223372036854775808"],
  ];
  for (const [sql, canonical] of cases) {
    assert.equal(printPredicate(checkPredicateSql(sql, schema)), canonical, sql);
  }
});

Deno.test("identifiers are quoted only when the lexer needs it", () => {
  assert.equal(printIdentifier("amount"), "amount");
  assert.equal(printIdentifier("Amount_2"), "Amount_2");
  assert.equal(printIdentifier("select"), '"select"');
  assert.equal(printIdentifier("NULL"), '"NULL"');
});

Deno.test("predicateColumns lists each column once, in first-use order", () => {
  const schema: SchemaField[] = [
    { name: "amount", type: "BIGINT", nullable: false },
    { name: "paid", type: "BOOLEAN", nullable: false },
    { name: "qty", type: "BIGINT", nullable: true },
  ];
  const e = checkPredicateSql("paid AND amount BETWEEN qty AND 5 OR amount = 1", schema);
  assert.deepEqual(predicateColumns(e), ["paid", "amount", "qty"]);
  assert.deepEqual(predicateColumns({ kind: "literal", type: "BOOLEAN", value: true }), []);
});

Deno.test("display redaction hides literals compared with a secret-named column, nothing else", () => {
  const schema: SchemaField[] = [
    { name: "api_token", type: "STRING", nullable: false },
    { name: "amount", type: "BIGINT", nullable: false },
  ];
  const e = checkPredicateSql(
    "api_token = 's3cr3t' AND amount > 5 AND api_token IN ('a', 'b') AND 'z' <> api_token",
    schema,
  );
  const shown = printPredicate(e, { hideLiteralsOf: (c) => c.includes("token") });
  assert.equal(
    shown,
    `api_token = ${HIDDEN_LITERAL} AND amount > 5 AND api_token IN (${HIDDEN_LITERAL}, ${HIDDEN_LITERAL}) AND ${HIDDEN_LITERAL} <> api_token`,
  );
  assert.doesNotMatch(shown, /s3cr3t/);
});

// ---- generated predicates

const GEN_SCHEMA: SchemaField[] = [
  { name: "order_id", type: "STRING", nullable: false },
  { name: "amount", type: "BIGINT", nullable: false },
  { name: "paid", type: "BOOLEAN", nullable: false },
  { name: "score", type: "DOUBLE", nullable: true },
  { name: "order", type: "STRING", nullable: true },
  { name: "Qty", type: "BIGINT", nullable: true },
];

function generator(seed: number) {
  const r = seeded(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const STRINGS = ["", "a", "it's", "O''Brien", "ünï", "😀 x", "line\nbreak", '"q"', "--", "/*"];
  const BIGINTS = [
    "0",
    "1",
    "-1",
    "100",
    "9007199254740993",
    "-9223372036854775808",
    "9223372036854775807",
  ];
  const DOUBLES = [0, 1.5, -2.25, 100, 1e21, 1e-7, 5e-324, 0.1, -1e300, 123456.789];
  const literal = (type: ColumnType): LiteralExpr => {
    if (r() < 0.1) return { kind: "literal", type: "NULL", value: null };
    switch (type) {
      case "STRING":
        return { kind: "literal", type, value: pick(STRINGS) };
      case "BIGINT":
        return { kind: "literal", type, value: pick(BIGINTS) };
      case "DOUBLE":
        return { kind: "literal", type, value: String(pick(DOUBLES)) };
      case "BOOLEAN":
        return { kind: "literal", type, value: r() < 0.5 };
    }
  };
  const operand = (type: ColumnType): Expr => {
    const cols = GEN_SCHEMA.filter((f) => f.type === type);
    if (r() < 0.5 && cols.length > 0) {
      const f = pick(cols);
      return { kind: "column", name: f.name, type: f.type };
    }
    return literal(type);
  };
  const condition = (depth: number, parent: string | null): Expr => {
    const kinds = depth <= 0
      ? ["compare", "is_null", "in", "between", "bool"]
      : ["compare", "is_null", "in", "between", "bool", "and", "or", "not", "not"];
    const kind = pick(kinds.filter((k) => k !== parent));
    const type = pick(["STRING", "BIGINT", "DOUBLE", "BOOLEAN"] as const);
    switch (kind) {
      case "compare":
        return {
          kind: "compare",
          op: pick(["=", "<>", "<", "<=", ">", ">="] as const),
          left: operand(type),
          right: operand(type),
        };
      case "is_null":
        return { kind: "is_null", arg: operand(type), negated: r() < 0.5 };
      case "in": {
        const n = 1 + Math.floor(r() * 3);
        return {
          kind: "in",
          arg: operand(type),
          list: Array.from({ length: n }, () => literal(type)),
          negated: r() < 0.5,
        };
      }
      case "between":
        return {
          kind: "between",
          arg: operand(type),
          low: operand(type),
          high: operand(type),
          negated: r() < 0.5,
        };
      case "bool":
        return r() < 0.7 ? { kind: "column", name: "paid", type: "BOOLEAN" } : literal("BOOLEAN");
      case "and":
      case "or": {
        const n = 2 + Math.floor(r() * 2);
        return {
          kind,
          args: Array.from({ length: n }, () => condition(depth - 1, kind)),
        } as Expr;
      }
      default:
        return { kind: "not", arg: condition(depth - 1, null) };
    }
  };
  return () => condition(3, null);
}

Deno.test("3,000 generated predicates round-trip through the printer and the parser", () => {
  const next = generator(20261207);
  for (let i = 0; i < 3000; i++) {
    const ast = next();
    const text = printPredicate(ast);
    let back: Expr;
    try {
      back = checkPredicateSql(text, GEN_SCHEMA);
    } catch (e) {
      assert.fail(`#${i} ${text}: ${(e as Error).message}\n${JSON.stringify(ast)}`);
    }
    assert.deepEqual(back, ast, `#${i} ${text}`);
  }
});
