/**
 * `apply --plan FILE` with a reviewed format-6 plan: verify the plan against the current project,
 * the protected state and the store; require that no operation is pending; let a fresh
 * observation authorize the table's first row before anything is written; record the intent
 * (a fault site); send OpenLineage START; drive the table and finalize.
 *
 * @example
 * ```ts
 * import { executeReviewed } from "./execute.ts";
 * // const r = await executeReviewed({ dir: ".", planPath: "plan.json" });
 * // r.committed === true → done; null → unknown: run the printed runner-status command
 * ```
 * @module
 */
import { SluiceError } from "../../errors.ts";
import { atSite } from "../../fault/site.ts";
import { currentContext, verifyPlanCurrent } from "../../plan/plan_file.ts";
import { verifyPlanAuthority } from "../../plan/key_seal.ts";
import { receiptOfPlan } from "../../state/history.ts";
import { OPERATION_WRITES } from "../../protocol/replacement.ts";
import { blockerError } from "../../validation/blocker.ts";
import { isoNow } from "../deps.ts";
import { observeRunner } from "../observer.ts";
import { checkSessionCredentials } from "../session.ts";
import { recheckRunnerAcls } from "../runner_acls.ts";
import { candidateTarget } from "./candidate.ts";
import { decide } from "./decide.ts";
import { driveThenFinalize, endOfRun, replacementEvents } from "./finalize.ts";
import { lineageFor } from "./lineage.ts";
import { openOperation, type ReviewedOptions } from "./operation.ts";
import { lostWrite, type ReplacementResult } from "./result.ts";
import { pendingAfterLoss, unacknowledged } from "../unknown_outcome.ts";
import { extraLabelsDetail } from "../operation_labels.ts";

/**
 * Execute a reviewed replacement (`apply --plan FILE` with a format-6 plan).
 *
 * @example
 * ```ts
 * import { executeReviewed } from "./execute.ts";
 * // const r = await executeReviewed({ dir: "./orders", planPath: "replace.plan.json" });
 * ```
 */
export async function executeReviewed(options: ReviewedOptions): Promise<ReplacementResult> {
  await using op = await openOperation(options);
  const { project: p, reviewed: r } = op;
  let snap = await p.store.load();
  verifyPlanAuthority(
    r.plan,
    r.sha256,
    snap.control?.opened.intent.reviewed_plan_sha256 ?? null,
    await p.store.sealKey(),
    options.planPath,
  );
  verifyPlanCurrent(r.plan, {
    ...currentContext(p.store, p.sourceSha256, snap),
    appliedBy: receiptOfPlan(snap.history.events, r.sha256),
  });
  if (snap.control) {
    throw new SluiceError(
      "BLOCKED_OPERATION_PENDING",
      `operation ${snap.control.opened.operation_id} is pending; inspect it with 'sluice state runner-status' and continue it with 'sluice state resume'`,
      { evidence: { operation_id: snap.control.opened.operation_id } },
    );
  }
  const owned = snap.ownership?.document.runners.find((x) => x.model === r.action.model);
  if (!snap.ownership || !owned || owned.artifact_sha256 !== r.action.prior_artifact_sha256) {
    throw new SluiceError(
      "BLOCKED_PROTECTED_STATE",
      `ownership of ${r.action.model} is ${
        owned?.artifact_sha256 ?? "absent"
      }, not the reviewed prior ${r.action.prior_artifact_sha256}`,
    );
  }
  const originalState = snap.ownership.checksum;
  const operationId = p.uuids.uuid();
  const candidate = op.candidate(operationId);
  // the fresh evidence must authorize the first row before anything is written
  const obs = await observeRunner(p, candidateTarget(candidate));
  const first = decide({
    stage: "intent",
    checkpoints: [],
    action: r.action,
    candidate,
    obs,
    memory: { termRequested: false, startRequested: false },
    resuming: false,
  });
  if (first.kind === "blocked") throw blockerError(first.blockers);
  // a new operation starts only with the runner credentials the plan bound (a change refuses
  // before anything is written; a plan already applied was answered above, whatever they are now)
  await checkSessionCredentials(p, r.plan, false);
  // an ACL of the runner principal removed since the plan blocks before the intent (runner_acls.ts)
  const m = p.project.manifest;
  await recheckRunnerAcls(p.kafka, m.kafkaSecurity, r.plan, m.kafka.bootstrapHost);
  const base = { operation_id: operationId, commands: op.commands(operationId) };
  const events = replacementEvents(op, operationId);
  events.started(false, `replacement operation ${operationId}`);
  try {
    snap = await atSite(OPERATION_WRITES.intent, () =>
      p.store.beginOperation(snap, {
        operation_id: operationId,
        kind: "runner_update",
        project: p.store.project,
        environment: p.store.environment,
        actor: p.actor,
        created_at: isoNow(p.clock),
        original_state_checksum: originalState,
        reviewed_plan_sha256: r.sha256,
        details: {
          model: r.action.model,
          application_id: r.action.application_id,
          // every continuation creates with these, whatever its handle gives
          ...extraLabelsDetail(options.extraLabels),
        },
      }, [r.action]));
  } catch (error) {
    // the intent's response lost: the operation may or may not be recorded — never a throw
    // without its ID (a refusal before the write is still the refusal)
    if (unacknowledged(error)) return endOfRun(events, lostWrite(base, "the intent", null, error));
    // a lock lost once the write went through (the session ended right after its commit): the
    // intent is recorded, so the answer names the operation as for a lost acknowledgement
    if (await recordedDespite(p.store, operationId, error)) {
      return endOfRun(events, lostWrite(base, "the intent", null, error));
    }
    events.end(error);
    throw error;
  }
  const lineage = lineageFor(op, operationId);
  // the intent is durable: a cancelled run stops here (START is sent once it goes on)
  events.boundary({
    kind: "intent",
    boundary: "intent",
    message: `operation ${operationId} recorded`,
  });
  // START only after the intent is acknowledged
  await lineage.emit("START");
  const result = await driveThenFinalize(op, operationId, snap, { resuming: false, events });
  return await lineage.finish(result);
}

/**
 * Whether the operation's intent is in the state although its write answered a lost lock (a
 * read needs no lock). A store that cannot be read then counts as recorded: unknown, never a
 * refusal that hides an operation.
 */
async function recordedDespite(
  store: Parameters<typeof pendingAfterLoss>[0],
  operationId: string,
  error: unknown,
): Promise<boolean> {
  if (!(error instanceof SluiceError) || error.code !== "STATE_LOCK_LOST") return false;
  const pending = await pendingAfterLoss(store);
  return pending === undefined || pending?.operation_id === operationId;
}
