import assert from "node:assert/strict";
import { compile } from "../../project/compile.ts";
import { loadProject } from "../../project/load.ts";
import { tempStarter } from "../../project/_test_project.ts";
import { typedActionSha256 } from "../../plan/plan.ts";
import { parseMountedPlan } from "../../protocol/mounted_plan.ts";
import type { RunnerAction } from "../../state/journal.ts";
import { evidenceJson, reviewedEvidence } from "../../validation/reviewed_evidence.ts";
import { LABEL, RUNNER_ENV, volumeName } from "../labels.ts";
import { candidateSpec, candidateTarget, expectCandidate } from "./candidate.ts";

const dir = await tempStarter();
const a = compile(await loadProject(dir)).artifacts[0];
await Deno.remove(dir, { recursive: true });
const ACTION: RunnerAction = {
  type: "replace_runner_predicate",
  model: a.model,
  application_id: a.artifact.application_id,
  prior_artifact_sha256: a.sha256,
  desired_artifact_sha256: a.sha256,
  evidence: evidenceJson({
    old_container_id: "a".repeat(64),
    old_container_name: a.artifact.application_id,
    old_generation: null,
    old_plan_sha256: null,
    volume: { name: volumeName(a.artifact.application_id), instance_id: "v" },
    identities: {
      cluster_id: "C",
      input_topic_id: "I",
      output_topic_id: "O",
      docker_daemon_id: "D",
      image_id: a.artifact.image,
      network_id: "N",
    },
    offsets_lower_bounds: [],
    prior_artifact: a.artifact,
    desired_artifact: a.artifact,
  }),
};

Deno.test("the candidate is derived from the operation: name, generation and the exact mounted plan", () => {
  const x = expectCandidate(ACTION, "OP", 0, typedActionSha256(ACTION), "kafka:9092");
  assert.equal(x.name, `${a.artifact.application_id}.op-OP.a0`);
  assert.equal(x.generation, "OP/0");
  const mounted = parseMountedPlan(x.planBytes);
  assert.deepEqual(mounted.identity, {
    cluster_id: "C",
    input_topic_id: "I",
    output_topic_id: "O",
  });
  assert.equal(mounted.bootstrap_servers, "kafka:9092");
  assert.equal(mounted.artifact_sha256, a.sha256);
});

Deno.test("the candidate's spec binds the generation labels, the retained volume and only sluice's variables", () => {
  const x = expectCandidate(ACTION, "OP", 0, "fp", "kafka:9092");
  const spec = candidateSpec(x, "/plans/p.json", ["PATH=/usr/bin"], { "ci.run": "t" });
  assert.equal(spec.labels[LABEL.operationId], "OP");
  assert.equal(spec.labels[LABEL.generation], "OP/0");
  assert.equal(spec.labels[LABEL.evidenceFingerprint], "fp");
  assert.equal(spec.labels[LABEL.planSha256], x.planSha256);
  assert.equal(spec.labels["ci.run"], "t");
  assert.equal(spec.volume, volumeName(a.artifact.application_id));
  assert.deepEqual(spec.env, [
    "PATH=/usr/bin",
    `${RUNNER_ENV.planSha256}=${x.planSha256}`,
    `${RUNNER_ENV.generation}=OP/0`,
  ]);
});

Deno.test("a dead-letter model's candidate binds the reviewed dead-letter topic ID and observes that topic", () => {
  const artifact = { ...a.artifact, on_invalid: { policy: "dead_letter" as const, topic: "dlq" } };
  const reviewed = reviewedEvidence(ACTION);
  const action: RunnerAction = {
    ...ACTION,
    evidence: evidenceJson({
      ...reviewed,
      identities: { ...reviewed.identities, dead_letter_topic_id: "L" },
      prior_artifact: artifact,
      desired_artifact: artifact,
    }),
  };
  const x = expectCandidate(action, "OP", 0, typedActionSha256(action), "kafka:9092");
  assert.deepEqual(parseMountedPlan(x.planBytes).identity, {
    cluster_id: "C",
    input_topic_id: "I",
    output_topic_id: "O",
    dead_letter_topic_id: "L",
  });
  assert.equal(candidateTarget(x).deadLetterTopic, "dlq");
  assert.equal(
    candidateTarget(expectCandidate(ACTION, "OP", 0, "fp", "k:1")).deadLetterTopic,
    undefined,
  );
});
