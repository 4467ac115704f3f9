/**
 * Apply a `plan --destroy` file's `destroy` action: the rows of the destroy table
 * (`lib/protocol/destroy.ts`), in order, each crossing its row's fault site. It takes down every
 * runner the plan bound — the runner removal's own readings and decision (`readRemoval`,
 * `decideRemoval` over the destroy table, run by `driveJourney`, as the removal runs its own
 * table): under the deployment lock it re-verifies that each runner
 * is exactly the generation the plan bound and running, records the intent, then per runner
 * sends TERM, waits for the clean-close evidence, removes that exact container — never its
 * volume — and finally commits ownership without any runner (serial + 1), each released
 * runner's volume and consumer group recorded as retained. The volumes, the groups with their
 * committed offsets and the owned topics stay, so that planning the unchanged project again is
 * a create that resumes from them.
 *
 * **Continuation.** A process killed anywhere leaves the operation pending; `apply --plan` with
 * the same plan file (or `state resume` with it) continues it from exact reads: each runner is
 * decided by a fresh observation (running: TERM again; stopped: the clean-close evidence, then
 * remove; absent: removed); anything else blocks (`BLOCKED_REMOVAL_GENERATION_CHANGED`). A
 * commit whose acknowledgement was lost is recognized by the audit's `ownership_committed`
 * event of the plan's operation ID.
 *
 * @example
 * ```ts
 * import { destroyActionOf } from "./destroy.ts";
 * import type { Plan } from "../plan/plan.ts";
 * const isDestroy = (p: Plan) => destroyActionOf(p) !== null;
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { atSite } from "../fault/site.ts";
import type { Plan } from "../plan/plan.ts";
import { currentContext, verifyContinuation } from "../plan/plan_file.ts";
import type { DestroyAction, RemoveRunnerAction } from "../plan/removals.ts";
import {
  DESTROY_OPERATION_KIND,
  DESTROY_TABLE,
  destroyOperationId,
  destroySite,
} from "../protocol/destroy.ts";
import type { HistoryEvent } from "../state/history.ts";
import {
  emptyOwnership,
  type OwnedRunner,
  type OwnershipDocument,
  type RetainedRunner,
  stateChecksum,
  withRetained,
} from "../state/ownership.ts";
import type { StateSnapshot } from "../state/store.ts";
import type { Json } from "../state/_canonical.ts";
import { type Blocker, blocker, blockerError } from "../validation/blocker.ts";
import { isoNow, SYSTEM_CLOCK } from "./deps.ts";
import { RUNNER_EXECUTION } from "./labels.ts";
import { complete, type NextStep } from "./next_step.ts";
import { driveJourney } from "./journey_driver.ts";
import {
  decideRemoval,
  type RemovalGo,
  type RemovalWait,
  reportedRemoval,
} from "./removal_next.ts";
import { readRemoval, type RemovalReadings } from "./removal_reading.ts";
import { observeRunner } from "./observer.ts";
import { OperationEvents } from "./progress.ts";
import { providerMutation } from "./provider_mutation.ts";
import { writeIntent } from "./unknown_outcome.ts";
import {
  type RemovalContext,
  type RemovalResult,
  type RemovedRunner,
  seen,
  targetOfRemoval,
} from "./removal.ts";

/** What the destroy journey takes from the apply's context (the removal's). */
export type DestroyContext = RemovalContext;

/**
 * The plan's destroy action, or null when it carries none.
 *
 * @example
 * ```ts
 * import { destroyActionOf } from "./destroy.ts";
 * import type { Plan } from "../plan/plan.ts";
 * const runners = (p: Plan) => destroyActionOf(p)?.runners.length ?? 0;
 * ```
 */
export function destroyActionOf(plan: Plan): DestroyAction | null {
  return plan.actions.find((a): a is DestroyAction => a.type === "destroy") ?? null;
}

function runnersOf(plan: Plan): RemoveRunnerAction[] {
  return destroyActionOf(plan)?.runners ?? [];
}

