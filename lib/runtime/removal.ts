/**
 * Apply a plan's runner removals (`remove_runner`, from `lifecycle.runner_removals`): the rows of
 * the removal table (`lib/protocol/removal.ts`), each crossing its row's fault site. Under the
 * deployment lock it re-verifies that each runner is exactly the generation the plan bound
 * (container ID, generation, mounted plan, artifact checksum) and running, and records the intent
 * (each bound generation and the owned record it releases). From there the journey driver
 * (`journey_driver.ts`) runs the table: fresh readings (`removal_reading.ts`), the table's
 * decision (`decideRemoval`, `removal_next.ts` — the one `state runner-status` reports), one
 * step. Per runner that is TERM, the wait for the clean-close evidence a replacement's
 * `old_closed` row requires (exited 0 or 143, no OOM kill, no Docker error, its own fresh CLOSED
 * status file, the group without members), the removal of that exact container — never its
 * volume — and finally the commit of ownership without the runners (serial + 1). The state
 * volume, the consumer group with its committed offsets and the topics stay; the result lists
 * them.
 *
 * **Continuation.** A process killed anywhere leaves the operation pending; `apply --plan` with
 * the same plan file continues it with the same driver: each runner is decided by a fresh exact
 * observation (running: TERM again; stopped: the clean-close evidence, then remove; absent:
 * removed), anything else blocks (`BLOCKED_REMOVAL_GENERATION_CHANGED`). A commit whose
 * acknowledgement was lost is recognized by the audit's `ownership_committed` event of the plan's
 * operation ID.
 *
 * @example
 * ```ts
 * import { applyRemoval } from "./removal.ts";
 * // const r = await applyRemoval(ctx, plan, planSha256, snapshot);
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { writeIntent } from "./unknown_outcome.ts";
import { atSite } from "../fault/site.ts";
import type { Plan } from "../plan/plan.ts";
import { currentContext, verifyContinuation } from "../plan/plan_file.ts";
import type { RemoveRunnerAction } from "../plan/removals.ts";
import { parseMountedPlan } from "../protocol/mounted_plan.ts";
import { REMOVAL_OPERATION_KIND, removalOperationId, removalSite } from "../protocol/removal.ts";
import type { RunnerRemovalDecl } from "../project/removals.ts";
import type { DockerPort } from "../providers/docker/port.ts";
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
import { type RunnerTarget, targetOfArtifact } from "../validation/observation.ts";
import { validateArtifact } from "../artifact/artifact.ts";
import { type Clock, isoNow, SYSTEM_CLOCK } from "./deps.ts";
import { driveJourney } from "./journey_driver.ts";
import { LABEL, RUNNER_EXECUTION, RUNNER_PATHS } from "./labels.ts";
import { type ObserverPorts, observeRunner } from "./observer.ts";
import { OperationEvents, type ProgressListener } from "./progress.ts";
import { providerMutation } from "./provider_mutation.ts";
import {
  readRemoval,
  removalActions,
  type RemovalReadings,
  seen,
  targetOfRemoval,
  wayBack,
} from "./removal_reading.ts";
import { decideRemoval, type RemovalGo, type RemovalWait } from "./removal_next.ts";

// the readings the removal decides by, where its callers have always found them
export {
  removalActions,
  type Seen,
  seen,
  targetOfRemoval,
  uncleanClose,
} from "./removal_reading.ts";

/** What the removal journey takes from the apply's context. */
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
  /**
   * Kept: the state volume, the consumer group with its offsets, the topics.
   * @internal the plan's removal action; its shape is not part of the versioned SDK
   */
  kept: RemoveRunnerAction["keeps"] & { volume_instance: string };
}

/** The result of a removal operation. */
export interface RemovalResult {
  /** The removal operation's ID (derived from the plan file's sha256). */
  operation_id: string;
  /** The ownership serial after the commit. */
  serial: number;
  /** True when this run continued a pending removal. */
  continued: boolean;
  /** True when the plan had been committed already (nothing was written). */
  already_applied: boolean;
  /** Each removed runner, with what was kept. */
  removed: RemovedRunner[];
}

