/**
 * The replacement loop: observe, {@link decide} (a lookup in the boundary table), cross the
 * one authorized step's fault site — a journal checkpoint through the state store, or a
 * provider action after re-verifying the lock — and observe again, until the action is recorded
 * completed, a blocker is found, or a row's bounded wait expires. Apply and resume share it.
 *
 * Each observation reads what the stage's guards use (`reads.ts`: the status files only where
 * a guard reads them). A wait does not re-observe everything on a timer: it blocks on the one
 * change that can end it — the old runner's exit, the candidate's next status marker — or polls
 * only the group or the container state, then observes in full and decides again.
 *
 * Rules it keeps (spec, "Execution and interruption boundaries"): every checkpoint is durably
 * recorded before the next boundary is crossed; losing the lock stops further mutations; the plan
 * file and the project are checked again before each transition (`reverify`; where the stage
 * cannot wait, beside the step's observation), and a changed one stops the drive as a blocker;
 * no force-kill, ever — a timeout leaves things as they are.
 *
 * @example
 * ```ts
 * import { drive } from "./drive.ts";
 * // const outcome = await drive(ctx, snapshot, action, candidate, { resuming: false });
 * // outcome.kind === "completed" → finalize after re-observing the ready candidate
 * ```
 * @module
 */
import { atSite } from "../../fault/site.ts";
import type { Checkpoint, OperatorDecision, RunnerAction } from "../../state/journal.ts";
import type { StateSnapshot, StateStore } from "../../state/store.ts";
import { rowsAt, type Stage, STAGES } from "../../protocol/replacement.ts";
import { DOCKER_ZERO_TIME, type DockerPort } from "../../providers/docker/port.ts";
import type { KafkaPort } from "../../providers/kafka/port.ts";
import { type Blocker, blocker, blockerError } from "../../validation/blocker.ts";
import type { RunnerObservation } from "../../validation/observation.ts";
import { type Clock, SYSTEM_CLOCK } from "../deps.ts";
import { writeMountedPlanFile } from "../mounted_plan_file.ts";
import type { OperationEvents } from "../progress.ts";
import { observeRunner } from "../observer.ts";
import {
  type CandidateExpectation,
  candidateSpec,
  candidateTarget,
  createCandidate,
} from "./candidate.ts";
import { decide, stageOf, type Step } from "./decide.ts";
import type { StepMemory } from "./guards.ts";
import { SluiceError } from "../../errors.ts";
import { isCandidateOf } from "../../validation/reviewed_runtime.ts";
import { STATE_LINE_PREFIXES, statusReadsAt, type Wake, wakeOf } from "./reads.ts";
import { providerMutation } from "../provider_mutation.ts";

/** Everything {@link drive} needs. */
export interface DriveContext {
  docker: DockerPort;
  kafka: KafkaPort;
  store: StateStore;
  clock?: Clock;
  /** Throws STATE_LOCK_LOST when the lock is no longer held (checked before each mutation). */
  verifyLock: () => Promise<void>;
  /**
   * The plan file and the project checked again before each transition (a checkpoint or a
   * provider action) against the snapshot it would continue: [] while they are still the
   * reviewed ones, else the refusal (`reverifyReviewed`: `PLAN_TAMPERED`, `PLAN_STALE_SOURCE`,
   * ...), which stops the drive as a blocker before the transition.
   */
  reverify: (snap: StateSnapshot) => Promise<Blocker[]>;
  plansDir: string;
  extraLabels?: Record<string, string>;
  /** Bounds of the rows' waits (defaults: close 60 s, ready 120 s). */
  closeTimeoutMs?: number;
  readyTimeoutMs?: number;
  /**
   * Interval of the polls a wait still needs (the group, a container's state) and the least
   * time between two full observations while waiting (default 100 ms).
   */
  pollMs?: number;
  /** The operation being driven. */
  operationId: string;
  /**
   * The run's events: each checkpoint recorded (a boundary, where a cancelled run stops), each
   * provider action, each poll of a wait (a cancelled run stops waiting at once).
   */
  events: OperationEvents;
  /** Called once a checkpoint's write was acknowledged by the store. */
  acknowledged?: (checkpoint: Checkpoint) => void;
}

