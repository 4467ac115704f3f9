import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { checkExternals } from "./externals.ts";
import { loadProject } from "./load.ts";
import { starterFiles } from "./starter.ts";
import { tempStarter } from "./_test_project.ts";

Deno.test("the starter's external declaration matches its model", async () => {
  deepStrictEqual(checkExternals(await loadProject(await tempStarter())), []);
});

Deno.test("a dropped column a declared application reads is reported at the declaration", async () => {
  const project = await loadProject(
    await tempStarter({ "models/eligible_orders.sql": "SELECT order_id FROM raw_orders" }),
  );
  const [finding] = checkExternals(project);
  strictEqual(finding.code, "PROJECT_EXTERNAL_COLUMN_MISSING");
  const manifest = starterFiles()[0].content;
  const line =
    manifest.slice(0, manifest.lastIndexOf("{ name: amount, type: BIGINT }")).split("\n").length;
  strictEqual(finding.location?.line, line);
  strictEqual(finding.message.includes("'fraud_app' reads column 'amount'"), true);
  deepStrictEqual(finding.evidence, {
    external: "fraud_app",
    model: "eligible_orders",
    column: "amount",
    expected_type: "BIGINT",
    actual_type: null,
  });
});

Deno.test("a retyped column (alias over another field) is reported", async () => {
  const project = await loadProject(
    await tempStarter({
      "models/eligible_orders.sql": "SELECT order_id, paid AS amount FROM raw_orders",
    }),
  );
  const [finding] = checkExternals(project);
  strictEqual(finding.code, "PROJECT_EXTERNAL_COLUMN_TYPE_CHANGED");
  strictEqual(finding.message.includes("outputs it as BOOLEAN"), true);
});
