/**
 * The one entry of every journey that takes runners down the runner removal's way — the runner
 * removal itself (`removal.ts`) and the destroy (`destroy.ts`): its start, its continuation, the
 * recognition of its lost commit and the rows after its intent, written once and flavoured by a
 * {@link RemovalFlavour} (the operation kind, the table's run with its sites, the journey's name
 * in messages and in its events, its not-continuable code, and the few words and checks that are
 * the journey's own).
 *
 * **Start.** Under the deployment lock it re-verifies that each bound runner is exactly the
 * generation the plan bound (container ID, generation, mounted plan, artifact checksum) and
 * running, and records the intent (each bound generation and the owned record it releases). From
 * there the journey driver (`journey_driver.ts`) runs the flavour's table ({@link TableRun}):
 * fresh readings (`removal_reading.ts`, and what the journey's own rows read), the table's one
 * decision (`decideRemoval`, `removal_next.ts`, for the removal's rows alone; `decideDestroy`,
 * `destroy_next.ts`, for the destroy's whole table — the one `state runner-status` reports), one
 * step: the removal's steps crossed here, the journey's own (a destroy's connector and data rows)
 * by its run. Per runner that is TERM, the wait for the
 * clean-close evidence a replacement's `old_closed` row requires, the removal of that exact
 * container — never its volume — and finally the commit of ownership without the runners
 * (serial + 1), each released runner's volume and group recorded as retained.
 *
 * **Continuation.** A process killed anywhere leaves the operation pending; `apply --plan` with
 * the same plan file continues it with the same driver: each runner is decided by a fresh exact
 * observation (running: TERM again; stopped: the clean-close evidence, then remove; absent:
 * removed), anything else blocks (`BLOCKED_REMOVAL_GENERATION_CHANGED`). A commit whose
 * acknowledgement was lost is recognized by the audit's `ownership_committed` event of the
 * plan's operation ID.
 *
 * @example
 * ```ts
 * import { removalEntry } from "./removal_entry.ts";
 * // const removal = removalEntry(REMOVAL_FLAVOUR);
 * // const r = await removal.start(ctx, plan, planSha256, snap);
 * ```
 * @module
 */
import { type ErrorCode, SluiceError } from "../errors.ts";
import { atSite, type FaultSite } from "../fault/site.ts";
import type { Plan } from "../plan/plan.ts";
import { currentContext, verifyContinuation } from "../plan/plan_file.ts";
import type { RemoveRunnerAction } from "../plan/removals.ts";
import type { RemovalRow } from "../protocol/removal.ts";
import type { HistoryEvent } from "../state/history.ts";
import {
  emptyOwnership,
  type OwnedRunner,
  type OwnershipDocument,
  type RetainedRunner,
  stateChecksum,
  withRetained,
} from "../state/ownership.ts";
import type { StateSnapshot, StateStore } from "../state/store.ts";
import type { Json } from "../state/_canonical.ts";
import { type Blocker, blocker, blockerError } from "../validation/blocker.ts";
import { type Clock, isoNow, SYSTEM_CLOCK } from "./deps.ts";
import { type BlockedDecision, driveJourney } from "./journey_driver.ts";
import { RUNNER_EXECUTION } from "./labels.ts";
import type { ObserverPorts } from "./observer.ts";
import { type Journey, OperationEvents, type ProgressListener } from "./progress.ts";
import { providerMutation } from "./provider_mutation.ts";
import {
  decideRemoval,
  type RemovalGo,
  type RemovalMemory,
  type RemovalWait,
} from "./removal_next.ts";
import {
  boundKey,
  boundName,
  type BoundRunner,
  boundRunners,
  observeBound,
  readRemoval,
  type RemovalReadings,
  type Seen,
  seen,
} from "./removal_reading.ts";
import { type DockerAt, dockerOf } from "./endpoint_ports.ts";
import { writeIntent } from "./unknown_outcome.ts";

