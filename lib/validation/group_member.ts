/**
 * Which consumer group member is a runner generation's. The runner sets Kafka Streams'
 * `client.id` from its generation (`runner/…/ClientId.java`: `sluice-<operation>-<action>`), and
 * Streams names its group member `<client.id>-StreamThread-<n>-consumer`; the runner's status
 * file declares the client ID it set (`client_id`, status version 4). So "one group member" can
 * be checked for whose it is, not only counted: a member count alone cannot tell the candidate
 * from any other consumer that joined the group under its application ID.
 *
 * The vectors in `tests/vectors/client_ids.json` pin this module and the runner's `ClientId`.
 *
 * @example
 * ```ts
 * import { runnerClientId } from "./group_member.ts";
 * runnerClientId("6f1c3a2e-0b7d-4c55-9a10-2f7e8d9c0b11/0");
 * // → "sluice-6f1c3a2e-0b7d-4c55-9a10-2f7e8d9c0b11-0"
 * ```
 * @module
 */
import type { KafkaEvidence } from "./observation.ts";

/** A group member as the observation reports it. */
export type GroupMember = KafkaEvidence["group"]["members"][number];

/**
 * The Kafka Streams client ID a runner of `generation` (`<operation UUID>/<action index>`) sets.
 *
 * @example
 * ```ts
 * import { runnerClientId } from "./group_member.ts";
 * console.log(runnerClientId("op/3")); // sluice-op-3
 * ```
 */
export function runnerClientId(generation: string): string {
  return `sluice-${generation.replaceAll("/", "-")}`;
}

/**
 * The member is the main consumer of a runner of `generation` (its client ID is that
 * generation's, followed by Streams' thread suffix).
 *
 * @example
 * ```ts
 * import { isMemberOfGeneration } from "./group_member.ts";
 * isMemberOfGeneration("sluice-op-3-StreamThread-1-consumer", "op/3"); // true
 * isMemberOfGeneration("sluice-op-31-StreamThread-1-consumer", "op/3"); // false
 * ```
 */
export function isMemberOfGeneration(memberClientId: string, generation: string): boolean {
  return memberClientId.startsWith(`${runnerClientId(generation)}-StreamThread-`);
}

/**
 * Why the group's members are not exactly the runner of `generation` alone (null when they are),
 * for a runner whose status file is `status`.
 *
 * A runner that declares a client ID in its status file (version 4 on) is identified: it must
 * declare its generation's, and the one member must be its main consumer. A status file without
 * the field was written by a runner built before the client ID existed (an older runner image):
 * it cannot be told from another consumer, so only the member count is checked for it — refusing
 * it would strand every operation whose candidate runs such an image, and the count is what was
 * checked before. A runner of this sluice always declares it.
 *
 * @example
 * ```ts
 * import { notTheRunnerAlone } from "./group_member.ts";
 * const members = [{
 *   memberId: "m",
 *   clientId: "sluice-op-3-StreamThread-1-consumer",
 *   clientHost: "/10.0.0.2",
 *   groupInstanceId: null,
 *   assignment: [{ topic: "raw_orders", partitions: [0, 1, 2] }],
 * }];
 * notTheRunnerAlone(members, { client_id: "sluice-op-3" }, "op/3"); // null
 * notTheRunnerAlone(members, { client_id: "sluice-op-4" }, "op/4"); // "the group's one member …"
 * ```
 */
export function notTheRunnerAlone(
  members: readonly GroupMember[],
  status: Record<string, unknown> | null,
  generation: string,
): string | null {
  if (members.length !== 1) return `the group has ${members.length} members, not one`;
  // an older runner image declares no client ID: the count is all that can be checked
  if (!status || !("client_id" in status)) return null;
  const expected = runnerClientId(generation);
  if (status.client_id !== expected) {
    return `the runner's status declares client ID ${
      JSON.stringify(status.client_id)
    }, not its generation's ${expected}`;
  }
  const [member] = members;
  if (!isMemberOfGeneration(member.clientId, generation)) {
    return `the group's one member (client ID ${member.clientId}) is not the runner's (${expected})`;
  }
  return null;
}

/** The input topic as the observation reports it (its name and partition count). */
export type InputTopic = Pick<NonNullable<KafkaEvidence["input"]>, "name" | "partitions">;

