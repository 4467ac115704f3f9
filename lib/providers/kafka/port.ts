/**
 * The Kafka port: the only operations sluice performs on a broker. Topic IDs are always in
 * Kafka's base64url form (see `uuid.ts`). Offsets are `bigint`.
 *
 * The observation reads ({@link KafkaPort.describeGroups}, {@link KafkaPort.committedOffsetsOf},
 * {@link KafkaPort.offsetRangesOf}) take every group and topic of a project at once, so that
 * observing a project costs a constant number of requests whatever its model count.
 *
 * The review reads (`listGroups`, `groupOffsets`, `readRecords`) are read-only: they list and
 * describe groups and fetch committed offsets and records; they never join a group, commit an
 * offset or create anything. They are optional so that a port without them still plans: the
 * review then reports live consumers and previews as not observed (an uncertainty).
 * @module
 */

/** A topic as the broker's metadata reports it. */
export interface TopicInfo {
  /** The topic name. */
  name: string;
  /** Kafka-form topic ID (22 characters). */
  id: string;
  /** Its partition count. */
  partitions: number;
}

/** A consumer group member. */
export interface GroupMember {
  /** The member's ID. */
  memberId: string;
  /** The client ID it reported. */
  clientId: string;
  /** The host it connected from. */
  clientHost: string;
  /** Its static membership ID, or null. */
  groupInstanceId: string | null;
  /**
   * The partitions the group's last assignment gave it, per topic (topics and partitions in
   * order); empty while it has none (joining, rebalancing, or a member of another protocol).
   */
  assignment: TopicPartitions[];
}

/** Partitions of one topic. */
export interface TopicPartitions {
  /** The topic. */
  topic: string;
  /** Its partitions, in order. */
  partitions: number[];
}

/** A consumer group's state. `state` is Kafka's name (`Empty`, `Stable`, `Dead`, ...). */
export interface GroupInfo {
  /** The group ID. */
  groupId: string;
  /** Kafka's state name (`Empty`, `Stable`, `Dead`, ...). */
  state: string;
  /** Its members. */
  members: GroupMember[];
}

/** Earliest and latest offsets of one partition. */
export interface PartitionRange {
  /** The partition number. */
  partition: number;
  /** The earliest offset still stored. */
  earliest: bigint;
  /** The next offset to be written (the high watermark). */
  latest: bigint;
}

/** A consumer group as the broker lists it. */
export interface GroupListing {
  /** The group ID. */
  groupId: string;
  /** Kafka's state name (`Empty`, `Stable`, ...). */
  state: string;
  /** `consumer` for consumer groups (classic or KIP-848), else the group's protocol type. */
  protocolType: string;
}

/** One record read for a preview: raw bytes, never decoded by the port. */
export interface SampledRecord {
  /** The partition it was read from. */
  partition: number;
  /** Its offset. */
  offset: bigint;
  /** Record timestamp (ms since the epoch). */
  timestamp: bigint;
  /** Its key bytes; null without a key. */
  key: Uint8Array | null;
  /** `null` is a tombstone. */
  value: Uint8Array | null;
}

/** Offsets to read from one partition: `[from, to)`. */
export interface PartitionSlice {
  /** The partition to read. */
  partition: number;
  /** The first offset to read. */
  from: bigint;
  /** The offset to stop before. */
  to: bigint;
}

/** Bounds of one {@link KafkaPort.readRecords} call. */
export interface ReadLimits {
  /** Stop once this many key+value bytes were read. */
  maxBytes: number;
  /** Stop at this time (ms since the epoch, `Date.now()` scale). */
  deadline: number;
}

/** What {@link KafkaPort.readRecords} read, and why it stopped early if it did. */
export interface RecordRead {
  /** The records read, in partition and offset order. */
  records: SampledRecord[];
  /** Key and value bytes read. */
  bytes: number;
  /** `null` when every slice was read to its end (or to the last stable offset). */
  stopped: null | "bytes" | "time";
}

/** A resource type of a Kafka ACL, as Kafka names it. */
export type AclResourceType =
  | "TOPIC"
  | "GROUP"
  | "CLUSTER"
  | "TRANSACTIONAL_ID"
  | "DELEGATION_TOKEN"
  | "USER"
  | "UNKNOWN";

