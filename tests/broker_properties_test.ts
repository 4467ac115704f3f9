// No services: the broker settings a harness environment can override (harness/env.ts).
import assert from "node:assert/strict";
import { brokerServerProperties } from "../harness/env.ts";

Deno.test("broker properties: null removes a setting (Kafka's default), a value replaces it", async () => {
  const image = await Deno.readTextFile(
    new URL("../images/kafka/server.properties", import.meta.url),
  );
  assert.ok(image.includes("\ngroup.initial.rebalance.delay.ms=0\n"), "the test broker sets 0");
  const dflt = brokerServerProperties({ "group.initial.rebalance.delay.ms": null });
  assert.ok(!dflt.includes("group.initial.rebalance.delay.ms"));
  const three = brokerServerProperties({ "group.initial.rebalance.delay.ms": "3000" });
  assert.equal(
    three.match(/^group\.initial\.rebalance\.delay\.ms=.*$/gm)?.join(),
    "group.initial.rebalance.delay.ms=3000",
  );
  // everything else is the image's file, line for line
  const others = (t: string) =>
    t.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("group.initial.rebalance"));
  assert.deepEqual(others(dflt), others(image));
  assert.deepEqual(others(three), others(image));
});
