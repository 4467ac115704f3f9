import assert from "node:assert/strict";
import type { SluiceError } from "../errors.ts";
import { compile } from "../project/compile.ts";
import { loadProject } from "../project/load.ts";
import { tempStarter } from "../project/_test_project.ts";
import type { RunnerAction } from "../state/journal.ts";
import { evidenceJson, type ReviewedEvidence, reviewedEvidence } from "./reviewed_evidence.ts";

const dir = await tempStarter();
const compiled = compile(await loadProject(dir)).artifacts[0];
await Deno.remove(dir, { recursive: true });

const EVIDENCE: ReviewedEvidence = {
  old_container_id: "a".repeat(64),
  old_container_name: compiled.artifact.application_id,
  old_generation: "op/0",
  old_plan_sha256: "b".repeat(64),
  volume: { name: `${compiled.artifact.application_id}-state`, instance_id: "vol-uuid" },
  identities: {
    cluster_id: "C",
    input_topic_id: "I",
    output_topic_id: "O",
    docker_daemon_id: "D",
    image_id: "sha256:" + "1".repeat(64),
    network_id: "N",
  },
  offsets_lower_bounds: [{ topic: "raw_orders", partition: 0, offset: "5" }],
  prior_artifact: compiled.artifact,
  desired_artifact: compiled.artifact,
};

function action(evidence: RunnerAction["evidence"]): RunnerAction {
  return {
    type: "replace_runner_predicate",
    model: compiled.model,
    application_id: compiled.artifact.application_id,
    prior_artifact_sha256: compiled.sha256,
    desired_artifact_sha256: compiled.sha256,
    evidence,
  };
}

const invalidAt = (path: string) => (e: unknown) =>
  (e as SluiceError).code === "PLAN_INVALID" && (e as Error).message.includes(path);

Deno.test("reviewed evidence round-trips through the journal's JSON unchanged", () => {
  const json = evidenceJson(EVIDENCE);
  assert.deepEqual(reviewedEvidence(action(json)), EVIDENCE);
  assert.deepEqual(JSON.parse(JSON.stringify(json)), json);
});

Deno.test("a missing or an extra evidence field is invalid, naming the path", () => {
  const { volume: _volume, ...missing } = evidenceJson(EVIDENCE);
  assert.throws(() => reviewedEvidence(action(missing)), invalidAt("evidence has fields"));
  const extra = { ...evidenceJson(EVIDENCE), note: "x" };
  assert.throws(() => reviewedEvidence(action(extra)), invalidAt("evidence has fields"));
});

Deno.test("offsets, identities and artifacts are checked field by field", () => {
  const json = evidenceJson(EVIDENCE);
  const bad = (edit: (e: Record<string, unknown>) => void) => {
    const copy = structuredClone(json) as Record<string, unknown>;
    edit(copy);
    return action(copy as RunnerAction["evidence"]);
  };
  assert.throws(
    () =>
      reviewedEvidence(bad((e) => {
        e.offsets_lower_bounds = [{ topic: "raw_orders", partition: 0, offset: "-1" }];
      })),
    invalidAt("evidence.offsets_lower_bounds[0].offset"),
  );
  assert.throws(
    () => reviewedEvidence(bad((e) => ((e.identities as Record<string, unknown>).image_id = ""))),
    invalidAt("evidence.identities.image_id"),
  );
  assert.throws(
    () => reviewedEvidence(bad((e) => ((e.prior_artifact as Record<string, unknown>).x = 1))),
    invalidAt("evidence.prior_artifact"),
  );
});

Deno.test("the desired artifact must be the action's model and application ID", () => {
  const other = { ...compiled.artifact, application_id: "someone-else" };
  const json = evidenceJson({ ...EVIDENCE, desired_artifact: other });
  assert.throws(() => reviewedEvidence(action(json)), invalidAt("evidence.desired_artifact"));
});
