import assert from "node:assert/strict";
import { CREATE_TABLE, createRow, createSite, createSites } from "./create.ts";
import { MOUNTED_PLAN_WRITE } from "./replacement.ts";

Deno.test("the create journey records its intent first and commits ownership last", () => {
  assert.equal(CREATE_TABLE[0].step, "intent");
  assert.equal(CREATE_TABLE[0].site?.kind, "journal");
  assert.equal(CREATE_TABLE.at(-1)?.step, "commit");
  assert.equal(CREATE_TABLE.at(-1)?.site?.kind, "state");
});

Deno.test("every create mutation crosses its own site; only the readiness wait crosses none", () => {
  const without = CREATE_TABLE.filter((r) => r.site === null).map((r) => r.step);
  assert.deepEqual(without, ["await_ready"]);
  const names = createSites().map((s) => s.name);
  assert.equal(new Set(names).size, names.length);
  for (const step of ["create_topic", "create_volume", "position_offsets"] as const) {
    assert.equal(createSite(step).kind, "provider", step);
  }
  // the mounted plan file is the same persistence point as the replacement's candidate plan
  assert.equal(createSite("write_mounted_plan"), MOUNTED_PLAN_WRITE);
});

Deno.test("rows are looked up by step, and the runner's rows follow the topics'", () => {
  assert.equal(createRow("start_container").site?.name, "docker.start_runner");
  const per = CREATE_TABLE.map((r) => r.per);
  assert.ok(per.lastIndexOf("topic") < per.indexOf("runner"));
});
