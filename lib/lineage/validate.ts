/**
 * Validation of RunEvents against the official OpenLineage JSON Schema kept in
 * `lib/lineage/schema/OpenLineage.json` (a 2020-12 schema; see `lib/lineage/schema/README.md`
 * for where the file comes from), plus sluice's own `sluice` run facet schema.
 *
 * @example
 * ```ts
 * const validate = await loadRunEventValidator();
 * const { valid, errors } = validate(buildRunEvent("START", ctx));
 * if (!valid) console.error(errors.join("\n"));
 * ```
 * @module
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ErrorObject } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

/** Where the official OpenLineage spec is kept in the repository. */
export const OFFICIAL_SCHEMA_PATH = new URL("./schema/OpenLineage.json", import.meta.url);
/** sluice's custom run facet schema. */
export const SLUICE_FACET_SCHEMA_PATH = new URL("./schema/SluiceRunFacet.json", import.meta.url);

/** The outcome of validating one event. */
export interface ValidationResult {
  valid: boolean;
  /** One line per violation (`<instance path> <message>`), empty when valid. */
  errors: string[];
}

/** Validates one RunEvent. */
export type RunEventValidator = (event: unknown) => ValidationResult;

/** The official schema file is not in the repository. */
export class LineageSchemaMissing extends Error {
  constructor(path: URL) {
    super(
      `lineage: the official OpenLineage schema is not at ${path.pathname}; see lib/lineage/schema/README.md`,
    );
    this.name = "LineageSchemaMissing";
  }
}

/** Is the official schema file present? */
export async function officialSchemaPresent(path: URL = OFFICIAL_SCHEMA_PATH): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

async function readJson(path: URL): Promise<Record<string, unknown>> {
  try {
    return JSON.parse(await Deno.readTextFile(path));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new LineageSchemaMissing(path);
    throw e;
  }
}

function lines(errors: ErrorObject[] | null | undefined, prefix = ""): string[] {
  return (errors ?? []).map((e) =>
    `${prefix}${e.instancePath || "/"} ${e.message ?? e.keyword}${
      e.keyword === "additionalProperties" || e.keyword === "required"
        ? ` (${JSON.stringify(e.params)})`
        : ""
    }`
  );
}

// ajv-formats is CommonJS: its callable export is the module itself (or its `default`).
type AddFormats = (ajv: Ajv2020) => Ajv2020;
const addFormats: AddFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as unknown as AddFormats;

/**
 * Compile a validator for the official schema's `$defs/RunEvent` (strict formats: date-time,
 * uri, uuid) that also checks a `sluice` run facet, when present, against sluice's own schema.
 * Throws {@link LineageSchemaMissing} when the official file is absent.
 */
export async function loadRunEventValidator(
  schemaPath: URL = OFFICIAL_SCHEMA_PATH,
  facetSchemaPath: URL = SLUICE_FACET_SCHEMA_PATH,
): Promise<RunEventValidator> {
  const official = await readJson(schemaPath);
  const facetSchema = await readJson(facetSchemaPath);
  const id = official.$id;
  if (typeof id !== "string") throw new Error(`lineage: ${schemaPath.pathname} has no $id`);
  const defs = official.$defs as Record<string, unknown> | undefined;
  if (!defs || !("RunEvent" in defs)) {
    throw new Error(`lineage: ${schemaPath.pathname} has no $defs/RunEvent`);
  }
  // The official spec carries annotation keywords ajv does not know (e.g. "example"): strict
  // mode would reject the schema itself, so it is off; formats are still validated.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(official);
  ajv.addSchema(facetSchema);
  const runEvent = ajv.getSchema(`${id}#/$defs/RunEvent`);
  if (!runEvent) throw new Error(`lineage: cannot compile ${id}#/$defs/RunEvent`);
  const facet = ajv.getSchema(`${facetSchema.$id}#/$defs/SluiceRunFacet`);
  if (!facet) throw new Error(`lineage: cannot compile the sluice run facet schema`);
  return (event: unknown): ValidationResult => {
    const errors: string[] = [];
    if (!runEvent(event)) errors.push(...lines(runEvent.errors));
    const sluice = (event as { run?: { facets?: Record<string, unknown> } } | null)?.run?.facets
      ?.sluice;
    if (sluice !== undefined && !facet(sluice)) {
      errors.push(...lines(facet.errors, "/run/facets/sluice"));
    }
    return { valid: errors.length === 0, errors };
  };
}
