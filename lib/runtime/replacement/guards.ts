/**
 * The guards of the replacement table (`lib/protocol/replacement.ts`): one small named function
 * per "Required observation" of the spec's table. A guard reads the fresh observation (already
 * split by `verifyReviewedRuntime` into the reviewed old runner and this operation's
 * candidate) and answers for its row:
 *
 * - `skip`: the observation is not this row's situation (another row of the stage applies);
 * - `go`: the row's step is authorized (with the container or checkpoint it concerns);
 * - `wait`: nothing is wrong yet, but the step is not authorized yet (bounded by the row);
 * - `blocked`: the evidence forbids any step.
 *
 * Rules cited from the spec where they are enforced. No guard performs I/O.
 *
 * @example
 * ```ts
 * import { GUARDS } from "./guards.ts";
 * console.log(Object.keys(GUARDS).length);
 * ```
 * @module
 */
import { isCleanCloseExit, runnerExit } from "../../artifact/runner_exits.ts";
import type { ErrorCode } from "../../errors.ts";
import type {
  Checkpoint,
  OperatorDecision,
  PartitionOffset,
  RunnerAction,
} from "../../state/journal.ts";
import type { GuardName, Stage } from "../../protocol/replacement.ts";
import { type Blocker, blocker } from "../../validation/blocker.ts";
import type { ContainerEvidence, RunnerObservation } from "../../validation/observation.ts";
import { notTheRunnerAlone } from "../../validation/group_member.ts";
import { checkCandidateInputs } from "../../validation/reviewed_runtime.ts";
import { checkGeneration } from "../../validation/runner_checks.ts";
import {
  notACleanClose,
  type OutsideStop,
  outsideStopOf,
  runnerStopOf,
} from "../../validation/runner_stop.ts";
import type { CandidateExpectation } from "./candidate.ts";

/** A checkpoint without the fields `decide` adds (action index and time). */
export type CheckpointFields = Checkpoint extends infer C
  ? C extends Checkpoint ? Omit<C, "action_index" | "recorded_at"> : never
  : never;

/** What a guard answers for its row. */
export type Verdict =
  | { kind: "skip" }
  | { kind: "go"; containerId?: string; checkpoint?: CheckpointFields }
  | { kind: "wait"; reason: string }
  | { kind: "blocked"; blockers: Blocker[] };

/**
 * What one invocation remembers of its own provider actions (never trusted across processes):
 * TERM requested, start requested, and the daemon's answer when it refused that start.
 */
export interface StepMemory {
  termRequested: boolean;
  startRequested: boolean;
  /**
   * The Docker daemon's error when it refused this invocation's start of the candidate: an
   * answer, not proof of what happened; the next fresh observation decides.
   */
  startRefused?: string | null;
}

/** What a guard reads. */
export interface GuardView {
  stage: Stage;
  checkpoints: Checkpoint[];
  action: RunnerAction;
  candidate: CandidateExpectation;
  obs: RunnerObservation;
  /** The reviewed old runner (exact container ID), if present. */
  old: ContainerEvidence | null;
  /** This operation's candidate (exact generation labels), if present. */
  cand: ContainerEvidence | null;
  /** In-memory facts of this invocation (never trusted across processes). */
  memory: StepMemory;
  /** True under an explicit `state resume`. */
  resuming: boolean;
  /** The operator's recorded decisions (retention-loss acceptances) of this operation. */
  decisions: OperatorDecision[];
}

/** A guard. */
export type Guard = (v: GuardView) => Verdict;

const SKIP: Verdict = { kind: "skip" };
const go = (extra: Omit<Extract<Verdict, { kind: "go" }>, "kind"> = {}): Verdict => ({
  kind: "go",
  ...extra,
});
const wait = (reason: string): Verdict => ({ kind: "wait", reason });
const blocked = (blockers: Blocker[]): Verdict => ({ kind: "blocked", blockers });
const one = (code: ErrorCode, message: string, v: GuardView, evidence?: Record<string, unknown>) =>
  blocked([blocker(code, message, { model: v.action.model, evidence })]);

