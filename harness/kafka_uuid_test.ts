// No services: the harness's Kafka UUIDs (cluster IDs) are ones Kafka's own tools accept.
import { strictEqual } from "node:assert/strict";
import { newKafkaUuid } from "./env.ts";

Deno.test("newKafkaUuid never starts with '-' (kafka-storage.sh reads it as an option), 22 base64url characters", () => {
  // one in 64 random IDs would start with "-": 4,000 draws hold ~62 such chances
  for (let i = 0; i < 4_000; i++) {
    const id = newKafkaUuid();
    strictEqual(id.startsWith("-"), false, id);
    strictEqual(/^[A-Za-z0-9_-]{22}$/.test(id), true, id);
  }
});
