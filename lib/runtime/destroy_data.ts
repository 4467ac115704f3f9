/**
 * The data rows of a destroy that deletes data (`plan --destroy --delete-data`,
 * `lib/protocol/destroy.ts` `DESTROY_DATA_TABLE`): what they read and the one deletion each
 * crosses. Once every runner the plan bound is down and before the commit, the destroy deletes
 * what the plan lists — the consumer groups, then the state volumes, then the owned topics — one
 * resource at a time, each deletion crossing its row's fault site under the deployment lock
 * ({@link deleteDestroyItem}). What is still there is read afresh before each
 * ({@link readDestroyData}), and the destroy's decision (`destroy_next.ts`) names the first
 * resource left; each port deletion is idempotent (already gone is done), so a process killed
 * between a deletion and the next boundary continues from a fresh read.
 *
 * The ports refuse what is not the plan's to delete, deleting nothing: a group with members
 * (`BLOCKED_GROUP_ACTIVE`), a volume with other labels than sluice wrote or that a container
 * mounts (`BLOCKED_VOLUME_INSTANCE_CHANGED`, `BLOCKED_VOLUME_IN_USE`), a topic of another ID
 * (`BLOCKED_TOPIC_REPLACED`). The operation then stays pending at that row.
 *
 * @example
 * ```ts
 * import { readDestroyData } from "./destroy_data.ts";
 * // const left = await readDestroyData(ctx, action.deletes);
 * ```
 * @module
 */
import type { DestroyDeletes } from "../plan/removals.ts";
import { destroyDataRow, type DestroyDataStep } from "../protocol/destroy.ts";
import type { DockerPort } from "../providers/docker/port.ts";
import { type DockerAt, dockerOf } from "./endpoint_ports.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import { LABEL } from "./labels.ts";
import { type LockHolder, providerMutation } from "./provider_mutation.ts";

/** What the data rows take: the ports, and the store whose lock each deletion verifies. */
export interface DestroyDataContext {
  docker: DockerPort;
  /** The Docker port of a `docker.endpoints` daemon, where a set's instance volumes are. */
  dockerAt?: DockerAt;
  kafka: KafkaPort;
  /** The state store (its lock is verified before each deletion; its scope labels the volumes). */
  store: LockHolder & { readonly project: string; readonly environment: string | null };
}

/** One resource a data row deletes, with its row's step. */
export type DestroyDataItem =
  | { readonly step: "delete_group"; readonly name: string }
  | {
    readonly step: "remove_volume";
    readonly name: string;
    readonly volume: DestroyDeletes["volumes"][number];
  }
  | {
    readonly step: "delete_topic";
    readonly name: string;
    readonly topic: DestroyDeletes["topics"][number];
  };

/** What a fresh read finds still there of what the plan deletes, per data row (in plan order). */
export type DestroyDataLeft = { readonly [S in DestroyDataStep]: DestroyDataItem[] };

/**
 * The key of one resource a data row deletes, as a run remembers what it deleted.
 *
 * @example
 * ```ts
 * import { dataKey } from "./destroy_data.ts";
 * console.log(dataKey({ step: "delete_group", name: "app" })); // delete_group:app
 * ```
 */
export function dataKey(item: Pick<DestroyDataItem, "step" | "name">): string {
  return `${item.step}:${item.name}`;
}

/**
 * What is still there of what the plan deletes: groups the cluster knows (not `Dead`), volumes
 * that exist, topics of that name (whatever their ID: the deletion checks it). What this run
 * deleted already (`deleted`, by {@link dataKey}) is not read again: a deletion the cluster
 * has not finished showing is done. Read-only.
 *
 * @example
 * ```ts
 * import { readDestroyData } from "./destroy_data.ts";
 * // (await readDestroyData(ctx, deletes)).delete_topic.length === 0 → every topic is gone
 * ```
 */
export async function readDestroyData(
  ctx: Pick<DestroyDataContext, "docker" | "dockerAt" | "kafka">,
  deletes: DestroyDeletes,
  deleted: ReadonlySet<string> = new Set(),
): Promise<DestroyDataLeft> {
  const groups = deletes.consumer_groups.filter((name) =>
    !deleted.has(dataKey({ step: "delete_group", name }))
  );
  const volumes = deletes.volumes.filter((v) =>
    !deleted.has(dataKey({ step: "remove_volume", name: v.name }))
  );
  const topics = deletes.topics.filter((t) =>
    !deleted.has(dataKey({ step: "delete_topic", name: t.name }))
  );
  const knownGroups = groups.length === 0 ? new Map() : await ctx.kafka.describeGroups(groups);
  // each volume on its daemon (a set's instances' are on their endpoints)
  const knownVolumes = new Set<string>();
  for (const endpoint of new Set(volumes.map((v) => v.endpoint ?? null))) {
    const docker = await dockerOf(ctx, endpoint);
    const here = volumes.filter((v) => (v.endpoint ?? null) === endpoint).map((v) => v.name);
    for (const name of (await docker.listVolumes(here)).keys()) knownVolumes.add(name);
  }
  const knownTopics = topics.length === 0
    ? new Map()
    : (await ctx.kafka.describe(topics.map((t) => t.name))).topics;
  return {
    delete_group: groups
      .filter((g) => (knownGroups.get(g)?.state ?? "Dead") !== "Dead")
      .map((name) => ({ step: "delete_group", name })),
    remove_volume: volumes
      .filter((v) => knownVolumes.has(v.name))
      .map((volume) => ({ step: "remove_volume", name: volume.name, volume })),
    delete_topic: topics
      .filter((t) => knownTopics.has(t.name))
      .map((topic) => ({ step: "delete_topic", name: topic.name, topic })),
  };
}

/**
 * Cross a data row for one resource the destroy's decision found still there: delete it through
 * its port, crossing the row's site under the deployment lock. Returns what the boundary's event
 * says (`consumer group g deleted`, `… already gone`); a refusal leaves as the port's error (the
 * operation stays pending at that row).
 *
 * @example
 * ```ts
 * import { deleteDestroyItem } from "./destroy_data.ts";
 * // events.boundary({ …, message: await deleteDestroyItem(ctx, item) });
 * ```
 */
export async function deleteDestroyItem(
  ctx: DestroyDataContext,
  item: DestroyDataItem,
): Promise<string> {
  const site = destroyDataRow(item.step).site;
  switch (item.step) {
    case "delete_group": {
      const r = await providerMutation(ctx.store, site, () => ctx.kafka.deleteGroup(item.name));
      return `consumer group ${item.name} ${r === "deleted" ? "deleted" : "already gone"}`;
    }
    case "remove_volume": {
      const v = item.volume;
      // only the volume sluice created for this project's runner: its labels must say so
      const owner = {
        [LABEL.managedBy]: "sluice",
        [LABEL.project]: ctx.store.project,
        [LABEL.environment]: ctx.store.environment ?? "",
        [LABEL.applicationId]: v.application_id,
        [LABEL.volumeInstance]: v.instance_id,
      };
      const docker = await dockerOf(ctx, v.endpoint);
      const r = await providerMutation(
        ctx.store,
        site,
        () => docker.removeOwnedVolume(v.name, owner),
      );
      return `state volume ${v.name} ${r === "removed" ? "removed" : "already gone"}`;
    }
    case "delete_topic": {
      const t = item.topic;
      const r = await providerMutation(
        ctx.store,
        site,
        () => ctx.kafka.deleteTopic(t.name, t.topic_id),
      );
      return `topic ${t.name} ${r === "deleted" ? "deleted" : "already gone"}`;
    }
  }
}
