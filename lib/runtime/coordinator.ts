/**
 * The reviewed coordinator: executes, inspects and resumes one predicate replacement from
 * its original format-6 plan file (spec, "Reviewed coordinator and completed-result
 * finalization" and "Public command contract").
 *
 * - {@link executeReviewed} (`apply --plan FILE`): verifies the plan file and its typed
 *   action, reparses and compiles the current project, checks the desired artifact, the
 *   protected state, the store and the runtime, records the intent, and drives the action.
 * - {@link runnerStatus} (`state runner-status`): under the operation lock, validates storage
 *   and audit, observes read-only and reports the next proven boundary. It grants nothing.
 * - {@link resumeReviewed} (`state resume`): continues the same operation under a new lock:
 *   records the interruption, authorizes the resume (reusing an exact prewritten
 *   authorization), drives from the last durable boundary, finalizes.
 *
 * Apply and resume share one driver. Nothing here re-plans against a half-replaced runtime.
 *
 * @example
 * ```ts
 * import { executeReviewed } from "./coordinator.ts";
 * // const r = await executeReviewed({ dir: ".", planPath: "plan.json" });
 * // r.committed === true → done; null → unknown: run the printed runner-status command
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { canonicalJson } from "../artifact/canonical.ts";
import type { Plan } from "../plan/plan.ts";
import { typedActionSha256 } from "../plan/plan.ts";
import { readPlanFile, verifyPlanCurrent } from "../plan/plan_file.ts";
import type { Checkpoint, OpenedControl, RunnerAction } from "../state/journal.ts";
import { CHECKPOINT_ORDER } from "../state/journal.ts";
import type { StateSnapshot } from "../state/store.ts";
import type { CompletionReceipt } from "../state/history.ts";
import { crossBoundary, defineBoundary } from "./boundary.ts";
import type { Blocker } from "./checks.ts";
import { blockerError } from "./checks.ts";
import type { CandidateExpectation, DriveOutcome, Stage, Step } from "./driver.ts";
import { BOUNDARY_TABLE, decide, drive, expectCandidate, stageOf } from "./driver.ts";
import { observeRunner } from "./observer.ts";
import type { RunnerObservation } from "./observer.ts";
import { openProject } from "./session.ts";
import { emitRunEvent, lineageSink } from "../lineage/emit.ts";
import type { LineageContext } from "../lineage/events.ts";
import type { OpenedProject, ProjectOptions } from "./session.ts";

const INTENT = defineBoundary(
  "journal.intent",
  "journal",
  "record the operation's intent and typed action",
);
const INTERRUPTION = defineBoundary(
  "journal.interruption",
  "journal",
  "record the interruption of the operation",
);
const RESUME = defineBoundary("journal.resume", "journal", "authorize the resume (resume_history)");
const FINALIZE = defineBoundary(
  "state.finalize",
  "journal",
  "commit desired ownership, write the receipt, clear control",
);

/** Options shared by the coordinator's entry points. */
export interface ReviewedOptions extends ProjectOptions {
  /** The original format-6 plan file. */
  planPath: string;
  closeTimeoutMs?: number;
  readyTimeoutMs?: number;
  /** Labels added to the candidate (a test run's label). */
  extraLabels?: Record<string, string>;
  /** OpenLineage target: an http(s) URL (POST) or a file (JSON lines). Delivery never decides commit. */
  openlineage?: string;
  /** Remove a stale local lock left by a dead process first (explicit; never silent). */
  breakStaleLock?: string;
}

/** The result of executing or resuming a reviewed replacement. */
export interface ReplacementResult {
  operation_id: string;
  /** true: verified and committed; null: outcome unknown (a response was lost); false: not committed. */
  committed: boolean | null;
  outcome: "completed" | "blocked" | "timeout" | "unknown";
  /** The last durable (acknowledged) boundary. */
  last_boundary: Stage | "finalized";
  blockers: Blocker[];
  reason: string | null;
  serial: number | null;
  receipt: CompletionReceipt | null;
  /** Exact commands to inspect and resume this operation. */
  commands: { status: string; resume: string };
  /** OpenLineage delivery warnings (never a reason to change `committed`). */
  lineage_warnings: string[];
}

