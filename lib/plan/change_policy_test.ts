import assert from "node:assert/strict";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { ARTIFACT_FIELDS, ARTIFACT_OPTIONAL_FIELDS } from "../artifact/artifact.ts";
import { compile } from "../project/compile.ts";
import { loadProject } from "../project/load.ts";
import { tempStarter } from "../project/_test_project.ts";
import { CHANGE_POLICY, classifyChange } from "./change_policy.ts";

async function starterArtifact(): Promise<RunnerArtifact> {
  const dir = await tempStarter();
  try {
    return compile(await loadProject(dir)).artifacts[0].artifact;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("change policy: every artifact field has one, and only the predicate has a journey", () => {
  assert.deepEqual(
    Object.keys(CHANGE_POLICY).sort(),
    [...ARTIFACT_FIELDS, ...ARTIFACT_OPTIONAL_FIELDS].sort(),
  );
  assert.deepEqual(
    Object.entries(CHANGE_POLICY).filter(([, p]) => p.kind === "journey").map(([f]) => f),
    ["predicate"],
  );
});

Deno.test("classifyChange: a predicate alone is a replacement; nothing is nothing; anything else is its blocker", async () => {
  const a = await starterArtifact();
  assert.deepEqual(classifyChange("m", a, structuredClone(a)), {
    fields: [],
    journey: null,
    blockers: [],
  });
  const p = {
    ...structuredClone(a),
    predicate: { kind: "literal", value: true },
  } as RunnerArtifact;
  assert.deepEqual(classifyChange("m", a, p), {
    fields: ["predicate"],
    journey: "replace_predicate",
    blockers: [],
  });
  const both = { ...p, image: "sha256:" + "e".repeat(64) };
  const c = classifyChange("m", a, both);
  assert.deepEqual(c.fields, ["predicate", "image"]);
  assert.equal(c.journey, null);
  assert.deepEqual(c.blockers.map((b) => [b.code, b.message, b.evidence.field]), [[
    "BLOCKED_IMAGE_CHANGE",
    "model m: the runner image changed; only the predicate of a running runner may be replaced",
    "image",
  ]]);
  assert.deepEqual(c.blockers[0].evidence, {
    field: "image",
    prior: a.image,
    desired: both.image,
  });
  // an absent optional field compares and shows as null
  const dlq = { ...structuredClone(a), on_invalid: { action: "dead_letter", topic: "dlq" } };
  const d = classifyChange("m", a, dlq as unknown as RunnerArtifact);
  assert.deepEqual(d.blockers.map((b) => [b.code, b.evidence.prior]), [[
    "BLOCKED_INVALID_POLICY_CHANGE",
    null,
  ]]);
  const renamed = classifyChange("m", a, { ...structuredClone(a), application_id: "other" });
  assert.deepEqual(renamed.blockers.map((b) => [b.code, b.message]), [[
    "BLOCKED_IDENTITY_CHANGE",
    "model m: the application_id changed; only the predicate of a running runner may be replaced",
  ]]);
});
