import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { decodeRecord } from "./decode.ts";
import type { SchemaField } from "./schema.ts";

const vectors = JSON.parse(
  await Deno.readTextFile(new URL("../../tests/vectors/predicates.json", import.meta.url)),
) as {
  schema: SchemaField[];
  decode_rejects: Array<{ name: string; record: string; error: string }>;
  decode_accepts: Array<{ name: string; record: string }>;
};

for (const v of vectors.decode_rejects) {
  Deno.test(`shared vector: decode rejects ${v.name} with ${v.error}`, () => {
    const result = decodeRecord(v.record, vectors.schema);
    strictEqual(result.ok, false);
    if (!result.ok) strictEqual(result.code, v.error);
  });
}

for (const v of vectors.decode_accepts) {
  Deno.test(`shared vector: decode accepts ${v.name}`, () => {
    const result = decodeRecord(v.record, vectors.schema);
    ok(result.ok, result.ok ? "" : `${result.code}: ${result.message}`);
  });
}

const schema: SchemaField[] = [
  { name: "id", type: "BIGINT", nullable: false },
  { name: "x", type: "DOUBLE", nullable: true },
];

Deno.test("BIGINT decodes exactly beyond 2^53", () => {
  const result = decodeRecord('{"id":9007199254740993,"x":null}', schema);
  ok(result.ok);
  if (result.ok) deepStrictEqual(result.values.id, 9007199254740993n);
});

Deno.test("bytes that are not UTF-8 are malformed", () => {
  const bytes = new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]);
  const result = decodeRecord(bytes, schema);
  ok(!result.ok && result.code === "DECODE_MALFORMED");
});

Deno.test("UTF-8 bytes decode like text", () => {
  const result = decodeRecord(new TextEncoder().encode('{"id":-5,"x":2.5}'), schema);
  ok(result.ok);
  if (result.ok) deepStrictEqual({ ...result.values }, { id: -5n, x: 2.5 });
});

Deno.test("the first problem in document order is reported, missing fields last", () => {
  const a = decodeRecord('{"x":"s","zz":1}', schema);
  ok(!a.ok && a.code === "DECODE_WRONG_TYPE" && a.field === "x");
  const b = decodeRecord('{"x":1}', schema);
  ok(!b.ok && b.code === "DECODE_MISSING_FIELD" && b.field === "id");
});