/** A read-only status report. */
export interface RunnerStatusReport {
  operation_id: string;
  /** pending (in progress or interrupted), completed (receipt verified), absent. */
  state: "in_progress" | "interrupted" | "completed" | "absent";
  last_boundary: Stage | "finalized" | null;
  checkpoints: Checkpoint[];
  /** The next step the fresh evidence would authorize (it is not authorized by this report). */
  next: { step: Step["kind"]; detail: string; table_row: string | null };
  blockers: Blocker[];
  incidents: number;
  resumes: number;
  observation: RunnerObservation | null;
  commands: { status: string; resume: string };
}

function commandsFor(o: ReviewedOptions, operationId: string) {
  const env = o.environment ? ` --env ${o.environment} --confirm-env ${o.environment}` : "";
  const project = o.dir ? ` --project ${o.dir}` : "";
  return {
    status: `sluice state runner-status${project}${
      env.split(" --confirm-env")[0]
    } --plan ${o.planPath} --operation-id ${operationId}`,
    resume:
      `sluice state resume${project}${env} --plan ${o.planPath} --operation-id ${operationId}`,
  };
}

interface Reviewed {
  plan: Plan;
  sha256: string;
  action: RunnerAction;
  fingerprint: string;
}

/** Read the plan file, require format 6 and verify its typed action against the current project. */
async function loadReviewed(p: OpenedProject, planPath: string): Promise<Reviewed> {
  const { plan, sha256 } = await readPlanFile(planPath);
  if (plan.format !== 6 || !plan.typed_action) {
    throw new SluiceError(
      "PLAN_NOT_REVIEWED",
      `${planPath} is a format-${plan.format} plan; a predicate replacement needs the reviewed format-6 plan from 'sluice plan --out'`,
    );
  }
  const action = plan.typed_action.action;
  if (action.type !== "replace_runner_predicate") {
    throw new SluiceError(
      "PLAN_INVALID",
      `${planPath}: unknown typed action ${String(action.type)}`,
    );
  }
  // the desired action must match the actual compiled artifact of the current project
  const compiled = p.compiled.artifacts.find((a) => a.model === action.model);
  if (!compiled || compiled.sha256 !== action.desired_artifact_sha256) {
    throw new SluiceError(
      "PLAN_STALE_SOURCE",
      `the current project compiles model ${action.model} to ${
        compiled?.sha256 ?? "nothing"
      }, not the reviewed ${action.desired_artifact_sha256}`,
      { evidence: { reviewed: action.desired_artifact_sha256, current: compiled?.sha256 ?? null } },
    );
  }
  const desired = (action.evidence as Record<string, unknown>).desired_artifact;
  if (canonicalJson(desired) !== compiled.canonical) {
    throw new SluiceError(
      "PLAN_TAMPERED",
      "the typed action's desired artifact is not the compiled artifact",
    );
  }
  return { plan, sha256, action, fingerprint: typedActionSha256(action) };
}

function checkpointsOf(s: StateSnapshot): Checkpoint[] {
  return s.control?.opened.checkpoints ?? [];
}

function controlFor(s: StateSnapshot, operationId: string) {
  const c = s.control?.opened;
  return c && c.operation_id === operationId ? c : null;
}

function targetOfAction(c: CandidateExpectation, action: RunnerAction) {
  return {
    applicationId: action.application_id,
    inputTopic: c.desiredArtifact.input.topic,
    outputTopic: c.desiredArtifact.output.topic,
    image: c.desiredArtifact.image,
    network: c.desiredArtifact.network,
  };
}

