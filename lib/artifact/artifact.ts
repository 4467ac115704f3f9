/**
 * The RunnerArtifact (docs/artifact-format.md): what a model compiles to and what the runner
 * container mounts inside its plan. {@link validateArtifact} reads one back strictly (every
 * field present, no unknown field, well-formed predicate), e.g. from a plan file or state.
 *
 * @example
 * ```ts
 * import { artifactSha256, validateArtifact } from "./artifact.ts";
 * const text = await Deno.readTextFile("eligible_orders.artifact.json");
 * const artifact = validateArtifact(JSON.parse(text));
 * console.log(artifact.application_id, artifactSha256(artifact));
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { Expr, LiteralExpr } from "../expr/ast.ts";
import { isColumnType } from "../expr/schema.ts";
import type { SchemaField } from "../expr/schema.ts";
import { canonicalJson, canonicalSha256, sha256Hex } from "./canonical.ts";

/**
 * The artifact format name.
 *
 * @example
 * ```ts
 * import { ARTIFACT_FORMAT } from "./artifact.ts";
 * console.log(ARTIFACT_FORMAT); // sluice.runner-artifact
 * ```
 */
export const ARTIFACT_FORMAT = "sluice.runner-artifact";
/**
 * The artifact format version.
 *
 * @example
 * ```ts
 * import { ARTIFACT_VERSION } from "./artifact.ts";
 * console.log(ARTIFACT_VERSION); // 1
 * ```
 */
export const ARTIFACT_VERSION = 1;

/** A compiled model, exactly as serialised (snake_case field names per the document). */
export interface RunnerArtifact {
  /** Document format name ({@link ARTIFACT_FORMAT}). */
  format: typeof ARTIFACT_FORMAT;
  /** Document version ({@link ARTIFACT_VERSION}). */
  version: typeof ARTIFACT_VERSION;
  /** The project name. */
  project: string;
  /** The environment, or null. */
  environment: string | null;
  /** The model name. */
  model: string;
  /** The Kafka Streams application ID (also the group ID and the volume's name stem). */
  application_id: string;
  /** The input topic. */
  input: { topic: string };
  /** The output topic. */
  output: { topic: string };
  /** The input record schema, decoded strictly. */
  schema: SchemaField[];
  /** Output columns: each input field and the name it is written as. */
  projection: Array<{ source: string; name: string }>;
  /** The filter: a record is written when it evaluates to TRUE. */
  predicate: Expr;
  /** The pinned runner image ID. */
  image: string;
  /** The Docker network runners join. */
  network: string;
  /** Where a new consumer group starts reading. */
  initial_offsets: "earliest" | "latest";
  /** Who owns the runner (always sluice) and for which project and environment. */
  ownership: { managed_by: "sluice"; project: string; environment: string | null };
  /**
   * `on_invalid: dead_letter` of the model: undecodable records go to this topic and the runner
   * continues. Absent means `stop` (the default), so that the artifacts of models that do not
   * opt in keep their bytes and checksums: the one field that is left out rather than null.
   */
  on_invalid?: DeadLetterPolicy;
}

/** The dead-letter policy as the artifact carries it. */
export interface DeadLetterPolicy {
  /** The only policy that is written out (`stop`, the default, is the field's absence). */
  policy: "dead_letter";
  /** The declared, managed topic that receives undecodable records unchanged. */
  topic: string;
}

/** Every top-level field of an artifact, in document order. */
export const ARTIFACT_FIELDS: ReadonlyArray<keyof RunnerArtifact> = [
  "format",
  "version",
  "project",
  "environment",
  "model",
  "application_id",
  "input",
  "output",
  "schema",
  "projection",
  "predicate",
  "image",
  "network",
  "initial_offsets",
  "ownership",
];

/** Optional top-level fields: absent means their default (`on_invalid`: stop). */
export const ARTIFACT_OPTIONAL_FIELDS: ReadonlyArray<keyof RunnerArtifact> = ["on_invalid"];

/**
 * The top-level fields whose content differs between two artifacts (required and optional;
 * an absent optional field compares as null). Change detection uses this one list.
 * @example
 * ```ts
 * import { changedArtifactFields } from "./artifact.ts";
 * import type { RunnerArtifact } from "./artifact.ts";
 * function changes(prior: RunnerArtifact, desired: RunnerArtifact) {
 *   return changedArtifactFields(prior, desired); // e.g. ["predicate"]
 * }
 * ```
 */
export function changedArtifactFields(
  prior: RunnerArtifact,
  desired: RunnerArtifact,
): Array<keyof RunnerArtifact> {
  return [...ARTIFACT_FIELDS, ...ARTIFACT_OPTIONAL_FIELDS].filter((f) =>
    canonicalSha256(prior[f] ?? null) !== canonicalSha256(desired[f] ?? null)
  );
}

