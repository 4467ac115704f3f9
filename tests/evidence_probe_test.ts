// Needs nothing running: the evidence schema, the verifier's recomputation of summaries, and
// the fault matrix's case list generated from the fault inventory.
import assert from "node:assert/strict";
import { semanticErrors, validate } from "../tools/verify.ts";
import { matrixCases } from "../probes/fault_matrix.ts";
import { Assertions, summarize } from "../probes/common.ts";
import { faultInventory } from "../lib/fault/inventory.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const schema = JSON.parse(await Deno.readTextFile(`${ROOT}verification/schema.json`));

function evidence(ok: boolean) {
  const a = new Assertions();
  a.check("serial", 2, ok ? 2 : 1);
  const inv = faultInventory().map((b) => ({ name: b.site.name, kind: b.site.kind }));
  const cases = [{
    id: "x",
    boundary: "journal.intent",
    side: "before" as const,
    backend: "local" as const,
    started_at: new Date().toISOString(),
    duration_ms: 1,
    history: [{
      process: "w1",
      type: "invoke" as const,
      f: "apply",
      value: null,
      time: new Date().toISOString(),
    }],
    assertions: a.list,
    ok: a.ok,
    error: null,
  }];
  return {
    probe: "unit",
    schema_version: 1,
    generated_at: new Date().toISOString(),
    duration_ms: 1,
    environment: { kafka: "4", docker: "20", postgresql: "15", deno: "2" },
    boundary_inventory: { count: inv.length, boundaries: inv },
    cases,
    summary: summarize(cases),
  };
}

Deno.test("the matrix is every inventory site × before/after × its backends", () => {
  const inv = faultInventory();
  assert.ok(inv.length >= 13, `inventory has ${inv.length} sites`);
  const cases = matrixCases();
  const perSite = inv.map((e) => (e.site.backends ?? ["local", "postgres"]).length * 2);
  assert.equal(cases.length, perSite.reduce((a, b) => a + b, 0));
  assert.equal(
    new Set(cases.map((c) => `${c.boundary}:${c.side}:${c.backend}`)).size,
    cases.length,
  );
  const names = inv.map((x) => x.site.name);
  for (
    const b of [
      "journal.intent",
      "docker.signal_term",
      "state.finalize",
      "journal.resume",
      "docker.create_volume",
      "kafka.position_offsets",
    ]
  ) {
    assert.ok(names.includes(b), `${b} is declared`);
  }
  // create-journey sites are armed on the create apply, resume-only ones on a resume
  const journey = (s: string) => cases.find((c) => c.boundary === s)?.journey;
  assert.equal(journey("docker.create_volume"), "create");
  assert.equal(journey("journal.resume"), "resume");
  assert.equal(journey("docker.remove_old"), "replacement");
});

Deno.test("a valid evidence document passes the schema and the semantic checks", () => {
  const e = evidence(true);
  assert.deepEqual(validate(schema, schema, e), []);
  assert.deepEqual(semanticErrors(e), []);
});

Deno.test("a failed case, a forged summary and a schema violation are each reported", () => {
  const failed = evidence(false);
  assert.deepEqual(validate(schema, schema, failed), []);
  assert.ok(semanticErrors(failed).some((m) => m.includes("case x FAILED")));

  const forged = evidence(true);
  forged.summary.passed = 7;
  assert.ok(semanticErrors(forged).some((m) => m.startsWith("summary.passed")));

  const lying = evidence(false);
  lying.cases[0].ok = true;
  assert.ok(semanticErrors(lying).some((m) => m.includes("ok=true but its assertions say false")));

  const bad = evidence(true) as Record<string, unknown>;
  (bad.cases as Array<Record<string, unknown>>)[0].history = [{ process: "w", type: "maybe" }];
  const errors = validate(schema, schema, bad);
  assert.ok(errors.some((m) => m.includes("is not one of")), errors.join("\n"));
  assert.ok(errors.some((m) => m.includes("missing time")), errors.join("\n"));
});
