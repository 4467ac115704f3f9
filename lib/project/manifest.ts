/**
 * The project manifest `sluice.yaml` (format: docs/project-format.md). Parsing is strict:
 * unknown keys, wrong types and malformed values are errors with `file:line:col`, a caret
 * excerpt and a stable `MANIFEST_*` code. Environments are overlays over the top-level
 * settings; a project without `environments` has the environment `null`.
 *
 * @example
 * ```ts
 * import { parseManifest } from "./manifest.ts";
 * const manifest = parseManifest(await Deno.readTextFile("sluice.yaml"), "sluice.yaml");
 * console.log(manifest.project, manifest.environment);
 * ```
 * @module
 */
import { parseDocument } from "npm:yaml@2.9.1";
import { type ErrorCode, SluiceError } from "../errors.ts";
import type { SourceLocation } from "../errors.ts";
import { SourceFile } from "../expr/diagnostic.ts";
import type { Span } from "../expr/diagnostic.ts";
import { COLUMN_TYPES, isColumnType } from "../expr/schema.ts";
import type { ColumnType, SchemaField } from "../expr/schema.ts";
import { YamlReader } from "./_yaml_reader.ts";
import {
  checkOverlayClusters,
  mergeConnectClusters,
  readConnectors,
  readConnectSettings,
  readLifecycle,
} from "./connectors.ts";
import type {
  ConnectClusterDecl,
  ConnectorDecl,
  ConnectorRemovalDecl,
  ConnectSettings,
} from "./connectors.ts";
import type { MapEntry, YNode } from "./_yaml_reader.ts";
import { readRunnerRemovals, type RunnerRemovalDecl } from "./removals.ts";
import { type KafkaSecurity, PLAINTEXT, readKafkaSecurity } from "./kafka_security.ts";
import {
  type DockerConfig,
  type DockerEndpoint,
  type DockerSettings,
  readDockerSettings,
} from "./docker_security.ts";
import { MAX_INSTANCES, type Placement, placementCapacity } from "./placement.ts";
import { OVERRIDE_ROOT, readSettingsOverride, type SettingsOverride } from "./settings_override.ts";
import {
  isBootstrap,
  isColumnName,
  isEnvVarName,
  isImmutableImage,
  isName,
  isNetworkName,
  isTopicName,
} from "./names.ts";

export type { ConnectClusterDecl, ConnectorDecl, ConnectorRemovalDecl } from "./connectors.ts";

/** Kafka addresses: one for the CLI on the host, one for containers on the network. */
export interface KafkaAddresses {
  bootstrapHost: string;
  bootstrapInternal: string;
}

/** Where deployment state lives. A PostgreSQL DSN is read from the named env variable. */
export type StateBackendConfig =
  | { backend: "local"; dir: string }
  | { backend: "postgres"; dsnEnv: string };

/** The settings holding an address sluice connects to, whose place in sluice.yaml is kept. */
export type AddressSetting = "kafka.bootstrap_host" | "kafka.bootstrap_internal" | "state.dsn_env";

/**
 * Where the effective value of an {@link AddressSetting} is written: the key path as written
 * (`kafka.bootstrap_host`, or `environments.prod.kafka.bootstrap_host` when the chosen
 * environment overrides it) and the value's position. An unreachable provider's error names it.
 */
export interface SettingSource {
  setting: string;
  /** Where in sluice.yaml; absent for a setting given in code (`settings.kafka.bootstrap_host`). */
  location?: SourceLocation;
}

/** Initial-offset policy for a new consumer group. */
export type InitialOffsets = "earliest" | "latest";

/** A declared input topic with its record schema. */
export interface SourceDecl {
  name: string;
  /** `managed`: sluice creates and owns the topic; `external`: it must already exist. */
  kind: "managed" | "external";
  topic: string;
  /** Partitions of a managed topic; null for an external one. */
  partitions: number | null;
  schema: SchemaField[];
  span: Span;
}

/** What a model does with a record it cannot decode (docs/project-format.md). */
export type OnInvalid = "stop" | "dead_letter";

/** The dead-letter topic of a model with `on_invalid: dead_letter`: managed like its output. */
export interface DeadLetterDecl {
  topic: string;
  /** Partitions of the dead-letter topic (default 1). */
  partitions: number;
  span: Span;
}

/** A SQL model and its output topic. */
export interface ModelDecl {
  name: string;
  /** The SQL file, relative to the project directory. */
  sql: string;
  outputTopic: string;
  /**
   * Partitions of the output topic, or null when not written: then the model's source must
   * be managed and its partition count is used (settled by `loadProject`).
   */
  outputPartitions: number | null;
  /** `stop` (the default: the runner stops at the record) or `dead_letter`. */
  onInvalid: OnInvalid;
  /** The dead-letter topic; set exactly when `onInvalid` is `dead_letter`. */
  deadLetter: DeadLetterDecl | null;
  /** `instances:` (default 1): runners of the one application ID, placed by `Manifest.placement`. */
  instances: number;
  /** Where `instances` is written, or null when it is the default. */
  instancesSpan: Span | null;
  span: Span;
  sqlSpan: Span;
  outputSpan: Span;
}

/** A column a downstream application reads. */
export interface ExternalColumn {
  name: string;
  type: ColumnType;
  span: Span;
}

