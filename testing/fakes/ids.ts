/**
 * Injected ID sources: every identifier a fake hands out (container IDs, topic IDs, UUIDs)
 * comes from an {@link IdSource}, so a sweep seeded the same way produces the same IDs. The
 * formats match what the real systems report: 64 lower-case hex characters for Docker object
 * IDs, Kafka's 22-character base64url UUIDs, RFC 4122 version-4 UUIDs, and Docker 20's daemon
 * ID (twelve groups of four base32 characters). The world-backed source, whose counter
 * survives process death, lives with the world ({@link "./world.ts"}).
 *
 * @example
 * ```ts
 * import { hex64, seededIds } from "./ids.ts";
 * const ids = seededIds("sweep-1");
 * console.log(ids.uuid(), hex64(ids));
 * ```
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";

/** A source of fresh identifiers. */
export interface IdSource {
  /** 32 fresh bytes (the same sequence for the same seed). */
  bytes(): Uint8Array;
  /** A fresh RFC 4122 version-4 UUID in its dashed lower-case form. */
  uuid(): string;
}

/**
 * The n-th 32 bytes of a seed: sha256 of `<seed>/<n>`.
 *
 * @example
 * ```ts
 * import { seededBytes } from "./ids.ts";
 * console.log(seededBytes("s", 0).length); // 32
 * ```
 */
export function seededBytes(seed: string, n: number): Uint8Array {
  return new Uint8Array(createHash("sha256").update(`${seed}/${n}`).digest());
}

/**
 * Build an {@link IdSource} from a function returning 32 fresh bytes.
 *
 * @example
 * ```ts
 * import { idSource } from "./ids.ts";
 * const ids = idSource(() => crypto.getRandomValues(new Uint8Array(32)));
 * console.log(ids.uuid());
 * ```
 */
export function idSource(bytes: () => Uint8Array): IdSource {
  return { bytes, uuid: () => uuidOf(bytes()) };
}

/**
 * A deterministic source: the same seed gives the same sequence (in this process; for a
 * sequence that continues across processes use the world's source).
 *
 * @example
 * ```ts
 * import { seededIds } from "./ids.ts";
 * console.log(seededIds("a").uuid() === seededIds("a").uuid()); // true
 * ```
 */
export function seededIds(seed: string): IdSource {
  let n = 0;
  return idSource(() => seededBytes(seed, n++));
}

/**
 * A source of cryptographically random IDs (for real-service tests).
 *
 * @example
 * ```ts
 * import { randomIds } from "./ids.ts";
 * console.log(randomIds().uuid());
 * ```
 */
export function randomIds(): IdSource {
  return idSource(() => crypto.getRandomValues(new Uint8Array(32)));
}

/** Hex of bytes. */
function hex(b: Uint8Array): string {
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

/**
 * An RFC 4122 version-4 UUID from the first 16 of the given bytes.
 *
 * @example
 * ```ts
 * import { uuidOf } from "./ids.ts";
 * console.log(uuidOf(new Uint8Array(16))); // 00000000-0000-4000-8000-000000000000
 * ```
 */
export function uuidOf(bytes: Uint8Array): string {
  const b = bytes.slice(0, 16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = hex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * A Docker object ID: 64 lower-case hex characters.
 *
 * @example
 * ```ts
 * import { hex64, seededIds } from "./ids.ts";
 * console.log(hex64(seededIds("x")).length); // 64
 * ```
 */
export function hex64(ids: IdSource): string {
  return hex(ids.bytes());
}

/**
 * A Kafka UUID (cluster or topic ID) in Kafka's 22-character base64url form, version 4 as
 * Kafka's `Uuid.randomUuid`, never the all-zero "no ID".
 *
 * @example
 * ```ts
 * import { kafkaUuid, seededIds } from "./ids.ts";
 * console.log(kafkaUuid(seededIds("x")).length); // 22
 * ```
 */
export function kafkaUuid(ids: IdSource): string {
  const b = ids.bytes().slice(0, 16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  return Buffer.from(b).toString("base64url");
}

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/**
 * A Docker 20 daemon ID: twelve groups of four base32 characters joined by colons.
 *
 * @example
 * ```ts
 * import { dockerDaemonId, seededIds } from "./ids.ts";
 * console.log(dockerDaemonId(seededIds("x"))); // e.g. 2GAZ:MJ4S:...
 * ```
 */
export function dockerDaemonId(ids: IdSource): string {
  const b = ids.bytes();
  const chars = [...Array(48).keys()].map((i) => BASE32[b[i % 32] >> (i < 32 ? 3 : 0) & 31]);
  return [...Array(12).keys()].map((g) => chars.slice(g * 4, g * 4 + 4).join("")).join(":");
}
