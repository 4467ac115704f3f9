/**
 * Where each instance of a model run as a set (`instances: N > 1`) is, as `status` reads it: every
 * endpoint of the environment is asked once for the application's containers, and on each
 * instance's placed endpoint the ones whose `sluice.instance` label names that instance are its
 * own — so a set's status says which instances run, which are missing or stopped (and why, as
 * the runner's stop is reported), which are on a daemon that does not answer, which have a
 * container on another endpoint than their placed one, and which of the application's containers
 * name no instance of the set at all (each endpoint read bounded, as `status` reads endpoints).
 * Read-only.
 *
 * No plan offers a set to a user yet (issue 31, `setsOpen`): until one does, a set's instances
 * read as absent.
 *
 * @example
 * ```ts
 * import { instanceStatuses } from "./instances_status.ts";
 * // const { rows } = await instanceStatuses(appId, placed, (endpoint) => portOf(endpoint));
 * // rows.map((r) => `${r.instance}@${r.endpoint}: ${r.state}`)
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { applicationId } from "../artifact/application_id.ts";
import type { Project } from "../project/load.ts";
import { type InstancePlacement, placeInstances } from "../project/placement.ts";
import type { DockerAt } from "./endpoint_ports.ts";
import { type ContainerInfo, type DockerPort, dockerTimeSet } from "../providers/docker/port.ts";
import { runnerStopOf, type RunnerStopReport } from "../validation/runner_stop.ts";
import { instanceOfLabels, LABEL, RUNNER_PATHS } from "./labels.ts";
import { runnerStatusOf } from "./observer.ts";

/** One instance of a set as `status` reports it. */
export interface InstanceStatus {
  /** Its index (0 to N-1). */
  instance: number;
  /** The `docker.endpoints` name it is placed on; null for the environment's one daemon. */
  endpoint: string | null;
  /** Its endpoint's daemon answered. */
  reachable: boolean;
  /** How many of the application's containers carry this instance's label there. */
  containers: number;
  /** The container's status, `absent` without one, `several` with more, `unknown` unreachable. */
  state: string;
  /** The container's name, when there is exactly one. */
  container: string | null;
  /** Its generation label, when there is exactly one. */
  generation: string | null;
  /** The runner's own state from its status file (`RUNNING`, ...), when there is one. */
  runner: string | null;
  /**
   * Why its one container stopped, when it ran and stopped (its exit status, an OOM kill, the
   * runner's own report: as a single runner's `stop`); null otherwise.
   */
  stop: RunnerStopReport | null;
  /**
   * The application's containers labelled as this instance on another endpoint than its placed
   * one (moved or made by hand): never counted as the instance, always reported.
   */
  elsewhere: Array<{ endpoint: string | null; container: string }>;
  /** Why the endpoint did not answer (the error's stable code and message), or null. */
  problem: { code: string; message: string } | null;
}

/** Each instance's row, and its one container's parsed status file (null otherwise). */
export interface InstancesReading {
  rows: InstanceStatus[];
  statuses: Array<Record<string, unknown> | null>;
  /**
   * The application's containers, on any endpoint read, whose `sluice.instance` label names no
   * instance of the set: not a number sluice writes, or an index of N or more (left by a larger
   * set). Its raw label is not echoed (it may be anything): only whether it is unreadable.
   */
  unplaced: UnplacedContainer[];
}

/** A container of the application that is no instance of the set (see {@link InstancesReading}). */
export interface UnplacedContainer {
  /** The `docker.endpoints` name it was found on; null for the environment's one daemon. */
  endpoint: string | null;
  /** Its name. */
  container: string;
  /** The index its label names, or null when the label is not one sluice writes. */
  instance: number | null;
}

/**
 * Every set of `project` (each model of `instances: N > 1`) read by {@link instanceStatuses} on
 * its placed endpoints and, unless `placedOnly` (a reader that needs only the instances' own
 * rows), every other endpoint of the environment, by application ID; empty when no model is a
 * set (nothing is read).
 */
export async function projectSets(
  project: Project,
  dockerAt: DockerAt,
  options: { placedOnly?: boolean } = {},
): Promise<Map<string, InstancesReading>> {
  const m = project.manifest;
  const others = options.placedOnly ? [] : m.dockerEndpoints.map((e) => e.name);
  return new Map(
    await Promise.all(
      project.models.filter((x) => x.decl.instances > 1).map(async (x) => {
        const id = applicationId(m.project, m.environment, x.name);
        const placed = placeInstances(x.decl.instances, m.placement) ?? [];
        return [id, await instanceStatuses(id, placed, dockerAt, others)] as const;
      }),
    ),
  );
}

/**
 * Read every instance of `applicationId` placed as `placed`, each endpoint's daemon once through
 * `dockerAt(endpoint)`: the placed endpoints and `others` (the environment's other endpoints,
 * where an instance's container may have been moved).
 */
