/**
 * Syntax rules for the names and references a manifest holds: project, environment, source,
 * model and column names; Kafka topics and bootstrap addresses; Docker networks; immutable
 * image references.
 *
 * @example
 * ```ts
 * import { isImmutableImage, isName } from "./names.ts";
 * console.log(isName("eligible_orders")); // true
 * console.log(isImmutableImage("sluice-runner:latest")); // false: tags are mutable
 * ```
 * @module
 */

/**
 * Project, environment, source, model and external names: a lower-case letter, then
 * lower-case letters, digits and `_`, at most 64 characters. No `-`, so the application ID
 * `sluice-<project>[-<env>]-<model>` can be split back unambiguously.
 */
export const NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

/** Whether `value` is a valid project/environment/source/model/external name. */
export function isName(value: string): boolean {
  return NAME_PATTERN.test(value);
}

/** Column names: a letter or `_`, then letters, digits and `_` (case-sensitive). */
export function isColumnName(value: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(value);
}

/** Kafka topic names: `[a-zA-Z0-9._-]`, 1 to 249 characters, not `.` or `..`. */
export function isTopicName(value: string): boolean {
  return /^[a-zA-Z0-9._-]{1,249}$/.test(value) && value !== "." && value !== "..";
}

/** Kafka bootstrap addresses: `host:port[,host:port...]`. */
export function isBootstrap(value: string): boolean {
  return value.split(",").every((part) => {
    const m = /^([A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):([0-9]{1,5})$/.exec(part);
    return m !== null && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
  });
}

/** Docker network names. */
export function isNetworkName(value: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(value);
}

/** Environment variable names (for `state.dsn_env`). */
export function isEnvVarName(value: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(value);
}

/**
 * Immutable image references: an image ID `sha256:<64 hex>` or a digest reference
 * `name[:tag]@sha256:<64 hex>`. A bare tag is mutable and rejected.
 */
export function isImmutableImage(value: string): boolean {
  if (/^sha256:[0-9a-f]{64}$/.test(value)) return true;
  return /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?@sha256:[0-9a-f]{64}$/
    .test(value);
}

/**
 * Why `value` is not a usable Kafka Connect REST endpoint (`http(s)://host[:port][/path]`, no
 * credentials, no query or fragment), or null when it is.
 *
 * @example
 * ```ts
 * import { restEndpointProblem } from "./names.ts";
 * console.log(restEndpointProblem("http://connect:8083")); // null
 * console.log(restEndpointProblem("http://u:p@connect:8083")); // "must not carry credentials"
 * ```
 */
export function restEndpointProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "is not a URL (write http://host:port)";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must use http or https";
  if (url.username || url.password) {
    return "must not carry credentials (the manifest never holds a secret)";
  }
  if (url.search || url.hash) return "must have no query or fragment";
  if (!url.hostname) return "must name a host";
  return null;
}

/**
 * The canonical form of a valid REST endpoint: lower-case scheme and host, explicit port, no
 * trailing slash (the same endpoint written two ways gives the same string and digest).
 *
 * @example
 * ```ts
 * import { normalizeRestEndpoint } from "./names.ts";
 * console.log(normalizeRestEndpoint("HTTP://Connect:8083/")); // http://connect:8083
 * ```
 */
export function normalizeRestEndpoint(value: string): string {
  const url = new URL(value);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return `${url.protocol}//${url.hostname}:${port}${url.pathname.replace(/\/+$/, "")}`;
}

/** Kafka Connect configuration keys sluice accepts: `[A-Za-z0-9_.-]`, 1 to 255 characters. */
export function isConfigKey(value: string): boolean {
  return /^[A-Za-z0-9_.-]{1,255}$/.test(value);
}

/** Java class names (`org.apache.kafka.connect.file.FileStreamSourceConnector`). */
export function isJavaClassName(value: string): boolean {
  return /^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$/.test(value) &&
    value.length <= 512;
}
