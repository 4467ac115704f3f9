import assert from "node:assert/strict";
import { parseManifest, readManifest } from "./manifest.ts";

const BASE = `project: orders
kafka:
  bootstrap_host: localhost:19092
  bootstrap_internal: kafka:9092
network: sluice-net
image: sha256:${"a".repeat(64)}
initial_offsets: earliest
state:
  backend: local
sources:
  raw_orders:
    kind: managed
    partitions: 1
    schema:
      - { name: order_id, type: STRING }
models:
  eligible:
    sql: models/eligible.sql
    output: { topic: eligible_orders }
`;

/** "sluice.yaml:line:col" of the first occurrence of `needle` (which must be unique). */
function at(text: string, needle: string): string {
  const i = text.indexOf(needle);
  assert.ok(i >= 0 && text.indexOf(needle, i + 1) < 0, `'${needle}' must occur once`);
  const before = text.slice(0, i).split("\n");
  return `sluice.yaml:${before.length}:${before.at(-1)!.length + 1}`;
}

function fails(text: string, code: string, needle: string, fragment: string) {
  const { manifest, errors } = readManifest(text, "sluice.yaml");
  assert.equal(manifest, null);
  const e = errors.find((x) => x.code === code);
  if (!e) throw new Error(`no ${code} in:\n${errors.map((x) => x.message).join("\n")}`);
  const where = at(text, needle);
  assert.equal(`${e.location?.file}:${e.location?.line}:${e.location?.column}`, where, e.message);
  assert.ok(e.message.includes(fragment), `${e.message}\nlacks: ${fragment}`);
  assert.equal(errors.filter((x) => x.code === code).length, 1, "reported once");
}

Deno.test("lifecycle.runner_removals names the models whose runners are taken down", () => {
  const m = parseManifest(
    `${BASE}lifecycle:\n  runner_removals:\n    - model: big_orders\n    - { model: old_one }\n`,
    "sluice.yaml",
  );
  assert.deepEqual(m.runnerRemovals.map((r) => r.model), ["big_orders", "old_one"]);
  assert.deepEqual(m.connectorRemovals, []);
});

Deno.test("a manifest without lifecycle removes no runner", () => {
  assert.deepEqual(parseManifest(BASE, "sluice.yaml").runnerRemovals, []);
});

Deno.test("a removal of a model that is still declared is a located collision", () => {
  fails(
    `${BASE}lifecycle:\n  runner_removals:\n    - model: eligible\n`,
    "MANIFEST_REMOVAL_COLLISION",
    "eligible\n",
    "'models:' still declares",
  );
});

Deno.test("a model removed twice, a bad name, a missing or unknown key are located", () => {
  fails(
    `${BASE}lifecycle:\n  runner_removals:\n    - model: gone\n    - model: gone2\n    - { model: gone }\n`,
    "MANIFEST_DUPLICATE_NAME",
    "gone }",
    "removed twice",
  );
  fails(
    `${BASE}lifecycle:\n  runner_removals:\n    - model: Bad-Name\n`,
    "MANIFEST_INVALID_NAME",
    "Bad-Name",
    "must match",
  );
  fails(
    `${BASE}lifecycle:\n  runner_removals:\n    - keep: x\n`,
    "MANIFEST_UNKNOWN_KEY",
    "keep: x",
    "allowed keys: model",
  );
  fails(
    `${BASE}lifecycle:\n  runner_removals:\n    - {}\n`,
    "MANIFEST_MISSING_KEY",
    "{}",
    "missing required key 'model'",
  );
  fails(
    `${BASE}lifecycle:\n  runner_removals: { model: x }\n`,
    "MANIFEST_WRONG_TYPE",
    "{ model: x }",
    "must be a list",
  );
});

Deno.test("lifecycle stays one mapping: its type and unknown keys are reported once", () => {
  fails(
    `${BASE}lifecycle:\n  topic_removals: []\n`,
    "MANIFEST_UNKNOWN_KEY",
    "topic_removals",
    "allowed keys: connector_removals, runner_removals",
  );
  fails(`${BASE}lifecycle: [1]\n`, "MANIFEST_WRONG_TYPE", "[1]", "must be a mapping");
});
