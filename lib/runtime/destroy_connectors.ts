/**
 * The connector row of a destroy (`lib/protocol/destroy.ts` {@link DESTROY_CONNECTOR_TABLE}):
 * what it reads and the one deletion it crosses. Right after the intent and before any runner is
 * touched, each owned connector the plan binds is deleted — only while an exact read shows it
 * still the one sluice created (the connector journey's own check, {@link actionPosition}: the
 * owned cluster identity, the owned fingerprint), each deletion crossing the row's fault site
 * under the deployment lock. Absent is done (idempotent: a lost response, or a release of a
 * connector already gone), so a process killed between a deletion and the next boundary
 * continues from a fresh read; anything else blocks with the connector journey's code and the
 * operation stays pending. The destroy's decision (`destroy_next.ts`) says which connector is
 * next.
 *
 * @example
 * ```ts
 * import { readDestroyConnectors } from "./destroy_connectors.ts";
 * // const [c] = await readDestroyConnectors(ctx, plan, [action], snap.ownership?.document ?? null);
 * // c.left → still to delete; c.position.kind === "blocked" → its blocker
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { Plan } from "../plan/plan.ts";
import type { DestroyConnectorAction } from "../plan/removals.ts";
import { destroyConnectorRow } from "../protocol/destroy.ts";
import type { ConnectPort } from "../providers/connect/port.ts";
import type { OwnershipDocument } from "../state/ownership.ts";
import { blockerError } from "../validation/blocker.ts";
import {
  actionPosition,
  type ConnectorJourneyContext,
  observeActions,
  type Position,
} from "./connector_reading.ts";
import { type LockHolder, providerMutation } from "./provider_mutation.ts";

/** What the connector row takes: the Connect ports, and the store whose lock each deletion verifies. */
export interface DestroyConnectorContext
  extends Partial<Pick<ConnectorJourneyContext, "connect" | "env" | "clock">> {
  store: LockHolder;
}

function portsOf(ctx: Omit<DestroyConnectorContext, "store">): (cluster: string) => ConnectPort {
  return ctx.connect ?? (() => {
    throw new SluiceError("ENV_CONNECT_UNREACHABLE", "no Kafka Connect port was given");
  });
}

/**
 * Where each connector the plan binds stands on a fresh exact read (in plan order): still to
 * delete (`before` of a removal), done (absent), or blocked. Read-only.
 *
 * @example
 * ```ts
 * import { readDestroyConnectors } from "./destroy_connectors.ts";
 * // (await readDestroyConnectors(ctx, plan, connectors, ownership)).every((x) => x.left === false)
 * ```
 */
export async function readDestroyConnectors(
  ctx: Omit<DestroyConnectorContext, "store">,
  plan: Plan,
  connectors: readonly DestroyConnectorAction[],
  ownership: OwnershipDocument | null,
): Promise<Array<{ action: DestroyConnectorAction; position: Position; left: boolean }>> {
  if (connectors.length === 0) return [];
  const seen = await observeActions(
    { connect: portsOf(ctx), env: ctx.env, clock: ctx.clock },
    plan,
    [...connectors],
    ownership,
  );
  return connectors.map((action) => {
    const position = actionPosition(action, seen.get(action.name)!);
    // a removal's `before` is a connector still there; a release's `before` is its absence
    const left = position.kind === "before" && action.type === "remove_connector";
    return { action, position, left };
  });
}

/**
 * Check, on fresh exact reads, that every connector the plan binds is still the one sluice
 * created (or already absent) before the destroy's intent: throws the connector journey's
 * blockers, writing nothing.
 *
 * @example
 * ```ts
 * import { verifyDestroyConnectors } from "./destroy_connectors.ts";
 * // await verifyDestroyConnectors(ctx, plan, action.connectors ?? [], ownership); // throws blockers
 * ```
 */
export async function verifyDestroyConnectors(
  ctx: DestroyConnectorContext,
  plan: Plan,
  connectors: readonly DestroyConnectorAction[],
  ownership: OwnershipDocument | null,
): Promise<void> {
  const read = await readDestroyConnectors(ctx, plan, connectors, ownership);
  const blocked = read.flatMap((r) => r.position.kind === "blocked" ? [r.position.blocker] : []);
  if (blocked.length > 0) throw blockerError(blocked);
}

/**
 * Cross the connector row for one connector the destroy's decision found still there: delete it
 * through its Connect port, crossing the row's site under the deployment lock. Its absence after
 * a lost response is done on the next read (idempotent).
 *
 * @example
 * ```ts
 * import { deleteDestroyConnector } from "./destroy_connectors.ts";
 * // await deleteDestroyConnector(ctx, step.action);
 * ```
 */
export async function deleteDestroyConnector(
  ctx: DestroyConnectorContext,
  action: DestroyConnectorAction,
): Promise<void> {
  await providerMutation(
    ctx.store,
    destroyConnectorRow().site,
    () => portsOf(ctx)(action.cluster).deleteConnector(action.name),
  );
}
