/**
 * Why a stopped runner container stopped ({@link runnerStopOf}): the runner's own stop (its
 * status file: stable reason, model, record position, the rule that failed, the record's sizes
 * and field names — never a value) when the file describes this exit, else what the exit code
 * means in the shared exit table (`runner-exits.json`: 137 is a SIGKILL, 143 a clean TERM
 * close, ...). What `status`, `observe` and the `BLOCKED_RUNNER_NOT_RUNNING` blocker show.
 *
 * @example
 * ```ts
 * import { runnerStopOf } from "./runner_stop.ts";
 * import type { ContainerEvidence } from "./observation.ts";
 * const why = (c: ContainerEvidence) => runnerStopOf(c)?.summary ?? "running";
 * ```
 * @module
 */
import {
  describeRunnerStop,
  parseRunnerStop,
  runnerExit,
  type RunnerStop,
} from "../artifact/runner_exits.ts";
import type { ContainerEvidence } from "./observation.ts";

/** Why a runner container is stopped, as far as it and Docker say. */
export interface RunnerStopReport {
  /** The container's exit code, as Docker reports it (never rewritten). */
  exit_code: number;
  /** The exit code's kind in the shared table (`decode`, `closed`, `killed`, ...), or null. */
  kind: string | null;
  /** What the exit code means in the shared table, or null when the runner does not document it. */
  meaning: string | null;
  /** Docker says the kernel's OOM killer ended it. */
  oom_killed: boolean;
  /**
   * The runner's own stop from its status file (reason, model, record position and shape, the
   * rule that failed), when that file describes this exit; null for a SIGKILL, an OOM kill or a
   * JVM that never started the runner.
   */
  runner: RunnerStop | null;
  /** One line a person can act on (the runner's reason, else the table's meaning). */
  summary: string;
}

/**
 * The stop of a container that is not running; null for a running one.
 *
 * @example
 * ```ts
 * import { runnerStopOf } from "./runner_stop.ts";
 * import type { ContainerEvidence } from "./observation.ts";
 * declare const c: ContainerEvidence;
 * const stop = runnerStopOf(c);
 * if (stop?.runner?.record) console.log(stop.runner.record.offset);
 * ```
 */
export function runnerStopOf(c: ContainerEvidence): RunnerStopReport | null {
  // running, or created and never started: nothing stopped
  if (c.running || !c.everStarted) return null;
  const row = runnerExit(c.exitCode);
  const parsed = parseRunnerStop(c.runnerStatus);
  // a status file left by an earlier run (a kill writes nothing) does not explain this exit
  const runner = parsed && parsed.exit_code === c.exitCode && !c.oomKilled ? parsed : null;
  const summary = runner
    ? describeRunnerStop(runner)
    : `exit ${c.exitCode}${c.oomKilled ? " (OOM-killed)" : row ? ` (${row.kind})` : ""}: ${
      row?.meaning ?? "not an exit code the runner documents"
    }`;
  return {
    exit_code: c.exitCode,
    kind: row?.kind ?? null,
    meaning: row?.meaning ?? null,
    oom_killed: c.oomKilled,
    runner,
    summary,
  };
}

/** One reason a stopped runner's stop is not a clean close (see {@link notACleanClose}). */
export interface UncleanFinding {
  /** The blocker code it gives. */
  code: "BLOCKED_UNKNOWN_EXIT" | "BLOCKED_UNCLEAN_EXIT" | "BLOCKED_OOM";
  /** What was found (`the old runner exited with code 137; only 0 or 143 is a clean close`). */
  message: string;
  /** The evidence that shows it. */
  evidence: Record<string, unknown>;
}

/**
 * The clean-close rule, in one place (a replacement's `old_closed` row and a runner removal
 * apply it; `sluice restart` brings back a pending removal's runner only when it fails): the
 * container exited, with raw exit 0 or 143, not OOM-killed, and its status file — when there is
 * one — says CLOSED. Only then is its last transaction proven committed. Empty when it is a clean
 * close; `who` names the runner in the messages.
 *
 * @example
 * ```ts
 * import { notACleanClose } from "./runner_stop.ts";
 * import type { ContainerEvidence } from "./observation.ts";
 * const clean = (c: ContainerEvidence) => notACleanClose(c).length === 0;
 * ```
 */
export function notACleanClose(
  c: Pick<ContainerEvidence, "status" | "exitCode" | "oomKilled" | "runnerStatus">,
  who = "the runner",
): UncleanFinding[] {
  const out: UncleanFinding[] = [];
  if (c.status !== "exited") {
    out.push({
      code: "BLOCKED_UNKNOWN_EXIT",
      message: `${who} is ${c.status}, not exited`,
      evidence: {},
    });
  }
  if (![0, 143].includes(c.exitCode)) {
    out.push({
      code: "BLOCKED_UNCLEAN_EXIT",
      message: `${who} exited with code ${c.exitCode}; only 0 or 143 is a clean close`,
      evidence: { exitCode: c.exitCode },
    });
  }
  if (c.oomKilled) {
    out.push({
      code: "BLOCKED_OOM",
      message: `${who} was OOM-killed`,
      evidence: { exitCode: c.exitCode },
    });
  }
  const s = c.runnerStatus;
  if (s && s.state !== "CLOSED") {
    out.push({
      code: "BLOCKED_UNCLEAN_EXIT",
      message: `the runner's status file says ${String(s.state)} (${
        String(s.reason ?? "")
      }), not CLOSED`,
      evidence: { status: s },
    });
  }
  return out;
}
