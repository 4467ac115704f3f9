/**
 * Where each instance of a model run as a set (`instances: N > 1`) is, as `status` reads it: for
 * each instance, its placed endpoint's daemon is asked for the application's containers, and the
 * ones whose `sluice.instance` label names that instance are its own — so a set's status says
 * which instances run, which are missing, and which are on a daemon that does not answer (each
 * endpoint read bounded, as `status` reads endpoints). Read-only.
 *
 * No journey creates a set yet (issue 31): until one does, a set's instances read as absent.
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
import type { InstancePlacement } from "../project/placement.ts";
import type { ContainerInfo, DockerPort } from "../providers/docker/port.ts";
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
  /** Why the endpoint did not answer (the error's stable code and message), or null. */
  problem: { code: string; message: string } | null;
}

/** Each instance's row, and its one container's parsed status file (null otherwise). */
export interface InstancesReading {
  rows: InstanceStatus[];
  statuses: Array<Record<string, unknown> | null>;
}

/**
 * Read every instance of `applicationId` placed as `placed`, each endpoint's daemon once through
 * `dockerAt(endpoint)`.
 */
export async function instanceStatuses(
  applicationId: string,
  placed: readonly InstancePlacement[],
  dockerAt: (endpoint: string | null) => Promise<DockerPort>,
): Promise<InstancesReading> {
  type Read =
    | { docker: DockerPort; containers: ContainerInfo[] }
    | { problem: { code: string; message: string } };
  const endpoints = [...new Set(placed.map((p) => p.endpoint))];
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
    const row: InstanceStatus = {
      instance: p.instance,
      endpoint: p.endpoint,
      reachable: true,
      containers: mine.length,
      state: one ? one.state.status : mine.length === 0 ? "absent" : "several",
      container: one?.name ?? null,
      generation: one?.labels[LABEL.generation] ?? null,
      runner: typeof status?.state === "string" ? status.state : null,
      problem: null,
    };
    return { row, status };
  }));
  return { rows: out.map((o) => o.row), statuses: out.map((o) => o.status) };
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
 * missing, is not one running container with its runner RUNNING, instances of different
 * generations — then the group rule for a set (`notTheSetReady`), given as `groupProblem`.
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
): string | null {
  const where = (r: InstanceStatus) => `instance ${r.instance} on ${r.endpoint ?? "the daemon"}`;
  for (const r of rows) {
    if (!r.reachable) return `${where(r)}: its daemon does not answer (${r.problem?.code})`;
    if (r.containers === 0) return `${where(r)}: no container`;
    if (r.containers > 1) return `${where(r)}: ${r.containers} containers`;
    if (r.state !== "running") return `${where(r)}: ${r.state}`;
    if (r.runner !== "RUNNING") return `${where(r)}: its runner is ${r.runner ?? "not reporting"}`;
  }
  const generations = [...new Set(rows.map((r) => r.generation))];
  if (generations.length > 1) return `the instances run ${generations.length} generations`;
  return groupProblem;
}
