/**
 * Which Docker daemon a project's environment uses and how it is trusted: `docker:` in
 * `sluice.yaml` (docs/project-format.md, "Docker daemon"), per environment like every other
 * setting (an environment's `docker:` replaces the top-level one whole). Without it, the Docker
 * CLI's variables decide (`DOCKER_HOST`, `DOCKER_TLS_VERIFY`, `DOCKER_CERT_PATH`).
 *
 * ```yaml
 * docker:
 *   endpoint: tcp://docker.prod.internal:2376
 *   tls:
 *     ca_file_env: DOCKER_CA_FILE      # each names the variable holding a PEM file's path
 *     cert_file_env: DOCKER_CERT_FILE
 *     key_file_env: DOCKER_KEY_FILE
 * ```
 *
 * As for `kafka.security`, paths are never written in the project, only the variables holding
 * them: a project file from a pull request could otherwise make sluice read any file of the
 * machine. An endpoint carrying credentials is refused and never echoed.
 *
 * @example
 * ```ts
 * import { DOCKER_ENDPOINT_SCHEMES } from "./docker_security.ts";
 * console.log(DOCKER_ENDPOINT_SCHEMES.includes("tcp:")); // true
 * ```
 * @module
 */
import type { SourceLocation } from "../errors.ts";
import type { MapEntry, YamlReader } from "./_yaml_reader.ts";
import { isEnvVarName } from "./names.ts";

/** The endpoint schemes sluice reaches a daemon by. */
export const DOCKER_ENDPOINT_SCHEMES = ["unix:", "tcp:", "http:", "https:"];

/** `docker:` as read. */
export interface DockerSettings {
  /** `unix:///path`, `tcp://host:port`, `http(s)://host:port`. */
  endpoint: string;
  /** Where `endpoint` is written (its key path and place in sluice.yaml). */
  endpointAt: { setting: string; location: SourceLocation };
  /** TLS (TCP endpoints): the variables holding the CA, client certificate and key paths. */
  tls: { caFileEnv: string; certFileEnv: string; keyFileEnv: string } | null;
}

const DOCKER_KEYS = ["endpoint", "tls"];
const TLS_KEYS = ["ca_file_env", "cert_file_env", "key_file_env"];

/**
 * Read `tls:` of a Docker daemon at `entry` (`where`: the key path of its `docker` mapping, e.g.
 * `environments.prod.docker` or `settings.docker`), for the daemon at `url` (null when it is not
 * known): the three variables holding the CA, client certificate and key paths, all required, a
 * `unix://` or `http://` endpoint refused. Returns null when invalid (reported on `r`). The one
 * reader of these keys, for `sluice.yaml` and for the settings override in code alike.
 *
 * @example
 * ```ts
 * import { readDockerTls } from "./docker_security.ts";
 * // const tls = readDockerTls(r, map.get("tls")!, "settings.docker", new URL(endpoint));
 * ```
 */
export function readDockerTls(
  r: YamlReader,
  entry: MapEntry,
  where: string,
  url: URL | null,
): DockerSettings["tls"] {
  if (url !== null && (url.protocol === "unix:" || url.protocol === "http:")) {
    r.error(
      "MANIFEST_INVALID_VALUE",
      `${where}.tls applies to a tcp:// or https:// endpoint only`,
      entry.keySpan,
    );
  }
  const tm = r.map(entry.value, `${where}.tls`, TLS_KEYS, entry.keySpan);
  if (!tm) return null;
  const names: string[] = [];
  for (const key of TLS_KEYS) {
    const e = r.required(tm, key, `${where}.tls`, entry.keySpan);
    const value = e ? r.string(e, `${where}.tls.${key}`) : null;
    if (e && value !== null && !isEnvVarName(value)) {
      r.error(
        "MANIFEST_INVALID_VALUE",
        `${where}.tls.${key} must name an environment variable (the path itself never goes ` +
          "in sluice.yaml)",
        r.valueSpan(e),
      );
      continue;
    }
    if (value !== null) names.push(value);
  }
  return names.length === 3
    ? { caFileEnv: names[0], certFileEnv: names[1], keyFileEnv: names[2] }
    : null;
}

/**
 * Read `docker:` at `entry` (`prefix`: the key path before it, e.g. `environments.prod.`).
 * Returns null when it is invalid (every problem reported on `r`).
 */
export function readDockerSettings(
  r: YamlReader,
  entry: MapEntry,
  prefix: string,
): DockerSettings | null {
  const where = `${prefix}docker`;
  const map = r.map(entry.value, where, DOCKER_KEYS, entry.keySpan);
  if (!map) return null;
  const before = r.errors.length;
  const endpointEntry = r.required(map, "endpoint", where, entry.keySpan);
  const endpoint = endpointEntry ? r.string(endpointEntry, `${where}.endpoint`) : null;
  let url: URL | null = null;
  if (endpointEntry && endpoint !== null) {
    try {
      url = new URL(endpoint);
    } catch {
      url = null;
    }
    const problem = url === null
      ? "is not a URL (write tcp://host:port or unix:///path)"
      : !DOCKER_ENDPOINT_SCHEMES.includes(url.protocol)
      ? `must use ${DOCKER_ENDPOINT_SCHEMES.map((s) => s.slice(0, -1)).join(", ")}`
      : url.username || url.password
      ? "must not carry credentials (the manifest never holds a secret)"
      : url.protocol !== "unix:" && url.hostname === ""
      ? "must name a host"
      : null;
    if (problem !== null) {
      const shown = /^[a-z]+:\/\/[^/]*@/i.test(endpoint) ? "(credentials withheld)" : endpoint;
      r.error(
        "MANIFEST_INVALID_VALUE",
        `${where}.endpoint ${shown} ${problem}`,
        r.valueSpan(endpointEntry),
      );
    }
  }
  const tlsEntry = map.get("tls");
  const tls = tlsEntry ? readDockerTls(r, tlsEntry, where, url) : null;
  if (r.errors.length > before || endpointEntry === null || endpoint === null) return null;
  return {
    endpoint,
    endpointAt: {
      setting: `${where}.endpoint`,
      location: r.source.locate(r.valueSpan(endpointEntry).start),
    },
    tls,
  };
}
