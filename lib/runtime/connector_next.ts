/**
 * The transition function of a connector change: a walk of the connector table
 * (`lib/protocol/connector.ts`) in its order. From fresh readings (`connector_reading.ts`) each
 * row's guard (keyed by its step) says whether the row is already behind (skip), is the one step
 * to take, or is blocked; the rows of a connector (`per: "connector"`) are asked for each
 * connector action in plan order — only the row of the action's own type applies to it — before
 * the commit. {@link decideConnectors} is what the continuation (`connectors.ts`, through
 * `journey_driver.ts`) runs and {@link connectorNext} is what `state runner-status` reports: one
 * function, so the report names the row the continuation takes. The order lives only in the
 * table: a guard knows its own row's condition, never which row comes next.
 *
 * One decision belongs to the run that recorded the intent only: a connector whose fresh read
 * refuses its row there (blocked, or already in the desired state although this run never
 * touched it) ends the operation with what was done before it (`refuse`: the commit row's
 * write, then the refusal). A continuation cannot tell whether a lost response stands behind
 * such a read, so there the same verdict blocks and the operation stays pending.
 *
 * @example
 * ```ts
 * import { decideConnectors } from "./connector_next.ts";
 * // const d = decideConnectors(await readConnectors(ctx, plan, snap, { continuing: true }));
 * // d.kind → "create_connector" | … | "commit" | "refuse" | "blocked"
 * ```
 * @module
 */
import type { Plan } from "../plan/plan.ts";
import type { ConnectorAction } from "../plan/connectors.ts";
import {
  CONNECTOR_TABLE,
  type ConnectorRow,
  type ConnectorStep,
  UNOWNED_CONNECTOR_WAYS_OUT,
} from "../protocol/connector.ts";
import type { StateSnapshot } from "../state/store.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";
import type { BlockedDecision } from "./journey_driver.ts";
import { blockedAt, nextAt, type NextStep } from "./next_step.ts";
import { walkTable } from "./table_walk.ts";
import {
  type ActionReading,
  type ConnectorJourneyContext,
  type ConnectorReadings,
  readConnectors,
} from "./connector_reading.ts";

/** The step of the table row each action type is. */
const STEP_OF: { readonly [T in ConnectorAction["type"]]: ConnectorStep } = {
  create_connector: "create_connector",
  update_connector: "update_connector",
  remove_connector: "delete_connector",
  release_connector: "release_connector",
};

/** A step of a connector action's row. */
export type ActionStep =
  | "create_connector"
  | "update_connector"
  | "delete_connector"
  | "release_connector";

/** A step to take: the row that authorized it, and what it is about. */
export type ConnectorGo =
  | { kind: ActionStep; row: ConnectorRow; action: ConnectorAction; detail: string }
  | {
    kind: "commit";
    row: ConnectorRow;
    /** The commit is recorded already: only the operation's clear remains. */
    recorded: boolean;
    detail: string;
  }
  | {
    /** End the operation with what was done (the commit row's write), then give the refusal. */
    kind: "refuse";
    /** The connector's row whose guard refused it. */
    row: ConnectorRow;
    blockers: Blocker[];
    detail: string;
  };

/** The blockers a row gave (`row` null: none). */
export interface ConnectorBlocked extends BlockedDecision {
  row: ConnectorRow | null;
}

/** What {@link decideConnectors} decides (no row before the commit waits). */
export type ConnectorDecision = ConnectorGo | ConnectorBlocked;

type Verdict =
  | { kind: "skip" }
  | { kind: "go"; detail: string }
  | { kind: "blocked"; blockers: Blocker[] };

interface View {
  readings: ConnectorReadings;
  /** The action the row is asked about (null for a row of the operation). */
  action: ActionReading | null;
}

const SKIP: Verdict = { kind: "skip" };

/** The action a connector row is asked about. */
function actionOf(v: View): ActionReading {
  if (!v.action) throw new Error("a connector row was asked without a connector action");
  return v.action;
}

/**
 * A connector row's condition: it applies to actions of its own type only; a read that shows
 * the action done is behind in a continuation (a lost response) and a look-alike in the run
 * that recorded the intent (it never made that change).
 */
function actionRow(step: ActionStep) {
  return (v: View): Verdict => {
    const { action: a, position } = actionOf(v);
    if (STEP_OF[a.type] !== step) return SKIP;
    switch (position.kind) {
      case "before":
        return { kind: "go", detail: `connector ${a.name} (cluster ${a.cluster})` };
      case "blocked":
        return { kind: "blocked", blockers: [position.blocker] };
      case "after":
        if (v.readings.continuing) return SKIP;
        return {
          kind: "blocked",
          blockers: [blocker(
            "BLOCKED_UNOWNED_CONNECTOR",
            a.type === "create_connector" || a.type === "update_connector"
              ? `connector ${a.name} changed between the check and the ${a.type}: someone else made it what this operation would have; this project did not, so it does not own it; ${UNOWNED_CONNECTOR_WAYS_OUT}`
              : `connector ${a.name} changed between the check and the ${a.type}`,
            { evidence: { connector: a.name } },
          )],
        };
    }
  };
}

