/**
 * The Kafka Connect parts of `sluice.yaml` (docs/project-format.md, "Connectors"): the declared
 * Connect clusters (`connect:`, two REST addresses each, overlaid per environment like
 * `kafka:`), the desired connectors (`connectors:`) linked to the project's sources and models
 * through the topics they write or read, and the explicit removals
 * (`lifecycle.connector_removals:`), the only way a connector is ever deleted. Every malformed
 * entry is a located `MANIFEST_*` diagnostic; {@link parseManifest} calls these readers.
 *
 * @example
 * ```ts
 * import { parseManifest } from "./manifest.ts";
 * const m = parseManifest(await Deno.readTextFile("sluice.yaml"), "sluice.yaml");
 * for (const c of m.connectors) console.log(c.name, c.kind, c.cluster, c.topics);
 * ```
 * @module
 */
import type { Span } from "../expr/diagnostic.ts";
import { type ConnectSecurity, readConnectSecurity } from "./connect_security.ts";
import { connectorName } from "../artifact/connector.ts";
import { isSensitiveKey, literalCredential } from "../secrets.ts";
import { parseSecretRefs } from "../artifact/secret_ref.ts";
import type { YamlReader } from "./_yaml_reader.ts";
import type { MapEntry, YNode } from "./_yaml_reader.ts";
import { isConfigKey, isJavaClassName, isName, restEndpointProblem } from "./names.ts";

/** A declared Kafka Connect cluster: its REST API as the CLI and as containers reach it. */
export interface ConnectClusterDecl {
  alias: string;
  /** REST base URL for the sluice CLI on the host, e.g. `http://127.0.0.1:8083`. */
  restHost: string;
  /** REST base URL for containers on the project's network, e.g. `http://connect:8083`. */
  restInternal: string;
  /** How sluice reaches the REST API when it is secured (`security:`; absent: plainly). */
  security?: ConnectSecurity;
  span: Span;
}

/** A desired connector. */
export interface ConnectorDecl {
  /** Logical name (the key under `connectors:`). */
  name: string;
  /** Alias of a declared Connect cluster. */
  cluster: string;
  /** `source`: writes declared source topics; `sink`: reads models' output topics. */
  kind: "source" | "sink";
  /** The connector's Java class (`connector.class`). */
  className: string;
  /** The declared topics it writes (source) or reads (sink), in declaration order. */
  topics: string[];
  /** The user's configuration (without the keys sluice sets), references unresolved. */
  config: Record<string, string>;
  /** Where each configuration value is, for diagnostics found later (an unset variable). */
  configSpans: Record<string, Span>;
  span: Span;
}

/** An explicit removal of one exact, previously managed connector. */
export interface ConnectorRemovalDecl {
  /** The logical name the connector had. */
  logicalName: string;
  /** Its exact name on the Connect cluster. */
  connector: string;
  /** Alias of the declared Connect cluster it is on. */
  cluster: string;
  /**
   * The environment whose connector this is, read from the name (`sluice-<project>-<env>-…`);
   * null for a project without environments. A removal applies only in its environment.
   */
  environment: string | null;
  span: Span;
}

/** Connect cluster settings from `sluice.yaml` or one environment overlay (possibly partial). */
export interface ConnectSettings {
  clusters: Map<
    string,
    { restHost?: string; restInternal?: string; security?: ConnectSecurity; span: Span }
  >;
}

/** Configuration keys sluice sets itself, with the manifest key that says the same thing. */
const RESERVED: Record<string, string> = {
  "name": "the connector's name is derived: sluice-<project>[-<env>]-<connector>",
  "connector.class": "write the class as 'class:'",
};
const SINK_RESERVED: Record<string, string> = {
  "topics": "a sink reads the topics listed under 'topics:'",
  "topics.regex": "a sink reads exactly the topics listed under 'topics:'",
};

