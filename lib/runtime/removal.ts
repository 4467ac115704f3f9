/**
 * Apply a plan's runner removals (`remove_runner`, from `lifecycle.runner_removals`): the rows of
 * the removal table (`lib/protocol/removal.ts`), each crossing its row's fault site, run by the
 * one entry every journey of the removal's way shares (`removal_entry.ts`) with this journey's
 * flavour ({@link REMOVAL_FLAVOUR}). Per runner that is TERM, the wait for the clean-close
 * evidence a replacement's `old_closed` row requires (exited 0 or 143, no OOM kill, no Docker
 * error, its own fresh CLOSED status file, the group without members), the removal of that exact
 * container — never its volume — and finally the commit of ownership without the runners
 * (serial + 1). The state volume, the consumer group with its committed offsets and the topics
 * stay; the result lists them. This module also holds what the planner observes of a runner
 * declared removed ({@link removalTargets}).
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
import { parseMountedPlan } from "../protocol/mounted_plan.ts";
import {
  REMOVAL_OPERATION_KIND,
  REMOVAL_TABLE,
  removalOperationId,
  removalSite,
} from "../protocol/removal.ts";
import type { Plan } from "../plan/plan.ts";
import type { RunnerRemovalDecl } from "../project/removals.ts";
import type { DockerPort } from "../providers/docker/port.ts";
import type { OwnedRunner, OwnershipDocument } from "../state/ownership.ts";
import type { StateSnapshot } from "../state/store.ts";
import { blocker } from "../validation/blocker.ts";
import {
  type RunnerObservation,
  type RunnerTarget,
  targetOfArtifact,
} from "../validation/observation.ts";
import type { DockerAt } from "./endpoint_ports.ts";
import { type ObserverPorts, observeRunner } from "./observer.ts";
import { validateArtifact } from "../artifact/artifact.ts";
import { LABEL, RUNNER_PATHS } from "./labels.ts";
import {
  type RemovalContext,
  removalEntry,
  type RemovalFlavour,
  type RemovalResult,
  removalRun,
} from "./removal_entry.ts";
import { removalActions, wayBack } from "./removal_reading.ts";

// the readings the removal decides by, where its callers have always found them
export {
  removalActions,
  type Seen,
  seen,
  targetOfRemoval,
  uncleanClose,
} from "./removal_reading.ts";
// the entry's context and result, where the SDK and the router have always found them
export type { RemovalContext, RemovalResult, RemovedRunner } from "./removal_entry.ts";

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
  removals: readonly Pick<RunnerRemovalDecl, "model">[],
  declared: ReadonlySet<string>,
): Promise<RunnerTarget[]> {
  // a set's instances are read on their endpoints (setRemovalObservations)
  const removed = removedRunners(ownership, removals, declared).filter((r) => !r.instances);
  if (removed.length === 0) return [];
  const containers = await docker.listContainersLabelled(
    LABEL.applicationId,
    removed.map((r) => r.application_id),
  );
  const out: RunnerTarget[] = [];
  for (const r of removed) {
    const c = containers.find((x) => x.labels[LABEL.applicationId] === r.application_id);
    const target = c ? await mountedTarget(docker, c.id, r.application_id) : null;
    if (target) out.push(target);
  }
  return out;
}

/** The owned runners `removals` take down and the project no longer declares. */
function removedRunners(
  ownership: OwnershipDocument | null,
  removals: readonly Pick<RunnerRemovalDecl, "model">[],
  declared: ReadonlySet<string>,
): OwnedRunner[] {
  return (ownership?.runners ?? []).filter((r) =>
    !declared.has(r.model) && removals.some((x) => x.model === r.model)
  );
}

/**
 * What container `id` runs, read from its mounted plan (the model is no longer compiled, so its
 * generation says): null when the plan cannot be read or is another application's.
 */
