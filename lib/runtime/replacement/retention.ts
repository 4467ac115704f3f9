/**
 * `state accept-retention-loss --plan FILE --operation-id UUID --reason TEXT`: the operator's
 * explicit, audited acceptance of a retention loss (`BLOCKED_RETENTION_LOSS`). While no runner of
 * the application runs, retention (or `deleteRecords`) removed input records below the
 * committed positions; those records can never be processed. Under the operation lock, with the
 * original plan verified against the operation, a fresh read-only observation must show exactly
 * that and nothing else wrong. Then two steps, each a fault site:
 *
 * 1. the decision is recorded in the operation's journal (and its audit): per partition, the lost
 *    range `[committed, earliest retained)`;
 * 2. the group's committed positions of those partitions — and nothing else — move to the
 *    earliest retained offsets (the group has no member; Kafka refuses otherwise).
 *
 * The boundary table then compares positions with the clean-close vector as moved by the
 * decision, so `state resume` continues. A kill between the two steps leaves the decision
 * recorded and the positions unmoved: the same command again finds the recorded decision for
 * exactly these ranges and only moves them.
 *
 * @example
 * ```ts
 * import { acceptRetentionLoss } from "./retention.ts";
 * // const r = await acceptRetentionLoss({ dir, planPath, operationId, reason: "accepted by ops" });
 * ```
 * @module
 */
import { SluiceError } from "../../errors.ts";
import { atSite } from "../../fault/site.ts";
import { operatorSite } from "../../protocol/operator.ts";
import type { OperatorDecision } from "../../state/journal.ts";
import { blocker, blockerError } from "../../validation/blocker.ts";
import { verifyReviewedRuntime } from "../../validation/reviewed_runtime.ts";
import { isoNow } from "../deps.ts";
import { OperationEvents } from "../progress.ts";
import { observeRunner } from "../observer.ts";
import { candidateTarget } from "./candidate.ts";
import { stageOf } from "./decide.ts";
import { checkpointsOf, decisionsOf } from "./drive.ts";
import {
  controlOf,
  openOperation,
  type OperationOptions,
  verifyOperationMatches,
} from "./operation.ts";
import { providerMutation } from "../provider_mutation.ts";

/** Options of {@link acceptRetentionLoss}. */
export interface RetentionOptions extends OperationOptions {
  /** Why the loss is accepted (required, recorded in the audit). */
  reason: string;
}

/** What {@link acceptRetentionLoss} did. */
export interface RetentionResult {
  /** The operation whose retention loss was accepted. */
  operation_id: string;
  /**
   * The recorded decision (new, or the one a previous, interrupted run recorded).
   * @internal the audit's record of the decision; its shape is not part of the versioned SDK
   */
  decision: OperatorDecision;
  /** False when a previous run had recorded it and only the move remained. */
  recorded_now: boolean;
  /** The positions moved by this run, per partition (empty when {@link already_moved}). */
  moved: Array<{ partition: number; from: string; to: string }>;
  /**
   * A previous, interrupted run had recorded the decision and moved every accepted partition to
   * its earliest retained offset (the committed positions are exactly those): nothing was done.
   */
  already_moved: boolean;
  /** The command that continues the operation. */
  resume: string;
}

/**
 * Accept the retention loss of a pending replacement (see the module documentation).
 *
 * @example
 * ```ts
 * import { acceptRetentionLoss } from "./retention.ts";
 * // await acceptRetentionLoss({ dir, planPath, operationId, reason: "records expired, accepted" });
 * ```
 */
