import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { diagnostic, excerpt, SourceFile } from "./diagnostic.ts";

Deno.test("locate gives 1-based line and code-point column", () => {
  const src = new SourceFile("f.sql", "ab\n✓😀x\n");
  deepStrictEqual(src.locate(0), { file: "f.sql", line: 1, column: 1 });
  deepStrictEqual(src.locate(3), { file: "f.sql", line: 2, column: 1 });
  // "✓" is one unit, "😀" two units but one column
  deepStrictEqual(src.locate(6), { file: "f.sql", line: 2, column: 3 });
});

Deno.test("excerpt underlines the span on its first line", () => {
  const src = new SourceFile("f.sql", "SELECT a\nFROM t JOIN u");
  strictEqual(excerpt(src, { start: 16, end: 20 }), "  |\n2 | FROM t JOIN u\n  |        ^^^^");
});

Deno.test("diagnostic carries code, location and file:line:col in the message", () => {
  const src = new SourceFile("m.sql", "x\n  y");
  const err = diagnostic(src, "SQL_SYNTAX", "bad", { start: 4, end: 5 });
  strictEqual(err.code, "SQL_SYNTAX");
  deepStrictEqual(err.location, { file: "m.sql", line: 2, column: 3 });
  strictEqual(err.message.split("\n")[0], "m.sql:2:3: bad");
});
