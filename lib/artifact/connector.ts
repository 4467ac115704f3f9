/**
 * The ConnectorArtifact (docs/project-format.md, "Connectors"): what a declared connector
 * compiles to. Its canonical JSON hashes to the connector's checksum. It holds the exact
 * configuration sluice submits to Kafka Connect, except that secret references stay references
 * (`${env:NAME}`): the secret values themselves are never in an artifact. Instead, `secrets`
 * maps each referenced variable to a keyed digest of its value (HMAC-SHA256 under the key in
 * `SLUICE_SECRET_HASH_KEY`), so a changed secret changes the checksum — a visible change —
 * without the artifact revealing the value or allowing a dictionary search without the key.
 *
 * @example
 * ```ts
 * import { connectorArtifactSha256, resolveConnectorConfig, validateConnectorArtifact } from "./connector.ts";
 * const artifact = validateConnectorArtifact(JSON.parse(await Deno.readTextFile("orders_in.connector.json")));
 * console.log(artifact.name, connectorArtifactSha256(artifact));
 * const submission = resolveConnectorConfig(artifact, (v) => Deno.env.get(v));
 * ```
 * @module
 */
import { createHmac } from "node:crypto";
import { SluiceError } from "../errors.ts";
import { canonicalJson, sha256Hex } from "./canonical.ts";
import { isSensitiveKey, REDACTED } from "./redact.ts";
import { parseSecretRefs, substituteSecretRefs } from "./secret_ref.ts";

/** The connector artifact format name. */
export const CONNECTOR_ARTIFACT_FORMAT = "sluice.connector-artifact";
/** The connector artifact format version. */
export const CONNECTOR_ARTIFACT_VERSION = 1;
/** The environment variable holding the key of secret digests. */
export const SECRET_HASH_KEY_ENV = "SLUICE_SECRET_HASH_KEY";
/** The shortest accepted key, in characters. */
export const SECRET_HASH_KEY_MIN_LENGTH = 32;

/** A compiled connector, exactly as serialised (snake_case per the document). */
export interface ConnectorArtifact {
  /** The format name (`CONNECTOR_ARTIFACT_FORMAT`). */
  format: "sluice.connector-artifact";
  /** The format version (`CONNECTOR_ARTIFACT_VERSION`). */
  version: 1;
  /** The project. */
  project: string;
  /** The environment, or null. */
  environment: string | null;
  /** The logical name in `sluice.yaml`. */
  connector: string;
  /** The connector's name on the Connect cluster: `sluice-<project>[-<env>]-<connector>`. */
  name: string;
  /** The alias of the declared Connect cluster. */
  cluster: string;
  /** Source or sink. */
  kind: "source" | "sink";
  /** The declared topics it writes (source) or reads (sink), sorted. */
  topics: string[];
  /**
   * The configuration submitted to Connect, with `name`, `connector.class` and (sinks)
   * `topics` set by sluice, secret references unresolved.
   */
  config: Record<string, string>;
  /** Referenced variable → `hmac-sha256:<hex>` of its value. */
  secrets: Record<string, string>;
  /** Identifies the digest key (not the key): null when there are no secrets. */
  secret_key_id: string | null;
  /** Who owns it (sluice, for this project and environment). */
  ownership: { managed_by: "sluice"; project: string; environment: string | null };
}

/** Every top-level field of a connector artifact, in document order. */
export const CONNECTOR_ARTIFACT_FIELDS: ReadonlyArray<keyof ConnectorArtifact> = [
  "format",
  "version",
  "project",
  "environment",
  "connector",
  "name",
  "cluster",
  "kind",
  "topics",
  "config",
  "secrets",
  "secret_key_id",
  "ownership",
];

/**
 * The connector name sluice gives a logical connector: `sluice-<project>-<connector>`, or
 * `sluice-<project>-<env>-<connector>` with an environment (the application ID's scheme; names
 * contain no `-`, so it splits back unambiguously).
 *
 * @example
 * ```ts
 * connectorName("orders", null, "orders_in"); // "sluice-orders-orders_in"
 * connectorName("orders", "prod", "orders_in"); // "sluice-orders-prod-orders_in"
 * ```
 */
