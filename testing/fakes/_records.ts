/**
 * Private helper: appending records to a partition of the world's topics (a producer's send,
 * and the simulated runner's output), with the default partitioner's shape: a keyed record
 * goes to the partition of its key's hash, an unkeyed one round-robin.
 * @module
 */
import type { FakeTopic } from "./world.ts";

function hashKey(key: string): number {
  let h = 0;
  for (const ch of key) h = (h * 31 + ch.codePointAt(0)!) >>> 0;
  return h;
}

/** Append one record; returns its partition and offset (throws on a partition that does not exist). */
export function appendRecord(
  t: FakeTopic,
  record: { partition?: number; key: string | null; value: string | null },
  nowMs: number,
): { partition: number; offset: bigint } {
  const n = t.partitions.length;
  const total = t.partitions.reduce((a, p) => a + Number(p.latest), 0);
  const partition = record.partition ?? (record.key ? hashKey(record.key) % n : total % n);
  const part = t.partitions[partition];
  if (!part) throw new Error(`fake: the topic has no partition ${partition}`);
  const offset = BigInt(part.latest);
  part.records.push({
    offset: offset.toString(),
    key: record.key,
    value: record.value,
    timestamp_ms: nowMs,
  });
  part.latest = (offset + 1n).toString();
  return { partition, offset };
}
