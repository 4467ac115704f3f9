/**
 * `sluice acknowledge-drift MODEL --reason TEXT`: accept, explicitly and on the record, a drift
 * `plan` and `status` report for an owned runner (lib/validation/drift.ts: a runner started
 * again outside sluice, or committed offsets moved while it was stopped). sluice never adopts
 * such a change silently; this is the operator's way to say "keep it".
 *
 * Under the deployment lock, with no pending operation:
 *
 * 1. the model's runner is observed and checked as `restart` checks it (`observeOwned`: the owned
 *    generation, running or not);
 * 2. every drift found that no earlier acknowledgment accepts is recorded, exactly as found, in
 *    one audit event `drift_acknowledged` (who, why, the container's ID, StartedAt and
 *    FinishedAt, and per drift its times or its partitions with the offsets before and after),
 *    through the state layer's audit write (`recordAudit`, with its fault sites). Nothing else
 *    changes: no container, no offset.
 *
 * Afterwards `plan` and `status` no longer report those drifts, and `restart` starts a runner over
 * acknowledged offsets; a later change is a new drift. Idempotent: when everything found is
 * acknowledged already (a run killed after its write, run again), the command names the events
 * and records nothing; with no drift at all it is `BLOCKED_NO_DRIFT`.
 *
 * @example
 * ```ts
 * import { acknowledgeDrift } from "./acknowledge_drift.ts";
 * // const r = await acknowledgeDrift({ dir: "./orders", model: "eligible_orders", reason: "offsets reset on purpose by the data team" });
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { DriftAcknowledged } from "../state/history.ts";
import { type RunnerDrift, runnerDrifts } from "../validation/drift.ts";
import { isoNow } from "./deps.ts";
import { type DayTwoRequest, observeOwned, requireReason, underLock } from "./restart.ts";
import { openSession } from "./session.ts";

/** What {@link acknowledgeDrift} did. */
export interface AcknowledgeDriftResult {
  /** The model. */
  model: string;
  /** Its application ID (the consumer group). */
  application_id: string;
  /** The container's name. */
  container: string;
  /** Its exact ID. */
  container_id: string;
  /** The drifts recorded by this run (empty when all were acknowledged before). */
  acknowledged: RunnerDrift[];
  /** The `drift_acknowledged` event this run recorded, or null. */
  event_id: string | null;
  /** Drifts an earlier acknowledgment already accepts, with its event ID. */
  already: Array<{ drift: RunnerDrift; event_id: string }>;
}

/**
 * Record the operator's acknowledgment of a model's current drift (see the module
 * documentation).
 *
 * @example
 * ```ts
 * import { acknowledgeDrift } from "./acknowledge_drift.ts";
 * // await acknowledgeDrift({ dir: ".", model: "eligible_orders", reason: "moved on purpose" });
 * ```
 */
export async function acknowledgeDrift(
  options: Omit<DayTwoRequest, "groupTimeoutMs" | "readyTimeoutMs">,
): Promise<AcknowledgeDriftResult> {
  requireReason(options.reason, "acknowledge-drift");
  await using p = await openSession(options);
  return await underLock(p, options, async (snap) => {
    const o = await observeOwned(p, snap, options.model);
    const c = o.container;
    const found = runnerDrifts(c, snap.history.events, {
      topic: o.obs.target.inputTopic,
      committed: o.obs.kafka.committed,
    });
    const base = {
      model: o.model,
      application_id: o.owned.application_id,
      container: c.name,
      container_id: c.id,
      already: found.acknowledged,
    };
    if (found.unacknowledged.length === 0) {
      if (found.acknowledged.length > 0) return { ...base, acknowledged: [], event_id: null };
      throw new SluiceError(
        "BLOCKED_NO_DRIFT",
        `${o.model}: no drift to acknowledge: ${c.name} was not started outside sluice and its group's committed offsets match what the runner recorded ('sluice status' shows the model); nothing was recorded`,
        { evidence: { model: o.model, container: c.name } },
      );
    }
    const event: DriftAcknowledged = {
      kind: "drift_acknowledged",
      event_id: p.uuids.uuid(),
      actor: p.actor,
      recorded_at: isoNow(p.clock),
      reason: options.reason,
      model: o.model,
      application_id: o.owned.application_id,
      container: {
        id: c.id,
        name: c.name,
        running: c.running,
        started_at: c.startedAt,
        finished_at: c.finishedAt,
      },
      drifts: found.unacknowledged,
    };
    await p.store.verifyLock();
    await p.store.recordAudit(snap, event);
    return { ...base, acknowledged: found.unacknowledged, event_id: event.event_id };
  });
}
