/**
 * The Docker daemon over TCP with TLS, by the Docker CLI's own convention: `DOCKER_HOST=tcp://…`,
 * `DOCKER_TLS_VERIFY` set (non-empty) and `DOCKER_CERT_PATH` (default `~/.docker`) holding
 * `ca.pem` (the CA the daemon's certificate must be signed by), `cert.pem` and `key.pem` (the
 * client certificate a `--tlsverify` daemon asks for). The daemon's certificate is checked
 * against that CA and the host name in `DOCKER_HOST`; a TCP address without a port is 2376.
 *
 * Without `DOCKER_TLS_VERIFY` nothing changes: dockerode reads `DOCKER_HOST` as before. A file
 * that is missing or unreadable is `ENV_DOCKER_TLS_MISSING`, naming the variable and the file,
 * before any connection; a handshake the daemon or sluice refuses is `ENV_DOCKER_TLS`
 * (`../errors.ts`).
 *
 * @example
 * ```ts
 * import { dockerTlsFromEnv } from "./tls.ts";
 * const none = await dockerTlsFromEnv({ get: () => undefined });
 * console.log(none); // null
 * ```
 * @module
 */
import { SluiceError } from "../../errors.ts";
import type { AddressOrigin } from "../errors.ts";

/** Where the Docker variables are read (a test gives its own). */
export interface DockerEnv {
  get(name: string): string | undefined;
}

/** dockerode's options for a daemon over TCP with TLS. */
export interface DockerTlsClientOptions {
  host: string;
  port: string;
  protocol: "https";
  /** The CA, client certificate and key (PEM). */
  ca: string;
  cert: string;
  key: string;
}

/** A TLS client for the daemon, with where its address came from (for errors). */
export interface DockerTlsClient {
  options: DockerTlsClientOptions;
  origin: AddressOrigin;
}

/** Where each PEM comes from: a path, and the words naming it in an error. */
export interface DockerTlsFiles {
  ca: { path: string; named: string };
  cert: { path: string; named: string };
  key: { path: string; named: string };
}

/** How a PEM file is read (a test gives its own). */
export type ReadText = (path: string) => Promise<string>;

/**
 * Read the three PEM files. Throws `ENV_DOCKER_TLS_MISSING` naming the one that is missing.
 *
 * @example
 * ```ts
 * import { readDockerTlsFiles } from "./tls.ts";
 * const read = (p: string) => Promise.resolve(`PEM of ${p}`);
 * const f = (path: string) => ({ path, named: path });
 * const pem = await readDockerTlsFiles({ ca: f("/c/ca.pem"), cert: f("/c/cert.pem"), key: f("/c/key.pem") }, read);
 * console.log(pem.ca); // PEM of /c/ca.pem
 * ```
 */
export async function readDockerTlsFiles(
  files: DockerTlsFiles,
  readText: ReadText = Deno.readTextFile,
): Promise<{ ca: string; cert: string; key: string }> {
  const one = async (which: keyof DockerTlsFiles): Promise<string> => {
    const { path, named } = files[which];
    try {
      return await readText(path);
    } catch (error) {
      const why = error instanceof Deno.errors.NotFound
        ? "there is no such file"
        : "it cannot be read";
      throw new SluiceError(
        "ENV_DOCKER_TLS_MISSING",
        `the Docker daemon is reached over TLS and needs ${named}, but ${why}`,
        { evidence: { file: which, named }, cause: error },
      );
    }
  };
  return { ca: await one("ca"), cert: await one("cert"), key: await one("key") };
}

/**
 * The daemon's address split for dockerode (`tcp://host[:port]`, `https://…`; port 2376 when
 * absent), or null when it is not a TCP address.
 */
function tcpAddress(address: string): { host: string; port: string } | null {
  let url: URL;
  try {
    url = new URL(address.includes("//") ? address : `tcp://${address}`);
  } catch {
    return null;
  }
  if (!["tcp:", "https:", "http:"].includes(url.protocol) || url.hostname === "") return null;
  return { host: url.hostname.replace(/^\[(.*)\]$/, "$1"), port: url.port || "2376" };
}

