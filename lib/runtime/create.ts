/**
 * The create journey: a format-5 plan's topics and runners. The steps are the rows of the create
 * table (`lib/protocol/create.ts`), in order, each crossing its row's fault site: under the
 * deployment lock (taken by the router, `lib/runtime/journeys.ts`) it re-verifies the fresh
 * runtime, records the intent before the first mutation, creates each topic, then per runner the
 * state volume, the group's initial offsets, the mounted plan file, the stopped container, starts
 * it and waits until it reports RUNNING; then it commits ownership (serial + 1) and clears the
 * operation.
 *
 * It never pulls or builds an image and never adopts a resource it did not create.
 *
 * **Continuation.** The intent records ahead every identity sluice chooses for what it will
 * create (`details.identities`): each runner's volume instance UUID, container name and
 * generation (written as labels atomically by Docker), and the group's initial positions
 * (decided before the intent; a new topic starts at 0). A process killed anywhere leaves the
 * operation pending; `apply --plan` with the same plan file continues it: every step observes
 * first, creates what is absent, adopts what carries exactly these identities (the volume by its
 * instance label, file and operation label; the container by name, operation and generation;
 * the positions by equality with the recorded ones) and blocks on anything else
 * (`BLOCKED_UNOWNED_RUNTIME`). Kafka assigns topic IDs and a topic carries no labels: a planned
 * topic (absent when the intent was recorded under the lock) found with the planned partition
 * count is adopted as the one whose create response was lost; another partition count blocks
 * (`BLOCKED_UNOWNED_TOPIC`). A runner that exited before RUNNING with its positions untouched is
 * started again. Applying a plan that an operation already committed is a verified no-op: the
 * state must be the plan's protected state plus exactly its creations, and every created runner
 * is observed as owned.
 *
 * @example
 * ```ts
 * import { startCreate } from "./create.ts";
 * // under the lock, the plan verified current: const result = await startCreate(ctx, plan, sha256, snap);
 * ```
 * @module
 */
import { createOnExistingVolume } from "../providers/docker/existing_volume.ts";
import { SluiceError } from "../errors.ts";
import { writeIntent } from "./unknown_outcome.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { runnerTopics } from "../artifact/artifact.ts";
import { atSite } from "../fault/site.ts";
import { pendingCommands, type Plan, type PlannedAction, type RunnerResume } from "../plan/plan.ts";
import { currentContext, verifyContinuation, verifyPlanCurrent } from "../plan/plan_file.ts";
import type { StateSnapshot } from "../state/store.ts";
import type { OperationIntent } from "../state/journal.ts";
import type { Json } from "../state/_canonical.ts";
import { checkGeneration, verifyOwnedRunner } from "../validation/runner_checks.ts";
import type { OwnershipDocument } from "../state/ownership.ts";
import {
  emptyOwnership,
  type RetainedRunner,
  stateChecksum,
  withRetained,
} from "../state/ownership.ts";
import { blockerError } from "../validation/blocker.ts";
import type { RunnerObservation, RunnerTarget } from "../validation/observation.ts";
import { targetOfArtifact } from "../validation/observation.ts";
import { createSite } from "../protocol/create.ts";
import { buildMountedPlan, mountedPlanBytes } from "../protocol/mounted_plan.ts";
import { type Clock, isoNow, RANDOM_UUIDS, SYSTEM_CLOCK } from "./deps.ts";
import { OperationEvents } from "./progress.ts";
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
import { runtimeActions } from "../plan/connectors.ts";
import { providerMutation } from "./provider_mutation.ts";
import type { ApplyResult, RuntimeContext } from "./apply_context.ts";

/**
 * Continue the pending create operation this plan file started (`apply --plan` with the same
 * file again), from exact observation. Its intent was recorded from these plan bytes against their
 * protected state; while it is pending nothing else can change ownership (a local commit may have
 * written its result already, which the commit's retry verifies).
 *
 * @example
 * ```ts
 * // if (pending?.kind === "create") return await continueCreate(ctx, plan, sha256, snap);
 * ```
 */
