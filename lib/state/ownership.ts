/**
 * The ownership document: which resources a project owns, with artifact checksums and a
 * serial. Its state checksum is the sha256 of its canonical JSON.
 *
 * Version 1 holds topics and runners. A document opts into version 2 the first time it records
 * a Kafka Connect connector, and then always carries its `connectors` section (possibly empty):
 * version-1 documents keep their exact bytes and checksums, as journal envelopes do when they
 * gain a section. Each connector record binds the exact connector name, the Connect cluster's
 * identity (its Kafka cluster ID and the digest of the REST endpoint, never the endpoint) and a
 * keyed fingerprint of the configuration sluice submitted (never a secret value): a removal is
 * authorized only when a fresh observation matches all three.
 *
 * @example
 * ```ts
 * import { emptyOwnership, stateChecksum } from "./ownership.ts";
 * const doc = emptyOwnership("orders", null);
 * console.log(doc.serial, stateChecksum(doc));
 * ```
 * @module
 */
import { type ErrorCode, SluiceError } from "../errors.ts";
import { connectorName } from "../artifact/connector.ts";
import { MAX_INSTANCES } from "../project/placement.ts";
import { checksumOf } from "./_canonical.ts";

/** A topic the project owns. */
export interface OwnedTopic {
  /** The topic name. */
  name: string;
  /** Kafka topic UUID (base64url) when known. */
  topic_id: string | null;
}

/** The retained state volume of a runner: a name plus its generated instance UUID. */
export interface OwnedVolume {
  /** The volume name. */
  name: string;
  /** The instance UUID written into the volume when it was created. */
  instance_id: string;
}

/**
 * One instance of a model run as a set (`instances: N > 1`): its own container and state volume
 * instance on the endpoint it was placed on.
 */
export interface OwnedInstance {
  /** 0-based; instance 0 is the runner's own container and volume. */
  instance: number;
  /** The `docker.endpoints` name it runs on; null for the environment's one daemon. */
  endpoint: string | null;
  /** The container name it was created with. */
  container_name: string;
  /** Its own state volume (a volume is local to its daemon: never shared by two instances). */
  volume: OwnedVolume;
}

/** A runner the project owns. */
export interface OwnedRunner {
  /** The model. */
  model: string;
  /** Its application ID. */
  application_id: string;
  /** The sha256 of the artifact it runs. */
  artifact_sha256: string;
  /** Its state volume. */
  volume: OwnedVolume;
  /** The container name it was created with. */
  container_name: string;
  /**
   * A set's every instance in index order (0 to N-1), present only for a model of several
   * instances: instance 0 is the container and volume above, so a single runner's record keeps
   * its exact bytes and checksum.
   */
  instances?: OwnedInstance[];
}

/**
 * What a runner removal kept of a runner (`lifecycle.runner_removals`): its state volume and its
 * consumer group with the committed offsets. A model declared again under the same application
 * ID resumes from them — its create adopts exactly this volume instance and keeps the group's
 * offsets, never repositioning them at `initial_offsets`.
 */
export interface RetainedRunner {
  /** The model that was removed. */
  model: string;
  /** Its application ID (its consumer group). */
  application_id: string;
  /** The kept state volume. */
  volume: OwnedVolume;
  /** The input topic the group's committed offsets are for. */
  input_topic: string;
  /** The removal operation that kept them. */
  removed_by: string;
  /**
   * A set's every instance's kept volume, in index order (present only for a set): instance 0's is
   * `volume` above, so a single runner's record keeps its exact bytes and checksum.
   */
  instances?: RetainedInstance[];
}

/** One instance's state volume a set's removal kept, on the endpoint it was created on. */
export interface RetainedInstance {
  /** 0-based; instance 0's is the retained record's own volume. */
  instance: number;
  /** The `docker.endpoints` name its volume is on; null for the environment's one daemon. */
  endpoint: string | null;
  /** Its kept state volume (local to its daemon). */
  volume: OwnedVolume;
}

/**
 * The newest ownership document version this sluice writes (2 carries connectors; a document
 * without connectors keeps version 1 and its bytes).
 *
 * @example
 * ```ts
 * import { OWNERSHIP_VERSION } from "./ownership.ts";
 * console.log(OWNERSHIP_VERSION); // 2
 * ```
 */
export const OWNERSHIP_VERSION = 2;

/** Which Connect cluster a connector is on: never the raw REST endpoint. */
export interface ConnectClusterIdentity {
  /** The Kafka cluster ID the worker group stores its state on (`GET /`). */
  kafka_cluster_id: string;
  /** sha256 hex of the normalized REST endpoint sluice talks to. */
  endpoint_digest: string;
}

