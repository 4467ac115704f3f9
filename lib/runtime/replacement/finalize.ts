/**
 * The end of a replacement, shared by execute and resume: {@link driveThenFinalize} drives the
 * table from the snapshot's durable stage and, once the action is recorded completed,
 * {@link finalizeOperation} re-observes the exact ready candidate (the table's last row) and
 * crosses the finalization write: desired ownership committed (serial + 1), completion receipt,
 * control cleared. A missing acknowledgement reports `committed: null` with the last
 * acknowledged boundary; it never invents a newer one. {@link readyCandidate} is the one "exact
 * ready candidate" check: before the commit, on its retry after a local receipt, and when an
 * already completed operation is verified (`state resume`, `state runner-status`).
 *
 * @example
 * ```ts
 * import { driveThenFinalize } from "./finalize.ts";
 * // const result = await driveThenFinalize(op, operationId, snapshot, { resuming: false });
 * ```
 * @module
 */
import { EXIT, exitCodeFor, SluiceError } from "../../errors.ts";
import { atSite } from "../../fault/site.ts";
import type { CompletionReceipt } from "../../state/history.ts";
import { findReceipt } from "../../state/engine.ts";
import { type Checkpoint, openControl, type OperatorDecision } from "../../state/journal.ts";
import type { StateSnapshot } from "../../state/store.ts";
import { rowsAt, type Stage } from "../../protocol/replacement.ts";
import { type Blocker, blocker } from "../../validation/blocker.ts";
import type { RunnerObservation } from "../../validation/observation.ts";
import { verifyReviewedRuntime } from "../../validation/reviewed_runtime.ts";
import { observeRunner } from "../observer.ts";
import { type CandidateExpectation, candidateTarget } from "./candidate.ts";
import { decide, stageOf, type Step } from "./decide.ts";
import { checkpointsOf, decisionsOf, drive, type DriveOutcome } from "./drive.ts";
import { GUARDS } from "./guards.ts";
import { controlOf, reverifyReviewed, type ReviewedOperation } from "./operation.ts";
import { OperationEvents } from "../progress.ts";
import { recordedExtraLabels } from "../operation_labels.ts";
import { notCommitted, type ReplacementResult, type ResultBase } from "./result.ts";

/**
 * Drive from the snapshot's durable stage, then finalize after re-observing the ready candidate.
 *
 * @example
 * ```ts
 * import { driveThenFinalize } from "./finalize.ts";
 * // await driveThenFinalize(op, operationId, snap, { resuming: true });
 * ```
 */
export async function driveThenFinalize(
  op: ReviewedOperation,
  operationId: string,
  start: StateSnapshot,
  options: { resuming: boolean; events: OperationEvents },
): Promise<ReplacementResult> {
  // a cancelled run (CANCELLED) throws: its operation stays pending at its last boundary
  return await finishRun(
    options.events,
    () => driveAndFinalize(op, operationId, start, options),
  );
}

/**
 * The events of one replacement run (an apply or a resume of one operation).
 *
 * @example
 * ```ts
 * import { replacementEvents } from "./finalize.ts";
 * // const events = replacementEvents(op, operationId); events.started(true, "resuming");
 * ```
 */
export function replacementEvents(op: ReviewedOperation, operationId: string): OperationEvents {
  return new OperationEvents({
    journey: "replacement",
    operationId,
    listener: op.options.onProgress,
    clock: op.project.clock,
    signal: op.options.signal,
    planSha256: op.reviewed.sha256,
  });
}

/**
 * A run's body that gives a replacement result: an error ends the run (`interrupted` or
 * `blocked`) and is rethrown, a result ends it as it says.
 *
 * @example
 * ```ts
 * import { finishRun } from "./finalize.ts";
 * // return await finishRun(events, () => finalizeOperation(op, base, snap, { resuming: true }));
 * ```
 */
export async function finishRun(
  events: OperationEvents,
  body: () => Promise<ReplacementResult>,
): Promise<ReplacementResult> {
  const result = await events.run(body);
  endOfRun(events, result);
  return result;
}