export async function continueCreate(
  ctx: RuntimeContext,
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): Promise<ApplyResult> {
  const pending = snap.control!.opened;
  verifyContinuation(plan, planSha256, currentContext(ctx.store, ctx.sourceSha256, snap), {
    what: "create",
    operation_id: pending.operation_id,
    plan_sha256: pending.intent.reviewed_plan_sha256,
  });
  const events = createEvents(ctx, pending.operation_id, planSha256);
  return await events.run(async () => {
    events.started(true, `operation ${pending.operation_id} continues from its intent`);
    return await inOperation(
      pending.operation_id,
      planSha256,
      () => runCreate(ctx, events, plan, snap, pending.operation_id, identitiesOf(pending.intent)),
    );
  });
}

/**
 * A repeated apply of a completed create: the state is the plan's protected state plus exactly
 * its creations and every created runner is observed as owned — verified, nothing written. Null
 * when no operation completed this plan.
 *
 * @example
 * ```ts
 * // const done = await verifyCommittedCreate(ctx, plan, snap); if (done) return done;
 * ```
 */
export async function verifyCommittedCreate(
  ctx: RuntimeContext,
  plan: Plan,
  snap: StateSnapshot,
): Promise<ApplyResult | null> {
  const done = completedBy(plan, snap);
  if (!done) return null;
  verifyPlanCurrent(plan, {
    ...currentContext(ctx.store, ctx.sourceSha256, snap),
    stateChecksum: plan.protected_state.checksum,
  });
  await verifyCreated(ctx, plan, snap);
  return {
    noop: true,
    already_applied: true,
    operation_id: done,
    serial: snap.ownership!.document.serial,
    actions: [],
    runners: [],
  };
}

/**
 * Start a create operation under the lock, the plan verified current: re-verify the fresh
 * runtime so that a foreseeable failure leaves no pending operation, record the intent with every
 * identity it will create, then run the create table's rows.
 *
 * @example
 * ```ts
 * // return await startCreate(ctx, plan, sha256, snap);
 * ```
 */
export async function startCreate(
  ctx: RuntimeContext,
  plan: Plan,
  planSha256: string,
  start: StateSnapshot,
): Promise<ApplyResult> {
  let snap = start;
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const now = () => isoNow(clock);
  const runtime = runtimeActions(plan.actions);
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
    if (a.resume) {
      verifyResume(a.model, a.resume, obs);
      continue;
    }
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
  // written ahead in the intent: every identity this operation will create that sluice
  // chooses (volume instances, container names and generations, initial positions), so that
  // a continuation adopts exactly these and nothing else
  const identities = await plannedIdentities(ctx, plan, operationId);
  const prior: OwnershipDocument = snap.ownership?.document ??
    emptyOwnership(ctx.store.project, ctx.store.environment);
  const events = createEvents(ctx, operationId, planSha256);
  return await events.run(async () => {
    events.started(false, `create operation ${operationId}`);
    snap = await writeIntent(
      { operation_id: operationId, kind: "create", plan_sha256: planSha256 },
      () =>
        atSite(createSite("intent"), () =>
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
              identities: identitiesJson(identities),
            },
          })),
    );
    events.boundary({
      kind: "intent",
      boundary: "intent",
      message: `operation ${operationId} recorded`,
    });
    return await inOperation(
      operationId,
      planSha256,
      () => runCreate(ctx, events, plan, snap, operationId, identities),
    );
  });
}

/** The events of one create run. */
function createEvents(ctx: RuntimeContext, operationId: string, planSha256: string) {
  return new OperationEvents({
    journey: "create",
    operationId,
    listener: ctx.onProgress,
    clock: ctx.clock,
    signal: ctx.signal,
    planSha256,
  });
}

const PROVIDER_NAMES: Record<string, string> = {
  docker: "Docker",
  kafka: "Kafka",
  postgres: "PostgreSQL",
};

/**
 * Run the rows of a recorded create operation. A provider failure (a broker restarted, a daemon
 * that stopped answering: `ENV_*_UNREACHABLE`, `UNKNOWN_OUTCOME_*`, ...) leaves it pending; the
 * error keeps its code, message, evidence and cause and says so, naming the provider's address
 * and the next commands: check it answers (`sluice status`), then continue with the same plan
 * file (every step observes first and adopts what this operation made), or abandon it.
 */