/** What the runner removal and the destroy take from the apply's context. */
export interface RemovalContext extends ObserverPorts {
  store: StateStore;
  actor: string;
  sourceSha256: string;
  clock?: Clock;
  onProgress?: ProgressListener;
  /** Cancels the removal at its next durable boundary or inside its close wait (`CANCELLED`). */
  signal?: AbortSignal;
  /** How long a runner may take to close after TERM and leave its group (default: the stop timeout + 60 s). */
  closeTimeoutMs?: number;
  /** The Docker port of a `docker.endpoints` daemon, for a set's instances (`Session.dockerAt`). */
  dockerAt?: DockerAt;
}

/** One removed runner: what was stopped and removed, and what was kept. */
export interface RemovedRunner {
  /** The model. */
  model: string;
  /** Its application ID (its consumer group, kept). */
  application_id: string;
  /** The removed container's ID. */
  container_id: string;
  /** The removed container's name. */
  container_name: string;
  /** The raw exit code of its clean close; null when the container was found already absent. */
  exit_code: number | null;
  /** An instance of a set: its index (absent for a single runner). */
  instance?: number;
  /** An instance of a set: the endpoint it ran on (null: the one daemon). */
  endpoint?: string | null;
  /**
   * Kept: the state volume, the consumer group with its offsets, the topics.
   * @internal the plan's removal action; its shape is not part of the versioned SDK
   */
  kept: RemoveRunnerAction["keeps"] & { volume_instance: string };
}

/** The result of a removal operation (a runner removal's or a destroy's). */
export interface RemovalResult {
  /** The removal operation's ID (derived from the plan file's sha256). */
  operation_id: string;
  /** The ownership serial after the commit. */
  serial: number;
  /** True when this run continued a pending removal. */
  continued: boolean;
  /** True when the plan had been committed already (nothing was written). */
  already_applied: boolean;
  /** Each removed runner (each instance of a set), with what was kept. */
  removed: RemovedRunner[];
}

/** A bound runner that is no longer what a start may stop: found absent, or present and stopped. */
export type UnboundRunner = Exclude<Seen, { kind: "changed" }>;

/**
 * One run of a flavour's table after its intent: its fresh reads, its decision over its rows and
 * the steps of rows that are its own. The removal's rows (TERM, the close wait, the removal of the
 * container, the commit) the entry crosses itself; a journey whose table holds rows of its own
 * among them (the destroy's connector and data rows) decides them in the same walk and crosses
 * them here, so its whole table runs as one decision.
 */
export interface TableRun<
  Readings extends { readonly removal: RemovalReadings },
  Own extends { kind: string },
> {
  /** A fresh read of what the decision needs; `done` names the models this run took down. */
  read(done: ReadonlySet<string>): Promise<Readings>;
  /** The table's decision (the one `state runner-status` reports). */
  decide(
    readings: Readings,
    memory: RemovalMemory,
  ): RemovalGo | RemovalWait | BlockedDecision | Own;
  /** Cross one of its own steps at its row's site (never a removal's step). */
  cross(step: Own): Promise<void>;
}

/** What a flavour's run is made from: the run's context, events, plan, intent and runners. */
export interface TableRunOf {
  readonly ctx: RemovalContext;
  readonly events: OperationEvents;
  readonly plan: Plan;
  /** The snapshot that holds the operation's intent. */
  readonly start: StateSnapshot;
  /** The runners the plan takes down, in plan order. */
  readonly actions: RemoveRunnerAction[];
}

/** What makes one journey of the removal's way its own. */
export interface RemovalFlavour<
  Readings extends { readonly removal: RemovalReadings } = { readonly removal: RemovalReadings },
  Own extends { kind: string } = never,
