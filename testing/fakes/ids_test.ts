import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { toKafkaUuid } from "../../lib/providers/kafka/uuid.ts";
import { dockerDaemonId, hex64, kafkaUuid, randomIds, seededIds, uuidOf } from "./ids.ts";

Deno.test("a seeded source gives the same sequence for the same seed and another for another", () => {
  const a = seededIds("sweep-7");
  const b = seededIds("sweep-7");
  const c = seededIds("sweep-8");
  const xs = [a.uuid(), a.uuid(), a.uuid()];
  assert.deepEqual([b.uuid(), b.uuid(), b.uuid()], xs);
  assert.equal(new Set(xs).size, 3, "fresh IDs differ");
  assert.notEqual(c.uuid(), xs[0]);
});

Deno.test("IDs have the forms the real systems report", () => {
  const ids = seededIds("forms");
  assert.match(ids.uuid(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.match(hex64(ids), /^[0-9a-f]{64}$/);
  const k = kafkaUuid(ids);
  assert.match(k, /^[A-Za-z0-9_-]{22}$/);
  assert.equal(toKafkaUuid(k), k, "already in Kafka's form");
  const bytes = Buffer.from(k, "base64url");
  assert.equal(bytes.length, 16);
  assert.equal(bytes[6] >> 4, 4, "version 4, as Kafka's Uuid.randomUuid");
  assert.match(dockerDaemonId(ids), /^([A-Z2-7]{4}:){11}[A-Z2-7]{4}$/);
  assert.equal(uuidOf(new Uint8Array(16)), "00000000-0000-4000-8000-000000000000");
  assert.notEqual(randomIds().uuid(), randomIds().uuid());
});
