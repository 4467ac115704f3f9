/**
 * The day-two commands on a running project: `sluice restart MODEL --reason TEXT` (start a runner
 * someone else stopped again, audited) and `sluice skip-record MODEL --partition P --offset O
 * --reason TEXT` (past a record the runner cannot decode, audited, then restarted). Thin: each calls one SDK method (`openProject(...)`) and
 * renders its typed result. Exit statuses: 0 when the runner runs again (or an earlier run had
 * finished it), 4 when blocked (nothing was recorded or started), 2 for a missing `--reason`.
 * @module
 */
import type { Command } from "npm:commander@15.1.0";
import { type RestartResult, type RuntimeDeps, SluiceError } from "../../mod.ts";
import { outputFormat, printResult } from "../output.ts";
import { type AuditedFlags, auditedOptions, openCommandProject } from "./_options.ts";

/** The text of a restart's result. */
export function restartText(r: RestartResult): string {
  const how = r.stop.killed
    ? `killed (exit ${r.stop.exit_code}${
      r.waited_for_group ? "; its member left the group first" : ""
    })`
    : `stopped (exit ${r.stop.exit_code}${r.stop.kind ? `, ${r.stop.kind}` : ""})`;
  const which = r.instance
    ? ` instance ${r.instance.index} on ${r.instance.endpoint ?? "the one daemon"}`
    : "";
  const rest = r.instance && r.instance.still_stopped.length > 0
    ? [
      `  still stopped: instance${r.instance.still_stopped.length === 1 ? "" : "s"} ${
        r.instance.still_stopped.join(", ")
      } ('sluice restart ${r.model} --instance N --reason TEXT')`,
    ]
    : [];
  return [
    `${r.model}${which}: ${r.container} (generation ${
      r.generation ?? "-"
    }) ${how} is running again${r.started_now ? "" : " (an earlier run had started it)"}.`,
    `  restart ${r.event_id} ${r.recorded_now ? "recorded" : "was already recorded"} in the audit${
      r.after_skip ? ` after the skip ${r.after_skip}` : ""
    }; committed offsets at the start: ${
      Object.entries(r.committed).map(([p, o]) => `${p}=${o}`).join(" ") || "none"
    }`,
    ...rest,
  ].join("\n");
}

function instanceFlag(value: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(value)) {
    throw new SluiceError("USAGE_INSTANCE", `--instance takes an instance index, found '${value}'`);
  }
  return Number(value);
}

function partitionFlag(value: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(value)) {
    throw new SluiceError(
      "USAGE_PARTITION",
      `--partition takes a partition number, found '${value}'`,
    );
  }
  return Number(value);
}

/** Add `restart` and `skip-record`. */
export function register(program: Command, deps: RuntimeDeps = {}): void {
  auditedOptions(
    program
      .command("restart")
      .description(
        "start a runner someone else stopped (docker stop/kill) again: the same owned generation, checked and recorded in the audit first",
      )
      .argument("<model>", "the model (or its application ID)")
      .option(
        "--instance <n>",
        "a set's instance to start again (default: the lowest-index stopped one)",
      ),
  ).action(async (model: string, opts: AuditedFlags & { instance?: string }, cmd: Command) => {
    const format = outputFormat(cmd);
    await using project = await openCommandProject(deps, opts, format);
    const r = await project.restart({
      model,
      reason: opts.reason,
      confirmEnv: opts.confirmEnv,
      breakStaleLock: opts.breakStaleLock,
      ...(opts.instance === undefined ? {} : { instance: instanceFlag(opts.instance) }),
    });
    printResult(format, "restart", r, () => restartText(r));
  });

  auditedOptions(
    program
      .command("skip-record")
      .description(
        "move past the record a runner stopped at because it cannot decode it (exit 13): that one partition by one, recorded in the audit first, then start it again",
      )
      .argument("<model>", "the model (or its application ID)")
      .requiredOption(
        "--partition <n>",
        "the failing record's partition (as 'sluice status' names it)",
      )
      .requiredOption("--offset <n>", "the failing record's offset (as 'sluice status' names it)"),
  ).action(
    async (
      model: string,
      opts: AuditedFlags & { partition: string; offset: string },
      cmd: Command,
    ) => {
      const format = outputFormat(cmd);
      const partition = partitionFlag(opts.partition);
      await using project = await openCommandProject(deps, opts, format);
      const r = await project.skipRecord({
        model,
        partition,
        offset: opts.offset,
        reason: opts.reason,
        confirmEnv: opts.confirmEnv,
        breakStaleLock: opts.breakStaleLock,
      });
      printResult(format, "skip-record", r, () =>
        [
          `${r.model}: skipped ${r.record.topic}-${r.record.partition}@${r.record.offset} (${r.failure.reason}${
            r.failure.field ? `, field '${r.failure.field}'` : ""
          }); committed offset of partition ${r.record.partition} is now ${r.committed}${
            r.moved_now ? "" : " (moved by an earlier run)"
          }.`,
          `  skip ${r.event_id} ${
            r.recorded_now ? "recorded" : "was already recorded"
          } in the audit`,
          restartText(r.restart),
        ].join("\n"));
    },
  );
}