/** Execute a reviewed replacement (`apply --plan FILE` with a format-6 plan). */
export async function executeReviewed(options: ReviewedOptions): Promise<ReplacementResult> {
  const p = await openProject(options);
  try {
    const r = await loadReviewed(p, options.planPath);
    await lockForOperation(p, options);
    try {
      let snap = await p.store.load();
      verifyPlanCurrent(r.plan, {
        project: p.store.project,
        environment: p.store.environment,
        sourceSha256: p.sourceSha256,
        stateChecksum: snap.ownership?.checksum ?? null,
        store: snap.identity,
      });
      if (snap.control) {
        throw new SluiceError(
          "BLOCKED_OPERATION_PENDING",
          `operation ${snap.control.opened.operation_id} is pending; inspect it with 'sluice state runner-status' and continue it with 'sluice state resume'`,
          { evidence: { operation_id: snap.control.opened.operation_id } },
        );
      }
      const owned = snap.ownership?.document.runners.find((x) => x.model === r.action.model);
      if (!owned || owned.artifact_sha256 !== r.action.prior_artifact_sha256) {
        throw new SluiceError(
          "BLOCKED_PROTECTED_STATE",
          `ownership of ${r.action.model} is ${
            owned?.artifact_sha256 ?? "absent"
          }, not the reviewed prior ${r.action.prior_artifact_sha256}`,
        );
      }
      const operationId = crypto.randomUUID();
      const candidate = expectCandidate(
        r.action,
        operationId,
        0,
        r.fingerprint,
        p.project.manifest.kafka.bootstrapInternal,
      );
      // the fresh evidence must authorize the first step before anything is written
      const obs = await observeRunner(p, targetOfAction(candidate, r.action));
      const first = decide({
        stage: "intent",
        checkpoints: [],
        action: r.action,
        candidate,
        obs,
        memory: { termRequested: false, startRequested: false },
        resuming: false,
      });
      if (first.kind === "blocked") throw blockerError(first.blockers);
      snap = await crossBoundary(INTENT, () =>
        p.store.beginOperation(snap, {
          operation_id: operationId,
          kind: "runner_update",
          project: p.store.project,
          environment: p.store.environment,
          actor: p.actor,
          created_at: new Date().toISOString(),
          original_state_checksum: snap.ownership!.checksum,
          reviewed_plan_sha256: r.sha256,
          details: { model: r.action.model, application_id: r.action.application_id },
        }, [r.action]));
      options.progress?.("intent", `operation ${operationId} recorded`);
      const lineage = lineageFor(p, options, r, operationId);
      // START only after the intent is acknowledged
      await lineage.emit("START");
      const result = await driveAndFinalize(p, options, r, operationId, candidate, snap, false);
      return await lineage.finish(result);
    } finally {
      await releaseQuietly(p);
    }
  } finally {
    await p.close();
  }
}

async function releaseQuietly(p: OpenedProject): Promise<void> {
  try {
    await p.store.releaseLock();
  } catch {
    // a lock-release error after a verified result keeps committed: true (spec); the lock
    // itself is diagnosed by the next command
  }
}

/** OpenLineage for one invocation: START/COMPLETE/FAIL with run ID = operation UUID. */
function lineageFor(p: OpenedProject, options: ReviewedOptions, r: Reviewed, operationId: string) {
  const warnings: string[] = [];
  const sink = options.openlineage ? lineageSink(options.openlineage) : null;
  const desired = (r.action.evidence as Record<string, unknown>).desired_artifact as {
    input: { topic: string };
    output: { topic: string };
  };
  const ctx: LineageContext = {
    operationId,
    project: p.store.project,
    environment: p.store.environment,
    applicationId: r.action.application_id,
    bootstrap: p.project.manifest.kafka.bootstrapHost,
    inputTopic: desired.input.topic,
    outputTopic: desired.output.topic,
    model: r.action.model,
    priorArtifactSha256: r.action.prior_artifact_sha256,
    desiredArtifactSha256: r.action.desired_artifact_sha256,
    planSha256: r.sha256,
  };
  const emit = async (
    type: "START" | "COMPLETE" | "FAIL",
    failure?: { message: string; outcome: string },
  ) => {
    if (!sink) return;
    const res = await emitRunEvent(sink, type, ctx, failure ? { failure } : {});
    if (res.warning) warnings.push(res.warning);
  };
  return {
    emit,
    async finish(result: ReplacementResult): Promise<ReplacementResult> {
      // COMPLETE only after verified finalization; FAIL for a runtime failure or unknown commit
      if (result.committed === true) await emit("COMPLETE");
      else {
        await emit("FAIL", {
          message: result.reason ??
            (result.blockers.length > 0
              ? result.blockers.map((b) => `[${b.code}] ${b.message}`).join("; ")
              : result.outcome),
          outcome: result.outcome,
        });
      }
      return { ...result, lineage_warnings: [...result.lineage_warnings, ...warnings] };
    },
  };
}