/** A downstream application declaration: metadata only, never mutated. */
export interface ExternalDecl {
  name: string;
  consumes: string;
  /**
   * The Kafka consumer group it reads with (`group_id:`), or null when that is its name. A
   * plan marks a live group on the model's output topic as declared when the IDs match.
   */
  groupId: string | null;
  columns: ExternalColumn[];
  span: Span;
  consumesSpan: Span;
}

/** A parsed manifest with the chosen environment's overlay applied. */
export interface Manifest {
  /** The manifest as a located text (for diagnostics that point into it). */
  source: SourceFile;
  project: string;
  /** The chosen environment, or null for a project that declares none. */
  environment: string | null;
  /** Every declared environment name, in declaration order. */
  environments: string[];
  kafka: KafkaAddresses;
  /** How sluice and its runners authenticate to Kafka (`kafka.security`; PLAINTEXT when absent). */
  kafkaSecurity: KafkaSecurity;
  /**
   * The Docker daemon single-instance models run on (`docker.endpoint`, or the first of
   * `docker.endpoints`), or null: the Docker CLI's variables.
   */
  docker: DockerSettings | null;
  /**
   * The daemons a model's instances are placed on and the rule (`docker.endpoints`,
   * `docker.placement`); no endpoints: the one daemon above. An override's `docker.endpoint`
   * replaces `docker:` whole: one daemon, `spread`.
   */
  placement: Placement;
  /** `docker.endpoints` as read (their names are `placement.endpoints`); empty for one daemon. */
  dockerEndpoints: DockerEndpoint[];
  /** Where each address setting's effective value is written (for errors that name it). */
  addressSources: Partial<Record<AddressSetting, SettingSource>>;
  network: string;
  image: string;
  initialOffsets: InitialOffsets;
  state: StateBackendConfig;
  sources: SourceDecl[];
  models: ModelDecl[];
  externals: ExternalDecl[];
  /** Declared Kafka Connect clusters, with the chosen environment's addresses. */
  connect: ConnectClusterDecl[];
  /** Desired connectors (the same in every environment). */
  connectors: ConnectorDecl[];
  /**
   * Explicit connector removals (`lifecycle.connector_removals`), every environment's; each
   * applies only where `environment` equals the manifest's.
   */
  connectorRemovals: ConnectorRemovalDecl[];
  /**
   * The settings override given in code (`openProject({ settings })`), layered over the
   * environment's values above; absent when none (or an empty one) was given.
   */
  override?: AppliedOverride;
  /**
   * Explicit runner removals (`lifecycle.runner_removals`): the models whose runners the plan
   * takes down (each no longer under `models:`).
   */
  runnerRemovals: RunnerRemovalDecl[];
}

/** A settings override as applied: what the plan's source hash binds, and the Docker endpoint. */
export interface AppliedOverride {
  /** The override's canonical text (bound into the plan's source hash). */
  canonical: string;
  /** The Docker daemon the override names, or null (`$DOCKER_HOST` or the default socket). */
  dockerEndpoint: string | null;
  /** TLS to that daemon (`settings.docker.tls`: the variables holding the PEM paths), or null. */
  dockerTls: DockerSettings["tls"];
}

/** Options of {@link parseManifest}. */
export interface ManifestOptions {
  /**
   * A typed override of the chosen environment's settings, layered last (over the top level and
   * the environment's overlay); its problems are reported at their key path (`settings.*`).
   */
  settings?: SettingsOverride;
  /**
   * The environment to apply. Required (non-null) when the manifest declares
   * environments; must be null/absent when it declares none.
   */
  environment?: string | null;
}

const TOP_KEYS = [
  "project",
  "kafka",
  "network",
  "image",
  "initial_offsets",
  "state",
  "sources",
  "models",
  "externals",
  "connect",
  "connectors",
  "lifecycle",
  "environments",
  "docker",
];
/** The settings an environment overlay may change. */
const OVERLAY_KEYS = [
  "kafka",
  "network",
  "image",
  "initial_offsets",
  "state",
  "connect",
  "docker",
];

interface Settings {
  /** The kafka map or one of its keys was present but invalid (already reported). */
  kafkaInvalid?: boolean;
  kafka: Partial<KafkaAddresses>;
  /** `kafka.security` as written here (an environment's replaces the top-level one whole). */
  kafkaSecurity?: KafkaSecurity;
  /** Where the address settings read here are written. */
  at: Partial<Record<AddressSetting, SettingSource>>;
  network?: string;
  image?: string;
  initialOffsets?: InitialOffsets;
  state?: StateBackendConfig;
  connect?: ConnectSettings;
  /** `docker:` as written here (an environment's replaces the top-level one whole). */
  docker?: DockerConfig;
}

/**
 * Parse and validate a manifest. Throws the only error, or `MANIFEST_INVALID` whose
 * `evidence.diagnostics` lists every error when there are several.
 * @example
 * ```ts
 * const m = parseManifest(await Deno.readTextFile("sluice.yaml"), "sluice.yaml", { environment: "prod" });
 * console.log(m.kafka.bootstrapInternal);
 * ```
 */
export function parseManifest(
  text: string,
  file: string,
  options: ManifestOptions = {},
): Manifest {
  const errors = readManifest(text, file, options);
  if (errors.manifest) return errors.manifest;
  throw combineErrors(errors.errors, "MANIFEST_INVALID");
}

