import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import type { SluiceError } from "../errors.ts";
import { artifactSha256, changedArtifactFields, validateArtifact } from "./artifact.ts";
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

Deno.test("on_invalid is optional: absent means stop, dead_letter names a distinct topic", () => {
  const stop = sample();
  const dl = { ...sample(), on_invalid: { policy: "dead_letter" as const, topic: "dlq" } };
  validateArtifact(dl);
  // opting in changes the bytes; not opting in keeps them (no key, not null)
  strictEqual(canonicalJson(stop).includes("on_invalid"), false);
  strictEqual(artifactSha256(dl) !== artifactSha256(stop), true);
  invalid((a) => (a.on_invalid = null), "$.on_invalid");
  invalid((a) => (a.on_invalid = { policy: "stop", topic: "x" }), "$.on_invalid.policy");
  invalid((a) => (a.on_invalid = { policy: "dead_letter" }), "$.on_invalid.topic");
  invalid((a) => (a.on_invalid = { policy: "dead_letter", topic: "in" }), "$.on_invalid.topic");
  invalid((a) => (a.on_invalid = { policy: "dead_letter", topic: "out" }), "$.on_invalid.topic");
  invalid(
    (a) => (a.on_invalid = { policy: "dead_letter", topic: "x", extra: 1 }),
    "$.on_invalid.extra",
  );
});

Deno.test("changedArtifactFields compares required and optional fields (absent is null)", () => {
  const a = sample();
  deepStrictEqual(changedArtifactFields(a, sample()), []);
  const b = { ...sample(), on_invalid: { policy: "dead_letter" as const, topic: "dlq" } };
  deepStrictEqual(changedArtifactFields(a, b), ["on_invalid"]);
  const c = { ...b, network: "other" };
  deepStrictEqual(changedArtifactFields(b, c), ["network"]);
});