/** Read `connect:` (top level or an environment overlay). */
export function readConnectSettings(
  r: YamlReader,
  entry: MapEntry,
  where: string,
): ConnectSettings {
  const clusters: ConnectSettings["clusters"] = new Map();
  const map = r.map(entry.value, `${where}: connect`, ["*"], entry.keySpan);
  if (!map) return { clusters };
  for (const c of map.values()) {
    const at = `connect.${c.key}`;
    if (!r.nameKey(c, "Connect cluster alias")) continue;
    const m = r.map(
      c.value,
      `${where}: ${at}`,
      ["rest_host", "rest_internal", "security"],
      c.keySpan,
    );
    if (!m) continue;
    const out: {
      restHost?: string;
      restInternal?: string;
      security?: ConnectSecurity;
      span: Span;
    } = { span: c.keySpan };
    const security = m.get("security");
    if (security) {
      const prefix = where === "sluice.yaml" ? "" : `${where}.`;
      out.security = readConnectSecurity(r, security, `${prefix}${at}.security`) ?? undefined;
    }
    for (
      const [key, field] of [["rest_host", "restHost"], ["rest_internal", "restInternal"]] as const
    ) {
      const e = m.get(key);
      if (!e) continue;
      const value = r.string(e, `${at}.${key}`);
      if (value === null) continue;
      const problem = restEndpointProblem(value);
      if (problem !== null) {
        // the value may hold credentials: it is masked in the excerpt, absent from the evidence
        r.secretError("MANIFEST_INVALID_VALUE", `${at}.${key} ${problem}`, r.valueSpan(e), {
          key: `${at}.${key}`,
        });
        continue;
      }
      out[field] = value;
    }
    clusters.set(c.key, out);
  }
  return { clusters };
}

/** An overlay may only re-address clusters declared at the top level. */
export function checkOverlayClusters(
  r: YamlReader,
  base: ConnectSettings | undefined,
  overlay: ConnectSettings | undefined,
  environment: string,
): void {
  for (const [alias, c] of overlay?.clusters ?? []) {
    if (!base?.clusters.has(alias)) {
      r.error(
        "MANIFEST_UNKNOWN_CONNECT_CLUSTER",
        `environment ${environment} sets addresses of Connect cluster '${alias}', which the top-level 'connect:' does not declare`,
        c.span,
        { cluster: alias },
      );
    }
  }
}

/** The chosen environment's clusters: the top level, overlaid per address. */
export function mergeConnectClusters(
  r: YamlReader,
  base: ConnectSettings | undefined,
  overlay: ConnectSettings | undefined,
  where: string,
): ConnectClusterDecl[] {
  const out: ConnectClusterDecl[] = [];
  for (const [alias, b] of base?.clusters ?? []) {
    const o = overlay?.clusters.get(alias);
    const restHost = o?.restHost ?? b.restHost;
    const restInternal = o?.restInternal ?? b.restInternal;
    for (const [key, value] of [["rest_host", restHost], ["rest_internal", restInternal]]) {
      if (value === undefined) {
        r.error(
          "MANIFEST_MISSING_KEY",
          `${where}: connect.${alias} is missing required key '${key}'`,
          b.span,
          { key },
        );
      }
    }
    // an environment's security replaces the top-level one whole
    const security = o?.security ?? b.security;
    if (restHost !== undefined && restInternal !== undefined) {
      out.push({ alias, restHost, restInternal, ...(security ? { security } : {}), span: b.span });
    }
  }
  return out;
}

/** What connectors may refer to. */
export interface ConnectorContext {
  clusters: ConnectClusterDecl[];
  /** Declared source topics (source connectors write these). */
  sourceTopics: ReadonlySet<string>;
  /** Models' output topics (sink connectors read these). */
  modelTopics: ReadonlySet<string>;
}

