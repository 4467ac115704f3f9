/**
 * What a pending runner removal is decided by, read fresh and read-only: whether its commit is
 * already the state, whether ownership is still the one its intent recorded, and per bound
 * runner (in plan order) where its exact generation stands — present, absent, or changed. The
 * removal's continuation (`removal.ts`) and `state runner-status` (`removal_next.ts`) decide from
 * these same readings, by the same function.
 *
 * @example
 * ```ts
 * import { readRemoval } from "./removal_reading.ts";
 * // const r = await readRemoval(ctx, removalActions(plan), snap);
 * // r.committed ? "only the clear" : r.runners.map((x) => x.seen.kind)
 * ```
 * @module
 */
import type { Plan } from "../plan/plan.ts";
import type { RemoveRunnerAction } from "../plan/removals.ts";
import { commitOfOperation } from "../state/history.ts";
import { emptyOwnership, stateChecksum } from "../state/ownership.ts";
import type { StateSnapshot, StateStore } from "../state/store.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";
import type {
  ContainerEvidence,
  RunnerObservation,
  RunnerTarget,
} from "../validation/observation.ts";
import { notACleanClose } from "../validation/runner_stop.ts";
import { type ObserverPorts, observeRunner } from "./observer.ts";
import { type DockerAt, dockerOf } from "./endpoint_ports.ts";

/**
 * The plan's runner removals.
 *
 * @example
 * ```ts
 * import { removalActions } from "./removal_reading.ts";
 * import type { Plan } from "../plan/plan.ts";
 * const count = (p: Plan) => removalActions(p).length;
 * ```
 */
export function removalActions(plan: Plan): RemoveRunnerAction[] {
  return plan.actions.filter((a): a is RemoveRunnerAction => a.type === "remove_runner");
}

/**
 * One runner a removal takes down: a plan's removal of a single runner, or one instance of a
 * set's (its own container and volume, and `set`: its index, its endpoint, and the set's size).
 */
export interface BoundRunner extends RemoveRunnerAction {
  /** An instance of a set (absent: a single runner). */
  set?: { instance: number; endpoint: string | null; of: number };
}

/**
 * The runners `actions` take down, in plan order: a set's instances in index order, each its
 * own subject of the removal's runner rows (its container stopped and removed on its endpoint).
 *
 * @example
 * ```ts
 * import { boundRunners } from "./removal_reading.ts";
 * boundRunners([]); // []
 * ```
 */
export function boundRunners(actions: readonly RemoveRunnerAction[]): BoundRunner[] {
  return actions.flatMap((a): BoundRunner[] =>
    a.instances
      ? a.instances.map((i) => ({
        ...a,
        container: i.container,
        volume: i.volume,
        set: { instance: i.instance, endpoint: i.endpoint, of: a.instances!.length },
      }))
      : [a]
  );
}

/**
 * The key of a bound runner in a run's memory: its model, `model#i` for instance `i` of a set.
 *
 * @example
 * ```ts
 * import { boundKey } from "./removal_reading.ts";
 * // boundKey(runner) → "orders" | "orders#1"
 * ```
 */
export function boundKey(b: BoundRunner): string {
  return b.set ? `${b.model}#${b.set.instance}` : b.model;
}

/**
 * How messages name a bound runner: `model M`, or `model M instance I` for an instance of a set.
 *
 * @example
 * ```ts
 * import { boundName } from "./removal_reading.ts";
 * // boundName(runner) → "model orders" | "model orders instance 1"
 * ```
 */
export function boundName(b: BoundRunner): string {
  return b.set ? `model ${b.model} instance ${b.set.instance}` : `model ${b.model}`;
}

/**
 * Observe a bound runner fresh: on its instance's endpoint with its instance's target for an
 * instance of a set, on the environment's daemon otherwise.
 *
 * @example
 * ```ts
 * import { observeBound } from "./removal_reading.ts";
 * // const obs = await observeBound(ctx, runner);
 * ```
 */
