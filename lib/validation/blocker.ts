/**
 * A blocker: one reason the evidence does not authorize a step, with a stable
 * `BLOCKED_*`/`ENV_*` code, the model it concerns and its evidence. The planner seals blockers
 * into plan files and the replacement driver returns them; both build them here, so a blocker
 * has one shape everywhere.
 *
 * @example
 * ```ts
 * import { blocker, blockerError } from "./blocker.ts";
 * const b = blocker("BLOCKED_VOLUME_MISSING", "state volume orders-state does not exist", {
 *   model: "eligible_orders",
 * });
 * console.log(blockerError([b]).code); // BLOCKED_VOLUME_MISSING
 * ```
 * @module
 */
import { type ErrorCode, SluiceError } from "../errors.ts";

/** One reason a step is not authorized. */
export interface Blocker {
  /**
   * The stable code: `BLOCKED_*`; `ENV_*` for a missing environment piece; `PLAN_*` for a plan
   * file or project changed under a running operation.
   */
  code: ErrorCode;
  /** The model it concerns; null for project-wide findings. */
  model: string | null;
  /** What is wrong, in words. */
  message: string;
  /** Always present (possibly empty): plan files are canonical JSON, which has no undefined. */
  evidence: Record<string, unknown>;
}

/**
 * Build a blocker (the one builder: planner, validation checks and driver guards use it).
 *
 * @example
 * ```ts
 * import { blocker } from "./blocker.ts";
 * blocker("BLOCKED_OOM", "the old runner was OOM-killed", { evidence: { exitCode: 137 } });
 * ```
 */
export function blocker(
  code: ErrorCode,
  message: string,
  options: { model?: string | null; evidence?: Record<string, unknown> } = {},
): Blocker {
  return { code, model: options.model ?? null, message, evidence: options.evidence ?? {} };
}

/**
 * An error carrying every blocker found (its code is the first blocker's).
 *
 * @example
 * ```ts
 * import { blocker, blockerError } from "./blocker.ts";
 * const e = blockerError([blocker("BLOCKED_WRONG_IMAGE", "the runner image disappeared")]);
 * console.log(e.code); // BLOCKED_WRONG_IMAGE
 * ```
 */
export function blockerError(blockers: Blocker[]): SluiceError {
  const first = blockers[0];
  const message = blockers.length === 1 ? first.message : `${blockers.length} blockers:\n` +
    blockers.map((b) => `  [${b.code}] ${b.message}`).join("\n");
  return new SluiceError(first.code, message, { evidence: { blockers } });
}