/** The committed vector of the observation, as the journal records it. */
export function committedVector(obs: RunnerObservation): PartitionOffset[] {
  return obs.kafka.ranges.map((r) => ({
    topic: obs.target.inputTopic,
    partition: r.partition,
    offset: obs.kafka.committed[String(r.partition)] ?? "-1",
  }));
}

function checkpoint<N extends Checkpoint["name"]>(
  v: GuardView,
  name: N,
): Extract<Checkpoint, { name: N }> | null {
  return v.checkpoints.find((x): x is Extract<Checkpoint, { name: N }> => x.name === name) ?? null;
}

/**
 * The durable clean-close vector, as moved by the operator's recorded retention-loss
 * acceptances: a partition named by a decision is expected at that decision's `to` (the
 * earliest retained offset it moved to), the last decision winning.
 */
function cleanCloseVector(v: GuardView): PartitionOffset[] {
  const cp = checkpoint(v, "old_closed");
  if (!cp) throw new Error("old_closed checkpoint missing at a stage after it");
  return cp.offsets.map((o) => {
    const moved = v.decisions.flatMap((d) =>
      d.partitions.filter((p) => p.partition === o.partition && p.topic === o.topic)
    ).at(-1);
    return moved ? { ...o, offset: moved.to } : o;
  });
}

function vectorsEqual(a: PartitionOffset[], b: PartitionOffset[]): boolean {
  const key = (x: PartitionOffset[]) =>
    JSON.stringify(
      [...x].sort((p, q) => p.partition - q.partition).map((p) => [p.partition, p.offset]),
    );
  return key(a) === key(b);
}

/**
 * No runner runs: committed positions equal the durable clean-close vector and the group has
 * no member ("a committed offset jump while the runner is stopped cannot come from that
 * process and is rejected").
 */
function stoppedAtCleanClose(v: GuardView): Blocker[] {
  const now = committedVector(v.obs);
  const clean = cleanCloseVector(v);
  if (!vectorsEqual(now, clean)) {
    return [blocker(
      "BLOCKED_OFFSET_JUMP_WHILE_STOPPED",
      "committed offsets moved while no runner was running; that cannot come from the stopped runner",
      { model: v.action.model, evidence: { cleanClose: clean, observed: now } },
    )];
  }
  if (v.obs.kafka.group.members.length > 0) {
    return [blocker(
      "BLOCKED_GROUP_ACTIVE",
      `consumer group ${v.obs.applicationId} has members while no runner runs`,
      { model: v.action.model, evidence: { members: v.obs.kafka.group.members } },
    )];
  }
  return [];
}

/** "Once the candidate has started, its committed positions may advance normally" — never back. */
function atLeastCleanClose(v: GuardView): Blocker[] {
  const now = committedVector(v.obs);
  for (const c of cleanCloseVector(v)) {
    const o = now.find((x) => x.partition === c.partition);
    if (!o || BigInt(o.offset) < BigInt(c.offset)) {
      return [blocker(
        "BLOCKED_OFFSET_REGRESSION",
        `committed offset of partition ${c.partition} is ${
          o?.offset ?? "absent"
        }, below the clean-close ${c.offset}`,
        { model: v.action.model, evidence: { partition: c.partition, cleanClose: c.offset } },
      )];
    }
  }
  return [];
}

/** Before a clean close is recorded: the exact prior generation and no candidate yet. */
function priorGeneration(v: GuardView, vanished: ErrorCode): Verdict | ContainerEvidence {
  if (v.cand) {
    return one("BLOCKED_FOREIGN_GENERATION", "a candidate exists before the old runner closed", v);
  }
  if (!v.old) return one(vanished, oldMissingMessage(vanished, v), v);
  const gen = checkGeneration(v.old, v.action.prior_artifact_sha256, v.action.model);
  return gen.length > 0 ? blocked(gen) : v.old;
}