/** Several errors as one: the error itself when there is one, else a combined error. */
export function combineErrors(errors: SluiceError[], code: ErrorCode): SluiceError {
  if (errors.length === 1) return errors[0];
  return new SluiceError(
    code,
    `${errors.length} problems:\n${errors.map((e) => `error[${e.code}]: ${e.message}`).join("\n")}`,
    { evidence: { diagnostics: errors.map((e) => e.toJSON()) } },
  );
}

/**
 * Parse and validate a manifest, returning every error instead of throwing (used by
 * `sluice validate` to report all problems at once).
 */
export function readManifest(
  text: string,
  file: string,
  options: ManifestOptions = {},
): { manifest: Manifest | null; errors: SluiceError[] } {
  const source = new SourceFile(file, text);
  const r = new YamlReader(source);
  const whole: Span = { start: 0, end: Math.max(1, Math.min(text.length, 1)) };
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true, version: "1.2" });
  for (const e of doc.errors) {
    const code = e.code === "DUPLICATE_KEY" ? "MANIFEST_DUPLICATE_KEY" : "MANIFEST_YAML_SYNTAX";
    const message = e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
    r.error(code, `invalid YAML: ${message}`, { start: e.pos[0], end: e.pos[1] });
  }
  if (r.errors.length > 0) return { manifest: null, errors: sortErrors(r.errors) };
  const top = r.map(doc.contents, "sluice.yaml", TOP_KEYS, whole);
  if (!top) return { manifest: null, errors: r.errors };

  const projectEntry = r.required(top, "project", "sluice.yaml", whole);
  const project = projectEntry ? nameValue(r, projectEntry, "project") : null;

  const base = readSettings(r, top, "sluice.yaml");
  const environments: string[] = [];
  let environment: string | null = null;
  let overlay: Settings = { kafka: {}, at: {} };
  const envEntry = top.get("environments");
  const requested = options.environment ?? null;
  if (envEntry) {
    const envMap = r.map(envEntry.value, "environments", ["*"], envEntry.keySpan);
    if (envMap) {
      if (envMap.size === 0) {
        r.error(
          "MANIFEST_INVALID_VALUE",
          "environments is empty; omit it for a single-environment project",
          r.valueSpan(envEntry),
        );
      }
      for (const entry of envMap.values()) {
        r.nameKey(entry, "environment name");
        environments.push(entry.key);
        const where = `environments.${entry.key}`;
        if (entry.value === null || entry.value === undefined) continue; // no overrides
        const map = r.map(entry.value, where, OVERLAY_KEYS, entry.keySpan);
        const settings = map ? readSettings(r, map, where) : { kafka: {}, at: {} };
        checkOverlayClusters(r, base.connect, settings.connect, entry.key);
        if (entry.key === requested) overlay = settings;
      }
      if (requested === null && environments.length > 0) {
        r.error(
          "MANIFEST_ENVIRONMENT_REQUIRED",
          `the project declares environments (${environments.join(", ")}); choose one with --env`,
          envEntry.keySpan,
          { environments },
        );
      } else if (requested !== null && !environments.includes(requested)) {
        r.error(
          "MANIFEST_UNKNOWN_ENVIRONMENT",
          `unknown environment '${requested}'; declared: ${environments.join(", ")}`,
          envEntry.keySpan,
          { environment: requested, environments },
        );
      } else environment = requested;
    }
  } else if (requested !== null) {
    r.error(
      "MANIFEST_UNKNOWN_ENVIRONMENT",
      `unknown environment '${requested}': the project declares no environments`,
      projectEntry?.keySpan ?? whole,
      { environment: requested, environments: [] },
    );
  }

  // configuration in code: the last layer, read by the same reader, located by key path
  const given = options.settings === undefined
    ? null
    : readSettingsOverride(options.settings, (or, map) => readSettings(or, map, OVERRIDE_ROOT));
  const forced: Settings = given?.settings ?? { kafka: {}, at: {} };
  for (const at of Object.values(forced.at)) delete at.location; // not a place in a file
  const kafka: Partial<KafkaAddresses> = { ...base.kafka, ...overlay.kafka, ...forced.kafka };
  const at = (key: string) => top.get(key.split(".")[0])?.keySpan ?? whole;
  const where = environment === null ? "sluice.yaml" : `sluice.yaml (environment ${environment})`;
  const missing = (key: string) =>
    r.error("MANIFEST_MISSING_KEY", `${where} is missing required key '${key}'`, at(key), {
      key,
    });
  const layered = { ...overlay.kafka, ...forced.kafka };
  if (!top.has("kafka") && !layered.bootstrapHost && !layered.bootstrapInternal) {
    missing("kafka");
  } else {
    const invalid = base.kafkaInvalid || overlay.kafkaInvalid;
    if (kafka.bootstrapHost === undefined && !invalid) missing("kafka.bootstrap_host");
    if (kafka.bootstrapInternal === undefined && !invalid) {
      missing("kafka.bootstrap_internal");
    }
  }
  const network = forced.network ?? overlay.network ?? base.network;
  const image = forced.image ?? overlay.image ?? base.image;
  const initialOffsets = overlay.initialOffsets ?? base.initialOffsets;
  const state = forced.state ?? overlay.state ?? base.state;
  // each address is where its effective value came from: the last layer that sets it
  const addressSources: Partial<Record<AddressSetting, SettingSource>> = {
    "kafka.bootstrap_host": forced.at["kafka.bootstrap_host"] ??
      overlay.at["kafka.bootstrap_host"] ?? base.at["kafka.bootstrap_host"],
    "kafka.bootstrap_internal": forced.at["kafka.bootstrap_internal"] ??
      overlay.at["kafka.bootstrap_internal"] ?? base.at["kafka.bootstrap_internal"],
    "state.dsn_env": forced.state
      ? forced.at["state.dsn_env"]
      : overlay.state
      ? overlay.at["state.dsn_env"]
      : base.at["state.dsn_env"],
  };
  for (const key of Object.keys(addressSources) as AddressSetting[]) {
    if (addressSources[key] === undefined) delete addressSources[key];
  }
  for (
    const [key, value] of [["network", network], ["image", image], [
      "initial_offsets",
      initialOffsets,
    ], ["state", state]] as const
  ) {
    if (value === undefined && !top.has(key)) missing(key);
  }

  const sources = readSources(r, top.get("sources"), whole);
  if (!top.has("sources")) missing("sources");
  const models = readModels(r, top.get("models"));
  if (!top.has("models")) missing("models");
  const docker = overlay.docker ?? base.docker ?? null;
  // an override's docker.endpoint replaces docker: whole: one daemon, spread
  const placed = given?.dockerEndpoint ? null : docker;
  const dockerEndpoints = placed?.endpoints ?? [];
  const placement: Placement = {
    endpoints: dockerEndpoints.map((e) => e.name),
    rule: placed?.placement ?? "spread",
  };
  checkPlacement(r, models, placement, environment);
  const externals = readExternals(r, top.get("externals"), models);
  checkTopics(r, sources, models);
  const connect = mergeConnectClusters(r, base.connect, overlay.connect, where);
  const connectors = readConnectors(r, top.get("connectors"), {
    clusters: connect,
    sourceTopics: new Set(sources.map((s) => s.topic)),
    modelTopics: new Set(models.map((m) => m.outputTopic)),
  });
  const connectorRemovals = readLifecycle(r, top.get("lifecycle"), {
    project,
    environments,
    clusters: connect,
    connectors,
    declaredConnectors: new Set(declaredKeys(top.get("connectors"))),
  });
  const runnerRemovals = readRunnerRemovals(
    r,
    top.get("lifecycle"),
    new Set(declaredKeys(top.get("models"))),
  );

  if (given && given.errors.length > 0) {
    return { manifest: null, errors: [...sortErrors(r.errors), ...given.errors] };
  }
  if (
    r.errors.length > 0 || project === null || kafka.bootstrapHost === undefined ||
    kafka.bootstrapInternal === undefined || network === undefined || image === undefined ||
    initialOffsets === undefined || state === undefined
  ) {
    if (r.errors.length === 0) {
      r.error("MANIFEST_INVALID", "sluice.yaml is incomplete", whole);
    }
    return { manifest: null, errors: sortErrors(r.errors) };
  }
  return {
    manifest: {
      source,
      project,
      environment,
      environments,
      kafka: { bootstrapHost: kafka.bootstrapHost, bootstrapInternal: kafka.bootstrapInternal },
      kafkaSecurity: forced.kafkaSecurity ?? overlay.kafkaSecurity ?? base.kafkaSecurity ??
        PLAINTEXT,
      docker: docker?.daemon ?? null,
      placement,
      dockerEndpoints,
      addressSources,
      network,
      image,
      initialOffsets,
      state,
      sources,
      models,
      externals,
      connect,
      connectors,
      connectorRemovals,
      runnerRemovals,
      // an override that sets nothing ({}) is none: the same plan either way
      ...(given && given.canonical.trim() !== "{}"
        ? {
          override: {
            canonical: given.canonical,
            dockerEndpoint: given.dockerEndpoint,
            dockerTls: given.dockerTls,
          },
        }
        : {}),
    },
    errors: [],
  };
}