/**
 * What the planner observes for each owned runner declared removed: the target read from the
 * mounted plan of the container that carries its application ID (the model is no longer
 * compiled, so its generation says what it runs). A runner with no container, or whose plan
 * cannot be read, gets no target: the planner then blocks its removal (`BLOCKED_RUNNER_MISSING`).
 *
 * @example
 * ```ts
 * import { removalTargets } from "./removal.ts";
 * // const targets = await removalTargets(docker, ownership, manifest.runnerRemovals, declared);
 * ```
 */
export async function removalTargets(
  docker: DockerPort,
  ownership: OwnershipDocument | null,
  removals: RunnerRemovalDecl[],
  declared: ReadonlySet<string>,
): Promise<RunnerTarget[]> {
  const removed = (ownership?.runners ?? []).filter((r) =>
    !declared.has(r.model) && removals.some((x) => x.model === r.model)
  );
  if (removed.length === 0) return [];
  const containers = await docker.listContainersLabelled(
    LABEL.applicationId,
    removed.map((r) => r.application_id),
  );
  const out: RunnerTarget[] = [];
  for (const r of removed) {
    const c = containers.find((x) => x.labels[LABEL.applicationId] === r.application_id);
    if (!c) continue;
    const bytes = await docker.readContainerFile(c.id, RUNNER_PATHS.plan);
    if (!bytes) continue;
    try {
      const artifact = validateArtifact(parseMountedPlan(bytes).artifact);
      if (artifact.application_id !== r.application_id) continue;
      out.push(targetOfArtifact(artifact));
    } catch {
      // an unreadable plan: no target, the planner blocks the removal
    }
  }
  return out;
}

/** The events of one removal run. */
function removalEvents(ctx: RemovalContext, operationId: string, planSha256: string) {
  return new OperationEvents({
    journey: "runner_removal",
    operationId,
    listener: ctx.onProgress,
    clock: ctx.clock,
    signal: ctx.signal,
    planSha256,
  });
}

/**
 * Verify every removal on fresh exact reads before the intent: the bound generation, running,
 * alone. Throws the blockers (nothing is written).
 */
async function verifyBound(ctx: RemovalContext, actions: RemoveRunnerAction[]): Promise<void> {
  const blockers: Blocker[] = [];
  for (const a of actions) {
    const s = seen(a, await observeRunner(ctx, targetOfRemoval(a)));
    if (s.kind === "changed") blockers.push(s.blocker);
    else if (s.kind === "absent") {
      blockers.push(blocker(
        "BLOCKED_REMOVAL_GENERATION_CHANGED",
        `model ${a.model}: container ${
          a.container.id.slice(0, 12)
        } (${a.container.name}) is gone since the plan was made; plan again`,
        { model: a.model, evidence: { bound: a.container } },
      ));
    } else if (!s.container.running) {
      blockers.push(blocker(
        "BLOCKED_RUNNER_NOT_RUNNING",
        `model ${a.model}: container ${s.container.name} is ${s.container.status} (exit ${s.container.exitCode}) since the plan was made; a removal stops a running runner and checks its clean close. ${
          wayBack(a.model, null)
        }`,
        {
          model: a.model,
          evidence: { status: s.container.status, exitCode: s.container.exitCode },
        },
      ));
    }
  }
  if (blockers.length > 0) throw blockerError(blockers);
}

/**
 * Apply a plan's removals as one operation (see module docs). The caller holds the lock, found
 * no pending operation and verified that the plan is current.
 *
 * @example
 * ```ts
 * // const r = await applyRemoval(ctx, plan, planSha256, snap);
 * ```
 */