function oldMissingMessage(code: string, v: GuardView): string {
  return code === "BLOCKED_OLD_VANISHED"
    ? "the old runner disappeared before a clean close was recorded; its absence proves nothing"
    : `the reviewed runner ${v.candidate.evidence.old_container_id.slice(0, 12)} is absent`;
}

/** After replacement_created: the old runner stays gone and the recorded candidate is exact. */
/**
 * This invocation's start of the candidate was refused by the Docker daemon and the fresh
 * observation shows it not running: the start did not happen. Precise, and no loop: the same
 * invocation never asks again; an explicit `state resume` (once the daemon is fixed) does.
 */
function startRefused(v: GuardView, cand: ContainerEvidence): Verdict | null {
  const refused = v.memory.startRefused ?? null;
  if (refused === null || cand.running) return null;
  return one(
    "BLOCKED_CANDIDATE_START_REFUSED",
    `the Docker daemon refused to start the candidate ${
      cand.id.slice(0, 12)
    }, and it is not running (${
      cand.everStarted ? `still ${cand.status}, exit ${cand.exitCode}` : "never started"
    }): ${refused}; fix the daemon (see the runbook), then 'state resume' starts it again`,
    v,
    { container_id: cand.id, status: cand.status, ever_started: cand.everStarted, daemon: refused },
  );
}

function recordedCandidate(v: GuardView): Verdict | ContainerEvidence {
  const recordedId = checkpoint(v, "replacement_created")?.container_id ?? "";
  if (v.old) {
    return one("BLOCKED_FOREIGN_GENERATION", "the removed old runner is present again", v);
  }
  if (!v.cand || v.cand.id !== recordedId) {
    return one(
      "BLOCKED_CANDIDATE_MISSING",
      `the recorded candidate ${recordedId.slice(0, 12)} is absent`,
      v,
    );
  }
  const inputs = checkCandidateInputs(v.cand, v.candidate, v.action.model);
  return inputs.length > 0 ? blocked(inputs) : v.cand;
}

/**
 * The runner's documented start-up failures that a restart may cure once the cause is fixed
 * outside sluice (docs/runner.md: exit 15 before RUNNING, the broker unreachable or its admin
 * calls failing, the runner principal's login or an operation refused — a password rotated, an
 * ACL removed: the credentials are copied in again at the restart). Plan, artifact, identity and
 * offset failures (10–14) are not among them.
 */
export const STARTUP_FAILURES: Readonly<Record<number, readonly string[]>> = {
  15: [
    "KAFKA_UNREACHABLE",
    "KAFKA_ADMIN_FAILED",
    "KAFKA_AUTHENTICATION_FAILED",
    "KAFKA_AUTHORIZATION_FAILED",
  ],
};

/**
 * A TERM during start-up whose close could not finish: Kafka Streams had started but never
 * reached RUNNING, and its close needed a broker that went away with it (a Docker daemon
 * restarted stops the broker and the runner at once). The runner's status file says so: the
 * close timed out (`CLOSE_TIMEOUT`, exit 15). A kill while it was still closing is
 * {@link outsideStopOf}.
 */
function closeTimedOutBeforeRunning(c: ContainerEvidence): boolean {
  const s = c.runnerStatus!;
  return c.exitCode === 15 && s.state === "FAILED" && s.reason === "CLOSE_TIMEOUT";
}

/**
 * The container stopped before processing anything by its own documented start-up failure: it
 * never reached RUNNING (its status file, written by this runner, says so) and exited with a
 * documented start-up failure, or its close after a TERM during start-up timed out
 * ({@link closeTimedOutBeforeRunning}). A signal from outside is {@link outsideStopOf}.
 */
