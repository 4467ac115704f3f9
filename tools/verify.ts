/**
 * `deno task verify`: validate every `verification/*.json` evidence file against
 * `verification/schema.json`, recompute each summary from the assertions, and fail on any
 * failed case, any mismatch between a recorded and a recomputed value, or a fault matrix
 * that does not cover every site × side × backend of the current fault inventory (a site
 * declared for one backend only is expected there only).
 *
 * The validator implements the JSON Schema keywords the schema uses (type, const, enum,
 * required, properties, additionalProperties, items, minItems, minLength, minimum, pattern,
 * format date-time, $ref to #/$defs); an unsupported keyword is an error, never ignored.
 *
 *   deno task verify            # every evidence file
 *   deno task verify FILE...    # selected files
 *
 * @module
 */
import { faultInventory } from "../lib/fault/inventory.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const DIR = Deno.env.get("SLUICE_VERIFICATION_DIR") ?? `${ROOT}verification`;
const SCHEMA = `${ROOT}verification/schema.json`;

type Schema = Record<string, unknown>;

const SUPPORTED = new Set([
  "$schema",
  "$id",
  "$defs",
  "$ref",
  "title",
  "description",
  "type",
  "const",
  "enum",
  "required",
  "properties",
  "additionalProperties",
  "items",
  "minItems",
  "minLength",
  "minimum",
  "pattern",
  "format",
]);

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function typeMatches(v: unknown, t: string): boolean {
  const actual = typeOf(v);
  return actual === t || (t === "number" && actual === "integer");
}

/** Validate `value` against `schema`; returns error messages (empty when valid). */
export function validate(root: Schema, schema: Schema, value: unknown, path = "$"): string[] {
  const errors: string[] = [];
  for (const k of Object.keys(schema)) {
    if (!SUPPORTED.has(k)) errors.push(`${path}: schema keyword ${k} is not supported`);
  }
  if (typeof schema.$ref === "string") {
    const m = /^#\/\$defs\/(.+)$/.exec(schema.$ref);
    const target = m ? (root.$defs as Record<string, Schema>)?.[m[1]] : undefined;
    if (!target) return [`${path}: unresolvable $ref ${schema.$ref}`];
    return validate(root, target, value, path);
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type as string[] : [schema.type as string];
    if (!types.some((t) => typeMatches(value, t))) {
      return [`${path}: expected ${types.join("|")}, got ${typeOf(value)}`];
    }
  }
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    errors.push(`${path}: expected ${JSON.stringify(schema.const)}`);
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => e === value)) {
    errors.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  }
  if (typeof value === "string") {
    if (typeof schema.minLength === "number" && value.length < schema.minLength) {
      errors.push(`${path}: shorter than ${schema.minLength}`);
    }
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) {
      errors.push(`${path}: does not match ${schema.pattern}`);
    }
    if (schema.format === "date-time" && Number.isNaN(Date.parse(value))) {
      errors.push(`${path}: not a date-time`);
    }
  }
  if (typeof value === "number" && typeof schema.minimum === "number" && value < schema.minimum) {
    errors.push(`${path}: below ${schema.minimum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) {
      errors.push(`${path}: fewer than ${schema.minItems} items`);
    }
    if (schema.items && typeof schema.items === "object") {
      value.forEach((x, i) =>
        errors.push(...validate(root, schema.items as Schema, x, `${path}[${i}]`))
      );
    }
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const r of (schema.required as string[] | undefined) ?? []) {
      if (!(r in obj)) errors.push(`${path}: missing ${r}`);
    }
    const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
    for (const [k, v] of Object.entries(obj)) {
      if (k in props) errors.push(...validate(root, props[k], v, `${path}.${k}`));
      else if (schema.additionalProperties === false) errors.push(`${path}: unexpected ${k}`);
      else if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
        errors.push(...validate(root, schema.additionalProperties as Schema, v, `${path}.${k}`));
      }
    }
  }
  return errors;
}

interface Assertion {
  name: string;
  ok: boolean;
}
interface Case {
  id: string;
  boundary: string | null;
  side: string | null;
  backend: string;
  assertions: Assertion[];
  ok: boolean;
  error: string | null;
}
interface Evidence {
  probe: string;
  boundary_inventory: { count: number; boundaries: Array<{ name: string }> };
  cases: Case[];
  summary: Record<string, number>;
}

/** Checks beyond the schema: recomputed summary, case verdicts, matrix coverage. */
export function semanticErrors(e: Evidence): string[] {
  const errors: string[] = [];
  const inv = e.boundary_inventory;
  if (inv.count !== inv.boundaries.length) {
    errors.push(`inventory count ${inv.count} != ${inv.boundaries.length} boundaries listed`);
  }
  const all = e.cases.flatMap((c) => c.assertions);
  let passed = 0;
  for (const c of e.cases) {
    const verdict = c.error === null && c.assertions.length > 0 && c.assertions.every((a) => a.ok);
    if (verdict !== c.ok) errors.push(`case ${c.id}: ok=${c.ok} but its assertions say ${verdict}`);
    if (verdict) passed++;
    else {
      const why = c.assertions.filter((a) => !a.ok).map((a) => a.name);
      errors.push(
        `case ${c.id} FAILED: ${why.join("; ") || ""}${
          c.error ? ` error: ${c.error.split("\n")[0]}` : ""
        }`,
      );
    }
  }
  const recomputed = {
    cases: e.cases.length,
    passed,
    failed: e.cases.length - passed,
    assertions: all.length,
    failed_assertions: all.filter((a) => !a.ok).length,
  };
  for (const [k, v] of Object.entries(recomputed)) {
    if (e.summary[k] !== v) {
      errors.push(`summary.${k} is ${e.summary[k]}, the assertions give ${v}`);
    }
  }
  if (e.probe === "fault-matrix") {
    const sites = faultInventory().map((x) => x.site);
    const current = sites.map((b) => b.name);
    const recorded = inv.boundaries.map((b) => b.name);
    if (JSON.stringify(current) !== JSON.stringify(recorded)) {
      errors.push(
        `recorded inventory ${recorded.join(",")} is not the code's ${current.join(",")}`,
      );
    }
    const have = new Set(e.cases.map((c) => `${c.boundary}:${c.side}:${c.backend}`));
    for (const backend of ["local", "postgres"] as const) {
      for (const b of sites) {
        if (b.backends && !b.backends.includes(backend)) continue;
        for (const side of ["before", "after"]) {
          if (!have.has(`${b.name}:${side}:${backend}`)) {
            errors.push(`missing case ${b.name}:${side}:${backend}`);
          }
        }
      }
    }
  }
  return errors;
}