/** The outcome of one drive. */
export type DriveOutcome =
  | { kind: "completed"; snapshot: StateSnapshot; observation: RunnerObservation }
  | { kind: "blocked"; snapshot: StateSnapshot; blockers: Blocker[]; stage: Stage }
  | { kind: "timeout"; snapshot: StateSnapshot; reason: string; stage: Stage };

/** The checkpoints of the snapshot's pending control. */
export function checkpointsOf(s: StateSnapshot): Checkpoint[] {
  return s.control?.opened.checkpoints ?? [];
}

/** The operator's recorded decisions of the snapshot's pending control. */
export function decisionsOf(s: StateSnapshot): OperatorDecision[] {
  return s.control?.opened.decisions ?? [];
}

type Action = Extract<Step, { kind: "term" | "remove" | "create" | "start" }>;

/** A step that crosses a boundary: a checkpoint write or a provider action. */
function crosses(step: Step): step is Action | Extract<Step, { kind: "record" }> {
  return step.kind !== "wait" && step.kind !== "complete" && step.kind !== "blocked";
}

/** The provider action of each step kind; each crosses its row's fault site. */
async function act(ctx: DriveContext, x: CandidateExpectation, step: Action): Promise<string> {
  const docker = ctx.docker;
  switch (step.kind) {
    case "term":
      await atSite(step.row.site, () => docker.signalTerm(step.containerId));
      return `TERM requested for ${step.containerId.slice(0, 12)}`;
    case "remove":
      await atSite(step.row.site, () => docker.removeContainer(step.containerId));
      return `removed ${step.containerId.slice(0, 12)} (volume kept)`;
    case "create": {
      const planPath = await writeMountedPlanFile(ctx.plansDir, x.planBytes, x.planSha256);
      const image = await docker.inspectImage(x.desiredArtifact.image);
      if (!image) {
        throw blockerError([
          blocker("BLOCKED_WRONG_IMAGE", "the runner image disappeared", {
            model: x.desiredArtifact.model,
          }),
        ]);
      }
      const spec = candidateSpec(x, planPath, image.env, ctx.extraLabels);
      // the mounted plan's write is a persistence point a process can pause at: the lock checked
      // around this step may be gone by now, so it is checked again right before the create
      await ctx.verifyLock();
      const id = await atSite(
        step.row.site,
        () => createCandidate(docker, x, spec, ctx.verifyLock),
      );
      return `candidate ${x.name} created (${id.slice(0, 12)})`;
    }
    case "start":
      await atSite(step.row.site, () => docker.startContainer(step.containerId));
      return `candidate ${step.containerId.slice(0, 12)} started`;
  }
}

/**
 * The daemon's own answer to a start it refused (its words), or null when the error is not an
 * answer: nothing answered or access was denied (`ENV_DOCKER_*`), the response was lost (the
 * start may still be under way), a blocker, a lost lock — those are left to the caller as
 * before. An answer is Docker's 4xx (`DOCKER_REFUSED`) or 5xx (`UNKNOWN_OUTCOME_DOCKER` caused
 * by an HTTP status, e.g. containerd's "task … already exists" after a daemon restart).
 */
function daemonRefusal(error: unknown): string | null {
  const status = (e: unknown) => {
    const s = (e as { statusCode?: unknown } | null)?.statusCode;
    return typeof s === "number" && s >= 400 ? s : null;
  };
  if (error instanceof SluiceError) {
    const answered = error.code === "DOCKER_REFUSED" ||
      (error.code === "UNKNOWN_OUTCOME_DOCKER" && status(error.cause) !== null);
    if (!answered) return null;
    const reason = error.evidence?.reason;
    return typeof reason === "string" ? reason : error.message;
  }
  // an adapter that does not classify (the fakes): an HTTP status is the daemon's answer
  return status(error) !== null && error instanceof Error ? error.message : null;
}

/**
 * The stages whose every row crosses a boundary (a checkpoint or a provider action) without a
 * wait: there, an observation leads to a transition or a blocker (the table's `step`, `wait`).
 */
const ALWAYS_CROSSING: ReadonlySet<Stage> = new Set(
  STAGES.filter((s) => rowsAt(s).every((r) => r.step !== "complete" && r.wait === undefined)),
);

/**
 * The longest a wake-up waits before the driver observes in full again anyway (a change the
 * wake does not watch, such as a vanished volume, is then seen within this time).
 */
