/**
 * The runner update's completion rule (the predicate replacement's), which the state engine's
 * receipt protocol runs when `finalizeCompletedRunner` is called: the operation is complete when
 * its journal holds the replacement table's whole checkpoint chain
 * (`lib/protocol/replacement.ts` `CHECKPOINT_ORDER`) ending in a successful `action_completed`;
 * its one typed action changes one owned runner's artifact checksum (serial + 1); its receipt
 * (`runner_completed`) names both artifacts and both states; a retry after the ownership write
 * checks that undoing exactly that change gives the receipt's and the intent's prior state.
 *
 * @example
 * ```ts
 * import { RUNNER_COMPLETION } from "./runner_completion.ts";
 * // RUNNER_COMPLETION.result(ownership, control): the owned runner's new artifact, serial + 1
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { ReceiptCompletion } from "./completion.ts";
import { CHECKPOINT_ORDER, lastCheckpoint, type RunnerAction } from "./journal.ts";
import { type OwnershipDocument, stateChecksum } from "./ownership.ts";

/**
 * The runner update's completion (see the module documentation).
 *
 * @example
 * ```ts
 * import { RUNNER_COMPLETION } from "./runner_completion.ts";
 * // RUNNER_COMPLETION.complete(control) throws BLOCKED_INCOMPLETE_OPERATION before the chain ends
 * ```
 */
export const RUNNER_COMPLETION: ReceiptCompletion = {
  complete(c) {
    const names = c.checkpoints.map((x) => x.name).join(",");
    const last = lastCheckpoint(c);
    if (
      names !== CHECKPOINT_ORDER.join(",") ||
      last?.name !== "action_completed" || last.outcome !== "success"
    ) {
      throw new SluiceError(
        "BLOCKED_INCOMPLETE_OPERATION",
        `operation ${c.operation_id} has no complete successful checkpoint chain (${
          names || "intent only"
        })`,
      );
    }
  },
  result: (current, c) => applyRunnerChange(current, c.actions[0]),
  receipt: ({ control: c, prior, result, recordedAt }) => {
    const action = c.actions[0];
    return {
      kind: "runner_completed",
      operation_id: c.operation_id,
      recorded_at: recordedAt,
      model: action.model,
      prior_artifact_sha256: action.prior_artifact_sha256,
      result_artifact_sha256: action.desired_artifact_sha256,
      prior_state_checksum: prior.checksum,
      result_state_checksum: stateChecksum(result),
      prior_serial: prior.document.serial,
      result_serial: result.serial,
      intent: c.intent,
      terminal_control: c.document,
      incidents: c.incidents,
      resume_history: c.resume_history,
    };
  },
  reconstruct(current, c, receipt) {
    const action = c.actions[0];
    const runner = current.runners.find((r) => r.model === action.model);
    // undo exactly that one change; the result must hash to the receipt's prior state
    const prior: OwnershipDocument = {
      ...current,
      serial: current.serial - 1,
      runners: current.runners.map((r) =>
        r.model === action.model ? { ...r, artifact_sha256: action.prior_artifact_sha256 } : r
      ),
    };
    const checksum = stateChecksum(prior);
    if (
      runner?.artifact_sha256 !== action.desired_artifact_sha256 ||
      checksum !== receipt.prior_state_checksum ||
      checksum !== receipt.intent.original_state_checksum
    ) {
      throw new SluiceError(
        "BLOCKED_STATE_CHANGED",
        `reconstructed prior state ${checksum} does not match the original intent ${receipt.intent.original_state_checksum}`,
      );
    }
  },
};

/** The one change a runner update makes: the model's artifact checksum, serial + 1. */
function applyRunnerChange(doc: OwnershipDocument, action: RunnerAction): OwnershipDocument {
  return {
    ...doc,
    serial: doc.serial + 1,
    runners: doc.runners.map((r) =>
      r.model === action.model ? { ...r, artifact_sha256: action.desired_artifact_sha256 } : r
    ),
  };
}
