/**
 * The `sluice` command. Thin: it parses arguments, calls the SDK (`mod.ts`, nothing else) and
 * renders the result (`cli/output.ts`). Each command group lives in `cli/commands/<name>.ts`
 * and exports `register(program, deps)`.
 *
 * {@link runCli} is the whole command as a function: the launcher calls it with the process's
 * arguments and the real ports; a test wrapper may call it with other ports, clock and UUID
 * source (`deps`), and runs the same code.
 *
 * @example
 * ```ts
 * import { runCli } from "./main.ts";
 * const status = await runCli(["--version"]);
 * console.log(status); // 0
 * ```
 * @module
 */
import { Command, Option } from "npm:commander@15.1.0";
import { EXIT, guardInventorySwitch, SLUICE_VERSION } from "../mod.ts";
import type { RuntimeDeps } from "../mod.ts";
import { printFailure } from "./output.ts";
import type { OutputFormat } from "./output.ts";
import { COMMANDS } from "./commands/mod.ts";

/** Build the command tree (exported for tests); `deps` reach every journey the commands call. */
export function buildProgram(deps: RuntimeDeps = {}): Command {
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
  for (const register of COMMANDS) register(program, deps);
  return program;
}

/**
 * Run the CLI with the given arguments and return the exit status. A fault switch
 * (`SLUICE_FAULT_POINT`) set without `SLUICE_TEST_ONLY_ALLOW_FAULTS=1`, or naming a site outside
 * the inventory, is refused before anything runs (exit 2).
 *
 * @example
 * ```ts
 * import { runCli } from "./main.ts";
 * // a test wrapper: await runCli(Deno.args, { docker: fakeDocker, kafka: fakeKafka, clock, uuids });
 * console.log(await runCli(["--help"]));
 * ```
 */
export async function runCli(args: string[], deps: RuntimeDeps = {}): Promise<number> {
  const program = buildProgram(deps);
  try {
    guardInventorySwitch();
    await program.parseAsync(withoutHelpOfUnknownCommand(program, args), { from: "user" });
    return EXIT.OK;
  } catch (error) {
    // commander signals help/version/usage through exceptions when exitOverride is on
    const e = error as { code?: string; exitCode?: number };
    if (typeof e.code === "string" && e.code.startsWith("commander.")) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version") return EXIT.OK;
      return EXIT.USAGE;
    }
    const format = formatFromArgs(args);
    return printFailure(format, commandName(program, args), error);
  }
}

/** `-o json` / `--output json` / `--output=json` anywhere on the command line. */
function formatFromArgs(args: string[]): OutputFormat {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if ((a === "-o" || a === "--output") && args[i + 1] === "json") return "json";
    if (a === "--output=json" || a === "-ojson") return "json";
  }
  return "text";
}

/** The command path named on the command line (e.g. "state resume"), skipping option values. */
function commandName(program: Command, args: string[]): string {
  const names: string[] = [];
  let cmd: Command = program;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "-o" || a === "--output") {
      i++;
      continue;
    }
    if (a.startsWith("-")) continue;
    const sub = cmd.commands.find((c) => c.name() === a || c.aliases().includes(a));
    if (!sub) break;
    names.push(sub.name());
    cmd = sub;
  }
  return names.join(" ") || "sluice";
}

/**
 * The arguments to parse: unchanged, unless they name an unknown command together with `-h` or
 * `--help`. commander answers help before it looks for the command (`sluice nonexistent --help`
 * would print the top help and exit 0); without the help flag it reports the unknown command as
 * the usage error it is (exit 2).
 */
export function withoutHelpOfUnknownCommand(program: Command, args: string[]): string[] {
  const help = (a: string) => a === "-h" || a === "--help";
  if (!args.some(help)) return args;
  let cmd: Command = program;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") break;
    if (a === "-o" || a === "--output") {
      i++;
      continue;
    }
    if (a.startsWith("-")) continue;
    // a command without subcommands takes the rest as its own arguments
    if (cmd.commands.length === 0 || (cmd === program && a === "help")) return args;
    const sub = cmd.commands.find((c) => c.name() === a || c.aliases().includes(a));
    if (!sub) return args.filter((x) => !help(x));
    cmd = sub;
  }
  return args;
}

if (import.meta.main) {
  Deno.exit(await runCli(Deno.args));
}
