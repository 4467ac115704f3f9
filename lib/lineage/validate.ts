/**
 * Validation of RunEvents against the official OpenLineage schemas — `OpenLineage.json` (spec
 * 2-0-2, JSON Schema draft 2020-12) and `ErrorMessageRunFacet.json` — read unmodified from the
 * vendored directory `../shared/vendor/openlineage/` beside the repository (never copied into
 * it), plus sluice's own schema for its `sluice` run facet (`lib/lineage/schema/`).
 *
 * Where the vendored schemas are looked for, in order: `SLUICE_OPENLINEAGE_SCHEMA_DIR`; then
 * `<repository root>/../shared/vendor/openlineage`; then, when the checkout is a Git worktree,
 * the same path beside the main checkout the worktree belongs to. A missing directory or file is
 * {@link LineageSchemaMissing} naming every path tried: never a skip, never a substitute schema.
 *
 * @example
 * ```ts
 * import { loadRunEventValidator } from "./validate.ts";
 * const validate = await loadRunEventValidator();
 * // const { valid, errors } = validate(buildRunEvent("START", ctx));
 * ```
 * @module
 */
import { Ajv2020 } from "npm:ajv@8.20.0/dist/2020.js";
import type { ErrorObject, ValidateFunction } from "npm:ajv@8.20.0/dist/2020.js";
import addFormatsModule from "npm:ajv-formats@3.0.1";

/** Overrides where the vendored official schemas are read from (a directory). */
export const SCHEMA_DIR_ENV = "SLUICE_OPENLINEAGE_SCHEMA_DIR";
/** The official RunEvent schema's file name in the vendored directory. */
export const OFFICIAL_SCHEMA_FILE = "OpenLineage.json";
/** The official errorMessage run facet schema's file name in the vendored directory. */
export const ERROR_FACET_SCHEMA_FILE = "ErrorMessageRunFacet.json";
/** sluice's custom run facet schema (written in this repository). */
export const SLUICE_FACET_SCHEMA_PATH = new URL("./schema/SluiceRunFacet.json", import.meta.url);

const REPO_ROOT = new URL("../../", import.meta.url);

/** The outcome of validating one event. */
export interface ValidationResult {
  valid: boolean;
  /** One line per violation (`<instance path> <message>`), empty when valid. */
  errors: string[];
}

/** Validates one RunEvent. */
export type RunEventValidator = (event: unknown) => ValidationResult;

/** The vendored official schemas are not where they must be. */
export class LineageSchemaMissing extends Error {
  constructor(what: string, tried: string[]) {
    super(
      `lineage: the official OpenLineage ${what} is missing; looked in ${
        tried.join(", ")
      } (set ${SCHEMA_DIR_ENV} or place ../shared/vendor/openlineage beside the repository)`,
    );
    this.name = "LineageSchemaMissing";
  }
}

function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) return false;
    throw e;
  }
}

function schemaDirOverride(): string | undefined {
  try {
    return Deno.env.get(SCHEMA_DIR_ENV) || undefined;
  } catch {
    return undefined; // no env permission: no override
  }
}

/** The main checkout of a Git worktree (`.git` is a file naming `<main>/.git/worktrees/x`). */
function mainCheckout(root: string): string | null {
  let gitFile: string;
  try {
    gitFile = Deno.readTextFileSync(`${root}.git`);
  } catch {
    return null; // a plain checkout (.git is a directory) or none at all
  }
  const gitdir = /^gitdir: (.+)$/m.exec(gitFile)?.[1]?.trim();
  if (!gitdir) return null;
  let common: string;
  try {
    common = Deno.readTextFileSync(`${gitdir}/commondir`).trim();
  } catch {
    return null;
  }
  const commonDir = new URL(common.endsWith("/") ? common : `${common}/`, `file://${gitdir}/`);
  return new URL("../", commonDir).pathname;
}