function destroyEvents(ctx: DestroyContext, operationId: string, planSha256: string) {
  return new OperationEvents({
    journey: "destroy",
    operationId,
    listener: ctx.onProgress,
    clock: ctx.clock,
    signal: ctx.signal,
    planSha256,
  });
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

/** Every bound runner is exactly the plan's generation and running (else the blockers). */
async function verifyBound(ctx: DestroyContext, actions: RemoveRunnerAction[]): Promise<void> {
  const blockers: Blocker[] = [];
  for (const a of actions) {
    const s = seen(a, await observeRunner(ctx, targetOfRemoval(a)));
    if (s.kind === "changed") blockers.push(s.blocker);
    else if (s.kind === "absent" || !s.container.running) {
      blockers.push(blocker(
        s.kind === "absent" ? "BLOCKED_REMOVAL_GENERATION_CHANGED" : "BLOCKED_RUNNER_NOT_RUNNING",
        `model ${a.model}: container ${a.container.id.slice(0, 12)} (${a.container.name}) is ${
          s.kind === "absent" ? "gone" : `${s.container.status} (exit ${s.container.exitCode})`
        } since the destroy was planned; a destroy stops a running runner and checks its clean close. Plan the destroy again`,
        { model: a.model, evidence: { bound: a.container } },
      ));
    }
  }
  if (blockers.length > 0) throw blockerError(blockers);
}

/**
 * Start the destroy of a plan (see module docs). The caller holds the lock, found no pending
 * operation and verified that the plan is current.
 *
 * @example
 * ```ts
 * // const r = await startDestroy(ctx, plan, planSha256, snap);
 * ```
 */
export async function startDestroy(
  ctx: DestroyContext,
  plan: Plan,
  planSha256: string,
  start: StateSnapshot,
): Promise<RemovalResult> {
  const actions = runnersOf(plan);
  await verifyBound(ctx, actions);
  const prior = start.ownership?.document ??
    emptyOwnership(ctx.store.project, ctx.store.environment);
  // the destroy releases what is owned now, exactly as the plan bound it
  if (prior.runners.length !== actions.length) {
    throw new SluiceError(
      "BLOCKED_STATE_CHANGED",
      `the project owns ${prior.runners.length} runner(s), the destroy plan binds ${actions.length}; plan the destroy again`,
    );
  }
  const released = actions.map((a) => {
    const r = prior.runners.find((x) => x.model === a.model);
    if (!r || r.application_id !== a.application_id || r.artifact_sha256 !== a.artifact_sha256) {
      throw new SluiceError(
        "BLOCKED_STATE_CHANGED",
        `model ${a.model} is not owned as the destroy plan says; plan the destroy again`,
      );
    }
    return r;
  });
  const operationId = destroyOperationId(planSha256);
  const events = destroyEvents(ctx, operationId, planSha256);
  return await events.run(async () => {
    events.started(false, `destroy ${operationId}`);
    const snap = await writeIntent(
      { operation_id: operationId, kind: DESTROY_OPERATION_KIND, plan_sha256: planSha256 },
      () =>
        atSite(destroySite("intent"), () =>
          ctx.store.beginOperation(start, {
            operation_id: operationId,
            kind: DESTROY_OPERATION_KIND,
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
      message: `destroy ${operationId} recorded`,
    });
    return await drive(ctx, events, plan, snap, operationId, false);
  });
}

/**
 * Continue a pending destroy with its own plan (`apply --plan FILE` again), from exact reads.
 *
 * @example
 * ```ts
 * // if (snap.control?.opened.kind === "destroy") await continueDestroy(ctx, plan, sha, snap);
 * ```
 */
export async function continueDestroy(
  ctx: DestroyContext,
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): Promise<RemovalResult> {
  const control = snap.control!.opened;
  const intent = control.intent;
  verifyContinuation(plan, planSha256, currentContext(ctx.store, ctx.sourceSha256, snap), {
    what: "destroy",
    operation_id: control.operation_id,
    plan_sha256: intent.reviewed_plan_sha256,
    abandon: `sluice state abandon --operation-id ${control.operation_id} --reason TEXT`,
  });
  if (destroyActionOf(plan) === null || !Array.isArray(intent.details.released)) {
    throw new SluiceError(
      "BLOCKED_DESTROY_NOT_CONTINUABLE",
      `destroy ${control.operation_id} cannot be continued with this plan: its intent or the plan carries no destroy; continue it with its own plan file, or abandon it (sluice state abandon --operation-id ${control.operation_id} --reason TEXT)`,
    );
  }
  const events = destroyEvents(ctx, control.operation_id, planSha256);
  return await events.run(async () => {
    events.started(true, `destroy ${control.operation_id} continues from its intent`);
    return await drive(ctx, events, plan, snap, control.operation_id, true);
  });
}

/**
 * `apply --plan` of a destroy plan whose operation was committed already (its acknowledgement
 * lost): the last commit of the audit is the plan's operation and the state is still its result;
 * every bound container must be absent. Null when that is not the case.
 *
 * @example
 * ```ts
 * // const done = await verifyCommittedDestroy(ctx, plan, planSha256, snap);
 * ```
 */
export async function verifyCommittedDestroy(
  ctx: DestroyContext,
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): Promise<RemovalResult | null> {
  if (destroyActionOf(plan) === null || snap.control) return null;
  const operationId = destroyOperationId(planSha256);
  const last = snap.history.events.filter((e) => e.kind === "ownership_committed").at(-1) as
    | Extract<HistoryEvent, { kind: "ownership_committed" }>
    | undefined;
  if (
    !last || last.operation_id !== operationId ||
    snap.ownership?.checksum !== last.state_checksum
  ) return null;
  const removed: RemovedRunner[] = [];
  for (const a of runnersOf(plan)) {
    const s = seen(a, await observeRunner(ctx, targetOfRemoval(a)));
    if (s.kind === "changed") throw blockerError([s.blocker]);
    if (s.kind === "present") {
      throw blockerError([blocker(
        "BLOCKED_REMOVAL_GENERATION_CHANGED",
        `model ${a.model}: destroy ${operationId} was committed, yet container ${
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

/**
 * The rows after the intent, run by the journey driver: each decision is the removal's own
 * ({@link decideRemoval}) over the destroy table's rows, on the same fresh readings
 * ({@link readRemoval}); this crosses the step it names at its row's site — TERM, the removal
 * of the container, the commit — or waits on the row that waits.
 */
async function drive(
  ctx: DestroyContext,
  events: OperationEvents,
  plan: Plan,
  start: StateSnapshot,
  operationId: string,
  continued: boolean,
): Promise<RemovalResult> {
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const actions = runnersOf(plan);
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
    decide: (readings) => decideRemoval(readings, { termSent }, DESTROY_TABLE),
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
            // only the clear was lost: the commit the history recorded is the state; clear it
            const cleared = await atSite(
              destroySite("commit"),
              () =>
                ctx.store.commitOwnership(start, start.ownership!.document, {
                  operationId,
                  recordedAt: isoNow(clock),
                }),
            );
            const serial = cleared.ownership!.document.serial;
            events.committed(
              serial,
              `ownership serial ${serial} (committed before; its clear is now recorded)`,
            );
            return result(serial, false);
          }
          return result(
            await commitDestroy(ctx, events, start, operationId, released, actions),
            true,
          );
        }
      }
    },
  });
}

/**
 * Commit ownership without any runner: every released runner's volume and group is kept and
 * recorded, so that the project planned again resumes from exactly them (its create adopts the
 * kept volume and keeps the offsets); the topics stay owned.
 */
async function commitDestroy(
  ctx: DestroyContext,
  events: OperationEvents,
  start: StateSnapshot,
  operationId: string,
  released: OwnedRunner[],
  actions: RemoveRunnerAction[],
): Promise<number> {
  const current = start.ownership?.document ??
    emptyOwnership(ctx.store.project, ctx.store.environment);
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
    destroySite("commit"),
    () =>
      ctx.store.commitOwnership(start, next, {
        operationId,
        recordedAt: isoNow(ctx.clock ?? SYSTEM_CLOCK),
      }),
  );
  events.committed(
    next.serial,
    `ownership serial ${next.serial}: every runner released; volumes, group offsets and topics kept`,
  );
  return done.ownership!.document.serial;
}

/**
 * The next row of a pending destroy (`state runner-status`), read-only: the continuation's own
 * decision ({@link decideRemoval} over the destroy table) on fresh reads.
 *
 * @example
 * ```ts
 * // (await destroyNext(ctx, plan, snap)).step → "term_runner" | "await_closed" | … | "blocked"
 * ```
 */
export async function destroyNext(
  ctx: DestroyContext,
  plan: Plan,
  snap: StateSnapshot,
): Promise<NextStep> {
  if (destroyActionOf(plan) === null) return complete("the plan carries no destroy");
  return reportedRemoval(
    decideRemoval(await readRemoval(ctx, runnersOf(plan), snap), undefined, DESTROY_TABLE),
  );
}
