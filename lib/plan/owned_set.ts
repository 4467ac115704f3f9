/**
 * An owned set (an owned runner with `instances`, issue 31) as a plan reads it: each instance
 * observed on its own endpoint and checked as an owned runner is ({@link verifyOwnedSet}: its
 * exact generation and volume, the group holding at most the set's N members), and what a plan
 * of a declared owned set may be ({@link ownedSetBlockers}): a verified no-op when nothing
 * changed, else blocked — replacing a set's predicate, changing its number of instances and
 * moving an instance are not built yet. Pure: nothing here performs I/O.
 *
 * @example
 * ```ts
 * import { ownedSetBlockers } from "./owned_set.ts";
 * // const blockers = ownedSetBlockers({ owned, sha256, instances, placement, read, ownedTopics });
 * // blockers.length === 0: the owned set is exactly as declared, nothing to do
 * ```
 * @module
 */
import type { OwnedRunner, OwnedTopic } from "../state/ownership.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";
import type { ContainerEvidence, RunnerObservation } from "../validation/observation.ts";
import { verifyOwnedRunner } from "../validation/runner_checks.ts";
import type { Placement } from "../project/placement.ts";
import { setPlacement } from "./instances.ts";

/** Each instance of an owned set, bound: its observation and its one container. */
export type BoundSet = Array<{ obs: RunnerObservation; c: ContainerEvidence }>;

/**
 * Each instance of the owned set `owned` read on its endpoint (`read`, in index order; null for
 * an instance whose daemon did not answer; empty when instance 0's runner or its mounted plan is
 * gone, so nothing says what the set runs) and checked as an owned runner is, with the group
 * allowed the set's N members. `why` ends the messages: what the plan needs every instance for.
 */
export function verifyOwnedSet(
  owned: OwnedRunner,
  read: readonly (RunnerObservation | null)[] | undefined,
  ownedTopics: OwnedTopic[],
  why: string,
): { bound: BoundSet } | { blockers: Blocker[] } {
  const instances = owned.instances!;
  const model = owned.model;
  if (!read || read.length === 0) {
    return {
      blockers: [blocker(
        "BLOCKED_RUNNER_MISSING",
        `model ${model}: instance 0's container ${
          instances[0].container_name
        } is gone or its mounted plan cannot be read, so nothing says what the set runs: ${why}`,
        { model },
      )],
    };
  }
  const blockers: Blocker[] = [];
  const bound: BoundSet = [];
  for (const i of instances) {
    const obs = read[i.instance] ?? null;
    if (!obs) {
      blockers.push(blocker(
        "BLOCKED_ENDPOINT_UNREACHABLE",
        `model ${model}: instance ${i.instance} on ${
          i.endpoint ?? "the one daemon"
        } could not be read (its daemon did not answer): ${why}`,
        { model, evidence: { endpoint: i.endpoint, instances: [i.instance] } },
      ));
      continue;
    }
    const checked = verifyOwnedRunner(
      obs,
      { ...owned, container_name: i.container_name, volume: i.volume },
      ownedTopics,
      { members: instances.length },
    );
    if (checked.blockers.length > 0 || !checked.container) {
      blockers.push(
        ...checked.blockers.map((b) => ({ ...b, message: `instance ${i.instance}: ${b.message}` })),
      );
      continue;
    }
    bound.push({ obs, c: checked.container });
  }
  return blockers.length > 0 ? { blockers } : { bound };
}

/** What {@link ownedSetBlockers} reads: the owned set, the declaration and the fresh reads. */
export interface OwnedSetInput {
  /** The owned runner (with `instances`). */
  owned: OwnedRunner;
  /** The desired artifact's checksum. */
  sha256: string;
  /** The declared number of instances. */
  instances: number;
  /** The environment's placement. */
  placement: Placement;
  /** Each instance observed on its endpoint (see {@link verifyOwnedSet}); absent offline. */
  read: readonly (RunnerObservation | null)[] | undefined;
  /** The topics the project owns. */
  ownedTopics: OwnedTopic[];
  /** Whether the plan is online (offline, ownership alone decides). */
  online: boolean;
}

/**
 * The blockers of a plan of a declared owned set; none when it is exactly as declared and
 * verified on every endpoint (a no-op). A changed instance count or placement, or a changed
 * artifact, is `BLOCKED_INSTANCES_UNSUPPORTED`: those journeys are not built yet, and a blocked
 * plan mutates nothing.
 */
export function ownedSetBlockers(input: OwnedSetInput): Blocker[] {
  const { owned, instances, placement } = input;
  const model = owned.model;
  const have = owned.instances!;
  const want = setPlacement(instances, placement) ?? [{ instance: 0, endpoint: null }];
  const where = (xs: ReadonlyArray<{ instance: number; endpoint: string | null }>) =>
    xs.map((x) => `${x.instance} on ${x.endpoint ?? "the one daemon"}`).join(", ");
  if (want.length !== have.length || want.some((p, n) => p.endpoint !== have[n].endpoint)) {
    return [blocker(
      "BLOCKED_INSTANCES_UNSUPPORTED",
      `model ${model} is owned as a set of ${have.length} instances (${
        where(have)
      }) and declared as ${want.length} (${
        where(want)
      }): changing a set's number of instances or moving an instance is not built yet; declare it as owned to plan this model`,
      {
        model,
        evidence: {
          owned: have.map((i) => ({ instance: i.instance, endpoint: i.endpoint })),
          declared: want,
        },
      },
    )];
  }
  if (!input.online) {
    return owned.artifact_sha256 === input.sha256 ? [] : [blocker(
      "BLOCKED_OFFLINE_REPLACEMENT",
      `model ${model} changed; a replacement is planned only online (format 6 binds observed evidence)`,
      { model },
    )];
  }
  const verified = verifyOwnedSet(
    owned,
    input.read,
    input.ownedTopics,
    "a set is planned only with every instance's exact generation read",
  );
  if ("blockers" in verified) return verified.blockers;
  if (owned.artifact_sha256 === input.sha256) return [];
  return [blocker(
    "BLOCKED_INSTANCES_UNSUPPORTED",
    `model ${model} changed, and it is owned as a set of ${have.length} instances (${
      where(have)
    }): replacing a set's predicate is not built yet; apply never replaces fewer runners than the set`,
    { model, evidence: { instances: have.length, artifact_sha256: owned.artifact_sha256 } },
  )];
}
