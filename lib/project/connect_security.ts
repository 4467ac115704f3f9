/**
 * How sluice reaches a Kafka Connect cluster's REST API when it is secured: `security:` under a
 * cluster of `connect:` in `sluice.yaml` (docs/project-format.md, "Kafka Connect"), per
 * environment like the cluster's addresses (an environment's replaces the top-level one whole).
 *
 * ```yaml
 * connect:
 *   main:
 *     rest_host: https://connect.prod.internal:8443
 *     rest_internal: https://connect:8443
 *     security:
 *       ca_file_env: CONNECT_CA_FILE        # the variable holding the CA file's path
 *       username: sluice                    # HTTP basic authentication
 *       password_env: CONNECT_REST_PASSWORD # the variable holding its password
 * ```
 *
 * Every secret is named, never written: a `password:` is `MANIFEST_LITERAL_SECRET`, its value
 * never echoed; a path is not written either (a project file could otherwise make sluice read
 * any file of the machine).
 *
 * @example
 * ```ts
 * import { NO_CONNECT_SECURITY } from "./connect_security.ts";
 * console.log(NO_CONNECT_SECURITY.basicAuth); // null
 * ```
 * @module
 */
import type { MapEntry, YamlReader, YNode } from "./_yaml_reader.ts";
import { isEnvVarName } from "./names.ts";
import { isSensitiveKey } from "../secrets.ts";

/** A cluster's `security:` as read. */
export interface ConnectSecurity {
  /** The variable holding the path of the CA (PEM) the worker's certificate is signed by. */
  caFileEnv: string | null;
  /** HTTP basic authentication: the user, and the variable holding its password. */
  basicAuth: { username: string; passwordEnv: string } | null;
}

/** Nothing to add: plain HTTP or the system's trust, no authentication. */
export const NO_CONNECT_SECURITY: ConnectSecurity = Object.freeze({
  caFileEnv: null,
  basicAuth: null,
});

const KEYS = ["ca_file_env", "username", "password_env"];

function envName(r: YamlReader, entry: MapEntry, where: string): string | null {
  const value = r.string(entry, where);
  if (value === null) return null;
  if (!isEnvVarName(value)) {
    r.error(
      "MANIFEST_INVALID_VALUE",
      `${where} must name an environment variable (the value itself never goes in sluice.yaml)`,
      r.valueSpan(entry),
    );
    return null;
  }
  return value;
}

/**
 * Read a cluster's `security:` at `entry` (`where`: its key path, e.g. `connect.main.security`).
 * Returns null when it is invalid (every problem reported on `r`).
 */
export function readConnectSecurity(
  r: YamlReader,
  entry: MapEntry,
  where: string,
): ConnectSecurity | null {
  const items = (entry.value as { items?: Array<{ key?: YNode; value?: YNode }> } | null)?.items;
  let literal = false;
  for (const item of items ?? []) {
    const key = (item.key as { value?: unknown } | null)?.value;
    if (typeof key !== "string" || KEYS.includes(key) || !isSensitiveKey(key)) continue;
    literal = true;
    const keySpan = r.span(item.key, entry.keySpan);
    r.secretError(
      "MANIFEST_LITERAL_SECRET",
      `${where}.${key} is a secret written literally; a secret never goes in sluice.yaml: name ` +
        "the environment variable that holds it instead (password_env)",
      keySpan,
      { key },
      r.span(item.value, keySpan),
    );
  }
  if (literal) return null;
  const map = r.map(entry.value, where, KEYS, entry.keySpan);
  if (!map) return null;
  const before = r.errors.length;
  const ca = map.get("ca_file_env");
  const caFileEnv = ca ? envName(r, ca, `${where}.ca_file_env`) : null;
  const user = map.get("username");
  const pass = map.get("password_env");
  let basicAuth: ConnectSecurity["basicAuth"] = null;
  if (user || pass) {
    if (!user || !pass) {
      r.error(
        "MANIFEST_MISSING_KEY",
        `${where}: basic authentication needs both username and password_env`,
        (user ?? pass)!.keySpan,
        { key: user ? "password_env" : "username" },
      );
    } else {
      const username = r.string(user, `${where}.username`);
      if (username !== null && username.length === 0) {
        r.error("MANIFEST_INVALID_VALUE", `${where}.username must not be empty`, r.valueSpan(user));
      }
      const passwordEnv = envName(r, pass, `${where}.password_env`);
      if (username && passwordEnv !== null) basicAuth = { username, passwordEnv };
    }
  }
  if (r.errors.length > before) return null;
  return { caFileEnv, basicAuth };
}