async function inOperation<T>(
  operationId: string,
  planSha256: string,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const provider = error instanceof SluiceError ? error.evidence?.provider : undefined;
    if (!(error instanceof SluiceError) || typeof provider !== "string") throw error;
    const cmds = pendingCommands({
      operation_id: operationId,
      kind: "create",
      status: "in_progress",
      last_boundary: null,
      plan_sha256: planSha256,
    });
    const at = `${PROVIDER_NAMES[provider] ?? provider} at ${error.evidence?.address}`;
    throw new SluiceError(
      error.code,
      `${error.message}\ncreate operation ${operationId} stays pending: check that ${at} answers ('sluice status'), then continue it with '${cmds.continue}' (each step observes first and adopts what this operation already made), or abandon it ('${cmds.abandon}')`,
      {
        evidence: { ...error.evidence, operation_id: operationId, commands: cmds },
        ...(error.location ? { location: error.location } : {}),
        cause: error.cause ?? error,
      },
    );
  }
}

/**
 * The create table's rows from the recorded intent: each step observes first, then creates
 * what is absent, adopts what this operation exactly created (by the identities its intent
 * recorded), and blocks on anything else. A first run finds everything absent; a continuation
 * (the same plan file after a kill) finds what the first run made.
 */
async function runCreate(
  ctx: RuntimeContext,
  events: OperationEvents,
  plan: Plan,
  start: StateSnapshot,
  operationId: string,
  ids: CreateIdentities,
): Promise<ApplyResult> {
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  let snap = start;
  const prior = priorOwnership(ctx, snap, ids);
  const next: OwnershipDocument = structuredClone(prior);
  next.serial = prior.serial + 1;
  const runners: ApplyResult["runners"] = [];
  for (const t of ids.topics) {
    const seen = (await ctx.kafka.describe([t.name])).topics.get(t.name);
    let id: string;
    if (!seen) {
      id = await providerMutation(
        ctx.store,
        createSite("create_topic"),
        () => ctx.kafka.createTopic(t.name, t.partitions),
      );
      events.boundary({
        kind: "created",
        boundary: "create_topic",
        resource: "topic",
        name: t.name,
        message: `${t.name} created (${t.partitions} partition${
          t.partitions === 1 ? "" : "s"
        }, id ${id})`,
      });
    } else if (seen.partitions === t.partitions) {
      // Kafka assigns topic IDs and topics carry no labels: a topic this operation planned,
      // absent when its intent was recorded under the lock, found with the planned partitions
      // is taken as the one whose create response was lost (runbook: create journey)
      id = seen.id;
      events.boundary({
        kind: "adopted",
        boundary: "create_topic",
        resource: "topic",
        name: t.name,
        message: `${t.name} adopted (created by this operation, id ${id})`,
      });
    } else {
      throw new SluiceError(
        "BLOCKED_UNOWNED_TOPIC",
        `topic ${t.name} has ${seen.partitions} partitions, not the ${t.partitions} this operation creates; sluice never adopts it`,
        { evidence: { topic: t.name, partitions: seen.partitions, planned: t.partitions } },
      );
    }
    next.topics.push({ name: t.name, topic_id: id });
  }
  for (const r of ids.runners) {
    const a = plan.actions.find((x) => x.type === "create_runner" && x.model === r.model);
    if (!a || a.type !== "create_runner") {
      throw new SluiceError("PLAN_INVALID", `the plan does not create runner ${r.model}`);
    }
    const artifact = artifactOf(plan, r.model);
    const created = await createRunner(
      ctx,
      events,
      artifact,
      a.artifact_sha256,
      operationId,
      r,
      clock,
    );
    runners.push({ model: r.model, application_id: artifact.application_id, ...created });
    next.runners.push({
      model: r.model,
      application_id: artifact.application_id,
      artifact_sha256: a.artifact_sha256,
      volume: { name: r.volume, instance_id: r.volume_instance },
      container_name: r.container,
    });
  }
  next.topics.sort((x, y) => x.name.localeCompare(y.name));
  next.runners.sort((x, y) => x.model.localeCompare(y.model));
  const resumedModels = ids.runners.filter((r) => r.resumed).map((r) => r.model);
  const committedNext = withRetained(
    next,
    (next.retained ?? []).filter((r) => !resumedModels.includes(r.model)),
  );
  snap = await atSite(
    createSite("commit"),
    () =>
      ctx.store.commitOwnership(snap, committedNext, { operationId, recordedAt: isoNow(clock) }),
  );
  events.committed(next.serial, `ownership serial ${next.serial}`);
  return {
    noop: false,
    already_applied: false,
    operation_id: operationId,
    serial: next.serial,
    actions: plan.actions,
    runners,
  };
}

