/**
 * `sluice acknowledge-drift MODEL --reason TEXT`: accept, on the record, the drift `plan` and
 * `status` report for a model's runner (started outside sluice, or offsets moved while it was
 * stopped). Thin: one SDK call (`openProject(...).acknowledgeDrift`) and its rendering. Exit
 * statuses: 0 when recorded (or already recorded by an earlier run), 4 when blocked (no drift to
 * acknowledge, `BLOCKED_NO_DRIFT`; the runner is not the owned generation; nothing recorded), 2
 * without `--reason`, 5 when the deployment lock is held elsewhere.
 * @module
 */
import type { Command } from "npm:commander@15.1.0";
import type { AcknowledgeDriftResult, RunnerDrift, RuntimeDeps } from "../../mod.ts";
import { outputFormat, printResult } from "../output.ts";
import { type AuditedFlags, auditedOptions, openCommandProject } from "./_options.ts";

function driftLine(d: RunnerDrift): string {
  return `  - ${d.summary}`;
}

/** The text of an acknowledgment's result. */
export function acknowledgeText(r: AcknowledgeDriftResult): string {
  const lines: string[] = [];
  if (r.event_id) {
    lines.push(
      `${r.model}: drift of ${r.container} acknowledged (event ${r.event_id}, recorded in the audit):`,
      ...r.acknowledged.map(driftLine),
    );
  }
  for (const a of r.already) {
    lines.push(`${r.model}: already acknowledged by ${a.event_id}:`, driftLine(a.drift));
  }
  lines.push("  'sluice plan' no longer reports it; a later change is a new drift.");
  return lines.join("\n");
}

/** Add `acknowledge-drift`. */
export function register(program: Command, deps: RuntimeDeps = {}): void {
  auditedOptions(
    program
      .command("acknowledge-drift")
      .description(
        "accept the drift plan/status report for a runner (started outside sluice, offsets moved while it was stopped): recorded in the audit exactly as found, nothing else changes",
      )
      .argument("<model>", "the model (or its application ID)"),
  ).action(async (model: string, opts: AuditedFlags, cmd: Command) => {
    const format = outputFormat(cmd);
    await using project = await openCommandProject(deps, opts, format);
    const r = await project.acknowledgeDrift({
      model,
      reason: opts.reason,
      confirmEnv: opts.confirmEnv,
      breakStaleLock: opts.breakStaleLock,
    });
    printResult(format, "acknowledge-drift", r, () => acknowledgeText(r));
  });
}
