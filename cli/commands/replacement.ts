/**
 * `sluice state runner-status` and `sluice state resume` for the pending operation of every
 * journey, named by its plan file and operation ID: a reviewed replacement (the reviewed
 * `apply --plan FILE` path is in deploy.ts and renders its result here), a create, a runner
 * removal or a connector change. Exit statuses: 0 when the operation is verified completed (or
 * the report was produced), 4 when blocked, 6 when the outcome is unknown (`committed: null`).
 * @module
 */
import type { Command } from "npm:commander@15.1.0";
import { SluiceError } from "../../mod.ts";
import type {
  ApplyResult,
  OperationStatusReport,
  ReplacementResult,
  RunnerCredentialsEvidence,
  RuntimeDeps,
} from "../../mod.ts";
import { outputFormat, printResult } from "../output.ts";
import {
  breakLockOption,
  confirmEnvOption,
  openCommandProject,
  projectOptions,
} from "./_options.ts";

interface OperationFlags {
  project: string;
  env?: string;
  plan: string;
  operationId: string;
  confirmEnv?: string;
  breakStaleLock?: string;
  openlineage?: string;
}

/**
 * The CLI's JSON of a replacement result: the SDK's result with the `committed` field the CLI's
 * envelope has always carried (SDK 0.2.0 left it out: `outcome` determines it — true for
 * `completed`, null for `unknown`, false for `blocked` and `timeout`).
 */
function replacementJson(r: ReplacementResult): ReplacementResult & { committed: boolean | null } {
  return {
    ...r,
    committed: r.outcome === "completed" ? true : r.outcome === "unknown" ? null : false,
  };
}

/**
 * The line an apply or a resume adds when its operation went on with other runner credentials
 * than its plan bound (the result's `runner_client_changed`: hashes only, never a secret).
 */
export function credentialsChangedNote(changed: RunnerCredentialsEvidence | undefined): string {
  return changed
    ? "\nnote: the runner's Kafka credentials changed since the plan; the operation went on with the current ones."
    : "";
}

/** Render a replacement result and throw for the non-success outcomes (mapped to exit codes). */
export function reportReplacement(
  format: "text" | "json",
  command: string,
  result: ReplacementResult,
  changed?: RunnerCredentialsEvidence,
): void {
  const r = {
    ...replacementJson(result),
    ...(changed ? { runner_client_changed: changed } : {}),
  };
  if (r.committed === true) {
    printResult(
      format,
      command,
      r,
      () =>
        `Replacement ${r.operation_id} completed and committed (ownership serial ${r.serial}).` +
        (r.reason ? `\n${r.reason}` : "") +
        r.lineage_warnings.map((w) => `\nwarning: ${w}`).join("") +
        credentialsChangedNote(changed),
    );
    return;
  }
  const lines = [
    `operation ${r.operation_id}: ${r.outcome}; last acknowledged boundary: ${
      r.last_boundary ?? "none"
    }; committed: ${r.committed}`,
    ...r.blockers.map((b) => `  [${b.code}] ${b.message}`),
    ...(r.reason ? [`  ${r.reason}`] : []),
    ...(changed ? [credentialsChangedNote(changed).slice(1)] : []),
    `inspect: ${r.commands.status}`,
    `resume:  ${r.commands.resume}`,
  ];
  const code = r.outcome === "blocked" && r.blockers.length > 0
    ? r.blockers[0].code
    : r.committed === null
    ? "UNKNOWN_OUTCOME"
    : "UNKNOWN_OUTCOME_TIMEOUT";
  throw new SluiceError(code, lines.join("\n"), { evidence: { result: r } });
}

/** Add `state runner-status` and `state resume`. */
export function register(program: Command, deps: RuntimeDeps = {}): void {
  const state = program.commands.find((c) => c.name() === "state") ??
    program.command("state").description("inspect and initialize deployment state");

  const common = (c: Command) =>
    breakLockOption(
      projectOptions(c)
        .requiredOption(
          "--plan <file>",
          "the plan file the operation was started from (a reviewed replacement's, or a create's, runner removal's or connector change's)",
        )
        .requiredOption("--operation-id <uuid>", "the operation to inspect or continue"),
    );

  common(state.command("runner-status"))
    .description("read-only: validate storage and audit, observe, report the next proven boundary")
    .action(async (opts: OperationFlags, cmd: Command) => {
      await using project = await openCommandProject(deps, opts);
      const report = await project.runnerStatus({
        plan: opts.plan,
        operationId: opts.operationId,
        breakStaleLock: opts.breakStaleLock,
      });
      printResult(outputFormat(cmd), "state runner-status", report, () => renderStatus(report));
    });

  confirmEnvOption(
    common(state.command("resume"))
      .description("continue the same operation from its last durable boundary"),
  )
    .option("--openlineage <url|file>", "send the replacement's COMPLETE or FAIL event")
    .action(async (opts: OperationFlags, cmd: Command) => {
      const format = outputFormat(cmd);
      await using project = await openCommandProject(deps, opts, format);
      const outcome = await project.resume({
        plan: opts.plan,
        operationId: opts.operationId,
        confirmEnv: opts.confirmEnv,
        breakStaleLock: opts.breakStaleLock,
        openlineage: opts.openlineage,
      });
      if (outcome.kind === "replacement") {
        reportReplacement(
          format,
          "state resume",
          outcome.result,
          outcome.runner_client_changed,
        );
        return;
      }
      const r = outcome.result;
      printResult(
        format,
        "state resume",
        { ...r, plan_sha256: outcome.plan_sha256 },
        () => renderContinued(r),
      );
    });
}

/** A create, runner removal or connector change continued (or found committed) by resume. */
function renderContinued(r: ApplyResult): string {
  return r.already_applied
    ? `Operation ${r.operation_id} of this plan was already committed; nothing was written.`
    : `Operation ${r.operation_id} continued and committed: ${r.actions.length} action(s); ownership serial ${r.serial}.` +
      credentialsChangedNote(r.runner_client_changed);
}

function renderStatus(r: OperationStatusReport): string {
  return [
    `operation ${r.operation_id} (${r.journey}): ${r.state}; last durable boundary: ${
      r.last_boundary ?? "-"
    }`,
    `checkpoints: ${r.checkpoints.map((c) => c.name).join(" → ") || "(intent only)"}`,
    `incidents: ${r.incidents}, resume authorizations: ${r.resumes}`,
    `next proven step: ${r.next.step} — ${r.next.detail}`,
    ...(r.next.table_row ? [`boundary table row ${r.next.row}: ${r.next.table_row}`] : []),
    `this report grants nothing; to continue: ${r.commands.resume}`,
  ].join("\n");
}
