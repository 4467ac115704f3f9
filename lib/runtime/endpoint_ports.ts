/**
 * The Docker port of each daemon a project reaches, by the name its environment's
 * `docker.endpoints` gives it (docs/project-format.md, "Instances"), each opened once and only
 * when first asked for: null is the environment's one daemon (the session's port, the one a model
 * of one instance runs on), a name is opened on its own settings (`endpointDocker`, its errors
 * naming `docker.endpoints.NAME.*`) or given by a test (`RuntimeDeps.dockerEndpoint`).
 *
 * A session has two openers: `Session.dockerAt`, through which the set journeys act (a set's
 * create makes each instance through it), and
 * `Session.readAt`, each call bounded as `status` bounds an endpoint's read, through which plans
 * and `status` read a set's instances and `status` each endpoint's daemon.
 *
 * @example
 * ```ts
 * import { endpointPorts } from "./endpoint_ports.ts";
 * // const dockerAt = endpointPorts(manifest, () => Promise.resolve(docker));
 * // const west = await dockerAt("west");
 * ```
 * @module
 */
import type { Manifest } from "../project/manifest.ts";
import { endpointDocker } from "../providers/docker/endpoint.ts";
import type { DockerPort } from "../providers/docker/port.ts";

/** The Docker port of an endpoint by name; null for the environment's one daemon. */
export type DockerAt = (endpoint: string | null) => Promise<DockerPort>;

/** How {@link endpointPorts} opens a named endpoint. */
export interface EndpointPortsOptions {
  /** A test's port for a named endpoint (`RuntimeDeps.dockerEndpoint`); the real adapter else. */
  dockerEndpoint?: (name: string) => DockerPort;
  /** How long one call to a named endpoint may go unanswered (default: the adapter's bound). */
  callBoundMs?: number;
  /** Applied to every named endpoint's port as it is opened (e.g. the runner principal). */
  wrap?: (port: DockerPort) => DockerPort;
}

/** An opener of `manifest`'s endpoints; `main` gives the environment's one daemon. */
export function endpointPorts(
  manifest: Manifest,
  main: () => Promise<DockerPort>,
  options: EndpointPortsOptions = {},
): DockerAt {
  const opened = new Map<string | null, Promise<DockerPort>>();
  const open = async (endpoint: string | null): Promise<DockerPort> => {
    if (endpoint === null) return await main();
    const port = options.dockerEndpoint?.(endpoint) ??
      await endpointDocker(
        manifest,
        endpoint,
        options.callBoundMs === undefined ? {} : { callBoundMs: options.callBoundMs },
      );
    return options.wrap ? options.wrap(port) : port;
  };
  return (endpoint) => {
    if (!opened.has(endpoint)) opened.set(endpoint, open(endpoint));
    return opened.get(endpoint)!;
  };
}

/**
 * The Docker port of `endpoint` from a context that may reach several: the environment's one
 * daemon (`docker`) for null or absent, else its `dockerAt` (a context without it reaches no
 * named endpoint: a programming error).
 *
 * @example
 * ```ts
 * import { dockerOf } from "./endpoint_ports.ts";
 * // const docker = await dockerOf(ctx, identity.endpoint);
 * ```
 */
export async function dockerOf(
  ctx: { docker: DockerPort; dockerAt?: DockerAt },
  endpoint: string | null | undefined,
): Promise<DockerPort> {
  if (endpoint === null || endpoint === undefined) return ctx.docker;
  if (!ctx.dockerAt) {
    throw new Error(`endpoint ${endpoint} asked for without the session's endpoint ports`);
  }
  return await ctx.dockerAt(endpoint);
}
