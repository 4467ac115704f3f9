/**
 * Which of an environment's Docker endpoints answer (docs/project-format.md, "Instances"):
 * `status` reads each of `docker.endpoints` read-only — its daemon's ID, or why it did not answer —
 * so an operator sees a daemon that is down, refuses TLS or hangs before a journey needs it. Each
 * read is bounded ({@link ENDPOINT_READ_BOUND_MS}, the port's call bound): a daemon that accepts and
 * never answers is reported, never waited on. A project without `docker.endpoints` has no rows.
 *
 * @example
 * ```ts
 * import { endpointStatuses } from "./endpoint_status.ts";
 * // const rows = await endpointStatuses(project.manifest);
 * // for (const e of rows) console.log(e.name, e.reachable, e.daemon_id ?? e.problem?.code);
 * console.log(typeof endpointStatuses);
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { Manifest } from "../project/manifest.ts";
import type { DockerPort } from "../providers/docker/port.ts";
import { endpointDocker, type EndpointPortOptions } from "../providers/docker/endpoint.ts";

/** How long one endpoint may take to say its daemon's ID. */
export const ENDPOINT_READ_BOUND_MS = 10_000;

/** One endpoint as `status` reports it. */
export interface EndpointStatus {
  /** Its name under `docker.endpoints`. */
  name: string;
  /** Its address as `sluice.yaml` writes it (never with credentials: those are refused). */
  endpoint: string;
  /** Its daemon answered with its ID. */
  reachable: boolean;
  /** The daemon's ID, when it answered. */
  daemon_id: string | null;
  /** Why it did not answer (the error's stable code and message), or null. */
  problem: { code: string; message: string } | null;
}

/** Opens an endpoint's port, each call bounded to `callBoundMs`. */
export type OpenEndpoint = (
  manifest: Manifest,
  name: string,
  options: EndpointPortOptions,
) => Promise<DockerPort>;

/**
 * Read every `docker.endpoints` daemon's ID at once, each within `boundMs` (the port's own call
 * bound); `open` makes an endpoint's port (the real one by default).
 */
export async function endpointStatuses(
  manifest: Manifest,
  open: OpenEndpoint = endpointDocker,
  boundMs = ENDPOINT_READ_BOUND_MS,
): Promise<EndpointStatus[]> {
  return await Promise.all(manifest.dockerEndpoints.map(async (e) => {
    const row = { name: e.name, endpoint: e.endpoint };
    try {
      const id = await (await open(manifest, e.name, { callBoundMs: boundMs })).daemonId();
      return { ...row, reachable: true, daemon_id: id, problem: null };
    } catch (error) {
      const problem = error instanceof SluiceError
        ? { code: error.code, message: error.message }
        : { code: "ENV_DOCKER_UNREACHABLE", message: String(error) };
      return { ...row, reachable: false, daemon_id: null, problem };
    }
  }));
}
