/**
 * Why a runner stopped: the runner's exit codes and stable stop reasons, as the one table the
 * runner and sluice share (`runner/src/main/resources/runner-exits.json`, which the runner
 * loads from its jar and this module imports), and the stop context the runner writes to its
 * status file (`stop`) and its last stdout line (`context`): model, record position, the field
 * and rule that failed, the record's sizes and field names — never a value of the record.
 *
 * @example
 * ```ts
 * import { describeRunnerStop, parseRunnerStop, runnerExit } from "./runner_exits.ts";
 * runnerExit(13)?.kind; // "decode"
 * const statusFileText = '{"sluice_runner_exit": 14, "reason": "OFFSETS_MISSING", "context": {}}';
 * const stop = parseRunnerStop(JSON.parse(statusFileText));
 * if (stop) console.log(describeRunnerStop(stop));
 * ```
 * @module
 */
import table from "../../runner/src/main/resources/runner-exits.json" with { type: "json" };

/** One exit code of the runner container. */
export interface RunnerExitRow {
  code: number;
  /** `finished`, `closed`, `plan`, `plan_checksum`, `identity`, `decode`, `offsets`, `fatal`, … */
  kind: string;
  meaning: string;
}

/** One stable stop reason and the exit code it comes with. */
export interface RunnerReasonRow {
  reason: string;
  exit: number;
  meaning: string;
}

/** The table's format name and version (what the runner's jar and this module read). */
export const RUNNER_EXITS_FORMAT = { format: table.format, version: table.version } as const;

/** Every exit code, in the table's order. */
export const RUNNER_EXITS: ReadonlyArray<RunnerExitRow> = table.exits;

/** Every stop reason, in the table's order. */
export const RUNNER_REASONS: ReadonlyArray<RunnerReasonRow> = table.reasons;

/** The row of an exit code, or null when the runner does not document it. */
export function runnerExit(code: number): RunnerExitRow | null {
  return RUNNER_EXITS.find((e) => e.code === code) ?? null;
}

/**
 * Whether an exit code is a clean close by the table: the runner finished (0) or closed on TERM
 * (143). Alone it proves nothing: the clean-close evidence also needs the status file, no OOM
 * kill and an inactive group (`lib/validation/runner_stop.ts`).
 *
 * @example
 * ```ts
 * import { isCleanCloseExit } from "./runner_exits.ts";
 * console.log(isCleanCloseExit(143), isCleanCloseExit(137)); // true false
 * ```
 */
export function isCleanCloseExit(code: number): boolean {
  return CLEAN_CLOSE_KINDS.has(runnerExit(code)?.kind ?? "");
}

const CLEAN_CLOSE_KINDS = new Set(["finished", "closed"]);

/** The row of a stop reason, or null when the runner does not document it. */
export function runnerReason(reason: string): RunnerReasonRow | null {
  return RUNNER_REASONS.find((r) => r.reason === reason) ?? null;
}

/** Why a runner stopped, from its status file or its last stdout line. */
export interface RunnerStop {
  /** The exit code the runner gave. */
  exit_code: number;
  /** The stable stop reason (`DECODE_WRONG_TYPE`, `SIGTERM`, ...; see `RUNNER_REASONS`). */
  reason: string;
  /** The runner's detail line (names fields and rules, never values). */
  detail: string | null;
  /** The model, once the runner read its plan. */
  model: string | null;
  /** The application ID, once the runner read its plan. */
  application_id: string | null;
  /** The field whose decoding failed (null when the record is malformed or not an object). */
  field: string | null;
  /** The decoding rule that failed. */
  rule: string | null;
  /** The record's position and shape (decode failures). */
  record: {
    /** The input topic. */
    topic: string;
    /** The record's partition. */
    partition: number;
    /** The record's offset (the group's committed offset stays at it). */
    offset: number;
    /** The key's size in bytes. */
    key_bytes: number;
    /** The value's size in bytes. */
    value_bytes: number;
    /** Top-level field names of the record, in document order, as far as it parses. */
    fields: string[];
  } | null;
}

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

function int(v: unknown): number | null {
  return typeof v === "number" && Number.isSafeInteger(v) ? v : null;
}

