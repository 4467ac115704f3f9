/**
 * The pending operation journal ("control"). A `runner_update` uses envelope version 4
 * (intent, typed actions, checkpoints, incidents), upgraded to version 5 on its first resume
 * (adds `resume_history`). Every other operation kind keeps envelope version 3 (a plain
 * intent, no checkpoints). Each v4/v5 entry is stored as its own canonical-JSON byte string
 * with its sha256, so upgrading the envelope never rewrites earlier bytes; every read
 * re-verifies them.
 *
 * @example
 * ```ts
 * import { CHECKPOINT_ORDER } from "./journal.ts";
 * console.log(CHECKPOINT_ORDER.join(" → "));
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { canonicalJson, type Json, sha256Hex } from "./_canonical.ts";
import { CHECKPOINT_ORDER, type CheckpointName } from "../protocol/replacement.ts";

/** Maximum resume authorizations per operation; the next one is BLOCKED_RESUME_LIMIT. */
export const RESUME_LIMIT = 32;

/** One journal entry: its exact canonical-JSON bytes and their sha256. */
export interface SealedEntry {
  bytes: string;
  sha256: string;
}

/**
 * Seal a value into an entry (canonical JSON + sha256).
 *
 * @example
 * ```ts
 * import { seal } from "./journal.ts";
 * seal({ b: 1, a: 2 }).bytes; // '{"a":2,"b":1}'
 * ```
 */
export function seal(value: unknown): SealedEntry {
  const bytes = canonicalJson(value);
  return { bytes, sha256: sha256Hex(bytes) };
}

/**
 * Verify an entry's checksum and canonical form, then parse it (STATE_CORRUPT_JOURNAL).
 *
 * @example
 * ```ts
 * import { seal, unseal } from "./journal.ts";
 * unseal<{ a: number }>(seal({ a: 1 }), "example").a; // 1
 * ```
 */
