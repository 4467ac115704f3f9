import { strictEqual, throws } from "node:assert/strict";
import { SluiceError } from "../errors.ts";
import { applicationId } from "./application_id.ts";

Deno.test("application ID is sluice-<project>[-<env>]-<model>", () => {
  strictEqual(applicationId("orders", null, "eligible_orders"), "sluice-orders-eligible_orders");
  strictEqual(applicationId("orders", "prod", "m1"), "sluice-orders-prod-m1");
});

Deno.test("parts that are not names, or IDs Kafka rejects, are errors", () => {
  for (const [p, e, m] of [["Orders", null, "m"], ["o", "a-b", "m"], ["o", null, "m!"]] as const) {
    throws(() => applicationId(p, e, m), (err: unknown) => {
      strictEqual((err as SluiceError).code, "ARTIFACT_INVALID_APPLICATION_ID");
      return true;
    });
  }
  throws(() => applicationId("p", null, "m".repeat(250)), SluiceError);
});
