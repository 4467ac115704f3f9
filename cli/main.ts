/**
 * The `sluice` command. Thin: it parses arguments, calls the SDK and renders the result.
 * Each command group lives in `cli/commands/<name>.ts` and exports `register(program)`.
 * @module
 */
import { Command, Option } from "commander";
import { SLUICE_VERSION } from "../lib/version.ts";
import { EXIT } from "../lib/errors.ts";
import { printFailure } from "./output.ts";
import type { OutputFormat } from "./output.ts";
import { COMMANDS } from "./commands/mod.ts";

/** Build the command tree (exported for tests). */
export function buildProgram(): Command {
  const program = new Command("sluice")
    .description(
      "Deploy Kafka Streams SQL jobs as Docker containers and replace their filter predicate safely.",
    )
    .version(SLUICE_VERSION, "-V, --version", "print the sluice version")
    .addOption(
      new Option("-o, --output <format>", "output format").choices(["text", "json"]).default(
        "text",
      ),
    )
    .showHelpAfterError()
    .exitOverride();
  for (const register of COMMANDS) register(program);
  return program;
}

/** The output format chosen on the command line (global `-o`). */
export function outputFormat(cmd: Command): OutputFormat {
  let root: Command = cmd;
  while (root.parent) root = root.parent;
  return root.opts().output === "json" ? "json" : "text";
}

/** Run the CLI with the given arguments and return the exit status. */
export async function main(args: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(args, { from: "user" });
    return EXIT.OK;
  } catch (error) {
    // commander signals help/version/usage through exceptions when exitOverride is on
    const e = error as { code?: string; exitCode?: number };
    if (typeof e.code === "string" && e.code.startsWith("commander.")) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version") return EXIT.OK;
      return EXIT.USAGE;
    }
    const format: OutputFormat = args.includes("json") &&
        (args.includes("-o") || args.includes("--output"))
      ? "json"
      : "text";
    return printFailure(format, args.filter((a) => !a.startsWith("-"))[0] ?? "sluice", error);
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
