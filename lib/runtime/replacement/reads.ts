/**
 * What each guard of the replacement table reads, so that every step decides on a fresh
 * observation of only what its guard uses, and a wait blocks on the one change that can end
 * it instead of re-observing everything:
 *
 * - {@link GUARD_STATUS_READS} / {@link statusReadsAt}: whose runner status file a stage's
 *   guards read — the one file of an observation that is read fresh every time (the mounted
 *   plan and the instance file are cached per container, `lib/runtime/observer.ts`);
 * - {@link GUARD_WAKES} / {@link wakeOf}: for a guard that waits, what ends the wait and the
 *   narrow read that detects it. A wake-up authorizes nothing: the driver then observes in full
 *   and asks the table again.
 *
 * Both are keyed by the table's guard names (`lib/protocol/replacement.ts`), so a new guard
 * cannot be added without saying what it reads.
 *
 * @example
 * ```ts
 * import { statusReadsAt } from "./reads.ts";
 * const read = statusReadsAt("action_started");
 * // observeRunner(ports, target, { status: read }) reads the old runner's status once it stopped
 * ```
 * @module
 */
import type { GuardName, Stage } from "../../protocol/replacement.ts";
import { rowsAt } from "../../protocol/replacement.ts";
import type { ContainerEvidence, RunnerObservation } from "../../validation/observation.ts";
import { dockerTimeSet } from "../../providers/docker/port.ts";

/** Whose status file a guard reads: nobody's, a stopped container's, or a running one's. */
export type StatusRead = "none" | "stopped" | "running";

/** The status files each guard reads (`runnerStatus` in `guards.ts`). */
export const GUARD_STATUS_READS: Readonly<Record<GuardName, StatusRead>> = {
  priorRunnerRunning: "none",
  oldStillRunning: "none",
  // "fresh old-plan closed status": the stopped old runner's CLOSED record
  oldClosedCleanly: "stopped",
  oldStoppedAsClosed: "none",
  oldAbsent: "none",
  noCandidateYet: "none",
  candidatePresentNeverStarted: "none",
  recordedCandidateStopped: "none",
  // "fresh desired-plan running status": the running candidate's RUNNING record
  candidateReady: "running",
  // a start-up failure is proven by the stopped candidate's FAILED record, never RUNNING
  failedBeforeProcessingUnderResume: "stopped",
  // "with fresh clean-close evidence": the stopped candidate's own CLOSED record
  closedCandidateUnderResume: "stopped",
  completedWithSuccess: "none",
};

/**
 * The observer's status selection for a durable stage: the union of what the guards of the
 * stage's rows read. A stopped container's file is read only once it has started: the status
 * path is on the state volume, so a container never started shows the record of whichever runner
 * wrote it last, never one of its own. The guards that read a stopped candidate's record require
 * it to have started; an old runner never started is not exited, which blocks its clean close
 * whatever a file says (`notACleanClose`).
 *
 * @example
 * ```ts
 * import { statusReadsAt } from "./reads.ts";
 * const never = { running: false, startedAt: "0001-01-01T00:00:00Z" };
 * console.log(statusReadsAt("replacement_created")({ state: never })); // false
 * ```
 */
export function statusReadsAt(
  stage: Stage,
): (c: { state: { running: boolean; startedAt: string } }) => boolean {
  const reads = new Set(rowsAt(stage).map((r) => GUARD_STATUS_READS[r.guard]));
  return (c) =>
    c.state.running
      ? reads.has("running")
      : dockerTimeSet(c.state.startedAt) && reads.has("stopped");
}

/** The runner's stdout marker (`StatusFile.java`): one line per status it writes. */
export const STATE_MARKER = "SLUICE_RUNNER_STATE";

/** What ends a wait, and the narrow read that detects it. */
export type Wake =
  /** The container stops (the daemon blocks until it does). */
  | { kind: "exit"; containerId: string }
  /**
   * The runner writes a status past STARTING (RUNNING, CLOSING, CLOSED, FAILED) since `since`
   * (its start, the daemon's clock), or stops: its stdout marker, followed by the daemon.
   */
  | { kind: "state_line"; containerId: string; since: string }
  /** The group's membership: no member (and Empty or Dead), or exactly one. */
  | { kind: "group"; groupId: string; members: "none" | "one" }
  /** The container runs (or is gone). */
  | { kind: "started"; containerId: string };

/** What a waiting guard saw: the observation and the two containers of the operation. */
export interface WaitView {
  obs: RunnerObservation;
  old: ContainerEvidence | null;
  cand: ContainerEvidence | null;
  /** The candidate's generation (its RUNNING status names it). */
  generation: string;
}

/** Past STARTING: any of these ends a wait for readiness. */
const PAST_STARTING = ["RUNNING", "CLOSING", "CLOSED", "FAILED"].map((s) =>
  `${STATE_MARKER} ${s} `
);

/** The prefixes of {@link Wake} `state_line`. */
export const STATE_LINE_PREFIXES: readonly string[] = PAST_STARTING;

/**
 * What ends each guard's wait (null: the guard never waits, or no narrower read applies and
 * the driver re-observes after its poll interval).
 */
export const GUARD_WAKES: Readonly<Record<GuardName, (v: WaitView) => Wake | null>> = {
  priorRunnerRunning: () => null,
  // TERM requested, the old runner still runs: its exit
  oldStillRunning: (v) => (v.old ? { kind: "exit", containerId: v.old.id } : null),
  // exited cleanly, the group still has members: the group alone
  oldClosedCleanly: (v) => ({ kind: "group", groupId: v.obs.applicationId, members: "none" }),
  oldStoppedAsClosed: () => null,
  oldAbsent: () => null,
  noCandidateYet: () => null,
  candidatePresentNeverStarted: () => null,
  // start requested, not seen started yet
  recordedCandidateStopped: (v) => (v.cand ? { kind: "started", containerId: v.cand.id } : null),
  // started: its RUNNING status first, then its one group member
  candidateReady: (v) => {
    if (!v.cand) return null;
    const s = v.cand.runnerStatus;
    if (s?.state === "RUNNING" && s.generation === v.generation) {
      return { kind: "group", groupId: v.obs.applicationId, members: "one" };
    }
    return { kind: "state_line", containerId: v.cand.id, since: v.cand.startedAt };
  },
  // restarted under resume after a start-up failure: the restart shows
  failedBeforeProcessingUnderResume: (v) =>
    v.cand ? { kind: "started", containerId: v.cand.id } : null,
  // closed under resume: its group empties, or the restart requested shows
  closedCandidateUnderResume: (v) => {
    if (v.obs.kafka.group.members.length > 0) {
      return { kind: "group", groupId: v.obs.applicationId, members: "none" };
    }
    return v.cand ? { kind: "started", containerId: v.cand.id } : null;
  },
  completedWithSuccess: () => null,
};

/**
 * The wake of a waiting guard.
 *
 * @example
 * ```ts
 * import { wakeOf } from "./reads.ts";
 * // wakeOf("oldStillRunning", view) → { kind: "exit", containerId: view.old.id }
 * ```
 */
export function wakeOf(guard: GuardName, v: WaitView): Wake | null {
  return GUARD_WAKES[guard](v);
}