const WAKE_SLICE_MS = 5_000;

function boundOf(ctx: DriveContext, wait: "close" | "ready"): number {
  return wait === "close" ? (ctx.closeTimeoutMs ?? 60_000) : (ctx.readyTimeoutMs ?? 120_000);
}

/**
 * The change an action causes, awaited before the next observation: the old runner's exit
 * after TERM; after the first start of the candidate, its first status past STARTING (every
 * line of a container never started before is its own: since the zero time). A restart under
 * resume has earlier lines: the loop's own waits apply.
 */
function afterAction(step: Action): Wake | null {
  if (step.kind === "term") return { kind: "exit", containerId: step.containerId };
  if (step.kind === "start" && step.row.id === "start_candidate") {
    return { kind: "state_line", containerId: step.containerId, since: DOCKER_ZERO_TIME };
  }
  return null;
}

/**
 * Block until the wake's change happened or `timeoutMs` passed, reading only what detects it.
 * Its answer is never trusted: the caller observes in full and decides again.
 */
async function awaitWake(
  ctx: DriveContext,
  clock: Clock,
  wake: Wake,
  timeoutMs: number,
): Promise<void> {
  const { docker, kafka } = ctx;
  switch (wake.kind) {
    case "exit":
      await docker.awaitExit(wake.containerId, timeoutMs);
      return;
    case "state_line":
      await docker.awaitOutputLine(
        wake.containerId,
        [...STATE_LINE_PREFIXES],
        wake.since,
        timeoutMs,
      );
      return;
    case "group":
      await pollUntil(clock, ctx.events, ctx.pollMs ?? 100, timeoutMs, async () => {
        const g = await kafka.describeGroup(wake.groupId);
        return wake.members === "one"
          ? g.members.length === 1
          : g.members.length === 0 && ["Empty", "Dead"].includes(g.state);
      });
      return;
    case "started":
      await pollUntil(clock, ctx.events, ctx.pollMs ?? 100, timeoutMs, async () => {
        const c = await docker.inspectContainer(wake.containerId);
        return !c || c.state.running;
      });
      return;
  }
}

async function pollUntil(
  clock: Clock,
  events: OperationEvents,
  pollMs: number,
  timeoutMs: number,
  done: () => Promise<boolean>,
): Promise<void> {
  const end = clock.now() + timeoutMs;
  // a cancelled run's sleep ends the polls at once
  while (!(await done()) && clock.now() < end) await events.sleep(pollMs);
}

function describeCheckpoint(c: Checkpoint): string {
  switch (c.name) {
    case "old_closed":
      return `clean close recorded: exit ${c.exit_code}, offsets ${
        c.offsets.map((o) => `${o.partition}:${o.offset}`).join(", ")
      }`;
    case "replacement_created":
      return `candidate ${c.container_id.slice(0, 12)} recorded`;
    default:
      return `${c.name} recorded`;
  }
}

/**
 * Run the loop from the snapshot's durable stage until completion is recorded, a blocker is
 * found, or a row's bounded wait expires.
 *
 * @example
 * ```ts
 * import { drive } from "./drive.ts";
 * // const r = await drive(ctx, snap, action, candidate, { resuming: true });
 * ```
 */