/**
 * The input partitions none of the group's members is assigned, or null when there is nothing to
 * own them (no member, or no input topic). A member that joined and holds nothing yet (a
 * rebalance under way) owns none.
 *
 * @example
 * ```ts
 * import { unownedPartitions } from "./group_member.ts";
 * const m = (partitions: number[]) => ({
 *   memberId: "m",
 *   clientId: "c",
 *   clientHost: "/10.0.0.2",
 *   groupInstanceId: null,
 *   assignment: [{ topic: "raw_orders", partitions }],
 * });
 * unownedPartitions([m([0])], { name: "raw_orders", partitions: 3 }); // [1, 2]
 * unownedPartitions([], { name: "raw_orders", partitions: 3 }); // null
 * ```
 */
export function unownedPartitions(
  members: readonly GroupMember[],
  input: InputTopic | null,
): number[] | null {
  if (input === null || members.length === 0) return null;
  const owned = new Set(members.flatMap((m) => heldOf(m, input.name)));
  return Array.from({ length: input.partitions }, (_, p) => p).filter((p) => !owned.has(p));
}

/** The partitions of `topic` the member is assigned. */
function heldOf(member: GroupMember, topic: string): number[] {
  return member.assignment.filter((a) => a.topic === topic).flatMap((a) => a.partitions);
}

/**
 * Why the group is not exactly the set of `statuses.length` instances of `generation`, each its
 * one member, together holding every partition of `input` (null when it is): the readiness of a
 * set of instances (docs/scale.md). Exactly:
 * - the group has as many members as the set has instances;
 * - each instance's status file declares its generation's client ID (a set is new: its runners
 *   are of this sluice, so an undeclared client ID is refused, not counted);
 * - every member is a main consumer of that generation;
 * - every input partition is held by one member, none by two.
 *
 * A set of one instance is the runner alone, checked by {@link notTheRunnerAlone} exactly as
 * before (its older-image allowance included), so `instances: 1` keeps its readiness rule.
 *
 * @example
 * ```ts
 * import { notTheSetReady } from "./group_member.ts";
 * const m = (n: number, partitions: number[]) => ({
 *   memberId: `m${n}`,
 *   clientId: "sluice-op-3-StreamThread-1-consumer",
 *   clientHost: `/10.0.0.${n}`,
 *   groupInstanceId: null,
 *   assignment: [{ topic: "raw_orders", partitions }],
 * });
 * const status = { client_id: "sluice-op-3" };
 * const input = { name: "raw_orders", partitions: 3 };
 * notTheSetReady([m(1, [0, 2]), m(2, [1])], [status, status], "op/3", input); // null
 * notTheSetReady([m(1, [0]), m(2, [1])], [status, status], "op/3", input); // "input partition 2 …"
 * ```
 */
export function notTheSetReady(
  members: readonly GroupMember[],
  statuses: readonly (Record<string, unknown> | null)[],
  generation: string,
  input: InputTopic | null,
): string | null {
  const instances = statuses.length;
  if (instances === 1) return notTheRunnerAlone(members, statuses[0], generation);
  if (instances < 1) return "a set has no instances";
  if (members.length !== instances) {
    return `the group has ${members.length} members, not ${instances} (one per instance)`;
  }
  const expected = runnerClientId(generation);
  const undeclared = statuses.findIndex((s) => s?.client_id !== expected);
  if (undeclared >= 0) {
    const s = statuses[undeclared];
    return `instance ${undeclared}'s status ${
      s && "client_id" in s
        ? `declares client ID ${JSON.stringify(s.client_id)}`
        : "declares no client ID"
    }, not its generation's ${expected}`;
  }
  const stranger = members.find((m) => !isMemberOfGeneration(m.clientId, generation));
  if (stranger) {
    return `group member ${stranger.clientId} is not of the set's generation (${expected})`;
  }
  if (input === null) return "the input topic is absent: no partition can be assigned";
  const holders = new Map<number, number>();
  for (const p of members.flatMap((m) => heldOf(m, input.name))) {
    holders.set(p, (holders.get(p) ?? 0) + 1);
  }
  const twice = [...holders].filter(([, n]) => n > 1).map(([p]) => p).sort((a, b) => a - b);
  if (twice.length > 0) {
    return `input partition ${twice.join(", ")} held by more than one member`;
  }
  const unowned = unownedPartitions(members, input) ?? [];
  if (unowned.length > 0) {
    return `input partition ${unowned.join(", ")} held by no member (the group has not finished ` +
      "assigning them)";
  }
  return null;
}