> {
  /** The journey's name in its messages (`runner removal`, `destroy`). */
  readonly name: string;
  /** Its short name where a message names the operation (`removal`, `destroy`). */
  readonly short: string;
  /** The journey its events carry. */
  readonly journey: Journey;
  /** The operation kind its intent records in the journal. */
  readonly kind: string;
  /** The fault site of a step of its table (the intent and the commit here). */
  readonly site: (step: "intent" | "commit") => FaultSite;
  /** Its table's run: the removal's rows with its own sites and words, and any of its own. */
  readonly run: (of: TableRunOf) => TableRun<Readings, Own>;
  /** The ID of its operation for a plan file's sha256. */
  readonly operationId: (planSha256: string) => string;
  /** Whether a plan carries this journey. */
  readonly carries: (plan: Plan) => boolean;
  /** The runners a plan of this journey takes down, in plan order. */
  readonly runners: (plan: Plan) => RemoveRunnerAction[];
  /** Whether it releases every runner the project owns (the plan must bind them all). */
  readonly releasesAll: boolean;
  /** How its messages name its plan, and how to make it again (`the plan`, `plan again`). */
  readonly plan: { readonly name: string; readonly again: string };
  /** The blocker of a bound runner found gone or stopped when the operation would start. */
  readonly unbound: (a: RemoveRunnerAction, s: UnboundRunner) => Blocker;
  /** The code and message when a pending operation cannot be continued with a plan. */
  readonly notContinuable: {
    readonly code: ErrorCode;
    readonly message: (operationId: string) => string;
  };
  /** What the commit event says it released and kept (after `ownership serial N: `). */
  readonly released: (actions: readonly RemoveRunnerAction[]) => string;
  /**
   * The ownership the commit writes, from the one the removal's way makes (a destroy that
   * deleted data records none of it); absent: that one.
   */
  readonly committing?: (next: OwnershipDocument, plan: Plan) => OwnershipDocument;
}

/**
 * The run of a table that is the removal's rows alone (the runner removal's): the removal's
 * readings and its decision ({@link decideRemoval}) over `table`.
 *
 * @example
 * ```ts
 * import { removalRun } from "./removal_entry.ts";
 * import { REMOVAL_TABLE } from "../protocol/removal.ts";
 * const run = removalRun(REMOVAL_TABLE);
 * ```
 */
export function removalRun(
  table: readonly RemovalRow[],
): (of: TableRunOf) => TableRun<{ readonly removal: RemovalReadings }, never> {
  return ({ ctx, start, actions }) => ({
    read: async (done) => ({ removal: await readRemoval(ctx, actions, start, done) }),
    decide: (readings, memory) => decideRemoval(readings.removal, memory, table),
    cross: () => Promise.reject(new Error("the removal's table has no rows of its own")),
  });
}

/** The entry of one flavour: what the router calls (see the module documentation). */
export interface RemovalEntry {
  /**
   * Start the operation of a plan. The caller holds the lock, found no pending operation and
   * verified that the plan is current.
   */
  start(
    ctx: RemovalContext,
    plan: Plan,
    planSha256: string,
    start: StateSnapshot,
  ): Promise<RemovalResult>;
  /** Continue the pending operation with its own plan (`apply --plan FILE` again), from exact reads. */
  continue(
    ctx: RemovalContext,
    plan: Plan,
    planSha256: string,
    snap: StateSnapshot,
  ): Promise<RemovalResult>;
  /**
   * `apply --plan` of a plan whose operation was committed already (its acknowledgement lost):
   * the last commit of the audit is the plan's operation and the state is still its result;
   * every bound container must be absent. Null when that is not the case.
   */
  committed(
    ctx: RemovalContext,
    plan: Plan,
    planSha256: string,
    snap: StateSnapshot,
  ): Promise<RemovalResult | null>;
}

/**
 * The entry of a journey that takes runners down the removal's way (see the module
 * documentation).
 *
 * @example
 * ```ts
 * import { removalEntry } from "./removal_entry.ts";
 * // const destroy = removalEntry(DESTROY_FLAVOUR);
 * // const done = await destroy.committed(ctx, plan, planSha256, snap);
 * ```
 */
