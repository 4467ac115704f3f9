import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { MAX_INSTANCES, placeInstances, placementCapacity } from "./placement.ts";

Deno.test("spread puts instance i on the i-th endpoint and refuses more instances than endpoints", () => {
  const two = { endpoints: ["a", "b"], rule: "spread" as const };
  deepStrictEqual(placeInstances(2, two), [
    { instance: 0, endpoint: "a" },
    { instance: 1, endpoint: "b" },
  ]);
  strictEqual(placeInstances(3, two), null);
  strictEqual(placementCapacity(two), 2);
  deepStrictEqual(placeInstances(1, { endpoints: [], rule: "spread" }), [
    { instance: 0, endpoint: null },
  ]);
  strictEqual(placeInstances(2, { endpoints: [], rule: "spread" }), null);
  for (const bad of [0, -1, 1.5, MAX_INSTANCES + 1]) {
    strictEqual(placeInstances(bad, { endpoints: ["a"], rule: "shared" }), null, String(bad));
  }
});

Deno.test("shared goes round the endpoints, and no instance moves when N grows or shrinks", () => {
  const shared = { endpoints: ["a", "b"], rule: "shared" as const };
  deepStrictEqual(placeInstances(3, shared)?.map((p) => p.endpoint), ["a", "b", "a"]);
  deepStrictEqual(placeInstances(2, { endpoints: [], rule: "shared" })?.map((p) => p.endpoint), [
    null,
    null,
  ]);
  for (const rule of ["spread", "shared"] as const) {
    const p = { endpoints: ["a", "b", "c", "d"], rule };
    for (let n = 1; n < 4; n++) {
      deepStrictEqual(placeInstances(n + 1, p)!.slice(0, n), placeInstances(n, p), `${rule} ${n}`);
    }
  }
});
