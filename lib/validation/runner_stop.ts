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
  isCleanCloseExit,
  parseRunnerStop,
  runnerExit,
  type RunnerStop,
} from "../artifact/runner_exits.ts";
import type { ContainerEvidence } from "./observation.ts";
import type { CLEAN_CLOSE_BLOCKERS } from "../protocol/replacement.ts";

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
 * function failingRecord(c: ContainerEvidence): number | undefined {
 *   return runnerStopOf(c)?.runner?.record?.offset;
 * }
 * ```
 */
export function runnerStopOf(
  c: Pick<ContainerEvidence, "running" | "everStarted" | "exitCode" | "oomKilled" | "runnerStatus">,
): RunnerStopReport | null {
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
  code: typeof CLEAN_CLOSE_BLOCKERS[number];
  /** What was found (`the old runner exited with code 137; only 0 or 143 is a clean close`). */
  message: string;
  /** The evidence that shows it. */
  evidence: Record<string, unknown>;
}

/**
 * How far a status file's start may precede the container's (the JVM writes it after Docker
 * started the process, on the same host clock; the slack covers rounding, never an earlier run).
 */
const START_SLACK_MS = 1_000;

/**
 * The clean-close rule, in one place (a replacement's `old_closed` row, a restarted candidate
 * under resume and a runner removal apply it; `sluice restart` brings back a pending removal's
 * runner only when it fails), as the contract words it: "neither code alone proves success: the
 * observer also requires a fresh closed status, complete non-OOM/error-free process evidence".
 * All of: the container exited, with raw exit 0 or 143, not OOM-killed, no Docker error; its
 * status file exists (`BLOCKED_CLOSE_STATUS_MISSING`), was written by this container's own
 * generation for its own plan (`BLOCKED_CLOSE_STATUS_FOREIGN`), by this run of it — not an
 * earlier one (`BLOCKED_STALE_STATUS`) — and says CLOSED. Only then is its last transaction
 * proven committed. Empty when it is a clean close; `who` names the runner in the messages.
 *
 * @example
 * ```ts
 * import { notACleanClose } from "./runner_stop.ts";
 * import type { ContainerEvidence } from "./observation.ts";
 * const clean = (c: ContainerEvidence) => notACleanClose(c).length === 0;
 * ```
 */
export function notACleanClose(
  c: Pick<
    ContainerEvidence,
    "status" | "exitCode" | "oomKilled" | "dockerError" | "runnerStatus" | "labels" | "startedAt"
  >,
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
  if (!isCleanCloseExit(c.exitCode)) {
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
  if (c.dockerError) {
    out.push({
      code: "BLOCKED_UNCLEAN_EXIT",
      message: `Docker reports an error for ${who}'s last run: ${c.dockerError}`,
      evidence: { dockerError: c.dockerError },
    });
  }
  const s = c.runnerStatus;
  if (!s) {
    out.push({
      code: "BLOCKED_CLOSE_STATUS_MISSING",
      message: `${who} left no status file: its close is not recorded, so no exit code proves it`,
      evidence: {},
    });
    return out;
  }
  if (s.generation !== c.labels.generation || s.plan_sha256 !== c.labels.planSha256) {
    out.push({
      code: "BLOCKED_CLOSE_STATUS_FOREIGN",
      message: `${who}'s status file was written by generation ${String(s.generation)} for plan ${
        String(s.plan_sha256)
      }, not by its own (${String(c.labels.generation)}, ${String(c.labels.planSha256)})`,
      evidence: {
        status: { generation: s.generation, plan_sha256: s.plan_sha256 },
        container: { generation: c.labels.generation, plan_sha256: c.labels.planSha256 },
      },
    });
  }
  const written = Date.parse(String(s.started_at));
  if (!(written >= Date.parse(c.startedAt) - START_SLACK_MS)) {
    out.push({
      code: "BLOCKED_STALE_STATUS",
      message: `${who}'s status file is from a run that started at ${
        String(s.started_at)
      }, before this run started at ${c.startedAt}`,
      evidence: { status_started_at: s.started_at, container_started_at: c.startedAt },
    });
  }
  if (s.state !== "CLOSED") {
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

/** A kill (137, not the OOM killer's) or a TERM's default exit (143): a signal from outside. */
function signalled(c: ContainerEvidence): "KILLED" | "TERMINATED" | null {
  if (c.status !== "exited" || c.oomKilled) return null;
  return c.exitCode === 137 ? "KILLED" : c.exitCode === 143 ? "TERMINATED" : null;
}

/**
 * Stopped by a signal (exit 137 or 143, not OOM) before it wrote any status of its own: the
 * runner writes STARTING, with its generation, before it creates any Kafka client (and installs
 * its TERM handler right after it: a TERM before it ends the JVM with 143 and no status of its
 * own), so a status file of another generation (an earlier runner's, on the same volume) or none
 * means this process never reached Kafka. A status file that cannot be read is not taken for one.
 */
function stoppedBeforeStarting(c: ContainerEvidence): boolean {
  const s = c.runnerStatus;
  const own = c.labels.generation;
  return signalled(c) !== null && own !== null &&
    (s === null || (typeof s.generation === "string" && s.generation !== own));
}

/** The states a runner's own status file is in while the process lives (not a final one). */
const LIVE_STATES: readonly string[] = ["STARTING", "RUNNING", "CLOSING"];

/** The words for each {@link OutsideStop} reason. */
const STOPPED_HOW: Readonly<Record<string, string>> = {
  KILLED_BEFORE_STARTING:
    "killed (exit 137, not by the OOM killer) before it wrote a status of its own (it never reached Kafka)",
  TERMINATED_BEFORE_STARTING:
    "ended by a TERM (exit 143) before it wrote a status of its own (it never reached Kafka)",
  KILLED_WHILE_STARTING: "killed (exit 137, not by the OOM killer) while starting",
  KILLED_WHILE_RUNNING:
    "killed (exit 137, not by the OOM killer) while RUNNING, without a TERM recorded",
  KILLED_WHILE_CLOSING:
    "killed (exit 137, not by the OOM killer) while closing after a TERM (its close could not finish)",
};

/** A runner container stopped from outside, as {@link outsideStopOf} reads it. */
export interface OutsideStop {
  /** `KILLED_BEFORE_STARTING`, `TERMINATED_BEFORE_STARTING` or `KILLED_WHILE_<its state>`. */
  reason: string;
  /** The reason in words (a blocker's message, the recorded evidence). */
  how: string;
  /** It stopped before its own first status: the status file found, if any, is not its own. */
  beforeStarting: boolean;
}

/**
 * Whether a runner container was stopped from outside by a signal before it wrote a final status
 * of its own (FAILED or CLOSED): not the runner's own failure, so the same runner may be started
 * again once nothing of it was committed (the caller's question: its committed positions). A Docker
 * daemon shutting down TERMs its containers and kills them at their stop timeout (30 s): a TERM
 * that reaches the JVM in its first instants, as the container's PID 1 with no handler yet, is
 * ignored by the kernel; a close that needs the broker going down with it cannot finish. An
 * operator's `docker kill` is one too. Either it stopped before its first status (killed, or ended
 * by a TERM before its handler existed), or it was killed (137) while its own status said
 * STARTING, RUNNING or CLOSING. An OOM kill, a final status of its own or a status file that
 * cannot be read is never one, nor is a 143 after its own status (its TERM handler writes CLOSED).
 * Null when it is not one.
 *
 * @example
 * ```ts
 * import { outsideStopOf } from "./runner_stop.ts";
 * import type { ContainerEvidence } from "./observation.ts";
 * const why = (c: ContainerEvidence) => outsideStopOf(c)?.reason ?? "its own stop";
 * ```
 */
export function outsideStopOf(c: ContainerEvidence): OutsideStop | null {
  if (stoppedBeforeStarting(c)) {
    const reason = `${signalled(c)}_BEFORE_STARTING`;
    return { reason, how: STOPPED_HOW[reason], beforeStarting: true };
  }
  const s = c.runnerStatus;
  if (
    !s || signalled(c) !== "KILLED" || c.labels.generation === null ||
    s.generation !== c.labels.generation || !LIVE_STATES.includes(String(s.state))
  ) {
    return null;
  }
  const reason = `KILLED_WHILE_${String(s.state)}`;
  return { reason, how: STOPPED_HOW[reason], beforeStarting: false };
}
