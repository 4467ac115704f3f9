import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import type { SluiceError } from "../errors.ts";
import { loadProject, readProject } from "./load.ts";
import { starterFiles } from "./starter.ts";
import { tempStarter } from "./_test_project.ts";

const MANIFEST = starterFiles()[0].content;
const lineOf = (needle: string) => MANIFEST.slice(0, MANIFEST.indexOf(needle)).split("\n").length;

Deno.test("the starter loads with its model checked against raw_orders", async () => {
  const dir = await tempStarter();
  const project = await loadProject(dir);
  const model = project.models[0];
  strictEqual(model.name, "eligible_orders");
  strictEqual(model.from, "raw_orders");
  strictEqual(model.outputPartitions, 3);
  deepStrictEqual(model.projection.map((p) => p.name), ["order_id", "amount", "paid"]);
  strictEqual(model.predicate.kind, "and");
});

Deno.test("PROJECT_NOT_FOUND without sluice.yaml", async () => {
  const dir = await Deno.makeTempDir();
  await rejects(loadProject(dir), (e: unknown) => (e as SluiceError).code === "PROJECT_NOT_FOUND");
});

Deno.test("PROJECT_MODEL_NOT_FOUND points at the sql key in sluice.yaml", async () => {
  const dir = await tempStarter();
  await Deno.remove(join(dir, "models/eligible_orders.sql"));
  const { errors } = await readProject(dir);
  strictEqual(errors[0].code, "PROJECT_MODEL_NOT_FOUND");
  strictEqual(errors[0].location?.file, join(dir, "sluice.yaml"));
  strictEqual(errors[0].location?.line, lineOf("sql: models/eligible_orders.sql"));
});

Deno.test("SQL errors carry the model file's path, line and column", async () => {
  const dir = await tempStarter({
    "models/eligible_orders.sql": "SELECT order_id\nFROM raw_orders\nWHERE amount >= '100'\n",
  });
  const { errors } = await readProject(dir);
  strictEqual(errors[0].code, "TYPE_MISMATCH");
  deepStrictEqual(errors[0].location, {
    file: join(dir, "models/eligible_orders.sql"),
    line: 3,
    column: 7,
  });
});

Deno.test("SQL_UNKNOWN_SOURCE and SQL_DUPLICATE_COLUMN", async () => {
  const a = await readProject(
    await tempStarter({ "models/eligible_orders.sql": "SELECT order_id FROM orders" }),
  );
  strictEqual(a.errors[0].code, "SQL_UNKNOWN_SOURCE");
  strictEqual(a.errors[0].message.includes("declared sources: raw_orders"), true);
  const b = await readProject(
    await tempStarter({
      "models/eligible_orders.sql": "SELECT order_id, amount AS order_id FROM raw_orders",
    }),
  );
  strictEqual(b.errors[0].code, "SQL_DUPLICATE_COLUMN");
  strictEqual(b.errors[0].location?.column, 18);
});

Deno.test("output partitions are required when the source is external", async () => {
  const dir = await tempStarter({
    "sluice.yaml": MANIFEST.replace("kind: managed\n    partitions: 3", "kind: external"),
  });
  const { errors } = await readProject(dir);
  strictEqual(errors[0].code, "MANIFEST_MISSING_KEY");
  strictEqual(errors[0].message.includes("'partitions'"), true);
});

Deno.test("a model path may not leave the project directory", async () => {
  const dir = await tempStarter({
    "sluice.yaml": MANIFEST.replace("sql: models/eligible_orders.sql", "sql: ../x.sql"),
  });
  const { errors } = await readProject(dir);
  strictEqual(errors[0].code, "MANIFEST_INVALID_VALUE");
});

Deno.test("several problems are combined into PROJECT_INVALID", async () => {
  const dir = await tempStarter({
    "sluice.yaml": MANIFEST.replace("initial_offsets: earliest", "initial_offsets: soon").replace(
      "sluice-net",
      "-bad",
    ),
  });
  await rejects(loadProject(dir), (e: unknown) => {
    strictEqual((e as SluiceError).code, "PROJECT_INVALID");
    return true;
  });
});
