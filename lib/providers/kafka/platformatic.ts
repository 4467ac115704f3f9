/**
 * The real {@link KafkaPort} on `@platformatic/kafka` (chosen in docs/decisions.md: it reads
 * the cluster ID and topic IDs).
 *
 * Failures leave as provider errors (`../errors.ts`) naming the bootstrap address and where it
 * came from: `ENV_KAFKA_UNREACHABLE`, `ENV_KAFKA_DENIED`, `KAFKA_REFUSED`,
 * `UNKNOWN_OUTCOME_KAFKA`. Before its first request the adapter checks, within
 * {@link KAFKA_CONNECT_TIMEOUT_MS}, that a bootstrap broker accepts a TCP connection, so a
 * refused or unknown address fails in milliseconds instead of after the client's retries.
 *
 * @example
 * ```ts
 * import { platformaticKafka } from "./platformatic.ts";
 * const kafka = platformaticKafka("127.0.0.1:9094");
 * const { clusterId } = await kafka.describe([]);
 * await kafka.close();
 * ```
 * @module
 */
import {
  AclOperations,
  AclPermissionTypes,
  Admin,
  Consumer,
  FetchIsolationLevels,
  ResourcePatternTypes,
  ResourceTypes,
} from "npm:@platformatic/kafka@2.12.1";
import type {
  AclBinding,
  GroupInfo,
  GroupListing,
  KafkaPort,
  PartitionRange,
  PartitionSlice,
  ReadLimits,
  RecordRead,
  SampledRecord,
  TopicInfo,
} from "./port.ts";
import { toKafkaUuid } from "./uuid.ts";
import { type AddressOrigin, errorChain, failureError, guardPort } from "../errors.ts";
import { SluiceError } from "../../errors.ts";
import { reachAny } from "../reach.ts";
import {
  KAFKA_MUTATIONS,
  kafkaCallSubject,
  kafkaFailure,
  watchConnectionErrors,
} from "./_failure.ts";
import type { ClientSecurity } from "./security.ts";

/** How long the first connection to a bootstrap broker may take before it is unreachable. */
export const KAFKA_CONNECT_TIMEOUT_MS = 5_000;

/** Options of {@link platformaticKafka}. */
export interface PlatformaticKafkaOptions {
  /** Where `bootstrap` came from (named in errors), e.g. the manifest's `kafka.bootstrap_host`. */
  origin?: AddressOrigin;
  /** The principal to connect as and the brokers' trust (default: PLAINTEXT). */
  security?: ClientSecurity;
}

/** The library's connection options for a client security (nothing under PLAINTEXT). */
function connectionOptions(security: ClientSecurity | undefined) {
  if (!security || security.protocol === "PLAINTEXT") return {};
  const tls = security.tls;
  return {
    ...(tls
      ? {
        tls: {
          ...(tls.ca ? { ca: [tls.ca] } : {}),
          ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}),
          rejectUnauthorized: true,
          // hostname verification off (a project's explicit choice): the chain is still checked
          ...(tls.hostnameVerification ? {} : { checkServerIdentity: () => undefined }),
        },
      }
      : {}),
    ...(security.sasl
      ? {
        sasl: {
          mechanism: security.sasl.mechanism,
          username: security.sasl.username,
          password: security.sasl.password,
        },
      }
      : {}),
  };
}

const EARLIEST = -2n;
const LATEST = -1n;