/** Every directory the vendored schemas are looked for in, in order. */
export function schemaDirCandidates(): string[] {
  const out: string[] = [];
  const override = schemaDirOverride();
  if (override) out.push(override);
  const root = REPO_ROOT.pathname;
  out.push(new URL("../shared/vendor/openlineage", REPO_ROOT).pathname);
  const main = mainCheckout(root);
  if (main && main !== root) {
    out.push(new URL("../shared/vendor/openlineage", `file://${main}`).pathname);
  }
  return out;
}

/**
 * The directory holding the vendored official schemas. Throws {@link LineageSchemaMissing} when
 * none of {@link schemaDirCandidates} exists (an explicit override that does not exist is never
 * passed over for another candidate).
 */
export function officialSchemaDir(): string {
  const tried = schemaDirCandidates();
  const list = schemaDirOverride() ? [tried[0]] : tried;
  for (const d of list) if (isDir(d)) return d;
  throw new LineageSchemaMissing("schema directory", list);
}

async function readJson(path: string, what: string): Promise<Record<string, unknown>> {
  try {
    return JSON.parse(await Deno.readTextFile(path));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new LineageSchemaMissing(what, [path]);
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

function compile(ajv: Ajv2020, ref: string, file: string): ValidateFunction {
  const fn = ajv.getSchema(ref);
  if (!fn) throw new Error(`lineage: ${file} has no ${ref}`);
  return fn;
}

/**
 * Compile a validator for the official `$defs/RunEvent` (strict formats: date-time, uri, uuid)
 * that also checks the `errorMessage` run facet against the official ErrorMessageRunFacet schema
 * and the `sluice` run facet against sluice's own, and requires a FAIL event to carry the
 * `errorMessage` facet (sluice's rule: a failure always says what happened).
 * Throws {@link LineageSchemaMissing} when the vendored schemas are absent.
 */
export async function loadRunEventValidator(
  dir: string = officialSchemaDir(),
): Promise<RunEventValidator> {
  if (!isDir(dir)) throw new LineageSchemaMissing("schema directory", [dir]);
  const officialPath = `${dir}/${OFFICIAL_SCHEMA_FILE}`;
  const errorPath = `${dir}/${ERROR_FACET_SCHEMA_FILE}`;
  const official = await readJson(officialPath, OFFICIAL_SCHEMA_FILE);
  const errorFacet = await readJson(errorPath, ERROR_FACET_SCHEMA_FILE);
  const facetSchema = await readJson(SLUICE_FACET_SCHEMA_PATH.pathname, "sluice facet schema");
  for (const [s, p] of [[official, officialPath], [errorFacet, errorPath]] as const) {
    if (typeof s.$id !== "string") throw new Error(`lineage: ${p} has no $id`);
  }
  // The official spec carries annotation keywords ajv does not know (e.g. "example"): strict
  // mode would reject the schema itself, so it is off; formats are still validated.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(official);
  ajv.addSchema(errorFacet);
  ajv.addSchema(facetSchema);
  const runEvent = compile(ajv, `${official.$id}#/$defs/RunEvent`, officialPath);
  const errorMessage = compile(
    ajv,
    `${errorFacet.$id}#/$defs/ErrorMessageRunFacet`,
    errorPath,
  );
  const sluiceFacet = compile(
    ajv,
    `${facetSchema.$id}#/$defs/SluiceRunFacet`,
    SLUICE_FACET_SCHEMA_PATH.pathname,
  );
  return (event: unknown): ValidationResult => {
    const errors: string[] = [];
    if (!runEvent(event)) errors.push(...lines(runEvent.errors));
    const e = event as
      | { eventType?: unknown; run?: { facets?: Record<string, unknown> } }
      | null;
    const facets = e?.run?.facets ?? {};
    if (facets.errorMessage !== undefined && !errorMessage(facets.errorMessage)) {
      errors.push(...lines(errorMessage.errors, "/run/facets/errorMessage"));
    }
    if (e?.eventType === "FAIL" && facets.errorMessage === undefined) {
      errors.push("/run/facets a FAIL event must carry the errorMessage facet");
    }
    if (facets.sluice !== undefined && !sluiceFacet(facets.sluice)) {
      errors.push(...lines(sluiceFacet.errors, "/run/facets/sluice"));
    }
    return { valid: errors.length === 0, errors };
  };
}
