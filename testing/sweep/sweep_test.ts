import assert from "node:assert/strict";
import { type Journey, JOURNEY_DESCRIPTORS } from "../../lib/protocol/journeys.ts";
import { type SweepCase, sweepCases } from "./cases.ts";
import { HARNESSES, harnessOf, runCase } from "./sweep.ts";

Deno.test("every crossing of the journey registry has its sweep harness, and the harnesses name no other", () => {
  const crossings = JOURNEY_DESCRIPTORS.flatMap((j) => j.crossings.map((c) => c.by));
  assert.ok(crossings.length >= 7, "the registry is read");
  for (const by of crossings) assert.ok(Object.hasOwn(HARNESSES, by), `no harness for ${by}`);
  assert.deepEqual(Object.keys(HARNESSES).sort(), [...new Set(crossings)].sort());
  for (const c of sweepCases()) assert.equal(typeof harnessOf(c.journey).run, "function");
});

Deno.test("only the connector's cases and the destroy's connector-row cases need a data pipeline", () => {
  const piped = Object.entries(HARNESSES).filter(([, h]) => h.pipeline === true).map(([j]) => j);
  assert.deepEqual(piped, ["connector"]);
  const some = Object.entries(HARNESSES).filter(([, h]) => typeof h.pipeline === "function");
  assert.deepEqual(some.map(([j]) => j), ["destroy"]);
  const destroy = HARNESSES.destroy.pipeline as (c: SweepCase) => boolean;
  const piping = sweepCases().filter((c) => c.journey === "destroy" && destroy(c));
  assert.deepEqual([...new Set(piping.map((c) => c.site))], ["connect.delete_destroyed_connector"]);
});

Deno.test("a case of a journey with no harness fails with its name, and runs no other journey", async () => {
  const stranger = "toy" as Journey;
  assert.throws(() => harnessOf(stranger), /no harness for the journey "toy"/);
  const r = await runCase({
    site: "docker.remove_old",
    side: "after",
    backend: "local",
    journey: stranger,
    pass: "crash",
  });
  assert.equal(r.journey, null, "no journey ran");
  assert.equal(r.problems.length, 1);
  assert.match(
    r.problems[0],
    /the case could not run: Error: the sweep has no harness for the journey "toy"/,
  );
});
