/**
 * Configuration in code: a typed override of an environment's settings (docs/project-format.md,
 * "Configuration in code"), given to `openProject({ settings })` or `loadProject(dir,
 * { settings })`. It is the last layer over the manifest — top level, then the chosen
 * environment, then the override — so every journey sees it as if `sluice.yaml` said it, and
 * the plan's source hash covers it (a plan made under one override and applied under another
 * is `PLAN_STALE_SOURCE`).
 *
 * Its keys are the manifest's (snake_case, `kafka.security` in the same shape) and it is read by
 * the manifest's own reader: the same checks and codes (`MANIFEST_INVALID_VALUE`,
 * `MANIFEST_LITERAL_SECRET`, ...), each located by its key path (`settings.kafka.bootstrap_host`)
 * instead of `file:line:col`. A secret is only ever named (`password_env`), never written.
 *
 * @example
 * ```ts
 * import { readSettingsOverride } from "./settings_override.ts";
 * const { errors } = readSettingsOverride({ docker: { endpoint: "ftp://host" } }, () => null);
 * console.log(errors[0].code, errors[0].message); // MANIFEST_INVALID_VALUE settings.docker.endpoint: ...
 * ```
 * @module
 */
import { isMap, isPair, isScalar, parseDocument, stringify } from "npm:yaml@2.9.1";
import type { Node } from "npm:yaml@2.9.1";
import { SluiceError } from "../errors.ts";
import { SourceFile } from "../expr/diagnostic.ts";
import type { Span } from "../expr/diagnostic.ts";
import { type MapEntry, YamlReader } from "./_yaml_reader.ts";
import {
  dockerEndpointProblem,
  type DockerSettings,
  readDockerTls,
  reportEndpoint,
} from "./docker_security.ts";

/** One principal of {@link KafkaSecurityOverride}: every secret named by a variable. */
export interface KafkaPrincipalOverride {
  /** SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN (SASL protocols). */
  sasl_mechanism?: string;
  /** The SASL user name. */
  username?: string;
  /** The environment variable holding the password (never the password). */
  password_env?: string;
  /** The variable holding the client certificate's PEM path (SSL, SASL_SSL). */
  cert_file_env?: string;
  /** The variable holding the client key's PEM path (SSL, SASL_SSL). */
  key_file_env?: string;
}

/** `kafka.security` as `sluice.yaml` writes it (docs/project-format.md, "Kafka security"). */
export interface KafkaSecurityOverride {
  /** PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL. */
  protocol: string;
  /** TLS trust (SSL, SASL_SSL). */
  tls?: { ca_file_env?: string; hostname_verification?: boolean };
  /** sluice's own principal. */
  admin?: KafkaPrincipalOverride;
  /** Every runner's principal. */
  runner?: KafkaPrincipalOverride;
}

/**
 * A typed override of the environment's settings. Each key given replaces the manifest's value
 * for the chosen environment exactly as an `environments.<name>` overlay would (a `security` or
 * `state` replaces the manifest's whole); an absent key keeps it.
 */
export interface SettingsOverride {
  /** Kafka addresses and security. */
  kafka?: {
    /** `host:port[,host:port...]` as sluice reaches the brokers from the host. */
    bootstrap_host?: string;
    /** `host:port[,host:port...]` as runners reach them on the Docker network. */
    bootstrap_internal?: string;
    /** The protocol and principals, every secret by reference. */
    security?: KafkaSecurityOverride;
  };
  /** The Docker daemon (not a manifest setting: `$DOCKER_HOST` or the default socket otherwise). */
  docker?: {
    /** `unix:///path/docker.sock`, `tcp://host:port`, `http://host:port` or `https://host:port`. */
    endpoint?: string;
    /**
     * TLS to the daemon at `endpoint` (a `tcp://` or `https://` one; `endpoint` is required
     * with it), as `docker.tls` in sluice.yaml: the variables holding the PEM files' paths.
     */
    tls?: {
      /** The variable holding the CA certificate's path (the daemon's certificate is checked). */
      ca_file_env: string;
      /** The variable holding the client certificate's path. */
      cert_file_env: string;
      /** The variable holding the client key's path. */
      key_file_env: string;
    };
  };
  /** The Docker network runners join. */
  network?: string;
  /** The runner image: an immutable ID (`sha256:...`) or a digest reference. */
  image?: string;
  /** The state store: `local` (with `dir`) or `postgres` (with `dsn_env`, the DSN's variable). */
  state?: { backend: "local"; dir?: string } | { backend: "postgres"; dsn_env: string };
}

/** The name diagnostics give the override (its key paths start with it). */
export const OVERRIDE_ROOT = "settings";

/** The keys an override may set. */
const OVERRIDE_KEYS = ["kafka", "docker", "network", "image", "state"];