/**
 * The ownership the operation started from. A local commit writes history, then ownership, then
 * the clear: killed after the ownership, the state is already the result, and undoing exactly the
 * recorded creations must give back the intent's original state (anything else changed it).
 */
function priorOwnership(
  ctx: RuntimeContext,
  snap: StateSnapshot,
  ids: CreateIdentities,
): OwnershipDocument {
  const original = snap.control!.opened.intent.original_state_checksum;
  const current = snap.ownership?.document ??
    emptyOwnership(ctx.store.project, ctx.store.environment);
  if (stateChecksum(current) === original) return current;
  const undone: OwnershipDocument = withRetained(
    {
      ...current,
      serial: current.serial - 1,
      topics: current.topics.filter((t) => !ids.topics.some((x) => x.name === t.name)),
      runners: current.runners.filter((r) => !ids.runners.some((x) => x.model === r.model)),
    },
    [
      ...(current.retained ?? []),
      ...ids.runners.flatMap((r) => r.resumed ? [r.resumed.retained] : []),
    ],
  );
  if (stateChecksum(undone) !== original) {
    throw new SluiceError(
      "BLOCKED_STATE_CHANGED",
      `ownership changed while create operation ${
        snap.control!.opened.operation_id
      } was pending: it is neither its original state nor that state plus its creations`,
      { evidence: { original, current: stateChecksum(current) } },
    );
  }
  return undone;
}

/** What a create operation records ahead in its intent (`details.identities`). */
export interface CreateIdentities {
  topics: Array<{ name: string; partitions: number }>;
  runners: Array<{
    model: string;
    application_id: string;
    volume: string;
    volume_instance: string;
    container: string;
    generation: string;
    input_topic: string;
    /** The initial positions, decided before the intent (a new topic starts at 0). */
    offsets: Array<{ partition: number; offset: string }>;
    /**
     * A model declared again: the record its removal kept (released by this create) and whether
     * the kept volume is adopted. The positions are then the kept committed offsets.
     */
    resumed?: { retained: RetainedRunner; volume_kept: boolean };
  }>;
}

/** Decide every identity before the intent. */
async function plannedIdentities(
  ctx: RuntimeContext,
  plan: Plan,
  operationId: string,
): Promise<CreateIdentities> {
  const uuids = ctx.uuids ?? RANDOM_UUIDS;
  const topics = plan.actions.flatMap((a) =>
    a.type === "create_topic" ? [{ name: a.topic, partitions: a.partitions }] : []
  );
  const runners: CreateIdentities["runners"] = [];
  for (const a of plan.actions) {
    if (a.type !== "create_runner") continue;
    const artifact = artifactOf(plan, a.model);
    const input = artifact.input.topic;
    const planned = topics.find((t) => t.name === input);
    let offsets: Array<{ partition: number; offset: string }>;
    // a model declared again resumes from the offsets its removal kept: they are its recorded
    // positions (so nothing repositions the group); none left → initial_offsets as for a new one
    const kept = a.resume
      ? Object.entries((await observeRunner(ctx, targetOf(artifact))).kafka.committed)
        .map(([p, o]) => ({ partition: Number(p), offset: o }))
        .sort((x, y) => x.partition - y.partition)
      : [];
    if (kept.length > 0) {
      offsets = kept;
    } else if (planned) {
      offsets = [...Array(planned.partitions).keys()].map((p) => ({ partition: p, offset: "0" }));
    } else {
      const t = (await ctx.kafka.describe([input])).topics.get(input);
      if (!t) {
        throw new SluiceError("BLOCKED_TOPIC_MISSING", `input topic ${input} does not exist`);
      }
      const ranges = await ctx.kafka.offsetRanges(input, [...Array(t.partitions).keys()]);
      offsets = ranges.map((r) => ({
        partition: r.partition,
        offset: String(artifact.initial_offsets === "earliest" ? r.earliest : r.latest),
      }));
    }
    runners.push({
      model: a.model,
      application_id: artifact.application_id,
      volume: volumeName(artifact.application_id),
      volume_instance: a.resume?.volume_kept ? a.resume.volume_instance : uuids.uuid(),
      ...(a.resume
        ? {
          resumed: {
            retained: retainedOf(a.model, artifact, a.resume),
            volume_kept: a.resume.volume_kept,
          },
        }
        : {}),
      container: initialContainerName(artifact.application_id),
      generation: generationOf(operationId, 0),
      input_topic: input,
      offsets,
    });
  }
  return { topics, runners };
}

