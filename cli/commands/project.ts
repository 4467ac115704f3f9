/**
 * Project commands: `sluice init`, `sluice validate`, `sluice compile`. Thin: they call the SDK
 * (`initProject`, the project handle's `validate` and `compile`) and render the result as text
 * or the `-o json` envelope.
 *
 * @example
 * ```ts
 * import { Command } from "npm:commander@15.1.0";
 * import { register } from "./project.ts";
 * const program = new Command("sluice");
 * register(program);
 * ```
 * @module
 */
import type { Command } from "npm:commander@15.1.0";
import { initProject } from "../../mod.ts";
import type {
  CompileOutput,
  EnvironmentSummary,
  InitResult,
  RuntimeDeps,
  ValidateResult,
} from "../../mod.ts";
import { outputFormat, printResult } from "../output.ts";
import { openCommandProject } from "./_options.ts";

interface ProjectFlags {
  project: string;
  env?: string;
  strict?: boolean;
}

/** Add `init`, `validate` and `compile` to the program. */
export function register(program: Command, deps: RuntimeDeps = {}): void {
  program
    .command("init")
    .description("write the orders starter project (sluice.yaml, a model, samples)")
    .argument("[dir]", "project directory (created if missing)", ".")
    .option("--force", "overwrite existing files")
    .option("--dry-run", "list the files that would be written; write nothing")
    .action(async (dir: string, opts: { force?: boolean; dryRun?: boolean }, cmd: Command) => {
      const result = await initProject(dir, { force: opts.force, dryRun: opts.dryRun });
      // the CLI's JSON as before SDK 0.2.0 renamed the field (`dry_run`): `dryRun`
      const { dry_run, ...rest } = result;
      printResult(
        outputFormat(cmd),
        "init",
        { ...rest, dryRun: dry_run },
        () => renderInit(result),
      );
    });

  program
    .command("validate")
    .description("check sluice.yaml and every SQL model (no provider is contacted)")
    .option("--project <dir>", "project directory", ".")
    .option("--env <name>", "environment (default: every declared environment)")
    .option("--strict", "treat warnings (external declarations) as errors")
    .action(async (opts: ProjectFlags, cmd: Command) => {
      await using project = await openCommandProject(deps, opts);
      const result = await project.validate({ strict: opts.strict });
      const format = outputFormat(cmd);
      if (format === "text") { for (const e of result.environments) printWarnings(e); }
      printResult(format, "validate", result, () => renderValidate(result));
    });

  program
    .command("compile")
    .description("compile every model to a canonical runner artifact and print checksums")
    .option("--project <dir>", "project directory", ".")
    .option("--env <name>", "environment (required when the project declares environments)")
    .option("--out <dir>", "output directory (default: <project>/.sluice/artifacts[/<env>])")
    .option("--strict", "treat warnings (external declarations) as errors")
    .action(async (opts: ProjectFlags & { out?: string }, cmd: Command) => {
      await using project = await openCommandProject(deps, opts);
      const result: CompileOutput = await project.compile({ strict: opts.strict, out: opts.out });
      const format = outputFormat(cmd);
      if (format === "text") printWarnings(result);
      printResult(format, "compile", result, () => {
        return result.files.map((f) => `${f.sha256}  ${f.path}`).join("\n");
      });
    });
}

/** Warnings go to stderr in text mode, so stdout stays the result. */
function printWarnings(e: EnvironmentSummary): void {
  for (const w of e.warnings) console.error(`warning[${w.code}]: ${w.message}`);
}

function renderValidate(r: ValidateResult): string {
  const lines: string[] = [];
  for (const e of r.environments) {
    const env = e.environment === null ? "" : ` (environment ${e.environment})`;
    lines.push(`ok: project ${r.project}${env}: ${e.models.length} model(s) valid`);
    for (const m of e.models) {
      lines.push(
        `  ${m.name}: ${m.input_topic} -> ${m.output_topic}  application ${m.application_id}  sha256 ${m.sha256}` +
          (m.placement
            ? `  instances ${
              m.placement.map((p) => `${p.instance}@${p.endpoint ?? "daemon"}`).join(" ")
            }`
            : ""),
      );
    }
  }
  return lines.join("\n");
}

function renderInit(r: InitResult): string {
  const verb = r.dry_run ? "would write" : "wrote";
  const lines = r.files.map((f) =>
    `  ${f.action === "overwrite" ? "overwrite" : "create"} ${f.path}`
  );
  return [`${verb} ${r.files.length} files in ${r.dir}:`, ...lines].join("\n");
}