/** A {@link KafkaPort} for the cluster at `bootstrap` (`host:port`, comma-separated). */
export function platformaticKafka(
  bootstrap: string,
  options: PlatformaticKafkaOptions = {},
): KafkaPort {
  const brokers = bootstrap.split(",").map((s) => s.trim());
  const secured = connectionOptions(options.security);
  const admin = new Admin({
    clientId: "sluice",
    bootstrapBrokers: brokers,
    ...secured,
    retries: 3,
    timeout: 15_000,
  });
  // what the connections raise outside a request (a broker's alert refusing the certificate)
  const connectionErrors = watchConnectionErrors();
  connectionErrors.watch(admin);
  // The preview's reader: only ever used for Fetch requests. It never calls consume() or
  // joinGroup(), so the group ID the client requires is never sent to a coordinator.
  let reader: Consumer | null = null;
  const readerClient = () => {
    if (reader) return reader;
    reader = new Consumer({
      clientId: "sluice-preview",
      groupId: PREVIEW_UNUSED_GROUP,
      bootstrapBrokers: brokers,
      ...secured,
      autocreateTopics: false,
      retries: 3,
      timeout: 15_000,
    });
    connectionErrors.watch(reader);
    return reader;
  };

  /** One FindCoordinator and one DescribeGroups per coordinator for all the groups. */
  async function describeGroups(groupIds: string[]): Promise<Map<string, GroupInfo>> {
    const out = new Map<string, GroupInfo>();
    const unique = [...new Set(groupIds)];
    if (unique.length === 0) return out;
    let groups;
    try {
      groups = await admin.describeGroups({ groups: unique });
    } catch (error) {
      // a broker that answers an unknown group with GROUP_ID_NOT_FOUND (DescribeGroups v6+)
      // fails the whole batch: describe the groups one by one then
      if (unique.length > 1 && isGroupNotFound(error)) {
        for (const g of unique) out.set(g, (await describeGroups([g])).get(g)!);
        return out;
      }
      if (isGroupNotFound(error)) {
        out.set(unique[0], { groupId: unique[0], state: "Dead", members: [] });
        return out;
      }
      throw error;
    }
    for (const groupId of unique) {
      const g = groups.get(groupId);
      out.set(
        groupId,
        g
          ? {
            groupId,
            state: normalizeState(g.state),
            members: [...g.members.values()].map((m) => ({
              memberId: m.id,
              clientId: m.clientId,
              clientHost: m.clientHost,
              groupInstanceId: m.groupInstanceId ?? null,
              assignment: [...(m.assignments?.values() ?? [])]
                .map((a) => ({
                  topic: a.topic,
                  partitions: [...a.partitions].sort((x, y) => x - y),
                }))
                .sort((x, y) => x.topic < y.topic ? -1 : x.topic > y.topic ? 1 : 0),
            })),
          }
          : { groupId, state: "Dead", members: [] },
      );
    }
    return out;
  }

  const target = { provider: "kafka" as const, address: bootstrap, origin: options.origin ?? {} };
  let reached: Promise<void> | null = null;
  const ready = () =>
    reached ??= reachAny(bootstrap.split(",").map((s) => s.trim()), KAFKA_CONNECT_TIMEOUT_MS)
      .then((failure) => {
        if (failure === null) return;
        reached = null; // a later call checks again
        throw failureError(failure, target, { operation: "connect", mutation: false });
      });

  return guardPort<KafkaPort>({
    async describe(topics) {
      // One metadata request for all the topics; one naming an absent topic fails as a whole
      // (and would be retried for seconds), so that first try is not retried: on any failure
      // ask again for only those the listing has (with the client's retries).
      let md;
      try {
        md = await admin.metadata({
          topics: [...topics],
          forceUpdate: true,
          autocreateTopics: false,
          retries: 0,
        });
      } catch {
        const existing = new Set(await admin.listTopics());
        md = await admin.metadata({
          topics: topics.filter((t) => existing.has(t)),
          forceUpdate: true,
          autocreateTopics: false,
        });
      }
      const out = new Map<string, TopicInfo>();
      for (const name of topics) {
        const t = md.topics.get(name);
        if (t) out.set(name, { name, id: toKafkaUuid(t.id), partitions: t.partitionsCount });
      }
      return { clusterId: md.id, topics: out };
    },

    async describeGroup(groupId) {
      return (await describeGroups([groupId])).get(groupId)!;
    },

    describeGroups,

    async committedOffsetsOf(groupIds) {
      const out = new Map<string, Map<string, Map<number, bigint>>>();
      for (const g of groupIds) out.set(g, new Map());
      if (groupIds.length === 0) return out;
      // one FindCoordinator and one OffsetFetch (v8+: many groups) per coordinator
      for (const g of await admin.listConsumerGroupOffsets({ groups: [...new Set(groupIds)] })) {
        const topics = out.get(g.groupId);
        if (!topics) continue;
        for (const t of g.topics) {
          const parts = new Map<number, bigint>();
          for (const p of t.partitions) {
            if (p.committedOffset >= 0n) parts.set(p.partitionIndex, p.committedOffset);
          }
          if (parts.size > 0) topics.set(t.name, parts);
        }
      }
      return out;
    },

    async offsetRangesOf(topics) {
      const out = new Map<string, PartitionRange[]>();
      const asked = topics.filter((t) => t.partitions.length > 0);
      for (const t of topics) out.set(t.topic, []);
      if (asked.length === 0) return out;
      const list = async (timestamp: bigint) => {
        const result = await admin.listOffsets({
          topics: asked.map((t) => ({
            name: t.topic,
            partitions: t.partitions.map((p) => ({ partitionIndex: p, timestamp })),
          })),
        });
        return new Map(result.map((t) => [
          t.name,
          new Map(t.partitions.map((p) => [p.partitionIndex, p.offset])),
        ]));
      };
      // a partition may appear once per request: the earliest and the latest are two listings
      const [earliest, latest] = await Promise.all([list(EARLIEST), list(LATEST)]);
      for (const t of asked) {
        out.set(
          t.topic,
          t.partitions.map((p): PartitionRange => ({
            partition: p,
            earliest: earliest.get(t.topic)?.get(p) ?? -1n,
            latest: latest.get(t.topic)?.get(p) ?? -1n,
          })),
        );
      }
      return out;
    },

    async committedOffsets(groupId, topic) {
      const [g] = await admin.listConsumerGroupOffsets({ groups: [groupId] });
      const out = new Map<number, bigint>();
      for (const t of g?.topics ?? []) {
        if (t.name !== topic) continue;
        for (const p of t.partitions) {
          if (p.committedOffset >= 0n) out.set(p.partitionIndex, p.committedOffset);
        }
      }
      return out;
    },

    async offsetRanges(topic, partitions) {
      const list = async (timestamp: bigint) => {
        const [t] = await admin.listOffsets({
          topics: [{
            name: topic,
            partitions: partitions.map((p) => ({ partitionIndex: p, timestamp })),
          }],
        });
        return new Map(t.partitions.map((p) => [p.partitionIndex, p.offset]));
      };
      const earliest = await list(EARLIEST);
      const latest = await list(LATEST);
      return partitions.map((p): PartitionRange => ({
        partition: p,
        earliest: earliest.get(p) ?? -1n,
        latest: latest.get(p) ?? -1n,
      }));
    },

    async listGroups() {
      const groups = await admin.listGroups();
      return [...groups.values()].map((g): GroupListing => ({
        groupId: g.id,
        state: normalizeState(String(g.state)),
        protocolType: g.protocolType || g.groupType || "",
      }));
    },

    async groupOffsets(groupIds, topic) {
      const out = new Map<string, Map<number, bigint>>();
      // one OffsetFetch per batch of groups keeps a large cluster's request bounded
      for (let i = 0; i < groupIds.length; i += 100) {
        const batch = groupIds.slice(i, i + 100);
        const result = await admin.listConsumerGroupOffsets({ groups: batch });
        for (const g of result) {
          const offsets = new Map<number, bigint>();
          for (const t of g.topics) {
            if (t.name !== topic) continue;
            for (const p of t.partitions) {
              if (p.committedOffset >= 0n) offsets.set(p.partitionIndex, p.committedOffset);
            }
          }
          if (offsets.size > 0) out.set(g.groupId, offsets);
        }
      }
      return out;
    },

    readRecords(topic, slices, limits) {
      return readCommitted(readerClient(), topic, slices, limits);
    },

    async describeAcls(principal) {
      // one DescribeAcls: every resource, pattern, host, operation and permission of `principal`
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
      return resources.flatMap((r) =>
        r.acls.map((a): AclBinding => ({
          resourceType: (nameOf(ResourceTypes, r.resourceType) ?? "UNKNOWN") as AclBinding[
            "resourceType"
          ],
          resourceName: r.resourceName,
          patternType: (nameOf(ResourcePatternTypes, r.resourcePatternType) ??
            "UNKNOWN") as AclBinding["patternType"],
          principal: a.principal,
          host: a.host,
          operation: nameOf(AclOperations, a.operation) ?? "UNKNOWN",
          permission: (nameOf(AclPermissionTypes, a.permissionType) ?? "UNKNOWN") as AclBinding[
            "permission"
          ],
        }))
      );
    },

    async createTopic(name, partitions) {
      const [created] = await admin.createTopics({ topics: [name], partitions, replicas: 1 });
      // the broker's metadata lags the controller: a describe right after the create can leave
      // the new topic out (seen by tests/ports_contract_docker_kafka_test.ts), so return once
      // the topic is listed (bounded; past the bound the caller's own read reports it)
      const deadline = Date.now() + 30_000;
      while (!(await admin.listTopics()).includes(name) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      return toKafkaUuid(created.id);
    },

    async setGroupOffsets(groupId, topic, offsets) {
      await admin.alterConsumerGroupOffsets({
        groupId,
        topics: [{
          name: topic,
          partitionOffsets: [...offsets].map(([partition, offset]) => ({ partition, offset })),
        }],
      });
    },

    async deleteGroup(groupId) {
      try {
        await admin.deleteGroups({ groups: [groupId] });
      } catch (error) {
        if (kafkaErrorNamed(error, "GROUP_ID_NOT_FOUND")) return "absent";
        if (kafkaErrorNamed(error, "NON_EMPTY_GROUP")) {
          throw new SluiceError(
            "BLOCKED_GROUP_ACTIVE",
            `Kafka refused deleting group ${groupId}: NON_EMPTY_GROUP (it has members); sluice deletes a consumer group only when no consumer is in it`,
            { evidence: { group: groupId }, cause: error },
          );
        }
        throw error;
      }
      return "deleted";
    },

    async deleteTopic(name, topicId) {
      // DeleteTopics by ID is not in the client's admin API: the ID is read just before the
      // delete by name (a topic re-created in between would be deleted; sluice's own topics
      // are re-created only by sluice, under the deployment lock this caller holds)
      if (!(await admin.listTopics()).includes(name)) return "absent";
      let seen;
      try {
        seen = (await admin.metadata({
          topics: [name],
          forceUpdate: true,
          autocreateTopics: false,
        })).topics.get(name);
      } catch (error) {
        // listed a moment ago, deleted since (by a delete whose response was lost)
        if (kafkaErrorNamed(error, "UNKNOWN_TOPIC_OR_PARTITION")) return "absent";
        throw error;
      }
      if (!seen) return "absent";
      const id = toKafkaUuid(seen.id);
      if (id !== topicId) {
        throw new SluiceError(
          "BLOCKED_TOPIC_REPLACED",
          `topic ${name} has ID ${id}, not ${topicId}, the one sluice created: it is another topic, and sluice deletes only its own`,
          { evidence: { topic: name, expected: topicId, actual: id } },
        );
      }
      try {
        await admin.deleteTopics({ topics: [name] });
      } catch (error) {
        if (!kafkaErrorNamed(error, "UNKNOWN_TOPIC_OR_PARTITION")) throw error;
      }
      // deletion is asynchronous: return once the cluster no longer lists it (bounded; past the
      // bound the caller's own read sees it still there)
      const deadline = Date.now() + 30_000;
      while ((await admin.listTopics()).includes(name) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      return "deleted";
    },

    async close() {
      await admin.close();
      if (reader) await reader.close(true);
    },
  }, {
    target,
    mutations: KAFKA_MUTATIONS,
    specific: (error) => kafkaFailure(error, connectionErrors.take()),
    ready,
    what: kafkaCallSubject,
  });
}

/** Kafka's name of an enumeration value (the library's tables map names to numbers). */
function nameOf(table: Record<string, number>, value: number): string | undefined {
  return Object.entries(table).find(([, v]) => v === value)?.[0];
}

/** Whether Kafka answered this error name anywhere in the client's nested errors. */
function kafkaErrorNamed(error: unknown, name: string): boolean {
  return errorChain(error).some((e) => (e as { apiId?: unknown }).apiId === name);
}

/** Kafka 4 answers an unknown group with GROUP_ID_NOT_FOUND on DescribeGroups v6+. */
function isGroupNotFound(error: unknown): boolean {
  return /GROUP_ID_NOT_FOUND|does not exist|not found/i.test(String(error));
}

const STATES = ["Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Dead"];

/** Kafka's own spelling of a group state, whatever case the client reports. */
function normalizeState(state: string): string {
  const flat = state.replaceAll("_", "").toLowerCase();
  return STATES.find((s) => s.toLowerCase() === flat) ?? state;
}

/**
 * The group ID the preview reader's client is constructed with. No request ever carries it (the
 * reader only fetches); a test checks that no group of this name appears on the broker.
 */
export const PREVIEW_UNUSED_GROUP = "sluice-preview-never-joined";

const IS_TRANSACTIONAL = 1 << 4;
const IS_CONTROL = 1 << 5;
/** Control record type of an abort marker (the key is int16 version, int16 type). */
const CONTROL_ABORT = 0;

/**
 * Fetch `[from, to)` of each slice from the partition leader with read_committed isolation,
 * dropping control markers and the records of aborted transactions (the broker sends the
 * aborted list; the reader must apply it: `Consumer.fetch` of @platformatic/kafka 2.12 already
 * drops aborted batches, and the check here keeps that guarantee should the client change),
 * until every slice is read, the last stable offset is reached, or a limit stops it.
 */
async function readCommitted(
  consumer: Consumer,
  topic: string,
  slices: PartitionSlice[],
  limits: ReadLimits,
): Promise<RecordRead> {
  const records: SampledRecord[] = [];
  let bytes = 0;
  const md = await consumer.metadata({ topics: [topic], autocreateTopics: false })
    .catch((error) => {
      if (/UNKNOWN_TOPIC|does not exist|not found/i.test(String(error))) return null;
      throw error;
    });
  const meta = md?.topics.get(topic);
  if (!meta) return { records, bytes, stopped: null };
  for (const slice of slices) {
    let next = slice.from;
    let end = slice.to;
    const leader = meta.partitions[slice.partition]?.leader;
    if (leader === undefined) continue;
    while (next < end) {
      if (Date.now() >= limits.deadline) return { records, bytes, stopped: "time" };
      const response = await consumer.fetch({
        node: leader,
        topics: [{
          topicId: meta.id,
          partitions: [{
            partition: slice.partition,
            currentLeaderEpoch: -1,
            fetchOffset: next,
            lastFetchedEpoch: -1,
            partitionMaxBytes: 1_048_576,
          }],
        }],
        isolationLevel: FetchIsolationLevels.READ_COMMITTED,
        maxWaitTime: 200,
        minBytes: 1,
        maxBytes: 1_048_576,
      });
      const part = response.responses.flatMap((t) => t.partitions)
        .find((p) => p.partitionIndex === slice.partition);
      if (!part) break;
      if (part.errorCode !== 0) {
        throw new Error(`fetch ${topic}-${slice.partition}@${next}: error code ${part.errorCode}`);
      }
      // read_committed: nothing at or beyond the last stable offset is returned
      if (part.lastStableOffset >= 0n && part.lastStableOffset < end) end = part.lastStableOffset;
      const aborted = [...(part.abortedTransactions ?? [])]
        .sort((
          a,
          b,
        ) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
      const abortedProducers = new Set<bigint>();
      let advanced = false;
      for (const batch of part.records ?? []) {
        const lastOffset = batch.firstOffset + BigInt(batch.lastOffsetDelta);
        while (aborted.length > 0 && aborted[0].firstOffset <= lastOffset) {
          abortedProducers.add(aborted.shift()!.producerId);
        }
        if (lastOffset >= next) {
          next = lastOffset + 1n;
          advanced = true;
        }
        const transactional = (batch.attributes & IS_TRANSACTIONAL) !== 0;
        if ((batch.attributes & IS_CONTROL) !== 0) {
          const key = batch.records[0]?.key;
          if (transactional && key && key.length >= 4 && key.readInt16BE(2) === CONTROL_ABORT) {
            abortedProducers.delete(batch.producerId);
          }
          continue;
        }
        if (transactional && abortedProducers.has(batch.producerId)) continue;
        for (const r of batch.records) {
          const offset = batch.firstOffset + BigInt(r.offsetDelta);
          if (offset < slice.from || offset >= end) continue;
          const value = r.value === null ? null : new Uint8Array(r.value);
          const key = r.key === null ? null : new Uint8Array(r.key);
          bytes += (value?.length ?? 0) + (key?.length ?? 0);
          records.push({
            partition: slice.partition,
            offset,
            timestamp: batch.firstTimestamp + r.timestampDelta,
            key,
            value,
          });
          if (bytes >= limits.maxBytes) return { records, bytes, stopped: "bytes" };
        }
      }
      if (!advanced) {
        // nothing new below the end: an open transaction holds the last stable offset
        if (part.lastStableOffset >= 0n && next >= part.lastStableOffset) break;
      }
    }
  }
  return { records, bytes, stopped: null };
}
