/**
 * What a pending create is decided by, read fresh and read-only: whether its commit is already
 * the state, whether ownership is still the one its intent recorded (or that plus exactly its
 * creations), each topic to create as the cluster shows it, and per runner to create its image
 * and network, the exact observation of its application ID (containers, volume, group, offsets),
 * the topics it reads and writes, and the mounted plan file those topic IDs make. The create's
 * continuation (`create.ts`) and `state runner-status` (`create_next.ts`) decide from these same
 * readings, by the same function.
 *
 * @example
 * ```ts
 * import { readCreate } from "./create_reading.ts";
 * // const r = await readCreate(ctx, plan, snap, identitiesOf(snap.control!.opened.intent));
 * // r.topics.map((t) => t.seen?.id), r.runners.map((x) => x.obs.volume.exists)
 * ```
 * @module
 */
import { type RunnerArtifact, runnerTopics } from "../artifact/artifact.ts";
import { SluiceError } from "../errors.ts";
import type { Plan } from "../plan/plan.ts";
import { buildMountedPlan, mountedPlanBytes } from "../protocol/mounted_plan.ts";
import type { ImageInfo } from "../providers/docker/port.ts";
import { commitOfOperation } from "../state/history.ts";
import type { OwnershipDocument } from "../state/ownership.ts";
import type { StateSnapshot } from "../state/store.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";
import { type RunnerObservation, targetOfArtifact } from "../validation/observation.ts";
import type { RuntimeContext } from "./apply_context.ts";
import { artifactOf, type CreateIdentities, type RunnerIdentity } from "./create_identities.ts";
import { priorOwnership } from "./create_ownership.ts";
import { SYSTEM_CLOCK } from "./deps.ts";
import { dockerOf } from "./endpoint_ports.ts";
import { mountedPlanFileState, mountedPlanPath } from "./mounted_plan_file.ts";
import { observeRunner } from "./observer.ts";

/** One topic to create as the cluster shows it. */
export interface TopicReading {
  /** Its name. */
  name: string;
  /** The partitions this operation creates it with. */
  partitions: number;
  /** The topic the cluster has under that name (null: absent). */
  seen: { id: string; partitions: number } | null;
}

/** The mounted plan file a runner's topic IDs make, and whether it is written. */
export interface MountedPlanReading {
  /** Its exact bytes. */
  bytes: Uint8Array;
  /** Their sha256 (the container's plan label). */
  sha256: string;
  /** Its host path. */
  path: string;
  /** Whether that file is written (corrupt: its bytes do not hash to its name). */
  file: "present" | "absent" | "corrupt";
}

/** One runner to create as a fresh exact observation shows it. */
export interface CreateRunnerReading {
  /** The identities the intent recorded for it. */
  identity: RunnerIdentity;
  /** Its artifact. */
  artifact: RunnerArtifact;
  /** The sha256 of its artifact (the plan's action). */
  artifactSha256: string;
  /** The pinned image as the daemon has it (null: absent; never pulled or built). */
  image: ImageInfo | null;
  /** The network's ID (null: absent). */
  networkId: string | null;
  /** The observation of its application ID. */
  obs: RunnerObservation;
  /** The first topic it reads or writes that the cluster does not have (null: all there). */
  missingTopic: string | null;
  /** Its mounted plan (null while a topic is missing). */
  mounted: MountedPlanReading | null;
}

/** What the create's decision reads (see the module documentation). */
export interface CreateReadings {
  /** The pending create operation. */
  operationId: string;
  /** The audit recorded this operation's commit and the state is its result. */
  committed: boolean;
  /** Why ownership is not the operation's to commit (null: it is). */
  changedOwnership: Blocker | null;
  /** The ownership the operation started from (null when it changed). */
  prior: OwnershipDocument | null;
  /** The topics to create, in intent order. */
  topics: TopicReading[];
  /**
   * The runners to create (each instance of a set its own), in intent order, but the runners of
   * one instance this run saw ready (not read again).
   */
  runners: CreateRunnerReading[];
}

/**
 * Read a pending create fresh (see the module documentation); `ready` names the models this run
 * already saw RUNNING (not read again).
 *
 * @example
 * ```ts
 * import { readCreate } from "./create_reading.ts";
 * // const readings = await readCreate(ctx, plan, snap, ids);
 * ```
 */
