/**
 * A fake Kafka cluster behind the {@link KafkaPort}, over a {@link World}. It keeps what the
 * driver relies on, as Kafka 4.1 does (the same contract runs against the real broker):
 *
 * - one cluster ID; topics with Kafka-form IDs, and a topic deleted and created again gets a
 *   new ID; `describe` leaves absent topics out;
 * - per partition, earliest and latest offsets: produced records move the latest, retention
 *   (deleting records below an offset) moves the earliest;
 * - consumer groups: an unknown group is `Dead` with no members, a group with members is
 *   `Stable`, one with only committed offsets `Empty`; committed offsets per topic; each member's
 *   assignment shares out the partitions of the topics it subscribes to;
 * - offsets can be set only while the group has no member; a topic's offsets go with it;
 * - a broker the client cannot reach (its bootstrap is not a host listener, or the broker is
 *   down) fails every call; a closed client refuses further calls.
 *
 * - ACLs: `describeAcls` answers the world's bindings of exactly the principal asked for, and
 *   an admin principal without DESCRIBE on the cluster is refused as the real adapter refuses
 *   it (`ENV_KAFKA_DENIED`, CLUSTER_AUTHORIZATION_FAILED).
 *
 * Each method is one small function over the world, so a new read-only method is a few lines
 * (add it to the object below). Failure hooks key calls by: `createTopic`/`deleteTopic` → topic
 * name, `setGroupOffsets`/`deleteGroup` → group ID.
 *
 * @example
 * ```ts
 * import { createFakeWorld } from "./fake_world.ts";
 * const world = createFakeWorld({ seed: "doc" });
 * const kafka = world.kafka();
 * console.log((await kafka.describe([])).clusterId);
 * ```
 * @module
 */
import type {
  GroupInfo,
  GroupMember,
  KafkaPort,
  PartitionRange,
  TopicInfo,
} from "../../lib/providers/kafka/port.ts";
import { SluiceError } from "../../lib/errors.ts";
import { kafkaUuid } from "./ids.ts";
import type { FakeContext } from "./_port_call.ts";
import { FakeProviderError, portCall } from "./_port_call.ts";
import type { FakeGroup, World } from "./world.ts";

/** Kafka's own name for a group's state, from what the fake keeps. */
export function groupState(g: FakeGroup | undefined): string {
  if (!g) return "Dead";
  if (g.members.length > 0) return "Stable";
  const hasOffsets = Object.values(g.offsets).some((t) => Object.keys(t).length > 0);
  return hasOffsets ? "Empty" : "Dead";
}

/**
 * What the group's assignment gives its `i`-th member: each topic it subscribes to (and the
 * cluster has) has its partitions dealt out in turn over that topic's subscribers, in join order,
 * so every partition of a subscribed topic has exactly one owner.
 */
function assignmentOf(w: World, g: FakeGroup, i: number): GroupMember["assignment"] {
  const out: GroupMember["assignment"] = [];
  for (const topic of [...new Set(g.members[i].topics)].sort()) {
    const t = w.kafka.topics[topic];
    if (!t) continue;
    const subscribers = g.members.flatMap((m, j) => m.topics.includes(topic) ? [j] : []);
    const turn = subscribers.indexOf(i);
    const partitions = t.partitions.map((_, p) => p).filter((p) => p % subscribers.length === turn);
    if (partitions.length > 0) out.push({ topic, partitions });
  }
  return out;
}

function kafkaError(code: string, message: string): FakeProviderError {
  return new FakeProviderError(`${code}: ${message}`);
}

/**
 * The fake {@link KafkaPort} for a client that connects to `bootstrap` (comma-separated, as
 * for the real adapter); without one it reaches the broker whenever the broker is up.
 *
 * @example
 * ```ts
 * import { createFakeWorld } from "./fake_world.ts";
 * const world = createFakeWorld({ seed: "x" });
 * const kafka = world.kafka(world.env.bootstrapHost);
 * await kafka.createTopic("raw_orders", 3);
 * await kafka.close();
 * ```
 */