export function connectorName(
  project: string,
  environment: string | null,
  connector: string,
): string {
  return environment === null
    ? `sluice-${project}-${connector}`
    : `sluice-${project}-${environment}-${connector}`;
}

/**
 * The keyed digest of one secret: HMAC-SHA256 under `key` of the canonical JSON of
 * `[variable, value]` (so equal values under different variables give different digests).
 *
 * @example
 * ```ts
 * secretDigest("k".repeat(32), "DB_PW", "hunter2"); // "hmac-sha256:…"
 * ```
 */
export function secretDigest(key: string, variable: string, value: string): string {
  const mac = createHmac("sha256", key).update(canonicalJson([variable, value])).digest("hex");
  return `hmac-sha256:${mac}`;
}

/**
 * A short public identifier of a digest key (so a changed key is told apart from a changed
 * secret); it reveals nothing usable about a key of {@link SECRET_HASH_KEY_MIN_LENGTH} or more.
 */
export function secretKeyId(key: string): string {
  return sha256Hex(`sluice.secret-hash-key\0${key}`).slice(0, 16);
}

/**
 * The digest key from the environment. Throws `ENV_SECRET_HASH_KEY_UNSET` when it is absent and
 * `ENV_SECRET_HASH_KEY_WEAK` when it is shorter than {@link SECRET_HASH_KEY_MIN_LENGTH}; the key
 * itself is never shown.
 */
export function secretHashKey(lookup: (variable: string) => string | undefined): string {
  const key = lookup(SECRET_HASH_KEY_ENV);
  if (key === undefined || key === "") {
    throw new SluiceError(
      "ENV_SECRET_HASH_KEY_UNSET",
      `${SECRET_HASH_KEY_ENV} is not set: connector configurations reference secrets, and their ` +
        `digests need a key of at least ${SECRET_HASH_KEY_MIN_LENGTH} characters that stays the ` +
        "same wherever this project is planned and applied (docs/project-format.md)",
      { evidence: { variable: SECRET_HASH_KEY_ENV } },
    );
  }
  if (key.length < SECRET_HASH_KEY_MIN_LENGTH) {
    throw new SluiceError(
      "ENV_SECRET_HASH_KEY_WEAK",
      `${SECRET_HASH_KEY_ENV} has ${key.length} characters; at least ` +
        `${SECRET_HASH_KEY_MIN_LENGTH} are required (e.g. openssl rand -hex 32)`,
      { evidence: { variable: SECRET_HASH_KEY_ENV, length: key.length } },
    );
  }
  return key;
}

/** The canonical JSON text of a connector artifact (the bytes that are hashed and written). */
export function connectorArtifactCanonicalJson(artifact: ConnectorArtifact): string {
  return canonicalJson(artifact);
}

/** The connector artifact checksum: sha256 hex of its canonical JSON. */
export function connectorArtifactSha256(artifact: ConnectorArtifact): string {
  return sha256Hex(canonicalJson(artifact));
}

/** The variables a configuration references, sorted and distinct. */
export function referencedVariables(config: Record<string, string>): string[] {
  const out = new Set<string>();
  for (const v of Object.values(config)) {
    for (const r of parseSecretRefs(v).refs) out.add(r.variable);
  }
  return [...out].sort();
}

/**
 * The configuration to submit to Connect: references resolved from `lookup`, with the keys
 * whose values hold a secret. Before anything is sent, each variable's digest is recomputed and
 * compared with the artifact's: a secret (or key) that changed since the artifact was compiled
 * is `BLOCKED_SECRET_CHANGED` — the reviewed artifact no longer describes what would be sent.
 * An unset variable is `ENV_SECRET_UNSET`. Neither error shows a value.
 *
 * @example
 * ```ts
 * import { type ConnectorArtifact, resolveConnectorConfig } from "./connector.ts";
 * function submission(artifact: ConnectorArtifact) {
 *   const { config, secretKeys } = resolveConnectorConfig(artifact, (v) => Deno.env.get(v));
 *   return { config, secretKeys };
 * }
 * ```
 */