export function unseal<T>(entry: unknown, where: string): T {
  const e = entry as SealedEntry;
  if (typeof e?.bytes !== "string" || typeof e?.sha256 !== "string") {
    throw new SluiceError("STATE_CORRUPT_JOURNAL", `${where}: not a sealed entry`);
  }
  const actual = sha256Hex(e.bytes);
  if (actual !== e.sha256) {
    throw new SluiceError(
      "STATE_CORRUPT_JOURNAL",
      `${where}: entry sha256 mismatch (recorded ${e.sha256}, bytes hash to ${actual})`,
      { evidence: { where, recorded: e.sha256, actual } },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(e.bytes);
  } catch {
    throw new SluiceError("STATE_CORRUPT_JOURNAL", `${where}: entry bytes are not JSON`);
  }
  if (canonicalJson(parsed) !== e.bytes) {
    throw new SluiceError("STATE_CORRUPT_JOURNAL", `${where}: entry bytes are not canonical JSON`);
  }
  return parsed as T;
}

// The checkpoint order is the replacement table's (lib/protocol/replacement.ts): written once.
export { CHECKPOINT_ORDER } from "../protocol/replacement.ts";
export type { CheckpointName } from "../protocol/replacement.ts";

/** A committed position of one input partition. Offsets are decimal strings (64-bit). */
export interface PartitionOffset {
  topic: string;
  partition: number;
  offset: string;
}

/** A typed checkpoint, as the driver records it before crossing the next boundary. */
export type Checkpoint =
  | { name: "action_started"; action_index: number; recorded_at: string }
  | {
    name: "old_closed";
    action_index: number;
    recorded_at: string;
    /** Final progress at clean close: the offsets vector. */
    offsets: PartitionOffset[];
    /** The raw exit code (0 or 143), never rewritten. */
    exit_code: number;
  }
  | { name: "old_removed"; action_index: number; recorded_at: string }
  | { name: "replacement_created"; action_index: number; recorded_at: string; container_id: string }
  | {
    name: "action_completed";
    action_index: number;
    recorded_at: string;
    outcome: "success" | "failure";
    detail: string | null;
  };

/** The typed runner replacement action (the plan's reviewed tuple, opaque evidence kept whole). */
export interface RunnerAction {
  type: "replace_runner_predicate";
  model: string;
  application_id: string;
  prior_artifact_sha256: string;
  desired_artifact_sha256: string;
  /** Reviewed evidence (container ID, volume instance, offsets lower bounds, ...). */
  evidence: { [key: string]: Json };
}

/** The recorded intent of an operation. */
export interface OperationIntent {
  operation_id: string;
  kind: string;
  project: string;
  environment: string | null;
  actor: string;
  created_at: string;
  /** Checksum of the ownership document the operation started from (protected state). */
  original_state_checksum: string;
  /** sha256 of the reviewed plan file (format 6); required for resume. */
  reviewed_plan_sha256: string | null;
  /** Free-form, kind-specific details. */
  details: { [key: string]: Json };
}

/** An interruption record (an incident). */
export interface Incident {
  incident_id: string;
  operation_id: string;
  actor: string;
  recorded_at: string;
  /** Last durable checkpoint when the interruption was recorded (null: intent only). */
  last_checkpoint: CheckpointName | null;
  checkpoint_count: number;
  reason: string;
}

/** What the caller supplies to authorize a resume. */
export interface ResumeRecord {
  authorization_id: string;
  actor: string;
  authorized_at: string;
  /** The full recovery record (runner-status evidence) that justified the resume. */
  recovery: { [key: string]: Json };
}

/** Identity of a state store: generated UUID and a redacted address. */
export interface StoreIdentity {
  store_id: string;
  backend: "local" | "postgres";
  address: string;
}

/** One resume_history entry (what the store archives for an authorization). */
export interface ResumeAuthorization {
  authorization_id: string;
  operation_id: string;
  actor: string;
  authorized_at: string;
  store: StoreIdentity;
  original_state_checksum: string;
  progress: { checkpoint_count: number; last_checkpoint: CheckpointName | null };
  interrupted_control_sha256: string;
  recovery: { [key: string]: Json };
}

/** Control envelope version 3: every operation kind except runner_update. */
export interface ControlV3 {
  format: "sluice.control";
  version: 3;
  operation_id: string;
  kind: string;
  status: "in_progress" | "interrupted";
  intent: OperationIntent;
  incidents: Incident[];
}

/** Control envelope version 4/5: a typed runner update with sealed entries. */
export interface ControlV45 {
  format: "sluice.control";
  version: 4 | 5;
  operation_id: string;
  kind: "runner_update";
  status: "in_progress" | "interrupted";
  /** Lock UUID of the holder that began or last resumed the operation. */
  holder_lock_id: string;
  intent: SealedEntry;
  actions: SealedEntry[];
  checkpoints: SealedEntry[];
  incidents: SealedEntry[];
  /** Present only in version 5. */
  resume_history?: SealedEntry[];
  /**
   * Explicit, audited operator decisions (sealed), present only once one is recorded: the
   * envelope version does not change, and earlier entries keep their bytes.
   */
  decisions?: SealedEntry[];
}

/**
 * An operator's explicit decision about a pending runner update, recorded before the provider
 * change it authorizes. `accept_retention_loss`: records deleted by retention below the
 * committed positions are given up; the positions move to the earliest retained offsets, and
 * the clean-close vector the table compares against becomes `moved_to` for those partitions.
 */
export interface OperatorDecision {
  decision_id: string;
  decision: "accept_retention_loss";
  operation_id: string;
  actor: string;
  recorded_at: string;
  reason: string;
  /** The last durable checkpoint when it was decided (null: intent only). */
  last_checkpoint: CheckpointName | null;
  /** Per partition: the lost offset range `[from, to)`; `to` is where the position moves. */
  partitions: Array<{ topic: string; partition: number; from: string; to: string; lost: string }>;
  /** The observation that justified it (group state, committed and retained ranges). */
  evidence: { [key: string]: Json };
}

/** Any stored control envelope. */
export type ControlDocument = ControlV3 | ControlV45;

/** A control envelope with its sealed entries verified and parsed. */
export interface OpenedControl {
  document: ControlDocument;
  operation_id: string;
  kind: string;
  version: 3 | 4 | 5;
  status: "in_progress" | "interrupted";
  intent: OperationIntent;
  actions: RunnerAction[];
  checkpoints: Checkpoint[];
  incidents: Incident[];
  resume_history: ResumeAuthorization[];
  decisions: OperatorDecision[];
}

function corrupt(msg: string): never {
  throw new SluiceError("STATE_CORRUPT_JOURNAL", `control: ${msg}`);
}

/**
 * Check a checkpoint sequence against the boundary order (throws `code`).
 *
 * @example
 * ```ts
 * import { validateCheckpointSequence } from "./journal.ts";
 * validateCheckpointSequence([
 *   { name: "action_started", action_index: 0, recorded_at: "2026-01-01T00:00:00Z" },
 * ]);
 * ```
 */
export function validateCheckpointSequence(
  checkpoints: Checkpoint[],
  code = "STATE_CORRUPT_JOURNAL",
): void {
  // the last checkpoint of the table is terminal: success follows the whole chain, failure may
  // follow any recorded checkpoint; every other checkpoint follows its predecessor exactly
  const terminal = CHECKPOINT_ORDER.length - 1;
  let pos = -1;
  for (const [i, cp] of checkpoints.entries()) {
    const idx = CHECKPOINT_ORDER.indexOf(cp.name);
    if (idx < 0) throw new SluiceError(code, `checkpoint ${i}: unknown name ${cp.name}`);
    if (pos === terminal) {
      throw new SluiceError(
        code,
        `checkpoint ${i}: ${cp.name} after ${CHECKPOINT_ORDER[terminal]} (terminal)`,
      );
    }
    if (cp.name === "action_completed") {
      if (pos < 0) throw new SluiceError(code, `checkpoint ${i}: ${cp.name} before started`);
      if (cp.outcome === "success" && pos !== terminal - 1) {
        throw new SluiceError(
          code,
          `checkpoint ${i}: ${cp.name}(success) requires ${
            CHECKPOINT_ORDER[terminal - 1]
          } before it`,
        );
      }
      if (cp.outcome !== "success" && cp.outcome !== "failure") {
        throw new SluiceError(code, `checkpoint ${i}: outcome must be success or failure`);
      }
    } else if (idx !== pos + 1) {
      const expected = CHECKPOINT_ORDER[pos + 1];
      throw new SluiceError(
        code,
        `checkpoint ${i}: ${cp.name} out of order (next allowed boundary is ${expected})`,
      );
    }
    if (cp.name === "old_closed") {
      if (cp.exit_code !== 0 && cp.exit_code !== 143) {
        throw new SluiceError(code, `old_closed: raw exit code ${cp.exit_code} is not 0 or 143`);
      }
      if (!Array.isArray(cp.offsets)) throw new SluiceError(code, "old_closed: offsets missing");
      for (const o of cp.offsets) {
        if (
          typeof o?.topic !== "string" || !Number.isSafeInteger(o?.partition) ||
          typeof o?.offset !== "string" || !/^[0-9]+$/.test(o.offset)
        ) {
          throw new SluiceError(code, "old_closed: offsets must be {topic, partition, offset}");
        }
      }
    }
    if (cp.name === "replacement_created" && typeof cp.container_id !== "string") {
      throw new SluiceError(code, "replacement_created: container_id missing");
    }
    pos = idx;
  }
}

/**
 * Verify every sealed entry of a control envelope and parse it.
 *
 * @example
 * ```ts
 * import { openControl } from "./journal.ts";
 * try {
 *   openControl({ format: "sluice.control", version: 9 });
 * } catch (e) {
 *   console.log((e as Error).message);
 * }
 * ```
 */
export function openControl(value: unknown): OpenedControl {
  if (typeof value !== "object" || value === null) corrupt("not an object");
  const d = value as Record<string, unknown>;
  if (d.format !== "sluice.control") corrupt(`unknown format ${JSON.stringify(d.format)}`);
  if (d.status !== "in_progress" && d.status !== "interrupted") corrupt("bad status");
  if (typeof d.operation_id !== "string") corrupt("operation_id missing");
  if (d.version === 3) {
    const c = value as ControlV3;
    if (c.kind === "runner_update") corrupt("runner_update must use envelope version 4 or 5");
    if (c.intent?.operation_id !== c.operation_id) corrupt("intent operation_id mismatch");
    return {
      document: c,
      operation_id: c.operation_id,
      kind: c.kind,
      version: 3,
      status: c.status,
      intent: c.intent,
      actions: [],
      checkpoints: [],
      incidents: Array.isArray(c.incidents) ? c.incidents : corrupt("incidents missing"),
      resume_history: [],
      decisions: [],
    };
  }
  if (d.version !== 4 && d.version !== 5) corrupt(`unsupported version ${d.version}`);
  const c = value as ControlV45;
  if (c.kind !== "runner_update") corrupt(`version ${c.version} holds only runner_update`);
  for (const key of ["actions", "checkpoints", "incidents"] as const) {
    if (!Array.isArray(c[key])) corrupt(`${key} missing`);
  }
  if (c.version === 4 && c.resume_history !== undefined) {
    corrupt("version 4 has no resume_history");
  }
  if (c.version === 5 && (!Array.isArray(c.resume_history) || c.resume_history.length === 0)) {
    corrupt("version 5 requires a non-empty resume_history");
  }
  const intent = unseal<OperationIntent>(c.intent, "control.intent");
  if (intent.operation_id !== c.operation_id || intent.kind !== "runner_update") {
    corrupt("intent does not match the envelope");
  }
  const actions = c.actions.map((a, i) => unseal<RunnerAction>(a, `control.actions[${i}]`));
  const checkpoints = c.checkpoints.map((a, i) =>
    unseal<Checkpoint>(a, `control.checkpoints[${i}]`)
  );
  const incidents = c.incidents.map((a, i) => unseal<Incident>(a, `control.incidents[${i}]`));
  const history = (c.resume_history ?? []).map((a, i) =>
    unseal<ResumeAuthorization>(a, `control.resume_history[${i}]`)
  );
  if (history.length > RESUME_LIMIT) corrupt(`resume_history exceeds ${RESUME_LIMIT}`);
  if (c.decisions !== undefined && (!Array.isArray(c.decisions) || c.decisions.length === 0)) {
    corrupt("decisions, when present, must be a non-empty list");
  }
  const decisions = (c.decisions ?? []).map((a, i) =>
    unseal<OperatorDecision>(a, `control.decisions[${i}]`)
  );
  for (const [i, d] of decisions.entries()) {
    if (d.operation_id !== c.operation_id || d.decision !== "accept_retention_loss") {
      corrupt(`decisions[${i}] is not a decision of this operation`);
    }
  }
  validateCheckpointSequence(checkpoints);
  return {
    document: c,
    operation_id: c.operation_id,
    kind: c.kind,
    version: c.version,
    status: c.status,
    intent,
    actions,
    checkpoints,
    incidents,
    resume_history: history,
    decisions,
  };
}

/**
 * The last checkpoint of a control, or null (intent only).
 *
 * @example
 * ```ts
 * import { lastCheckpoint, type OpenedControl } from "./journal.ts";
 * const name = (c: OpenedControl) => lastCheckpoint(c)?.name ?? "intent";
 * ```
 */
export function lastCheckpoint(control: OpenedControl): Checkpoint | null {
  return control.checkpoints.at(-1) ?? null;
}