/** The keys of a mapping entry's value (none when it is not a mapping); reports nothing. */
function declaredKeys(entry: MapEntry | undefined): string[] {
  const items = (entry?.value as { items?: Array<{ key?: { value?: unknown } }> } | null)?.items;
  return (items ?? []).map((p) => p.key?.value).filter((k): k is string => typeof k === "string");
}

/** Errors in document order. */
function sortErrors(errors: SluiceError[]): SluiceError[] {
  const at = (e: SluiceError) => (e.location?.line ?? 0) * 1e6 + (e.location?.column ?? 0);
  return [...errors].sort((a, b) => at(a) - at(b));
}

function nameValue(r: YamlReader, entry: MapEntry, what: string): string | null {
  const value = r.string(entry, what);
  if (value === null) return null;
  if (!isName(value)) {
    r.error(
      "MANIFEST_INVALID_NAME",
      `${what} '${value}' must match [a-z][a-z0-9_]* (lower-case letters, digits, '_'; at most 64 characters)`,
      r.valueSpan(entry),
    );
    return null;
  }
  return value;
}

function readSettings(r: YamlReader, map: Map<string, MapEntry>, where: string): Settings {
  const settings: Settings = { kafka: {}, at: {} };
  // the key path as written: top-level, or under the environment being read
  const prefix = where === "sluice.yaml" ? "" : `${where}.`;
  const source = (setting: AddressSetting, entry: MapEntry): SettingSource => ({
    setting: `${prefix}${setting}`,
    location: r.source.locate(r.valueSpan(entry).start),
  });
  const kafka = map.get("kafka");
  if (kafka) {
    const before = r.errors.length;
    const km = r.map(
      kafka.value,
      `${where}: kafka`,
      ["bootstrap_host", "bootstrap_internal", "security"],
      kafka.keySpan,
    );
    const security = km?.get("security");
    if (security) {
      const read = readKafkaSecurity(r, security, `${prefix}kafka.security`);
      if (read) settings.kafkaSecurity = read;
    }
    if (km) {
      for (
        const [key, field] of [["bootstrap_host", "bootstrapHost"], [
          "bootstrap_internal",
          "bootstrapInternal",
        ]] as const
      ) {
        const entry = km.get(key);
        if (!entry) continue;
        const value = r.string(entry, `kafka.${key}`);
        if (value === null) continue;
        if (!isBootstrap(value)) {
          r.error(
            "MANIFEST_INVALID_VALUE",
            `kafka.${key} '${value}' must be host:port[,host:port...]`,
            r.valueSpan(entry),
          );
          continue;
        }
        settings.kafka[field] = value;
        settings.at[`kafka.${key}`] = source(`kafka.${key}`, entry);
      }
    }
    settings.kafkaInvalid = r.errors.length > before;
  }
  const network = map.get("network");
  if (network) {
    const value = r.string(network, "network");
    if (value !== null) {
      if (isNetworkName(value)) settings.network = value;
      else {
        r.error(
          "MANIFEST_INVALID_VALUE",
          `network '${value}' is not a valid Docker network name`,
          r.valueSpan(network),
        );
      }
    }
  }
  const image = map.get("image");
  if (image) {
    const value = r.string(image, "image");
    if (value !== null) {
      if (isImmutableImage(value)) settings.image = value;
      else {
        r.error(
          "MANIFEST_INVALID_IMAGE",
          `image '${value}' must be an immutable image ID 'sha256:<64 hex>' or a digest reference 'name@sha256:<64 hex>' (tags are mutable; 'sluice runtime build' prints the ID)`,
          r.valueSpan(image),
          { image: value },
        );
      }
    }
  }
  const offsets = map.get("initial_offsets");
  if (offsets) {
    const value = r.string(offsets, "initial_offsets");
    if (value !== null) {
      if (value === "earliest" || value === "latest") settings.initialOffsets = value;
      else {
        r.error(
          "MANIFEST_INVALID_VALUE",
          `initial_offsets must be 'earliest' or 'latest', found '${value}'`,
          r.valueSpan(offsets),
        );
      }
    }
  }
  const state = map.get("state");
  if (state) {
    settings.state = readState(r, state, (dsnEnv) => {
      settings.at["state.dsn_env"] = source("state.dsn_env", dsnEnv);
    }) ?? undefined;
  }
  const connect = map.get("connect");
  if (connect) settings.connect = readConnectSettings(r, connect, where);
  const docker = map.get("docker");
  if (docker) settings.docker = readDockerSettings(r, docker, prefix) ?? undefined;
  return settings;
}