export function resolveConnectorConfig(
  artifact: ConnectorArtifact,
  lookup: (variable: string) => string | undefined,
): { config: Record<string, string>; secretKeys: string[] } {
  const variables = Object.keys(artifact.secrets).sort();
  const unset = variables.filter((v) => lookup(v) === undefined);
  if (unset.length > 0) {
    throw new SluiceError(
      "ENV_SECRET_UNSET",
      `connector ${artifact.connector} references unset environment variable(s) ${
        unset.join(", ")
      }`,
      { evidence: { connector: artifact.connector, variables: unset } },
    );
  }
  if (variables.length > 0) {
    const key = secretHashKey(lookup);
    const changed = variables.filter((v) =>
      secretDigest(key, v, lookup(v)!) !== artifact.secrets[v]
    );
    if (changed.length > 0 || secretKeyId(key) !== artifact.secret_key_id) {
      throw new SluiceError(
        "BLOCKED_SECRET_CHANGED",
        `connector ${artifact.connector}: ${
          changed.length > 0
            ? `the value of ${changed.join(", ")} changed`
            : `${SECRET_HASH_KEY_ENV} changed`
        } since the artifact was compiled; plan again to review the change`,
        { evidence: { connector: artifact.connector, variables: changed } },
      );
    }
  }
  const config: Record<string, string> = {};
  for (const [k, v] of Object.entries(artifact.config)) {
    config[k] = substituteSecretRefs(v, lookup).value;
  }
  return { config, secretKeys: artifactSecretKeys(artifact) };
}

/**
 * A configuration read back from a worker, safe to show: values of keys that hold a secret in
 * the artifact (or whose names look secret) are replaced by the redaction placeholder.
 *
 * @example
 * ```ts
 * import { type ConnectorArtifact, redactObservedConfig } from "./connector.ts";
 * function shown(artifact: ConnectorArtifact) {
 *   return redactObservedConfig({ "db.pw": "hunter2", file: "/x" }, artifact); // { "db.pw": "<redacted>", file: "/x" }
 * }
 * ```
 */
export function redactObservedConfig(
  observed: Record<string, string>,
  artifact: Pick<ConnectorArtifact, "config"> | null,
): Record<string, string> {
  return redactConfigValues(observed, artifact ? artifactSecretKeys(artifact) : []);
}

/**
 * A configuration safe to show: the values of `secretKeys` and of keys whose names look secret
 * are replaced by the redaction placeholder.
 *
 * @example
 * ```ts
 * redactConfigValues({ url: "jdbc:x?pw=1", file: "/x" }, ["url"]); // { url: "<redacted>", file: "/x" }
 * ```
 */
export function redactConfigValues(
  config: Record<string, string>,
  secretKeys: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(config)) {
    out[k] = secretKeys.includes(k) || isSensitiveKey(k) ? REDACTED : v;
  }
  return out;
}

/**
 * The configuration keys of an artifact whose values hold secret references, sorted.
 *
 * @example
 * ```ts
 * artifactSecretKeys({ config: { pw: "${env:PW}", file: "/x" } }); // ["pw"]
 * ```
 */
export function artifactSecretKeys(artifact: Pick<ConnectorArtifact, "config">): string[] {
  return Object.entries(artifact.config)
    .filter(([, v]) => parseSecretRefs(v).refs.length > 0)
    .map(([k]) => k)
    .sort();
}

/** What stands for a secret-looking value when no digest key is available. */
const UNKEYED_SECRET = "unkeyed-secret";

/**
 * The form of a connector configuration that fingerprints and diffs compare: keys sorted, and
 * the value of every key in `secretKeys` (or whose name looks secret) replaced by its keyed
 * digest (HMAC-SHA256 under `hashKey` of `["config", key, value]`), so that no secret value is
 * ever kept. Without a key, such a value becomes a fixed marker (it can then never match a
 * recorded digest).
 *
 * @example
 * ```ts
 * comparableConfig({ file: "/x", "db.password": "pw" }, [], "k".repeat(32));
 * // { "db.password": "hmac-sha256:…", file: "/x" }
 * ```
 */