export async function readCreate(
  ctx: RuntimeContext,
  plan: Plan,
  snap: StateSnapshot,
  ids: CreateIdentities,
  ready: ReadonlySet<string> = new Set(),
): Promise<CreateReadings> {
  const operationId = snap.control!.opened.operation_id;
  const commit = commitOfOperation(snap.history.events, operationId);
  const committed = commit !== null && snap.ownership?.checksum === commit.state_checksum;
  const owned = priorOwnership(ctx.store, snap, ids);
  const topics: TopicReading[] = [];
  // one topic at a time, in intent order: a broker that fails the read is named with the topic
  // the create was about to make (as each step reads it), not with every topic of the plan
  for (const t of ids.topics) {
    const s = (await ctx.kafka.describe([t.name])).topics.get(t.name);
    topics.push({ ...t, seen: s ? { id: s.id, partitions: s.partitions } : null });
  }
  const runners: CreateRunnerReading[] = [];
  for (const identity of ids.runners) {
    const a = plan.actions.find((x) => x.type === "create_runner" && x.model === identity.model);
    if (!a || a.type !== "create_runner") {
      throw new SluiceError("PLAN_INVALID", `the plan does not create runner ${identity.model}`);
    }
    // an instance of a set is read every time: the set's readiness is decided on all of them
    if (identity.instance === undefined && ready.has(identity.model)) continue;
    const docker = await dockerOf(ctx, identity.endpoint);
    runners.push(
      await readRunner({ ...ctx, docker }, identity, artifactOf(plan, identity.model), a),
    );
  }
  return {
    operationId,
    committed,
    changedOwnership: "changed" in owned ? owned.changed : null,
    prior: "prior" in owned ? owned.prior : null,
    topics,
    runners,
  };
}

async function readRunner(
  ctx: RuntimeContext,
  identity: RunnerIdentity,
  artifact: RunnerArtifact,
  action: { artifact_sha256: string },
): Promise<CreateRunnerReading> {
  const image = await ctx.docker.inspectImage(artifact.image);
  const networkId = await ctx.docker.networkId(artifact.network);
  const obs = await observeRunner(
    { ...ctx, clock: ctx.clock ?? SYSTEM_CLOCK },
    {
      ...targetOfArtifact(artifact),
      ...(identity.instance === undefined ? {} : { instance: identity.instance }),
    },
  );
  // the topics the runner reads and writes, bound by ID into its mounted plan (the dead-letter
  // topic too: the runner's gate then refuses one deleted and recreated since)
  const names = runnerTopics(artifact);
  const cluster = await ctx.kafka.describe(names);
  const missingTopic = names.find((n) => !cluster.topics.has(n)) ?? null;
  let mounted: MountedPlanReading | null = null;
  if (missingTopic === null) {
    const topicId = (name: string) => cluster.topics.get(name)!.id;
    const { bytes, sha256 } = mountedPlanBytes(
      buildMountedPlan(artifact, ctx.bootstrapInternal, {
        cluster_id: cluster.clusterId,
        input_topic_id: topicId(artifact.input.topic),
        output_topic_id: topicId(artifact.output.topic),
        ...(artifact.on_invalid
          ? { dead_letter_topic_id: topicId(artifact.on_invalid.topic) }
          : {}),
      }),
    );
    mounted = {
      bytes,
      sha256,
      path: mountedPlanPath(ctx.plansDir, sha256),
      file: await mountedPlanFileState(ctx.plansDir, sha256),
    };
  }
  return {
    identity,
    artifact,
    artifactSha256: action.artifact_sha256,
    image,
    networkId,
    obs,
    missingTopic,
    mounted,
  };
}

/**
 * Why a runner cannot be created on this daemon: its pinned image (never pulled or built here)
 * or its network is missing; null when both exist.
 *
 * @example
 * ```ts
 * import { missingImageOrNetwork } from "./create_reading.ts";
 * // missingImageOrNetwork(artifact, await docker.inspectImage(artifact.image), networkId)
 * ```
 */
export function missingImageOrNetwork(
  artifact: RunnerArtifact,
  image: ImageInfo | null,
  networkId: string | null,
): Blocker | null {
  if (!image) {
    return blocker(
      "ENV_IMAGE_MISSING",
      `runner image ${artifact.image} is not on this Docker daemon; sluice never pulls or builds during apply (run 'sluice runtime build')`,
    );
  }
  if (!networkId) {
    return blocker("ENV_NETWORK_MISSING", `Docker network ${artifact.network} does not exist`);
  }
  return null;
}