/**
 * One ACL binding as the broker's authorizer answers DescribeAcls: a resource pattern and one
 * entry (principal, host, operation, permission). Operations are Kafka's names (`READ`, `WRITE`,
 * `DESCRIBE`, `ALL`, `IDEMPOTENT_WRITE`, ...).
 */
export interface AclBinding {
  /** The resource type. */
  resourceType: AclResourceType;
  /** The resource name (`*` is every resource of the type; `kafka-cluster` for the cluster). */
  resourceName: string;
  /** LITERAL (the name itself, or `*`) or PREFIXED (every name starting with it). */
  patternType: "LITERAL" | "PREFIXED" | "UNKNOWN";
  /** `User:<name>`, or `User:*` for every principal. */
  principal: string;
  /** The client address it applies to; `*` for every host. */
  host: string;
  /** Kafka's operation name. */
  operation: string;
  /** ALLOW or DENY. */
  permission: "ALLOW" | "DENY" | "UNKNOWN";
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

  /**
   * {@link describeGroup} of several groups in one coordinator lookup and one description per
   * coordinator; every requested group is in the result (an unknown one `Dead`, no members).
   */
  describeGroups(groupIds: string[]): Promise<Map<string, GroupInfo>>;
  /**
   * Committed offsets of several groups on every topic, in one coordinator lookup and one
   * offset fetch per coordinator: group → topic → partition → offset. Every requested group
   * is in the result (with no topics when it has no committed offset).
   */
  committedOffsetsOf(groupIds: string[]): Promise<Map<string, Map<string, Map<number, bigint>>>>;
  /**
   * {@link offsetRanges} of several topics at once: one listing of the earliest and one of the
   * latest offsets per partition leader (Kafka refuses one partition twice in one request).
   * An unknown topic or partition is refused, as by {@link offsetRanges}.
   */
  offsetRangesOf(
    topics: Array<{ topic: string; partitions: number[] }>,
  ): Promise<Map<string, PartitionRange[]>>;

  /** Every group the cluster lists (read-only). */
  listGroups?(): Promise<GroupListing[]>;
  /**
   * Committed offsets on `topic` of each of `groupIds` (read-only); a group with no committed
   * offset on the topic is absent from the result.
   */
  groupOffsets?(groupIds: string[], topic: string): Promise<Map<string, Map<number, bigint>>>;
  /**
   * Read the committed records of `topic` in the given slices, read_committed (aborted
   * transactions and control markers left out), without a consumer group: nothing joins a
   * group, nothing is committed. Bounded by `limits`; an absent topic is an empty read.
   */
  readRecords?(topic: string, slices: PartitionSlice[], limits: ReadLimits): Promise<RecordRead>;

  /**
   * Every ACL binding whose principal is exactly `principal` (read-only: DescribeAcls, which
   * needs DESCRIBE on the cluster). `User:*` bindings are asked for by that name. Optional: a
   * port without it cannot prove a runner's permissions (the plan says so).
   */
  describeAcls?(principal: string): Promise<AclBinding[]>;

  /** Create a topic; returns its Kafka-form ID. */
  createTopic(name: string, partitions: number): Promise<string>;
  /** Set a (necessarily inactive) group's committed offsets. */
  setGroupOffsets(groupId: string, topic: string, offsets: Map<number, bigint>): Promise<void>;
  /**
   * Delete a consumer group with its committed offsets (a destroy that deletes data). Kafka
   * deletes only a group without members: one with members is refused (`BLOCKED_GROUP_ACTIVE`,
   * nothing deleted). Idempotent: a group the cluster does not know is `"absent"`, so a
   * deletion whose response was lost is done when continued.
   */
  deleteGroup(groupId: string): Promise<"deleted" | "absent">;
  /**
   * Delete the topic `name` whose ID is `topicId` (Kafka form), with its records (a destroy
   * that deletes data), and return once the cluster no longer lists it (bounded). A topic of
   * that name with another ID is another topic and is refused (`BLOCKED_TOPIC_REPLACED`,
   * nothing deleted). Idempotent: an absent topic is `"absent"`.
   */
  deleteTopic(name: string, topicId: string): Promise<"deleted" | "absent">;
  /** Release connections. */
  close(): Promise<void>;
}
