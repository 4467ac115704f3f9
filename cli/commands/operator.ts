/**
 * The operator's explicit decisions about a pending operation: `sluice state abandon` and
 * `sluice state accept-retention-loss`. Thin: each calls one SDK function (`abandon`,
 * `acceptRetentionLoss` from `mod.ts`) and renders its typed result. Exit statuses: 0 when the
 * decision is recorded (and, for a retention loss, the positions moved), 4 when blocked, 2 for a
 * missing `--reason`.
 * @module
 */
import type { Command } from "npm:commander@15.1.0";
import type { RuntimeDeps } from "../../mod.ts";
import { outputFormat, printResult } from "../output.ts";
import {
  type AuditedFlags,
  breakLockOption,
  confirmEnvOption,
  openCommandProject,
  projectOptions,
  reasonOption,
} from "./_options.ts";

interface Flags extends AuditedFlags {
  operationId: string;
  plan?: string;
}

/** Add `state abandon` and `state accept-retention-loss`. */
export function register(program: Command, deps: RuntimeDeps = {}): void {
  const state = program.commands.find((c) => c.name() === "state") ??
    program.command("state").description("inspect and initialize deployment state");

  const common = (c: Command) =>
    breakLockOption(confirmEnvOption(reasonOption(
      projectOptions(c).requiredOption("--operation-id <uuid>", "the pending operation"),
    )));

  common(state.command("abandon"))
    .description(
      "record that a pending operation can never continue and free the project; changes no container, volume, topic or offset",
    )
    .action(async (opts: Flags, cmd: Command) => {
      const format = outputFormat(cmd);
      await using project = await openCommandProject(deps, opts, format);
      const r = await project.abandon({
        operationId: opts.operationId,
        reason: opts.reason,
        confirmEnv: opts.confirmEnv,
        breakStaleLock: opts.breakStaleLock,
      });
      printResult(format, "state abandon", r, () =>
        [
          `Operation ${r.operation_id} (${r.kind}, last boundary ${
            r.last_boundary ?? "intent"
          }) is abandoned${r.recorded_now ? "" : " (it was already recorded)"}.`,
          "Nothing was stopped, removed, created or started; no offset moved; ownership serial " +
          `${r.serial} is unchanged. Run 'sluice plan' to see what the project needs now.`,
        ].join("\n"));
    });

  common(state.command("accept-retention-loss"))
    .requiredOption("--plan <file>", "the original reviewed (format 6) plan file")
    .description(
      "accept that retention removed input records below a stopped operation's positions: record the lost ranges, move those positions to the earliest retained",
    )
    .action(async (opts: Flags, cmd: Command) => {
      const format = outputFormat(cmd);
      await using project = await openCommandProject(deps, opts, format);
      const r = await project.acceptRetentionLoss({
        plan: opts.plan!,
        operationId: opts.operationId,
        reason: opts.reason,
        confirmEnv: opts.confirmEnv,
        breakStaleLock: opts.breakStaleLock,
      });
      printResult(format, "state accept-retention-loss", r, () =>
        [
          `Retention loss accepted for operation ${r.operation_id} (decision ${r.decision.decision_id}${
            r.recorded_now ? "" : ", recorded by an earlier run"
          }${r.already_moved ? "; that run also moved the positions, nothing was done now" : ""}):`,
          ...r.decision.partitions.map((x) =>
            `  ${x.topic}-${x.partition}: offsets [${x.from}, ${x.to}) lost (${x.lost} records); position now ${x.to}`
          ),
          `continue: ${r.resume}`,
        ].join("\n"));
    });
}