export async function instanceStatuses(
  applicationId: string,
  placed: readonly InstancePlacement[],
  dockerAt: DockerAt,
  others: readonly (string | null)[] = [],
): Promise<InstancesReading> {
  type Read =
    | { docker: DockerPort; containers: ContainerInfo[] }
    | { problem: { code: string; message: string } };
  const endpoints = [...new Set([...placed.map((p) => p.endpoint), ...others])];
  const read = new Map<string | null, Read>(
    await Promise.all(endpoints.map(async (endpoint): Promise<[string | null, Read]> => {
      try {
        const docker = await dockerAt(endpoint);
        const containers = await docker.listContainers(LABEL.applicationId, applicationId);
        return [endpoint, { docker, containers }];
      } catch (error) {
        return [endpoint, { problem: problemOf(error) }];
      }
    })),
  );
  const out = await Promise.all(placed.map(async (p) => {
    const at = read.get(p.endpoint)!;
    if ("problem" in at) {
      return {
        row: unknownRow(p, at.problem),
        status: null,
      };
    }
    const mine = at.containers.filter((c) => instanceOfLabels(c.labels) === p.instance);
    const one = mine.length === 1 ? mine[0] : null;
    const status = one ? await statusFile(at.docker, one) : null;
    const elsewhere = [...read].flatMap(([endpoint, r]) =>
      endpoint === p.endpoint || "problem" in r ? [] : r.containers
        .filter((c) => instanceOfLabels(c.labels) === p.instance)
        .map((c) => ({ endpoint, container: c.name }))
    );
    const row: InstanceStatus = {
      instance: p.instance,
      endpoint: p.endpoint,
      reachable: true,
      containers: mine.length,
      state: one ? one.state.status : mine.length === 0 ? "absent" : "several",
      container: one?.name ?? null,
      generation: one?.labels[LABEL.generation] ?? null,
      runner: typeof status?.state === "string" ? status.state : null,
      stop: one ? stopOf(one, status) : null,
      elsewhere,
      problem: null,
    };
    return { row, status };
  }));
  const unplaced = [...read].flatMap(([endpoint, r]) =>
    "problem" in r ? [] : r.containers.flatMap((c) => {
      const instance = instanceOfLabels(c.labels);
      return instance === null || instance >= placed.length
        ? [{ endpoint, container: c.name, instance }]
        : [];
    })
  );
  return { rows: out.map((o) => o.row), statuses: out.map((o) => o.status), unplaced };
}

/** A container's stop as a single runner's is reported (null while running or never started). */
function stopOf(c: ContainerInfo, status: Record<string, unknown> | null): RunnerStopReport | null {
  return runnerStopOf({
    running: c.state.running,
    everStarted: c.state.running || dockerTimeSet(c.state.startedAt),
    exitCode: c.state.exitCode,
    oomKilled: c.state.oomKilled,
    runnerStatus: status,
  });
}

function unknownRow(
  p: InstancePlacement,
  problem: { code: string; message: string },
): InstanceStatus {
  return {
    instance: p.instance,
    endpoint: p.endpoint,
    reachable: false,
    containers: 0,
    state: "unknown",
    container: null,
    generation: null,
    runner: null,
    stop: null,
    elsewhere: [],
    problem,
  };
}

function problemOf(error: unknown): { code: string; message: string } {
  return error instanceof SluiceError
    ? { code: error.code, message: error.message }
    : { code: "ENV_DOCKER_UNREACHABLE", message: String(error) };
}

/** The runner's status file of a container, as the observer reads it; null when unreadable. */
async function statusFile(
  docker: DockerPort,
  c: ContainerInfo,
): Promise<Record<string, unknown> | null> {
  try {
    return runnerStatusOf(await docker.readContainerFile(c.id, RUNNER_PATHS.statusFile));
  } catch {
    return null;
  }
}

/**
 * Why the set is not ready and healthy (null when it is): an instance that does not answer, is
 * missing, is not one running container with its runner RUNNING (a stopped one says why), has a
 * container on another endpoint, a container of the application that is no instance of the set,
 * instances of different generations — then the group rule for a set (`notTheSetReady`), given
 * as `groupProblem`.
 *
 * @example
 * ```ts
 * import { setProblem } from "./instances_status.ts";
 * setProblem([], null); // null
 * ```
 */
export function setProblem(
  rows: readonly InstanceStatus[],
  groupProblem: string | null,
  unplaced: readonly UnplacedContainer[] = [],
): string | null {
  const on = (endpoint: string | null) => endpoint ?? "the daemon";
  const where = (r: InstanceStatus) => `instance ${r.instance} on ${on(r.endpoint)}`;
  for (const r of rows) {
    if (!r.reachable) return `${where(r)}: its daemon does not answer (${r.problem?.code})`;
    const moved = r.elsewhere[0];
    if (moved) {
      return `${where(r)}: a container of it is on ${on(moved.endpoint)} (${moved.container}), ` +
        "not its placed endpoint";
    }
    if (r.containers === 0) return `${where(r)}: no container`;
    if (r.containers > 1) return `${where(r)}: ${r.containers} containers`;
    if (r.stop) return `${where(r)}: ${r.state}, ${r.stop.summary}`;
    if (r.state !== "running") return `${where(r)}: ${r.state}`;
    if (r.runner !== "RUNNING") return `${where(r)}: its runner is ${r.runner ?? "not reporting"}`;
  }
  const stranger = unplaced[0];
  if (stranger) {
    return `${stranger.container} on ${on(stranger.endpoint)} is a container of the application ` +
      (stranger.instance === null
        ? "whose sluice.instance label is not one sluice writes"
        : `labelled instance ${stranger.instance}, beyond the set's ${rows.length}`);
  }
  const generations = [...new Set(rows.map((r) => r.generation))];
  if (generations.length > 1) return `the instances run ${generations.length} generations`;
  return groupProblem;
}
