import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { SluiceError } from "../errors.ts";
import { checkPredicateSql } from "../project/model.ts";
import type { SchemaField } from "./schema.ts";

const schema: SchemaField[] = [
  { name: "amount", type: "BIGINT", nullable: false },
  { name: "score", type: "DOUBLE", nullable: true },
  { name: "paid", type: "BOOLEAN", nullable: false },
  { name: "region", type: "STRING", nullable: true },
];

function rejects(sql: string, code: string, column: number, fragment: string): void {
  throws(() => checkPredicateSql(sql, schema, "p.sql"), (e: unknown) => {
    if (!(e instanceof SluiceError)) return false;
    strictEqual(e.code, code, e.message);
    deepStrictEqual(e.location, { file: "p.sql", line: 1, column });
    strictEqual(e.message.startsWith(`p.sql:1:${column}: `), true, e.message);
    strictEqual(e.message.includes(fragment), true, e.message);
    return true;
  });
}

Deno.test("TYPE_MISMATCH: BIGINT compared with DOUBLE is an error, not a conversion", () => {
  rejects("amount >= 1.5", "TYPE_MISMATCH", 1, "cannot compare BIGINT");
  rejects("score = 1", "TYPE_MISMATCH", 1, "no implicit conversion between BIGINT and DOUBLE");
  rejects("paid AND region = 5", "TYPE_MISMATCH", 10, "STRING");
  rejects("region IN ('a', 2)", "TYPE_MISMATCH", 17, "cannot compare STRING");
  rejects("amount BETWEEN 1 AND 'x'", "TYPE_MISMATCH", 1, "BIGINT");
});

Deno.test("TYPE_UNKNOWN_COLUMN names the column and suggests a case-fold match", () => {
  rejects("amout > 1", "TYPE_UNKNOWN_COLUMN", 1, "unknown column 'amout'");
  rejects("paid AND Amount > 1", "TYPE_UNKNOWN_COLUMN", 10, "did you mean 'amount'");
});

Deno.test("TYPE_NOT_BOOLEAN: the predicate and logical arguments must be BOOLEAN", () => {
  rejects("amount", "TYPE_NOT_BOOLEAN", 1, "the WHERE predicate must be BOOLEAN, found BIGINT");
  rejects("paid AND region", "TYPE_NOT_BOOLEAN", 10, "an argument of AND");
  rejects("NOT 'x'", "TYPE_NOT_BOOLEAN", 5, "the argument of NOT");
});

Deno.test("TYPE_INVALID_OPERAND: operands are columns or literals, IN lists literals", () => {
  rejects("(amount > 1) = TRUE", "TYPE_INVALID_OPERAND", 1, "comparison '>'");
  rejects("region IN ('a', region)", "TYPE_INVALID_OPERAND", 17, "literals only");
});

Deno.test("NULL literals type-check against any type", () => {
  deepStrictEqual(checkPredicateSql("score = NULL OR NULL", schema).kind, "or");
});

Deno.test("a bare BOOLEAN column is a predicate", () => {
  deepStrictEqual(checkPredicateSql("paid", schema), {
    kind: "column",
    name: "paid",
    type: "BOOLEAN",
  });
});
