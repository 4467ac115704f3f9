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