/**
 * The run's last event for a replacement's result (`committed`, `blocked` or `interrupted`);
 * gives the result back.
 *
 * @example
 * ```ts
 * import { endOfRun } from "./finalize.ts";
 * // return endOfRun(events, lostWrite(base, "the intent", null, error));
 * ```
 */
export function endOfRun(events: OperationEvents, r: ReplacementResult): ReplacementResult {
  if (r.committed === true) {
    events.committed(
      r.serial,
      `ownership serial ${r.serial}; completion receipt recorded`,
      "finalized",
    );
  } else if (r.outcome === "blocked") {
    events.stopped(
      "blocked",
      r.blockers[0]?.code ?? "BLOCKED",
      r.blockers[0]?.message ?? "blocked",
    );
  } else {
    const code = r.outcome === "timeout" ? "UNKNOWN_OUTCOME_TIMEOUT" : "UNKNOWN_OUTCOME";
    events.stopped("interrupted", code, r.reason ?? r.outcome);
  }
  return r;
}

async function driveAndFinalize(
  op: ReviewedOperation,
  operationId: string,
  start: StateSnapshot,
  options: { resuming: boolean; events: OperationEvents },
): Promise<ReplacementResult> {
  const { project: p, reviewed: r, options: o } = op;
  const candidate = op.candidate(operationId);
  const base = { operation_id: operationId, commands: op.commands(operationId) };
  // the last checkpoint whose write was acknowledged in this invocation: the answer when the
  // store itself is lost
  let acknowledged: Stage = stageOf(checkpointsOf(start), candidate.actionIndex);
  let outcome: DriveOutcome;
  try {
    outcome = await drive(
      {
        docker: p.docker,
        kafka: p.kafka,
        store: p.store,
        clock: p.clock,
        verifyLock: () => p.store.verifyLock(),
        reverify: (s) => reverifyReviewed(op, s, operationId),
        plansDir: p.plansDir,
        // the labels the intent recorded, not this handle's (a resume from another process)
        extraLabels: recordedExtraLabels(start.control!.opened.intent),
        closeTimeoutMs: o.closeTimeoutMs,
        readyTimeoutMs: o.readyTimeoutMs,
        operationId,
        events: options.events,
        acknowledged: (c) => acknowledged = c.name,
      },
      start,
      r.action,
      candidate,
      options,
    );
  } catch (error) {
    // cancelled right after a durable boundary or inside a wait: nothing is unknown
    if (error instanceof SluiceError && error.code === "CANCELLED") throw error;
    const last = await lastAcknowledged(op, operationId, acknowledged);
    // a blocker found inside the driver (e.g. the image vanished before the create) is a
    // blocker, not an unknown outcome: nothing was done past the last boundary
    if (error instanceof SluiceError && exitCodeFor(error) === EXIT.BLOCKED) {
      const found = (error.evidence as { blockers?: Blocker[] } | undefined)?.blockers;
      return notCommitted(base, {
        committed: false,
        outcome: "blocked",
        last_boundary: last,
        blockers: found ?? [blocker(error.code, error.message)],
      });
    }
    // a missing acknowledgement: only the last acknowledged boundary is known
    return notCommitted(base, {
      committed: null,
      outcome: "unknown",
      last_boundary: last,
      reason: error instanceof Error ? error.message : String(error),
    });
  }
  if (outcome.kind !== "completed") {
    return notCommitted(base, {
      committed: false,
      outcome: outcome.kind,
      last_boundary: outcome.stage,
      blockers: outcome.kind === "blocked" ? outcome.blockers : [],
      reason: outcome.kind === "timeout" ? `timed out waiting: ${outcome.reason}` : null,
    });
  }
  return await finalizeOperation(op, base, outcome.snapshot, options);
}

/**
 * The table's last row: re-observe the exact ready candidate, then cross the finalization
 * write. A candidate that is not running and ready leaves the operation as it is.
 *
 * "Ready" is the ready boundary's own rule ({@link readyCandidate}) on this fresh observation,
 * also when a local finalization already archived its receipt and only its ownership and clear
 * remain (spec: "With the original plan, current project, exact receipt and ready candidate
 * verified, retry clears control"): not ready, nothing is written and `state resume` finishes
 * once it is.
 *
 * @example
 * ```ts
 * import { finalizeOperation } from "./finalize.ts";
 * // await finalizeOperation(op, base, snapshotAtActionCompleted, { resuming: true });
 * ```
 */