/** Drive, then finalize after re-observing the exact ready candidate. */
async function driveAndFinalize(
  p: OpenedProject,
  options: ReviewedOptions,
  r: Reviewed,
  operationId: string,
  candidate: CandidateExpectation,
  start: StateSnapshot,
  resuming: boolean,
): Promise<ReplacementResult> {
  const base = { operation_id: operationId, commands: commandsFor(options, operationId) };
  // the last checkpoint whose write was acknowledged in this invocation (the driver reports a
  // checkpoint only after its write returned): the answer when the store itself is lost
  let acknowledged: Stage = stageOf(checkpointsOf(start), candidate.actionIndex);
  const checkpointNames: ReadonlySet<string> = new Set(CHECKPOINT_ORDER);
  let outcome: DriveOutcome;
  try {
    outcome = await drive(
      {
        docker: p.docker,
        kafka: p.kafka,
        store: p.store,
        verifyLock: () => p.store.verifyLock(),
        plansDir: p.plansDir,
        extraLabels: options.extraLabels,
        closeTimeoutMs: options.closeTimeoutMs,
        readyTimeoutMs: options.readyTimeoutMs,
        progress: (step, detail) => {
          if (checkpointNames.has(step)) acknowledged = step as Stage;
          options.progress?.(step, detail);
        },
      },
      start,
      checkpointsOf,
      r.action,
      candidate,
      resuming,
    );
  } catch (error) {
    // a missing acknowledgement: only the last acknowledged boundary is known
    return {
      ...base,
      committed: null,
      outcome: "unknown",
      last_boundary: await lastAcknowledged(p, operationId, acknowledged),
      blockers: [],
      reason: error instanceof Error ? error.message : String(error),
      serial: null,
      receipt: null,
      lineage_warnings: [],
    };
  }
  if (outcome.kind !== "completed") {
    return {
      ...base,
      committed: false,
      outcome: outcome.kind,
      last_boundary: outcome.stage,
      blockers: outcome.kind === "blocked" ? outcome.blockers : [],
      reason: outcome.kind === "timeout" ? `timed out waiting: ${outcome.reason}` : null,
      serial: null,
      receipt: null,
      lineage_warnings: [],
    };
  }
  return await finalize(p, base, r, candidate, outcome.snapshot, resuming);
}

async function finalize(
  p: OpenedProject,
  base: { operation_id: string; commands: { status: string; resume: string } },
  r: Reviewed,
  candidate: CandidateExpectation,
  snap: StateSnapshot,
  resuming: boolean,
): Promise<ReplacementResult> {
  // finalization re-observes the exact ready candidate first
  const obs = await observeRunner(p, targetOfAction(candidate, r.action));
  const check = decide({
    stage: stageOf(checkpointsOf(snap), candidate.actionIndex),
    checkpoints: checkpointsOf(snap),
    action: r.action,
    candidate,
    obs,
    memory: { termRequested: true, startRequested: true },
    resuming,
  });
  if (
    check.kind !== "complete" || !obs.containers.some((c) => c.name === candidate.name && c.running)
  ) {
    return {
      ...base,
      committed: false,
      outcome: "blocked",
      last_boundary: "action_completed",
      blockers: check.kind === "blocked" ? check.blockers : [{
        code: "BLOCKED_CANDIDATE_NOT_READY",
        model: r.action.model,
        message: "the completed candidate is not running and ready; finalization waits",
      }],
      reason: null,
      serial: null,
      receipt: null,
      lineage_warnings: [],
    };
  }
  try {
    const f = await crossBoundary(FINALIZE, () => p.store.finalizeCompletedRunner(snap));
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
    return {
      ...base,
      committed: null,
      outcome: "unknown",
      last_boundary: "action_completed",
      blockers: [],
      reason: `finalization was not acknowledged: ${
        error instanceof Error ? error.message : String(error)
      }`,
      serial: null,
      receipt: null,
      lineage_warnings: [],
    };
  }
}

async function lastAcknowledged(
  p: OpenedProject,
  operationId: string,
  acknowledged: Stage,
): Promise<Stage | "finalized"> {
  try {
    const s = await p.store.load();
    const c = controlFor(s, operationId);
    if (!c) return "finalized";
    return stageOf(checkpointsOf(s), 0);
  } catch {
    // the store cannot be read (e.g. its session was lost): what this invocation saw acknowledged
    return acknowledged;
  }
}

