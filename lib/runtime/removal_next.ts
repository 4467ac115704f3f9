/**
 * The transition function of a runner removal: a walk of the removal table
 * (`lib/protocol/removal.ts`) in its order. From fresh readings (`removal_reading.ts`) each row's
 * guard (keyed by its step) says whether the row is already behind (skip), is the one step to
 * take, is a bounded wait, or is blocked; the rows of a runner (`per: "runner"`) are asked for
 * each bound runner in plan order before the rows after them. {@link decideRemoval} is what the
 * continuation (`removal.ts`, through `journey_driver.ts`) runs and {@link removalNext} is what
 * `state runner-status` reports: one function, so the report names the row the continuation
 * takes. The order lives only in the table: a guard knows its own row's condition, never which
 * row comes next.
 *
 * @example
 * ```ts
 * import { decideRemoval } from "./removal_next.ts";
 * // const d = decideRemoval(await readRemoval(ctx, removalActions(plan), snap));
 * // d.kind → "term_runner" | "remove_container" | "commit" | "wait" | "blocked"
 * ```
 * @module
 */
import type { Plan } from "../plan/plan.ts";
import { REMOVAL_TABLE, type RemovalRow, type RemovalStep } from "../protocol/removal.ts";
import type { StateSnapshot } from "../state/store.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";
import type { ContainerEvidence } from "../validation/observation.ts";
import type { BlockedDecision, WaitDecision } from "./journey_driver.ts";
import { blockedAt, nextAt, type NextStep } from "./next_step.ts";
import { walkTable } from "./table_walk.ts";
import {
  boundKey,
  boundName,
  readRemoval,
  removalActions,
  type RemovalReadings,
  type RunnerReading,
  uncleanClose,
} from "./removal_reading.ts";

/** What this run did that a fresh read cannot show yet (never trusted across processes). */
export interface RemovalMemory {
  /** The containers this run sent TERM. */
  readonly termSent: ReadonlySet<string>;
}

/** A step to take: the row that authorized it, and what it is about. */
export type RemovalGo =
  | {
    kind: "term_runner" | "remove_container";
    row: RemovalRow;
    runner: RunnerReading;
    container: ContainerEvidence;
    detail: string;
  }
  | {
    kind: "commit";
    row: RemovalRow;
    /** The commit is recorded already: only the operation's clear remains. */
    recorded: boolean;
    detail: string;
  };

/** A bounded wait on the row that waits: the runner's exit, or its group emptied. */
export interface RemovalWait extends WaitDecision {
  row: RemovalRow;
  runner: RunnerReading;
  container: ContainerEvidence;
  on: "exit" | "group";
  detail: string;
}

/** The blockers a row gave (`row` null: none). */
export interface RemovalBlocked extends BlockedDecision {
  row: RemovalRow | null;
}

/** What {@link decideRemoval} decides. */
export type RemovalDecision = RemovalGo | RemovalWait | RemovalBlocked;

type Verdict =
  | { kind: "skip" }
  | { kind: "go"; detail: string; container?: ContainerEvidence }
  | {
    kind: "wait";
    on: "exit" | "group";
    container: ContainerEvidence;
    detail: string;
    timedOut: (boundMs: number) => string;
  }
  | { kind: "blocked"; blockers: Blocker[] };

interface View {
  readings: RemovalReadings;
  /** The runner the row is asked about (null for a row of the operation). */
  runner: RunnerReading | null;
  memory: RemovalMemory;
}

const SKIP: Verdict = { kind: "skip" };

/** The runner a per-runner row is asked about. */
function runnerOf(v: View): RunnerReading {
  if (!v.runner) throw new Error("a runner row was asked without a runner");
  return v.runner;
}

function groupBusy(r: RunnerReading): boolean {
  // a set's instances are closed in turn: the group empties once its last one has closed, so
  // only the last instance waits for it (the others' members leave as each closes)
  const set = r.action.set;
  if (set && set.instance !== set.of - 1) return false;
  const g = r.obs.kafka.group;
  return g.members.length > 0 || !["Empty", "Dead"].includes(g.state);
}

/** Each row's condition on fresh readings (its place in the order is the table's). */
const GUARDS: { readonly [S in RemovalStep]: (v: View) => Verdict } = {
  // continued, the intent is recorded: the ownership it released from must still be the state
  intent: ({ readings }) => {
    const c = readings.changedOwnership;
    if (!c) return SKIP;
    return {
      kind: "blocked",
      blockers: [blocker(
        "BLOCKED_STATE_CHANGED",
        `ownership changed while runner removal ${readings.operationId} was pending (${c.recorded} → ${c.now})`,
      )],
    };
  },
  term_runner: (v) => {
    const { action: a, seen } = runnerOf(v);
    if (seen.kind === "changed") return { kind: "blocked", blockers: [seen.blocker] };
    if (seen.kind === "absent") return SKIP;
    const c = seen.container;
    if (!c.running || v.memory.termSent.has(c.id)) return SKIP;
    return {
      kind: "go",
      container: c,
      detail: `${
        boundName(a)
      }: send TERM to ${c.name} (if not sent yet), then wait for its clean close`,
    };
  },
  await_closed: (v) => {
    const r = runnerOf(v);
    const a = r.action;
    if (r.seen.kind !== "present") return SKIP;
    const c = r.seen.container;
    if (c.running) {
      return {
        kind: "wait",
        on: "exit",
        container: c,
        detail: `${boundName(a)}: ${c.name} was sent TERM; wait for it to stop and close cleanly`,
        timedOut: (bound) =>
          `runner ${c.name} did not stop within ${
            bound / 1000
          }s of TERM; it was left as it is. Run 'sluice apply --plan FILE' again to continue the removal`,
      };
    }
    const unclean = uncleanClose(a, c, v.readings.operationId);
    if (unclean.length > 0) return { kind: "blocked", blockers: unclean };
    if (groupBusy(r)) {
      const g = r.obs.kafka.group;
      return {
        kind: "wait",
        on: "group",
        container: c,
        detail: `${
          boundName(a)
        }: ${c.name} closed cleanly (exit ${c.exitCode}); wait until group ${a.application_id} has no members (${g.state}, ${g.members.length} members)`,
        timedOut: () =>
          `group ${a.application_id} still has ${g.members.length} members (${g.state}) after its runner stopped; run 'sluice apply --plan FILE' again to continue the removal`,
      };
    }
    return SKIP;
  },
  remove_container: (v) => {
    const r = runnerOf(v);
    if (r.seen.kind !== "present") return SKIP;
    const c = r.seen.container;
    return {
      kind: "go",
      container: c,
      detail: `${
        boundName(r.action)
      }: ${c.name} closed cleanly (exit ${c.exitCode}); remove that container (never its volume)`,
    };
  },
  commit: ({ readings }) => ({
    kind: "go",
    detail: readings.committed
      ? "the commit is recorded; only clearing the operation remains"
      : "every bound container is absent; commit ownership without the removed runners",
  }),
};