export function removalEntry<
  R extends { readonly removal: RemovalReadings },
  Own extends { kind: string },
>(
  flavour: RemovalFlavour<R, Own>,
): RemovalEntry {
  return {
    start: (ctx, plan, planSha256, start) => startRemoval(flavour, ctx, plan, planSha256, start),
    continue: (ctx, plan, planSha256, snap) =>
      continueRemoval(flavour, ctx, plan, planSha256, snap),
    committed: (ctx, plan, planSha256, snap) =>
      verifyCommitted(flavour, ctx, plan, planSha256, snap),
  };
}

/** The events of one run. */
function eventsOf<R extends { readonly removal: RemovalReadings }, Own extends { kind: string }>(
  flavour: RemovalFlavour<R, Own>,
  ctx: RemovalContext,
  operationId: string,
  planSha256: string,
) {
  return new OperationEvents({
    journey: flavour.journey,
    operationId,
    listener: ctx.onProgress,
    clock: ctx.clock,
    signal: ctx.signal,
    planSha256,
  });
}

/**
 * Verify every bound runner on fresh exact reads before the intent: the bound generation,
 * running, alone. Throws the blockers (nothing is written).
 */
async function verifyBound<
  R extends { readonly removal: RemovalReadings },
  Own extends { kind: string },
>(
  flavour: RemovalFlavour<R, Own>,
  ctx: RemovalContext,
  actions: RemoveRunnerAction[],
): Promise<void> {
  const blockers: Blocker[] = [];
  for (const a of boundRunners(actions)) {
    const s = seen(a, await observeBound(ctx, a));
    if (s.kind === "changed") blockers.push(s.blocker);
    else if (s.kind === "absent" || !s.container.running) blockers.push(flavour.unbound(a, s));
  }
  if (blockers.length > 0) throw blockerError(blockers);
}

/** The owned records the plan's runners release, exactly as the plan bound them. */
function releasedBy<R extends { readonly removal: RemovalReadings }, Own extends { kind: string }>(
  flavour: RemovalFlavour<R, Own>,
  prior: OwnershipDocument,
  actions: RemoveRunnerAction[],
): OwnedRunner[] {
  if (flavour.releasesAll && prior.runners.length !== actions.length) {
    throw new SluiceError(
      "BLOCKED_STATE_CHANGED",
      `the project owns ${prior.runners.length} runner(s), ${flavour.plan.name} binds ${actions.length}; ${flavour.plan.again}`,
    );
  }
  return actions.map((a) => {
    const r = prior.runners.find((x) => x.model === a.model);
    if (
      !r || r.application_id !== a.application_id || r.artifact_sha256 !== a.artifact_sha256 ||
      !sameInstances(r, a)
    ) {
      throw new SluiceError(
        "BLOCKED_STATE_CHANGED",
        `model ${a.model} is not owned as ${flavour.plan.name} says; ${flavour.plan.again}`,
      );
    }
    return r;
  });
}

async function startRemoval<
  R extends { readonly removal: RemovalReadings },
  Own extends { kind: string },
