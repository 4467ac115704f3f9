/**
 * The create journey: a format-5 plan's topics and runners. Under the deployment lock (taken by
 * the router, `lib/runtime/journeys.ts`) it re-verifies the fresh runtime (`create_recheck.ts`)
 * and records the intent with every identity it will create (`create_identities.ts`) before the
 * first mutation. From there the journey driver (`journey_driver.ts`) runs the create table
 * (`lib/protocol/create.ts`): fresh readings (`create_reading.ts`), the table's decision
 * (`decideCreate`, `create_next.ts` — the one `state runner-status` reports), one step crossed at
 * its row's fault site. That is each topic, then per runner the state volume, the group's initial
 * offsets, the mounted plan file, the stopped container, its volume's instance file, its start
 * and the wait until it reports RUNNING; then the commit of ownership (serial + 1,
 * `create_ownership.ts`) and the clear of the operation.
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
 * (`BLOCKED_UNOWNED_TOPIC`). A runner that exited before RUNNING with its positions untouched, or
 * was stopped from outside (killed, or closed cleanly by a TERM) whatever its positions, is
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
import { atSite } from "../fault/site.ts";
import { pendingCommands, type Plan, type PlannedAction } from "../plan/plan.ts";
import { currentContext, verifyContinuation, verifyPlanCurrent } from "../plan/plan_file.ts";
import type { StateSnapshot } from "../state/store.ts";
import { verifyOwnedRunner } from "../validation/runner_checks.ts";
import { emptyOwnership, type OwnershipDocument, stateChecksum } from "../state/ownership.ts";
import { blockerError } from "../validation/blocker.ts";
import type { RunnerTarget } from "../validation/observation.ts";
import { targetOfArtifact } from "../validation/observation.ts";
import { createSite } from "../protocol/create.ts";
import { isoNow, RANDOM_UUIDS, SYSTEM_CLOCK } from "./deps.ts";
import { OperationEvents } from "./progress.ts";
import { writeMountedPlanFile } from "./mounted_plan_file.ts";
import { instanceLabels, LABEL, RUNNER_ENV, RUNNER_EXECUTION, RUNNER_PATHS } from "./labels.ts";
import { observeRunner, runnerStatusOf } from "./observer.ts";
import { runtimeActions } from "../plan/connectors.ts";
import { providerMutation } from "./provider_mutation.ts";
import { extraLabelsDetail, recordedExtraLabels } from "./operation_labels.ts";
import type { ApplyResult, RuntimeContext } from "./apply_context.ts";
import { driveJourney } from "./journey_driver.ts";
import { dockerOf } from "./endpoint_ports.ts";
import {
  artifactOf,
  type CreateIdentities,
  identitiesJson,
  identitiesOf,
  plannedIdentities,
  subjectOf,
} from "./create_identities.ts";
import { completedBy, createdOwnership } from "./create_ownership.ts";
import { recheckBeforeIntent } from "./create_recheck.ts";
import { type CreateReadings, readCreate } from "./create_reading.ts";
import {
  type CreateGo,
  type CreateNote,
  type CreateWait,
  decideCreate,
  noteKey,
  refusal,
} from "./create_next.ts";

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
      () => drive(ctx, events, plan, snap, pending.operation_id, identitiesOf(pending.intent)),
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
  await recheckBeforeIntent(ctx, plan);
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
              // every continuation creates with these, whatever its handle gives
              ...extraLabelsDetail(ctx.extraLabels),
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
      () => drive(ctx, events, plan, snap, operationId, identities),
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

/** What one run did: its memory for the decision, and what it created or found. */
class CreateRun {
  readonly done = new Set<string>();
  readonly created = new Set<string>();
  readonly containers = new Map<string, string>();
  readonly topicIds = new Map<string, string>();
  /** The models this run saw RUNNING (not read again). */
  readonly ready = new Set<string>();
  /** When each runner's readiness wait began. */
  readonly waitingSince = new Map<string, number>();

  constructor(readonly events: OperationEvents) {}

  /** A step crossed: remembered as done and as made by this run. */
  crossed(key: string): void {
    this.done.add(key);
    this.created.add(key);
  }

