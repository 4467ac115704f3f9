/**
 * Apply a format-5 plan: create topics and runners, or do nothing. The steps are the rows of
 * the create table (`lib/protocol/create.ts`), in order, each crossing its row's fault site:
 * under the deployment lock it re-verifies the plan's seal and currency and the fresh runtime,
 * records the intent before the first mutation, creates each topic, then per runner the state
 * volume, the group's initial offsets, the mounted plan file, the stopped container, starts it
 * and waits until it reports RUNNING; then it commits ownership (serial + 1) and clears the
 * operation. A plan with no action writes nothing.
 *
 * It never pulls or builds an image and never adopts a resource it did not create. A
 * format-6 plan (a predicate replacement) is executed by the reviewed coordinator, not here.
 *
 * A plan's connector changes are verified on fresh exact reads before anything is written, and
 * applied after the runtime creates as their own operation (`lib/runtime/connectors.ts`); a
 * pending connector operation is continued by `apply --plan` with the same plan file.
 *
 * @example
 * ```ts
 * import { applyPlan } from "./apply.ts";
 * // const result = await applyPlan(ctx, await readPlanFile("plan.json"));
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { atSite } from "../fault/site.ts";
import type { Plan, PlannedAction } from "../plan/plan.ts";
import { verifyPlanCurrent } from "../plan/plan_file.ts";
import type { StateStore } from "../state/store.ts";
import type { OwnershipDocument } from "../state/ownership.ts";
import { emptyOwnership, stateChecksum } from "../state/ownership.ts";
import type { DockerPort } from "../providers/docker/port.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import { blockerError } from "../validation/blocker.ts";
import type { RunnerTarget } from "../validation/observation.ts";
import { createSite } from "../protocol/create.ts";
import { buildMountedPlan, mountedPlanBytes } from "../protocol/mounted_plan.ts";
import { type Clock, isoNow, RANDOM_UUIDS, sleep, SYSTEM_CLOCK, type UuidSource } from "./deps.ts";
import { writeMountedPlanFile } from "./mounted_plan_file.ts";
import {
  generationOf,
  initialContainerName,
  LABEL,
  RUNNER_ENV,
  RUNNER_EXECUTION,
  RUNNER_PATHS,
  volumeName,
} from "./labels.ts";
import { observeRunner } from "./observer.ts";
import type { ConnectPort } from "../providers/connect/port.ts";
import { isConnectorAction } from "../plan/connectors.ts";
import { CONNECTOR_OPERATION_KIND } from "../protocol/connector.ts";
import {
  applyConnectorChanges,
  type ConnectorApplyResult,
  type ConnectorJourneyContext,
  continueConnectorOperation,
  verifyCommittedConnectorPlan,
  verifyConnectorActions,
} from "./connectors.ts";

/** Everything an apply needs from the outside, passed in (no hidden globals). */
export interface RuntimeContext {
  docker: DockerPort;
  kafka: KafkaPort;
  /** The Connect port of a declared cluster alias (needed only by plans with connector changes). */
  connect?: (cluster: string) => ConnectPort;
  store: StateStore;
  /** Who is acting (recorded in intents, locks and audit). */
  actor: string;
  /** Bootstrap address runners use on the Docker network. */
  bootstrapInternal: string;
  /** Host directory where mounted plan files live (content-addressed, never overwritten). */
  plansDir: string;
  /** The project's current source hash (re-read from disk by the caller). */
  sourceSha256: string;
  /** Progress reporting (the CLI prints one line per step on a terminal). */
  progress?: (step: string, detail: string) => void;
  /** Default: the system clock and random UUIDs. */
  clock?: Clock;
  uuids?: UuidSource;
  /** How long a runner may take to report RUNNING (default 120 s). */
  readyTimeoutMs?: number;
  /** Labels added to every container and volume sluice creates (e.g. a test run's label). */
  extraLabels?: Record<string, string>;
  /** Remove a stale local lock left by a dead process first (explicit; never silent). */
  breakStaleLock?: string;
}