function identitiesJson(ids: CreateIdentities): Json {
  return JSON.parse(JSON.stringify(ids)) as Json;
}

/** Read the identities a create intent recorded (strictly: an older intent cannot continue). */
function identitiesOf(intent: OperationIntent): CreateIdentities {
  const v = intent.details.identities as unknown;
  const bad = (why: string): never => {
    throw new SluiceError(
      "BLOCKED_CREATE_NOT_CONTINUABLE",
      `create operation ${intent.operation_id} cannot be continued: its intent ${why}; abandon it ('sluice state abandon')`,
    );
  };
  if (typeof v !== "object" || v === null) return bad("records no identities");
  const ids = v as CreateIdentities;
  if (!Array.isArray(ids.topics) || !Array.isArray(ids.runners)) return bad("is malformed");
  for (const r of ids.runners) {
    if (
      typeof r.volume_instance !== "string" || typeof r.generation !== "string" ||
      !Array.isArray(r.offsets)
    ) {
      bad(`records runner ${String(r.model)} incompletely`);
    }
  }
  return ids;
}

/**
 * The operation that already committed exactly this plan, if the current state is the plan's
 * protected state plus exactly its creations (one serial later, nothing after it).
 */
function completedBy(plan: Plan, snap: StateSnapshot): string | null {
  const own = snap.ownership;
  if (!own || own.document.serial !== plan.protected_state.serial + 1) return null;
  const last = snap.history.events.filter((e) =>
    e.kind === "ownership_committed" || e.kind === "runner_completed"
  ).at(-1);
  if (!last || last.kind !== "ownership_committed" || last.serial !== own.document.serial) {
    return null;
  }
  const topics = plan.actions.flatMap((a) => a.type === "create_topic" ? [a.topic] : []);
  const runners = plan.actions.flatMap((a) => a.type === "create_runner" ? [a] : []);
  for (const t of topics) if (!own.document.topics.some((x) => x.name === t)) return null;
  for (const r of runners) {
    const o = own.document.runners.find((x) => x.model === r.model);
    if (!o || o.artifact_sha256 !== r.artifact_sha256 || o.application_id !== r.application_id) {
      return null;
    }
  }
  // undo exactly those creations: the result must be the plan's protected state
  const prior: OwnershipDocument = withRetained(
    {
      ...own.document,
      serial: own.document.serial - 1,
      topics: own.document.topics.filter((x) => !topics.includes(x.name)),
      runners: own.document.runners.filter((x) => !runners.some((r) => r.model === x.model)),
    },
    [
      ...(own.document.retained ?? []),
      ...runners.flatMap((r) =>
        r.resume ? [retainedOf(r.model, artifactOf(plan, r.model), r.resume)] : []
      ),
    ],
  );
  const expected = plan.protected_state.checksum ??
    stateChecksum(emptyOwnership(plan.project, plan.environment));
  return stateChecksum(prior) === expected ? last.operation_id : null;
}

/** Every runner the completed plan created is observed exactly as owned (read-only). */
async function verifyCreated(ctx: RuntimeContext, plan: Plan, snap: StateSnapshot) {
  const own = snap.ownership!.document;
  for (const a of plan.actions) {
    if (a.type !== "create_runner") continue;
    const owned = own.runners.find((r) => r.model === a.model)!;
    const obs = await observeRunner(ctx, targetOf(artifactOf(plan, a.model)));
    const { blockers } = verifyOwnedRunner(obs, owned, own.topics);
    if (blockers.length > 0) throw blockerError(blockers);
  }
}

/** The record a removal kept for a model now declared again (as its resume binds it). */
function retainedOf(model: string, artifact: RunnerArtifact, resume: RunnerResume): RetainedRunner {
  return {
    model,
    application_id: artifact.application_id,
    volume: { name: volumeName(artifact.application_id), instance_id: resume.volume_instance },
    input_topic: artifact.input.topic,
    removed_by: resume.removed_by,
  };
}

/**
 * Before the intent of a model declared again: nothing carries its application ID but what its
 * removal kept — no container, no group member, the kept volume instance (or no volume when the
 * plan saw it deleted) — and the kept offsets are still retained by the input topic.
 */