export async function applyRemoval(
  ctx: RemovalContext,
  plan: Plan,
  planSha256: string,
  start: StateSnapshot,
): Promise<RemovalResult> {
  const actions = removalActions(plan);
  await verifyBound(ctx, actions);
  const prior = start.ownership?.document ??
    emptyOwnership(ctx.store.project, ctx.store.environment);
  const released = actions.map((a) => {
    const r = prior.runners.find((x) => x.model === a.model);
    if (!r || r.application_id !== a.application_id || r.artifact_sha256 !== a.artifact_sha256) {
      throw new SluiceError(
        "BLOCKED_STATE_CHANGED",
        `model ${a.model} is not owned as the plan says; plan again`,
      );
    }
    return r;
  });
  const operationId = removalOperationId(planSha256);
  const events = removalEvents(ctx, operationId, planSha256);
  return await events.run(async () => {
    events.started(false, `runner removal ${operationId}`);
    const snap = await writeIntent(
      { operation_id: operationId, kind: REMOVAL_OPERATION_KIND, plan_sha256: planSha256 },
      () =>
        atSite(removalSite("intent"), () =>
          ctx.store.beginOperation(start, {
            operation_id: operationId,
            kind: REMOVAL_OPERATION_KIND,
            project: ctx.store.project,
            environment: ctx.store.environment,
            actor: ctx.actor,
            created_at: isoNow(ctx.clock ?? SYSTEM_CLOCK),
            original_state_checksum: start.ownership?.checksum ?? stateChecksum(prior),
            reviewed_plan_sha256: planSha256,
            details: {
              plan_sha256: planSha256,
              actions: actions.map((a) => ({
                model: a.model,
                application_id: a.application_id,
                container_id: a.container.id,
                generation: a.container.generation,
                keeps: a.keeps,
              })) as unknown as Json,
              released: released as unknown as Json,
            },
          })),
    );
    events.boundary({
      kind: "intent",
      boundary: "intent",
      message: `removal ${operationId} recorded`,
    });
    return await drive(ctx, events, plan, snap, operationId, false);
  });
}

/**
 * Continue a pending removal with its own plan (`apply --plan FILE` again), from exact reads.
 *
 * @example
 * ```ts
 * // if (snap.control?.opened.kind === "runner_removal") await continueRemoval(ctx, plan, sha, snap);
 * ```
 */
export async function continueRemoval(
  ctx: RemovalContext,
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): Promise<RemovalResult> {
  const control = snap.control!.opened;
  const intent = control.intent;
  verifyContinuation(plan, planSha256, currentContext(ctx.store, ctx.sourceSha256, snap), {
    what: "runner removal",
    operation_id: control.operation_id,
    plan_sha256: intent.reviewed_plan_sha256,
    abandon: `sluice state abandon --operation-id ${control.operation_id} --reason TEXT`,
  });
  if (removalActions(plan).length === 0 || !Array.isArray(intent.details.released)) {
    throw new SluiceError(
      "BLOCKED_REMOVAL_NOT_CONTINUABLE",
      `runner removal ${control.operation_id} cannot be continued with this plan: its intent or the plan carries no removal; abandon it (sluice state abandon --operation-id ${control.operation_id} --reason TEXT)`,
    );
  }
  const events = removalEvents(ctx, control.operation_id, planSha256);
  return await events.run(async () => {
    events.started(true, `removal ${control.operation_id} continues from its intent`);
    return await drive(ctx, events, plan, snap, control.operation_id, true);
  });
}

/**
 * `apply --plan` of a removal plan whose operation was committed already (its acknowledgement
 * lost): the last commit of the audit is the plan's operation and the state is still its result;
 * every bound container must be absent. Null when that is not the case.
 *
 * @example
 * ```ts
 * // const done = await verifyCommittedRemoval(ctx, plan, planSha256, snap);
 * ```
 */
