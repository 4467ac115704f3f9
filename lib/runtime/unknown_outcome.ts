/**
 * Unknown outcomes of durable state writes (issue 26 item 3): a write whose acknowledgement is
 * lost may or may not be recorded, so its invocation ends saying so — with the operation's ID,
 * its last acknowledged boundary and the exact commands that tell and continue — never with a
 * bare error that names no operation. The reviewed replacement returns such a result
 * (`replacement/result.ts`, `lostWrite`); the journeys that apply format-5 plans (create, runner
 * removal, connector changes) end with {@link UNKNOWN_INTENT}'s error, exit 6.
 *
 * @example
 * ```ts
 * import { unacknowledged } from "./unknown_outcome.ts";
 * unacknowledged(new Error("connection terminated")); // true
 * ```
 * @module
 */
import { EXIT, exitCodeFor, SluiceError } from "../errors.ts";
import { pendingCommands } from "../plan/plan.ts";
import type { StateSnapshot } from "../state/store.ts";
import type { OpenedControl } from "../state/journal.ts";

/**
 * Whether an error from a durable state write leaves its outcome unknown: anything but a refusal
 * the store gives before it writes (a conflict or a lost lock, a blocker, a corrupt or invalid
 * state: exit statuses 2–5). A lost connection, a failed fsync or commit may have written it.
 */
export function unacknowledged(error: unknown): boolean {
  return !(error instanceof SluiceError) ||
    !([EXIT.USAGE, EXIT.INVALID, EXIT.BLOCKED, EXIT.CONFLICT] as number[]).includes(
      exitCodeFor(error),
    );
}

/**
 * The operation pending in the state now, read after a lost lock or acknowledgement (a read needs
 * no lock): null when none is, undefined when the store cannot answer.
 */
export async function pendingAfterLoss(
  store: { load(): Promise<StateSnapshot> },
): Promise<OpenedControl | null | undefined> {
  const snap = await store.load().catch(() => undefined);
  return snap === undefined ? undefined : snap.control?.opened ?? null;
}

/** The code of an operation's intent written without acknowledgement (exit 6). */
export const UNKNOWN_INTENT = "UNKNOWN_OUTCOME_STATE_WRITE";

/**
 * Write the intent of a format-5 journey's operation (`write`, the store's `beginOperation`);
 * a lost acknowledgement ends the invocation with {@link UNKNOWN_INTENT} naming the operation
 * (`evidence`: `operation_id`, `kind`, `committed: null`, `last_boundary: null`, `commands`).
 * Applying the same plan file again tells the two apart: it continues the operation when the
 * intent was recorded, and starts it when it was not.
 */
export async function writeIntent(
  op: { operation_id: string; kind: string; plan_sha256: string },
  write: () => Promise<StateSnapshot>,
): Promise<StateSnapshot> {
  try {
    return await write();
  } catch (error) {
    if (!unacknowledged(error)) throw error;
    const commands = pendingCommands({
      operation_id: op.operation_id,
      kind: op.kind,
      status: "in_progress",
      last_boundary: null,
      plan_sha256: op.plan_sha256,
    });
    throw new SluiceError(
      UNKNOWN_INTENT,
      `the intent of ${op.kind} operation ${op.operation_id} was written but not acknowledged (${
        error instanceof Error ? error.message : String(error)
      }): it may or may not be recorded, and nothing else was done. 'sluice state show' tells; '${commands.continue}' continues the operation if it was recorded and starts it if not; or abandon it ('${commands.abandon}')`,
      {
        evidence: {
          operation_id: op.operation_id,
          kind: op.kind,
          committed: null,
          last_boundary: null,
          commands,
        },
        cause: error,
      },
    );
  }
}