/** What {@link readSettingsOverride} found. */
export interface ReadOverride<T> {
  /** The settings read by the manifest's reader, or null when the override has errors. */
  settings: T | null;
  /** The Docker endpoint, when the override sets one. */
  dockerEndpoint: string | null;
  /** TLS to that endpoint (`settings.docker.tls`), or null. */
  dockerTls: DockerSettings["tls"];
  /** The override's canonical form, as bound into the plan's source hash. */
  canonical: string;
  /** Every problem, each located by its key path. */
  errors: SluiceError[];
}

/**
 * Read an override with the manifest's own reader `read` (given the override's settings mapping,
 * `docker` taken out), and check the Docker endpoint. Errors name the key path they are about.
 */
export function readSettingsOverride<T>(
  override: SettingsOverride,
  read: (r: YamlReader, map: Map<string, MapEntry>) => T,
): ReadOverride<T> {
  // the override as the manifest's text would hold it: the manifest's reader checks it
  const text = stringify(override ?? null, { sortMapEntries: true });
  const source = new SourceFile(OVERRIDE_ROOT, text);
  const r = new YamlReader(source);
  const doc = parseDocument(text, { version: "1.2" });
  const whole: Span = { start: 0, end: Math.max(1, text.length) };
  let settings: T | null = null;
  let docker: { endpoint: string | null; tls: DockerSettings["tls"] } = {
    endpoint: null,
    tls: null,
  };
  const map = r.map(doc.contents, OVERRIDE_ROOT, OVERRIDE_KEYS, whole);
  if (map) {
    const entry = map.get("docker");
    map.delete("docker");
    if (entry) docker = readDocker(r, entry);
    settings = read(r, map);
  }
  const errors = r.errors.map((e) => relocate(e, doc.contents as Node | null, source));
  return {
    settings: errors.length ? null : settings,
    dockerEndpoint: docker.endpoint,
    dockerTls: docker.tls,
    canonical: text,
    errors,
  };
}

/** `docker.endpoint`, a Docker daemon address, and `docker.tls`, as sluice.yaml's reads it. */
function readDocker(
  r: YamlReader,
  entry: MapEntry,
): { endpoint: string | null; tls: DockerSettings["tls"] } {
  const where = `${OVERRIDE_ROOT}.docker`;
  const map = r.map(entry.value, where, ["endpoint", "tls"], entry.keySpan);
  const endpoint = map?.get("endpoint");
  const tlsEntry = map?.get("tls");
  let value: string | null = null;
  if (endpoint) {
    value = r.string(endpoint, `${where}.endpoint`);
    const found = value === null ? null : dockerEndpointProblem(value);
    if (found) {
      reportEndpoint(r, `${where}.endpoint`, found, r.valueSpan(endpoint));
      value = null;
    }
  }
  if (!tlsEntry) return { endpoint: value, tls: null };
  if (!endpoint) {
    // as in sluice.yaml, TLS belongs to the daemon an endpoint names
    r.error(
      "MANIFEST_MISSING_KEY",
      `${where}.tls needs ${where}.endpoint, the tcp:// or https:// daemon it secures`,
      tlsEntry.keySpan,
    );
  }
  const tls = readDockerTls(r, tlsEntry, where, value === null ? null : new URL(value));
  return { endpoint: value, tls };
}

/**
 * An error of the override's synthetic text, named by the key path it is about instead of
 * `file:line:col` (the text is not a file anyone wrote). The message keeps its own words.
 */
function relocate(error: SluiceError, root: Node | null, source: SourceFile): SluiceError {
  const at = error.location;
  if (!at) return error;
  const offset = offsetOf(source.text, at.line, at.column);
  const path = [OVERRIDE_ROOT, ...keyPathAt(root, offset)].join(".");
  const prefix = `${at.file}:${at.line}:${at.column}: `;
  const first = error.message.split("\n")[0];
  const words = first.startsWith(prefix) ? first.slice(prefix.length) : first;
  return new SluiceError(error.code, `${path}: ${words}`, {
    evidence: { ...(error.evidence ?? {}), setting: path },
  });
}

/** The character offset of a 1-based line and column. */
function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const next = text.indexOf("\n", offset);
    if (next < 0) break;
    offset = next + 1;
  }
  return offset + column - 1;
}

/** The keys leading to the deepest node at `offset` (a key or its value). */
function keyPathAt(node: Node | null, offset: number): string[] {
  if (!node) return [];
  if (isMap(node)) {
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = pair.key as Node | null;
      const value = pair.value as Node | null;
      const name = isScalar(key) ? String(key.value) : "?";
      const inKey = key?.range && offset >= key.range[0] && offset < key.range[1];
      if (inKey) return [name];
      if (value?.range && offset >= value.range[0] && offset < value.range[2]) {
        return [name, ...keyPathAt(value, offset)];
      }
    }
  }
  return [];
}
