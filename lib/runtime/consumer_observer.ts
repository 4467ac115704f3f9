/**
 * Live consumers of topics, read-only: which consumer groups hold committed offsets on each
 * topic, with their state and member count. It lists groups, fetches their committed offsets and
 * describes the ones that have some; it never joins a group or commits anything. The plan marks
 * each group declared or undeclared (`lib/plan/impact.ts`).
 *
 * @example
 * ```ts
 * import { observeConsumers } from "./consumer_observer.ts";
 * import { platformaticKafka } from "../providers/kafka/platformatic.ts";
 * const kafka = platformaticKafka("127.0.0.1:9094");
 * const { consumers } = await observeConsumers(kafka, ["eligible_orders"]);
 * console.log(consumers?.topics.eligible_orders.map((g) => g.group_id));
 * await kafka.close();
 * ```
 * @module
 */
import type { LiveConsumers, LiveGroup } from "../plan/impact.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";

/** Live groups per topic, or why they could not be read. */
export interface ConsumersRead {
  consumers: LiveConsumers | null;
  /** Set when `consumers` is null. */
  unobserved?: string;
}

/**
 * Read the consumer groups with committed offsets on each of `topics`.
 * @example
 * ```ts
 * const { consumers, unobserved } = await observeConsumers(kafka, ["eligible_orders"]);
 * ```
 */
export async function observeConsumers(
  kafka: KafkaPort,
  topics: string[],
  now: () => Date = () => new Date(),
): Promise<ConsumersRead> {
  if (!kafka.listGroups || !kafka.groupOffsets) {
    return { consumers: null, unobserved: "this Kafka port cannot list consumer groups" };
  }
  const observedAt = now().toISOString();
  const groups = await kafka.listGroups();
  const ids = groups.map((g) => g.groupId).sort();
  const byTopic: Record<string, LiveGroup[]> = {};
  const described = new Map<string, Promise<number | null>>();
  for (const topic of [...new Set(topics)]) {
    const offsets = ids.length === 0 ? new Map() : await kafka.groupOffsets(ids, topic);
    const live: LiveGroup[] = [];
    for (const [groupId, committed] of [...offsets].sort(([a], [b]) => a.localeCompare(b))) {
      if (!described.has(groupId)) {
        described.set(
          groupId,
          kafka.describeGroup(groupId).then((g) => g.members.length, () => null),
        );
      }
      live.push({
        group_id: groupId,
        state: groups.find((g) => g.groupId === groupId)?.state ?? "Unknown",
        members: await described.get(groupId)!,
        committed: Object.fromEntries(
          [...committed].sort(([a], [b]) => a - b).map(([p, o]) => [String(p), o.toString()]),
        ),
      });
    }
    byTopic[topic] = live;
  }
  return { consumers: { observed_at: observedAt, topics: byTopic } };
}