/** The result of an apply. */
export interface ApplyResult {
  noop: boolean;
  operation_id: string | null;
  serial: number;
  actions: PlannedAction[];
  runners: Array<
    { model: string; application_id: string; container_id: string; volume_instance: string }
  >;
  /** The connector operation, when the plan changes connectors (absent otherwise). */
  connectors?: ConnectorApplyResult;
}

/** What the connector journey takes from the apply's context. */
function connectorContext(ctx: RuntimeContext, clock: Clock): ConnectorJourneyContext {
  return {
    store: ctx.store,
    actor: ctx.actor,
    sourceSha256: ctx.sourceSha256,
    connect: ctx.connect ?? (() => {
      throw new SluiceError("ENV_CONNECT_UNREACHABLE", "no Kafka Connect port was given");
    }),
    clock,
    progress: ctx.progress,
  };
}

/** Apply a verified format-5 plan (see module docs). */
export async function applyPlan(
  ctx: RuntimeContext,
  plan: Plan,
  planSha256: string,
): Promise<ApplyResult> {
  if (plan.format === 6) {
    throw new SluiceError(
      "BLOCKED_REVIEWED_PLAN",
      "a format-6 plan is a reviewed predicate replacement; it is executed by the coordinator (apply --plan)",
    );
  }
  if (plan.blockers.length > 0) throw blockerError(plan.blockers);
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const now = () => isoNow(clock);
  const journey = connectorContext(ctx, clock);
  const progress = ctx.progress ?? (() => {});
  if (ctx.breakStaleLock) await ctx.store.breakStaleLock(ctx.breakStaleLock);
  await ctx.store.acquireLock({ actor: ctx.actor });
  try {
    let snap = await ctx.store.load();
    if (snap.control?.opened.kind === CONNECTOR_OPERATION_KIND) {
      // a pending connector operation is continued with its own plan, from exact reads
      const r = await continueConnectorOperation(
        journey,
        plan,
        planSha256,
        snap,
      );
      return {
        noop: false,
        operation_id: r.operation_id,
        serial: r.serial,
        actions: plan.actions.filter(isConnectorAction),
        runners: [],
        connectors: r,
      };
    }
    // a connector plan whose operation was committed already (its acknowledgement lost) is a
    // verified no-op: the audit names the plan's operation and exact reads show the changes
    const committed = await verifyCommittedConnectorPlan(
      journey,
      plan,
      planSha256,
      snap,
    );
    if (committed) {
      return {
        noop: true,
        operation_id: committed.operation_id,
        serial: committed.serial,
        actions: [],
        runners: [],
        connectors: committed,
      };
    }
    verifyPlanCurrent(plan, {
      project: ctx.store.project,
      environment: ctx.store.environment,
      sourceSha256: ctx.sourceSha256,
      stateChecksum: snap.ownership?.checksum ?? null,
      store: snap.identity,
    });
    if (plan.actions.length === 0) {
      return {
        noop: true,
        operation_id: null,
        serial: snap.ownership?.document.serial ?? 0,
        actions: [],
        runners: [],
      };
    }
    if (snap.control) {
      throw new SluiceError(
        "BLOCKED_OPERATION_PENDING",
        `operation ${snap.control.opened.operation_id} (${snap.control.opened.kind}) is pending; inspect it with 'sluice state show'`,
      );
    }
    // connector changes are verified on fresh exact reads before anything of the plan is done
    const runtime = plan.actions.filter((a) => !isConnectorAction(a));
    await verifyConnectorActions(
      journey,
      plan,
      snap.ownership?.document ?? null,
    );
    if (runtime.length === 0) {
      const r = (await applyConnectorChanges(journey, plan, planSha256))!;
      return {
        noop: false,
        operation_id: r.operation_id,
        serial: r.serial,
        actions: plan.actions,
        runners: [],
        connectors: r,
      };
    }
    // fresh re-verification before the intent, so that a foreseeable failure leaves no
    // pending operation behind: no topic to create exists yet (sluice never adopts one) ...
    const topics = plan.actions.flatMap((a) => a.type === "create_topic" ? [a.topic] : []);
    if (topics.length > 0) {
      const seen = await ctx.kafka.describe(topics);
      const existing = topics.filter((t) => seen.topics.has(t));
      if (existing.length > 0) {
        throw new SluiceError(
          "BLOCKED_UNOWNED_TOPIC",
          `topic ${
            existing.join(", ")
          } appeared since the plan was made; sluice never adopts a topic it did not create`,
          { evidence: { topics: existing } },
        );
      }
    }
    // ... the image and network of every runner to create are present, and nothing carries
    // its identity yet
    for (const a of plan.actions) {
      if (a.type !== "create_runner") continue;
      const artifact = artifactOf(plan, a.model);
      await requireImageAndNetwork(ctx, artifact);
      const obs = await observeRunner({ ...ctx, clock }, targetOf(artifact));
      if (
        obs.containers.length > 0 || obs.volume.exists ||
        Object.keys(obs.kafka.committed).length > 0
      ) {
        throw new SluiceError(
          "BLOCKED_UNOWNED_RUNTIME",
          `application ID ${artifact.application_id} gained containers, a volume or offsets since the plan was made`,
          { evidence: { containers: obs.containers.map((c) => c.id), volume: obs.volume.exists } },
        );
      }
    }

    const operationId = (ctx.uuids ?? RANDOM_UUIDS).uuid();
    const prior: OwnershipDocument = snap.ownership?.document ??
      emptyOwnership(ctx.store.project, ctx.store.environment);
    snap = await atSite(createSite("intent"), () =>
      ctx.store.beginOperation(snap, {
        operation_id: operationId,
        kind: "create",
        project: ctx.store.project,
        environment: ctx.store.environment,
        actor: ctx.actor,
        created_at: now(),
        original_state_checksum: snap.ownership?.checksum ?? stateChecksum(prior),
        reviewed_plan_sha256: planSha256,
        details: {
          plan_sha256: planSha256,
          actions: runtime.map((a) => a.type + ":" + describe(a)),
        },
      }));
    progress("intent", `operation ${operationId} recorded`);

    const next: OwnershipDocument = structuredClone(prior);
    next.serial = prior.serial + 1;
    const runners: ApplyResult["runners"] = [];
    for (const a of plan.actions) {
      if (a.type === "create_topic") {
        const id = await atSite(
          createSite("create_topic"),
          () => ctx.kafka.createTopic(a.topic, a.partitions),
        );
        next.topics.push({ name: a.topic, topic_id: id });
        progress(
          "topic",
          `${a.topic} created (${a.partitions} partition${
            a.partitions === 1 ? "" : "s"
          }, id ${id})`,
        );
      }
    }
    for (const a of plan.actions) {
      if (a.type !== "create_runner") continue;
      const artifact = artifactOf(plan, a.model);
      const created = await createRunner(ctx, artifact, a.artifact_sha256, operationId, progress);
      runners.push({ model: a.model, application_id: artifact.application_id, ...created });
      next.runners.push({
        model: a.model,
        application_id: artifact.application_id,
        artifact_sha256: a.artifact_sha256,
        volume: { name: volumeName(artifact.application_id), instance_id: created.volume_instance },
        container_name: initialContainerName(artifact.application_id),
      });
    }
    next.topics.sort((x, y) => x.name.localeCompare(y.name));
    next.runners.sort((x, y) => x.model.localeCompare(y.model));
    snap = await atSite(
      createSite("commit"),
      () => ctx.store.commitOwnership(snap, next, { operationId, recordedAt: now() }),
    );
    progress("commit", `ownership serial ${next.serial}`);
    // then the plan's connector changes, as their own operation (sources and sinks need the
    // topics and runners that were just committed)
    const connectors = await applyConnectorChanges(journey, plan, planSha256);
    return {
      noop: false,
      operation_id: operationId,
      serial: connectors?.serial ?? next.serial,
      actions: plan.actions,
      runners,
      ...(connectors ? { connectors } : {}),
    };
  } finally {
    await ctx.store.releaseLock();
  }
}

