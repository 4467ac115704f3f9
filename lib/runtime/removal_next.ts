/**
 * The next step of a pending runner removal (`state runner-status`), read-only: the row of the
 * removal table (`lib/protocol/removal.ts`) that a fresh exact observation of each bound runner
 * says comes next — the same readings the removal's continuation decides by (`seen`,
 * `uncleanClose` in `removal.ts`): running, TERM; stopped with clean-close evidence and its
 * group empty, remove; stopped otherwise, blocked with the way back; absent, the next runner;
 * all absent, the commit.
 *
 * @example
 * ```ts
 * import { removalNext } from "./removal_next.ts";
 * // const next = await removalNext(ctx, plan, snap);
 * ```
 * @module
 */
import type { Plan } from "../plan/plan.ts";
import { removalRow } from "../protocol/removal.ts";
import { commitOfOperation } from "../state/history.ts";
import type { StateSnapshot } from "../state/store.ts";
import { blockedAt, nextAt, type NextStep } from "./next_step.ts";
import { observeRunner } from "./observer.ts";
import {
  removalActions,
  type RemovalContext,
  seen,
  targetOfRemoval,
  uncleanClose,
} from "./removal.ts";

/**
 * The next row of the pending removal in `snap` (see the module documentation).
 *
 * @example
 * ```ts
 * import { removalNext } from "./removal_next.ts";
 * // (await removalNext(ctx, plan, snap)).step → "term_runner" | "await_closed" | … | "blocked"
 * ```
 */
export async function removalNext(
  ctx: RemovalContext,
  plan: Plan,
  snap: StateSnapshot,
): Promise<NextStep> {
  const operationId = snap.control!.opened.operation_id;
  const committed = commitOfOperation(snap.history.events, operationId);
  if (committed && snap.ownership?.checksum === committed.state_checksum) {
    return nextAt(
      removalRow("commit"),
      "the commit is recorded; only clearing the operation remains",
    );
  }
  for (const a of removalActions(plan)) {
    const obs = await observeRunner(ctx, targetOfRemoval(a));
    const s = seen(a, obs);
    if (s.kind === "changed") return blockedAt(removalRow("term_runner"), [s.blocker]);
    if (s.kind === "absent") continue;
    const c = s.container;
    if (c.running) {
      return nextAt(
        removalRow("term_runner"),
        `model ${a.model}: send TERM to ${c.name} (if not sent yet), then wait for its clean close`,
      );
    }
    const unclean = uncleanClose(a, c, operationId);
    if (unclean.length > 0) return blockedAt(removalRow("await_closed"), unclean);
    const g = obs.kafka.group;
    if (g.members.length > 0 || !["Empty", "Dead"].includes(g.state)) {
      return nextAt(
        removalRow("await_closed"),
        `model ${a.model}: ${c.name} closed cleanly (exit ${c.exitCode}); wait until group ${a.application_id} has no members (${g.state}, ${g.members.length} members)`,
      );
    }
    return nextAt(
      removalRow("remove_container"),
      `model ${a.model}: ${c.name} closed cleanly (exit ${c.exitCode}); remove that container (never its volume)`,
    );
  }
  return nextAt(
    removalRow("commit"),
    "every bound container is absent; commit ownership without the removed runners",
  );
}
