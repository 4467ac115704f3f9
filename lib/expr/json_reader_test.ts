import { deepStrictEqual, throws } from "node:assert/strict";
import { JsonSyntaxError, readJson } from "./json_reader.ts";

Deno.test("readJson keeps number lexemes and member order, including duplicates", () => {
  deepStrictEqual(readJson('{"b":9007199254740993,"a":1.50,"b":null}'), {
    kind: "object",
    members: [
      { key: "b", value: { kind: "number", text: "9007199254740993" } },
      { key: "a", value: { kind: "number", text: "1.50" } },
      { key: "b", value: { kind: "null" } },
    ],
  });
});

Deno.test("readJson decodes escapes", () => {
  deepStrictEqual(readJson('"a\\"b\\u00e9\\n\\/"'), { kind: "string", value: 'a"bé\n/' });
});

Deno.test("readJson rejects what RFC 8259 does not allow", () => {
  for (
    const bad of [
      "",
      "01",
      "1.",
      ".5",
      "+1",
      "NaN",
      "[1,]",
      '{"a":1,}',
      "{'a':1}",
      '"\t"',
      '"\\x"',
      "tru",
      "[1] [2]",
      "[".repeat(300) + "]".repeat(300),
    ]
  ) {
    throws(() => readJson(bad), JsonSyntaxError, JSON.stringify(bad).slice(0, 40));
  }
});