export function comparableConfig(
  config: Record<string, string>,
  secretKeys: readonly string[],
  hashKey: string | null,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(config).sort()) {
    const secret = secretKeys.includes(k) || isSensitiveKey(k);
    out[k] = !secret
      ? config[k]
      : hashKey === null
      ? UNKEYED_SECRET
      : `hmac-sha256:${
        createHmac("sha256", hashKey).update(canonicalJson(["config", k, config[k]])).digest("hex")
      }`;
  }
  return out;
}

/**
 * The keyed fingerprint of a connector configuration: sha256 hex of the canonical JSON of its
 * {@link comparableConfig}. It identifies exactly the configuration sluice submitted (and is
 * recorded in ownership state and bound into plans) without containing or revealing a secret.
 *
 * @example
 * ```ts
 * connectorConfigFingerprint({ name: "sluice-orders-in", file: "/x" }, [], null).length; // 64
 * ```
 */
export function connectorConfigFingerprint(
  config: Record<string, string>,
  secretKeys: readonly string[],
  hashKey: string | null,
): string {
  return sha256Hex(canonicalJson({
    format: "sluice.connector-config-fingerprint",
    version: 1,
    config: comparableConfig(config, secretKeys, hashKey),
  }));
}

/** What a connector artifact submits, fingerprinted: the value bound into plans and state. */
export interface DesiredConnectorConfig {
  /** The fingerprint of the resolved configuration. */
  fingerprint: string;
  /** Its comparable form (secrets as keyed digests). */
  comparable: Record<string, string>;
  /** The keys whose values hold secrets (sorted). */
  secretKeys: string[];
}

/**
 * Resolve an artifact's configuration (checking its secret digests, see
 * {@link resolveConnectorConfig}) and fingerprint it. The resolved values stay in this call.
 *
 * @example
 * ```ts
 * import { type ConnectorArtifact, desiredConnectorConfig } from "./connector.ts";
 * function fingerprintOf(artifact: ConnectorArtifact) {
 *   return desiredConnectorConfig(artifact, (v) => Deno.env.get(v)).fingerprint;
 * }
 * ```
 */
export function desiredConnectorConfig(
  artifact: ConnectorArtifact,
  lookup: (variable: string) => string | undefined,
): DesiredConnectorConfig {
  const { config, secretKeys } = resolveConnectorConfig(artifact, lookup);
  const key = secretKeys.length > 0 ? secretHashKey(lookup) : null;
  return {
    fingerprint: connectorConfigFingerprint(config, secretKeys, key),
    comparable: comparableConfig(config, secretKeys, key),
    secretKeys,
  };
}

/** One changed key of a configuration diff, safe to show. */
export interface ConfigChange {
  /** The configuration key. */
  key: string;
  /** The observed value (secrets redacted); null when the key is absent. */
  before: string | null;
  /** The desired value as written in the project (references unresolved); null when removed. */
  after: string | null;
}

/**
 * The redacted diff between an observed configuration and the desired one: the keys whose
 * comparable values differ, in key order. A secret shows as the redaction placeholder on the
 * observed side and as its `${env:NAME}` reference on the desired side, so a changed secret is
 * a visible change that reveals nothing.
 *
 * @example
 * ```ts
 * configChanges({ file: "/a" }, { file: "/a" }, { config: { file: "/b" }, comparable: { file: "/b" } });
 * // [{ key: "file", before: "/a", after: "/b" }]
 * ```
 */
export function configChanges(
  observedComparable: Record<string, string> | null,
  observedShown: Record<string, string> | null,
  desired: { config: Record<string, string>; comparable: Record<string, string> },
): ConfigChange[] {
  const before = observedComparable ?? {};
  const keys = [...new Set([...Object.keys(before), ...Object.keys(desired.comparable)])].sort();
  return keys.filter((k) => before[k] !== desired.comparable[k]).map((k) => ({
    key: k,
    before: before[k] === undefined ? null : observedShown?.[k] ?? REDACTED,
    after: desired.config[k] ?? null,
  }));
}

function fail(path: string, message: string): never {
  throw new SluiceError("ARTIFACT_INVALID", `${path}: ${message}`, { evidence: { path } });
}

function str(value: unknown, path: string): string {
  if (typeof value !== "string" || value.length === 0) fail(path, "must be a non-empty string");
  return value;
}