export async function observeBound(
  ctx: ObserverPorts & { dockerAt?: DockerAt },
  b: BoundRunner,
): Promise<RunnerObservation> {
  const docker = await dockerOf(ctx, b.set?.endpoint);
  return await observeRunner({ ...ctx, docker }, {
    ...targetOfRemoval(b),
    ...(b.set ? { instance: b.set.instance } : {}),
  });
}

/**
 * The observer's target of a bound removal.
 *
 * @example
 * ```ts
 * import { targetOfRemoval } from "./removal_reading.ts";
 * // observeRunner(ctx, targetOfRemoval(action))
 * ```
 */
export function targetOfRemoval(a: RemoveRunnerAction): RunnerTarget {
  return {
    applicationId: a.application_id,
    inputTopic: a.runner.input_topic,
    outputTopic: a.runner.output_topic,
    ...(a.runner.dead_letter_topic ? { deadLetterTopic: a.runner.dead_letter_topic } : {}),
    image: a.runner.image,
    network: a.runner.network,
  };
}

/** The bound generation's exact state on a fresh observation. */
export type Seen =
  | { kind: "present"; container: ContainerEvidence }
  | { kind: "absent" }
  | { kind: "changed"; blocker: Blocker };

/**
 * Where the bound generation stands on one exact observation.
 *
 * @example
 * ```ts
 * import { seen } from "./removal_reading.ts";
 * // seen(action, obs).kind → "present" | "absent" | "changed"
 * ```
 */
export function seen(a: BoundRunner, obs: RunnerObservation): Seen {
  const changed = (why: string, evidence: Record<string, unknown>): Seen => ({
    kind: "changed",
    blocker: blocker(
      "BLOCKED_REMOVAL_GENERATION_CHANGED",
      `${boundName(a)}: ${why}; the removal names container ${
        a.container.id.slice(0, 12)
      } (${a.container.name}, generation ${a.container.generation}) only. Plan again to see the runner as it is now`,
      { model: a.model, evidence: { bound: a.container, ...evidence } },
    ),
  });
  const others = obs.containers.filter((c) => c.id !== a.container.id);
  if (others.length > 0) {
    return changed(
      `${others.length} other container${
        others.length === 1 ? "" : "s"
      } carry application ID ${a.application_id}`,
      { others: others.map((c) => ({ id: c.id, name: c.name, generation: c.labels.generation })) },
    );
  }
  const c = obs.containers.find((x) => x.id === a.container.id);
  if (!c) return { kind: "absent" };
  if (
    c.labels.generation !== a.container.generation ||
    c.labels.planSha256 !== a.container.plan_sha256 ||
    c.labels.artifactSha256 !== a.artifact_sha256
  ) {
    return changed(`container ${c.id.slice(0, 12)} carries other generation labels`, {
      observed: {
        generation: c.labels.generation,
        plan_sha256: c.labels.planSha256,
        artifact_sha256: c.labels.artifactSha256,
      },
    });
  }
  return { kind: "present", container: c };
}

/**
 * The way back to a removable runner through sluice, when the bound runner stopped without a
 * clean close (killed, crashed, OOM, or its close bound hit): its last transaction is not proven
 * committed, so it is neither removed nor released. `sluice restart` runs the same generation
 * again from its committed offsets — also while its removal is pending, with the manifest as the
 * removal left it — and the removal then stops it with TERM and checks its clean close.
 *
 * @example
 * ```ts
 * import { wayBack } from "./removal_reading.ts";
 * console.log(wayBack("orders", null)); // "Way out: 'sluice restart orders --reason TEXT' …"
 * ```
 */
export function wayBack(model: string, operationId: string | null): string {
  return operationId
    ? `removal ${operationId} stays pending with the container kept. Way out: 'sluice restart ${model} --reason TEXT' (the same generation runs again from its committed offsets), then the same 'sluice apply --plan FILE' (TERM, a clean close, removed); or give up: 'sluice state abandon --operation-id ${operationId} --reason TEXT' (docs/runbook.md, "Removal blockers")`
    : `Way out: 'sluice restart ${model} --reason TEXT' (the same generation runs again from its committed offsets), then 'sluice plan --out FILE' and 'sluice apply --plan FILE' (docs/runbook.md, "Removal blockers")`;
}