/**
 * The topics a runner of this artifact reads or writes: input, output and, with `on_invalid`,
 * the dead-letter topic. Each is bound by ID in the mounted plan and checked by the runner.
 * @example
 * ```ts
 * import { runnerTopics } from "./artifact.ts";
 * import type { RunnerArtifact } from "./artifact.ts";
 * const topics = (a: RunnerArtifact) => runnerTopics(a); // ["raw_orders", "eligible_orders", "orders_dlq"]
 * ```
 */
export function runnerTopics(artifact: RunnerArtifact): string[] {
  return [
    artifact.input.topic,
    artifact.output.topic,
    ...(artifact.on_invalid ? [artifact.on_invalid.topic] : []),
  ];
}

/** The canonical JSON text of an artifact (the bytes that are hashed and written). */
export function artifactCanonicalJson(artifact: RunnerArtifact): string {
  return canonicalJson(artifact);
}

/** The artifact checksum: sha256 hex of its canonical JSON. */
export function artifactSha256(artifact: RunnerArtifact): string {
  return sha256Hex(canonicalJson(artifact));
}

function fail(path: string, message: string): never {
  throw new SluiceError("ARTIFACT_INVALID", `${path}: ${message}`, { evidence: { path } });
}

function obj(
  value: unknown,
  path: string,
  keys: readonly string[],
  optional: readonly string[] = [],
): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    fail(path, "must be an object");
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!keys.includes(key) && !optional.includes(key)) fail(`${path}.${key}`, "unknown field");
  }
  for (const key of keys) {
    if (!(key in record)) fail(`${path}.${key}`, "missing field");
  }
  return record;
}

function str(value: unknown, path: string): string {
  if (typeof value !== "string" || value.length === 0) fail(path, "must be a non-empty string");
  return value;
}

function nullableStr(value: unknown, path: string): string | null {
  return value === null ? null : str(value, path);
}

function bool(value: unknown, path: string): boolean {
  if (typeof value !== "boolean") fail(path, "must be a boolean");
  return value;
}

function arr(value: unknown, path: string, min: number): unknown[] {
  if (!Array.isArray(value) || value.length < min) {
    fail(path, `must be an array of at least ${min} item(s)`);
  }
  return value;
}

/**
 * Check that a value is a well-formed RunnerArtifact and return it typed. Throws
 * `ARTIFACT_INVALID` naming the first offending path.
 * @example
 * ```ts
 * const text = await Deno.readTextFile(".sluice/artifacts/eligible_orders.artifact.json");
 * const artifact = validateArtifact(JSON.parse(text));
 * console.log(artifact.application_id);
 * ```
 */
export function validateArtifact(value: unknown): RunnerArtifact {
  const a = obj(value, "$", ARTIFACT_FIELDS, ARTIFACT_OPTIONAL_FIELDS);
  if (a.format !== ARTIFACT_FORMAT) fail("$.format", `must be '${ARTIFACT_FORMAT}'`);
  if (a.version !== ARTIFACT_VERSION) fail("$.version", `must be ${ARTIFACT_VERSION}`);
  str(a.project, "$.project");
  nullableStr(a.environment, "$.environment");
  str(a.model, "$.model");
  str(a.application_id, "$.application_id");
  const input = str(obj(a.input, "$.input", ["topic"]).topic, "$.input.topic");
  const output = str(obj(a.output, "$.output", ["topic"]).topic, "$.output.topic");
  if ("on_invalid" in a) {
    const oi = obj(a.on_invalid, "$.on_invalid", ["policy", "topic"]);
    if (oi.policy !== "dead_letter") {
      fail(
        "$.on_invalid.policy",
        "must be 'dead_letter' (stop is written by leaving on_invalid out)",
      );
    }
    const topic = str(oi.topic, "$.on_invalid.topic");
    if (topic === input || topic === output) {
      fail("$.on_invalid.topic", "must differ from the input and output topics");
    }
  }
  const fields = new Map<string, string>();
  arr(a.schema, "$.schema", 1).forEach((f, i) => {
    const p = `$.schema[${i}]`;
    const field = obj(f, p, ["name", "type", "nullable"]);
    const name = str(field.name, `${p}.name`);
    if (fields.has(name)) fail(`${p}.name`, `duplicate field '${name}'`);
    if (!isColumnType(field.type)) fail(`${p}.type`, "must be STRING, BOOLEAN, BIGINT or DOUBLE");
    bool(field.nullable, `${p}.nullable`);
    fields.set(name, field.type);
  });
  const outputs = new Set<string>();
  arr(a.projection, "$.projection", 1).forEach((c, i) => {
    const p = `$.projection[${i}]`;
    const col = obj(c, p, ["source", "name"]);
    if (!fields.has(str(col.source, `${p}.source`))) fail(`${p}.source`, "not a schema field");
    const name = str(col.name, `${p}.name`);
    if (outputs.has(name)) fail(`${p}.name`, `duplicate output '${name}'`);
    outputs.add(name);
  });
  validateExpr(a.predicate, "$.predicate", fields);
  str(a.image, "$.image");
  str(a.network, "$.network");
  if (a.initial_offsets !== "earliest" && a.initial_offsets !== "latest") {
    fail("$.initial_offsets", "must be 'earliest' or 'latest'");
  }
  const own = obj(a.ownership, "$.ownership", ["managed_by", "project", "environment"]);
  if (own.managed_by !== "sluice") fail("$.ownership.managed_by", "must be 'sluice'");
  if (own.project !== a.project) fail("$.ownership.project", "must equal $.project");
  if (own.environment !== a.environment) {
    fail("$.ownership.environment", "must equal $.environment");
  }
  return value as RunnerArtifact;
}