function verifyResume(model: string, resume: RunnerResume, obs: RunnerObservation): void {
  const fail = (code: "BLOCKED_UNOWNED_RUNTIME" | "BLOCKED_RETAINED_MISMATCH", why: string) => {
    throw new SluiceError(
      code,
      `model ${model} (declared again after removal ${resume.removed_by}): ${why} since the plan was made; plan again`,
      { evidence: { resume, containers: obs.containers.map((c) => c.id) } },
    );
  };
  if (obs.containers.length > 0 || obs.kafka.group.members.length > 0) {
    fail("BLOCKED_UNOWNED_RUNTIME", "a container or a group member carries its application ID");
  }
  if (resume.volume_kept !== obs.volume.exists) {
    fail(
      "BLOCKED_RETAINED_MISMATCH",
      `its kept volume ${obs.volume.name} ${obs.volume.exists ? "appeared" : "was deleted"}`,
    );
  }
  if (obs.volume.exists && obs.volume.instanceLabel !== resume.volume_instance) {
    fail("BLOCKED_RETAINED_MISMATCH", `volume ${obs.volume.name} is another instance`);
  }
  const lost = obs.kafka.ranges.filter((r) => {
    const c = obs.kafka.committed[String(r.partition)];
    return c !== undefined && BigInt(c) < BigInt(r.earliest);
  });
  if (lost.length > 0) {
    throw new SluiceError(
      "BLOCKED_RETENTION_LOSS",
      `the offsets kept for model ${model} are no longer retained by ${obs.target.inputTopic} (${
        lost.map((r) =>
          `${r.partition}: committed ${
            obs.kafka.committed[String(r.partition)]
          } < earliest ${r.earliest}`
        )
          .join(", ")
      }); sluice never repositions them: delete the kept group by hand to start from initial_offsets (docs/runbook.md, section 8)`,
      { evidence: { committed: obs.kafka.committed, ranges: obs.kafka.ranges } },
    );
  }
}

function describe(a: PlannedAction): string {
  if (a.type === "destroy") return "destroy";
  return "topic" in a ? a.topic : "model" in a ? a.model : a.name;
}

function artifactOf(plan: Plan, model: string): RunnerArtifact {
  const a = plan.artifacts.find((x) => x.model === model);
  if (!a) throw new SluiceError("PLAN_INVALID", `the plan has no artifact for model ${model}`);
  return a.artifact;
}

