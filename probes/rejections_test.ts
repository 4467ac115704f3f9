// Every rejection of the catalogue has its tampering, and every tampering a catalogue entry: a
// case without one would fail only when the probe runs it (the full tier, rarely), and a
// tampering without an entry is code no case reaches.
import assert from "node:assert/strict";
import { REJECTIONS } from "./catalogue.ts";
import { TAMPER } from "./rejections.ts";

Deno.test("every catalogue rejection has its tampering, and every tampering its rejection", () => {
  const declared = REJECTIONS.map((r) => r.name).sort();
  assert.deepEqual(Object.keys(TAMPER).sort(), declared);
  for (const name of declared) assert.equal(typeof TAMPER[name], "function", name);
});
