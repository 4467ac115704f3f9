/**
 * Small Kafka helpers for tests, probes and the demo, on `@platformatic/kafka` (the client
 * chosen in docs/decisions.md because it reads topic IDs and the cluster ID). Product code
 * reaches Kafka through `lib/providers/kafka`; this module exists so that tests can produce,
 * read back and inspect without that layer.
 *
 * @example
 * ```ts
 * import { createTopic, produce, readAll } from "./kafka.ts";
 * const id = await createTopic("127.0.0.1:9094", "raw_orders", 1);
 * await produce("127.0.0.1:9094", "raw_orders", [{ key: "k", value: "{}" }]);
 * const records = await readAll("127.0.0.1:9094", "raw_orders");
 * ```
 * @module
 */
import {
  AclOperations,
  AclPermissionTypes,
  Admin,
  Consumer,
  FetchIsolationLevels,
  MessagesStreamModes,
  Producer,
  ResourcePatternTypes,
  ResourceTypes,
  stringDeserializers,
  stringSerializers,
} from "npm:@platformatic/kafka@2.12.1";
import { toKafkaUuid } from "../lib/providers/kafka/uuid.ts";

/** A key/value record as tests see it; `value: null` is a tombstone. */
export interface TestRecord {
  key: string | null;
  value: string | null;
  partition?: number;
  offset?: bigint;
}

/** Run `fn` with an Admin client for `bootstrap`, closing it afterwards. */
export async function withAdmin<T>(
  bootstrap: string,
  fn: (admin: Admin) => Promise<T>,
): Promise<T> {
  const admin = new Admin({ clientId: "sluice-harness", bootstrapBrokers: [bootstrap] });
  try {
    return await fn(admin);
  } finally {
    await admin.close();
  }
}

/** One ACL binding to create (the admin client's creation shape). */
export type AclCreation = Parameters<Admin["createAcls"]>[0]["creations"][number];

/**
 * Create ACL bindings and return once the broker lists every one of them. The broker applies
 * the controller's ACL records to its authorizer after CreateAcls answers, so a DescribeAcls (or
 * an authorization) right after it can miss them: a secured rejection case's plan once found no
 * ACL of its runner principal (BLOCKED_RUNNER_PERMISSION) right after its grant. Bounded: past
 * 60 s it throws naming what is still missing.
 */
