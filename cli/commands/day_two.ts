/**
 * The day-two commands on a running project: `sluice restart MODEL --reason TEXT` (start a runner
 * someone else stopped again, audited). Thin: each calls one SDK method (`openProject(...)`) and
 * renders its typed result. Exit statuses: 0 when the runner runs again (or an earlier run had
 * finished it), 4 when blocked (nothing was recorded or started), 2 for a missing `--reason`.
 * @module
 */
import type { Command } from "commander";
import { openProject, type RestartResult, type RuntimeDeps } from "../../mod.ts";
import { outputFormat, printResult, progressPrinter } from "../output.ts";

interface Flags {
  project: string;
  env?: string;
  reason: string;
  confirmEnv?: string;
  breakStaleLock?: string;
}

function common(c: Command): Command {
  return c
    .option("--project <dir>", "project directory", ".")
    .option("--env <name>", "environment (required when the manifest declares environments)")
    .requiredOption("--reason <text>", "why (recorded in the audit with who and when)")
    .option(
      "--confirm-env <name>",
      "repeat the environment name where the environment policy demands it",
    )
    .option(
      "--break-stale-lock <lock-id>",
      "first remove a stale lock left by a dead process (see 'state show')",
    );
}

/** The text of a restart's result. */
export function restartText(r: RestartResult): string {
  const how = r.stop.killed
    ? `killed (exit ${r.stop.exit_code}${
      r.waited_for_group ? "; its member left the group first" : ""
    })`
    : `stopped (exit ${r.stop.exit_code}${r.stop.kind ? `, ${r.stop.kind}` : ""})`;
  return [
    `${r.model}: ${r.container} (generation ${r.generation ?? "-"}) ${how} is running again${
      r.started_now ? "" : " (an earlier run had started it)"
    }.`,
    `  restart ${r.event_id} ${r.recorded_now ? "recorded" : "was already recorded"} in the audit${
      r.after_skip ? ` after the skip ${r.after_skip}` : ""
    }; committed offsets at the start: ${
      Object.entries(r.committed).map(([p, o]) => `${p}=${o}`).join(" ") || "none"
    }`,
  ].join("\n");
}

/** Add `restart`. */
export function register(program: Command, deps: RuntimeDeps = {}): void {
  common(
    program
      .command("restart")
      .description(
        "start a runner someone else stopped (docker stop/kill) again: the same owned generation, checked and recorded in the audit first",
      )
      .argument("<model>", "the model (or its application ID)"),
  ).action(async (model: string, opts: Flags, cmd: Command) => {
    const format = outputFormat(cmd);
    await using project = await openProject({
      ...deps,
      dir: opts.project,
      environment: opts.env ?? null,
      onProgress: progressPrinter(format),
    });
    const r = await project.restart({
      model,
      reason: opts.reason,
      confirmEnv: opts.confirmEnv,
      breakStaleLock: opts.breakStaleLock,
    });
    printResult(format, "restart", r, () => restartText(r));
  });
}