function stringMap(value: unknown, path: string): Record<string, string> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    fail(path, "must be an object");
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== "string") fail(`${path}.${k}`, "must be a string");
  }
  return value as Record<string, string>;
}

/**
 * Check that a value is a well-formed ConnectorArtifact and return it typed. Throws
 * `ARTIFACT_INVALID` naming the first offending path.
 *
 * @example
 * ```ts
 * import { validateConnectorArtifact } from "./connector.ts";
 * function read(text: string) {
 *   return validateConnectorArtifact(JSON.parse(text));
 * }
 * ```
 */
export function validateConnectorArtifact(value: unknown): ConnectorArtifact {
  if (value === null || typeof value !== "object" || Array.isArray(value)) fail("$", "object");
  const a = value as Record<string, unknown>;
  for (const k of Object.keys(a)) {
    if (!(CONNECTOR_ARTIFACT_FIELDS as readonly string[]).includes(k)) fail(`$.${k}`, "unknown");
  }
  for (const k of CONNECTOR_ARTIFACT_FIELDS) if (!(k in a)) fail(`$.${k}`, "missing field");
  if (a.format !== CONNECTOR_ARTIFACT_FORMAT) {
    fail("$.format", `must be '${CONNECTOR_ARTIFACT_FORMAT}'`);
  }
  if (a.version !== CONNECTOR_ARTIFACT_VERSION) {
    fail("$.version", `must be ${CONNECTOR_ARTIFACT_VERSION}`);
  }
  const project = str(a.project, "$.project");
  const environment = a.environment === null ? null : str(a.environment, "$.environment");
  const connector = str(a.connector, "$.connector");
  const name = str(a.name, "$.name");
  if (name !== connectorName(project, environment, connector)) {
    fail("$.name", `must be '${connectorName(project, environment, connector)}'`);
  }
  str(a.cluster, "$.cluster");
  if (a.kind !== "source" && a.kind !== "sink") fail("$.kind", "must be 'source' or 'sink'");
  if (!Array.isArray(a.topics) || a.topics.length === 0) fail("$.topics", "non-empty array");
  const topics = a.topics.map((t, i) => str(t, `$.topics[${i}]`));
  if (topics.join("\n") !== [...new Set(topics)].sort().join("\n")) {
    fail("$.topics", "must be sorted and distinct");
  }
  const config = stringMap(a.config, "$.config");
  if (config.name !== name) fail("$.config.name", `must be '${name}'`);
  str(config["connector.class"], '$.config["connector.class"]');
  if (a.kind === "sink" && config.topics !== topics.join(",")) {
    fail("$.config.topics", `must be '${topics.join(",")}'`);
  }
  for (const [k, v] of Object.entries(config)) {
    const problem = parseSecretRefs(v).problem;
    if (problem) fail(`$.config.${k}`, problem.message);
  }
  const secrets = stringMap(a.secrets, "$.secrets");
  const referenced = referencedVariables(config);
  if (Object.keys(secrets).sort().join("\n") !== referenced.join("\n")) {
    fail("$.secrets", `must hold exactly the referenced variables (${referenced.join(", ")})`);
  }
  for (const [k, v] of Object.entries(secrets)) {
    if (!/^hmac-sha256:[0-9a-f]{64}$/.test(v)) fail(`$.secrets.${k}`, "must be hmac-sha256:<hex>");
  }
  if (referenced.length > 0) {
    if (typeof a.secret_key_id !== "string" || !/^[0-9a-f]{16}$/.test(a.secret_key_id)) {
      fail("$.secret_key_id", "must be 16 hex digits when there are secrets");
    }
  } else if (a.secret_key_id !== null) fail("$.secret_key_id", "must be null without secrets");
  const o = a.ownership as Record<string, unknown> | null;
  if (
    o === null || typeof o !== "object" || Object.keys(o).sort().join(",") !==
      "environment,managed_by,project" ||
    o.managed_by !== "sluice" ||
    o.project !== project || o.environment !== environment
  ) fail("$.ownership", "must be { managed_by: 'sluice', project, environment } of the artifact");
  return value as ConnectorArtifact;
}