  /** A row passed on what was already there: remembered, said once, what it found kept. */
  note(n: CreateNote): void {
    if (this.done.has(n.key)) return;
    this.done.add(n.key);
    if (n.found?.kind === "topic") this.topicIds.set(n.found.name, n.found.id);
    if (n.found?.kind === "container") this.containers.set(n.found.subject, n.found.id);
    if (n.found?.kind === "ready") this.ready.add(n.found.subject);
    if (n.event) this.events.boundary(n.event);
  }
}

/** sluice's labels on everything a runner's create makes. */
function baseLabels(ctx: RuntimeContext, artifact: RunnerArtifact): Record<string, string> {
  return {
    ...ctx.extraLabels,
    [LABEL.managedBy]: "sluice",
    [LABEL.project]: artifact.project,
    [LABEL.environment]: artifact.environment ?? "",
    [LABEL.model]: artifact.model,
    [LABEL.applicationId]: artifact.application_id,
  };
}

/**
 * The rows after the intent, run by the journey driver: each decision is the create table's
 * ({@link decideCreate}, the one `state runner-status` reports) on fresh readings; this crosses
 * the step it names at its row's site, or waits on the row that waits (a runner's RUNNING
 * report). A first run finds everything absent; a continuation (the same plan file after a
 * kill) finds what the first run made, adopted only when it carries this operation's recorded
 * identities.
 */
async function drive(
  given: RuntimeContext,
  events: OperationEvents,
  plan: Plan,
  start: StateSnapshot,
  operationId: string,
  ids: CreateIdentities,
): Promise<ApplyResult> {
  // everything is created with the labels the intent recorded, not the continuing handle's
  const ctx = { ...given, extraLabels: recordedExtraLabels(start.control!.opened.intent) };
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const run = new CreateRun(events);
  const bound = ctx.readyTimeoutMs ?? 120_000;
  return await driveJourney<CreateReadings, CreateGo, ApplyResult, CreateWait>({
    events,
    clock,
    boundMs: bound,
    read: () => readCreate(ctx, plan, start, ids, run.ready),
    decide: (readings) => {
      const d = decideCreate(readings, run);
      for (const n of d.notes) run.note(n);
      return d;
    },
    refuse: (blocked) => refusal(blocked.blockers),
    // polls what the wait is for (the container's state and its runner's status) every 100 ms
    // until it differs from what the decision saw, or the bound passes; the decision then reads
    // everything again. Compared with the decision's own reading, not with a first read here: a
    // runner that reported RUNNING between the two would otherwise be waited on for the whole
    // bound (seen in CI: creates of about 126 s instead of 4 to 19 s)
    wake: async (wait, _readings, leftMs) => {
      const subject = subjectOf(wait.runner.identity);
      const decided = wait.runner.obs.containers[0];
      const containerId = run.containers.get(subject) ?? decided.id;
      const since = run.waitingSince.get(subject) ?? clock.now();
      run.waitingSince.set(subject, since);
      const until = clock.now() + leftMs;
      const docker = await dockerOf(ctx, wait.runner.identity.endpoint);
      const seen = async () => {
        const c = await docker.inspectContainer(containerId);
        if (!c) return null;
        const bytes = await docker.readContainerFile(containerId, RUNNER_PATHS.statusFile);
        return readyView(c.state.status, runnerStatusOf(bytes));
      };
      if (wait.runner.identity.instance !== undefined) {
        // a set waits on its group as well as on its containers: everything is read again
        events.emit({
          kind: "wait",
          waited_ms: clock.now() - since,
          bound_ms: bound,
          message: `waiting for the set of ${wait.runner.identity.application_id} to be ready`,
        });
        await events.sleep(250);
        return;
      }
      const before = decided.id === containerId
        ? readyView(decided.status, decided.runnerStatus)
        : await seen();
      do {
        events.emit({
          kind: "wait",
          waited_ms: clock.now() - since,
          bound_ms: bound,
          message: `waiting for ${wait.runner.identity.container} to report RUNNING`,
        });
        // a cancelled run stops waiting at once (the runner is left as a timeout leaves it)
        await events.sleep(100);
      } while (clock.now() <= until && await seen() === before);
    },
    cross: (step, readings) => cross(ctx, run, step, readings, plan, start, operationId, ids),
  });
}

/**
 * What the ready wait watches of a runner: its container's status and its status file's state,
 * generation and plan (the fields the `await_ready` decision reads).
 */
