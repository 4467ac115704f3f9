import assert from "node:assert/strict";
import { isZeroUuid, toKafkaUuid } from "./uuid.ts";

Deno.test("dashed hex converts to Kafka's unpadded base64url form", () => {
  assert.equal(toKafkaUuid("961aa5d3-883e-4b99-a493-9cf4e9a5b055"), "lhql04g-S5mkk5z06aWwVQ");
});

Deno.test("a Kafka-form UUID is returned unchanged", () => {
  assert.equal(toKafkaUuid("lhql04g-S5mkk5z06aWwVQ"), "lhql04g-S5mkk5z06aWwVQ");
});

Deno.test("the zero UUID is recognised in both forms", () => {
  assert.ok(isZeroUuid("00000000-0000-0000-0000-000000000000"));
  assert.ok(isZeroUuid("AAAAAAAAAAAAAAAAAAAAAA"));
  assert.ok(!isZeroUuid("lhql04g-S5mkk5z06aWwVQ"));
});

Deno.test("anything else is rejected, not guessed", () => {
  assert.throws(() => toKafkaUuid("not-a-uuid"), /not a UUID/);
});
