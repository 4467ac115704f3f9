/**
 * The transition function of a destroy: one walk of the destroy table (`lib/protocol/destroy.ts`
 * `DESTROY_TABLE`) in its order — the intent, the connector row, the removal's runner rows (once
 * per bound runner, in plan order), the data rows, the commit. From readings gathered once per
 * turn ({@link readDestroy}) each row says whether it is behind (skip), is the one step to take,
 * is a bounded wait, or is blocked: the removal's rows by the removal's own guards
 * (`askRemoval`, `removal_next.ts`), the connector row by the connector journey's check of the
 * first connector left, each data row by the first resource of its kind left.
 * {@link decideDestroy} is what the destroy's run (`destroy.ts`, through the removal entry and
 * `journey_driver.ts`) crosses and what `state runner-status` reports ({@link reportedDestroy}):
 * one function, so the report names the row the continuation takes, and the order lives only in
 * the table.
 *
 * @example
 * ```ts
 * import { decideDestroy, readDestroy } from "./destroy_next.ts";
 * // const d = decideDestroy(await readDestroy(ctx, plan, snap));
 * // d.kind → "delete_connector" | "term_runner" | … | "delete_topic" | "commit" | "wait" | "blocked"
 * ```
 * @module
 */
import type { Plan } from "../plan/plan.ts";
import type { DestroyAction, DestroyConnectorAction } from "../plan/removals.ts";
import {
  DESTROY_TABLE,
  type DestroyConnectorRow,
  type DestroyDataRow,
  type DestroyRow,
  isDestroyDataStep,
} from "../protocol/destroy.ts";
import type { RemovalRow } from "../protocol/removal.ts";
import type { StateSnapshot } from "../state/store.ts";
import type { Blocker } from "../validation/blocker.ts";
import { type DestroyConnectorContext, readDestroyConnectors } from "./destroy_connectors.ts";
import {
  type DestroyDataContext,
  type DestroyDataItem,
  type DestroyDataLeft,
  readDestroyData,
} from "./destroy_data.ts";
import type { BlockedDecision } from "./journey_driver.ts";
import { blockedAt, nextAt, type NextStep } from "./next_step.ts";
import {
  askRemoval,
  type RemovalGo,
  type RemovalMemory,
  type RemovalWait,
} from "./removal_next.ts";
import { readRemoval, type RemovalReadings, type RunnerReading } from "./removal_reading.ts";
import { walkTable } from "./table_walk.ts";
import type { Position } from "./connector_reading.ts";

/** One connector the plan binds, as a fresh exact read shows it. */
export interface ConnectorLeft {
  readonly action: DestroyConnectorAction;
  readonly position: Position;
  /** Still there, to delete (false: done — absent, or a release of one already gone). */
  readonly left: boolean;
}

/** What the destroy's decision reads (see the module documentation). */
export interface DestroyReadings {
  /** The removal's readings: the operation's commit and ownership, the bound runners. */
  readonly removal: RemovalReadings;
  /**
   * The connectors the plan binds, in plan order, read up to the first one not done (the decision
   * goes no further); none when the commit is recorded or ownership changed. Those this run
   * already took care of are not read again.
   */
  readonly connectors: ConnectorLeft[];
  /**
   * What is left of what the plan deletes (`--delete-data`), read once every connector is done
   * and every bound runner absent; null otherwise, or when the plan deletes nothing.
   */
  readonly data: DestroyDataLeft | null;
}

/** What this run did that a fresh read cannot show yet (never trusted across processes). */
export interface DestroyDone {
  /** The models whose runners this run took down (not read again). */
  readonly runners: ReadonlySet<string>;
  /** The connectors this run deleted or found done (not read again). */
  readonly connectors: ReadonlySet<string>;
  /** The resources this run deleted (`dataKey`; not read again). */
  readonly data: ReadonlySet<string>;
}

const NOTHING_DONE: DestroyDone = {
  runners: new Set(),
  connectors: new Set(),
  data: new Set(),
};

/** What reading a destroy takes: the removal's ports, Connect's, and the store's scope. */
export type DestroyReadContext =
  & Parameters<typeof readRemoval>[0]
  & Omit<DestroyConnectorContext, "store">
  & Pick<DestroyDataContext, "docker" | "kafka">;

/** The plan's destroy action, or null when it carries none. */
function destroyOf(plan: Plan): DestroyAction | null {
  return plan.actions.find((a): a is DestroyAction => a.type === "destroy") ?? null;
}

/**
 * Read a pending destroy fresh, in table order and only as far as its decision goes (see
 * {@link DestroyReadings}); `done` names what this run already took care of.
 *
 * @example
 * ```ts
 * import { readDestroy } from "./destroy_next.ts";
 * // const readings = await readDestroy(ctx, plan, snap);
 * ```
 */
