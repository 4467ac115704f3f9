import assert from "node:assert/strict";
import { canonicalJson, checksumOf, sha256Hex } from "./_canonical.ts";

Deno.test("canonical JSON sorts keys, drops whitespace and keeps strings escaped", () => {
  assert.equal(
    canonicalJson({ b: 1, a: [true, null, "x\n\u0001"] }),
    '{"a":[true,null,"x\\n\\u0001"],"b":1}',
  );
  assert.equal(canonicalJson(-0), "0");
});

Deno.test("canonical JSON refuses non-safe numbers and undefined", () => {
  assert.throws(() => canonicalJson(1.5), /safe integer/);
  assert.throws(() => canonicalJson(2 ** 53), /safe integer/);
  assert.throws(() => canonicalJson({ a: undefined }), /undefined/);
});

Deno.test("checksums are lower-case sha256 of the canonical bytes", () => {
  assert.equal(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(checksumOf({ b: 2, a: 1 }), sha256Hex('{"a":1,"b":2}'));
});
