/**
 * The probes' case lists as the code derives them: the suite tier is a declared part of the
 * full list, the matrix arms only sites its journeys cross on the backends they exist on, and
 * no site of the inventory is left without a crash case (the real matrix or the crash sweep).
 */
import assert from "node:assert/strict";
import { faultInventory } from "../lib/fault/inventory.ts";
import { replacementSites } from "../lib/protocol/replacement.ts";
import { sweepCases } from "../testing/sweep/cases.ts";
import {
  BACKENDS,
  expectedCaseIds,
  matrixArms,
  matrixPoints,
  PROBE_FILES,
  type ProbeName,
  SIDES,
} from "./catalogue.ts";

Deno.test("every probe's suite tier is a non-empty part of its full list, without repeats", () => {
  for (const probe of Object.keys(PROBE_FILES) as ProbeName[]) {
    const full = expectedCaseIds(probe, "full");
    const suite = expectedCaseIds(probe, "suite");
    assert.ok(suite.length > 0, probe);
    assert.equal(new Set(full).size, full.length, probe);
    assert.equal(new Set(suite).size, suite.length, probe);
    for (const id of suite) assert.ok(full.includes(id), `${probe}: ${id} not in the full list`);
  }
});

Deno.test("the suite's matrix crosses every protocol site on both sides and both backends", () => {
  const suite = matrixPoints("suite");
  for (const site of replacementSites()) {
    const mine = suite.filter((m) => m.point.startsWith(`${site.name}:`));
    assert.deepEqual(
      new Set(mine.map((m) => m.point.slice(site.name.length + 1))),
      new Set(SIDES),
      site.name,
    );
    assert.deepEqual(new Set(mine.map((m) => m.backend)), new Set(BACKENDS), site.name);
  }
});

Deno.test("the full matrix arms each armed site on exactly the backends it exists on", () => {
  const full = matrixPoints("full");
  for (const e of faultInventory()) {
    const mine = full.filter((m) => m.point.startsWith(`${e.site.name}:`));
    if (!matrixArms(e)) {
      assert.equal(mine.length, 0, e.site.name);
      continue;
    }
    const backends = e.site.backends ?? BACKENDS;
    assert.equal(mine.length, backends.length * SIDES.length, e.site.name);
    for (const m of mine) assert.ok(backends.includes(m.backend), `${e.site.name} ${m.backend}`);
  }
});

Deno.test("no site is left without a crash case: the crash sweep crosses every one on every backend", () => {
  const swept = new Set(sweepCases().map((c) => `${c.site}:${c.side}:${c.backend}`));
  for (const e of faultInventory()) {
    for (const backend of e.site.backends ?? BACKENDS) {
      for (const side of SIDES) {
        assert.ok(swept.has(`${e.site.name}:${side}:${backend}`), `${e.site.name}:${side}`);
      }
    }
  }
});
