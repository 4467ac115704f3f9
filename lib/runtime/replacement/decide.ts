/**
 * The transition function of a replacement: a lookup in the boundary table
 * (`lib/protocol/replacement.ts`). From the last durable stage and a fresh observation,
 * {@link decide} first checks the invariants of every stage (provider identities, volume,
 * container inventory, progress), then asks the guards of the stage's rows, in table order,
 * which row the observation is in; that row's guard authorizes its one step, a wait, or
 * blockers. Every blocker a guard gives must be declared by its row.
 *
 * @example
 * ```ts
 * import { decide } from "./decide.ts";
 * // const step = decide({ stage: "old_closed", checkpoints, action, candidate, obs,
 * //   memory: { termRequested: false, startRequested: false }, resuming: false });
 * // step.kind === "remove" && step.row.site.name === "docker.remove_old"
 * ```
 * @module
 */
import type { Checkpoint, OperatorDecision, RunnerAction } from "../../state/journal.ts";
import {
  EVERY_STAGE_BLOCKERS,
  type ReplacementRow,
  rowsAt,
  type Stage,
} from "../../protocol/replacement.ts";
import type { Blocker } from "../../validation/blocker.ts";
import type { RunnerObservation } from "../../validation/observation.ts";
import { verifyReviewedRuntime } from "../../validation/reviewed_runtime.ts";
import type { CandidateExpectation } from "./candidate.ts";
import { GUARDS, type StepMemory, type Verdict } from "./guards.ts";

/** The next step the evidence authorizes (at most one), with the row that authorized it. */
export type Step =
  | { kind: "record"; row: ReplacementRow; checkpoint: Checkpoint }
  | { kind: "term" | "remove" | "start"; row: ReplacementRow; containerId: string }
  | { kind: "create"; row: ReplacementRow }
  | { kind: "complete"; row: ReplacementRow }
  | { kind: "wait"; row: ReplacementRow; reason: string }
  /** `row` is null when an invariant of every stage failed. */
  | { kind: "blocked"; row: ReplacementRow | null; blockers: Blocker[] };

/** Input of {@link decide}. */
export interface DecideInput {
  stage: Stage;
  checkpoints: Checkpoint[];
  action: RunnerAction;
  candidate: CandidateExpectation;
  obs: RunnerObservation;
  /** In-memory facts of this invocation (never trusted across processes). */
  memory: StepMemory;
  /** True under an explicit `state resume` (a started-then-closed candidate may restart). */
  resuming: boolean;
  /** The operator's recorded decisions of this operation (default none). */
  decisions?: OperatorDecision[];
}

/**
 * The transition function: the one step the table's row authorizes for this observation, a
 * wait, or the blockers that forbid any step.
 *
 * @example
 * ```ts
 * import { decide } from "./decide.ts";
 * // decide(input).kind → "record" | "term" | "remove" | "create" | "start" | "complete" | ...
 * ```
 */
export function decide(input: DecideInput): Step {
  const rt = verifyReviewedRuntime(
    input.obs,
    input.candidate.evidence,
    input.candidate,
    input.action.model,
  );
  if (rt.blockers.length > 0) return { kind: "blocked", row: null, blockers: rt.blockers };
  const view = { ...input, decisions: input.decisions ?? [], old: rt.old, cand: rt.cand };
  for (const row of rowsAt(input.stage)) {
    const verdict = GUARDS[row.guard](view);
    if (verdict.kind !== "skip") return stepOf(row, verdict, input);
  }
  throw new Error(`the replacement table has no row for stage ${input.stage} and this observation`);
}

function stepOf(
  row: ReplacementRow,
  v: Exclude<Verdict, { kind: "skip" }>,
  input: DecideInput,
): Step {
  const broken = (what: string) => new Error(`row ${row.id}: guard ${row.guard} ${what}`);
  switch (v.kind) {
    case "wait":
      if (!row.wait) throw broken("waits, but the row declares no bounded wait");
      return { kind: "wait", row, reason: v.reason };
    case "blocked": {
      const declared = new Set<string>([...row.blockers, ...EVERY_STAGE_BLOCKERS]);
      const undeclared = v.blockers.filter((b) => !declared.has(b.code)).map((b) => b.code);
      if (undeclared.length > 0) throw broken(`gave undeclared blockers ${undeclared.join(", ")}`);
      return { kind: "blocked", row, blockers: v.blockers };
    }
    case "go":
      break;
  }
  switch (row.step) {
    case "record": {
      const fields = v.checkpoint;
      if (!fields || fields.name !== row.checkpoint) {
        throw broken(`authorized ${fields?.name ?? "no checkpoint"}, not ${row.checkpoint}`);
      }
      const checkpoint: Checkpoint = {
        ...fields,
        action_index: input.candidate.actionIndex,
        recorded_at: new Date(input.obs.observedAt).toISOString(),
      };
      return { kind: "record", row, checkpoint };
    }
    case "term":
    case "remove":
    case "start":
      if (!v.containerId) throw broken("authorized no container");
      return { kind: row.step, row, containerId: v.containerId };
    case "create":
    case "complete":
      return { kind: row.step, row };
  }
}

/**
 * The last durable stage of action `index` in a control's checkpoints.
 *
 * @example
 * ```ts
 * import { stageOf } from "./decide.ts";
 * console.log(stageOf([], 0)); // intent
 * ```
 */
export function stageOf(checkpoints: Checkpoint[], index: number): Stage {
  const mine = checkpoints.filter((c) => c.action_index === index);
  return mine.length === 0 ? "intent" : mine[mine.length - 1].name;
}

/**
 * One line for a step (the runner-status report and progress output).
 *
 * @example
 * ```ts
 * import { describeStep } from "./decide.ts";
 * // describeStep(step) → "remove 0123456789ab (no force, volume kept)"
 * ```
 */
export function describeStep(s: Step): string {
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

/**
 * The table row as the operator reads it: "durable: requires …; next: …".
 *
 * @example
 * ```ts
 * import { describeRow } from "./decide.ts";
 * import { REPLACEMENT_TABLE } from "../../protocol/replacement.ts";
 * console.log(describeRow(REPLACEMENT_TABLE[0]));
 * ```
 */
export function describeRow(row: ReplacementRow): string {
  return `${row.spec.durable}: requires ${row.spec.requires}; next: ${row.spec.next}`;
}
