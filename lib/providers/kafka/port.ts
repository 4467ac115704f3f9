/**
 * The Kafka port: the only operations sluice performs on a broker. Topic IDs are always in
 * Kafka's base64url form (see `uuid.ts`). Offsets are `bigint`.
 * @module
 */

/** A topic as the broker's metadata reports it. */
export interface TopicInfo {
  name: string;
  /** Kafka-form topic ID (22 characters). */
  id: string;
  partitions: number;
}

/** A consumer group member. */
export interface GroupMember {
  memberId: string;
  clientId: string;
  clientHost: string;
  groupInstanceId: string | null;
}

/** A consumer group's state. `state` is Kafka's name (`Empty`, `Stable`, `Dead`, ...). */
export interface GroupInfo {
  groupId: string;
  state: string;
  members: GroupMember[];
}

/** Earliest and latest offsets of one partition. */
export interface PartitionRange {
  partition: number;
  earliest: bigint;
  latest: bigint;
}

/** The operations sluice needs from a Kafka cluster. */
export interface KafkaPort {
  /** The cluster ID and the named topics that exist (absent names are left out). */
  describe(topics: string[]): Promise<{ clusterId: string; topics: Map<string, TopicInfo> }>;
  /** A group's state and members; an unknown group is `Dead` with no members. */
  describeGroup(groupId: string): Promise<GroupInfo>;
  /** Committed offsets per partition of `topic` for `groupId` (absent partitions: none). */
  committedOffsets(groupId: string, topic: string): Promise<Map<number, bigint>>;
  /** Earliest and latest offsets of the given partitions. */
  offsetRanges(topic: string, partitions: number[]): Promise<PartitionRange[]>;

  /** Create a topic; returns its Kafka-form ID. */
  createTopic(name: string, partitions: number): Promise<string>;
  /** Set a (necessarily inactive) group's committed offsets. */
  setGroupOffsets(groupId: string, topic: string, offsets: Map<number, bigint>): Promise<void>;
  /** Release connections. */
  close(): Promise<void>;
}