/** Options of {@link runnerStatus} and {@link resumeReviewed}. */
export interface OperationOptions extends ReviewedOptions {
  operationId: string;
  /** The environment name, repeated, where the environment policy demands it. */
  confirmEnv?: string;
}

async function lockForOperation(p: OpenedProject, o: ReviewedOptions): Promise<void> {
  if (o.breakStaleLock) await p.store.breakStaleLock(o.breakStaleLock);
  await p.store.acquireLock({ actor: p.actor });
}

/** Read-only diagnosis of an operation: the next proven boundary, without resume authority. */
export async function runnerStatus(options: OperationOptions): Promise<RunnerStatusReport> {
  const p = await openProject(options);
  try {
    const r = await loadReviewed(p, options.planPath);
    await lockForOperation(p, options);
    try {
      const snap = await p.store.load(); // verifies storage and audit
      const commands = commandsFor(options, options.operationId);
      const c = controlFor(snap, options.operationId);
      const candidate = expectCandidate(
        r.action,
        options.operationId,
        0,
        r.fingerprint,
        p.project.manifest.kafka.bootstrapInternal,
      );
      const obs = await observeRunner(p, targetOfAction(candidate, r.action));
      if (!c) {
        const receipt = await p.store.completedReceipt(options.operationId);
        return {
          operation_id: options.operationId,
          state: receipt ? "completed" : "absent",
          last_boundary: receipt ? "finalized" : null,
          checkpoints: [],
          next: {
            step: "complete",
            detail: receipt ? "completed; nothing to do" : "no such operation",
            table_row: null,
          },
          blockers: [],
          incidents: 0,
          resumes: 0,
          observation: obs,
          commands,
        };
      }
      verifyOperationMatches(c, r, options.operationId);
      const checkpoints = checkpointsOf(snap);
      const stage = stageOf(checkpoints, 0);
      const step = decide({
        stage,
        checkpoints,
        action: r.action,
        candidate,
        obs,
        memory: { termRequested: false, startRequested: false },
        resuming: true,
      });
      return {
        operation_id: options.operationId,
        state: c.status,
        last_boundary: stage,
        checkpoints,
        next: { step: step.kind, detail: describeStep(step), table_row: rowFor(stage) },
        blockers: step.kind === "blocked" ? step.blockers : [],
        incidents: c.incidents.length,
        resumes: c.resume_history.length,
        observation: obs,
        commands,
      };
    } finally {
      await releaseQuietly(p);
    }
  } finally {
    await p.close();
  }
}

function rowFor(stage: Stage): string | null {
  const row = BOUNDARY_TABLE.find((r) => r.durable === stage);
  return row ? `${row.durable}: requires ${row.requires}; next: ${row.next}` : null;
}

function describeStep(s: Step): string {
  switch (s.kind) {
    case "record":
      return `record ${s.checkpoint.name}`;
    case "term":
      return `request TERM of ${s.containerId.slice(0, 12)}`;
    case "remove":
      return `remove ${s.containerId.slice(0, 12)} (no force, volume kept)`;
    case "create":
      return "create the stopped candidate";
    case "start":
      return `start candidate ${s.containerId.slice(0, 12)}`;
    case "wait":
      return `wait: ${s.reason}`;
    case "complete":
      return "finalize: commit desired ownership and clear the operation";
    case "blocked":
      return s.blockers.map((b) => `[${b.code}] ${b.message}`).join("; ");
  }
}

function verifyOperationMatches(c: OpenedControl, r: Reviewed, operationId: string): void {
  if (c.kind !== "runner_update") {
    throw new SluiceError(
      "BLOCKED_NOT_A_REPLACEMENT",
      `operation ${operationId} is a ${c.kind}, not a runner update`,
    );
  }
  if (c.intent.reviewed_plan_sha256 !== r.sha256) {
    throw new SluiceError(
      "BLOCKED_PLAN_MISMATCH",
      `operation ${operationId} was started from plan ${c.intent.reviewed_plan_sha256}, not ${r.sha256}`,
    );
  }
  const recorded = c.actions[0];
  if (!recorded || typedActionSha256(recorded) !== r.fingerprint) {
    throw new SluiceError(
      "BLOCKED_PLAN_MISMATCH",
      `operation ${operationId} records another typed action than the plan`,
    );
  }
}