/** Read `connectors:`. */
export function readConnectors(
  r: YamlReader,
  entry: MapEntry | undefined,
  ctx: ConnectorContext,
): ConnectorDecl[] {
  if (!entry) return [];
  const map = r.map(entry.value, "connectors", ["*"], entry.keySpan);
  if (!map) return [];
  const out: ConnectorDecl[] = [];
  for (const c of map.values()) {
    const where = `connectors.${c.key}`;
    r.nameKey(c, "connector name");
    const m = r.map(c.value, where, ["cluster", "kind", "class", "topics", "config"], c.keySpan);
    if (!m) continue;
    const cluster = clusterRef(r, r.required(m, "cluster", where, c.keySpan), where, ctx.clusters);
    const kindEntry = r.required(m, "kind", where, c.keySpan);
    const kindValue = kindEntry ? r.string(kindEntry, `${where}.kind`) : null;
    let kind: "source" | "sink" | null = null;
    if (kindValue === "source" || kindValue === "sink") kind = kindValue;
    else if (kindValue !== null && kindEntry) {
      r.error(
        "MANIFEST_INVALID_VALUE",
        `${where}.kind must be 'source' or 'sink', found '${kindValue}'`,
        r.valueSpan(kindEntry),
      );
    }
    const classEntry = r.required(m, "class", where, c.keySpan);
    let className = classEntry ? r.string(classEntry, `${where}.class`) : null;
    if (className !== null && classEntry && !isJavaClassName(className)) {
      r.error(
        "MANIFEST_INVALID_VALUE",
        `${where}.class '${className}' is not a Java class name`,
        r.valueSpan(classEntry),
      );
      className = null;
    }
    const topics = readTopics(r, r.required(m, "topics", where, c.keySpan), where, kind, ctx);
    const { config, spans } = readConfig(r, m.get("config"), where, kind);
    if (kind === "source" && topics !== null && config.topic !== undefined) {
      // a source names its topic in its own key; FileStream and many others call it `topic`
      if (!topics.includes(config.topic)) {
        r.error(
          "MANIFEST_CONNECTOR_TOPIC_MISMATCH",
          `${where}.config.topic '${config.topic}' is not among the topics the connector declares it writes (${
            topics.join(", ")
          })`,
          spans.topic,
          { topic: config.topic },
        );
      }
    }
    if (cluster !== null && kind !== null && className !== null && topics !== null) {
      out.push({
        name: c.key,
        cluster,
        kind,
        className,
        topics,
        config,
        configSpans: spans,
        span: c.keySpan,
      });
    }
  }
  return out;
}

function clusterRef(
  r: YamlReader,
  entry: MapEntry | null,
  where: string,
  clusters: ConnectClusterDecl[],
): string | null {
  if (!entry) return null;
  const alias = r.string(entry, `${where}.cluster`);
  if (alias === null) return null;
  if (!clusters.some((c) => c.alias === alias)) {
    r.error(
      "MANIFEST_UNKNOWN_CONNECT_CLUSTER",
      `${where}.cluster names unknown Connect cluster '${alias}'; declared under 'connect:': ${
        clusters.map((c) => c.alias).join(", ") || "none"
      }`,
      r.valueSpan(entry),
      { cluster: alias },
    );
    return null;
  }
  return alias;
}

