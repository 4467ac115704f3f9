/**
 * What the state engine's finalization takes from the journey whose operation completes by an
 * archived receipt: the engine holds only the receipt protocol (the receipt, the resulting
 * ownership and the clear of control in one durable write group; a retry after a partial write
 * finishes exactly what is missing, checked against the receipt), and the journey supplies the
 * rule — when its journal is complete, what ownership results, what its receipt says, how the
 * result is reconstructed. The runner update's is `runner_completion.ts`.
 *
 * @example
 * ```ts
 * import type { ReceiptCompletion } from "./completion.ts";
 * const never: ReceiptCompletion["complete"] = (c) => {
 *   throw new Error(`operation ${c.operation_id} never completes`);
 * };
 * ```
 * @module
 */
import type { CompletionReceipt } from "./history.ts";
import type { OpenedControl } from "./journal.ts";
import type { OwnershipDocument } from "./ownership.ts";

/** One journey's completion rule (see the module documentation). */
export interface ReceiptCompletion {
  /** Refuse (with its blocker) a pending operation whose journal is not complete. */
  complete(control: OpenedControl): void;
  /** The ownership the operation results in over `current`. */
  result(current: OwnershipDocument, control: OpenedControl): OwnershipDocument;
  /** The receipt archived with the result. */
  receipt(input: {
    control: OpenedControl;
    prior: { document: OwnershipDocument; checksum: string };
    result: OwnershipDocument;
    recordedAt: string;
  }): CompletionReceipt;
  /**
   * Verify that `current` is exactly the receipt's result of the operation (its prior state
   * reconstructed from it is the receipt's and the intent's), or refuse.
   */
  reconstruct(current: OwnershipDocument, control: OpenedControl, receipt: CompletionReceipt): void;
}
