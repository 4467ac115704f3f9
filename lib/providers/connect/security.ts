/**
 * A Connect cluster's `security:` made usable by the REST adapter: the CA read from the file
 * the variable it names holds, the REST password read from its variable. Only the operator's
 * environment says where a secret is; the project file only names variables. An unset variable
 * or an unreadable file is `ENV_CONNECT_CREDENTIAL_MISSING`, naming the variable and the
 * `sluice.yaml` key, never a value.
 *
 * @example
 * ```ts
 * import { connectClientOptions } from "./security.ts";
 * import { NO_CONNECT_SECURITY } from "../../project/connect_security.ts";
 * console.log(connectClientOptions(NO_CONNECT_SECURITY, "main")); // {}
 * ```
 * @module
 */
import { SluiceError } from "../../errors.ts";
import type { ConnectSecurity } from "../../project/connect_security.ts";
import type { RestConnectOptions } from "./rest.ts";

/** Where the variables are read (a test gives its own). */
export interface ConnectEnv {
  get(name: string): string | undefined;
}

/** How the CA file is read (a test gives its own). */
export type ReadTextSync = (path: string) => string;

function missing(variable: string, setting: string, why: string): SluiceError {
  return new SluiceError(
    "ENV_CONNECT_CREDENTIAL_MISSING",
    `${setting} names the environment variable ${variable}, which ${why}`,
    { evidence: { variable, setting } },
  );
}

/**
 * The REST adapter's options for cluster `alias` under `security` (its variables and CA file
 * read now). Throws `ENV_CONNECT_CREDENTIAL_MISSING` when one is absent.
 */
export function connectClientOptions(
  security: ConnectSecurity,
  alias: string,
  env: ConnectEnv = Deno.env,
  readText: ReadTextSync = Deno.readTextFileSync,
): Pick<RestConnectOptions, "tls" | "basicAuth"> {
  const at = `connect.${alias}.security`;
  const value = (variable: string, setting: string) => {
    const v = env.get(variable);
    if (v === undefined || v.length === 0) throw missing(variable, setting, "is not set");
    return v;
  };
  const out: Pick<RestConnectOptions, "tls" | "basicAuth"> = {};
  if (security.caFileEnv !== null) {
    const setting = `${at}.ca_file_env`;
    const path = value(security.caFileEnv, setting);
    try {
      out.tls = { ca: readText(path) };
    } catch (error) {
      throw missing(
        security.caFileEnv,
        setting,
        error instanceof Deno.errors.NotFound
          ? "holds a path where there is no file"
          : "holds a path that cannot be read",
      );
    }
  }
  if (security.basicAuth !== null) {
    out.basicAuth = {
      username: security.basicAuth.username,
      password: value(security.basicAuth.passwordEnv, `${at}.password_env`),
    };
  }
  return out;
}
