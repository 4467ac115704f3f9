/**
 * The ownership document: which resources a project owns, with artifact checksums and a
 * serial. Its state checksum is the sha256 of its canonical JSON.
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
}

/**
 * The ownership document version this sluice reads and writes.
 *
 * @example
 * ```ts
 * import { OWNERSHIP_VERSION } from "./ownership.ts";
 * console.log(OWNERSHIP_VERSION); // 1
 * ```
 */
export const OWNERSHIP_VERSION = 1;

/** The ownership document (`format: "sluice.ownership"`, `version: 1`). */
export interface OwnershipDocument {
  /** Document format name. */
  format: "sluice.ownership";
  /** Document version. */
  version: typeof OWNERSHIP_VERSION;
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
    version: OWNERSHIP_VERSION,
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
  if (d.version !== OWNERSHIP_VERSION) fail(`unsupported version ${JSON.stringify(d.version)}`);
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
  }
  return value as OwnershipDocument;
}