/** Read `state:`; `located` receives the `dsn_env` entry of a valid postgres backend. */
function readState(
  r: YamlReader,
  entry: MapEntry,
  located: (dsnEnv: MapEntry) => void,
): StateBackendConfig | null {
  const map = r.map(entry.value, "state", ["backend", "dir", "dsn_env"], entry.keySpan);
  if (!map) return null;
  const backendEntry = r.required(map, "backend", "state", entry.keySpan);
  if (!backendEntry) return null;
  const backend = r.string(backendEntry, "state.backend");
  if (backend === "local") {
    if (map.has("dsn_env")) {
      r.error(
        "MANIFEST_UNKNOWN_KEY",
        "state.dsn_env applies to the postgres backend only",
        map.get("dsn_env")!.keySpan,
      );
    }
    const dirEntry = map.get("dir");
    if (!dirEntry) return { backend: "local", dir: ".sluice/state" };
    const dir = r.string(dirEntry, "state.dir");
    if (dir === null) return null;
    if (dir.length === 0 || dir.includes("\0")) {
      r.error(
        "MANIFEST_INVALID_VALUE",
        "state.dir must be a non-empty path",
        r.valueSpan(dirEntry),
      );
      return null;
    }
    return { backend: "local", dir };
  }
  if (backend === "postgres") {
    if (map.has("dir")) {
      r.error(
        "MANIFEST_UNKNOWN_KEY",
        "state.dir applies to the local backend only",
        map.get("dir")!.keySpan,
      );
    }
    const envEntry = r.required(map, "dsn_env", "state (backend postgres)", backendEntry.keySpan);
    if (!envEntry) return null;
    const dsnEnv = r.string(envEntry, "state.dsn_env");
    if (dsnEnv === null) return null;
    if (!isEnvVarName(dsnEnv)) {
      r.error(
        "MANIFEST_INVALID_VALUE",
        `state.dsn_env must name an environment variable (the DSN itself never goes in sluice.yaml), found '${dsnEnv}'`,
        r.valueSpan(envEntry),
      );
      return null;
    }
    located(envEntry);
    return { backend: "postgres", dsnEnv };
  }
  if (backend !== null) {
    r.error(
      "MANIFEST_INVALID_VALUE",
      `state.backend must be 'local' or 'postgres', found '${backend}'`,
      r.valueSpan(backendEntry),
    );
  }
  return null;
}