export async function acceptRetentionLoss(options: RetentionOptions): Promise<RetentionResult> {
  if (options.reason.trim() === "") {
    throw new SluiceError(
      "USAGE_REASON",
      "state accept-retention-loss needs --reason TEXT (kept in the audit)",
    );
  }
  await using op = await openOperation(options, { confirmEnv: options.confirmEnv ?? null });
  const { project: p, reviewed: r } = op;
  const operationId = options.operationId;
  const events = new OperationEvents({
    journey: "accept_retention_loss",
    operationId,
    listener: options.onProgress,
    clock: p.clock,
  });
  let snap = await p.store.load();
  const c = controlOf(snap, operationId);
  if (!c) {
    throw new SluiceError(
      "BLOCKED_NO_PENDING_OPERATION",
      `operation ${operationId} is not pending`,
    );
  }
  verifyOperationMatches(c, r, operationId);
  const candidate = op.candidate(operationId);
  const stage = stageOf(checkpointsOf(snap), candidate.actionIndex);
  if (stage === "action_completed") {
    throw new SluiceError(
      "BLOCKED_OPERATION_TERMINAL",
      `operation ${operationId} is recorded completed; only its finalization remains ('state resume')`,
    );
  }
  const obs = await observeRunner(p, candidateTarget(candidate));
  const running = obs.containers.filter((x) => x.running);
  if (running.length > 0 || obs.kafka.group.members.length > 0) {
    throw blockerError([blocker(
      "BLOCKED_GROUP_ACTIVE",
      `a runner of ${obs.applicationId} runs or its group has members; positions can only move while nothing consumes`,
      {
        model: r.action.model,
        evidence: {
          running: running.map((x) => x.id),
          members: obs.kafka.group.members.length,
        },
      },
    )]);
  }
  // the retention loss must be the only thing wrong: anything else is its own blocker
  const rt = verifyReviewedRuntime(obs, candidate.evidence, candidate, r.action.model);
  const others = rt.blockers.filter((b) => b.code !== "BLOCKED_RETENTION_LOSS");
  if (others.length > 0) throw blockerError(others);
  const topic = obs.target.inputTopic;
  const lost = obs.kafka.ranges.flatMap((range) => {
    const committed = obs.kafka.committed[String(range.partition)];
    return committed !== undefined && BigInt(committed) < BigInt(range.earliest)
      ? [{
        topic,
        partition: range.partition,
        from: committed,
        to: range.earliest,
        lost: String(BigInt(range.earliest) - BigInt(committed)),
      }]
      : [];
  });
  if (lost.length === 0) {
    // a previous run recorded its decision and moved the positions, then was killed before it
    // answered: the same command again finds both done and says so (nothing is written)
    const done = movedDecision(decisionsOf(snap), obs.kafka.committed);
    if (done) {
      return {
        operation_id: operationId,
        decision: done,
        recorded_now: false,
        moved: [],
        already_moved: true,
        resume: op.commands(operationId).resume,
      };
    }
    throw new SluiceError(
      "BLOCKED_NO_RETENTION_LOSS",
      `every committed position of ${obs.applicationId} is retained; there is no loss to accept`,
      { evidence: { committed: obs.kafka.committed, ranges: obs.kafka.ranges } },
    );
  }
  const key = (x: typeof lost) =>
    JSON.stringify(x.map((l) => [l.topic, l.partition, l.from, l.to]));
  // a previous run recorded exactly this decision and was killed before the move
  let decision = decisionsOf(snap).find((d) => key(d.partitions) === key(lost)) ?? null;
  const recordedNow = decision === null;
  if (!decision) {
    const made: OperatorDecision = {
      decision_id: p.uuids.uuid(),
      decision: "accept_retention_loss",
      operation_id: operationId,
      actor: p.actor,
      recorded_at: isoNow(p.clock),
      reason: options.reason,
      last_checkpoint: stage === "intent" ? null : stage,
      partitions: lost,
      evidence: {
        observed_at: obs.observedAt,
        group: { state: obs.kafka.group.state, members: 0 },
        committed: obs.kafka.committed,
        ranges: obs.kafka.ranges.map((x) => ({ ...x })),
      },
    };
    snap = await atSite(operatorSite("record_decision"), () => p.store.recordDecision(snap, made));
    decision = made;
    events.emit({
      kind: "decision",
      decision: "accept_retention_loss",
      message: `retention loss accepted: ${
        lost.map((l) => `${l.topic}-${l.partition} [${l.from}, ${l.to})`).join(", ")
      }`,
    });
  }
  const positions = new Map(lost.map((l) => [l.partition, BigInt(l.to)]));
  await providerMutation(
    p.store,
    operatorSite("move_offsets"),
    () => p.kafka.setGroupOffsets(obs.applicationId, topic, positions),
  );
  events.emit({
    kind: "offsets_moved",
    partitions: lost.length,
    message: `moved ${lost.length} partition(s) to the earliest retained`,
  });
  return {
    operation_id: operationId,
    decision,
    recorded_now: recordedNow,
    moved: lost.map((l) => ({ partition: l.partition, from: l.from, to: l.to })),
    already_moved: false,
    resume: op.commands(operationId).resume,
  };
}

/**
 * The operation's last retention decision when every partition it accepted is committed exactly
 * at the decision's earliest retained offset (its move was made); null otherwise.
 */
function movedDecision(
  decisions: OperatorDecision[],
  committed: Record<string, string>,
): OperatorDecision | null {
  const last = decisions.filter((d) => d.decision === "accept_retention_loss").at(-1);
  if (!last || last.partitions.length === 0) return null;
  return last.partitions.every((l) => committed[String(l.partition)] === l.to) ? last : null;
}
