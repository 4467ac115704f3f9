/**
 * Health and lag of every runner model ({@link projectStatus}): the state store's integrity is
 * verified first (a corrupt store is `STATE_CORRUPT_*`, exit 3, never hidden behind healthy
 * runners), then each model is observed read-only: its container (name, generation, and why it stopped), consumer group
 * and the lag of the committed offsets behind the input's latest offsets.
 *
 * A model is healthy when exactly one container of it runs the plan its label names, with the
 * expected environment and execution settings, reports RUNNING, and its group has exactly one
 * member.
 *
 * @example
 * ```ts
 * import { projectStatus } from "./status.ts";
 * // online: reads Docker and Kafka
 * async function report(dir: string): Promise<void> {
 *   const s = await projectStatus({ dir });
 *   for (const m of s.models) console.log(m.model, m.healthy, m.lag);
 * }
 * console.log(typeof report);
 * ```
 * @module
 */
import { resolve } from "node:path";
import { SluiceError } from "../errors.ts";
import { applicationId } from "../artifact/application_id.ts";
import { loadProject } from "../project/load.ts";
import { openStateStore } from "../state/open.ts";
import type { StoreIdentity } from "../state/journal.ts";
import type { IntegrityReport } from "../state/store.ts";
import type { HistoryEvent } from "../state/history.ts";
import { type RunnerDrift, runnerDrift } from "../validation/drift.ts";
import type { RunnerObservation } from "../validation/observation.ts";
import { notTheSetReady, unownedPartitions } from "../validation/group_member.ts";
import { runnerStopOf, type RunnerStopReport } from "../validation/runner_stop.ts";
import { SYSTEM_CLOCK } from "./deps.ts";
import { observeSession, openSession, type SessionOptions } from "./session.ts";
import { projectStoreConfig } from "./state_store.ts";
import { type EndpointStatus, endpointStatuses } from "./endpoint_status.ts";
import {
  type InstancesReading,
  type InstanceStatus,
  projectSets,
  setProblem,
  type UnplacedContainer,
} from "./instances_status.ts";

/** The status of a project: the verified state store and one row per runner model. */
export interface ProjectStatus {
  /**
   * The state store, verified byte by byte.
   * @internal the state store's integrity evidence; its shape is not part of the versioned SDK
   */
  state: {
    ok: true;
    store: StoreIdentity | null;
    revision: string | null;
    /** The pending operation, if any (the runbook says how to continue or abandon it). */
    pending: IntegrityReport["pending"];
  };
  /** One row per runner model. */
  models: Array<{
    /** The model's name (as `sluice.yaml` declares it; `sluice logs MODEL` takes it). */
    model: string;
    /** The model's application ID (container label, volume name, consumer group ID). */
    application_id: string;
    /**
     * The pending operation whose candidate this model's container is (a container of the pending
     * operation is its candidate, not a foreign generation), or null.
     */
    candidate_of: string | null;
    /** How many containers carry the application ID. */
    containers: number;
    /** The container's status, `absent` without one, `several` with more than one. */
    state: string;
    /**
     * The container's name, when there is exactly one (after a replacement it is the candidate's
     * name, not `sluice-<app>`: `sluice logs MODEL` finds it whatever its name).
     */
    container: string | null;
    /** The generation label (`<operation>/<action>`), when there is exactly one container. */
    generation: string | null;
    /**
     * Why the one container is stopped, when it is: the runner's own reason (for a decode failure
     * the model, partition, offset, rule and the record's sizes and field names, never a value),
     * else what its exit code means in the shared exit table. Null while it runs.
     */
    stop: RunnerStopReport | null;
    /**
     * A change made to the runner outside sluice that no `acknowledge-drift` accepted
     * (`lib/validation/drift.ts`: started again by hand after a stop no restart recorded, or
     * committed offsets moved while it was stopped, per partition before and after), or null. A
     * drifted runner is not healthy.
     */
    drift: RunnerDrift | null;
    /** The consumer group's state (Stable, Empty, Dead, ...). */
    group: string;
    /** Members of the group. */
    members: number;
    /**
     * The input partitions no member of the group is assigned (Kafka's last assignment), while it
     * has members: a job that is processing only part of its input. Null without members or
     * without the input topic.
     */
    unowned_partitions: number[] | null;
    /** Records the committed offsets are behind the input's latest offsets (decimal text). */
    lag: string;
    /** Exactly one running, healthy generation (see the module documentation). */
    healthy: boolean;
    /**
     * A model of several instances (`instances: N > 1`) only: each instance on its placed
     * endpoint (`lib/runtime/instances_status.ts`). The fields above then describe the set:
     * `containers` counts every instance's, `state` is `set`, `container` null, `generation`
     * the instances' one generation (null when they differ or none runs).
     */
    instances?: InstanceStatus[];
    /**
     * A set only: why it is not ready and healthy — an instance missing, stopped, on a daemon
     * that does not answer or with a container on another endpoint, a container of the
     * application that is no instance of the set, or the group not being exactly its N members
     * holding every input partition (`notTheSetReady`) — or null.
     */
    set_problem?: string | null;
    /**
     * A set only: the application's containers, on any endpoint, that are no instance of the set
     * (an unreadable `sluice.instance` label, or an index of N or more).
     */
    unplaced?: UnplacedContainer[];
  }>;
  /**
   * One row per `docker.endpoints` daemon (its ID, or why it did not answer), when the environment
   * names several (`lib/runtime/endpoint_status.ts`).
   */
  endpoints?: EndpointStatus[];
  /** One row per observed connector, when the project has any. */
  connectors?: Array<{
    /** The connector's exact name on its Connect cluster. */
    connector: string;
    /** The declared Connect cluster alias. */
    cluster: string;
    /** The connector's state (`RUNNING`, `PAUSED`, `FAILED`, ...), or `absent`. */
    state: string;
    /** Its tasks and their states. */
    tasks: Array<{ id: number; state: string }>;
    /** Running, with at least one task, every task running. */
    healthy: boolean;
  }>;
}