function readSchema(r: YamlReader, entry: MapEntry, where: string): SchemaField[] {
  const items = r.seq(entry.value, `${where}.schema`, entry.keySpan);
  if (!items) return [];
  if (items.length === 0) {
    r.error(
      "MANIFEST_INVALID_VALUE",
      `${where}.schema must list at least one field`,
      r.valueSpan(entry),
    );
  }
  const fields: SchemaField[] = [];
  const seen = new Set<string>();
  items.forEach((item: YNode, i: number) => {
    const at = r.span(item, entry.keySpan);
    const map = r.map(item, `${where}.schema[${i}]`, ["name", "type", "nullable"], at);
    if (!map) return;
    const nameEntry = r.required(map, "name", `${where}.schema[${i}]`, at);
    const typeEntry = r.required(map, "type", `${where}.schema[${i}]`, at);
    const name = nameEntry ? r.string(nameEntry, "a field name") : null;
    if (name !== null && nameEntry) {
      if (!isColumnName(name)) {
        r.error(
          "MANIFEST_INVALID_NAME",
          `field name '${name}' must match [A-Za-z_][A-Za-z0-9_]*`,
          r.valueSpan(nameEntry),
        );
      } else if (seen.has(name)) {
        r.error(
          "MANIFEST_DUPLICATE_NAME",
          `field '${name}' is declared twice in ${where}.schema`,
          r.valueSpan(nameEntry),
        );
      }
      seen.add(name);
    }
    const type = typeEntry ? columnType(r, typeEntry) : null;
    const nullableEntry = map.get("nullable");
    const nullable = nullableEntry ? r.boolean(nullableEntry, "nullable") : false;
    if (name !== null && type !== null && nullable !== null) fields.push({ name, type, nullable });
  });
  return fields;
}

function columnType(r: YamlReader, entry: MapEntry): ColumnType | null {
  const value = r.string(entry, "type");
  if (value === null) return null;
  if (isColumnType(value)) return value;
  const upper = value.toUpperCase();
  const hint = isColumnType(upper) ? ` (write it upper-case: ${upper})` : "";
  r.error(
    "MANIFEST_INVALID_TYPE",
    `type '${value}' must be one of ${COLUMN_TYPES.join(", ")}${hint}`,
    r.valueSpan(entry),
  );
  return null;
}

function readSources(r: YamlReader, entry: MapEntry | undefined, whole: Span): SourceDecl[] {
  if (!entry) return [];
  const map = r.map(entry.value, "sources", ["*"], entry.keySpan);
  if (!map) return [];
  if (map.size === 0) {
    r.error(
      "MANIFEST_INVALID_VALUE",
      "sources must declare at least one source",
      r.valueSpan(entry),
    );
  }
  const out: SourceDecl[] = [];
  for (const src of map.values()) {
    const where = `sources.${src.key}`;
    r.nameKey(src, "source name");
    const m = r.map(
      src.value,
      where,
      ["kind", "topic", "partitions", "schema"],
      src.keySpan ?? whole,
    );
    if (!m) continue;
    const kindEntry = r.required(m, "kind", where, src.keySpan);
    const kindValue = kindEntry ? r.string(kindEntry, `${where}.kind`) : null;
    let kind: "managed" | "external" | null = null;
    if (kindValue === "managed" || kindValue === "external") kind = kindValue;
    else if (kindValue !== null && kindEntry) {
      r.error(
        "MANIFEST_INVALID_VALUE",
        `${where}.kind must be 'managed' or 'external', found '${kindValue}'`,
        r.valueSpan(kindEntry),
      );
    }
    const topicEntry = m.get("topic");
    let topic: string | null = src.key;
    if (topicEntry) {
      topic = r.string(topicEntry, `${where}.topic`);
      if (topic !== null && !isTopicName(topic)) {
        r.error(
          "MANIFEST_INVALID_TOPIC",
          `topic '${topic}' is not a valid Kafka topic name ([a-zA-Z0-9._-], at most 249 characters)`,
          r.valueSpan(topicEntry),
        );
        topic = null;
      }
    }
    const partEntry = m.get("partitions");
    let partitions: number | null = null;
    if (kind === "managed") {
      const pe = r.required(m, "partitions", `${where} (kind managed)`, src.keySpan);
      if (pe) partitions = r.integer(pe, `${where}.partitions`, 1, 10000);
    } else if (kind === "external" && partEntry) {
      r.error(
        "MANIFEST_UNKNOWN_KEY",
        `${where}.partitions applies to managed sources only (an external topic keeps its own)`,
        partEntry.keySpan,
      );
    }
    const schemaEntry = r.required(m, "schema", where, src.keySpan);
    const schema = schemaEntry ? readSchema(r, schemaEntry, where) : [];
    if (kind !== null && topic !== null) {
      out.push({ name: src.key, kind, topic, partitions, schema, span: src.keySpan });
    }
  }
  return out;
}

