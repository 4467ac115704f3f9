import assert from "node:assert/strict";
import type { EnvDescriptor } from "../harness/env.ts";
import { MATRIX_JOURNEYS } from "./catalogue.ts";
import { MATRIX_HARNESSES, runCase } from "./fault_matrix.ts";

Deno.test("every journey the matrix drives has its harness, and the harnesses name no other", () => {
  for (const j of MATRIX_JOURNEYS) {
    assert.equal(typeof MATRIX_HARNESSES[j], "function", `no matrix harness for ${j}`);
  }
  assert.deepEqual(Object.keys(MATRIX_HARNESSES).sort(), [...MATRIX_JOURNEYS].sort());
});

Deno.test("a site the matrix does not arm is an error of the case, never another journey's case", () => {
  assert.throws(
    () =>
      runCase({} as EnvDescriptor, "image", {
        boundary: "no.such_site",
        side: "before",
        backend: "local",
      }, "run"),
    /the fault matrix has no harness for the site no\.such_site \(journey null\)/,
  );
});
