/**
 * `sluice logs MODEL [--follow] [--since D] [--tail N]`: the log lines of a model's current
 * generation, whatever its container is named (`openProject(...).logs`). Text: each line as it is
 * read (stderr lines on stderr, as `docker logs` does), then nothing else; `-o json`: one
 * envelope with the container, its generation and the lines.
 *
 * @example
 * ```sh
 * sluice logs eligible_orders --tail 20
 * sluice logs eligible_orders --follow --since 10m
 * ```
 * @module
 */
import type { Command } from "npm:commander@15.1.0";
import { parseSince, redactText, SluiceError } from "../../mod.ts";
import type { LogLine, RuntimeDeps } from "../../mod.ts";
import { outputFormat, printResult } from "../output.ts";
import { openCommandProject } from "./_options.ts";

interface LogsFlags {
  project: string;
  env?: string;
  follow?: boolean;
  since?: string;
  tail?: string;
}

function tailFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) {
    throw new SluiceError("USAGE_TAIL", `--tail takes a line count, found '${value}'`);
  }
  return Number(value);
}

/** Register `sluice logs`. */
export function register(program: Command, deps: RuntimeDeps = {}): void {
  program
    .command("logs")
    .description("print the log lines of a model's current generation, whatever its container name")
    .argument("<model>", "the model (or its application ID)")
    .option("--project <dir>", "project directory", ".")
    .option("--env <name>", "environment (required when the manifest declares environments)")
    .option("-f, --follow", "keep printing new lines until the container stops (Ctrl-C ends it)")
    .option(
      "--since <when>",
      "only lines since a duration ago (90s, 10m, 2h, 1d) or an RFC 3339 time",
    )
    .option("--tail <n>", "only the last N lines")
    .action(async (model: string, opts: LogsFlags, cmd: Command) => {
      const format = outputFormat(cmd);
      const since = opts.since === undefined ? undefined : parseSince(opts.since, Date.now());
      const tail = tailFlag(opts.tail);
      const lines: LogLine[] = [];
      const onLine = format === "json" ? (l: LogLine) => lines.push(l) : (l: LogLine) => {
        const text = redactText(l.line);
        if (l.stream === "stderr") console.error(text);
        else console.log(text);
      };
      const abort = new AbortController();
      const interrupt = () => abort.abort();
      if (opts.follow) Deno.addSignalListener("SIGINT", interrupt);
      try {
        await using project = await openCommandProject(deps, opts);
        const result = await project.logs(model, {
          follow: opts.follow,
          since,
          tail,
          signal: abort.signal,
          onLine,
        });
        if (format === "json") {
          printResult(format, "logs", { ...result, lines }, () => "");
        }
      } finally {
        if (opts.follow) Deno.removeSignalListener("SIGINT", interrupt);
      }
    });
}
