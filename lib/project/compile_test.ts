import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { validateArtifact } from "../artifact/artifact.ts";
import { sha256Hex } from "../artifact/canonical.ts";
import { compile } from "./compile.ts";
import { loadProject } from "./load.ts";
import { starterFiles } from "./starter.ts";
import { tempStarter } from "./_test_project.ts";

const MANIFEST = starterFiles()[0].content;

Deno.test("compile is deterministic across runs and directories", async () => {
  const a = compile(await loadProject(await tempStarter()));
  const b = compile(await loadProject(await tempStarter()));
  const c = compile(await loadProject(await tempStarter()));
  strictEqual(a.artifacts[0].canonical, b.artifacts[0].canonical);
  strictEqual(a.artifacts[0].sha256, c.artifacts[0].sha256);
  strictEqual(a.artifacts[0].sha256, sha256Hex(a.artifacts[0].canonical));
});

Deno.test("the artifact has every field of docs/artifact-format.md and validates", async () => {
  const { artifacts } = compile(await loadProject(await tempStarter()));
  const artifact = validateArtifact(JSON.parse(artifacts[0].canonical));
  deepStrictEqual(Object.keys(artifact).sort(), [
    "application_id",
    "environment",
    "format",
    "image",
    "initial_offsets",
    "input",
    "model",
    "network",
    "output",
    "ownership",
    "predicate",
    "project",
    "projection",
    "schema",
    "version",
  ]);
  strictEqual(artifact.application_id, "sluice-orders-eligible_orders");
  deepStrictEqual(artifact.ownership, {
    managed_by: "sluice",
    project: "orders",
    environment: null,
  });
});

Deno.test("the application ID depends on project, environment and model only", async () => {
  const env = `${MANIFEST}environments:\n  prod: {}\n`;
  const p1 = compile(
    await loadProject(await tempStarter({ "sluice.yaml": env }), { environment: "prod" }),
  );
  strictEqual(p1.artifacts[0].artifact.application_id, "sluice-orders-prod-eligible_orders");
  strictEqual(p1.environment, "prod");
  const p2 = compile(
    await loadProject(
      await tempStarter({
        "sluice.yaml": env,
        "models/eligible_orders.sql": "SELECT order_id AS id FROM raw_orders WHERE amount >= 200",
      }),
      { environment: "prod" },
    ),
  );
  strictEqual(p2.artifacts[0].artifact.application_id, p1.artifacts[0].artifact.application_id);
  strictEqual(p2.artifacts[0].sha256 !== p1.artifacts[0].sha256, true);
});

Deno.test("a model without WHERE compiles to the literal TRUE predicate", async () => {
  const { artifacts } = compile(
    await loadProject(
      await tempStarter({
        "models/eligible_orders.sql": "SELECT order_id, amount FROM raw_orders",
      }),
    ),
  );
  deepStrictEqual(artifacts[0].artifact.predicate, {
    kind: "literal",
    type: "BOOLEAN",
    value: true,
  });
});

Deno.test("on_invalid: dead_letter is in the artifact; stop (written or not) keeps the bytes", async () => {
  const plain = compile(await loadProject(await tempStarter()));
  const output = "    output:\n      topic: eligible_orders\n";
  const stop = compile(
    await loadProject(
      await tempStarter({
        "sluice.yaml": MANIFEST.replace(output, `${output}    on_invalid: stop\n`),
      }),
    ),
  );
  strictEqual(stop.artifacts[0].canonical, plain.artifacts[0].canonical);
  strictEqual(plain.artifacts[0].canonical.includes("on_invalid"), false);
  const dl = compile(
    await loadProject(
      await tempStarter({
        "sluice.yaml": MANIFEST.replace(
          output,
          `${output}    on_invalid: dead_letter\n    dead_letter: { topic: eligible_orders_dlq }\n`,
        ),
      }),
    ),
  );
  deepStrictEqual(dl.artifacts[0].artifact.on_invalid, {
    policy: "dead_letter",
    topic: "eligible_orders_dlq",
  });
  strictEqual(dl.artifacts[0].artifact.application_id, plain.artifacts[0].artifact.application_id);
  validateArtifact(JSON.parse(dl.artifacts[0].canonical));
});