>(
  flavour: RemovalFlavour<R, Own>,
  ctx: RemovalContext,
  plan: Plan,
  planSha256: string,
  start: StateSnapshot,
): Promise<RemovalResult> {
  const actions = flavour.runners(plan);
  await verifyBound(flavour, ctx, actions);
  const prior = start.ownership?.document ??
    emptyOwnership(ctx.store.project, ctx.store.environment);
  const released = releasedBy(flavour, prior, actions);
  const operationId = flavour.operationId(planSha256);
  const events = eventsOf(flavour, ctx, operationId, planSha256);
  return await events.run(async () => {
    events.started(false, `${flavour.name} ${operationId}`);
    const snap = await writeIntent(
      { operation_id: operationId, kind: flavour.kind, plan_sha256: planSha256 },
      () =>
        atSite(flavour.site("intent"), () =>
          ctx.store.beginOperation(start, {
            operation_id: operationId,
            kind: flavour.kind,
            project: ctx.store.project,
            environment: ctx.store.environment,
            actor: ctx.actor,
            created_at: isoNow(ctx.clock ?? SYSTEM_CLOCK),
            original_state_checksum: start.ownership?.checksum ?? stateChecksum(prior),
            reviewed_plan_sha256: planSha256,
            details: {
              plan_sha256: planSha256,
              actions: boundRunners(actions).map((a) => ({
                model: a.model,
                application_id: a.application_id,
                container_id: a.container.id,
                generation: a.container.generation,
                keeps: a.keeps,
                ...(a.set ? { instance: a.set.instance, endpoint: a.set.endpoint } : {}),
              })) as unknown as Json,
              released: released as unknown as Json,
            },
          })),
    );
    events.boundary({
      kind: "intent",
      boundary: "intent",
      message: `${flavour.short} ${operationId} recorded`,
    });
    return await drive(flavour, ctx, events, plan, snap, operationId, false);
  });
}

async function continueRemoval<
  R extends { readonly removal: RemovalReadings },
  Own extends { kind: string },
>(
  flavour: RemovalFlavour<R, Own>,
  ctx: RemovalContext,
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): Promise<RemovalResult> {
  const control = snap.control!.opened;
  const intent = control.intent;
  verifyContinuation(plan, planSha256, currentContext(ctx.store, ctx.sourceSha256, snap), {
    what: flavour.name,
    operation_id: control.operation_id,
    plan_sha256: intent.reviewed_plan_sha256,
    abandon: `sluice state abandon --operation-id ${control.operation_id} --reason TEXT`,
  });
  if (!flavour.carries(plan) || !Array.isArray(intent.details.released)) {
    throw new SluiceError(
      flavour.notContinuable.code,
      flavour.notContinuable.message(control.operation_id),
    );
  }
  const events = eventsOf(flavour, ctx, control.operation_id, planSha256);
  return await events.run(async () => {
    events.started(true, `${flavour.short} ${control.operation_id} continues from its intent`);
    return await drive(flavour, ctx, events, plan, snap, control.operation_id, true);
  });
}

async function verifyCommitted<
  R extends { readonly removal: RemovalReadings },
  Own extends { kind: string },
>(
  flavour: RemovalFlavour<R, Own>,
  ctx: RemovalContext,
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): Promise<RemovalResult | null> {
  if (!flavour.carries(plan) || snap.control) return null;
  const operationId = flavour.operationId(planSha256);
  const last = snap.history.events.filter((e) => e.kind === "ownership_committed").at(-1) as
    | Extract<HistoryEvent, { kind: "ownership_committed" }>
    | undefined;
  if (
    !last || last.operation_id !== operationId ||
    snap.ownership?.checksum !== last.state_checksum
  ) return null;
  const removed: RemovedRunner[] = [];
  for (const a of boundRunners(flavour.runners(plan))) {
    const s = seen(a, await observeBound(ctx, a));
    if (s.kind === "changed") throw blockerError([s.blocker]);
    if (s.kind === "present") {
      throw blockerError([blocker(
        "BLOCKED_REMOVAL_GENERATION_CHANGED",
        `${boundName(a)}: ${flavour.short} ${operationId} was committed, yet container ${
          a.container.id.slice(0, 12)
        } exists again`,
        { model: a.model, evidence: { bound: a.container } },
      )]);
    }
    removed.push(removedOf(a, null));
  }
  return {
    operation_id: operationId,
    serial: snap.ownership!.document.serial,
    continued: false,
    already_applied: true,
    removed,
  };
}

function removedOf(a: BoundRunner, exit: number | null): RemovedRunner {
  return {
    model: a.model,
    application_id: a.application_id,
    container_id: a.container.id,
    container_name: a.container.name,
    exit_code: exit,
    ...(a.set ? { instance: a.set.instance, endpoint: a.set.endpoint } : {}),
    kept: {
      ...a.keeps,
      ...(a.set ? { volume: a.volume.name } : {}),
      volume_instance: a.volume.instance_id,
    },
  };
}