function readyView(status: string, runner: Record<string, unknown> | null): string {
  return JSON.stringify([
    status,
    runner?.state ?? null,
    runner?.generation ?? null,
    runner?.plan_sha256 ?? null,
  ]);
}

/** Cross the one step a decision names, at its row's site. */
async function cross(
  ctx: RuntimeContext,
  run: CreateRun,
  step: CreateGo,
  readings: CreateReadings,
  plan: Plan,
  start: StateSnapshot,
  operationId: string,
  ids: CreateIdentities,
): Promise<ApplyResult | undefined> {
  const { events } = run;
  const site = step.row.site!;
  if (step.kind === "create_topic") {
    const t = step.topic;
    const id = await providerMutation(
      ctx.store,
      site,
      () => ctx.kafka.createTopic(t.name, t.partitions),
    );
    run.topicIds.set(t.name, id);
    run.crossed(noteKey("create_topic", t.name));
    events.boundary({
      kind: "created",
      boundary: "create_topic",
      resource: "topic",
      name: t.name,
      message: `${t.name} created (${t.partitions} partition${
        t.partitions === 1 ? "" : "s"
      }, id ${id})`,
    });
    return undefined;
  }
  if (step.kind === "commit") {
    return await commit(ctx, events, plan, start, readings, operationId, ids, run);
  }
  const r = step.runner;
  const id = r.identity;
  const subject = subjectOf(id);
  const artifact = r.artifact;
  // an instance of a set is created on its own endpoint's daemon
  const docker = await dockerOf(ctx, id.endpoint);
  const containerId = () => run.containers.get(subject) ?? r.obs.containers[0].id;
  switch (step.kind) {
    case "create_volume":
      await providerMutation(
        ctx.store,
        site,
        () =>
          docker.createVolume(id.volume, {
            ...baseLabels(ctx, artifact),
            [LABEL.volumeInstance]: id.volume_instance,
            [LABEL.operationId]: operationId,
          }),
      );
      run.crossed(noteKey(step.kind, subject));
      events.boundary({
        kind: "created",
        boundary: "create_volume",
        resource: "volume",
        name: id.volume,
        message: `${id.volume} created (instance ${id.volume_instance})`,
      });
      return undefined;
    case "position_offsets": {
      const initial = new Map(id.offsets.map((o) => [o.partition, BigInt(o.offset)]));
      await providerMutation(
        ctx.store,
        site,
        () => ctx.kafka.setGroupOffsets(id.application_id, id.input_topic, initial),
      );
      run.crossed(noteKey(step.kind, subject));
      events.boundary({
        kind: "created",
        boundary: "position_offsets",
        resource: "offsets",
        name: artifact.application_id,
        message: `group ${artifact.application_id} positioned at ${artifact.initial_offsets} (${
          id.offsets.map((o) => `${o.partition}:${o.offset}`).join(", ")
        })`,
      });
      return undefined;
    }
    case "write_mounted_plan": {
      // crosses the row's site (the mounted plan file's own) only when the file is absent
      const m = r.mounted!;
      await writeMountedPlanFile(ctx.plansDir, m.bytes, m.sha256);
      run.crossed(noteKey(step.kind, subject));
      return undefined;
    }
    case "create_container": {
      const m = r.mounted!;
      const created = await providerMutation(
        ctx.store,
        site,
        // on the volume this operation made, never on one Docker's create would make in its place
        // if it vanished meanwhile (the create is then undone: createOnExistingVolume)
        () =>
          createOnExistingVolume(
            docker,
            {
              name: id.container,
              image: artifact.image,
              labels: {
                ...baseLabels(ctx, artifact),
                [LABEL.artifactSha256]: r.artifactSha256,
                [LABEL.planSha256]: m.sha256,
                [LABEL.generation]: id.generation,
                [LABEL.operationId]: operationId,
                [LABEL.actionIndex]: "0",
                ...instanceLabels(id.instance ?? 0),
              },
              env: [
                ...r.image!.env,
                `${RUNNER_ENV.planSha256}=${m.sha256}`,
                `${RUNNER_ENV.generation}=${id.generation}`,
              ],
              network: artifact.network,
              planHostPath: m.path,
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
      run.containers.set(subject, created);
      run.crossed(noteKey(step.kind, subject));
      events.boundary({
        kind: "created",
        boundary: "create_container",
        resource: "container",
        name: id.container,
        message: `${id.container} created (${created.slice(0, 12)})`,
      });
      return undefined;
    }
    case "write_volume_instance":
      // through the runner's own mount before its first start: no helper container is ever
      // created (docs/decisions.md D11)
      await providerMutation(
        ctx.store,
        site,
        () =>
          docker.writeContainerFile(
            containerId(),
            RUNNER_PATHS.instanceFile,
            new TextEncoder().encode(id.volume_instance + "\n"),
          ),
      );
      run.crossed(noteKey(step.kind, subject));
      return undefined;
    case "start_container":
      await providerMutation(ctx.store, site, () => docker.startContainer(containerId()));
      run.crossed(noteKey(step.kind, subject));
      if (step.exitedBefore !== null) {
        events.emit({
          kind: "action",
          action: "start",
          message:
            `${id.container} started again (it had exited ${step.exitedBefore} before RUNNING)`,
        });
      }
      return undefined;
  }
}

/** Commit ownership: the state the operation started from plus exactly its creations. */
async function commit(
  ctx: RuntimeContext,
  events: OperationEvents,
  plan: Plan,
  start: StateSnapshot,
  readings: CreateReadings,
  operationId: string,
  ids: CreateIdentities,
  run: CreateRun,
): Promise<ApplyResult> {
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const created = ids.runners.map((r) => {
    const a = plan.actions.find((x) => x.type === "create_runner" && x.model === r.model);
    return {
      identity: r,
      application_id: artifactOf(plan, r.model).application_id,
      artifact_sha256: a?.type === "create_runner" ? a.artifact_sha256 : "",
    };
  });
  const next = createdOwnership(
    readings.prior!,
    ids.topics.map((t) => ({ name: t.name, topic_id: run.topicIds.get(t.name)! })),
    created,
  );
  await atSite(
    createSite("commit"),
    () => ctx.store.commitOwnership(start, next, { operationId, recordedAt: isoNow(clock) }),
  );
  events.committed(next.serial, `ownership serial ${next.serial}`);
  return {
    noop: false,
    already_applied: false,
    operation_id: operationId,
    serial: next.serial,
    actions: plan.actions,
    runners: created.map((r) => ({
      model: r.identity.model,
      application_id: r.application_id,
      container_id: run.containers.get(subjectOf(r.identity))!,
      volume_instance: r.identity.volume_instance,
      ...(r.identity.instance === undefined
        ? {}
        : { instance: r.identity.instance, endpoint: r.identity.endpoint ?? null }),
    })),
  };
}

function describe(a: PlannedAction): string {
  if (a.type === "destroy") return "destroy";
  return "topic" in a ? a.topic : "model" in a ? a.model : a.name;
}

/**
 * The observer's target for an artifact.
 *
 * @example
 * ```ts
 * import { targetOf } from "./create.ts";
 * // observeRunner(ctx, targetOf(artifact))
 * ```
 */
export function targetOf(artifact: RunnerArtifact): RunnerTarget {
  return targetOfArtifact(artifact);
}

/** Every runner the completed plan created is observed exactly as owned (read-only). */
async function verifyCreated(ctx: RuntimeContext, plan: Plan, snap: StateSnapshot) {
  const own = snap.ownership!.document;
  for (const a of plan.actions) {
    if (a.type !== "create_runner") continue;
    const owned = own.runners.find((r) => r.model === a.model)!;
    const target = targetOf(artifactOf(plan, a.model));
    if (!owned.instances) {
      const { blockers } = verifyOwnedRunner(await observeRunner(ctx, target), owned, own.topics);
      if (blockers.length > 0) throw blockerError(blockers);
      continue;
    }
    // a set: each instance on its endpoint as owned, the group at most its N members
    for (const i of owned.instances) {
      const docker = await dockerOf(ctx, i.endpoint);
      const obs = await observeRunner({ ...ctx, docker }, { ...target, instance: i.instance });
      const { blockers } = verifyOwnedRunner(
        obs,
        { ...owned, container_name: i.container_name, volume: i.volume },
        own.topics,
        { members: owned.instances.length },
      );
      if (blockers.length > 0) throw blockerError(blockers);
    }
  }
}