export function fakeKafkaPort(ctx: FakeContext, bootstrap?: string): KafkaPort {
  let closed = false;
  const call = <T>(op: string, key: string, mutation: boolean, fn: (w: World) => T) =>
    Promise.resolve().then(() => {
      if (closed) throw new FakeProviderError("fake kafka: the client is closed");
      return portCall(ctx, "kafka", op, key, mutation, (w) => {
        const k = w.kafka;
        const addresses = bootstrap?.split(",").map((a) => a.trim()) ?? null;
        if (!k.reachable || (addresses && !addresses.some((a) => k.host_listeners.includes(a)))) {
          throw new FakeProviderError(
            `fake kafka: cannot connect to ${bootstrap ?? "the broker"} (broker unreachable)`,
          );
        }
        return fn(w);
      });
    });
  const topicOf = (w: World, name: string) => {
    const t = w.kafka.topics[name];
    if (!t) {
      throw kafkaError(
        "UNKNOWN_TOPIC_OR_PARTITION",
        `This server does not host this topic-partition: ${name}`,
      );
    }
    return t;
  };

  const groupInfo = (w: World, groupId: string): GroupInfo => {
    const g = w.kafka.groups[groupId];
    const state = groupState(g);
    return {
      groupId,
      state,
      members: state === "Dead" ? [] : g.members.map((m, i) => ({
        memberId: m.member_id,
        clientId: m.client_id,
        clientHost: m.client_host,
        groupInstanceId: m.group_instance_id,
        assignment: assignmentOf(w, g, i),
      })),
    };
  };
  const committedOn = (w: World, groupId: string, topic: string) => {
    const t = w.kafka.groups[groupId]?.offsets[topic] ?? {};
    return new Map(
      Object.entries(t).map(([p, o]) => [Number(p), BigInt(o)] as [number, bigint])
        .sort((a, b) => a[0] - b[0]),
    );
  };
  const rangesOf = (w: World, topic: string, partitions: number[]) => {
    const t = topicOf(w, topic);
    return partitions.map((p): PartitionRange => {
      const part = t.partitions[p];
      if (!part) {
        throw kafkaError(
          "UNKNOWN_TOPIC_OR_PARTITION",
          `This server does not host this topic-partition: ${topic}-${p}`,
        );
      }
      return { partition: p, earliest: BigInt(part.earliest), latest: BigInt(part.latest) };
    });
  };

  return {
    describe: (topics) =>
      call("describe", topics.join(","), false, (w) => {
        const out = new Map<string, TopicInfo>();
        for (const name of topics) {
          const t = w.kafka.topics[name];
          if (t) out.set(name, { name, id: t.id, partitions: t.partitions.length });
        }
        return { clusterId: w.kafka.cluster_id, topics: out };
      }),

    describeGroup: (groupId) => call("describeGroup", groupId, false, (w) => groupInfo(w, groupId)),

    describeGroups: (groupIds) =>
      call(
        "describeGroups",
        groupIds.join(","),
        false,
        (w) => new Map(groupIds.map((g) => [g, groupInfo(w, g)])),
      ),

    committedOffsets: (groupId, topic) =>
      call("committedOffsets", groupId, false, (w) => committedOn(w, groupId, topic)),

    committedOffsetsOf: (groupIds) =>
      call("committedOffsetsOf", groupIds.join(","), false, (w) =>
        new Map(groupIds.map((g) => {
          const topics = Object.keys(w.kafka.groups[g]?.offsets ?? {}).sort();
          const byTopic = new Map(topics.map((t) => [t, committedOn(w, g, t)]));
          return [g, new Map([...byTopic].filter(([, parts]) => parts.size > 0))];
        }))),

    offsetRanges: (topic, partitions) =>
      call("offsetRanges", topic, false, (w) => rangesOf(w, topic, partitions)),

    offsetRangesOf: (topics) =>
      call(
        "offsetRangesOf",
        topics.map((t) => t.topic).join(","),
        false,
        (w) => new Map(topics.map((t) => [t.topic, rangesOf(w, t.topic, t.partitions)])),
      ),

    describeAcls: (principal) =>
      call("describeAcls", principal, false, (w) => {
        if (w.kafka.acl_describe_denied) {
          throw new SluiceError(
            "ENV_KAFKA_DENIED",
            `Kafka refused describing the ACLs of ${principal}: CLUSTER_AUTHORIZATION_FAILED: Cluster authorization failed.`,
          );
        }
        return (w.kafka.acls ?? []).filter((a) => a.principal === principal)
          .map((a) => ({ ...a }));
      }),

    createTopic: (name, partitions) =>
      call("createTopic", name, true, (w) => {
        if (w.kafka.topics[name]) {
          throw kafkaError("TOPIC_ALREADY_EXISTS", `Topic '${name}' already exists.`);
        }
        if (!Number.isInteger(partitions) || partitions < 1) {
          throw kafkaError("INVALID_PARTITIONS", `Number of partitions must be at least 1.`);
        }
        const id = kafkaUuid(ctx.ids);
        w.kafka.topics[name] = {
          id,
          partitions: [...Array(partitions)].map(() => ({
            earliest: "0",
            latest: "0",
            records: [],
          })),
        };
        return id;
      }),

    setGroupOffsets: (groupId, topic, offsets) =>
      call("setGroupOffsets", groupId, true, (w) => {
        const t = topicOf(w, topic);
        for (const p of offsets.keys()) {
          if (!t.partitions[p]) {
            throw kafkaError(
              "UNKNOWN_TOPIC_OR_PARTITION",
              `This server does not host this topic-partition: ${topic}-${p}`,
            );
          }
        }
        const g = (w.kafka.groups[groupId] ??= { members: [], offsets: {} });
        if (g.members.length > 0) {
          throw kafkaError(
            "UNKNOWN_MEMBER_ID",
            `group ${groupId} has ${g.members.length} active member(s); its offsets can only be altered while it is empty`,
          );
        }
        const mine = (g.offsets[topic] ??= {});
        for (const [p, o] of offsets) mine[String(p)] = o.toString();
      }),

    deleteGroup: (groupId) =>
      call("deleteGroup", groupId, true, (w): "deleted" | "absent" => {
        const g = w.kafka.groups[groupId];
        if (groupState(g) === "Dead") {
          delete w.kafka.groups[groupId];
          return "absent";
        }
        if (g.members.length > 0) {
          throw new SluiceError(
            "BLOCKED_GROUP_ACTIVE",
            `Kafka refused deleting group ${groupId}: NON_EMPTY_GROUP (it has members); sluice deletes a consumer group only when no consumer is in it`,
            { evidence: { group: groupId } },
          );
        }
        delete w.kafka.groups[groupId];
        return "deleted";
      }),

    deleteTopic: (name, topicId) =>
      call("deleteTopic", name, true, (w): "deleted" | "absent" => {
        const t = w.kafka.topics[name];
        if (!t) return "absent";
        if (t.id !== topicId) {
          throw new SluiceError(
            "BLOCKED_TOPIC_REPLACED",
            `topic ${name} has ID ${t.id}, not ${topicId}, the one sluice created: it is another topic, and sluice deletes only its own`,
            { evidence: { topic: name, expected: topicId, actual: t.id } },
          );
        }
        // a topic's records go with it, and every group's offsets on it
        delete w.kafka.topics[name];
        for (const g of Object.values(w.kafka.groups)) delete g.offsets[name];
        return "deleted";
      }),

    close() {
      closed = true;
      return Promise.resolve();
    },
  };
}
