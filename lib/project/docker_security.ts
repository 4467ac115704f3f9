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
 * Or several named daemons a model's instances are placed on (`lib/project/placement.ts`):
 *
 * ```yaml
 * docker:
 *   endpoints:
 *     east: { endpoint: unix:///var/run/docker.sock }
 *     west: { endpoint: tcp://docker-west.internal:2376, tls: { ... } }
 *   placement: spread                  # spread (default) | shared
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
import type { Span } from "../expr/diagnostic.ts";
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

/** How a model's instances are spread over the endpoints (docs/project-format.md, "Instances"). */
export type PlacementRule = "spread" | "shared";

/** The placement rules, as written. */
export const PLACEMENT_RULES: readonly PlacementRule[] = ["spread", "shared"];

/** At most this many endpoints under `docker.endpoints` (a bound on what a project can ask for). */
export const MAX_DOCKER_ENDPOINTS = 32;

/** One named daemon of `docker.endpoints`. */
export interface DockerEndpoint extends DockerSettings {
  /** Its name (`[a-z][a-z0-9_]*`): what placement, evidence and errors call it. */
  name: string;
}

/** `docker:` as read: the daemons instances are placed on, and how. */
export interface DockerConfig {
  /**
   * The daemon every single-instance model runs on: `docker.endpoint`, or the first of
   * `docker.endpoints`; null for the Docker CLI's (`DOCKER_HOST`).
   */
  daemon: DockerSettings | null;
  /** `docker.endpoints` in declaration order; empty for one daemon (`daemon`). */
  endpoints: DockerEndpoint[];
  /** `docker.placement` (default `spread`). */
  placement: PlacementRule;
}

const DOCKER_KEYS = ["endpoint", "tls", "endpoints", "placement"];
const ENDPOINT_KEYS = ["endpoint", "tls"];

/**
 * Read `docker:` at `entry` (`prefix`: the key path before it, e.g. `environments.prod.`): one
 * daemon (`endpoint`, `tls`), or several (`endpoints`: name → `{endpoint, tls}`), and the
 * placement rule. Returns null when it is invalid (every problem reported on `r`).
 */
export function readDockerSettings(
  r: YamlReader,
  entry: MapEntry,
  prefix: string,
): DockerConfig | null {
  const where = `${prefix}docker`;
  const map = r.map(entry.value, where, DOCKER_KEYS, entry.keySpan);
  if (!map) return null;
  const before = r.errors.length;
  const several = map.get("endpoints");
  const placementEntry = map.get("placement");
  let daemon: DockerSettings | null = null;
  const endpoints: DockerEndpoint[] = [];
  if (several) {
    for (const key of ["endpoint", "tls"]) {
      const single = map.get(key);
      if (single) {
        r.error(
          "MANIFEST_INVALID_VALUE",
          `${where}.${key} and ${where}.endpoints exclude each other: name every daemon under ` +
            "endpoints",
          single.keySpan,
        );
      }
    }
    endpoints.push(...readEndpoints(r, several, `${where}.endpoints`));
    const first = endpoints[0];
    daemon = first
      ? { endpoint: first.endpoint, endpointAt: first.endpointAt, tls: first.tls }
      : null;
  } else if (map.has("endpoint") || map.has("tls") || !placementEntry) {
    daemon = readEndpoint(r, map, where, entry.keySpan);
  }
  let placement: PlacementRule = "spread";
  if (placementEntry) {
    const value = r.string(placementEntry, `${where}.placement`);
    if (value !== null && !(PLACEMENT_RULES as readonly string[]).includes(value)) {
      r.error(
        "MANIFEST_INVALID_VALUE",
        `${where}.placement must be ${PLACEMENT_RULES.map((p) => `'${p}'`).join(" or ")}, ` +
          `found '${value}'`,
        r.valueSpan(placementEntry),
      );
    } else if (value !== null) placement = value as PlacementRule;
  }
  if (r.errors.length > before) return null;
  return { daemon, endpoints, placement };
}

/** `docker.endpoints`: a mapping of names to daemons, each URL once. */
function readEndpoints(r: YamlReader, entry: MapEntry, where: string): DockerEndpoint[] {
  const map = r.map(entry.value, where, ["*"], entry.keySpan);
  if (!map) return [];
  if (map.size === 0 || map.size > MAX_DOCKER_ENDPOINTS) {
    r.error(
      "MANIFEST_INVALID_VALUE",
      `${where} must name between 1 and ${MAX_DOCKER_ENDPOINTS} daemons, found ${map.size}`,
      r.valueSpan(entry),
    );
    return [];
  }
  const out: DockerEndpoint[] = [];
  const byUrl = new Map<string, string>();
  for (const e of map.values()) {
    if (!r.nameKey(e, "endpoint name")) continue;
    const m = r.map(e.value, `${where}.${e.key}`, ENDPOINT_KEYS, e.keySpan);
    if (!m) continue;
    const daemon = readEndpoint(r, m, `${where}.${e.key}`, e.keySpan);
    if (daemon === null) continue;
    const same = byUrl.get(normalEndpoint(daemon.endpoint));
    if (same !== undefined) {
      r.error(
        "MANIFEST_DUPLICATE_NAME",
        `${where}.${e.key} names the same daemon as ${where}.${same}: spreading instances over ` +
          "the two would put them on one daemon",
        r.valueSpan(m.get("endpoint")!),
      );
      continue;
    }
    byUrl.set(normalEndpoint(daemon.endpoint), e.key);
    out.push({ name: e.key, ...daemon });
  }
  return out;
}

/**
 * An endpoint as compared for sameness: a socket's path, or a TCP daemon's lower-case host and
 * port whatever the scheme (`tcp://`, `http://` and `https://` reach one daemon at one port; the
 * port defaults as `dockerAtEndpoint` defaults it: 2376 for `https://`, else 2375).
 */