/**
 * The TLS client the Docker CLI's variables describe, or null when `DOCKER_TLS_VERIFY` is unset
 * or empty, or `DOCKER_HOST` is not a TCP address (a socket needs no TLS).
 *
 * @example
 * ```ts
 * import { dockerTlsFromEnv } from "./tls.ts";
 * const env = new Map([["DOCKER_HOST", "tcp://docker.example:2376"], ["DOCKER_TLS_VERIFY", "1"],
 *   ["DOCKER_CERT_PATH", "/certs"]]);
 * const read = (p: string) => Promise.resolve(`PEM of ${p}`);
 * const tls = await dockerTlsFromEnv({ get: (n) => env.get(n) }, read);
 * console.log(tls?.options.host, tls?.options.cert); // docker.example PEM of /certs/cert.pem
 * ```
 */
export async function dockerTlsFromEnv(
  env: DockerEnv = Deno.env,
  readText: ReadText = Deno.readTextFile,
): Promise<DockerTlsClient | null> {
  const get = (name: string) => {
    try {
      return env.get(name) || undefined;
    } catch {
      return undefined;
    }
  };
  if (get("DOCKER_TLS_VERIFY") === undefined) return null;
  const address = tcpAddress(get("DOCKER_HOST") ?? "");
  if (address === null) return null;
  const dir = get("DOCKER_CERT_PATH");
  const base = dir ?? `${get("HOME") ?? ""}/.docker`;
  const file = (name: string) => ({
    path: `${base}/${name}`,
    named: dir ? `${name} in $DOCKER_CERT_PATH` : `~/.docker/${name} (DOCKER_CERT_PATH is not set)`,
  });
  const pem = await readDockerTlsFiles(
    { ca: file("ca.pem"), cert: file("cert.pem"), key: file("key.pem") },
    readText,
  );
  return {
    options: { ...address, protocol: "https", ...pem },
    origin: { variable: "DOCKER_HOST" },
  };
}

/**
 * dockerode's options for a TCP `endpoint` with TLS material already read.
 *
 * @example
 * ```ts
 * import { dockerTlsOptions } from "./tls.ts";
 * const o = dockerTlsOptions("tcp://docker.example", { ca: "CA", cert: "C", key: "K" });
 * console.log(o?.port); // 2376
 * ```
 */
export function dockerTlsOptions(
  endpoint: string,
  pem: { ca: string; cert: string; key: string },
): DockerTlsClientOptions | null {
  const address = tcpAddress(endpoint);
  return address === null ? null : { ...address, protocol: "https", ...pem };
}

/**
 * The PEM material `docker.tls` names in sluice.yaml (`setting`: its key path): each variable's
 * file read now. An unset variable or a file that cannot be read is `ENV_DOCKER_TLS_MISSING`
 * naming the variable and the key, never a value.
 *
 * @example
 * ```ts
 * import { resolveDockerTls } from "./tls.ts";
 * const env = new Map([["CA", "/c/ca.pem"], ["CERT", "/c/cert.pem"], ["KEY", "/c/key.pem"]]);
 * const pem = await resolveDockerTls({ caFileEnv: "CA", certFileEnv: "CERT", keyFileEnv: "KEY" },
 *   "docker.tls", { get: (n) => env.get(n) }, (p) => Promise.resolve(`PEM of ${p}`));
 * console.log(pem.key); // PEM of /c/key.pem
 * ```
 */
export async function resolveDockerTls(
  tls: { caFileEnv: string; certFileEnv: string; keyFileEnv: string },
  setting: string,
  env: DockerEnv = Deno.env,
  readText: ReadText = Deno.readTextFile,
): Promise<{ ca: string; cert: string; key: string }> {
  const file = (variable: string, key: string) => {
    const path = env.get(variable);
    const named = `the file $${variable} names (${setting}.${key})`;
    if (path === undefined || path.length === 0) {
      throw new SluiceError(
        "ENV_DOCKER_TLS_MISSING",
        `${setting}.${key} names the environment variable ${variable}, which is not set`,
        { evidence: { variable, setting: `${setting}.${key}` } },
      );
    }
    return { path, named };
  };
  return await readDockerTlsFiles({
    ca: file(tls.caFileEnv, "ca_file_env"),
    cert: file(tls.certFileEnv, "cert_file_env"),
    key: file(tls.keyFileEnv, "key_file_env"),
  }, readText);
}