function readTopics(
  r: YamlReader,
  entry: MapEntry | null,
  where: string,
  kind: "source" | "sink" | null,
  ctx: ConnectorContext,
): string[] | null {
  if (!entry) return null;
  const items = r.seq(entry.value, `${where}.topics`, entry.keySpan);
  if (!items) return null;
  if (items.length === 0) {
    r.error(
      "MANIFEST_INVALID_VALUE",
      `${where}.topics must list at least one topic`,
      r.valueSpan(entry),
    );
    return null;
  }
  const topics: string[] = [];
  let ok = true;
  items.forEach((item: YNode, i: number) => {
    const at = r.span(item, entry.keySpan);
    const topic = r.string({ key: `${i}`, keySpan: at, value: item }, `${where}.topics[${i}]`);
    if (topic === null) {
      ok = false;
      return;
    }
    if (topics.includes(topic)) {
      r.error("MANIFEST_DUPLICATE_NAME", `topic '${topic}' is listed twice in ${where}.topics`, at);
      ok = false;
      return;
    }
    topics.push(topic);
    if (kind === "source" && !ctx.sourceTopics.has(topic)) {
      r.error(
        "MANIFEST_UNKNOWN_TOPIC",
        `source connector ${where} writes '${topic}', which is no declared source's topic; sources' topics: ${
          [...ctx.sourceTopics].join(", ") || "none"
        }`,
        at,
        { topic },
      );
      ok = false;
    } else if (kind === "sink" && !ctx.modelTopics.has(topic)) {
      r.error(
        "MANIFEST_UNKNOWN_TOPIC",
        `sink connector ${where} reads '${topic}', which is no model's output topic; models' output topics: ${
          [...ctx.modelTopics].join(", ") || "none"
        }`,
        at,
        { topic },
      );
      ok = false;
    }
  });
  return ok ? topics : null;
}

function readConfig(
  r: YamlReader,
  entry: MapEntry | undefined,
  where: string,
  kind: "source" | "sink" | null,
): { config: Record<string, string>; spans: Record<string, Span> } {
  const config: Record<string, string> = {};
  const spans: Record<string, Span> = {};
  if (!entry) return { config, spans };
  const map = r.map(entry.value, `${where}.config`, ["*"], entry.keySpan);
  if (!map) return { config, spans };
  for (const e of map.values()) {
    const at = `${where}.config.${e.key}`;
    if (!isConfigKey(e.key)) {
      r.error(
        "MANIFEST_INVALID_NAME",
        `configuration key '${e.key}' must match [A-Za-z0-9_.-] (at most 255 characters)`,
        e.keySpan,
      );
      continue;
    }
    const reserved = RESERVED[e.key] ?? (kind === "sink" ? SINK_RESERVED[e.key] : undefined);
    if (reserved !== undefined) {
      r.error(
        "MANIFEST_RESERVED_CONFIG_KEY",
        `${at} is set by sluice: ${reserved}`,
        e.keySpan,
        { key: e.key },
      );
      continue;
    }
    const value = configValue(r, e, at);
    if (value === null) continue;
    const span = r.valueSpan(e);
    const scan = parseSecretRefs(value);
    if (scan.problem) {
      r.error(
        "MANIFEST_INVALID_SECRET_REFERENCE",
        `${at} holds an invalid secret reference: ${scan.problem.message}`,
        span,
      );
      continue;
    }
    if (isSensitiveKey(e.key) && scan.refs.length === 0) {
      // never echo the value: it is probably the secret itself
      r.secretError(
        "MANIFEST_LITERAL_SECRET",
        `${at} looks like a secret but is written literally; reference an environment variable instead: ${e.key}: \${env:NAME}`,
        span,
        { key: e.key },
      );
      continue;
    }
    const literal = literalCredential(value);
    if (literal) {
      r.secretError(
        "MANIFEST_LITERAL_SECRET",
        `${at} holds ${literal} written literally; reference an environment variable instead (\${env:NAME})`,
        span,
        { key: e.key },
      );
      continue;
    }
    config[e.key] = value;
    spans[e.key] = span;
  }
  return { config, spans };
}

/**
 * A configuration value: a string, or an integer or boolean written plainly (Connect stores
 * every value as a string; `tasks.max: 1` means "1"). Fractions and nulls are refused.
 */
function configValue(r: YamlReader, e: MapEntry, at: string): string | null {
  const node = e.value as { value?: unknown } | null | undefined;
  const v = node && typeof node === "object" && "value" in node ? node.value : undefined;
  if (typeof v === "number" && Number.isSafeInteger(v)) return String(v);
  if (typeof v === "boolean") return String(v);
  if (typeof v === "number") {
    r.error(
      "MANIFEST_WRONG_TYPE",
      `${at} must be a string, an integer or true/false, found the number ${v} (quote it)`,
      r.valueSpan(e),
    );
    return null;
  }
  return r.string(e, at);
}

