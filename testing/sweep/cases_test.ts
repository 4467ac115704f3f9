import assert from "node:assert/strict";
import { faultInventory } from "../../lib/fault/inventory.ts";
import { caseId, sweepCases } from "./cases.ts";

Deno.test("the sweep has one case per site × side × declared backend, with the site's first journey", () => {
  const cases = sweepCases();
  const inventory = faultInventory();
  const expected = inventory.reduce((n, e) => n + 2 * (e.site.backends?.length ?? 2), 0);
  assert.equal(cases.length, expected);
  assert.equal(new Set(cases.map(caseId)).size, cases.length, "case IDs are unique");
  for (const e of inventory) {
    const mine = cases.filter((c) => c.site === e.site.name);
    assert.deepEqual(
      [...new Set(mine.map((c) => c.backend))].sort(),
      [...(e.site.backends ?? ["local", "postgres"])].sort(),
      e.site.name,
    );
    assert.ok(mine.every((c) => c.journey === e.journeys[0]), e.site.name);
  }
});

Deno.test("a sweep filter selects by site, site:side or case ID, and by backend", () => {
  assert.deepEqual(sweepCases({ only: "docker.remove_old" }).map(caseId), [
    "docker.remove_old:before:local",
    "docker.remove_old:after:local",
    "docker.remove_old:before:postgres",
    "docker.remove_old:after:postgres",
  ]);
  assert.deepEqual(
    sweepCases({ only: "docker.remove_old:after", backend: "postgres" }).map(caseId),
    ["docker.remove_old:after:postgres"],
  );
  assert.deepEqual(sweepCases({ only: "lock.local.break:before:postgres" }), []);
});

Deno.test("the suite tier crosses every site once, each side and backend across the sites", () => {
  const suite = sweepCases({ tier: "suite" });
  const full = new Set(sweepCases().map(caseId));
  const inventory = faultInventory();
  assert.equal(suite.length, inventory.length);
  for (const e of inventory) {
    assert.equal(suite.filter((c) => c.site === e.site.name).length, 1, e.site.name);
  }
  for (const c of suite) assert.ok(full.has(caseId(c)), caseId(c));
  assert.deepEqual(new Set(suite.map((c) => c.side)), new Set(["before", "after"]));
  const both = suite.filter((c) => !inventory.find((e) => e.site.name === c.site)!.site.backends);
  assert.deepEqual(new Set(both.map((c) => c.backend)), new Set(["local", "postgres"]));
});
