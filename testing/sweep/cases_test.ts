import assert from "node:assert/strict";
import { faultInventory } from "../../lib/protocol/inventory.ts";
import { stateOnlyPoints } from "../../lib/protocol/state_sites.ts";
import { JOURNEY_DESCRIPTORS } from "../../lib/protocol/journeys.ts";
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

Deno.test("the suite tier crosses every site once, each side and backend across the sites, and the states only the state layer leaves", () => {
  const suite = sweepCases({ tier: "suite" });
  const full = new Set(sweepCases().map(caseId));
  const inventory = faultInventory();
  const stateOnly = new Set(stateOnlyPoints().map((p) => `${p.site}:${p.side}:${p.backend}`));
  for (const id of stateOnly) assert.ok(suite.some((c) => caseId(c) === id), id);
  for (const e of inventory) {
    const mine = suite.filter((c) => c.site === e.site.name);
    // one case per site; a second only for a state-layer point its turn did not pick
    assert.ok(mine.length >= 1, e.site.name);
    assert.ok(mine.filter((c) => !stateOnly.has(caseId(c))).length <= 1, e.site.name);
  }
  assert.ok(suite.length <= inventory.length + stateOnly.size);
  for (const c of suite) assert.ok(full.has(caseId(c)), caseId(c));
  assert.deepEqual(new Set(suite.map((c) => c.side)), new Set(["before", "after"]));
  const both = suite.filter((c) => !inventory.find((e) => e.site.name === c.site)!.site.backends);
  assert.deepEqual(new Set(both.map((c) => c.backend)), new Set(["local", "postgres"]));
});

Deno.test("the lock-loss pass has a case for every crash case, and its suite tier takes every site once on the other side than the crash pass", () => {
  const crash = sweepCases();
  const lost = sweepCases({ pass: "lock_lost" });
  assert.deepEqual(
    lost.map((c) => ({ ...c, pass: "crash" })),
    crash,
    "the same sites, sides and backends",
  );
  assert.ok(lost.every((c) => caseId(c).startsWith("lock_lost/")));
  assert.equal(new Set([...crash, ...lost].map(caseId)).size, crash.length + lost.length);
  const suite = sweepCases({ pass: "lock_lost", tier: "suite" });
  const crashSuite = sweepCases({ tier: "suite" });
  const stateOnly = new Set(stateOnlyPoints().map((p) => `${p.site}:${p.side}:${p.backend}`));
  const inventory = faultInventory();
  assert.equal(suite.length, inventory.length);
  for (const e of inventory) {
    const mine = suite.filter((c) => c.site === e.site.name);
    assert.equal(mine.length, 1, e.site.name);
    // the crash pass's own turn at the site (not a state-layer extra)
    const theirs = crashSuite.filter((c) => c.site === e.site.name && !stateOnly.has(caseId(c)));
    assert.ok(theirs.length <= 1, e.site.name);
    for (const c of theirs) assert.notEqual(c.side, mine[0].side, e.site.name);
  }
  assert.deepEqual(new Set(suite.map((c) => c.side)), new Set(["before", "after"]));
  assert.deepEqual(new Set(suite.map((c) => c.backend)), new Set(["local", "postgres"]));
  assert.deepEqual(
    sweepCases({ pass: "lock_lost", only: "docker.remove_old:after:local" }).map(caseId),
    ["lock_lost/docker.remove_old:after:local"],
  );
});

Deno.test("every crossing of the journey registry that has sites of its own is a case's journey", () => {
  const journeys = new Set(sweepCases().map((c) => c.journey));
  const crossings = JOURNEY_DESCRIPTORS.flatMap((j) => j.crossings);
  assert.ok(crossings.length >= 7, "the registry is read");
  for (const c of crossings) {
    // its harness is armed at its sites (a site another crossing lists first is that one's)
    assert.ok(c.sites().length === 0 || journeys.has(c.by), c.by);
  }
});