/**
 * A set's removal binds exactly the owned instances (each index, endpoint and volume; a
 * container's name is bound by its observation, as a single runner's is), and a single runner's
 * none.
 */
function sameInstances(r: OwnedRunner, a: RemoveRunnerAction): boolean {
  if (!r.instances || !a.instances) return !r.instances && !a.instances;
  return r.instances.length === a.instances.length && r.instances.every((o, n) => {
    const b = a.instances![n];
    return b.instance === o.instance && b.endpoint === o.endpoint &&
      b.volume.name === o.volume.name && b.volume.instance_id === o.volume.instance_id;
  });
}

/**
 * The rows after the intent, run by the journey driver: each decision is the flavour's table's
 * (its {@link TableRun}: {@link decideRemoval} for the removal's rows alone, the one `state
 * runner-status` reports) on fresh readings; this crosses the step it names at its row's site —
 * TERM, the removal of the container, the commit, or a step of the flavour's own rows — or waits
 * on the row that waits (the runner's exit, its group emptied).
 */
async function drive<R extends { readonly removal: RemovalReadings }, Own extends { kind: string }>(
  flavour: RemovalFlavour<R, Own>,
  ctx: RemovalContext,
  events: OperationEvents,
  plan: Plan,
  start: StateSnapshot,
  operationId: string,
  continued: boolean,
): Promise<RemovalResult> {
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const actions = flavour.runners(plan);
  const bound = boundRunners(actions);
  const control = start.control!.opened;
  const released = control.intent.details.released as unknown as OwnedRunner[];
  const termSent = new Set<string>();
  // the runners this run took down, with the exit code of their clean close (null: found absent)
  const done = new Map<string, number | null>();
  const result = (serial: number, exits: boolean): RemovalResult => ({
    operation_id: operationId,
    serial,
    continued,
    already_applied: false,
    removed: bound.map((a) => removedOf(a, exits ? done.get(boundKey(a)) ?? null : null)),
  });
  const run = flavour.run({ ctx, events, plan, start, actions });
  return await driveJourney<R, RemovalGo | Own, RemovalResult, RemovalWait>({
    events,
    clock,
    boundMs: ctx.closeTimeoutMs ?? (RUNNER_EXECUTION.stopTimeoutSeconds + 60) * 1000,
    read: async () => {
      const readings = await run.read(new Set(done.keys()));
      for (const r of readings.removal.runners) {
        if (r.seen.kind !== "absent") continue;
        // removed (a lost remove response), by this operation or by hand: it is gone either way
        done.set(boundKey(r.action), null);
        events.boundary({
          kind: "action",
          action: "remove",
          boundary: "remove_container",
          message: `${r.action.container.name} is absent`,
        });
      }
      return readings;
    },
    decide: (readings) => run.decide(readings, { termSent }),
    wake: async (wait, _readings, left) => {
      if (wait.on === "exit") {
        const docker = await dockerOf(ctx, wait.runner.action.set?.endpoint);
        await docker.awaitExit(wait.container.id, Math.max(1, Math.min(5_000, left)));
      } else await events.sleep(200);
    },
    cross: async (step) => {
      if (!isRemovalGo(step)) {
        await run.cross(step);
        return undefined;
      }
      switch (step.kind) {
        case "term_runner": {
          const c = step.container;
          const docker = await dockerOf(ctx, step.runner.action.set?.endpoint);
          await providerMutation(ctx.store, step.row.site, () => docker.signalTerm(c.id));
          termSent.add(c.id);
          events.emit({ kind: "action", action: "term", message: `${c.name} sent TERM` });
          return undefined;
        }
        case "remove_container": {
          const c = step.container;
          const docker = await dockerOf(ctx, step.runner.action.set?.endpoint);
          await providerMutation(ctx.store, step.row.site, () => docker.removeContainer(c.id));
          done.set(boundKey(step.runner.action), c.exitCode);
          events.boundary({
            kind: "action",
            action: "remove",
            boundary: "remove_container",
            message: `${c.name} closed cleanly (exit ${c.exitCode}) and removed`,
          });
          return undefined;
        }
        case "commit": {
          if (step.recorded) {
            return result(await clearCommitted(flavour, ctx, events, start, operationId), false);
          }
          const serial = await commit(
            flavour,
            ctx,
            events,
            start,
            operationId,
            released,
            actions,
            plan,
          );
          return result(serial, true);
        }
      }
    },
  });
}