async function mountedTarget(
  docker: DockerPort,
  id: string,
  applicationId: string,
): Promise<RunnerTarget | null> {
  const bytes = await docker.readContainerFile(id, RUNNER_PATHS.plan);
  if (!bytes) return null;
  try {
    const artifact = validateArtifact(parseMountedPlan(bytes).artifact);
    return artifact.application_id === applicationId ? targetOfArtifact(artifact) : null;
  } catch {
    // an unreadable plan: no target, the planner blocks the removal
    return null;
  }
}

/**
 * Each removed set declared again (a retained record with `instances` whose model `targets`
 * compile), every instance observed on the endpoint its kept volume is on, with its instance's
 * target: by application ID, in index order, null for an instance whose endpoint did not answer.
 * What the planner resumes each instance from (its kept volume, or none left).
 *
 * @example
 * ```ts
 * import { keptSetObservations } from "./removal.ts";
 * // const kept = await keptSetObservations(s.readAt, s, ownership, targets);
 * ```
 */
export async function keptSetObservations(
  dockerAt: DockerAt,
  ports: Omit<ObserverPorts, "docker">,
  ownership: OwnershipDocument | null,
  targets: readonly RunnerTarget[],
): Promise<Map<string, Array<RunnerObservation | null>>> {
  const out = new Map<string, Array<RunnerObservation | null>>();
  for (const r of ownership?.retained ?? []) {
    const target = targets.find((t) => t.applicationId === r.application_id);
    if (!r.instances || !target) continue;
    out.set(r.application_id, await observeInstances(dockerAt, ports, r.instances, target));
  }
  return out;
}

/**
 * Each of a set's instances observed on its endpoint with its instance's target, in index order;
 * null for one whose endpoint did not answer.
 */
function observeInstances(
  dockerAt: DockerAt,
  ports: Omit<ObserverPorts, "docker">,
  instances: ReadonlyArray<{ instance: number; endpoint: string | null }>,
  target: RunnerTarget,
): Promise<Array<RunnerObservation | null>> {
  return Promise.all(instances.map(async (i) => {
    try {
      const docker = await dockerAt(i.endpoint);
      return await observeRunner({ ...ports, docker }, { ...target, instance: i.instance });
    } catch {
      return null;
    }
  }));
}

/**
 * Each owned set the plan takes down (declared removed, or every one for a destroy), observed
 * as {@link ownedSetObservations} observes a set.
 *
 * @example
 * ```ts
 * import { setRemovalObservations } from "./removal.ts";
 * // const sets = await setRemovalObservations(s.readAt, s, ownership, removals, declared);
 * ```
 */
export async function setRemovalObservations(
  dockerAt: DockerAt,
  ports: Omit<ObserverPorts, "docker">,
  ownership: OwnershipDocument | null,
  removals: readonly Pick<RunnerRemovalDecl, "model">[],
  declared: ReadonlySet<string>,
): Promise<Map<string, Array<RunnerObservation | null>>> {
  return await ownedSetObservations(dockerAt, ports, removedRunners(ownership, removals, declared));
}

/**
 * Each owned set of `runners` (the single runners among them are skipped), every instance
 * observed on its endpoint through `dockerAt` (each call bounded, as a plan reads a set) with
 * what instance 0's mounted plan says it runs: by application ID, in index order, null for an
 * instance whose endpoint did not answer, and no instance at all when instance 0's runner or its
 * mounted plan is gone (the planner then blocks, naming which).
 *
 * @example
 * ```ts
 * import { ownedSetObservations } from "./removal.ts";
 * // const sets = await ownedSetObservations(s.readAt, s, ownership.runners);
 * ```
 */