function describe(a: PlannedAction): string {
  return "topic" in a ? a.topic : "model" in a ? a.model : a.name;
}

function artifactOf(plan: Plan, model: string): RunnerArtifact {
  const a = plan.artifacts.find((x) => x.model === model);
  if (!a) throw new SluiceError("PLAN_INVALID", `the plan has no artifact for model ${model}`);
  return a.artifact;
}

/** The observer's target for an artifact. */
export function targetOf(artifact: RunnerArtifact): RunnerTarget {
  return {
    applicationId: artifact.application_id,
    inputTopic: artifact.input.topic,
    outputTopic: artifact.output.topic,
    image: artifact.image,
    network: artifact.network,
  };
}

/** The pinned image (never pulled or built here) and the network must exist. */
async function requireImageAndNetwork(ctx: RuntimeContext, artifact: RunnerArtifact) {
  const image = await ctx.docker.inspectImage(artifact.image);
  if (!image) {
    throw new SluiceError(
      "ENV_IMAGE_MISSING",
      `runner image ${artifact.image} is not on this Docker daemon; sluice never pulls or builds during apply (run 'sluice runtime build')`,
    );
  }
  if (!(await ctx.docker.networkId(artifact.network))) {
    throw new SluiceError(
      "ENV_NETWORK_MISSING",
      `Docker network ${artifact.network} does not exist`,
    );
  }
  return image;
}