function validateLiteral(value: unknown, path: string): LiteralExpr {
  const kind = (value as { kind?: unknown })?.kind;
  if (kind !== "literal") fail(path, "must be a literal");
  const lit = obj(value, path, ["kind", "type", "value"]);
  switch (lit.type) {
    case "STRING":
      if (typeof lit.value !== "string") fail(`${path}.value`, "must be a string");
      break;
    case "BIGINT":
      if (typeof lit.value !== "string" || !/^-?(0|[1-9][0-9]*)$/.test(lit.value)) {
        fail(`${path}.value`, "must be a decimal integer string");
      }
      break;
    case "DOUBLE":
      if (
        typeof lit.value !== "string" || !Number.isFinite(Number(lit.value)) ||
        String(Number(lit.value)) !== lit.value
      ) fail(`${path}.value`, "must be a finite number string in shortest round-trip form");
      break;
    case "BOOLEAN":
      bool(lit.value, `${path}.value`);
      break;
    case "NULL":
      if (lit.value !== null) fail(`${path}.value`, "must be null");
      break;
    default:
      fail(`${path}.type`, "must be STRING, BOOLEAN, BIGINT, DOUBLE or NULL");
  }
  return value as LiteralExpr;
}

function validateExpr(value: unknown, path: string, fields: Map<string, string>): void {
  const kind = (value as { kind?: unknown })?.kind;
  switch (kind) {
    case "column": {
      const c = obj(value, path, ["kind", "name", "type"]);
      const name = str(c.name, `${path}.name`);
      if (fields.get(name) !== c.type) fail(path, `column '${name}' does not match the schema`);
      return;
    }
    case "literal":
      validateLiteral(value, path);
      return;
    case "compare": {
      const c = obj(value, path, ["kind", "op", "left", "right"]);
      if (!["=", "<>", "<", "<=", ">", ">="].includes(c.op as string)) {
        fail(`${path}.op`, "unknown operator");
      }
      validateExpr(c.left, `${path}.left`, fields);
      validateExpr(c.right, `${path}.right`, fields);
      return;
    }
    case "and":
    case "or": {
      const c = obj(value, path, ["kind", "args"]);
      arr(c.args, `${path}.args`, 2).forEach((x, i) =>
        validateExpr(x, `${path}.args[${i}]`, fields)
      );
      return;
    }
    case "not":
      validateExpr(obj(value, path, ["kind", "arg"]).arg, `${path}.arg`, fields);
      return;
    case "is_null": {
      const c = obj(value, path, ["kind", "arg", "negated"]);
      bool(c.negated, `${path}.negated`);
      validateExpr(c.arg, `${path}.arg`, fields);
      return;
    }
    case "in": {
      const c = obj(value, path, ["kind", "arg", "list", "negated"]);
      bool(c.negated, `${path}.negated`);
      validateExpr(c.arg, `${path}.arg`, fields);
      arr(c.list, `${path}.list`, 1).forEach((x, i) => validateLiteral(x, `${path}.list[${i}]`));
      return;
    }
    case "between": {
      const c = obj(value, path, ["kind", "arg", "low", "high", "negated"]);
      bool(c.negated, `${path}.negated`);
      validateExpr(c.arg, `${path}.arg`, fields);
      validateExpr(c.low, `${path}.low`, fields);
      validateExpr(c.high, `${path}.high`, fields);
      return;
    }
    default:
      fail(`${path}.kind`, "unknown predicate node kind");
  }
}