/** A Kafka Connect connector the project created and owns. */
export interface OwnedConnector {
  /** The logical name in `sluice.yaml`. */
  connector: string;
  /** The exact name on the Connect cluster (`sluice-<project>[-<env>]-<connector>`). */
  name: string;
  /** The alias of the declared Connect cluster. */
  cluster: string;
  /** Which Connect cluster it is on (never the raw endpoint). */
  cluster_identity: ConnectClusterIdentity;
  /** Source or sink. */
  kind: "source" | "sink";
  /** The ConnectorArtifact checksum it was created or last updated from. */
  artifact_sha256: string;
  /**
   * Keyed fingerprint of the configuration sluice submitted (lib/artifact/connector.ts): secret
   * values enter it only as HMAC digests under `SLUICE_SECRET_HASH_KEY`.
   */
  config_fingerprint: string;
  /** The configuration keys whose values held secrets (sorted). */
  secret_keys: string[];
  /** The identifier of the digest key, when there are secret keys; null otherwise. */
  secret_key_id: string | null;
}

/**
 * The ownership document (`format: "sluice.ownership"`): version 1 without connectors,
 * version 2 with its `connectors` section.
 */
export interface OwnershipDocument {
  /** Document format name. */
  format: "sluice.ownership";
  /** Document version: 1 without connectors, 2 with its `connectors` section. */
  version: 1 | 2;
  /** The project name. */
  project: string;
  /** `null` for a single-environment project; never an invented "default". */
  environment: string | null;
  /** Incremented by every committed change. */
  serial: number;
  /** Topics sluice created and owns. */
  topics: OwnedTopic[];
  /** Runners sluice created and owns. */
  runners: OwnedRunner[];
  /** Version 2 only: the owned connectors, sorted by name. */
  connectors?: OwnedConnector[];
  /**
   * What runner removals kept (sorted by model), present only once a removal kept something and
   * while it does: a document without it keeps its exact bytes and checksum.
   */
  retained?: RetainedRunner[];
}

/**
 * The document with `retained` as its retained section (absent when empty, so a document that
 * never removed a runner keeps its bytes).
 *
 * @example
 * ```ts
 * import { emptyOwnership, withRetained } from "./ownership.ts";
 * "retained" in withRetained(emptyOwnership("orders", null), []); // false
 * ```
 */
export function withRetained(
  doc: OwnershipDocument,
  retained: RetainedRunner[],
): OwnershipDocument {
  const { retained: _, ...rest } = doc;
  if (retained.length === 0) return rest;
  return {
    ...rest,
    retained: [...retained].sort((a, b) => a.model < b.model ? -1 : a.model > b.model ? 1 : 0),
  };
}

/** The document's connectors (none in a version-1 document). */
export function ownedConnectors(doc: OwnershipDocument): OwnedConnector[] {
  return doc.connectors ?? [];
}

/**
 * The document with `connectors` as its connector section: version 2 from then on (a
 * document never goes back to version 1, so its history stays one readable format).
 *
 * @example
 * ```ts
 * import { emptyOwnership, withConnectors } from "./ownership.ts";
 * withConnectors(emptyOwnership("orders", null), []).version; // 2
 * ```
 */
export function withConnectors(
  doc: OwnershipDocument,
  connectors: OwnedConnector[],
): OwnershipDocument {
  return {
    ...doc,
    version: 2,
    connectors: [...connectors].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  };
}

/**
 * A fresh ownership document with serial 0 and no resources.
 *
 * @example
 * ```ts
 * import { emptyOwnership } from "./ownership.ts";
 * emptyOwnership("orders", "prod").serial; // 0
 * ```
 */
export function emptyOwnership(project: string, environment: string | null): OwnershipDocument {
  return {
    format: "sluice.ownership",
    // version 2 only once a connector is recorded: a document without connectors keeps version 1
    version: 1,
    project,
    environment,
    serial: 0,
    topics: [],
    runners: [],
  };
}

/**
 * The state checksum: sha256 of the canonical JSON of the ownership document.
 *
 * @example
 * ```ts
 * import { emptyOwnership, stateChecksum } from "./ownership.ts";
 * stateChecksum(emptyOwnership("orders", null)).length; // 64
 * ```
 */
