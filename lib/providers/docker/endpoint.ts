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
import { dockerTlsOptions } from "./tls.ts";

/** The setting a Docker endpoint given in code is named by. */
export const DOCKER_ENDPOINT_SETTING = "settings.docker.endpoint";

/**
 * The Docker daemon a loaded manifest's project uses: the endpoint its settings override names,
 * else the one dockerode finds (`$DOCKER_HOST` or the default socket).
 */
export async function projectDocker(manifest: Manifest): Promise<DockerPort> {
  const endpoint = manifest.override?.dockerEndpoint ?? null;
  return endpoint === null
    ? await realDocker()
    : await dockerAtEndpoint(endpoint, DOCKER_ENDPOINT_SETTING);
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
): Promise<DockerPort> {
  const [{ default: Docker }, { dockerodePort }] = await Promise.all([
    import("npm:dockerode@5.0.1"),
    import("./dockerode.ts"),
  ]);
  const url = new URL(endpoint);
  const secured = tls === null ? null : dockerTlsOptions(endpoint, tls);
  if (secured !== null) return dockerodePort(new Docker(secured), { origin: { setting } });
  const client = url.protocol === "unix:"
    ? new Docker({ socketPath: decodeURIComponent(url.pathname) })
    : new Docker({
      host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port || (url.protocol === "https:" ? "2376" : "2375"),
      protocol: url.protocol === "https:" ? "https" : "http",
    });
  return dockerodePort(client, { origin: { setting } });
}