export async function createAclsVisible(
  bootstrap: string,
  creations: AclCreation[],
): Promise<void> {
  const key = (b: {
    resourceType: number;
    resourceName: string;
    resourcePatternType: number;
    principal: string;
    operation: number;
  }) =>
    `${b.principal} ${b.resourceType}:${b.resourcePatternType}:${b.resourceName} ${b.operation}`;
  await withAdmin(bootstrap, async (admin) => {
    await admin.createAcls({ creations });
    const deadline = Date.now() + 60_000;
    while (true) {
      const listed = new Set<string>();
      for (const principal of new Set(creations.map((c) => c.principal))) {
        const resources = await admin.describeAcls({
          filter: {
            resourceType: ResourceTypes.ANY,
            resourceName: null,
            resourcePatternType: ResourcePatternTypes.ANY,
            principal,
            host: null,
            operation: AclOperations.ANY,
            permissionType: AclPermissionTypes.ANY,
          },
        });
        for (const r of resources) {
          for (const a of r.acls) listed.add(key({ ...r, ...a }));
        }
      }
      const missing = creations.map(key).filter((k) => !listed.has(k));
      if (missing.length === 0) return;
      if (Date.now() > deadline) {
        throw new Error(
          `ACLs created but not listed by the broker after 60 s: ${missing.join("; ")}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  });
}

/** Create a topic and return its topic ID (base64url UUID). */
export function createTopic(bootstrap: string, topic: string, partitions = 1): Promise<string> {
  return withAdmin(bootstrap, async (admin) => {
    const [created] = await admin.createTopics({ topics: [topic], partitions, replicas: 1 });
    return toKafkaUuid(created.id);
  });
}

/** The cluster ID and the topic IDs of `topics`, read from the broker's metadata. */
export function describeCluster(
  bootstrap: string,
  topics: string[],
): Promise<{ clusterId: string; topicIds: Record<string, string> }> {
  return withAdmin(bootstrap, async (admin) => {
    const md = await admin.metadata({ topics, forceUpdate: true });
    const topicIds: Record<string, string> = {};
    for (const t of topics) {
      const m = md.topics.get(t);
      if (m) topicIds[t] = toKafkaUuid(m.id);
    }
    return { clusterId: md.id, topicIds };
  });
}

/** Produce records (string key/value) and wait for the broker's acknowledgement. */
export async function produce(bootstrap: string, topic: string, records: TestRecord[]) {
  const producer = new Producer({
    clientId: "sluice-harness-producer",
    bootstrapBrokers: [bootstrap],
    serializers: stringSerializers,
    // a retried send whose first attempt was appended would write its records twice: the
    // broker drops such a retry by the producer's ID and sequence
    idempotent: true,
  });
  try {
    await producer.send({
      messages: records.map((r) => ({
        topic,
        key: r.key ?? undefined,
        // a tombstone is a record with a null value
        value: r.value ?? (null as unknown as string),
        partition: r.partition,
      })),
    });
  } finally {
    await producer.close();
  }
}

/** The earliest and latest offsets of each partition of `topic`. */
export function offsetRange(
  bootstrap: string,
  topic: string,
  partitions: number[] = [0],
): Promise<Array<{ partition: number; earliest: bigint; latest: bigint }>> {
  return withAdmin(bootstrap, async (admin) => {
    const list = async (timestamp: bigint) => {
      const [t] = await admin.listOffsets({
        topics: [{
          name: topic,
          partitions: partitions.map((p) => ({ partitionIndex: p, timestamp })),
        }],
      });
      return new Map(t.partitions.map((p) => [p.partitionIndex, p.offset]));
    };
    const earliest = await list(-2n);
    const latest = await list(-1n);
    return partitions.map((p) => ({
      partition: p,
      earliest: earliest.get(p) ?? -1n,
      latest: latest.get(p) ?? -1n,
    }));
  });
}

/**
 * Read every committed record currently in `topic` (up to the latest offsets at call time),
 * without committing any group offsets. On a transactional topic the last offsets are commit
 * markers that a reader never sees, so the read also ends once nothing has arrived for
 * `idleMs` (default 1.5 s) after the first record, or when `expect` records have arrived.
 */
export async function readAll(
  bootstrap: string,
  topic: string,
  options: { timeoutMs?: number; partitions?: number[]; idleMs?: number; expect?: number } = {},
): Promise<TestRecord[]> {
  const partitions = options.partitions ?? [0];
  const ranges = await offsetRange(bootstrap, topic, partitions);
  const remaining = new Map(
    ranges.filter((r) => r.latest > r.earliest).map((r) => [r.partition, r.latest]),
  );
  if (remaining.size === 0) return [];
  const consumer = new Consumer({
    clientId: "sluice-harness-reader",
    groupId: `sluice-harness-reader-${crypto.randomUUID()}`,
    bootstrapBrokers: [bootstrap],
    deserializers: stringDeserializers,
  });
  const out: TestRecord[] = [];
  try {
    const stream = await consumer.consume({
      topics: [topic],
      mode: MessagesStreamModes.EARLIEST,
      autocommit: false,
      isolationLevel: FetchIsolationLevels.READ_COMMITTED,
    });
    const deadline = setTimeout(() => stream.close(), options.timeoutMs ?? 20_000);
    let idle: ReturnType<typeof setTimeout> | undefined;
    try {
      for await (const m of stream) {
        out.push({
          key: m.key ?? null,
          value: m.value ?? null,
          partition: m.partition,
          offset: m.offset,
        });
        const end = remaining.get(m.partition);
        if (end !== undefined && m.offset + 1n >= end) remaining.delete(m.partition);
        if (
          remaining.size === 0 || (options.expect !== undefined && out.length >= options.expect)
        ) break;
        clearTimeout(idle);
        idle = setTimeout(() => stream.close(), options.idleMs ?? 1500);
      }
    } finally {
      clearTimeout(deadline);
      clearTimeout(idle);
      await stream.close();
    }
  } finally {
    await consumer.close(true);
  }
  return out;
}

/** Committed offsets of consumer group `group` for `topic` (-1 where none is committed). */
export function committedOffsets(
  bootstrap: string,
  group: string,
  topic: string,
): Promise<Map<number, bigint>> {
  return withAdmin(bootstrap, async (admin) => {
    const [g] = await admin.listConsumerGroupOffsets({ groups: [group] });
    const out = new Map<number, bigint>();
    for (const t of g?.topics ?? []) {
      if (t.name !== topic) continue;
      for (const p of t.partitions) out.set(p.partitionIndex, p.committedOffset);
    }
    return out;
  });
}

/**
 * Poll `readAll` until at least `count` committed records are in `topic` or `timeoutMs`
 * passes; returns what was read last (the caller asserts on it, so a shortfall shows).
 */
export async function waitForRecords(
  bootstrap: string,
  topic: string,
  count: number,
  options: { partitions?: number[]; timeoutMs?: number } = {},
): Promise<TestRecord[]> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let got: TestRecord[] = [];
  while (true) {
    got = await readAll(bootstrap, topic, { partitions: options.partitions, expect: count });
    if (got.length >= count || Date.now() > deadline) return got;
    await new Promise((r) => setTimeout(r, 250));
  }
}