async function createRunner(
  ctx: RuntimeContext,
  artifact: RunnerArtifact,
  artifactSha: string,
  operationId: string,
  progress: (step: string, detail: string) => void,
): Promise<{ container_id: string; volume_instance: string }> {
  const appId = artifact.application_id;
  const image = await requireImageAndNetwork(ctx, artifact);
  const baseLabels = {
    ...ctx.extraLabels,
    [LABEL.managedBy]: "sluice",
    [LABEL.project]: artifact.project,
    [LABEL.environment]: artifact.environment ?? "",
    [LABEL.model]: artifact.model,
    [LABEL.applicationId]: appId,
  };
  const instance = (ctx.uuids ?? RANDOM_UUIDS).uuid();
  const volume = volumeName(appId);
  await atSite(
    createSite("create_volume"),
    () =>
      ctx.docker.createVolume(volume, { ...baseLabels, [LABEL.volumeInstance]: instance }, {
        image: artifact.image,
        path: RUNNER_PATHS.instanceFile,
        uuid: instance,
      }),
  );
  progress("volume", `${volume} created (instance ${instance})`);

  const cluster = await ctx.kafka.describe([artifact.input.topic, artifact.output.topic]);
  const input = cluster.topics.get(artifact.input.topic);
  const output = cluster.topics.get(artifact.output.topic);
  if (!input || !output) {
    throw new SluiceError(
      "BLOCKED_TOPIC_MISSING",
      `topic ${!input ? artifact.input.topic : artifact.output.topic} does not exist`,
    );
  }
  // the consumer group is positioned explicitly before the runner first starts; the runner
  // itself never resets offsets (auto.offset.reset=none)
  const partitions = [...Array(input.partitions).keys()];
  const ranges = await ctx.kafka.offsetRanges(input.name, partitions);
  const initial = new Map(
    ranges.map((
      r,
    ) => [r.partition, artifact.initial_offsets === "earliest" ? r.earliest : r.latest]),
  );
  await atSite(
    createSite("position_offsets"),
    () => ctx.kafka.setGroupOffsets(appId, input.name, initial),
  );
  progress(
    "offsets",
    `group ${appId} positioned at ${artifact.initial_offsets} (${
      [...initial].map(([p, o]) => `${p}:${o}`).join(", ")
    })`,
  );

  const mounted = buildMountedPlan(artifact, ctx.bootstrapInternal, {
    cluster_id: cluster.clusterId,
    input_topic_id: input.id,
    output_topic_id: output.id,
  });
  const { bytes, sha256 } = mountedPlanBytes(mounted);
  const planPath = await writeMountedPlanFile(ctx.plansDir, bytes, sha256);
  const generation = generationOf(operationId, 0);
  const containerId = await atSite(
    createSite("create_container"),
    () =>
      ctx.docker.createContainer({
        name: initialContainerName(appId),
        image: artifact.image,
        labels: {
          ...baseLabels,
          [LABEL.artifactSha256]: artifactSha,
          [LABEL.planSha256]: sha256,
          [LABEL.generation]: generation,
          [LABEL.operationId]: operationId,
          [LABEL.actionIndex]: "0",
        },
        env: [
          ...image.env,
          `${RUNNER_ENV.planSha256}=${sha256}`,
          `${RUNNER_ENV.generation}=${generation}`,
        ],
        network: artifact.network,
        planHostPath: planPath,
        planContainerPath: RUNNER_PATHS.plan,
        volume,
        volumeContainerPath: RUNNER_PATHS.volume,
        memoryBytes: RUNNER_EXECUTION.memoryBytes,
        stopTimeoutSeconds: RUNNER_EXECUTION.stopTimeoutSeconds,
      }),
  );
  progress("container", `${initialContainerName(appId)} created (${containerId.slice(0, 12)})`);
  await atSite(createSite("start_container"), () => ctx.docker.startContainer(containerId));
  await waitReady(ctx, containerId, generation, sha256, ctx.readyTimeoutMs ?? 120_000);
  progress("ready", `${initialContainerName(appId)} is RUNNING`);
  return { container_id: containerId, volume_instance: instance };
}

