/**
 * The live preview: what a changed filter would let through or drop, measured on the last N
 * records of each changed model's input partitions before anything changes. The records are
 * read read_committed, without a consumer group (nothing joins, nothing is committed: see
 * `KafkaPort.readRecords`), decoded with the runner's strict decoder (`lib/expr/decode.ts`)
 * and filtered with the evaluator the shared vectors prove equal to the runner's
 * (`lib/expr/evaluate.ts`) under the old and the new predicate.
 *
 * Bounded: N records per model (default 1,000), a byte budget and a deadline; a read that hits
 * a bound says so (`stopped`). It never mutates anything and is never required for apply. Its
 * counts (not the records) may be sealed into the plan; the examples show only the model's
 * output columns, with secret-named columns redacted.
 *
 * @example
 * ```ts
 * import { previewTargets, sampleModel } from "./preview.ts";
 * // for (const t of previewTargets(plan)) console.log(await sampleModel(kafka, t));
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { isSensitiveKey, REDACTED } from "../artifact/redact.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import type { Expr } from "../expr/ast.ts";
import { decodeRecord } from "../expr/decode.ts";
import { evaluate } from "../expr/evaluate.ts";
import type { SchemaField, Value } from "../expr/schema.ts";
import type { Plan } from "../plan/plan.ts";
import type { PreviewSummary } from "../plan/preview_summary.ts";
import type { KafkaPort, PartitionSlice, SampledRecord } from "../providers/kafka/port.ts";

/** What to preview for one model. */
export interface PreviewTarget {
  model: string;
  input_topic: string;
  schema: SchemaField[];
  projection: Array<{ source: string; name: string }>;
  /** The running predicate; null for a model that does not run yet (nothing admitted). */
  old: Expr | null;
  new: Expr;
}

/** Bounds of a preview. */
export interface PreviewLimits {
  /** Records per model (default 1,000). */
  records: number;
  /** Key+value bytes read per model (default 16 MiB). */
  maxBytes: number;
  /** Time per model in ms (default 15 s). */
  timeoutMs: number;
}

/** The default bounds. */
export const PREVIEW_DEFAULTS: PreviewLimits = {
  records: 1000,
  maxBytes: 16 * 1024 * 1024,
  timeoutMs: 15_000,
};

/** The preview of one model: its sealed summary plus what only a reviewer sees. */
export interface PreviewModel extends PreviewSummary {
  /** The N asked for. */
  requested: number;
  /** The offsets read per partition: `[from, to)` (decimal strings). */
  partitions: Array<{ partition: number; from: string; to: string }>;
  /** Up to 5 records of each flip, output columns only. */
  examples: Record<
    "newly_admitted" | "newly_dropped",
    Array<{
      /** The partition. */
      partition: number;
      /** The offset (decimal). */
      offset: string;
      /** The model's output columns of the record. */
      values: Record<string, string | number | boolean | null>;
    }>
  >;
  /** Up to 5 undecodable records with the runner's reason. */
  undecodable_examples: Array<
    { partition: number; offset: string; code: string; field: string | null; message: string }
  >;
}

const EXAMPLES = 5;

/**
 * The models a plan would change whose filter can be previewed: a predicate replacement (old
 * and new predicate) or a new runner (no old predicate).
 * @example
 * ```ts
 * import type { Plan } from "../plan/plan.ts";
 * const changed = (plan: Plan) => previewTargets(plan).map((t) => t.model);
 * ```
 */
export function previewTargets(plan: Plan): PreviewTarget[] {
  const out: PreviewTarget[] = [];
  for (const a of plan.actions) {
    if (a.type === "replace_runner_predicate") {
      const prior = a.evidence.prior_artifact as unknown as RunnerArtifact;
      const desired = a.evidence.desired_artifact as unknown as RunnerArtifact;
      out.push(targetOf(desired, prior.predicate));
    } else if (a.type === "create_runner") {
      const desired = plan.artifacts.find((x) => x.model === a.model)?.artifact;
      if (desired) out.push(targetOf(desired, null));
    }
  }
  return out;
}

function targetOf(a: RunnerArtifact, old: Expr | null): PreviewTarget {
  return {
    model: a.model,
    input_topic: a.input.topic,
    schema: a.schema,
    projection: a.projection,
    old,
    new: a.predicate,
  };
}

/**
 * Read the last `limits.records` records of the target's input topic (read-only, group-less)
 * and evaluate them.
 * @example
 * ```ts
 * import type { KafkaPort } from "../providers/kafka/port.ts";
 * async function dropped(kafka: KafkaPort, target: PreviewTarget) {
 *   const m = await sampleModel(kafka, target, { ...PREVIEW_DEFAULTS, records: 100 });
 *   return m.newly_dropped;
 * }
 * ```
 */
