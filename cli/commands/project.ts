/**
 * Project commands: `sluice init`, `sluice validate`, `sluice compile`. Thin: they call the
 * SDK (lib/project) and render the result as text or the `-o json` envelope.
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { register } from "./project.ts";
 * const program = new Command("sluice");
 * register(program);
 * ```
 * @module
 */
import type { Command } from "commander";
import { join } from "node:path";
import type { SluiceError } from "../../lib/errors.ts";
import { atomicReplace, ensureDir } from "../../lib/fs/atomic_write.ts";
import { compile } from "../../lib/project/compile.ts";
import type { CompileResult } from "../../lib/project/compile.ts";
import { readProject } from "../../lib/project/load.ts";
import type { Project } from "../../lib/project/load.ts";
import { combineErrors } from "../../lib/project/manifest.ts";
import { initProject } from "../../lib/project/starter.ts";
import type { InitResult } from "../../lib/project/starter.ts";
import { outputFormat } from "../main.ts";
import { printResult } from "../output.ts";

interface ProjectOptions {
  project: string;
  env?: string;
  strict?: boolean;
}

/** Add `init`, `validate` and `compile` to the program. */
export function register(program: Command): void {
  program
    .command("init")
    .description("write the orders starter project (sluice.yaml, a model, samples)")
    .argument("[dir]", "project directory (created if missing)", ".")
    .option("--force", "overwrite existing files")
    .option("--dry-run", "list the files that would be written; write nothing")
    .action(async (dir: string, opts: { force?: boolean; dryRun?: boolean }, cmd: Command) => {
      const result = await initProject(dir, { force: opts.force, dryRun: opts.dryRun });
      printResult(outputFormat(cmd), "init", result, (d) => renderInit(d as InitResult));
    });

  program
    .command("validate")
    .description("check sluice.yaml and every SQL model (no provider is contacted)")
    .option("--project <dir>", "project directory", ".")
    .option("--env <name>", "environment (default: every declared environment)")
    .option("--strict", "treat warnings (external declarations) as errors")
    .action(async (opts: ProjectOptions, cmd: Command) => {
      const results = await compileEnvironments(opts, true);
      const data = {
        project: results[0].project,
        environments: results.map(summary),
      };
      const format = outputFormat(cmd);
      if (format === "text") { for (const r of results) printWarnings(r); }
      printResult(format, "validate", data, () => renderValidate(results));
    });

  program
    .command("compile")
    .description("compile every model to a canonical runner artifact and print checksums")
    .option("--project <dir>", "project directory", ".")
    .option("--env <name>", "environment (required when the project declares environments)")
    .option("--out <dir>", "output directory (default: <project>/.sluice/artifacts[/<env>])")
    .option("--strict", "treat warnings (external declarations) as errors")
    .action(async (opts: ProjectOptions & { out?: string }, cmd: Command) => {
      const [result] = await compileEnvironments(opts, false);
      const project = result.loaded;
      const out = opts.out ??
        join(
          project.dir,
          ".sluice",
          "artifacts",
          ...(result.environment ? [result.environment] : []),
        );
      await ensureDir(out);
      const files: Array<{ model: string; path: string; sha256: string }> = [];
      for (const a of result.artifacts) {
        const path = join(out, `${a.model}.artifact.json`);
        await atomicReplace(path, a.canonical);
        await atomicReplace(
          join(out, `${a.model}.artifact.sha256`),
          `${a.sha256}  ${a.model}.artifact.json\n`,
        );
        files.push({ model: a.model, path, sha256: a.sha256 });
      }
      const data = { ...summary(result), out, files };
      const format = outputFormat(cmd);
      if (format === "text") printWarnings(result);
      printResult(format, "compile", data, () => {
        return files.map((f) => `${f.sha256}  ${f.path}`).join("\n");
      });
    });
}

type EnvResult = CompileResult & { loaded: Project };

/**
 * Load and compile the project for the chosen environment, or (validate only) for every
 * declared environment when none is chosen. Throws every error at once.
 */
async function compileEnvironments(
  opts: ProjectOptions,
  allEnvironments: boolean,
): Promise<EnvResult[]> {
  const first = await readProject(opts.project, { environment: opts.env ?? null });
  const required = first.errors.find((e) => e.code === "MANIFEST_ENVIRONMENT_REQUIRED");
  let loaded: Array<{ project: Project | null; errors: SluiceError[] }> = [first];
  if (allEnvironments && opts.env === undefined && required && first.errors.length === 1) {
    const names = (required.evidence?.environments ?? []) as string[];
    loaded = [];
    for (const environment of names) loaded.push(await readProject(opts.project, { environment }));
  }
  const errors = loaded.flatMap((l) => l.errors);
  if (errors.length > 0) throw combineErrors(dedupe(errors), "PROJECT_INVALID");
  const results = loaded.map((l) => ({ ...compile(l.project!), loaded: l.project! }));
  const warnings = results.flatMap((r) => r.warnings);
  if (opts.strict && warnings.length > 0) {
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

function summary(r: EnvResult) {
  return {
    environment: r.environment,
    models: r.artifacts.map((a) => ({
      name: a.model,
      application_id: a.artifact.application_id,
      input_topic: a.artifact.input.topic,
      output_topic: a.artifact.output.topic,
      sha256: a.sha256,
    })),
    warnings: r.warnings.map((w) => w.toJSON()),
  };
}

/** Warnings go to stderr in text mode, so stdout stays the result. */
function printWarnings(r: EnvResult): void {
  for (const w of r.warnings) console.error(`warning[${w.code}]: ${w.message}`);
}

function renderValidate(results: EnvResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    const env = r.environment === null ? "" : ` (environment ${r.environment})`;
    lines.push(`ok: project ${r.project}${env}: ${r.artifacts.length} model(s) valid`);
    for (const a of r.artifacts) {
      lines.push(
        `  ${a.model}: ${a.artifact.input.topic} -> ${a.artifact.output.topic}  application ${a.artifact.application_id}  sha256 ${a.sha256}`,
      );
    }
  }
  return lines.join("\n");
}

function renderInit(r: InitResult): string {
  const verb = r.dryRun ? "would write" : "wrote";
  const lines = r.files.map((f) =>
    `  ${f.action === "overwrite" ? "overwrite" : "create"} ${f.path}`
  );
  return [`${verb} ${r.files.length} files in ${r.dir}:`, ...lines].join("\n");
}