export async function finalizeOperation(
  op: ReviewedOperation,
  base: ResultBase,
  snap: StateSnapshot,
  options: { resuming: boolean },
): Promise<ReplacementResult> {
  const { project: p } = op;
  // spec: the plan and project checks are repeated before finalization — until the commit is
  // durable (a receipt archived by a local finalize is the commit: only its local writes remain)
  if (findReceipt(snap.history.events, base.operation_id) === null) {
    const stale = await reverifyReviewed(op, snap, base.operation_id);
    if (stale.length > 0) {
      return notCommitted(base, {
        committed: false,
        outcome: "blocked",
        last_boundary: "action_completed",
        blockers: stale,
      });
    }
  }
  const candidate = op.candidate(base.operation_id);
  const obs = await observeRunner(p, candidateTarget(candidate));
  const { step, blockers } = readyCandidate(op, candidate, obs, journalOf(snap), options);
  if (step.kind !== "complete" || blockers.length > 0) {
    return notCommitted(base, {
      committed: false,
      outcome: "blocked",
      last_boundary: "action_completed",
      blockers,
    });
  }
  try {
    const f = await atSite(step.row.site, () => p.store.finalizeCompletedRunner(snap));
    return {
      ...base,
      committed: true,
      outcome: "completed",
      last_boundary: "finalized",
      blockers: [],
      reason: null,
      serial: f.snapshot.ownership?.document.serial ?? null,
      receipt: f.receipt,
      lineage_warnings: [],
    };
  } catch (error) {
    if (error instanceof SluiceError && error.code.startsWith("BLOCKED_")) throw error;
    return notCommitted(base, {
      committed: null,
      outcome: "unknown",
      last_boundary: "action_completed",
      reason: `finalization was not acknowledged: ${
        error instanceof Error ? error.message : String(error)
      }`,
    });
  }
}

/**
 * The candidate is not (or no longer) ready: finalization waits for a later `state resume`, and
 * a completed operation is not verified.
 */
function notRunning(model: string, detail?: string, evidence?: Record<string, unknown>): Blocker {
  return blocker(
    "BLOCKED_CANDIDATE_NOT_READY",
    `the completed candidate is not running and ready${
      detail ? ` (${detail})` : ""
    }; finalization waits, and a completed operation is not verified`,
    { model, evidence },
  );
}

/** What the ready check reads of an operation's journal. */
export interface OperationJournal {
  /** Its durable checkpoints, in order. */
  checkpoints: Checkpoint[];
  /** The operator's recorded decisions (they move the clean-close vector). */
  decisions: OperatorDecision[];
}

/**
 * The journal of a pending operation (the snapshot's control), or of a completed one (its
 * receipt's frozen terminal control).
 *
 * @example
 * ```ts
 * import { journalOf } from "./finalize.ts";
 * // journalOf(snapshot) or journalOf(receipt)
 * ```
 */
export function journalOf(from: StateSnapshot | CompletionReceipt): OperationJournal {
  if ("kind" in from && from.kind === "runner_completed") {
    const terminal = openControl(from.terminal_control);
    return { checkpoints: terminal.checkpoints, decisions: terminal.decisions };
  }
  const snap = from as StateSnapshot;
  return { checkpoints: checkpointsOf(snap), decisions: decisionsOf(snap) };
}

/**
 * The exact ready candidate, on a fresh observation (spec: "The coordinator must first
 * re-observe the exact ready candidate"; "verify an already-cleared operation from its exact
 * receipt and ready candidate"): the table at the journal's stage (the invariants of every stage,
 * the action recorded completed with success), then the ready boundary's own guard
 * ({@link notReadyNow}). One rule for finalization, its retry after a local receipt, the
 * verification of an already completed operation and `state runner-status`. `step` is the
 * finalization row's (`complete`) when the table allows it; `blockers` is empty only when the
 * candidate is ready.
 *
 * @example
 * ```ts
 * import { readyCandidate, journalOf } from "./finalize.ts";
 * // const { step, blockers } = readyCandidate(op, candidate, obs, journalOf(snap), { resuming });
 * ```
 */
