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
import { Admin } from "@platformatic/kafka";
import type { GroupInfo, KafkaPort, PartitionRange, TopicInfo } from "./port.ts";
import { toKafkaUuid } from "./uuid.ts";
import { type AddressOrigin, failureError, guardPort } from "../errors.ts";
import { reachAny } from "../reach.ts";
import { KAFKA_MUTATIONS, kafkaFailure } from "./_failure.ts";

/** How long the first connection to a bootstrap broker may take before it is unreachable. */
export const KAFKA_CONNECT_TIMEOUT_MS = 5_000;

/** Options of {@link platformaticKafka}. */
export interface PlatformaticKafkaOptions {
  /** Where `bootstrap` came from (named in errors), e.g. the manifest's `kafka.bootstrap_host`. */
  origin?: AddressOrigin;
}

const EARLIEST = -2n;
const LATEST = -1n;

/** A {@link KafkaPort} for the cluster at `bootstrap` (`host:port`, comma-separated). */
export function platformaticKafka(
  bootstrap: string,
  options: PlatformaticKafkaOptions = {},
): KafkaPort {
  const admin = new Admin({
    clientId: "sluice",
    bootstrapBrokers: bootstrap.split(",").map((s) => s.trim()),
    retries: 3,
    timeout: 15_000,
  });

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
      // A metadata request naming an absent topic fails as a whole, so ask only for those
      // that exist (one listing, then one metadata request for all of them).
      const existing = new Set(await admin.listTopics());
      const md = await admin.metadata({
        topics: topics.filter((t) => existing.has(t)),
        forceUpdate: true,
      });
      const out = new Map<string, TopicInfo>();
      for (const name of topics) {
        const t = md.topics.get(name);
        if (t) out.set(name, { name, id: toKafkaUuid(t.id), partitions: t.partitionsCount });
      }
      return { clusterId: md.id, topics: out };
    },

    async describeGroup(groupId) {
      let groups;
      try {
        groups = await admin.describeGroups({ groups: [groupId] });
      } catch (error) {
        // Kafka 4 answers an unknown group with GROUP_ID_NOT_FOUND
        if (/GROUP_ID_NOT_FOUND|does not exist|not found/i.test(String(error))) {
          return { groupId, state: "Dead", members: [] };
        }
        throw error;
      }
      const g = groups.get(groupId);
      if (!g) return { groupId, state: "Dead", members: [] };
      return {
        groupId,
        state: normalizeState(g.state),
        members: [...g.members.values()].map((m) => ({
          memberId: m.id,
          clientId: m.clientId,
          clientHost: m.clientHost,
          groupInstanceId: m.groupInstanceId ?? null,
        })),
      } satisfies GroupInfo;
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

    async createTopic(name, partitions) {
      const [created] = await admin.createTopics({ topics: [name], partitions, replicas: 1 });
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

    async close() {
      await admin.close();
    },
  }, { target, mutations: KAFKA_MUTATIONS, specific: kafkaFailure, ready });
}

const STATES = ["Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Dead"];

/** Kafka's own spelling of a group state, whatever case the client reports. */
function normalizeState(state: string): string {
  const flat = state.replaceAll("_", "").toLowerCase();
  return STATES.find((s) => s.toLowerCase() === flat) ?? state;
}