/** What removals are checked against. */
export interface RemovalContext {
  project: string | null;
  environments: string[];
  clusters: ConnectClusterDecl[];
  connectors: ConnectorDecl[];
  /** Logical names under `connectors:`, valid or not (a collision is about the name). */
  declaredConnectors: ReadonlySet<string>;
}

/**
 * Read `lifecycle:` and its `connector_removals:` (its `runner_removals:` are read by
 * `lib/project/removals.ts`).
 */
export function readLifecycle(
  r: YamlReader,
  entry: MapEntry | undefined,
  ctx: RemovalContext,
): ConnectorRemovalDecl[] {
  if (!entry) return [];
  const map = r.map(
    entry.value,
    "lifecycle",
    ["connector_removals", "runner_removals"],
    entry.keySpan,
  );
  const list = map?.get("connector_removals");
  if (!list) return [];
  const items = r.seq(list.value, "lifecycle.connector_removals", list.keySpan);
  if (!items) return [];
  const out: ConnectorRemovalDecl[] = [];
  const seen = new Set<string>();
  items.forEach((item: YNode, i: number) => {
    const where = `lifecycle.connector_removals[${i}]`;
    const at = r.span(item, list.keySpan);
    const m = r.map(item, where, ["logical_name", "connector", "cluster"], at);
    if (!m) return;
    const ln = r.required(m, "logical_name", where, at);
    const ce = r.required(m, "connector", where, at);
    const cluster = clusterRef(r, r.required(m, "cluster", where, at), where, ctx.clusters);
    let logicalName = ln ? r.string(ln, `${where}.logical_name`) : null;
    if (logicalName !== null && ln && !isName(logicalName)) {
      r.error(
        "MANIFEST_INVALID_NAME",
        `${where}.logical_name '${logicalName}' must match [a-z][a-z0-9_]* (at most 64 characters)`,
        r.valueSpan(ln),
      );
      logicalName = null;
    }
    if (logicalName !== null && ln) {
      if (seen.has(logicalName)) {
        r.error(
          "MANIFEST_DUPLICATE_NAME",
          `connector '${logicalName}' is declared removed twice in lifecycle.connector_removals`,
          r.valueSpan(ln),
        );
        logicalName = null;
      } else seen.add(logicalName);
    }
    if (logicalName !== null && ln && ctx.declaredConnectors.has(logicalName)) {
      r.error(
        "MANIFEST_REMOVAL_COLLISION",
        `${where} removes connector '${logicalName}', which 'connectors:' still declares: remove the declaration or the removal`,
        r.valueSpan(ln),
        { connector: logicalName },
      );
      logicalName = null;
    }
    const connector = ce ? r.string(ce, `${where}.connector`) : null;
    let environment: string | null | undefined = undefined;
    if (connector !== null && ce && logicalName !== null && ctx.project !== null) {
      const candidates = ctx.environments.length === 0
        ? [null]
        : ctx.environments as Array<string | null>;
      const names = candidates.map((env) => connectorName(ctx.project!, env, logicalName!));
      const k = names.indexOf(connector);
      if (k < 0) {
        r.error(
          "MANIFEST_REMOVAL_UNMANAGED_NAME",
          `${where}.connector '${connector}' is not a name sluice gives connector '${logicalName}' of project '${ctx.project}' (expected ${
            names.join(" or ")
          }); sluice removes only connectors it manages`,
          r.valueSpan(ce),
          { connector, expected: names },
        );
      } else environment = candidates[k];
    }
    if (
      logicalName !== null && connector !== null && cluster !== null && environment !== undefined
    ) {
      out.push({ logicalName, connector, cluster, environment, span: at });
    }
  });
  return out;
}
