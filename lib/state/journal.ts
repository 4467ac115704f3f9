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
import { type ErrorCode, SluiceError } from "../errors.ts";
import { canonicalJson, type Json, sha256Hex } from "./_canonical.ts";
import { CHECKPOINT_ORDER, type CheckpointName } from "../protocol/replacement.ts";

/** Maximum resume authorizations per operation; the next one is BLOCKED_RESUME_LIMIT. */
export const RESUME_LIMIT = 32;

/** One journal entry: its exact canonical-JSON bytes and their sha256. */
export interface SealedEntry {
  /** The entry's canonical JSON text, exactly as stored. */
  bytes: string;
  /** The sha256 of those bytes (hex). */
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
  /** The input topic. */
  topic: string;
  /** The partition number. */
  partition: number;
  /** The committed offset, as a decimal string. */
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
  /** The only typed action: replace a running runner's predicate. */
  type: "replace_runner_predicate";
  /** The model whose runner is replaced. */
  model: string;
  /** Its application ID (kept by the replacement). */
  application_id: string;
  /** The sha256 of the running (prior) artifact. */
  prior_artifact_sha256: string;
  /** The sha256 of the reviewed (desired) artifact. */
  desired_artifact_sha256: string;
  /** Reviewed evidence (container ID, volume instance, offsets lower bounds, ...). */
  evidence: { [key: string]: Json };
}

/** The recorded intent of an operation. */
export interface OperationIntent {
  /** The operation's UUID. */
  operation_id: string;
  /** The operation kind (`create`, `runner_update`, ...). */
  kind: string;
  /** The project name. */
  project: string;
  /** The environment, or null for a single-environment project. */
  environment: string | null;
  /** Who started the operation. */
  actor: string;
  /** When the intent was recorded (RFC 3339). */
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
  /** The incident's UUID. */
  incident_id: string;
  /** The interrupted operation. */
  operation_id: string;
  /** Who recorded the interruption. */
  actor: string;
  /** When it was recorded (RFC 3339). */
  recorded_at: string;
  /** Last durable checkpoint when the interruption was recorded (null: intent only). */
  last_checkpoint: CheckpointName | null;
  /** How many checkpoints were durable at the interruption. */
  checkpoint_count: number;
  /** Why the operation was interrupted. */
  reason: string;
}

/** What the caller supplies to authorize a resume. */
export interface ResumeRecord {
  /** The authorization's UUID. */
  authorization_id: string;
  /** Who authorized the resume. */
  actor: string;
  /** When it was authorized (RFC 3339). */
  authorized_at: string;
  /** The full recovery record (runner-status evidence) that justified the resume. */
  recovery: { [key: string]: Json };
}

/** Identity of a state store: generated UUID and a redacted address. */
export interface StoreIdentity {
  /** The store's generated UUID. */
  store_id: string;
  /** The backend kind. */
  backend: "local" | "postgres";
  /** Where the store is (credentials redacted). */
  address: string;
}

/** One resume_history entry (what the store archives for an authorization). */
export interface ResumeAuthorization {
  /** The authorization's UUID. */
  authorization_id: string;
  /** The resumed operation. */
  operation_id: string;
  /** Who authorized the resume. */
  actor: string;
  /** When it was authorized (RFC 3339). */
  authorized_at: string;
  /** The store that recorded it. */
  store: StoreIdentity;
  /** Checksum of the ownership document the operation started from. */
  original_state_checksum: string;
  /** How far the operation had come when it was resumed. */
  progress: { checkpoint_count: number; last_checkpoint: CheckpointName | null };
  /** The sha256 of the control document that was resumed. */
  interrupted_control_sha256: string;
  /** The runner-status evidence that justified the resume. */
  recovery: { [key: string]: Json };
}

/** Control envelope version 3: every operation kind except runner_update. */
export interface ControlV3 {
  /** Document format name. */
  format: "sluice.control";
  /** Envelope version. */
  version: 3;
  /** The operation's UUID. */
  operation_id: string;
  /** The operation kind. */
  kind: string;
  /** In progress under its lock, or interrupted (an incident was recorded). */
  status: "in_progress" | "interrupted";
  /** The recorded intent. */
  intent: OperationIntent;
  /** Recorded interruptions. */
  incidents: Incident[];
}

/** Control envelope version 4/5: a typed runner update with sealed entries. */
export interface ControlV45 {
  /** Document format name. */
  format: "sluice.control";
  /** Envelope version (5 adds the resume history). */
  version: 4 | 5;
  /** The operation's UUID. */
  operation_id: string;
  /** Always a runner update. */
  kind: "runner_update";
  /** In progress under its lock, or interrupted (an incident was recorded). */
  status: "in_progress" | "interrupted";
  /** Lock UUID of the holder that began or last resumed the operation. */
  holder_lock_id: string;
  /** The sealed intent. */
  intent: SealedEntry;
  /** The sealed typed actions. */
  actions: SealedEntry[];
  /** The sealed checkpoints, in order. */
  checkpoints: SealedEntry[];
  /** The sealed interruptions. */
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
  /** The decision's UUID. */
  decision_id: string;
  /** Which decision (the only one a runner update can receive today). */
  decision: "accept_retention_loss";
  /** The pending operation it is about. */
  operation_id: string;
  /** Who decided. */
  actor: string;
  /** When (ISO 8601). */
  recorded_at: string;
  /** Why (required). */
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

/**
 * The control envelope versions this sluice reads and writes: 3 for every operation kind but
 * `runner_update`, 4 and 5 for it (5 after its first resume).
 */
export const CONTROL_VERSIONS: readonly ControlDocument["version"][] = [3, 4, 5];

/** A control envelope with its sealed entries verified and parsed. */
export interface OpenedControl {
  /** The stored envelope. */
  document: ControlDocument;
  /** The operation's UUID. */
  operation_id: string;
  /** The operation kind. */
  kind: string;
  /** The envelope version. */
  version: 3 | 4 | 5;
  /** In progress under its lock, or interrupted. */
  status: "in_progress" | "interrupted";
  /** The recorded intent. */
  intent: OperationIntent;
  /** The typed actions (one for a replacement). */
  actions: RunnerAction[];
  /** The durable checkpoints, in order. */
  checkpoints: Checkpoint[];
  /** Recorded interruptions. */
  incidents: Incident[];
  /** Resume authorizations, in order. */
  resume_history: ResumeAuthorization[];
  /** The operator's recorded decisions, in order. */
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
  code: ErrorCode = "STATE_CORRUPT_JOURNAL",
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
  if (!CONTROL_VERSIONS.includes(d.version as 3)) corrupt(`unsupported version ${d.version}`);
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
