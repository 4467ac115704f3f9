import { strictEqual } from "node:assert/strict";
import type { Expr } from "./ast.ts";
import { decodeRecord } from "./decode.ts";
import { compareCodePoints, evaluate } from "./evaluate.ts";
import type { SchemaField } from "./schema.ts";

const vectors = JSON.parse(
  await Deno.readTextFile(new URL("../../tests/vectors/predicates.json", import.meta.url)),
) as {
  schema: SchemaField[];
  predicates: Array<
    { name: string; ast: Expr; cases: Array<{ record: string; expected: boolean | null }> }
  >;
};

for (const p of vectors.predicates) {
  Deno.test(`shared vector: evaluate ${p.name}`, () => {
    for (const c of p.cases) {
      const decoded = decodeRecord(c.record, vectors.schema);
      if (!decoded.ok) throw new Error(`${c.record}: ${decoded.code}`);
      strictEqual(evaluate(p.ast, decoded.values), c.expected, c.record);
    }
  });
}

Deno.test("strings compare by code point, not UTF-16 unit", () => {
  strictEqual(compareCodePoints("😀", "\uffff"), 1);
  strictEqual("😀" < "\uffff", true); // what JavaScript's own comparison would say
  strictEqual(compareCodePoints("ab", "abc"), -1);
  strictEqual(compareCodePoints("b", "a"), 1);
  strictEqual(compareCodePoints("é", "é"), 0);
});

Deno.test("NULL literal IN list makes a miss unknown; a hit stays true", () => {
  const expr: Expr = {
    kind: "in",
    arg: { kind: "column", name: "a", type: "BIGINT" },
    list: [{ kind: "literal", type: "BIGINT", value: "1" }, {
      kind: "literal",
      type: "NULL",
      value: null,
    }],
    negated: true,
  };
  strictEqual(evaluate(expr, { a: 1n }), false);
  strictEqual(evaluate(expr, { a: 2n }), null);
});