export async function verifyCommittedRemoval(
  ctx: RemovalContext,
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): Promise<RemovalResult | null> {
  const actions = removalActions(plan);
  if (actions.length === 0 || snap.control) return null;
  const operationId = removalOperationId(planSha256);
  const last = snap.history.events.filter((e) => e.kind === "ownership_committed").at(-1) as
    | Extract<HistoryEvent, { kind: "ownership_committed" }>
    | undefined;
  if (
    !last || last.operation_id !== operationId ||
    snap.ownership?.checksum !== last.state_checksum
  ) return null;
  const removed: RemovedRunner[] = [];
  for (const a of actions) {
    const s = seen(a, await observeRunner(ctx, targetOfRemoval(a)));
    if (s.kind === "changed") throw blockerError([s.blocker]);
    if (s.kind === "present") {
      throw blockerError([blocker(
        "BLOCKED_REMOVAL_GENERATION_CHANGED",
        `model ${a.model}: removal ${operationId} was committed, yet container ${
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

function removedOf(a: RemoveRunnerAction, exit: number | null): RemovedRunner {
  return {
    model: a.model,
    application_id: a.application_id,
    container_id: a.container.id,
    container_name: a.container.name,
    exit_code: exit,
    kept: { ...a.keeps, volume_instance: a.volume.instance_id },
  };
}

/**
 * The rows after the intent, run by the journey driver: each decision is the removal table's
 * ({@link decideRemoval}, the one `state runner-status` reports) on fresh readings; this crosses
 * the step it names at its row's site — TERM, the removal of the container, the commit — or
 * waits on the row that waits (the runner's exit, its group emptied).
 */
async function drive(
  ctx: RemovalContext,
  events: OperationEvents,
  plan: Plan,
  start: StateSnapshot,
  operationId: string,
  continued: boolean,
): Promise<RemovalResult> {
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const actions = removalActions(plan);
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
    removed: actions.map((a) => removedOf(a, exits ? done.get(a.model) ?? null : null)),
  });
  return await driveJourney<RemovalReadings, RemovalGo, RemovalResult, RemovalWait>({
    events,
    clock,
    boundMs: ctx.closeTimeoutMs ?? (RUNNER_EXECUTION.stopTimeoutSeconds + 60) * 1000,
    read: async () => {
      const readings = await readRemoval(ctx, actions, start, new Set(done.keys()));
      for (const r of readings.runners) {
        if (r.seen.kind !== "absent") continue;
        // removed (a lost remove response), by this operation or by hand: it is gone either way
        done.set(r.action.model, null);
        events.boundary({
          kind: "action",
          action: "remove",
          boundary: "remove_container",
          message: `${r.action.container.name} is absent`,
        });
      }
      return readings;
    },
    decide: (readings) => decideRemoval(readings, { termSent }),
    wake: async (wait, _readings, left) => {
      if (wait.on === "exit") {
        await ctx.docker.awaitExit(wait.container.id, Math.max(1, Math.min(5_000, left)));
      } else await events.sleep(200);
    },
    cross: async (step) => {
      switch (step.kind) {
        case "term_runner": {
          const c = step.container;
          await providerMutation(ctx.store, step.row.site, () => ctx.docker.signalTerm(c.id));
          termSent.add(c.id);
          events.emit({ kind: "action", action: "term", message: `${c.name} sent TERM` });
          return undefined;
        }
        case "remove_container": {
          const c = step.container;
          await providerMutation(ctx.store, step.row.site, () => ctx.docker.removeContainer(c.id));
          done.set(step.runner.action.model, c.exitCode);
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
            return result(await clearCommitted(ctx, events, start, operationId), false);
          }
          const serial = await commitRemoval(ctx, events, start, operationId, released, actions);
          return result(serial, true);
        }
      }
    },
  });
}

/** Only the clear was lost: the commit the history recorded is the state; clear it. */
async function clearCommitted(
  ctx: RemovalContext,
  events: OperationEvents,
  start: StateSnapshot,
  operationId: string,
): Promise<number> {
  const done = await atSite(
    removalSite("commit"),
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
async function commitRemoval(
  ctx: RemovalContext,
  events: OperationEvents,
  start: StateSnapshot,
  operationId: string,
  released: OwnedRunner[],
  actions: RemoveRunnerAction[],
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
  }));
  const next: OwnershipDocument = withRetained(
    {
      ...structuredClone(current),
      serial: current.serial + 1,
      runners: current.runners.filter((r) => !released.some((x) => x.model === r.model)),
    },
    [...(current.retained ?? []).filter((x) => !kept.some((k) => k.model === x.model)), ...kept],
  );
  const done = await atSite(
    removalSite("commit"),
    () =>
      ctx.store.commitOwnership(start, next, {
        operationId,
        recordedAt: isoNow(ctx.clock ?? SYSTEM_CLOCK),
      }),
  );
  events.committed(
    next.serial,
    `ownership serial ${next.serial}: ${
      actions.map((a) => a.model).join(", ")
    } released; volume, group offsets and topics kept`,
  );
  return done.ownership!.document.serial;
}