export function stateChecksum(doc: OwnershipDocument): string {
  return checksumOf(doc);
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Validate an ownership document's shape (throws STATE_CORRUPT_OWNERSHIP, or the given code).
 *
 * @example
 * ```ts
 * import { emptyOwnership, validateOwnership } from "./ownership.ts";
 * validateOwnership(emptyOwnership("orders", null));
 * ```
 */
export function validateOwnership(
  value: unknown,
  code: ErrorCode = "STATE_CORRUPT_OWNERSHIP",
): OwnershipDocument {
  const fail = (what: string): never => {
    throw new SluiceError(code, `ownership document: ${what}`);
  };
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail("not an object");
  const d = value as Record<string, unknown>;
  if (d.format !== "sluice.ownership") fail(`unknown format ${JSON.stringify(d.format)}`);
  if (d.version !== 1 && d.version !== 2) fail(`unsupported version ${JSON.stringify(d.version)}`);
  if (typeof d.project !== "string" || d.project === "") fail("project must be a string");
  if (d.environment !== null && typeof d.environment !== "string") {
    fail("environment must be a string or null");
  }
  if (typeof d.serial !== "number" || !Number.isSafeInteger(d.serial) || d.serial < 0) {
    fail("serial must be a non-negative integer");
  }
  if (!Array.isArray(d.topics)) fail("topics must be an array");
  for (const t of d.topics as unknown[]) {
    const o = t as Record<string, unknown>;
    if (typeof o?.name !== "string") fail("topic without a name");
    if (o.topic_id !== null && typeof o.topic_id !== "string") fail("topic_id must be string|null");
  }
  if (!Array.isArray(d.runners)) fail("runners must be an array");
  const models = new Set<string>();
  for (const r of d.runners as unknown[]) {
    const o = r as Record<string, unknown>;
    if (typeof o?.model !== "string") fail("runner without a model");
    if (models.has(o.model as string)) fail(`runner ${o.model} appears twice`);
    models.add(o.model as string);
    if (typeof o.application_id !== "string") fail(`runner ${o.model}: application_id`);
    if (typeof o.artifact_sha256 !== "string" || !HEX64.test(o.artifact_sha256)) {
      fail(`runner ${o.model}: artifact_sha256 must be 64 lower-case hex`);
    }
    const v = o.volume as Record<string, unknown> | undefined;
    if (typeof v?.name !== "string" || typeof v?.instance_id !== "string") {
      fail(`runner ${o.model}: volume needs name and instance_id`);
    }
    if (typeof o.container_name !== "string") fail(`runner ${o.model}: container_name`);
    if ("instances" in o) {
      validateInstances(o as unknown as OwnedRunner, `runner ${o.model}`, fail);
    }
  }
  if ("retained" in d) {
    const list = d.retained;
    if (!Array.isArray(list) || list.length === 0) fail("retained must be a non-empty array");
    let previous: string | null = null;
    for (const x of list as unknown[]) {
      const o = x as Record<string, unknown>;
      if (typeof o?.model !== "string" || (previous !== null && !(o.model > previous))) {
        fail("retained runners must have a model, sorted, each once");
      }
      previous = o.model as string;
      if (models.has(o.model as string)) fail(`runner ${o.model} is both owned and retained`);
      const v = o.volume as Record<string, unknown> | undefined;
      if (
        typeof o.application_id !== "string" || typeof o.input_topic !== "string" ||
        typeof o.removed_by !== "string" || typeof v?.name !== "string" ||
        typeof v?.instance_id !== "string"
      ) {
        fail(`retained runner ${o.model}: needs application_id, volume, input_topic, removed_by`);
      }
      if ("instances" in o) {
        validateInstances(o as unknown as RetainedRunner, `retained runner ${o.model}`, fail);
      }
    }
  }
  if (d.version === 1) {
    if ("connectors" in d) fail("a version-1 document has no connectors section");
  } else {
    validateConnectors(d.connectors, d.project as string, d.environment as string | null, fail);
  }
  return value as OwnershipDocument;
}

/**
 * A set's instances (an owned runner's, each with its container, or a retained one's, its kept
 * volumes only): 2 to {@link MAX_INSTANCES} exactly shaped records, indexed 0 to N-1 in order,
 * instance 0 being the record's own container and volume, no container name or volume instance
 * twice.
 */
function validateInstances(
  record: OwnedRunner | RetainedRunner,
  at: string,
  fail: (what: string) => never,
): void {
  const owned = "container_name" in record;
  const fields = owned ? "container_name,endpoint,instance,volume" : "endpoint,instance,volume";
  const list: unknown = record.instances;
  if (!Array.isArray(list) || list.length < 2 || list.length > MAX_INSTANCES) {
    fail(`${at}: instances must list 2 to ${MAX_INSTANCES} instances (absent for one)`);
  }
  const containers = new Set<string>();
  const volumes = new Set<string>();
  (list as unknown[]).forEach((x, i) => {
    const o = x as Record<string, unknown>;
    if (typeof o !== "object" || o === null || Array.isArray(o)) fail(`${at}: instance ${i}`);
    if (Object.keys(o).sort().join(",") !== fields) {
      fail(`${at}: instance ${i}: fields must be exactly ${fields}`);
    }
    if (o.instance !== i) fail(`${at}: instances must be indexed 0 to N-1 in order`);
    if (o.endpoint !== null && (typeof o.endpoint !== "string" || o.endpoint === "")) {
      fail(`${at}: instance ${i}: endpoint must be a name or null`);
    }
    const v = o.volume as Record<string, unknown> | null;
    if (
      (owned && (typeof o.container_name !== "string" || o.container_name === "")) ||
      typeof v !== "object" || v === null ||
      Object.keys(v).sort().join(",") !== "instance_id,name" ||
      typeof v.name !== "string" || typeof v.instance_id !== "string"
    ) {
      fail(
        `${at}: instance ${i}: needs ${
          owned ? "container_name and " : ""
        }volume { name, instance_id }`,
      );
    }
    if (
      (owned && containers.has(o.container_name as string)) ||
      volumes.has(v!.instance_id as string)
    ) fail(`${at}: instance ${i}: a container name or volume instance appears twice`);
    if (owned) containers.add(o.container_name as string);
    volumes.add(v!.instance_id as string);
  });
  const first = (list as Array<{ container_name?: string; volume: OwnedVolume }>)[0];
  if (
    (owned && first.container_name !== (record as OwnedRunner).container_name) ||
    first.volume.name !== record.volume.name ||
    first.volume.instance_id !== record.volume.instance_id
  ) {
    fail(
      `${at}: instance 0 must be the ${
        owned ? "runner's own container_name and" : "record's own"
      } volume`,
    );
  }
}

const CONNECTOR_FIELDS = [
  "artifact_sha256",
  "cluster",
  "cluster_identity",
  "config_fingerprint",
  "connector",
  "kind",
  "name",
  "secret_key_id",
  "secret_keys",
].join(",");

/** The version-2 section: every record exactly shaped, named by the rule, in name order. */
function validateConnectors(
  value: unknown,
  project: string,
  environment: string | null,
  fail: (what: string) => never,
): void {
  if (!Array.isArray(value)) fail("version 2: connectors must be an array");
  let previous: string | null = null;
  const logical = new Set<string>();
  for (const c of value as unknown[]) {
    const o = c as Record<string, unknown>;
    if (typeof o !== "object" || o === null || Array.isArray(o)) fail("connector: not an object");
    const at = `connector ${typeof o.name === "string" ? o.name : "?"}`;
    if (Object.keys(o).sort().join(",") !== CONNECTOR_FIELDS) {
      fail(`${at}: fields must be exactly ${CONNECTOR_FIELDS}`);
    }
    for (const f of ["connector", "name", "cluster"] as const) {
      if (typeof o[f] !== "string" || o[f] === "") fail(`${at}: ${f} must be a string`);
    }
    if (o.name !== connectorName(project, environment, o.connector as string)) {
      fail(
        `${at}: name must be ${connectorName(project, environment, o.connector as string)}`,
      );
    }
    if (previous !== null && !((o.name as string) > previous)) {
      fail(`${at}: connectors must be sorted by name, each once`);
    }
    previous = o.name as string;
    if (logical.has(o.connector as string)) fail(`${at}: logical name ${o.connector} twice`);
    logical.add(o.connector as string);
    const id = o.cluster_identity as Record<string, unknown> | null;
    if (
      typeof id !== "object" || id === null ||
      Object.keys(id).sort().join(",") !== "endpoint_digest,kafka_cluster_id" ||
      typeof id.kafka_cluster_id !== "string" || id.kafka_cluster_id === "" ||
      typeof id.endpoint_digest !== "string" || !HEX64.test(id.endpoint_digest)
    ) fail(`${at}: cluster_identity must be { kafka_cluster_id, endpoint_digest (64 hex) }`);
    if (o.kind !== "source" && o.kind !== "sink") fail(`${at}: kind must be source or sink`);
    for (const f of ["artifact_sha256", "config_fingerprint"] as const) {
      if (typeof o[f] !== "string" || !HEX64.test(o[f] as string)) {
        fail(`${at}: ${f} must be 64 lower-case hex`);
      }
    }
    const keys = o.secret_keys;
    if (
      !Array.isArray(keys) || !keys.every((k) => typeof k === "string" && k !== "") ||
      keys.join("\n") !== [...new Set(keys)].sort().join("\n")
    ) fail(`${at}: secret_keys must be sorted distinct strings`);
    const keyId = o.secret_key_id;
    if (
      keys.length > 0 ? typeof keyId !== "string" || !/^[0-9a-f]{16}$/.test(keyId) : keyId !== null
    ) {
      fail(`${at}: secret_key_id must be 16 hex digits with secret keys, null without`);
    }
  }
}