export async function readDestroy(
  ctx: DestroyReadContext,
  plan: Plan,
  snap: StateSnapshot,
  done: DestroyDone = NOTHING_DONE,
): Promise<DestroyReadings> {
  const action = destroyOf(plan);
  // the operation's own readings first (no runner read): its commit, its ownership
  const operation = await readRemoval(ctx, [], snap);
  if (!action || operation.committed || operation.changedOwnership) {
    return { removal: operation, connectors: [], data: null };
  }
  const connectors: ConnectorLeft[] = [];
  for (const a of action.connectors ?? []) {
    if (done.connectors.has(a.name)) continue;
    const [c] = await readDestroyConnectors(ctx, plan, [a], snap.ownership?.document ?? null);
    connectors.push(c);
    if (c.left || c.position.kind === "blocked") {
      return { removal: operation, connectors, data: null };
    }
  }
  const removal = await readRemoval(ctx, action.runners, snap, done.runners);
  if (removal.runners.some((r) => r.seen.kind !== "absent") || !action.deletes) {
    return { removal, connectors, data: null };
  }
  return { removal, connectors, data: await readDestroyData(ctx, action.deletes, done.data) };
}

/** A step of the destroy's own rows: a connector to delete, or one resource a data row deletes. */
export type DestroyGo =
  | {
    kind: "delete_connector";
    row: DestroyConnectorRow;
    action: DestroyConnectorAction;
    detail: string;
  }
  | { kind: DestroyDataItem["step"]; row: DestroyDataRow; item: DestroyDataItem; detail: string };

/** The blockers a row gave (`row` null: none). */
export interface DestroyBlocked extends BlockedDecision {
  row: DestroyRow | null;
}

/** What {@link decideDestroy} decides: a step of the removal's rows or of the destroy's own, a wait, or blockers. */
export type DestroyDecision = RemovalGo | RemovalWait | DestroyGo | DestroyBlocked;

/** Whether a row of the destroy table is one of the removal's (decided by the removal's guards). */
function isRemovalRow(row: DestroyRow): row is DestroyRow & RemovalRow {
  return row.step !== "delete_connector" && !isDestroyDataStep(row.step);
}

/** The connector row: the first connector not done decides (blocked, or deleted next). */
function askConnectors(
  row: DestroyConnectorRow,
  readings: DestroyReadings,
): DestroyDecision | null {
  const c = readings.connectors.find((x) => x.left || x.position.kind === "blocked");
  if (!c) return null;
  if (c.position.kind === "blocked") return blocked(row, [c.position.blocker]);
  const a = c.action;
  return {
    kind: "delete_connector",
    row,
    action: a,
    detail: `delete connector ${a.name} (cluster ${a.cluster})`,
  };
}

/** A data row: the first resource of its kind left is deleted next. */
function askData(row: DestroyDataRow, readings: DestroyReadings): DestroyDecision | null {
  const item = readings.data?.[row.step][0];
  if (!item) return null;
  const what = item.step === "delete_group"
    ? "consumer group"
    : item.step === "remove_volume"
    ? "state volume"
    : "topic";
  return { kind: item.step, row, item, detail: `delete ${what} ${item.name}` };
}

/** Blockers a row declares; an undeclared code is a programming error. */
function blocked(row: DestroyRow, blockers: Blocker[]): DestroyBlocked {
  const undeclared = blockers.filter((b) => !row.blockers.includes(b.code));
  if (undeclared.length > 0) {
    throw new Error(
      `destroy row ${row.step}: gave undeclared blockers ${
        undeclared.map((b) => b.code).join(", ")
      }`,
    );
  }
  return { kind: "blocked", row, blockers };
}

/**
 * The one step the destroy table authorizes for these readings, a wait, or the blockers that
 * forbid any step (see the module documentation). `memory` is what this run did that a fresh read
 * cannot show yet (the TERMs it sent).
 *
 * @example
 * ```ts
 * import { decideDestroy } from "./destroy_next.ts";
 * // decideDestroy(readings, { termSent: new Set() }).kind → "delete_connector" while one is left
 * ```
 */
export function decideDestroy(
  readings: DestroyReadings,
  memory?: RemovalMemory,
): DestroyDecision {
  const removal = askRemoval(readings.removal, memory);
  return walkTable<DestroyRow, RunnerReading | null, DestroyDecision>(
    DESTROY_TABLE,
    (per) => (per === "operation" ? [null] : readings.removal.runners),
    (row, runner) => {
      if (isRemovalRow(row)) return removal(row, runner);
      if (row.step === "delete_connector") {
        return askConnectors(row as DestroyConnectorRow, readings);
      }
      return askData(row as DestroyDataRow, readings);
    },
  );
}

/**
 * A decision as `state runner-status` reports it (it authorizes nothing).
 *
 * @example
 * ```ts
 * import { reportedDestroy } from "./destroy_next.ts";
 * // reportedDestroy(decideDestroy(readings)).step → "delete_connector" | … | "blocked"
 * ```
 */
export function reportedDestroy(d: DestroyDecision): NextStep {
  return d.kind === "blocked" ? blockedAt(d.row, d.blockers) : nextAt(d.row, d.detail);
}