/** The decision a row's verdict is; a verdict its row does not declare is a programming error. */
function decisionOf(
  row: RemovalRow,
  v: Exclude<Verdict, { kind: "skip" }>,
  view: View,
): RemovalDecision {
  const broken = (what: string) => new Error(`removal row ${row.step}: its guard ${what}`);
  switch (v.kind) {
    case "blocked": {
      const undeclared = v.blockers.filter((b) => !row.blockers.includes(b.code));
      if (undeclared.length > 0) {
        throw broken(`gave undeclared blockers ${undeclared.map((b) => b.code).join(", ")}`);
      }
      return { kind: "blocked", row, blockers: v.blockers };
    }
    case "wait": {
      // a row that waits crosses no site (read-only)
      if (row.site !== null) throw broken("waits, but the row crosses a site");
      return {
        kind: "wait",
        subject: boundKey(runnerOf(view).action),
        row,
        runner: runnerOf(view),
        container: v.container,
        on: v.on,
        detail: v.detail,
        timedOut: v.timedOut,
      };
    }
    case "go":
      if (row.site === null) throw broken("authorized a step, but the row crosses no site");
      switch (row.step) {
        case "term_runner":
        case "remove_container":
          if (!v.container) throw broken("authorized no container");
          return {
            kind: row.step,
            row,
            runner: runnerOf(view),
            container: v.container,
            detail: v.detail,
          };
        case "commit":
          return { kind: "commit", row, recorded: view.readings.committed, detail: v.detail };
        default:
          throw broken("authorized a step the continuation never takes");
      }
  }
}

const NOTHING_DONE: RemovalMemory = { termSent: new Set() };

/**
 * The one step the removal table authorizes for these readings, a wait, or the blockers that
 * forbid any step (see the module documentation). `table` is a table of the removal's rows with
 * other sites or words (a journey that takes runners down the removal's way, such as destroy).
 *
 * @example
 * ```ts
 * import { decideRemoval } from "./removal_next.ts";
 * // decideRemoval(readings, { termSent: new Set([containerId]) }).kind → "wait" while it runs
 * ```
 */
export function decideRemoval(
  readings: RemovalReadings,
  memory: RemovalMemory = NOTHING_DONE,
  table: readonly RemovalRow[] = REMOVAL_TABLE,
): RemovalDecision {
  // each bound runner through a run of runner rows, in plan order
  return walkTable(
    table,
    (per) => (per === "operation" ? [null] : readings.runners),
    askRemoval(readings, memory),
  );
}

/**
 * What one removal row decides for one subject (a runner, or null for a row of the operation) on
 * these readings: null when the row is behind (skip). The question {@link decideRemoval} asks of
 * each row in its walk — and a journey whose table holds the removal's rows among its own (the
 * destroy's) asks of those rows in its walk.
 *
 * @example
 * ```ts
 * import { askRemoval } from "./removal_next.ts";
 * // walkTable(table, subjects, askRemoval(readings, { termSent })) → a removal decision
 * ```
 */
export function askRemoval(
  readings: RemovalReadings,
  memory: RemovalMemory = NOTHING_DONE,
): (row: RemovalRow, runner: RunnerReading | null) => RemovalDecision | null {
  return (row, runner) => {
    const view = { readings, runner, memory };
    const v = GUARDS[row.step](view);
    return v.kind !== "skip" ? decisionOf(row, v, view) : null;
  };
}

/**
 * A decision as `state runner-status` reports it (it authorizes nothing).
 *
 * @example
 * ```ts
 * import { reportedRemoval } from "./removal_next.ts";
 * // reportedRemoval(decideRemoval(readings)).step → "term_runner" | … | "blocked"
 * ```
 */
export function reportedRemoval(d: RemovalDecision): NextStep {
  return d.kind === "blocked" ? blockedAt(d.row, d.blockers) : nextAt(d.row, d.detail);
}

/**
 * The next row of the pending removal in `snap`: the continuation's own decision on fresh reads.
 *
 * @example
 * ```ts
 * import { removalNext } from "./removal_next.ts";
 * // (await removalNext(ctx, plan, snap)).step → "term_runner" | "await_closed" | … | "blocked"
 * ```
 */
export async function removalNext(
  ctx: Parameters<typeof readRemoval>[0],
  plan: Plan,
  snap: StateSnapshot,
): Promise<NextStep> {
  return reportedRemoval(decideRemoval(await readRemoval(ctx, removalActions(plan), snap)));
}