export function readyCandidate(
  op: ReviewedOperation,
  candidate: CandidateExpectation,
  obs: RunnerObservation,
  journal: OperationJournal,
  options: { resuming: boolean },
): { step: Step; blockers: Blocker[] } {
  const action = op.reviewed.action;
  const step = decide({
    stage: stageOf(journal.checkpoints, candidate.actionIndex),
    checkpoints: journal.checkpoints,
    action,
    candidate,
    obs,
    memory: { termRequested: true, startRequested: true },
    resuming: options.resuming,
    decisions: journal.decisions,
  });
  if (step.kind === "blocked") return { step, blockers: step.blockers };
  if (step.kind !== "complete") return { step, blockers: [notRunning(action.model)] };
  return { step, blockers: notReadyNow(op, candidate, obs, journal) };
}

/** The ready boundary: the table's row that records action_completed (guard `candidateReady`). */
const READY_ROW = (() => {
  const row = rowsAt("replacement_created").find((r) => r.checkpoint === "action_completed");
  if (!row) throw new Error("the replacement table has no row that records action_completed");
  return row;
})();

/**
 * Why the candidate is not ready on this observation ([] when it is), by the ready boundary's
 * own guard (spec: "fresh desired-plan running status, one group member, unchanged identities
 * and monotonic progress"): its blockers as the driver gives them there (the recorded candidate
 * missing or not exact, committed offsets below the clean close). Where the driver would wait
 * (not RUNNING for this generation and plan, not exactly one group member, or the one member not
 * the candidate's) or the candidate no longer runs, finalization does not wait:
 * BLOCKED_CANDIDATE_NOT_READY, and `state resume` finalizes once it is ready. Callers reach it
 * through {@link readyCandidate}, after the invariants of every stage held.
 *
 * @example
 * ```ts
 * import { notReadyNow } from "./finalize.ts";
 * // if (notReadyNow(op, candidate, obs, journalOf(snap)).length === 0) { ... finalize ... }
 * ```
 */
export function notReadyNow(
  op: ReviewedOperation,
  candidate: CandidateExpectation,
  obs: RunnerObservation,
  journal: OperationJournal,
): Blocker[] {
  const model = op.reviewed.action.model;
  // the every-stage invariants already held (decide, in readyCandidate); this splits old and
  // candidate
  const rt = verifyReviewedRuntime(obs, candidate.evidence, candidate, model);
  const verdict = GUARDS[READY_ROW.guard]({
    stage: READY_ROW.stage,
    checkpoints: journal.checkpoints,
    action: op.reviewed.action,
    candidate,
    obs,
    old: rt.old,
    cand: rt.cand,
    memory: { termRequested: true, startRequested: true },
    resuming: false,
    decisions: journal.decisions,
  });
  switch (verdict.kind) {
    case "go":
      return [];
    case "blocked":
      return verdict.blockers;
    case "wait":
    case "skip": {
      const status = rt.cand?.runnerStatus;
      const why = verdict.kind === "wait"
        ? verdict.reason
        : `candidate ${rt.cand?.status ?? "absent"}, not running`;
      return [notRunning(model, why, {
        container: rt.cand?.id ?? null,
        running: rt.cand?.running ?? false,
        status: status
          ? {
            state: status.state,
            generation: status.generation,
            plan: status.plan_sha256,
            client_id: status.client_id ?? null,
          }
          : null,
        group: {
          state: obs.kafka.group.state,
          members: obs.kafka.group.members.length,
          client_ids: obs.kafka.group.members.map((m) => m.clientId),
        },
      })];
    }
  }
}

async function lastAcknowledged(
  op: ReviewedOperation,
  operationId: string,
  acknowledged: Stage,
): Promise<Stage | "finalized"> {
  try {
    const s = await op.project.store.load();
    return controlOf(s, operationId) ? stageOf(checkpointsOf(s), 0) : "finalized";
  } catch {
    // the store cannot be read (e.g. its session was lost): what this invocation saw acknowledged
    return acknowledged;
  }
}