/**
 * Verify the state store, then observe every runner model (read-only).
 *
 * @example
 * ```ts
 * import { projectStatus } from "./status.ts";
 * // online: reads Docker and Kafka
 * async function allHealthy(dir: string): Promise<boolean> {
 *   const s = await projectStatus({ dir });
 *   return s.models.every((m) => m.healthy);
 * }
 * console.log(typeof allHealthy);
 * ```
 */
export async function projectStatus(options: SessionOptions = {}): Promise<ProjectStatus> {
  await using owned = new AsyncDisposableStack();
  let store = options.store;
  const project = await loadProject(resolve(options.dir ?? "."), {
    environment: options.environment ?? null,
    settings: options.settings,
  });
  // each observed application ID's model, named as the manifest declares it
  const m = project.manifest;
  const modelOf = new Map(
    project.models.map((x) => [applicationId(m.project, m.environment, x.name), x.name]),
  );
  if (!store) {
    const clock = options.clock ?? SYSTEM_CLOCK;
    const opened = openStateStore(projectStoreConfig(project), {
      clock: () => new Date(clock.now()),
    });
    owned.defer(() => opened.close());
    store = opened;
  }
  // read-only and without the lock: every stored byte verified before anything is observed
  const integrity = await store.verifyIntegrity();
  if (!integrity.ok) {
    const problem = integrity.problem!;
    throw new SluiceError(problem.code, `the state store is corrupt: ${problem.message}`, {
      evidence: problem.evidence,
    });
  }
  // one session's ports for everything read: each endpoint opened once by its name, for its row
  // and for the instances placed on it, each call bounded as every endpoint's read is (readAt)
  await using s = await openSession({ ...options, store });
  const [obs, endpoints, sets] = await Promise.all([
    observeSession(s),
    m.dockerEndpoints.length > 0 ? endpointStatuses(m, (_, name) => s.readAt(name)) : null,
    projectSets(project, s.readAt),
  ]);
  // the history, read-only (verified above): what sluice recorded of its own starts
  const history = (await store.load()).history.events;
  return {
    state: {
      ok: true,
      store: integrity.identity,
      revision: integrity.revision,
      pending: integrity.pending,
    },
    models: obs.runners.map((r) =>
      modelStatus(
        r,
        modelOf.get(r.target.applicationId) ?? r.target.applicationId,
        integrity.pending?.operation_id ?? null,
        history,
        sets.get(r.target.applicationId),
      )
    ),
    ...(endpoints ? { endpoints } : {}),
    ...(obs.connectors
      ? {
        connectors: obs.connectors.connectors.map((c) => ({
          connector: c.name,
          cluster: c.cluster,
          state: c.status?.state ?? "absent",
          tasks: (c.status?.tasks ?? []).map((t) => ({ id: t.id, state: t.state })),
          healthy: c.status?.state === "RUNNING" && c.status.tasks.length > 0 &&
            c.status.tasks.every((t) => t.state === "RUNNING"),
        })),
      }
      : {}),
  };
}