export function failedBeforeProcessing(c: ContainerEvidence): boolean {
  const s = c.runnerStatus;
  if (!s || c.oomKilled || c.status !== "exited" || (s.running_at ?? null) !== null) return false;
  if (s.generation !== undefined && s.generation !== c.labels.generation) return false;
  if (closeTimedOutBeforeRunning(c)) return true;
  const reasons = STARTUP_FAILURES[c.exitCode] ?? [];
  return s.state === "FAILED" && reasons.includes(String(s.reason)) && s.exit_code === c.exitCode;
}

/** The evidence of a start-up failure or a stop from outside, as recorded with the resume. */
export function startupFailureEvidence(c: ContainerEvidence): {
  container: string;
  exit_code: number;
  reason: string;
  detail: string | null;
  finished_at: string;
  running_at: string | null;
} {
  const outside = outsideStopOf(c);
  // stopped before its first status: the status file found (if any) is not this runner's
  const own = outside?.beforeStarting ? {} : c.runnerStatus ?? {};
  return {
    container: c.id,
    exit_code: c.exitCode,
    reason: outside ? outside.reason : String(own.reason ?? ""),
    detail: outside ? outside.how : typeof own.detail === "string" ? own.detail : null,
    finished_at: c.finishedAt,
    // stopped after RUNNING: when it was RUNNING, as its own status says
    running_at: typeof own.running_at === "string" ? own.running_at : null,
  };
}

/**
 * A candidate killed from outside (137, not OOM) while its own status said STARTING, RUNNING or
 * CLOSING, with its positions past the clean close: it committed, so it is no first start, and no
 * clean close proves its last transaction — but Kafka's exactly-once needs none: a Kafka Streams
 * instance killed and started again continues from its committed offsets, its open transaction
 * aborted (read_committed never sees it), as after any crash. Not its own failure (that writes a
 * final status of its own, or is the OOM killer's), so not a dead end: apply names the way on
 * (`BLOCKED_CANDIDATE_KILLED`), an explicit resume starts it again once its member has left the
 * group (a killed member stays until its session times out), once per resume.
 */
function killedAfterCommitting(
  v: GuardView,
  cand: ContainerEvidence,
  outside: OutsideStop,
): Verdict {
  const evidence = startupFailureEvidence(cand);
  if (!v.resuming) {
    return one(
      "BLOCKED_CANDIDATE_KILLED",
      `the candidate was ${outside.how}, after it committed (its positions moved past the clean close); 'state resume' starts it again from its committed positions`,
      v,
      evidence,
    );
  }
  if (v.memory.startRequested) {
    return one(
      "BLOCKED_CANDIDATE_KILLED",
      `the candidate stopped again after this resume started it (exit ${cand.exitCode} ${evidence.reason})`,
      v,
      evidence,
    );
  }
  const refused = startRefused(v, cand);
  if (refused) return refused;
  if (v.obs.kafka.group.members.length > 0) {
    return wait(
      "the killed candidate's group still has members (a killed runner's member stays until its session times out)",
    );
  }
  return go({ containerId: cand.id });
}

function isVerdict(x: Verdict | ContainerEvidence): x is Verdict {
  return "kind" in x;
}