/** Continue the same operation (`state resume`). */
export async function resumeReviewed(options: OperationOptions): Promise<ReplacementResult> {
  const p = await openProject(options);
  try {
    if (
      p.project.manifest.environments.length > 0 &&
      options.confirmEnv !== p.project.manifest.environment
    ) {
      throw new SluiceError(
        "BLOCKED_CONFIRM_ENV",
        `resuming in environment ${p.project.manifest.environment} requires --confirm-env ${p.project.manifest.environment}`,
      );
    }
    const r = await loadReviewed(p, options.planPath);
    await lockForOperation(p, options);
    try {
      let snap = await p.store.load();
      const base = {
        operation_id: options.operationId,
        commands: commandsFor(options, options.operationId),
      };
      const candidate = expectCandidate(
        r.action,
        options.operationId,
        0,
        r.fingerprint,
        p.project.manifest.kafka.bootstrapInternal,
      );
      const c = controlFor(snap, options.operationId);
      if (!c) {
        // an already completed operation is verified from its receipt and the live candidate:
        // no redeploy, no audit append, no serial increment
        const receipt = await p.store.completedReceipt(options.operationId);
        if (!receipt) {
          throw new SluiceError(
            "BLOCKED_NO_PENDING_OPERATION",
            `operation ${options.operationId} is neither pending nor completed`,
          );
        }
        const obs = await observeRunner(p, targetOfAction(candidate, r.action));
        const live = obs.containers.find((x) => x.name === candidate.name && x.running);
        if (!live) {
          throw new SluiceError(
            "BLOCKED_CANDIDATE_NOT_READY",
            `operation ${options.operationId} completed, but its candidate is not running now`,
          );
        }
        return {
          ...base,
          committed: true,
          outcome: "completed",
          last_boundary: "finalized",
          blockers: [],
          reason: "already completed (verified from the receipt and the running candidate)",
          serial: snap.ownership?.document.serial ?? null,
          receipt: receipt.receipt,
          lineage_warnings: [],
        };
      }
      verifyOperationMatches(c, r, options.operationId);
      verifyPlanCurrent(r.plan, {
        project: p.store.project,
        environment: p.store.environment,
        sourceSha256: p.sourceSha256,
        stateChecksum: snap.ownership?.checksum ?? null,
        store: snap.identity,
      });
      if (c.status === "in_progress") {
        snap = await crossBoundary(INTERRUPTION, () =>
          p.store.recordInterruption(snap, {
            incident_id: crypto.randomUUID(),
            actor: p.actor,
            recorded_at: new Date().toISOString(),
            reason: "resumed under a new lock: the previous invocation ended without finishing",
          }));
      }
      const stage = stageOf(checkpointsOf(snap), 0);
      if (stage === "action_completed") {
        // the action is terminal (its outcome is recorded): resume authorizes no further
        // boundary, and only finalization remains — after re-observing the exact ready candidate
        return await finalize(p, base, r, candidate, snap, true);
      }
      const obs = await observeRunner(p, targetOfAction(candidate, r.action));
      const pending = await p.store.pendingResumeAuthorization(snap);
      const record = pending
        ? {
          authorization_id: pending.authorization_id,
          actor: pending.actor,
          authorized_at: pending.authorized_at,
          recovery: pending.recovery,
        }
        : {
          authorization_id: crypto.randomUUID(),
          actor: p.actor,
          authorized_at: new Date().toISOString(),
          recovery: JSON.parse(JSON.stringify({
            last_boundary: stage,
            observed_at: obs.observedAt,
            containers: obs.containers.map((x) => ({
              id: x.id,
              name: x.name,
              status: x.status,
              exitCode: x.exitCode,
              generation: x.labels.generation,
            })),
            group: obs.kafka.group,
            committed: obs.kafka.committed,
          })),
        };
      snap = await crossBoundary(RESUME, () => p.store.resumeOperation(snap, record));
      options.progress?.("resume", `authorization ${record.authorization_id} recorded at ${stage}`);
      // the original invocation sent START; a resume reports only the final outcome
      const lineage = lineageFor(p, options, r, options.operationId);
      const result = await driveAndFinalize(
        p,
        options,
        r,
        options.operationId,
        candidate,
        snap,
        true,
      );
      return await lineage.finish(result);
    } finally {
      await releaseQuietly(p);
    }
  } finally {
    await p.close();
  }
}
