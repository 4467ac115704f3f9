/**
 * The next step of a pending create (`state runner-status`), read-only: the first row of the
 * create table (`lib/protocol/create.ts`) whose effect a fresh observation does not show — a
 * topic to create still absent; per runner its state volume, its group's initial positions, its
 * container, its start, its RUNNING report; all there, the commit. The continuation itself
 * (`create.ts`) observes again before each row and adopts only what carries this operation's
 * recorded identities, blocking on anything else (`BLOCKED_UNOWNED_RUNTIME`,
 * `BLOCKED_UNOWNED_TOPIC`): this report names the row, the continuation proves it.
 *
 * @example
 * ```ts
 * import { createNext } from "./create_next.ts";
 * // const next = await createNext(ctx, plan, snap);
 * ```
 * @module
 */
import type { Plan } from "../plan/plan.ts";
import { createRow } from "../protocol/create.ts";
import { commitOfOperation } from "../state/history.ts";
import type { StateSnapshot } from "../state/store.ts";
import { targetOfArtifact } from "../validation/observation.ts";
import type { RuntimeContext } from "./apply_context.ts";
import { nextAt, type NextStep } from "./next_step.ts";
import { observeRunner } from "./observer.ts";

/**
 * The next row of the pending create in `snap` (see the module documentation).
 *
 * @example
 * ```ts
 * import { createNext } from "./create_next.ts";
 * // (await createNext(ctx, plan, snap)).step → "create_topic" | "create_volume" | … | "commit"
 * ```
 */
export async function createNext(
  ctx: RuntimeContext,
  plan: Plan,
  snap: StateSnapshot,
): Promise<NextStep> {
  const operationId = snap.control!.opened.operation_id;
  const committed = commitOfOperation(snap.history.events, operationId);
  if (committed && snap.ownership?.checksum === committed.state_checksum) {
    return nextAt(
      createRow("commit"),
      "the commit is recorded; only clearing the operation remains",
    );
  }
  const topics = plan.actions.flatMap((a) => a.type === "create_topic" ? [a.topic] : []);
  if (topics.length > 0) {
    const seen = await ctx.kafka.describe(topics);
    const absent = topics.filter((t) => !seen.topics.has(t));
    if (absent.length > 0) {
      return nextAt(createRow("create_topic"), `topic ${absent.join(", ")} is absent`);
    }
  }
  for (const a of plan.actions) {
    if (a.type !== "create_runner") continue;
    const artifact = plan.artifacts.find((x) => x.model === a.model)?.artifact;
    if (!artifact) continue;
    const obs = await observeRunner(ctx, targetOfArtifact(artifact));
    const about = `model ${a.model} (${artifact.application_id})`;
    if (!obs.volume.exists) {
      return nextAt(createRow("create_volume"), `${about}: its state volume is absent`);
    }
    if (!a.resume && Object.keys(obs.kafka.committed).length === 0) {
      return nextAt(
        createRow("position_offsets"),
        `${about}: its group has no committed offsets yet`,
      );
    }
    const c = obs.containers[0];
    if (!c) {
      return nextAt(
        createRow("create_container"),
        `${about}: no container yet (its mounted plan file is written first)`,
      );
    }
    if (!c.everStarted) {
      return nextAt(
        createRow("start_container"),
        `${about}: ${c.name} was created and never started (its volume's instance file is written through its mount first)`,
      );
    }
    if (!c.running) {
      return nextAt(
        createRow("start_container"),
        `${about}: ${c.name} is ${c.status} (exit ${c.exitCode}${
          c.runnerStatus?.reason ? ` ${c.runnerStatus.reason}` : ""
        }); started again if it exited before RUNNING with its positions untouched`,
      );
    }
    if (c.runnerStatus?.state !== "RUNNING") {
      return nextAt(createRow("await_ready"), `${about}: ${c.name} has not reported RUNNING yet`);
    }
  }
  return nextAt(createRow("commit"), "every runner reports RUNNING; commit ownership");
}
