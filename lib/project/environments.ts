/**
 * Validate and compile a project on disk, offline (no provider is contacted):
 * {@link validateProject} checks every declared environment when none is chosen, reporting each
 * diagnostic once with all the others; {@link compileProject} compiles one environment and
 * writes each model's canonical artifact and its checksum file atomically.
 *
 * @example
 * ```ts
 * import { compileProject, validateProject } from "./environments.ts";
 * const checked = await validateProject("./orders");
 * console.log(checked.environments.map((e) => e.models.length));
 * const compiled = await compileProject("./orders", { out: await Deno.makeTempDir() });
 * for (const f of compiled.files) console.log(f.sha256, f.path);
 * ```
 * @module
 */
import { join } from "node:path";
import { atomicReplace } from "../fs/atomic_write.ts";
import type { SluiceError } from "../errors.ts";
import { compile } from "./compile.ts";
import type { CompileResult } from "./compile.ts";
import { readProject } from "./load.ts";
import type { Project } from "./load.ts";
import type { SettingsOverride } from "./settings_override.ts";
import { combineErrors } from "./manifest.ts";
import { type InstancePlacement, placeInstances } from "./placement.ts";

/** Options of {@link validateProject} and {@link compileProject}. */
export interface CheckOptions {
  /** The environment; validate checks every declared one when it is absent. */
  environment?: string | null;
  /** Treat warnings (external declarations) as errors. */
  strict?: boolean;
  /** A settings override given in code, applied to each environment checked (`settings_override.ts`). */
  settings?: SettingsOverride;
}

/** One environment's compile: its models and its warnings. */
export interface EnvironmentSummary {
  /** The environment, or null. */
  environment: string | null;
  /** Every model, compiled. */
  models: Array<{
    /** The model name. */
    name: string;
    /** Its application ID. */
    application_id: string;
    /** Its input topic. */
    input_topic: string;
    /** Its output topic. */
    output_topic: string;
    /** The sha256 of the model's canonical runner artifact. */
    sha256: string;
    /**
     * Each instance's endpoint (`null`: the environment's one daemon), for a model of several
     * instances only: absent for one, so a single-instance summary is as before.
     */
    placement?: InstancePlacement[];
  }>;
  /** Warnings (`{code, message, location?}`), e.g. about external declarations. */
  warnings: Array<Record<string, unknown>>;
}

/** What {@link validateProject} found: every checked environment valid. */
export interface ValidateResult {
  /** The project name. */
  project: string;
  /** One entry per environment checked. */
  environments: EnvironmentSummary[];
}

/** What {@link compileProject} wrote. */
export interface CompileOutput extends EnvironmentSummary {
  /** The directory the artifacts were written to. */
  out: string;
  /** The files written: each model's artifact path and its sha256. */
  files: Array<{ model: string; path: string; sha256: string }>;
}

/** A compiled environment with the project it was loaded as. */
interface Compiled extends CompileResult {
  loaded: Project;
}

/**
 * Check the project (every declared environment unless one is chosen). Throws every error at
 * once (`PROJECT_INVALID` listing them when there are several).
 *
 * @example
 * ```ts
 * import { validateProject } from "./environments.ts";
 * const r = await validateProject("./orders", { strict: true });
 * console.log(r.project, r.environments.length);
 * ```
 */
export async function validateProject(
  dir: string,
  options: CheckOptions = {},
): Promise<ValidateResult> {
  const results = await compileEnvironments(dir, options, true);
  return { project: results[0].project, environments: results.map(summary) };
}

/**
 * Compile one environment and write `<model>.artifact.json` and `<model>.artifact.sha256` for
 * every model into `out` (default `<project>/.sluice/artifacts[/<environment>]`).
 *
 * @example
 * ```ts
 * import { compileProject } from "./environments.ts";
 * const r = await compileProject("./orders");
 * console.log(r.out, r.files.length);
 * ```
 */
export async function compileProject(
  dir: string,
  options: CheckOptions & { out?: string } = {},
): Promise<CompileOutput> {
  const [result] = await compileEnvironments(dir, options, false);
  const out = options.out ??
    join(
      result.loaded.dir,
      ".sluice",
      "artifacts",
      ...(result.environment ? [result.environment] : []),
    );
  await Deno.mkdir(out, { recursive: true });
  const enc = new TextEncoder();
  const files: CompileOutput["files"] = [];
  for (const a of result.artifacts) {
    const path = join(out, `${a.model}.artifact.json`);
    await atomicReplace(path, enc.encode(a.canonical));
    await atomicReplace(
      join(out, `${a.model}.artifact.sha256`),
      enc.encode(`${a.sha256}  ${a.model}.artifact.json\n`),
    );
    files.push({ model: a.model, path, sha256: a.sha256 });
  }
  return { ...summary(result), out, files };
}

/**
 * Load and compile the project for the chosen environment, or (validate only) for every
 * declared environment when none is chosen. Throws every error at once.
 */
async function compileEnvironments(
  dir: string,
  options: CheckOptions,
  allEnvironments: boolean,
): Promise<Compiled[]> {
  const environment = options.environment ?? null;
  const settings = options.settings;
  const first = await readProject(dir, { environment, settings });
  const required = first.errors.find((e) => e.code === "MANIFEST_ENVIRONMENT_REQUIRED");
  let loaded: Array<{ project: Project | null; errors: SluiceError[] }> = [first];
  if (allEnvironments && environment === null && required && first.errors.length === 1) {
    const names = (required.evidence?.environments ?? []) as string[];
    loaded = [];
    for (const name of names) {
      loaded.push(await readProject(dir, { environment: name, settings }));
    }
  }
  const errors = loaded.flatMap((l) => l.errors);
  if (errors.length > 0) throw combineErrors(dedupe(errors), "PROJECT_INVALID");
  const results = loaded.map((l) => ({ ...compile(l.project!), loaded: l.project! }));
  const warnings = results.flatMap((r) => r.warnings);
  if (options.strict && warnings.length > 0) {
    throw combineErrors(dedupe(warnings), "PROJECT_INVALID");
  }
  return results;
}

/** The same diagnostic from several environments is reported once. */
function dedupe(errors: SluiceError[]): SluiceError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = `${e.code}\n${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function summary(r: Compiled): EnvironmentSummary {
  const { manifest } = r.loaded;
  return {
    environment: r.environment,
    models: r.artifacts.map((a) => {
      const instances = manifest.models.find((m) => m.name === a.model)?.instances ?? 1;
      const placement = instances > 1 ? placeInstances(instances, manifest.placement) : null;
      return {
        name: a.model,
        application_id: a.artifact.application_id,
        input_topic: a.artifact.input.topic,
        output_topic: a.artifact.output.topic,
        sha256: a.sha256,
        ...(placement ? { placement } : {}),
      };
    }),
    warnings: r.warnings.map((w) => w.toJSON()),
  };
}

/** One model as it compiles. */
export type CompiledModelSummary = EnvironmentSummary["models"][number];
