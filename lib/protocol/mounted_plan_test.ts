// The mounted plan binds the dead-letter topic's ID exactly when the artifact has on_invalid
// (the runner's gate refuses a dead-letter topic deleted and recreated since: exit 12).
import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import type { SluiceError } from "../errors.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { runnerTopics } from "../artifact/artifact.ts";
import { canonicalJson } from "../artifact/canonical.ts";
import { buildMountedPlan, mountedPlanBytes, parseMountedPlan } from "./mounted_plan.ts";

const STOP: RunnerArtifact = {
  format: "sluice.runner-artifact",
  version: 1,
  project: "orders",
  environment: null,
  model: "m",
  application_id: "sluice-orders-m",
  input: { topic: "in" },
  output: { topic: "out" },
  schema: [{ name: "a", type: "BIGINT", nullable: false }],
  projection: [{ source: "a", name: "a" }],
  predicate: { kind: "literal", type: "BOOLEAN", value: true },
  image: `sha256:${"0".repeat(64)}`,
  network: "n",
  initial_offsets: "earliest",
  ownership: { managed_by: "sluice", project: "orders", environment: null },
};
const DL: RunnerArtifact = { ...STOP, on_invalid: { policy: "dead_letter", topic: "dlq" } };
const IDS = { cluster_id: "C", input_topic_id: "I", output_topic_id: "O" };

function rejected(f: () => unknown, message: RegExp): void {
  throws(f, (e: unknown) => {
    strictEqual((e as SluiceError).code, "PLAN_MOUNTED_INVALID");
    strictEqual(message.test((e as SluiceError).message), true, (e as SluiceError).message);
    return true;
  });
}

/** Mounted plan bytes with the identity replaced, bypassing the builder's check. */
function bytesWith(artifact: RunnerArtifact, identity: Record<string, unknown>): Uint8Array {
  const plan = { ...buildMountedPlan(STOP, "kafka:9092", IDS), identity };
  const { artifact_sha256 } = buildMountedPlan(
    artifact,
    "kafka:9092",
    artifact.on_invalid ? { ...IDS, dead_letter_topic_id: "L" } : IDS,
  );
  return new TextEncoder().encode(canonicalJson({ ...plan, artifact, artifact_sha256 }));
}

Deno.test("runnerTopics: input, output and the dead-letter topic when there is one", () => {
  deepStrictEqual(runnerTopics(STOP), ["in", "out"]);
  deepStrictEqual(runnerTopics(DL), ["in", "out", "dlq"]);
});

Deno.test("the dead-letter topic ID is bound exactly with on_invalid, and read back", () => {
  const dl = buildMountedPlan(DL, "kafka:9092", { ...IDS, dead_letter_topic_id: "L" });
  deepStrictEqual(parseMountedPlan(mountedPlanBytes(dl).bytes).identity, {
    ...IDS,
    dead_letter_topic_id: "L",
  });
  // a model that does not opt in keeps the identity it always had (no key, same bytes)
  const stop = mountedPlanBytes(buildMountedPlan(STOP, "kafka:9092", IDS));
  strictEqual(new TextDecoder().decode(stop.bytes).includes("dead_letter"), false);
  deepStrictEqual(parseMountedPlan(stop.bytes).identity, IDS);

  rejected(() => buildMountedPlan(DL, "kafka:9092", IDS), /dead_letter_topic_id is missing.*dlq/);
  rejected(
    () => buildMountedPlan(STOP, "kafka:9092", { ...IDS, dead_letter_topic_id: "L" }),
    /bound, but the artifact has no on_invalid/,
  );
  rejected(() => parseMountedPlan(bytesWith(DL, IDS)), /dead_letter_topic_id is missing/);
  rejected(
    () => parseMountedPlan(bytesWith(STOP, { ...IDS, dead_letter_topic_id: "L" })),
    /no on_invalid/,
  );
  rejected(
    () => parseMountedPlan(bytesWith(DL, { ...IDS, dead_letter_topic_id: 7 })),
    /dead_letter_topic_id must be a string/,
  );
  rejected(
    () => parseMountedPlan(bytesWith(STOP, { ...IDS, extra: "x" })),
    /identity\.extra is not a known field/,
  );
});