/** The steps of the removal's own rows (a flavour's own steps have other kinds). */
const REMOVAL_STEPS: ReadonlySet<string> = new Set<RemovalGo["kind"]>([
  "term_runner",
  "remove_container",
  "commit",
]);

function isRemovalGo<Own extends { kind: string }>(step: RemovalGo | Own): step is RemovalGo {
  return REMOVAL_STEPS.has(step.kind);
}

/** Only the clear was lost: the commit the history recorded is the state; clear it. */
async function clearCommitted<
  R extends { readonly removal: RemovalReadings },
  Own extends { kind: string },
>(
  flavour: RemovalFlavour<R, Own>,
  ctx: RemovalContext,
  events: OperationEvents,
  start: StateSnapshot,
  operationId: string,
): Promise<number> {
  const done = await atSite(
    flavour.site("commit"),
    () =>
      ctx.store.commitOwnership(start, start.ownership!.document, {
        operationId,
        recordedAt: isoNow(ctx.clock ?? SYSTEM_CLOCK),
      }),
  );
  const serial = done.ownership!.document.serial;
  events.committed(
    serial,
    `ownership serial ${serial} (committed before; its clear is now recorded)`,
  );
  return serial;
}

/** Commit ownership without the released runners, their volumes and groups recorded as kept. */
async function commit<
  R extends { readonly removal: RemovalReadings },
  Own extends { kind: string },
>(
  flavour: RemovalFlavour<R, Own>,
  ctx: RemovalContext,
  events: OperationEvents,
  start: StateSnapshot,
  operationId: string,
  released: OwnedRunner[],
  actions: RemoveRunnerAction[],
  plan: Plan,
): Promise<number> {
  const current = start.ownership?.document ??
    emptyOwnership(ctx.store.project, ctx.store.environment);
  // the released runners' volumes and groups are kept: recorded, so that the model declared
  // again resumes from them (its create adopts exactly this volume and keeps the offsets)
  const kept: RetainedRunner[] = released.map((r) => ({
    model: r.model,
    application_id: r.application_id,
    volume: r.volume,
    input_topic: actions.find((a) => a.model === r.model)!.runner.input_topic,
    removed_by: operationId,
    // a set's every instance's volume, each on its own daemon
    ...(r.instances
      ? {
        instances: r.instances.map((i) => ({
          instance: i.instance,
          endpoint: i.endpoint,
          volume: i.volume,
        })),
      }
      : {}),
  }));
  const removal: OwnershipDocument = withRetained(
    {
      ...structuredClone(current),
      serial: current.serial + 1,
      runners: current.runners.filter((r) => !released.some((x) => x.model === r.model)),
    },
    [...(current.retained ?? []).filter((x) => !kept.some((k) => k.model === x.model)), ...kept],
  );
  const next = flavour.committing?.(removal, plan) ?? removal;
  const done = await atSite(
    flavour.site("commit"),
    () =>
      ctx.store.commitOwnership(start, next, {
        operationId,
        recordedAt: isoNow(ctx.clock ?? SYSTEM_CLOCK),
      }),
  );
  events.committed(next.serial, `ownership serial ${next.serial}: ${flavour.released(actions)}`);
  return done.ownership!.document.serial;
}
