/**
 * A Docker port for a daemon named in code (`settings.docker.endpoint` of a project handle)
 * rather than by `$DOCKER_HOST`: `unix:///path`, `tcp://host:port` (plain HTTP, as the Docker
 * CLI treats it without TLS variables), `http://host:port` or `https://host:port`. An
 * unreachable daemon's error names the setting.
 *
 * @example
 * ```ts
 * import { dockerAtEndpoint } from "./endpoint.ts";
 * // const docker = await dockerAtEndpoint("unix:///var/run/docker.sock", "settings.docker.endpoint");
 * ```
 * @module
 */
import type { DockerPort } from "./port.ts";
import type { Manifest } from "../../project/manifest.ts";
import { realDocker } from "../real.ts";
import { dockerTlsOptions, resolveDockerTls } from "./tls.ts";
import { SluiceError, type SourceLocation } from "../../errors.ts";
import type { DockerSettings } from "../../project/docker_security.ts";

/** The setting a Docker endpoint given in code is named by. */
export const DOCKER_ENDPOINT_SETTING = "settings.docker.endpoint";
/** The setting the TLS of a Docker endpoint given in code is named by. */
export const DOCKER_TLS_SETTING = "settings.docker.tls";

/**
 * The Docker daemon a loaded manifest's project uses: the endpoint its settings override names,
 * else the one its environment's `docker:` names (with TLS when `docker.tls` is given), else
 * the Docker CLI's variables (`$DOCKER_HOST`, with TLS when `DOCKER_TLS_VERIFY` is set) or the
 * default socket.
 */
export async function projectDocker(manifest: Manifest): Promise<DockerPort> {
  const endpoint = manifest.override?.dockerEndpoint ?? null;
  if (endpoint !== null) {
    const tls = manifest.override?.dockerTls ?? null;
    const pem = tls === null ? null : await resolveDockerTls(tls, DOCKER_TLS_SETTING);
    return await dockerAtEndpoint(endpoint, DOCKER_ENDPOINT_SETTING, pem);
  }
  const docker = manifest.docker ?? null;
  if (docker === null) return await realDocker();
  return await dockerOfSettings(docker);
}

/** How a port made from an address is reached. */
export interface EndpointPortOptions {
  /** How long one call may go unanswered (default: `DOCKER_CALL_BOUND_MS`, dockerode.ts). */
  callBoundMs?: number;
}

/**
 * The Docker daemon of one of the environment's `docker.endpoints`, by name
 * (docs/project-format.md, "Instances"); its errors name `docker.endpoints.NAME.*`.
 */
export async function endpointDocker(
  manifest: Manifest,
  name: string,
  options: EndpointPortOptions = {},
): Promise<DockerPort> {
  const endpoint = manifest.dockerEndpoints.find((e) => e.name === name);
  if (endpoint === undefined) {
    throw new SluiceError("INTERNAL", `no Docker endpoint named ${name} in this environment`);
  }
  return await dockerOfSettings(endpoint, options);
}

/** A port for a daemon as `sluice.yaml` names it, TLS files read from the variables it names. */
async function dockerOfSettings(
  docker: DockerSettings,
  options: EndpointPortOptions = {},
): Promise<DockerPort> {
  const where = docker.endpointAt.setting.replace(/\.endpoint$/, "");
  const pem = docker.tls === null ? null : await resolveDockerTls(docker.tls, `${where}.tls`);
  return await dockerAtEndpoint(
    docker.endpoint,
    docker.endpointAt.setting,
    pem,
    docker.endpointAt.location,
    options,
  );
}

/**
 * A {@link DockerPort} for the daemon at `endpoint`, its origin named `setting` in errors; with
 * `tls` (PEM: the CA, the client certificate and key), a `tcp://` or `https://` endpoint is
 * reached over TLS, the daemon's certificate checked against that CA and the endpoint's host.
 */
export async function dockerAtEndpoint(
  endpoint: string,
  setting: string,
  tls: { ca: string; cert: string; key: string } | null = null,
  location?: SourceLocation,
  options: EndpointPortOptions = {},
): Promise<DockerPort> {
  const origin = { setting, ...(location ? { location } : {}) };
  const portOptions = { origin, ...options };
  const [{ default: Docker }, { dockerodePort }] = await Promise.all([
    import("npm:dockerode@5.0.1"),
    import("./dockerode.ts"),
  ]);
  const url = new URL(endpoint);
  const secured = tls === null ? null : dockerTlsOptions(endpoint, tls);
  if (secured !== null) return dockerodePort(new Docker(secured), portOptions);
  const client = url.protocol === "unix:"
    ? new Docker({ socketPath: decodeURIComponent(url.pathname) })
    : new Docker({
      host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port || (url.protocol === "https:" ? "2376" : "2375"),
      protocol: url.protocol === "https:" ? "https" : "http",
    });
  return dockerodePort(client, portOptions);
}
