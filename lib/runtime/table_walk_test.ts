import assert from "node:assert/strict";
import { walkTable } from "./table_walk.ts";

const TABLE = [
  { step: "intent", per: "operation" },
  { step: "first", per: "item" },
  { step: "second", per: "item" },
  { step: "commit", per: "operation" },
] as const;

type Row = typeof TABLE[number];

function walk(items: string[], decides: (row: Row, item: string | null) => boolean) {
  const asked: string[] = [];
  const d = walkTable<Row, string | null, string>(
    TABLE,
    (per) => (per === "operation" ? [null] : items),
    (row, item) => {
      asked.push(`${row.step}:${item ?? "-"}`);
      return decides(row, item) ? `${row.step}:${item ?? "-"}` : null;
    },
  );
  return { d, asked };
}

Deno.test("walkTable takes each subject through every row of its run before the next subject", () => {
  const { d, asked } = walk(["x", "y"], (row, item) => row.step === "first" && item === "y");
  assert.equal(d, "first:y");
  assert.deepEqual(asked, ["intent:-", "first:x", "second:x", "first:y"]);
});

Deno.test("walkTable reaches the rows after a run once every subject skipped it, or when there is none", () => {
  assert.equal(walk(["x"], (row) => row.step === "commit").d, "commit:-");
  const { d, asked } = walk([], (row) => row.step === "commit");
  assert.equal(d, "commit:-");
  assert.deepEqual(asked, ["intent:-", "commit:-"]);
});

Deno.test("a table that decides nothing is a programming error", () => {
  assert.throws(() => walk(["x"], () => false), /the table's rows decided nothing/);
});
