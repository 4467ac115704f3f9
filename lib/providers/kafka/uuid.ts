/**
 * Kafka UUIDs (topic IDs) in the form Kafka itself prints: 22 characters of unpadded
 * base64url over the 16 bytes (`Uuid.toString()` in Java, `kafka-topics --describe`).
 * `@platformatic/kafka` reports topic IDs as dashed hex; sluice stores, labels and compares
 * only the Kafka form, so the runner's Java Admin and the TypeScript side agree byte for byte.
 *
 * @example
 * ```ts
 * import { toKafkaUuid } from "./uuid.ts";
 * toKafkaUuid("961aa5d3-883e-4b99-a493-9cf4e9a5b055"); // "lhql04g-S5mkk5z06aWwVQ"
 * ```
 * @module
 */
import { Buffer } from "node:buffer";

const HEX_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KAFKA_UUID = /^[A-Za-z0-9_-]{22}$/;

/** Convert a dashed-hex or already-Kafka-form UUID to Kafka's base64url form. */
export function toKafkaUuid(id: string): string {
  if (KAFKA_UUID.test(id)) return id;
  if (!HEX_UUID.test(id)) throw new TypeError(`not a UUID: ${JSON.stringify(id)}`);
  return Buffer.from(id.replaceAll("-", ""), "hex").toString("base64url");
}

/** True for the all-zero UUID Kafka uses to mean "no topic ID". */
export function isZeroUuid(id: string): boolean {
  return toKafkaUuid(id) === "AAAAAAAAAAAAAAAAAAAAAA";
}
