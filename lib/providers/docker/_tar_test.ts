import assert from "node:assert/strict";
import { tarSingleFile, untarSingleFile } from "./_tar.ts";

Deno.test("a single-file tar round-trips its bytes", () => {
  const data = new TextEncoder().encode("1b4e28ba-2fa1-11d2-883f-0016d3cca427\n");
  assert.deepEqual(untarSingleFile(tarSingleFile("instance-id", data)), data);
});

Deno.test("an empty archive holds no file", () => {
  assert.equal(untarSingleFile(new Uint8Array(1024)), null);
});

Deno.test("a file larger than one block survives", () => {
  const data = new Uint8Array(1500).map((_, i) => i % 251);
  assert.deepEqual(untarSingleFile(tarSingleFile("plan.json", data)), data);
});

Deno.test("a file's mode is written as given (0644 by default)", () => {
  const mode = (tar: Uint8Array) => new TextDecoder().decode(tar.slice(100, 107));
  assert.equal(mode(tarSingleFile("a", new Uint8Array([1]))), "0000644");
  assert.equal(mode(tarSingleFile("a", new Uint8Array([1]), 0o400)), "0000400");
});