function readModels(r: YamlReader, entry: MapEntry | undefined): ModelDecl[] {
  if (!entry) return [];
  const map = r.map(entry.value, "models", ["*"], entry.keySpan);
  if (!map) return [];
  if (map.size === 0) {
    r.error("MANIFEST_INVALID_VALUE", "models must declare at least one model", r.valueSpan(entry));
  }
  const out: ModelDecl[] = [];
  for (const model of map.values()) {
    const where = `models.${model.key}`;
    r.nameKey(model, "model name");
    const m = r.map(
      model.value,
      where,
      ["sql", "output", "on_invalid", "dead_letter", "instances"],
      model.keySpan,
    );
    if (!m) continue;
    const sqlEntry = r.required(m, "sql", where, model.keySpan);
    const sql = sqlEntry ? r.string(sqlEntry, `${where}.sql`) : null;
    if (
      sql !== null && sqlEntry && (sql.length === 0 || sql.startsWith("/") || !sql.endsWith(".sql"))
    ) {
      r.error(
        "MANIFEST_INVALID_VALUE",
        `${where}.sql must be a relative path to a .sql file, found '${sql}'`,
        r.valueSpan(sqlEntry),
      );
    }
    const outEntry = r.required(m, "output", where, model.keySpan);
    let topic: string | null = null;
    let partitions: number | null = null;
    if (outEntry) {
      const om = r.map(
        outEntry.value,
        `${where}.output`,
        ["topic", "partitions"],
        outEntry.keySpan,
      );
      if (om) {
        const te = r.required(om, "topic", `${where}.output`, outEntry.keySpan);
        topic = te ? r.string(te, `${where}.output.topic`) : null;
        if (topic !== null && te && !isTopicName(topic)) {
          r.error(
            "MANIFEST_INVALID_TOPIC",
            `topic '${topic}' is not a valid Kafka topic name ([a-zA-Z0-9._-], at most 249 characters)`,
            r.valueSpan(te),
          );
          topic = null;
        }
        const pe = om.get("partitions");
        if (pe) partitions = r.integer(pe, `${where}.output.partitions`, 1, 10000);
      }
    }
    const invalid = readOnInvalid(r, m, where);
    const instancesEntry = m.get("instances");
    const instances = instancesEntry
      ? r.integer(instancesEntry, `${where}.instances`, 1, MAX_INSTANCES)
      : 1;
    if (sql !== null && topic !== null && sqlEntry && outEntry && invalid && instances !== null) {
      out.push({
        name: model.key,
        sql,
        outputTopic: topic,
        outputPartitions: partitions,
        onInvalid: invalid.onInvalid,
        deadLetter: invalid.deadLetter,
        instances,
        instancesSpan: instancesEntry ? r.valueSpan(instancesEntry) : null,
        span: model.keySpan,
        sqlSpan: r.valueSpan(sqlEntry),
        outputSpan: outEntry.keySpan,
      });
    }
  }
  return out;
}

/**
 * Every model's `instances` fits the environment's placement: under `spread` no two instances of
 * one model share a daemon, so N may not exceed the endpoints (docs/project-format.md,
 * "Instances").
 */
function checkPlacement(
  r: YamlReader,
  models: ModelDecl[],
  placement: Placement,
  environment: string | null,
): void {
  const capacity = placementCapacity(placement);
  const daemons = placement.endpoints.length === 0
    ? "one Docker daemon"
    : `${placement.endpoints.length} Docker endpoints (${placement.endpoints.join(", ")})`;
  const env = environment === null ? "" : ` of environment '${environment}'`;
  for (const m of models) {
    if (m.instances <= capacity || m.instancesSpan === null) continue;
    r.error(
      "MANIFEST_PLACEMENT",
      `models.${m.name}.instances: ${m.instances} instances cannot be spread over the ${daemons}` +
        `${env}: under 'placement: spread' no two instances of a model share a daemon; name more ` +
        "daemons under docker.endpoints, or allow sharing with 'docker.placement: shared'",
      m.instancesSpan,
      {
        model: m.name,
        instances: m.instances,
        endpoints: placement.endpoints,
        rule: placement.rule,
      },
    );
  }
}

/**
 * `on_invalid: stop | dead_letter` and, with `dead_letter`, `dead_letter: { topic, partitions }`.
 * Returns null when either is invalid (the error is reported).
 */
function readOnInvalid(
  r: YamlReader,
  m: Map<string, MapEntry>,
  where: string,
): { onInvalid: OnInvalid; deadLetter: DeadLetterDecl | null } | null {
  const oi = m.get("on_invalid");
  const dl = m.get("dead_letter");
  let onInvalid: OnInvalid = "stop";
  if (oi) {
    const value = r.string(oi, `${where}.on_invalid`);
    if (value === null) return null;
    if (value !== "stop" && value !== "dead_letter") {
      r.error(
        "MANIFEST_INVALID_VALUE",
        `${where}.on_invalid must be 'stop' or 'dead_letter', found '${value}'`,
        r.valueSpan(oi),
      );
      return null;
    }
    onInvalid = value;
  }
  if (onInvalid === "stop") {
    if (dl) {
      r.error(
        "MANIFEST_UNKNOWN_KEY",
        `${where}.dead_letter applies only with 'on_invalid: dead_letter'`,
        dl.keySpan,
      );
      return null;
    }
    return { onInvalid, deadLetter: null };
  }
  if (!dl) {
    r.error(
      "MANIFEST_MISSING_KEY",
      `${where}: 'on_invalid: dead_letter' needs a declared dead-letter topic ('dead_letter: { topic: NAME }')`,
      r.valueSpan(oi!),
      { key: `${where}.dead_letter` },
    );
    return null;
  }
  const dm = r.map(dl.value, `${where}.dead_letter`, ["topic", "partitions"], dl.keySpan);
  if (!dm) return null;
  const te = r.required(dm, "topic", `${where}.dead_letter`, dl.keySpan);
  if (!te) return null;
  const topic = r.string(te, `${where}.dead_letter.topic`);
  if (topic === null) return null;
  if (!isTopicName(topic)) {
    r.error(
      "MANIFEST_INVALID_TOPIC",
      `topic '${topic}' is not a valid Kafka topic name ([a-zA-Z0-9._-], at most 249 characters)`,
      r.valueSpan(te),
    );
    return null;
  }
  const pe = dm.get("partitions");
  const partitions = pe ? r.integer(pe, `${where}.dead_letter.partitions`, 1, 10000) : 1;
  if (partitions === null) return null;
  return { onInvalid, deadLetter: { topic, partitions, span: r.valueSpan(te) } };
}

