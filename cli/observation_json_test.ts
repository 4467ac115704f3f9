// SDK 0.2.0's result names on the fake world (issue 30 item 4): an observation is snake_case in
// the SDK and the CLI's JSON renames it back to exactly the runtime's value (so `observe -o json`
// is unchanged); a status row names the model and its application ID apart; a plan's kind is
// named; a replacement's result has one status field.
import assert from "node:assert/strict";
import { initProject } from "../lib/project/starter.ts";
import { writePlanFile } from "../lib/plan/plan_file.ts";
import { observe } from "../lib/runtime/session.ts";
import { createFakeWorld } from "../testing/fakes/fake_world.ts";
import { openProject, planKind } from "../mod.ts";
import { replacementResult } from "../lib/sdk/results.ts";
import { notCommitted } from "../lib/runtime/replacement/result.ts";
import { OBSERVATION_DATA_KEYS, sdkObservation } from "../lib/sdk/observation.ts";
import { observationJson } from "./observation_json.ts";

/** Every key path of a value whose name is not snake_case (outside the data maps). */
function camelPaths(value: unknown, path = ""): string[] {
  if (OBSERVATION_DATA_KEYS.includes(path)) return [];
  if (Array.isArray(value)) return value.flatMap((v) => camelPaths(v, path ? `${path}.*` : "*"));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const p = path ? `${path}.${k}` : k;
    return [...(/[A-Z]/.test(k) ? [p] : []), ...camelPaths(v, p)];
  });
}

Deno.test("SDK results are snake_case, and the CLI's observe JSON is the runtime's observation", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice-names-" });
  const world = createFakeWorld({ seed: "sdk-names" });
  await initProject(dir);
  const manifest = `${dir}/sluice.yaml`;
  await Deno.writeTextFile(
    manifest,
    (await Deno.readTextFile(manifest))
      .replace(/bootstrap_host: .*$/m, `bootstrap_host: ${world.env.bootstrapHost}`)
      .replace(/bootstrap_internal: .*$/m, `bootstrap_internal: ${world.env.bootstrapInternal}`)
      .replace(/^network: .*$/m, `network: ${world.env.network}`)
      .replace(/^image: .*$/m, `image: ${world.env.runnerImage}`),
  );
  const kafka = world.kafka(world.env.bootstrapHost);
  const ports = { docker: world.docker, kafka, clock: world.clock, uuids: world.ids };
  try {
    await using project = await openProject({ dir, ...ports });
    const planned = await project.plan();
    assert.equal(planKind(planned.plan), "change");
    assert.equal(planKind({ format: 6 }), "replacement");
    await writePlanFile(`${dir}/create.plan.json`, planned.plan);
    const applied = await project.apply({ plan: `${dir}/create.plan.json` });
    assert.equal(applied.kind, "change");

    // the status row: the model's name, its application ID apart
    const [row] = (await project.status()).models;
    assert.equal(row.model, "eligible_orders");
    assert.equal(row.application_id, "sluice-orders-eligible_orders");

    // the observation: snake_case everywhere but the data maps, and back to the runtime's value
    const sdk = await project.observe();
    assert.deepEqual(camelPaths(sdk), []);
    const c = sdk.runners[0].containers[0];
    assert.equal(sdk.runners[0].application_id, "sluice-orders-eligible_orders");
    assert.equal(c.labels.application_id, "sluice-orders-eligible_orders");
    assert.equal(c.plan.matches_label, true);
    assert.equal(c.ever_started, true);
    assert.ok(c.plan.identity?.cluster_id, "the mounted identity keeps its own names");
    const runtime = await observe({ dir, ...ports });
    assert.ok(camelPaths(runtime).length > 0);
    assert.deepEqual(observationJson(sdkObservation(runtime)), runtime);
  } finally {
    await kafka.close();
  }
});

Deno.test("a replacement's SDK result has one status field, outcome", () => {
  const r = notCommitted({ operation_id: "op", commands: { status: "s", resume: "r" } }, {
    committed: null,
    outcome: "unknown",
    last_boundary: "old_closed",
  });
  const sdk = replacementResult(r);
  assert.equal("committed" in sdk, false);
  assert.equal(sdk.outcome, "unknown");
  assert.deepEqual({ ...sdk, committed: r.committed }, r);
});