export async function drive(
  ctx: DriveContext,
  start: StateSnapshot,
  action: RunnerAction,
  candidate: CandidateExpectation,
  options: { resuming: boolean },
): Promise<DriveOutcome> {
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const events = ctx.events;
  const memory: StepMemory = { termRequested: false, startRequested: false, startRefused: null };
  const target = candidateTarget(candidate);
  let snap = start;
  let waitingSince: number | null = null;
  while (true) {
    const checkpoints = checkpointsOf(snap);
    const stage = stageOf(checkpoints, candidate.actionIndex);
    // at a stage whose every row crosses without waiting, the observation is followed by a
    // transition (or a blocker): the plan file and the project are checked again beside it
    // instead of after the decision — they depend on no provider, and the check still precedes
    // the transition. At a stage with a waiting row, only a decision that crosses checks them
    // (a wait never does).
    const early = ALWAYS_CROSSING.has(stage) ? ctx.reverify(snap) : null;
    early?.catch(() => {});
    const obs = await observeRunner({ ...ctx, clock }, target, { status: statusReadsAt(stage) });
    const step = decide({
      stage,
      checkpoints,
      action,
      candidate,
      obs,
      memory,
      resuming: options.resuming,
      decisions: decisionsOf(snap),
    });
    if (step.kind !== "wait") waitingSince = null;
    if (crosses(step)) {
      // spec: the plan and project checks are repeated before driver transitions; a changed
      // file stops the drive before the next write or provider action (restore it, then resume)
      const stale = await (early ?? ctx.reverify(snap));
      if (stale.length > 0) return { kind: "blocked", snapshot: snap, blockers: stale, stage };
    }
    switch (step.kind) {
      case "complete":
        return { kind: "completed", snapshot: snap, observation: obs };
      case "blocked":
        return { kind: "blocked", snapshot: snap, blockers: step.blockers, stage };
      case "wait": {
        waitingSince ??= clock.now();
        // decide() gives a wait only for a row that declares one
        const bound = boundOf(ctx, step.row.wait ?? "ready");
        const left = bound - (clock.now() - waitingSince);
        if (left < 0) {
          // no force-kill on timeout: leave everything as it is
          return { kind: "timeout", snapshot: snap, reason: step.reason, stage };
        }
        const old = obs.containers.find((c) => c.id === candidate.evidence.old_container_id);
        const cand = obs.containers.find((c) => isCandidateOf(c, candidate));
        const wake = wakeOf(step.row.guard, {
          obs,
          old: old ?? null,
          cand: cand ?? null,
          generation: candidate.generation,
        });
        events.emit({
          kind: "wait",
          waited_ms: clock.now() - waitingSince,
          bound_ms: bound,
          message: step.reason,
        });
        const began = clock.now();
        if (wake) await events.wait(awaitWake(ctx, clock, wake, Math.min(left, WAKE_SLICE_MS)));
        // a wake-up that came at once (a line already there) must not spin the observations
        const pollMs = ctx.pollMs ?? 100;
        const spent = clock.now() - began;
        if (spent < pollMs) await events.sleep(pollMs - spent);
        continue;
      }
      case "record": {
        snap = await atSite(step.row.site, () => ctx.store.recordCheckpoint(snap, step.checkpoint));
        ctx.acknowledged?.(step.checkpoint);
        // the boundary is durable: a cancelled run stops here
        events.boundary({
          kind: "checkpoint",
          checkpoint: step.checkpoint.name,
          boundary: step.checkpoint.name,
          message: describeCheckpoint(step.checkpoint),
        });
        continue;
      }
      default: {
        let detail: string;
        try {
          detail = await providerMutation(ctx, null, () => act(ctx, candidate, step));
        } catch (error) {
          const refusal = step.kind === "start" ? daemonRefusal(error) : null;
          if (refusal === null || step.kind !== "start") throw error;
          // the daemon answered the start with an error: a fresh observation decides. The
          // candidate not running and not started since the observation before the call (same
          // StartedAt): the start did not happen, and the start's guard gives a precise blocker.
          // Anything else (it runs, or it started and stopped) stays an unknown outcome.
          const before = obs.containers.find((c) => c.id === step.containerId);
          const after = (await observeRunner({ ...ctx, clock }, target, {
            status: statusReadsAt(stage),
          })).containers.find((c) => c.id === step.containerId);
          if (!before || !after || after.running || after.startedAt !== before.startedAt) {
            throw error;
          }
          memory.startRequested = true;
          memory.startRefused = refusal;
          events.emit({
            kind: "action",
            action: step.kind,
            message: `the Docker daemon refused to start ${
              step.containerId.slice(0, 12)
            }: ${refusal}`,
          });
          continue;
        }
        if (step.kind === "term") memory.termRequested = true;
        if (step.kind === "start") memory.startRequested = true;
        events.emit({ kind: "action", action: step.kind, message: detail });
        // TERM and start are followed by a wait the row bounds: block on the change they
        // cause before observing again (an observation before it could only say "wait")
        const wake = afterAction(step);
        if (wake && step.row.wait) {
          waitingSince = clock.now();
          await events.wait(
            awaitWake(ctx, clock, wake, Math.min(boundOf(ctx, step.row.wait), WAKE_SLICE_MS)),
          );
        }
        continue;
      }
    }
  }
}