function readExternals(
  r: YamlReader,
  entry: MapEntry | undefined,
  models: ModelDecl[],
): ExternalDecl[] {
  if (!entry) return [];
  const map = r.map(entry.value, "externals", ["*"], entry.keySpan);
  if (!map) return [];
  const out: ExternalDecl[] = [];
  for (const ext of map.values()) {
    const where = `externals.${ext.key}`;
    r.nameKey(ext, "external name");
    const m = r.map(ext.value, where, ["consumes", "columns", "group_id"], ext.keySpan);
    if (!m) continue;
    const ge = m.get("group_id");
    let groupId: string | null = null;
    if (ge) {
      groupId = r.string(ge, `${where}.group_id`);
      if (groupId !== null && !/^[A-Za-z0-9._-]{1,249}$/.test(groupId)) {
        r.error(
          "MANIFEST_INVALID_VALUE",
          `${where}.group_id '${groupId}' must be a consumer group ID of [A-Za-z0-9._-], at most 249 characters`,
          r.valueSpan(ge),
        );
        groupId = null;
      }
    }
    const ce = r.required(m, "consumes", where, ext.keySpan);
    const consumes = ce ? r.string(ce, `${where}.consumes`) : null;
    if (consumes !== null && ce && !models.some((model) => model.name === consumes)) {
      r.error(
        "MANIFEST_UNKNOWN_MODEL",
        `${where}.consumes names unknown model '${consumes}'; models: ${
          models.map((x) => x.name).join(", ")
        }`,
        r.valueSpan(ce),
        { model: consumes },
      );
    }
    const cols = r.required(m, "columns", where, ext.keySpan);
    const columns: ExternalColumn[] = [];
    const items = cols ? r.seq(cols.value, `${where}.columns`, cols.keySpan) : null;
    const seen = new Set<string>();
    items?.forEach((item: YNode, i: number) => {
      const at = r.span(item, cols!.keySpan);
      const cm = r.map(item, `${where}.columns[${i}]`, ["name", "type"], at);
      if (!cm) return;
      const ne = r.required(cm, "name", `${where}.columns[${i}]`, at);
      const te = r.required(cm, "type", `${where}.columns[${i}]`, at);
      const name = ne ? r.string(ne, "a column name") : null;
      const type = te ? columnType(r, te) : null;
      if (name !== null && ne && seen.has(name)) {
        r.error(
          "MANIFEST_DUPLICATE_NAME",
          `column '${name}' is listed twice in ${where}.columns`,
          r.valueSpan(ne),
        );
      }
      if (name !== null) seen.add(name);
      if (name !== null && type !== null && ne) columns.push({ name, type, span: r.valueSpan(ne) });
    });
    if (consumes !== null && ce) {
      out.push({
        name: ext.key,
        consumes,
        groupId,
        columns,
        span: ext.keySpan,
        consumesSpan: r.valueSpan(ce),
      });
    }
  }
  return out;
}

function checkTopics(r: YamlReader, sources: SourceDecl[], models: ModelDecl[]): void {
  const owners = new Map<string, string>();
  for (const s of sources) {
    const prior = owners.get(s.topic);
    if (prior) {
      r.error(
        "MANIFEST_TOPIC_CONFLICT",
        `topic '${s.topic}' of source '${s.name}' is also used by ${prior}`,
        s.span,
        { topic: s.topic },
      );
    } else owners.set(s.topic, `source '${s.name}'`);
  }
  for (const m of models) {
    const prior = owners.get(m.outputTopic);
    if (prior) {
      r.error(
        "MANIFEST_TOPIC_CONFLICT",
        `output topic '${m.outputTopic}' of model '${m.name}' is also used by ${prior}`,
        m.span,
        { topic: m.outputTopic },
      );
    } else owners.set(m.outputTopic, `model '${m.name}'`);
  }
  // a dead-letter topic is the model's own: never an input, an output or another's dead letters
  for (const m of models) {
    if (!m.deadLetter) continue;
    const prior = owners.get(m.deadLetter.topic);
    if (prior) {
      r.error(
        "MANIFEST_TOPIC_CONFLICT",
        `dead-letter topic '${m.deadLetter.topic}' of model '${m.name}' is also used by ${prior}`,
        m.deadLetter.span,
        { topic: m.deadLetter.topic },
      );
    } else owners.set(m.deadLetter.topic, `the dead letters of model '${m.name}'`);
  }
}
