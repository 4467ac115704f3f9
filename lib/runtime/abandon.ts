/**
 * `state abandon --operation-id UUID --reason TEXT`: the operator's explicit, audited decision
 * that a pending operation can never continue (its state volume is gone, its candidate failed
 * for good, its plan can no longer be reproduced). Under the deployment lock it observes the
 * runtime read-only (best effort: a broker that cannot be reached is recorded as such), then
 * crosses one durable write: the abandonment — who, why, the observation and the operation as it
 * was — is archived in the history and control is cleared. It stops, removes, creates or
 * starts nothing, and changes no topic, group or offset: what the operation left behind stays,
 * and ownership is unchanged. A completed operation (receipt archived) is finished by
 * `state resume`, never abandoned.
 *
 * After an abandonment the project plans again from its unchanged ownership: a runner the
 * operation removed is `BLOCKED_RUNNER_MISSING`, a candidate it left is named, and an
 * application ID whose group has committed offsets is never positioned again (the planner's
 * `BLOCKED_UNOWNED_RUNTIME` and owned-runner checks): nothing is reset to `initial_offsets`.
 *
 * @example
 * ```ts
 * import { abandon } from "./abandon.ts";
 * // const r = await abandon({ dir: "./orders", operationId, reason: "volume removed by hand" });
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { atSite } from "../fault/site.ts";
import { operatorSite } from "../protocol/operator.ts";
import { findAbandonment } from "../state/engine.ts";
import type { Json } from "../state/_canonical.ts";
import { targetOf } from "./create.ts";
import { isoNow } from "./deps.ts";
import { OperationEvents } from "./progress.ts";
import { observeRunners } from "./observer.ts";
import { requireConfirmedEnv } from "./replacement/operation.ts";
import { openSession, type Session, type SessionOptions } from "./session.ts";

/** Options of {@link abandon}. */
export interface AbandonOptions extends SessionOptions {
  operationId: string;
  /** Why the operation can never continue (required, recorded in the audit). */
  reason: string;
  /** The environment name, repeated, where the environment policy demands it. */
  confirmEnv?: string;
  /** Remove a stale local lock left by a dead process first (explicit; never silent). */
  breakStaleLock?: string;
}

/** What {@link abandon} did. */
export interface AbandonResult {
  /** The abandoned operation's UUID. */
  operation_id: string;
  /** The abandoned operation's kind (`runner_update`, `create`). */
  kind: string;
  /** False when the abandonment was already recorded (only its clear, or nothing, remained). */
  recorded_now: boolean;
  /** The last durable boundary the operation had reached. */
  last_boundary: string | null;
  /**
   * The read-only observation recorded with it.
   * @internal what was pending, as recorded; its shape is not part of the versioned SDK
   */
  evidence: Record<string, Json>;
  /** Ownership serial (unchanged by an abandonment). */
  serial: number;
}

/**
 * Abandon the pending operation `operationId` (see the module documentation).
 *
 * @example
 * ```ts
 * import { abandon } from "./abandon.ts";
 * // await abandon({ dir: ".", operationId, reason: "candidate fails for good (exit 12)" });
 * ```
 */
export async function abandon(options: AbandonOptions): Promise<AbandonResult> {
  if (options.reason.trim() === "") {
    throw new SluiceError("USAGE_REASON", "state abandon needs --reason TEXT (kept in the audit)");
  }
  await using p = await openSession(options);
  {
    requireConfirmedEnv(p, options.confirmEnv ?? null);
    if (options.breakStaleLock) await p.store.breakStaleLock(options.breakStaleLock);
    await p.store.acquireLock({ actor: p.actor });
    try {
      let snap = await p.store.load();
      const c = snap.control?.opened ?? null;
      const archived = findAbandonment(snap.history.events, options.operationId);
      if (!c || c.operation_id !== options.operationId) {
        if (archived) {
          return {
            operation_id: options.operationId,
            kind: archived.operation_kind,
            recorded_now: false,
            last_boundary: null,
            evidence: archived.evidence,
            serial: snap.ownership?.document.serial ?? 0,
          };
        }
        throw new SluiceError(
          "BLOCKED_NO_PENDING_OPERATION",
          `operation ${options.operationId} is not pending${
            c ? ` (pending: ${c.operation_id})` : ""
          }`,
        );
      }
      const evidence = archived ? archived.evidence : await runtimeEvidence(p);
      snap = await atSite(operatorSite("abandon"), () =>
        p.store.abandonOperation(snap, {
          operation_id: c.operation_id,
          actor: p.actor,
          recorded_at: isoNow(p.clock),
          reason: options.reason,
          evidence,
        }));
      new OperationEvents({
        journey: "abandon",
        operationId: c.operation_id,
        listener: options.onProgress,
        clock: p.clock,
      }).emit({
        kind: "decision",
        decision: "abandon",
        message: `operation ${c.operation_id} abandoned; nothing was mutated`,
      });
      return {
        operation_id: c.operation_id,
        kind: c.kind,
        recorded_now: !archived,
        last_boundary: c.checkpoints.at(-1)?.name ?? null,
        evidence,
        serial: snap.ownership?.document.serial ?? 0,
      };
    } finally {
      await p.store.releaseLock();
    }
  }
}

/** The runtime as the operation left it, read-only (an unreachable provider is recorded). */
async function runtimeEvidence(p: Session): Promise<Record<string, Json>> {
  try {
    const obs = await observeRunners(p, p.compiled.artifacts.map((a) => targetOf(a.artifact)));
    return {
      observed: true,
      observed_at: obs.observedAt,
      runners: obs.runners.map((r) => ({
        application_id: r.applicationId,
        containers: r.containers.map((x) => ({
          id: x.id,
          name: x.name,
          status: x.status,
          exit_code: x.exitCode,
          generation: x.labels.generation,
          operation_id: x.labels.operationId,
        })),
        volume: { exists: r.volume.exists, instance: r.volume.instanceLabel },
        group: { state: r.kafka.group.state, members: r.kafka.group.members.length },
        committed: r.kafka.committed,
      })),
    };
  } catch (error) {
    return { observed: false, error: error instanceof Error ? error.message : String(error) };
  }
}