/** Validate files; returns the number of files with errors. */
export async function verify(files: string[]): Promise<number> {
  const schema = JSON.parse(await Deno.readTextFile(SCHEMA)) as Schema;
  let bad = 0;
  for (const f of files) {
    let errors: string[];
    let summary = "";
    try {
      const doc = JSON.parse(await Deno.readTextFile(f));
      errors = validate(schema, schema, doc);
      if (errors.length === 0) {
        errors = semanticErrors(doc as Evidence);
        const s = (doc as Evidence).summary;
        summary = ` ${s.passed}/${s.cases} cases, ${
          s.assertions - s.failed_assertions
        }/${s.assertions} assertions`;
      }
    } catch (e) {
      errors = [`unreadable: ${e instanceof Error ? e.message : e}`];
    }
    const name = f.slice(f.lastIndexOf("/") + 1);
    if (errors.length === 0) console.log(`[verify] ok ${name}:${summary}`);
    else {
      bad++;
      console.log(`[verify] FAILED ${name}:${summary}`);
      for (const e of errors.slice(0, 40)) console.log(`[verify]   ${e}`);
      if (errors.length > 40) console.log(`[verify]   ... ${errors.length - 40} more`);
    }
  }
  return bad;
}

async function evidenceFiles(): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(DIR)) {
    if (e.isFile && e.name.endsWith(".json") && e.name !== "schema.json") {
      out.push(`${DIR}/${e.name}`);
    }
  }
  return out.sort();
}

if (import.meta.main) {
  const files = Deno.args.length > 0 ? Deno.args : await evidenceFiles();
  if (files.length === 0) {
    console.log("[verify] no evidence files in verification/ (run 'deno task probes')");
    Deno.exit(1);
  }
  const bad = await verify(files);
  console.log(`[verify] ${files.length - bad} of ${files.length} evidence files verified`);
  Deno.exit(bad === 0 ? 0 : 1);
}