/** Each row's condition on fresh readings (its place in the order is the table's). */
const GUARDS: { readonly [S in ConnectorStep]: (v: View) => Verdict } = {
  // continued, the intent is recorded: the ownership it started from must still be the state
  intent: ({ readings }) => {
    const c = readings.changedOwnership;
    if (!c) return SKIP;
    return {
      kind: "blocked",
      blockers: [blocker(
        "BLOCKED_STATE_CHANGED",
        `ownership changed since connector operation ${readings.operationId} began (${c.recorded} → ${c.now})`,
      )],
    };
  },
  create_connector: actionRow("create_connector"),
  update_connector: actionRow("update_connector"),
  delete_connector: actionRow("delete_connector"),
  release_connector: actionRow("release_connector"),
  commit: ({ readings }) => ({
    kind: "go",
    detail: readings.committed
      ? "the commit is recorded; only clearing the operation remains"
      : "every connector change is in place; commit the connector records to ownership",
  }),
  // the report after the commit: the commit step ends with it (the commit always decides)
  await_running: () => SKIP,
};

/** The decision a row's verdict is; a verdict its row does not declare is a programming error. */
function decisionOf(
  row: ConnectorRow,
  v: Exclude<Verdict, { kind: "skip" }>,
  view: View,
): ConnectorDecision {
  const broken = (what: string) => new Error(`connector row ${row.step}: its guard ${what}`);
  if (v.kind === "blocked") {
    const undeclared = v.blockers.filter((b) => !row.blockers.includes(b.code));
    if (undeclared.length > 0) {
      throw broken(`gave undeclared blockers ${undeclared.map((b) => b.code).join(", ")}`);
    }
    // the run that recorded the intent ends the operation with what was done before it; a
    // continuation cannot tell a lost response from a change by someone else: it stays pending
    if (view.action && !view.readings.continuing) {
      return {
        kind: "refuse",
        row,
        blockers: v.blockers,
        detail: "commit what was done before this connector, then report why it was refused",
      };
    }
    return { kind: "blocked", row, blockers: v.blockers };
  }
  switch (row.step) {
    case "create_connector":
    case "update_connector":
    case "delete_connector":
    case "release_connector":
      // a Connect mutation crosses its row's site; the release makes no Connect call
      if ((row.site === null) !== (row.step === "release_connector")) {
        throw broken("authorized a step whose row's site does not match it");
      }
      return { kind: row.step, row, action: actionOf(view).action, detail: v.detail };
    case "commit":
      return { kind: "commit", row, recorded: view.readings.committed, detail: v.detail };
    default:
      throw broken("authorized a step the continuation never takes");
  }
}

/**
 * The one step the connector table authorizes for these readings, or the blockers that forbid
 * any step (see the module documentation). `table` is a table of the connector journey's rows.
 *
 * @example
 * ```ts
 * import { decideConnectors } from "./connector_next.ts";
 * // decideConnectors(readings).kind → "create_connector" while the first create is still to do
 * ```
 */
export function decideConnectors(
  readings: ConnectorReadings,
  table: readonly ConnectorRow[] = CONNECTOR_TABLE,
): ConnectorDecision {
  return walkTable(
    table,
    // a run of connector rows: each action through all of them, in plan order
    (per): readonly (ActionReading | null)[] => (per === "operation" ? [null] : readings.actions),
    (row, action) => {
      const view = { readings, action };
      const v = GUARDS[row.step](view);
      return v.kind === "skip" ? null : decisionOf(row, v, view);
    },
  );
}

/**
 * A decision as `state runner-status` reports it (it authorizes nothing).
 *
 * @example
 * ```ts
 * import { reportedConnector } from "./connector_next.ts";
 * // reportedConnector(decideConnectors(readings)).step → "create_connector" | … | "blocked"
 * ```
 */
export function reportedConnector(d: ConnectorDecision): NextStep {
  return d.kind === "blocked" || d.kind === "refuse"
    ? blockedAt(d.row, d.blockers)
    : nextAt(d.row, d.detail);
}

/**
 * The next row of the pending connector operation in `snap`: the continuation's own decision on
 * fresh reads (a pending operation is always continued, never in the run that recorded it).
 *
 * @example
 * ```ts
 * import { connectorNext } from "./connector_next.ts";
 * // (await connectorNext(ctx, plan, snap)).step → "create_connector" | … | "commit" | "blocked"
 * ```
 */
export async function connectorNext(
  ctx: ConnectorJourneyContext,
  plan: Plan,
  snap: StateSnapshot,
): Promise<NextStep> {
  return reportedConnector(
    decideConnectors(await readConnectors(ctx, plan, snap, { continuing: true })),
  );
}