/** The guard of every row of the table, by name. */
export const GUARDS: Record<GuardName, Guard> = {
  /** Intent only → exact prior runner, running; nothing of this operation exists yet. */
  priorRunnerRunning(v) {
    const old = priorGeneration(v, "BLOCKED_RUNNER_MISSING");
    if (isVerdict(old)) return old;
    if (!old.running) {
      // this row reads no status file (GUARD_STATUS_READS): the exit table says what the code
      // means; `sluice status` shows the runner's own reason
      const meaning = runnerExit(old.exitCode)?.meaning;
      return one(
        "BLOCKED_RUNNER_NOT_RUNNING",
        `the reviewed runner ${old.name} is ${old.status} (exit ${old.exitCode}${
          meaning ? `: ${meaning}` : ""
        }); 'sluice status' shows why, docs/runbook.md the way back`,
        v,
      );
    }
    return go({ checkpoint: { name: "action_started" } });
  },

  /** Started → the same prior generation still runs: TERM it once, then wait (no force). */
  oldStillRunning(v) {
    const old = priorGeneration(v, "BLOCKED_OLD_VANISHED");
    if (isVerdict(old)) return old;
    if (!old.running) return SKIP;
    return v.memory.termRequested ? wait("old runner closing") : go({ containerId: old.id });
  },

  /**
   * Started, close observed → "fresh old-plan closed status, raw exit 0 or 143, no forced/OOM
   * failure, inactive group, resumable monotonic offsets". The raw exit code is kept as is.
   */
  oldClosedCleanly(v) {
    const old = priorGeneration(v, "BLOCKED_OLD_VANISHED");
    if (isVerdict(old)) return old;
    if (old.running) return SKIP;
    const started = checkpoint(v, "action_started");
    const out: Blocker[] = [];
    const b = (code: ErrorCode, message: string, evidence?: Record<string, unknown>) =>
      out.push(blocker(code, message, { model: v.action.model, evidence }));
    const unclean = notACleanClose(old, "the old runner");
    unclean.forEach((f, i) =>
      b(
        f.code,
        // the way out is said once, after the last reason
        i < unclean.length - 1
          ? f.message
          : `${f.message}; its last transaction is not proven committed. Way out: 'sluice state abandon --operation-id ID --reason TEXT' (the ID is in 'sluice state show'), then 'sluice restart ${v.action.model} --reason TEXT' (the same container runs again from its committed offsets) and plan again (docs/runbook.md, "The old runner's close")`,
        Object.keys(f.evidence).length > 0 ? f.evidence : undefined,
      )
    );
    if (started && Date.parse(old.finishedAt) < Date.parse(started.recorded_at)) {
      b(
        "BLOCKED_STALE_STATUS",
        `the old runner finished at ${old.finishedAt}, before the action started at ${started.recorded_at}`,
      );
    }
    if (out.length > 0) return blocked(out);
    const g = v.obs.kafka.group;
    if (g.members.length > 0 || !["Empty", "Dead"].includes(g.state)) {
      return wait(`group ${g.state} with ${g.members.length} members`);
    }
    return go({
      checkpoint: { name: "old_closed", offsets: committedVector(v.obs), exit_code: old.exitCode },
    });
  },

  /** old_closed → the same stopped old container, with the recorded exit: remove it exactly. */
  oldStoppedAsClosed(v) {
    const p = stoppedAtCleanClose(v);
    if (p.length > 0) return blocked(p);
    if (v.cand) {
      return one(
        "BLOCKED_FOREIGN_GENERATION",
        "a candidate exists before the old runner was removed",
        v,
      );
    }
    const old = v.old;
    if (!old) return SKIP;
    if (old.running || old.status !== "exited") {
      return one(
        "BLOCKED_OLD_RESTARTED",
        `the old runner is ${old.status} after its clean close was recorded`,
        v,
      );
    }
    const cp = checkpoint(v, "old_closed");
    if (cp && cp.exit_code !== old.exitCode) {
      return one(
        "BLOCKED_STALE_STATUS",
        `the old runner's exit code is now ${old.exitCode}, not the recorded ${cp.exit_code}`,
        v,
      );
    }
    return go({ containerId: old.id });
  },

  /** Old absent after old_closed → "a lost remove response can be resolved by exact absence". */
  oldAbsent(v) {
    const p = stoppedAtCleanClose(v);
    if (p.length > 0) return blocked(p);
    if (v.cand) {
      return one(
        "BLOCKED_FOREIGN_GENERATION",
        "a candidate exists before the old runner was removed",
        v,
      );
    }
    if (v.old) return SKIP;
    return go({ checkpoint: { name: "old_removed" } });
  },

  /** old_removed → old and candidate absent, volume and progress retained: create one. */
  noCandidateYet(v) {
    const p = stoppedAtCleanClose(v);
    if (p.length > 0) return blocked(p);
    if (v.old) {
      return one("BLOCKED_FOREIGN_GENERATION", "the removed old runner is present again", v);
    }
    return v.cand ? SKIP : go();
  },

  /**
   * Candidate present → a lost create response is resolved only by this operation's exact,
   * never-started candidate with the desired mounted inputs.
   */
  candidatePresentNeverStarted(v) {
    const p = stoppedAtCleanClose(v);
    if (p.length > 0) return blocked(p);
    if (v.old) {
      return one("BLOCKED_FOREIGN_GENERATION", "the removed old runner is present again", v);
    }
    const cand = v.cand;
    if (!cand) return SKIP;
    const inputs = checkCandidateInputs(cand, v.candidate, v.action.model);
    if (inputs.length > 0) return blocked(inputs);
    if (cand.everStarted) {
      return one(
        "BLOCKED_CANDIDATE_STARTED_EARLY",
        "the candidate was started before replacement_created was recorded",
        v,
      );
    }
    return go({ checkpoint: { name: "replacement_created", container_id: cand.id } });
  },

  /**
   * replacement_created → the exact stopped candidate, positions still at the clean close:
   * start it once, without any offset initialization.
   */
  recordedCandidateStopped(v) {
    const cand = recordedCandidate(v);
    if (isVerdict(cand)) return cand;
    if (cand.everStarted) return SKIP;
    const p = stoppedAtCleanClose(v);
    if (p.length > 0) return blocked(p);
    const refused = startRefused(v, cand);
    if (refused) return refused;
    return v.memory.startRequested ? wait("candidate starting") : go({ containerId: cand.id });
  },

  /**
   * Candidate ready → fresh desired-plan RUNNING status, one member — the candidate's own, by
   * the client ID its generation gives it (count only for a runner of an older image, which
   * declares none: `notTheRunnerAlone`) — and monotonic progress. The same guard decides the
   * ready boundary, finalization and the verification of a completed operation
   * (`finalize.ts` `notReadyNow`).
   */
  candidateReady(v) {
    const cand = recordedCandidate(v);
    if (isVerdict(cand)) return cand;
    if (!cand.everStarted || !cand.running) return SKIP;
    const p = atLeastCleanClose(v);
    if (p.length > 0) return blocked(p);
    const s = cand.runnerStatus;
    if (
      s?.state !== "RUNNING" || s.generation !== v.candidate.generation ||
      s.plan_sha256 !== v.candidate.planSha256
    ) {
      return wait("candidate not yet RUNNING for this generation and plan");
    }
    const member = notTheRunnerAlone(v.obs.kafka.group.members, s, v.candidate.generation);
    if (member) return wait(`candidate RUNNING, but ${member}`);
    return go({ checkpoint: { name: "action_completed", outcome: "success", detail: null } });
  },

  /**
   * Candidate failed before processing anything → it never reached RUNNING and its exit is a
   * documented start-up failure (the runner could not reach Kafka: fixable outside sluice), or
   * it was stopped from outside ({@link outsideStopOf}: not its own failure), and the
   * committed positions are still the clean-close vector: nothing of it was committed, so
   * starting the same candidate again under an explicit resume is the same first start (an open
   * transaction of it is aborted, its state restored from its changelog). Any other failed
   * candidate is left to the next row (`BLOCKED_CANDIDATE_FAILED`).
   */
  failedBeforeProcessingUnderResume(v) {
    const cand = recordedCandidate(v);
    if (isVerdict(cand)) return cand;
    if (!cand.everStarted || cand.running) return SKIP;
    // a documented start-up failure, or a stop from outside: either way nothing of it was
    // committed once the positions are still the clean close
    const outside = outsideStopOf(cand);
    if (!outside && !failedBeforeProcessing(cand)) return SKIP;
    const p = stoppedAtCleanClose(v);
    if (outside && p.length === 1 && p[0].code === "BLOCKED_GROUP_ACTIVE") {
      // positions at the clean close, and the member of a runner killed from outside stays in
      // the group until its session times out (45 s): wait for it to expire (bounded)
      return wait(
        `the candidate was ${outside.how}; its group still has members (a killed runner's member stays until its session times out)`,
      );
    }
    if (p.length > 0) return SKIP; // it may have processed: not this row's case
    const refused = startRefused(v, cand);
    if (refused) return refused;
    const evidence = startupFailureEvidence(cand);
    if (!v.resuming) {
      return one(
        "BLOCKED_CANDIDATE_STARTUP_FAILED",
        outside
          ? `the candidate was ${outside.how}, with nothing of it committed (the positions are still the clean close); 'state resume' starts it again`
          : `the candidate failed at start-up before processing anything (exit ${cand.exitCode} ${evidence.reason}); fix the cause, then 'state resume' starts it again`,
        v,
        evidence,
      );
    }
    if (v.memory.startRequested) {
      return one(
        "BLOCKED_CANDIDATE_STARTUP_FAILED",
        `the candidate stopped again after this resume started it (exit ${cand.exitCode} ${evidence.reason}); the cause is not fixed`,
        v,
        evidence,
      );
    }
    return go({ containerId: cand.id });
  },

  /**
   * Candidate started, then closed → "can restart only during explicit resume, with fresh
   * clean-close evidence and retained valid progress. It never receives fresh initial positions."
   * Besides it (a DEVIATION, docs/contract.md C63): a candidate killed from outside after it
   * committed ({@link killedAfterCommitting}).
   */
  closedCandidateUnderResume(v) {
    const cand = recordedCandidate(v);
    if (isVerdict(cand)) return cand;
    if (!cand.everStarted || cand.running) return SKIP;
    const p = atLeastCleanClose(v);
    if (p.length > 0) return blocked(p);
    const outside = outsideStopOf(cand);
    if (outside && !outside.beforeStarting) return killedAfterCommitting(v, cand, outside);
    if (!isCleanCloseExit(cand.exitCode) || cand.oomKilled) {
      // why it stopped, as the runner and the exit table say (never a record value); the
      // summary names the exit code and an OOM kill. Started and not running: a stop exists
      const stop = runnerStopOf(cand)!;
      // "never reached RUNNING" only when the status file describes this exit (a kill writes none)
      const neverRunning = stop.runner !== null && cand.runnerStatus?.running_at === null;
      return one(
        "BLOCKED_CANDIDATE_FAILED",
        `the candidate failed: ${stop.summary}${neverRunning ? "; it never reached RUNNING" : ""}`,
        v,
        { exitCode: cand.exitCode, oomKilled: cand.oomKilled, stop },
      );
    }
    // "with fresh clean-close evidence": its own fresh CLOSED status, not the exit code alone
    const unclean = notACleanClose(cand, "the candidate");
    if (unclean.length > 0) {
      return blocked(unclean.map((f) =>
        blocker(f.code, f.message, {
          model: v.action.model,
          evidence: Object.keys(f.evidence).length > 0 ? f.evidence : undefined,
        })
      ));
    }
    if (!v.resuming) {
      return one(
        "BLOCKED_CANDIDATE_CLOSED",
        "the candidate started and closed; only an explicit 'state resume' may restart it",
        v,
      );
    }
    const refused = startRefused(v, cand);
    if (refused) return refused;
    if (v.obs.kafka.group.members.length > 0) {
      return wait("group still active after the candidate closed");
    }
    return v.memory.startRequested ? wait("candidate restarting") : go({ containerId: cand.id });
  },

  /** Action completed → success hands over to finalization; a recorded failure is terminal. */
  completedWithSuccess(v) {
    const cp = checkpoint(v, "action_completed");
    if (cp && cp.outcome !== "success") {
      return one(
        "BLOCKED_ACTION_FAILED",
        `the action is recorded completed with failure: ${cp.detail ?? ""}`,
        v,
      );
    }
    return go();
  },
};