/** The observer's target for an artifact. */
export function targetOf(artifact: RunnerArtifact): RunnerTarget {
  return targetOfArtifact(artifact);
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
  events: OperationEvents,
  artifact: RunnerArtifact,
  artifactSha: string,
  operationId: string,
  id: CreateIdentities["runners"][number],
  clock: Clock,
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
  const obs = await observeRunner({ ...ctx, clock }, targetOf(artifact));
  const unowned = (what: string, evidence: Record<string, unknown>): never => {
    throw new SluiceError(
      "BLOCKED_UNOWNED_RUNTIME",
      `application ID ${appId}: ${what}; sluice adopts only what operation ${operationId} created`,
      { evidence },
    );
  };

  // the state volume: absent → create it with the recorded instance; ours → adopt
  const v = obs.volume;
  if (!v.exists) {
    await providerMutation(
      ctx.store,
      createSite("create_volume"),
      () =>
        ctx.docker.createVolume(id.volume, {
          ...baseLabels,
          [LABEL.volumeInstance]: id.volume_instance,
          [LABEL.operationId]: operationId,
        }),
    );
    events.boundary({
      kind: "created",
      boundary: "create_volume",
      resource: "volume",
      name: id.volume,
      message: `${id.volume} created (instance ${id.volume_instance})`,
    });
  } else if (
    v.instanceLabel === id.volume_instance &&
    // this operation's volume, or the one a removal kept for this model declared again
    (v.labels[LABEL.operationId] === operationId || id.resumed?.volume_kept === true) &&
    // the file is written through the runner's own mount after its create; before that (or
    // with no container mounting the volume) only the label can be read (docs/decisions.md D11)
    (v.instanceFile === id.volume_instance || v.instanceFile === null)
  ) {
    events.boundary({
      kind: "adopted",
      boundary: "create_volume",
      resource: "volume",
      name: id.volume,
      message: `${id.volume} adopted (instance ${id.volume_instance}, ${
        id.resumed ? `kept by removal ${id.resumed.retained.removed_by}` : "this operation's"
      })`,
    });
  } else {
    unowned(`volume ${id.volume} is not the instance this operation created`, {
      volume: id.volume,
      label: v.instanceLabel,
      file: v.instanceFile,
      operation: v.labels[LABEL.operationId] ?? null,
      expected: id.volume_instance,
    });
  }

  // the container: none yet, or exactly this operation's (name, generation, operation)
  const foreign = obs.containers.filter((c) =>
    c.name !== id.container || c.labels.operationId !== operationId ||
    c.labels.generation !== id.generation
  );
  if (foreign.length > 0) {
    unowned("a container carries it that this operation did not create", {
      containers: foreign.map((c) => ({ id: c.id, name: c.name, generation: c.labels.generation })),
    });
  }
  const mine = obs.containers[0] ?? null;

  // the group's initial positions, recorded ahead: absent → position; equal → ours
  const recorded = new Map(id.offsets.map((o) => [o.partition, o.offset]));
  const committed = obs.kafka.committed;
  const equalsRecorded = Object.keys(committed).length === recorded.size &&
    [...recorded].every(([p, o]) => committed[String(p)] === o);
  if (obs.kafka.group.members.length > 0 && !mine?.running) {
    unowned("its consumer group has members while this operation's runner is not running", {
      members: obs.kafka.group.members,
    });
  }
  if (Object.keys(committed).length === 0) {
    const short = obs.kafka.ranges.filter((r) =>
      BigInt(recorded.get(r.partition) ?? "0") < BigInt(r.earliest)
    );
    if (short.length > 0 || obs.kafka.ranges.length !== recorded.size) {
      throw new SluiceError(
        "BLOCKED_RETENTION_LOSS",
        `the recorded initial positions of ${appId} are no longer retained; abandon the operation and plan again`,
        { evidence: { recorded: id.offsets, ranges: obs.kafka.ranges } },
      );
    }
    const initial = new Map(id.offsets.map((o) => [o.partition, BigInt(o.offset)]));
    await providerMutation(
      ctx.store,
      createSite("position_offsets"),
      () => ctx.kafka.setGroupOffsets(appId, id.input_topic, initial),
    );
    events.boundary({
      kind: "created",
      boundary: "position_offsets",
      resource: "offsets",
      name: appId,
      message: `group ${appId} positioned at ${artifact.initial_offsets} (${
        id.offsets.map((o) => `${o.partition}:${o.offset}`).join(", ")
      })`,
    });
  } else if (!equalsRecorded && !mine?.everStarted) {
    unowned("its committed offsets are not the positions this operation recorded", {
      committed,
      recorded: id.offsets,
    });
  }

  // the topics the runner reads and writes, bound by ID into its mounted plan (the dead-letter
  // topic too: the runner's gate then refuses one deleted and recreated since)
  const names = runnerTopics(artifact);
  const cluster = await ctx.kafka.describe(names);
  const missing = names.find((n) => !cluster.topics.has(n));
  if (missing !== undefined) {
    throw new SluiceError("BLOCKED_TOPIC_MISSING", `topic ${missing} does not exist`);
  }
  const topicId = (name: string) => cluster.topics.get(name)!.id;
  const mounted = buildMountedPlan(artifact, ctx.bootstrapInternal, {
    cluster_id: cluster.clusterId,
    input_topic_id: topicId(artifact.input.topic),
    output_topic_id: topicId(artifact.output.topic),
    ...(artifact.on_invalid ? { dead_letter_topic_id: topicId(artifact.on_invalid.topic) } : {}),
  });
  const { bytes, sha256 } = mountedPlanBytes(mounted);
  const planPath = await writeMountedPlanFile(ctx.plansDir, bytes, sha256);
  let containerId: string;
  if (!mine) {
    containerId = await providerMutation(
      ctx.store,
      createSite("create_container"),
      // on the volume this operation made, never on one Docker's create would make in its place
      // if it vanished meanwhile (the create is then undone: createOnExistingVolume)
      () =>
        createOnExistingVolume(
          ctx.docker,
          {
            name: id.container,
            image: artifact.image,
            labels: {
              ...baseLabels,
              [LABEL.artifactSha256]: artifactSha,
              [LABEL.planSha256]: sha256,
              [LABEL.generation]: id.generation,
              [LABEL.operationId]: operationId,
              [LABEL.actionIndex]: "0",
            },
            env: [
              ...image.env,
              `${RUNNER_ENV.planSha256}=${sha256}`,
              `${RUNNER_ENV.generation}=${id.generation}`,
            ],
            network: artifact.network,
            planHostPath: planPath,
            planContainerPath: RUNNER_PATHS.plan,
            volume: id.volume,
            volumeContainerPath: RUNNER_PATHS.volume,
            memoryBytes: RUNNER_EXECUTION.memoryBytes,
            stopTimeoutSeconds: RUNNER_EXECUTION.stopTimeoutSeconds,
          },
          { [LABEL.volumeInstance]: id.volume_instance },
          {
            beforeUndo: () => ctx.store.verifyLock(),
          },
        ),
    );
    events.boundary({
      kind: "created",
      boundary: "create_container",
      resource: "container",
      name: id.container,
      message: `${id.container} created (${containerId.slice(0, 12)})`,
    });
  } else {
    const problems = checkGeneration(mine, artifactSha, artifact.model);
    if (problems.length > 0 || mine.labels.planSha256 !== sha256) {
      unowned(`container ${mine.id.slice(0, 12)} is not the generation this operation creates`, {
        container: mine.id,
        problems: problems.map((b) => b.code),
      });
    }
    containerId = mine.id;
    events.boundary({
      kind: "adopted",
      boundary: "create_container",
      resource: "container",
      name: id.container,
      message: `${id.container} adopted (${containerId.slice(0, 12)})`,
    });
  }
  // the instance file goes through the runner's own mount before its first start: no helper
  // container is ever created (docs/decisions.md D11). A continuation finds it written (ours),
  // absent (killed before the write), or something else (not ours)
  const file = mine ? obs.volume.instanceFile : null;
  if (file === null) {
    if (mine?.everStarted) {
      unowned(`volume ${id.volume} has no instance file although its runner has started`, {
        volume: id.volume,
        container: mine.id,
      });
    }
    await providerMutation(
      ctx.store,
      createSite("write_volume_instance"),
      () =>
        ctx.docker.writeContainerFile(
          containerId,
          RUNNER_PATHS.instanceFile,
          new TextEncoder().encode(id.volume_instance + "\n"),
        ),
    );
  } else if (file !== id.volume_instance) {
    unowned(`volume ${id.volume} holds instance ${file}, not the recorded ${id.volume_instance}`, {
      volume: id.volume,
      file,
      expected: id.volume_instance,
    });
  }
  // start it: never started; or exited before RUNNING with nothing processed (the same first
  // start again); a runner that processed and then exited is not this journey's to restart
  if (!mine || (!mine.everStarted && !mine.running)) {
    await providerMutation(
      ctx.store,
      createSite("start_container"),
      () => ctx.docker.startContainer(containerId),
    );
  } else if (!mine.running) {
    const neverRunning = (mine.runnerStatus?.running_at ?? null) === null;
    if (!neverRunning || !equalsRecorded) {
      throw new SluiceError(
        "BLOCKED_RUNNER_EXITED",
        `runner ${mine.name} exited with code ${mine.exitCode} after it processed records; abandon the operation ('sluice state abandon')`,
        { evidence: { exitCode: mine.exitCode, oomKilled: mine.oomKilled } },
      );
    }
    await providerMutation(
      ctx.store,
      createSite("start_container"),
      () => ctx.docker.startContainer(containerId),
    );
    events.emit({
      kind: "action",
      action: "start",
      message: `${id.container} started again (it had exited ${mine.exitCode} before RUNNING)`,
    });
  }
  const bound = ctx.readyTimeoutMs ?? 120_000;
  await waitReady(ctx, containerId, id.generation, sha256, bound, events, (ms) =>
    events.emit({
      kind: "wait",
      waited_ms: ms,
      bound_ms: bound,
      message: `waiting for ${id.container} to report RUNNING`,
    }));
  events.boundary({
    kind: "ready",
    boundary: "await_ready",
    container: id.container,
    message: `${id.container} is RUNNING`,
  });
  return { container_id: containerId, volume_instance: id.volume_instance };
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
  events: OperationEvents,
  waiting: (waitedMs: number) => void = () => {},
): Promise<void> {
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const start = clock.now();
  const deadline = start + timeoutMs;
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
    waiting(clock.now() - start);
    // a cancelled run stops waiting at once (the runner is left as a timeout leaves it)
    await events.sleep(100);
  }
}