/**
 * Why a stopped bound runner may not be removed, with the way back.
 *
 * @example
 * ```ts
 * import { uncleanClose } from "./removal_reading.ts";
 * // uncleanClose(action, container, operationId).length === 0 → a clean close
 * ```
 */
export function uncleanClose(
  a: BoundRunner,
  c: ContainerEvidence,
  operationId: string,
): Blocker[] {
  // the clean-close rule a replacement's old_closed row applies too (notACleanClose)
  const out = notACleanClose(c).map((f) =>
    blocker(f.code, `${boundName(a)}: ${f.message}`, {
      model: a.model,
      evidence: { container: c.id, status: c.status, exitCode: c.exitCode, oomKilled: c.oomKilled },
    })
  );
  // the way out is said once, after the last reason
  if (out.length > 0) {
    const last = out[out.length - 1];
    out[out.length - 1] = { ...last, message: `${last.message}; ${wayBack(a.model, operationId)}` };
  }
  return out;
}

/** One bound runner as a fresh exact observation shows it. */
export interface RunnerReading {
  /** The plan's removal of it (of one instance, for a set). */
  action: BoundRunner;
  /** The observation (its containers, its group). */
  obs: RunnerObservation;
  /** Where its bound generation stands. */
  seen: Seen;
}

/** What the removal's decision reads (see the module documentation). */
export interface RemovalReadings {
  /** The pending removal operation. */
  operationId: string;
  /** The plan's removals, in plan order. */
  actions: RemoveRunnerAction[];
  /** The audit recorded this operation's commit and the state is its result: only the clear remains. */
  committed: boolean;
  /** Ownership's checksum when it is no longer the one the intent recorded (null: unchanged). */
  changedOwnership: { recorded: string; now: string } | null;
  /**
   * The bound runners in plan order, observed up to the first one not absent (the decision goes
   * no further); none when the commit is recorded or ownership changed. Runners this run already
   * took down are not read again.
   */
  runners: RunnerReading[];
}

/**
 * Read a pending removal fresh (see the module documentation): the bound runners are `actions`
 * (a plan's removals, {@link removalActions}, or every runner another journey takes down the same
 * way); `done` names the bound runners (`boundKey`) this run already took down (not read again).
 *
 * @example
 * ```ts
 * import { readRemoval, removalActions } from "./removal_reading.ts";
 * // const readings = await readRemoval(ctx, removalActions(plan), snap);
 * ```
 */
export async function readRemoval(
  ctx: ObserverPorts & {
    store: Pick<StateStore, "project" | "environment">;
    dockerAt?: DockerAt;
  },
  actions: RemoveRunnerAction[],
  snap: StateSnapshot,
  done: ReadonlySet<string> = new Set(),
): Promise<RemovalReadings> {
  const control = snap.control!.opened;
  const operationId = control.operation_id;
  const commit = commitOfOperation(snap.history.events, operationId);
  const committed = commit !== null && snap.ownership?.checksum === commit.state_checksum;
  const now = stateChecksum(
    snap.ownership?.document ?? emptyOwnership(ctx.store.project, ctx.store.environment),
  );
  const recorded = control.intent.original_state_checksum;
  const changedOwnership = !committed && now !== recorded ? { recorded, now } : null;
  const runners: RunnerReading[] = [];
  if (!committed && !changedOwnership) {
    for (const action of boundRunners(actions)) {
      if (done.has(boundKey(action))) continue;
      const obs = await observeBound(ctx, action);
      const s = seen(action, obs);
      runners.push({ action, obs, seen: s });
      if (s.kind !== "absent") break;
    }
  }
  return { operationId, actions, committed, changedOwnership, runners };
}