function record(v: unknown): RunnerStopRecord | null {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return null;
  const r = v as Record<string, unknown>;
  const fields = Array.isArray(r.fields) && r.fields.every((f) => typeof f === "string")
    ? r.fields as string[]
    : null;
  const topic = str(r.topic);
  const partition = int(r.partition);
  const offset = int(r.offset);
  const keyBytes = int(r.key_bytes);
  const valueBytes = int(r.value_bytes);
  if (
    topic === null || partition === null || offset === null || keyBytes === null ||
    valueBytes === null || fields === null
  ) return null;
  return { topic, partition, offset, key_bytes: keyBytes, value_bytes: valueBytes, fields };
}

/**
 * The runner status file versions this sluice reads (docs/runner.md): 2 added `stop`, 3 the
 * offset vectors, 4 `client_id`; each keeps the fields a stop is read from.
 */
const STATUS_VERSIONS: readonly number[] = [1, 2, 3, 4];

/**
 * Read a runner's stop from its status file (format `sluice.runner-status`, version 1 to 4,
 * state FAILED or CLOSED) or from its last stdout line (`{"sluice_runner_exit": …}`). Returns
 * null when the value is neither, or describes no stop (e.g. a RUNNING status).
 * @example
 * ```ts
 * parseRunnerStop({ sluice_runner_exit: 14, reason: "OFFSETS_MISSING", detail: "…", context: {} });
 * ```
 */
export function parseRunnerStop(value: unknown): RunnerStop | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  let exit: number | null;
  let context: unknown;
  if ("sluice_runner_exit" in v) {
    exit = int(v.sluice_runner_exit);
    context = v.context;
  } else if (
    v.format === "sluice.runner-status" && STATUS_VERSIONS.includes(v.version as number)
  ) {
    if (v.state !== "FAILED" && v.state !== "CLOSED") return null;
    exit = int(v.exit_code);
    context = v.stop;
  } else {
    return null;
  }
  const reason = str(v.reason);
  if (exit === null || reason === null) return null;
  const c = context !== null && typeof context === "object" && !Array.isArray(context)
    ? context as Record<string, unknown>
    : {};
  return {
    exit_code: exit,
    reason,
    detail: str(v.detail),
    model: str(c.model),
    application_id: str(c.application_id),
    field: str(c.field),
    rule: str(c.rule),
    record: record(c.record),
  };
}

/**
 * One line a person can act on: reason and exit, model, position, field and rule, the record's
 * size and field names, and the meaning from the table.
 * @example
 * ```ts
 * const stop = parseRunnerStop({ sluice_runner_exit: 14, reason: "OFFSETS_MISSING", context: {} })!;
 * describeRunnerStop(stop); // "OFFSETS_MISSING (exit 14): no committed offset for an input partition"
 * // a decode failure: DECODE_WRONG_TYPE (exit 13) in model eligible_orders at raw_orders-0@9:
 * // field 'amount': the field expects BIGINT, got a string; record 52 bytes (key 3), fields order_id, amount
 * ```
 */
export function describeRunnerStop(stop: RunnerStop): string {
  const parts = [`${stop.reason} (exit ${stop.exit_code})`];
  if (stop.model) parts.push(`in model ${stop.model}`);
  if (stop.record) {
    parts.push(`at ${stop.record.topic}-${stop.record.partition}@${stop.record.offset}`);
  }
  let text = parts.join(" ");
  if (stop.rule) {
    text += `: ${stop.field ? `field '${stop.field}': ` : ""}${stop.rule}`;
  } else {
    const meaning = runnerReason(stop.reason)?.meaning ?? runnerExit(stop.exit_code)?.meaning;
    if (meaning) text += `: ${meaning}`;
  }
  if (stop.record) {
    text += `; record ${stop.record.value_bytes} bytes (key ${stop.record.key_bytes}), fields ${
      stop.record.fields.length > 0 ? stop.record.fields.join(", ") : "none readable"
    }`;
  }
  return text;
}

/** Where the record that stopped the runner was, and its shape (sizes and names only). */
export type RunnerStopRecord = NonNullable<RunnerStop["record"]>;