export async function sampleModel(
  kafka: KafkaPort,
  target: PreviewTarget,
  limits: PreviewLimits = PREVIEW_DEFAULTS,
  now: () => Date = () => new Date(),
): Promise<PreviewModel> {
  const sampledAt = now().toISOString();
  if (!kafka.readRecords) {
    throw new SluiceError(
      "ENV_PREVIEW_UNAVAILABLE",
      "this Kafka port cannot read records, so no preview can be made (plan without --preview)",
    );
  }
  const deadline = Date.now() + limits.timeoutMs;
  const { topics } = await kafka.describe([target.input_topic]);
  const topic = topics.get(target.input_topic);
  if (!topic) {
    return evaluateSample(target, [], { limits, sampledAt, slices: [], stopped: null });
  }
  const partitions = [...Array(topic.partitions).keys()];
  const ranges = await kafka.offsetRanges(target.input_topic, partitions);
  const n = BigInt(limits.records);
  const slices: PartitionSlice[] = ranges
    .map((r) => ({
      partition: r.partition,
      from: r.latest - n > r.earliest ? r.latest - n : r.earliest,
      to: r.latest,
    }))
    .filter((s) => s.to > s.from);
  const read = await kafka.readRecords(target.input_topic, slices, {
    maxBytes: limits.maxBytes,
    deadline,
  });
  return evaluateSample(target, read.records, {
    limits,
    sampledAt,
    slices,
    stopped: read.stopped,
  });
}

/**
 * Evaluate sampled records (pure): keep the `limits.records` most recent across partitions,
 * decode each strictly, evaluate old and new predicate, count and pick examples.
 * @example
 * ```ts
 * import type { SampledRecord } from "../providers/kafka/port.ts";
 * function evaluate(target: PreviewTarget, records: SampledRecord[]) {
 *   return evaluateSample(target, records, {
 *     limits: PREVIEW_DEFAULTS,
 *     sampledAt: new Date().toISOString(),
 *     slices: [],
 *     stopped: null,
 *   });
 * }
 * ```
 */
export function evaluateSample(
  target: PreviewTarget,
  records: SampledRecord[],
  meta: {
    limits: PreviewLimits;
    sampledAt: string;
    slices: PartitionSlice[];
    stopped: PreviewSummary["stopped"];
  },
): PreviewModel {
  // "the last N records" of the topic: the most recent by timestamp, then by position
  const recent = [...records].sort((a, b) =>
    cmp(b.timestamp, a.timestamp) || a.partition - b.partition || cmp(b.offset, a.offset)
  ).slice(0, meta.limits.records)
    .sort((a, b) => a.partition - b.partition || cmp(a.offset, b.offset));
  const m: PreviewModel = {
    model: target.model,
    input_topic: target.input_topic,
    sampled: 0,
    admitted_old: 0,
    admitted_new: 0,
    newly_admitted: 0,
    newly_dropped: 0,
    undecodable: 0,
    undecodable_by_reason: {},
    tombstones: 0,
    stopped: meta.stopped,
    sampled_at: meta.sampledAt,
    requested: meta.limits.records,
    partitions: meta.slices.map((s) => ({
      partition: s.partition,
      from: s.from.toString(),
      to: s.to.toString(),
    })),
    examples: { newly_admitted: [], newly_dropped: [] },
    undecodable_examples: [],
  };
  for (const r of recent) {
    if (r.value === null) {
      m.tombstones++; // the runner drops a tombstone before decoding
      continue;
    }
    m.sampled++;
    const decoded = decodeRecord(r.value, target.schema);
    if (!decoded.ok) {
      m.undecodable++;
      m.undecodable_by_reason[decoded.code] = (m.undecodable_by_reason[decoded.code] ?? 0) + 1;
      if (m.undecodable_examples.length < EXAMPLES) {
        m.undecodable_examples.push({
          partition: r.partition,
          offset: r.offset.toString(),
          code: decoded.code,
          field: decoded.field,
          message: decoded.message,
        });
      }
      continue;
    }
    // only TRUE passes: UNKNOWN (null) drops the record, as in the runner
    const before = target.old !== null && evaluate(target.old, decoded.values) === true;
    const after = evaluate(target.new, decoded.values) === true;
    if (before) m.admitted_old++;
    if (after) m.admitted_new++;
    if (after && !before) {
      m.newly_admitted++;
      if (m.examples.newly_admitted.length < EXAMPLES) {
        m.examples.newly_admitted.push(example(target, r, decoded.values));
      }
    } else if (before && !after) {
      m.newly_dropped++;
      if (m.examples.newly_dropped.length < EXAMPLES) {
        m.examples.newly_dropped.push(example(target, r, decoded.values));
      }
    }
  }
  return m;
}

/** The sealed part of a preview: counts only, never records. */
export function previewSummary(m: PreviewModel): PreviewSummary {
  return {
    model: m.model,
    input_topic: m.input_topic,
    sampled: m.sampled,
    admitted_old: m.admitted_old,
    admitted_new: m.admitted_new,
    newly_admitted: m.newly_admitted,
    newly_dropped: m.newly_dropped,
    undecodable: m.undecodable,
    undecodable_by_reason: { ...m.undecodable_by_reason },
    tombstones: m.tombstones,
    stopped: m.stopped,
    sampled_at: m.sampled_at,
  };
}

function example(
  target: PreviewTarget,
  r: SampledRecord,
  values: Record<string, Value>,
): PreviewExample {
  const out: PreviewExample["values"] = {};
  for (const c of target.projection) {
    const v = values[c.source];
    out[c.name] = isSensitiveKey(c.name) || isSensitiveKey(c.source)
      ? (v === null ? null : REDACTED)
      : typeof v === "bigint"
      ? v.toString()
      : v;
  }
  return { partition: r.partition, offset: r.offset.toString(), values: out };
}

function cmp(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One example record: where it is and its output columns (BIGINT as decimal text). */
export type PreviewExample = PreviewModel["examples"]["newly_admitted"][number];