export async function ownedSetObservations(
  dockerAt: DockerAt,
  ports: Omit<ObserverPorts, "docker">,
  runners: readonly OwnedRunner[],
): Promise<Map<string, Array<RunnerObservation | null>>> {
  const out = new Map<string, Array<RunnerObservation | null>>();
  for (const r of runners) {
    if (!r.instances) continue;
    let target: RunnerTarget | null = null;
    try {
      const zero = r.instances[0];
      const docker = await dockerAt(zero.endpoint);
      const c = await docker.inspectContainer(zero.container_name);
      target = c ? await mountedTarget(docker, c.id, r.application_id) : null;
      // instance 0's runner or its plan is gone: nothing says what the set runs
      if (!target) {
        out.set(r.application_id, []);
        continue;
      }
    } catch {
      // instance 0's daemon did not answer: no instance can be read
      out.set(r.application_id, r.instances.map(() => null));
      continue;
    }
    out.set(r.application_id, await observeInstances(dockerAt, ports, r.instances, target));
  }
  return out;
}

/**
 * The runner removal's flavour of the removal entry: its kind, table and sites, its events'
 * journey (`runner_removal`), its words and its not-continuable code
 * (`BLOCKED_REMOVAL_NOT_CONTINUABLE`).
 *
 * @example
 * ```ts
 * import { REMOVAL_FLAVOUR } from "./removal.ts";
 * console.log(REMOVAL_FLAVOUR.kind, REMOVAL_FLAVOUR.journey); // runner_removal runner_removal
 * ```
 */
export const REMOVAL_FLAVOUR: RemovalFlavour = {
  name: "runner removal",
  short: "removal",
  journey: "runner_removal",
  kind: REMOVAL_OPERATION_KIND,
  site: removalSite,
  run: removalRun(REMOVAL_TABLE),
  operationId: removalOperationId,
  carries: (plan) => removalActions(plan).length > 0,
  runners: removalActions,
  releasesAll: false,
  plan: { name: "the plan", again: "plan again" },
  unbound: (a, s) =>
    s.kind === "absent"
      ? blocker(
        "BLOCKED_REMOVAL_GENERATION_CHANGED",
        `model ${a.model}: container ${
          a.container.id.slice(0, 12)
        } (${a.container.name}) is gone since the plan was made; plan again`,
        { model: a.model, evidence: { bound: a.container } },
      )
      : blocker(
        "BLOCKED_RUNNER_NOT_RUNNING",
        `model ${a.model}: container ${s.container.name} is ${s.container.status} (exit ${s.container.exitCode}) since the plan was made; a removal stops a running runner and checks its clean close. ${
          wayBack(a.model, null)
        }`,
        {
          model: a.model,
          evidence: { status: s.container.status, exitCode: s.container.exitCode },
        },
      ),
  notContinuable: {
    code: "BLOCKED_REMOVAL_NOT_CONTINUABLE",
    message: (id) =>
      `runner removal ${id} cannot be continued with this plan: its intent or the plan carries no removal; abandon it (sluice state abandon --operation-id ${id} --reason TEXT)`,
  },
  released: (actions) =>
    `${actions.map((a) => a.model).join(", ")} released; volume, group offsets and topics kept`,
};

const REMOVAL = removalEntry(REMOVAL_FLAVOUR);

/**
 * Apply a plan's removals as one operation (see module docs). The caller holds the lock, found
 * no pending operation and verified that the plan is current.
 *
 * @example
 * ```ts
 * // const r = await applyRemoval(ctx, plan, planSha256, snap);
 * ```
 */
export function applyRemoval(
  ctx: RemovalContext,
  plan: Plan,
  planSha256: string,
  start: StateSnapshot,
): Promise<RemovalResult> {
  return REMOVAL.start(ctx, plan, planSha256, start);
}

/**
 * Continue a pending removal with its own plan (`apply --plan FILE` again), from exact reads.
 *
 * @example
 * ```ts
 * // if (snap.control?.opened.kind === "runner_removal") await continueRemoval(ctx, plan, sha, snap);
 * ```
 */
export function continueRemoval(
  ctx: RemovalContext,
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): Promise<RemovalResult> {
  return REMOVAL.continue(ctx, plan, planSha256, snap);
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
export function verifyCommittedRemoval(
  ctx: RemovalContext,
  plan: Plan,
  planSha256: string,
  snap: StateSnapshot,
): Promise<RemovalResult | null> {
  return REMOVAL.committed(ctx, plan, planSha256, snap);
}
