import { strictEqual, throws } from "node:assert/strict";
import type { SluiceError } from "../errors.ts";
import { artifactSha256, validateArtifact } from "./artifact.ts";
import type { RunnerArtifact } from "./artifact.ts";
import { canonicalJson, sha256Hex } from "./canonical.ts";

function sample(): RunnerArtifact {
  return {
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
    predicate: {
      kind: "compare",
      op: ">=",
      left: { kind: "column", name: "a", type: "BIGINT" },
      right: { kind: "literal", type: "BIGINT", value: "100" },
    },
    image: `sha256:${"0".repeat(64)}`,
    network: "n",
    initial_offsets: "earliest",
    ownership: { managed_by: "sluice", project: "orders", environment: null },
  };
}

function invalid(mutate: (a: Record<string, unknown>) => void, path: string): void {
  const a = sample() as unknown as Record<string, unknown>;
  mutate(a);
  throws(() => validateArtifact(a), (e: unknown) => {
    strictEqual((e as SluiceError).code, "ARTIFACT_INVALID");
    strictEqual((e as SluiceError).message.startsWith(path), true, (e as SluiceError).message);
    return true;
  });
}

Deno.test("a well-formed artifact validates and hashes its canonical JSON", () => {
  const a = validateArtifact(sample());
  strictEqual(artifactSha256(a).length, 64);
  strictEqual(artifactSha256(a), sha256Hex(canonicalJson(a)));
});

Deno.test("validateArtifact rejects unknown, missing and malformed fields", () => {
  invalid((a) => (a.extra = 1), "$.extra");
  invalid((a) => delete a.network, "$.network");
  invalid((a) => (a.version = 2), "$.version");
  invalid((a) => (a.initial_offsets = "none"), "$.initial_offsets");
  invalid(
    (
      a,
    ) => ((a.predicate as { right: unknown }).right = {
      kind: "literal",
      type: "BIGINT",
      value: 100,
    }),
    "$.predicate.right.value",
  );
  invalid(
    (
      a,
    ) => ((a.predicate as { left: unknown }).left = { kind: "column", name: "a", type: "DOUBLE" }),
    "$.predicate.left",
  );
  invalid((a) => (a.projection = [{ source: "zz", name: "a" }]), "$.projection[0].source");
  invalid((a) => ((a.ownership as { project: string }).project = "x"), "$.ownership.project");
});
