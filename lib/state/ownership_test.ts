import assert from "node:assert/strict";
import { ownedRunner } from "../../testing/state/fixtures.ts";
import { emptyOwnership, stateChecksum, validateOwnership } from "./ownership.ts";

Deno.test("the state checksum is stable and changes with any owned field", () => {
  const own = ownedRunner("orders", null);
  assert.equal(stateChecksum(own), stateChecksum(structuredClone(own)));
  const other = structuredClone(own);
  other.runners[0].volume.instance_id = crypto.randomUUID();
  assert.notEqual(stateChecksum(other), stateChecksum(own));
});

Deno.test("ownership validation names the problem", () => {
  assert.doesNotThrow(() => validateOwnership(emptyOwnership("orders", null)));
  const bad = ownedRunner("orders", "prod");
  bad.runners[0].artifact_sha256 = "XYZ";
  assert.throws(() => validateOwnership(bad), /runner eligible_orders: artifact_sha256/);
  assert.throws(
    () => validateOwnership({ ...emptyOwnership("orders", null), serial: -1 }),
    /serial must be a non-negative integer/,
  );
});