/**
 * Poll until the runner reports RUNNING for this exact generation and plan (read-only:
 * container state and the status file on its volume). A runner that exits fails the wait
 * with its raw exit code; a timeout fails it without touching the container.
 */
export async function waitReady(
  ctx: Pick<RuntimeContext, "docker" | "clock">,
  containerId: string,
  generation: string,
  planSha256: string,
  timeoutMs: number,
): Promise<void> {
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const deadline = clock.now() + timeoutMs;
  while (true) {
    const c = await ctx.docker.inspectContainer(containerId);
    if (!c) throw new SluiceError("BLOCKED_RUNNER_MISSING", `container ${containerId} disappeared`);
    if (!c.state.running && c.state.status === "exited") {
      throw new SluiceError(
        "BLOCKED_RUNNER_EXITED",
        `runner ${c.name} exited with code ${c.state.exitCode}${
          c.state.oomKilled ? " (OOM-killed)" : ""
        } before RUNNING`,
        { evidence: { exitCode: c.state.exitCode, oomKilled: c.state.oomKilled } },
      );
    }
    const bytes = await ctx.docker.readContainerFile(containerId, RUNNER_PATHS.statusFile);
    if (bytes) {
      try {
        const s = JSON.parse(new TextDecoder().decode(bytes));
        if (s.state === "RUNNING" && s.generation === generation && s.plan_sha256 === planSha256) {
          return;
        }
      } catch {
        // a status file is replaced atomically; an unreadable one is read again
      }
    }
    if (clock.now() > deadline) {
      throw new SluiceError(
        "UNKNOWN_OUTCOME_NOT_READY",
        `runner ${c.name} did not report RUNNING within ${timeoutMs / 1000}s; it was left as it is`,
      );
    }
    await sleep(clock, 100);
  }
}