/**
 * One model's row (pure: from its observation, the model's name and the pending operation's ID,
 * if any).
 */
export function modelStatus(
  r: RunnerObservation,
  model: string,
  pendingId: string | null = null,
  history: readonly HistoryEvent[] = [],
  set?: InstancesReading,
): ModelStatus {
  if (set) return setStatus(r, model, set, pendingId);
  const c = r.containers;
  const lag = lagOf(r);
  const healthy = c.length === 1 && c[0].running && c[0].plan.matchesLabel &&
    c[0].environment.ok && c[0].execution.ok && c[0].runnerStatus?.state === "RUNNING" &&
    r.kafka.group.members.length === 1;
  const candidate = c.find((x) => pendingId !== null && x.labels.operationId === pendingId);
  const drift = c.length === 1
    ? runnerDrift(c[0], history, { topic: r.target.inputTopic, committed: r.kafka.committed })
    : null;
  return {
    model,
    application_id: r.target.applicationId,
    candidate_of: candidate ? pendingId : null,
    containers: c.length,
    state: c.length === 1 ? c[0].status : c.length === 0 ? "absent" : "several",
    container: c.length === 1 ? c[0].name : null,
    generation: c.length === 1 ? c[0].labels.generation : null,
    stop: c.length === 1 ? runnerStopOf(c[0]) : null,
    drift,
    group: r.kafka.group.state,
    members: r.kafka.group.members.length,
    unowned_partitions: unownedPartitions(r.kafka.group.members, r.kafka.input),
    lag: lag.toString(),
    healthy: healthy && drift === null,
  };
}

/** A set's row: its instances, its group and its lag. */
function setStatus(
  r: RunnerObservation,
  model: string,
  set: InstancesReading,
  pendingId: string | null,
): ModelStatus {
  const { rows, statuses, unplaced } = set;
  const generations = [...new Set(rows.map((x) => x.generation).filter((g) => g !== null))];
  const generation = generations.length === 1 ? generations[0] : null;
  const members = r.kafka.group.members;
  const problem = setProblem(
    rows,
    generation === null
      ? "no generation runs"
      : notTheSetReady(members, statuses, generation, r.kafka.input),
    unplaced,
  );
  const candidate = r.containers.some((x) =>
    pendingId !== null && x.labels.operationId === pendingId
  );
  return {
    model,
    application_id: r.target.applicationId,
    candidate_of: candidate ? pendingId : null,
    containers: rows.reduce((n, x) => n + x.containers, 0),
    state: "set",
    container: null,
    generation,
    stop: null,
    drift: null,
    group: r.kafka.group.state,
    members: members.length,
    unowned_partitions: unownedPartitions(members, r.kafka.input),
    lag: lagOf(r).toString(),
    healthy: problem === null,
    instances: rows,
    set_problem: problem,
    unplaced,
  };
}

/** Records the committed offsets are behind the input's latest offsets. */
function lagOf(r: RunnerObservation): bigint {
  return r.kafka.ranges.reduce((sum, p) => {
    const committed = r.kafka.committed[String(p.partition)];
    return sum + (committed === undefined ? 0n : BigInt(p.latest) - BigInt(committed));
  }, 0n);
}

/** The health and lag of one runner model. */
export type ModelStatus = ProjectStatus["models"][number];

/** The health of one managed connector (from exact REST reads). */
export type ConnectorStatusRow = NonNullable<ProjectStatus["connectors"]>[number];
