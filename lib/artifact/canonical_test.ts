import { strictEqual, throws } from "node:assert/strict";
import { SluiceError } from "../errors.ts";
import { canonicalJson, canonicalSha256, parseCanonicalJson, sha256Hex } from "./canonical.ts";

Deno.test("keys are sorted by UTF-16 code units at every level; no whitespace", () => {
  strictEqual(
    canonicalJson({ b: [{ z: 1, a: null }], a: true, B: "x", "é": 0, "😀": 1, "\uffff": 2 }),
    '{"B":"x","a":true,"b":[{"a":null,"z":1}],"é":0,"😀":1,"\uffff":2}',
  );
});

Deno.test("strings are escaped as JSON.stringify escapes them", () => {
  strictEqual(canonicalJson('a"\\\n\u0001✓'), '"a\\"\\\\\\n\\u0001✓"');
});

Deno.test("only safe integers are numbers; -0 is 0", () => {
  strictEqual(canonicalJson([0, -0, -5, 9007199254740991]), "[0,0,-5,9007199254740991]");
  for (const bad of [1.5, 2 ** 53, NaN, Infinity, 1n, undefined, { a: undefined }, new Date()]) {
    throws(() => canonicalJson(bad), SluiceError);
  }
});

Deno.test("sha256 is lower-case hex over UTF-8 bytes", () => {
  strictEqual(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  strictEqual(canonicalSha256({ a: "✓" }), sha256Hex(new TextEncoder().encode('{"a":"✓"}')));
});

Deno.test("parseCanonicalJson accepts canonical text only", () => {
  strictEqual((parseCanonicalJson('{"a":1,"b":[]}') as { a: number }).a, 1);
  for (const bad of ['{"b":1,"a":2}', '{"a": 1}', '{"a":1,"a":1}', "[1.0]", "[1e2]", "{}\n"]) {
    throws(() => parseCanonicalJson(bad), (e: unknown) => {
      strictEqual((e as SluiceError).code, "ARTIFACT_NOT_CANONICAL");
      return true;
    });
  }
});
