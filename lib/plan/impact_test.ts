// Unit tests of the impact section: declared externals (with group_id), live groups marked
// declared/undeclared, the uncertainties that must never be dropped.
import assert from "node:assert/strict";
import { loadProject } from "../project/load.ts";
import { tempStarter } from "../project/_test_project.ts";
import { planImpact } from "./impact.ts";

async function starter(edit: (manifest: string) => string = (t) => t) {
  const dir = await tempStarter();
  const path = `${dir}/sluice.yaml`;
  await Deno.writeTextFile(path, edit(await Deno.readTextFile(path)));
  try {
    return await loadProject(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("impact: an external's group_id decides which live group is declared", async () => {
  const project = await starter((t) =>
    t.replace(
      "    consumes: eligible_orders\n",
      "    consumes: eligible_orders\n    group_id: fraud-v2\n",
    )
  );
  assert.equal(project.manifest.externals[0].groupId, "fraud-v2");
  const impact = planImpact({
    project,
    changes: [{ model: "eligible_orders", change: "replace_predicate" }],
    live: {
      observed_at: "2026-12-07T00:00:00.000Z",
      topics: {
        eligible_orders: [
          { group_id: "fraud_app", state: "Stable", members: 1, committed: { "0": "1" } },
          { group_id: "fraud-v2", state: "Stable", members: 2, committed: { "0": "5" } },
        ],
      },
    },
    liveUnobserved: "not read",
  });
  const m = impact.models[0];
  assert.ok(m.live.observed);
  if (!m.live.observed) return;
  // the name alone no longer matches once group_id is declared
  assert.deepEqual(m.live.groups.map((g) => g.declared_as), [null, "fraud_app"]);
  assert.equal(m.declared[0].group_id, "fraud-v2");
  assert.equal(m.uncertainties.filter((u) => /matches no external declaration/.test(u)).length, 1);
});

Deno.test("impact: no declaration and no live group is reported as uncertainty, never as 'no consumers'", async () => {
  const project = await starter((t) => t.replace(/externals:[\s\S]*$/, ""));
  assert.equal(project.manifest.externals.length, 0);
  const impact = planImpact({
    project,
    changes: [{ model: "eligible_orders", change: "create" }],
    live: { observed_at: "2026-12-07T00:00:00.000Z", topics: {} },
    liveUnobserved: "not read",
  });
  const m = impact.models[0];
  assert.deepEqual(m.declared, []);
  assert.deepEqual(m.downstream_models, []);
  assert.ok(
    m.uncertainties.some((u) => /absence of declarations is not absence of consumers/.test(u)),
  );
  assert.ok(m.uncertainties.some((u) => /invisible to Kafka's group listing/.test(u)));
});

Deno.test("impact: a declared column the model no longer outputs is flagged; removed models have no topic", async () => {
  // fraud_app also reads `customer`, which the model does not output
  const project = await starter((t) =>
    t.trimEnd() + "\n      - { name: customer, type: STRING }\n"
  );
  const impact = planImpact({
    project,
    changes: [
      { model: "eligible_orders", change: "blocked" },
      { model: "old_model", change: "remove" },
      { model: "eligible_orders", change: "blocked" },
    ],
    live: null,
    liveUnobserved: "offline plan",
  });
  assert.equal(impact.models.length, 2);
  assert.deepEqual(
    impact.models[0].declared[0].columns.map((c) => [c.name, c.in_output]),
    [["order_id", true], ["amount", true], ["customer", false]],
  );
  assert.equal(impact.models[1].output_topic, null);
  assert.deepEqual(impact.models[1].live, {
    observed: false,
    reason: "the model is no longer declared",
  });
});

Deno.test("manifest: an invalid external group_id is a located error", async () => {
  await assert.rejects(
    () =>
      starter((t) =>
        t.replace(
          "    consumes: eligible_orders\n",
          "    consumes: eligible_orders\n    group_id: 'a b'\n",
        )
      ),
    (e) =>
      (e as { code?: string }).code === "MANIFEST_INVALID_VALUE" &&
      /externals\.fraud_app\.group_id/.test((e as Error).message) &&
      /sluice\.yaml:\d+:\d+/.test((e as Error).message),
  );
});
