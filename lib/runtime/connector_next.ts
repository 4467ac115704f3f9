/**
 * The next step of a pending connector change (`state runner-status`), read-only: the row of the
 * connector table (`lib/protocol/connector.ts`) that a fresh exact observation of each named
 * connector says comes next, by the same reading the continuation decides with
 * (`actionPosition` in `connectors.ts`): the first action still to do, or blocked; all done, the
 * commit.
 *
 * @example
 * ```ts
 * import { connectorNext } from "./connector_next.ts";
 * // const next = await connectorNext(ctx, plan, snap);
 * ```
 * @module
 */
import type { Plan } from "../plan/plan.ts";
import type { ConnectorAction } from "../plan/connectors.ts";
import { connectorRow, type ConnectorStep } from "../protocol/connector.ts";
import { commitOfOperation } from "../state/history.ts";
import type { StateSnapshot } from "../state/store.ts";
import { blockedAt, nextAt, type NextStep } from "./next_step.ts";
import {
  actionPosition,
  connectorActions,
  type ConnectorJourneyContext,
  observeActions,
} from "./connectors.ts";

/** The table row an action's step is. */
const STEP_OF: Record<ConnectorAction["type"], ConnectorStep> = {
  create_connector: "create_connector",
  update_connector: "update_connector",
  remove_connector: "delete_connector",
  release_connector: "release_connector",
};

/**
 * The next row of the pending connector operation in `snap` (see the module documentation).
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
  const operationId = snap.control!.opened.operation_id;
  const committed = commitOfOperation(snap.history.events, operationId);
  if (committed && snap.ownership?.checksum === committed.state_checksum) {
    return nextAt(
      connectorRow("commit"),
      "the commit is recorded; only clearing the operation remains",
    );
  }
  const actions = connectorActions(plan);
  const observed = await observeActions(ctx, plan, actions, snap.ownership?.document ?? null);
  for (const a of actions) {
    const row = connectorRow(STEP_OF[a.type]);
    const p = actionPosition(a, observed.get(a.name)!);
    if (p.kind === "blocked") return blockedAt(row, [p.blocker]);
    if (p.kind === "before") return nextAt(row, `connector ${a.name} (cluster ${a.cluster})`);
  }
  return nextAt(
    connectorRow("commit"),
    "every connector change is in place; commit the connector records to ownership",
  );
}