function normalEndpoint(endpoint: string): string {
  const url = new URL(endpoint);
  if (url.protocol === "unix:") return `unix:${url.pathname.replace(/\/+/g, "/")}`;
  return `tcp:${url.hostname.toLowerCase()}:${
    url.port || (url.protocol === "https:" ? "2376" : "2375")
  }`;
}

/** One daemon's `endpoint` and `tls` in `map` (the mapping at `where`). */
function readEndpoint(
  r: YamlReader,
  map: Map<string, MapEntry>,
  where: string,
  at: Span,
): DockerSettings | null {
  const before = r.errors.length;
  const endpointEntry = r.required(map, "endpoint", where, at);
  const endpoint = endpointEntry ? r.string(endpointEntry, `${where}.endpoint`) : null;
  let url: URL | null = null;
  if (endpointEntry && endpoint !== null) {
    const found = dockerEndpointProblem(endpoint);
    if (found === null) url = new URL(endpoint);
    else reportEndpoint(r, `${where}.endpoint`, found, r.valueSpan(endpointEntry));
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

/** Why a Docker daemon's address is refused, and how it may be shown. */
export interface EndpointProblem {
  /** What is wrong, after the value (e.g. `must name a host`). */
  problem: string;
  /** The value as it may be shown: without credentials, query or fragment. */
  shown: string;
  /** The value may hold a secret: its excerpt is masked too. */
  secret: boolean;
}

/**
 * Why `value` is not a Docker daemon's address (`unix:///path`, `tcp://host[:port]`,
 * `http(s)://host[:port]`), or null when it is one: the one rule for `docker.endpoint`, each of
 * `docker.endpoints` and `settings.docker.endpoint`. An address with credentials, a query or a
 * fragment is refused and never echoed whole (the manifest never holds a secret).
 *
 * @example
 * ```ts
 * import { dockerEndpointProblem } from "./docker_security.ts";
 * console.log(dockerEndpointProblem("tcp://127.0.0.1:2375")); // null
 * console.log(dockerEndpointProblem("tcp://u:pw@d:2376")?.shown); // (credentials withheld)
 * ```
 */
export function dockerEndpointProblem(value: string): EndpointProblem | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return {
      problem: "is not a URL (write tcp://host:port or unix:///path)",
      shown: value,
      secret: false,
    };
  }
  const refuse = (problem: string, shown = value, secret = false) => ({ problem, shown, secret });
  if (url.username || url.password) {
    return refuse(
      "must not carry credentials (the manifest never holds a secret)",
      "(credentials withheld)",
      true,
    );
  }
  if (url.search || url.hash) {
    return refuse(
      "must not carry a query or fragment (a daemon's address has none, and the manifest never " +
        "holds a secret)",
      `${value.replace(/[?#].*$/s, "")} (query withheld)`,
      true,
    );
  }
  if (!DOCKER_ENDPOINT_SCHEMES.includes(url.protocol)) {
    return refuse(`must use ${DOCKER_ENDPOINT_SCHEMES.map((s) => s.slice(0, -1)).join(", ")}`);
  }
  if (url.protocol === "unix:") {
    return url.hostname === "" && url.pathname.length > 1
      ? null
      : refuse("must name a socket path (unix:///path)");
  }
  if (url.hostname === "") return refuse("must name a host");
  if (url.pathname !== "/" && url.pathname !== "") {
    return refuse("must not carry a path (a daemon's address is host[:port])");
  }
  return null;
}

/** Report `found` for the endpoint at `setting`, its excerpt masked when it may hold a secret. */
export function reportEndpoint(
  r: YamlReader,
  setting: string,
  found: EndpointProblem,
  span: Span,
): void {
  const message = `${setting} ${found.shown} ${found.problem}`;
  if (found.secret) r.secretError("MANIFEST_INVALID_VALUE", message, span);
  else r.error("MANIFEST_INVALID_VALUE", message, span);
}
