/**
 * Drift: a change made to an owned runner outside sluice, found by comparing what Docker and
 * Kafka report with what sluice and the runner recorded. What `plan` (`BLOCKED_RUNNER_DRIFT`) and
 * `status` (`drift`) report instead of accepting it as a no-op, what `restart` and `skip-record`
 * refuse (`BLOCKED_OFFSETS_MOVED`), and what `sluice acknowledge-drift` accepts explicitly. Two
 * kinds:
 *
 * **A runner started again outside sluice** (`started_outside_sluice`). Docker keeps a
 * container's `FinishedAt` (its last stop) while it runs again. sluice starts a generation's
 * container only inside the operation that creates it (before that operation commits: a
 * create's or a candidate's start, and their restarts before RUNNING), or through `sluice
 * restart`/`skip-record`, which records the stop it restarts (`runner_restarted`: the
 * container's ID and `FinishedAt`). So a running container whose last stop came after its
 * generation was committed (the `ownership_committed` or `runner_completed` event of the
 * operation its labels name) and that no `runner_restarted` event names was started by someone
 * else (`docker start`, `docker restart`). Both times are read from the same host's clock in
 * practice (the daemon's and sluice's); a generation whose commit is not in the history is not
 * judged.
 *
 * **Offsets moved while the runner was stopped** (`offsets_moved_while_stopped`), per partition
 * with the offset before and after. The runner writes offset vectors into its status file
 * (docs/runner.md, "Offset vectors"): `start_offsets` (what its identity gate found at this
 * start), `close_offsets` (the group's committed offsets read after a clean close, its own
 * exactly-once commit included, so the runner's progress is never drift) and `previous_close`
 * (the close of the run before, carried into the next run). The status file must be this run's
 * (its `started_at` not before the container's `StartedAt`). Then:
 *
 * - a container stopped by a clean close (exit 143, status `CLOSED` with `close_offsets`): every
 *   input partition whose committed offset now differs from its close vector (`close_vector`);
 * - a running container: every partition whose start vector differs from the previous run's
 *   close vector (`start_vector`) — moved between that close and this start — when that run was
 *   the same generation (a replacement's offsets are sluice's own);
 * - any other stop (a kill, 137; a failure): nothing records where the group was at the stop,
 *   but the runner never commits below where it started, so a committed offset below the start
 *   vector was moved back (`rewound_below_start`). A forward move after a kill is not knowable.
 *
 * A decode stop (exit 13) names its record; `restart` and `skip-record` also hold the group to
 * that record's offset (their own rule, `restartBlockers`).
 *
 * **Acknowledged.** A drift an operator accepted with `sluice acknowledge-drift MODEL --reason
 * TEXT` (history event `drift_acknowledged`, which records the drifts exactly) is not reported
 * again: an event matches a drift of the same kind, container ID and stop (`FinishedAt`, and for
 * a hand start its `StartedAt`), and for offsets the same partitions with the same before and
 * after. A later change is a new drift.
 *
 * @example
 * ```ts
 * import { runnerDrift } from "./drift.ts";
 * import type { ContainerEvidence } from "./observation.ts";
 * import type { HistoryEvent } from "../state/history.ts";
 * const drifted = (c: ContainerEvidence, h: HistoryEvent[], committed: Record<string, string>) =>
 *   runnerDrift(c, h, { topic: "raw_orders", committed }) !== null;
 * ```
 * @module
 */
import type {
  HistoryEvent,
  MovedPartition,
  OffsetsMovedWhileStopped,
  RunnerDrift,
  StartedOutsideSluice,
} from "../state/history.ts";
import type { ContainerEvidence } from "./observation.ts";

// the drifts' shapes are what the history stores (`drift_acknowledged` records them exactly)
export type { MovedPartition, OffsetsMovedWhileStopped, RunnerDrift, StartedOutsideSluice };

/**
 * The runner's group as observed now: its input topic and committed offset per partition
 * (decimal strings; the observation's `target.inputTopic` and `kafka.committed`).
 */
export interface GroupOffsets {
  /** The input topic. */
  topic: string;
  /** Committed offset per partition. */
  committed: Readonly<Record<string, string>>;
}

const ZERO_TIME = /^0001-01-01T/;

/**
 * The first drift of an owned runner's container that no `drift_acknowledged` event accepts, or
 * null (see the module documentation).
 *
 * @example
 * ```ts
 * import { runnerDrift } from "./drift.ts";
 * import type { ContainerEvidence } from "./observation.ts";
 * declare const c: ContainerEvidence;
 * console.log(runnerDrift(c, [], { topic: "raw_orders", committed: { "0": "12" } })?.summary ?? "no drift");
 * ```
 */
export function runnerDrift(
  c: ContainerEvidence,
  events: readonly HistoryEvent[],
  group: GroupOffsets,
): RunnerDrift | null {
  return runnerDrifts(c, events, group).unacknowledged[0] ?? null;
}

/**
 * Every drift found for a container, split into those an acknowledgment accepts (with its event
 * ID) and those none does.
 *
 * @example
 * ```ts
 * import { runnerDrifts } from "./drift.ts";
 * import type { ContainerEvidence } from "./observation.ts";
 * declare const c: ContainerEvidence;
 * const { unacknowledged } = runnerDrifts(c, [], { topic: "raw_orders", committed: {} });
 * console.log(unacknowledged.length);
 * ```
 */
export function runnerDrifts(
  c: ContainerEvidence,
  events: readonly HistoryEvent[],
  group: GroupOffsets,
): {
  unacknowledged: RunnerDrift[];
  acknowledged: Array<{ drift: RunnerDrift; event_id: string }>;
} {
  const found = [startedOutsideSluice(c, events), offsetsMoved(c, group)]
    .filter((d): d is RunnerDrift => d !== null);
  const unacknowledged: RunnerDrift[] = [];
  const acknowledged: Array<{ drift: RunnerDrift; event_id: string }> = [];
  for (const d of found) {
    const by = acknowledgmentOf(d, events);
    if (by) acknowledged.push({ drift: d, event_id: by });
    else unacknowledged.push(d);
  }
  return { unacknowledged, acknowledged };
}

/** The identity of a drift an acknowledgment must name (kind, container, stop, partitions). */
export function driftKey(d: RunnerDrift): string {
  if (d.kind === "started_outside_sluice") {
    return JSON.stringify([d.kind, d.container_id, d.stopped_at, d.started_at]);
  }
  return JSON.stringify([
    d.kind,
    d.container_id,
    d.stopped_at,
    d.partitions.map((p) => [p.topic, p.partition, p.before, p.after]),
  ]);
}

function acknowledgmentOf(d: RunnerDrift, events: readonly HistoryEvent[]): string | null {
  const key = driftKey(d);
  for (const e of events) {
    if (e.kind !== "drift_acknowledged") continue;
    if (e.drifts.some((x) => driftKey(x) === key)) return e.event_id;
  }
  return null;
}

/**
 * What to do about a drift, in words naming the commands (plan's blocker message; the runbook's
 * `BLOCKED_RUNNER_DRIFT` entry says the same).
 *
 * @example
 * ```ts
 * import { driftNextStep, type RunnerDrift } from "./drift.ts";
 * declare const d: RunnerDrift;
 * console.log(driftNextStep(d, "eligible_orders"));
 * ```
 */
export function driftNextStep(d: RunnerDrift, model: string): string {
  const ack =
    `'sluice acknowledge-drift ${model} --reason TEXT' accepts it (recorded in the audit)`;
  if (d.kind === "started_outside_sluice") {
    return `stop it with 'docker stop -t 30 ${d.container}', then 'sluice restart ${model} --reason TEXT' records it; or ${ack}`;
  }
  const resets = d.partitions.filter((p) => p.before !== null).map((p) =>
    `--topic ${p.topic}:${p.partition} --to-offset ${p.before}`
  );
  const putBack = d.running
    ? `stop it with 'docker stop -t 30 ${d.container}' and put them back`
    : "put them back";
  return `${putBack} while the group is Empty (kafka-consumer-groups --reset-offsets ${
    resets.join(" ")
  }) and plan again; or ${ack}${d.running ? "" : `, then 'sluice restart ${model} --reason TEXT'`}`;
}

function startedOutsideSluice(
  c: ContainerEvidence,
  events: readonly HistoryEvent[],
): StartedOutsideSluice | null {
  if (!c.running || c.finishedAt === "" || ZERO_TIME.test(c.finishedAt)) return null;
  const op = c.labels.operationId;
  if (!op) return null;
  const committed = events.filter((e): e is Extract<
    HistoryEvent,
    { kind: "ownership_committed" | "runner_completed" }
  > => (e.kind === "ownership_committed" || e.kind === "runner_completed") && e.operation_id === op)
    .at(-1);
  if (!committed) return null;
  const stoppedAt = Date.parse(c.finishedAt);
  if (!(stoppedAt > Date.parse(committed.recorded_at))) return null;
  const recorded = events.some((e) =>
    e.kind === "runner_restarted" && e.container.id === c.id &&
    e.container.finished_at === c.finishedAt
  );
  if (recorded) return null;
  return {
    kind: "started_outside_sluice",
    container: c.name,
    container_id: c.id,
    stopped_at: c.finishedAt,
    started_at: c.startedAt,
    committed_at: committed.recorded_at,
    summary:
      `started again outside sluice: ${c.name} stopped at ${c.finishedAt} and was started at ${c.startedAt} with no restart recorded (docker start?)`,
  };
}

/** A partition → decimal offset map from the status file, or null when it is not one. */
function vector(v: unknown): Record<string, string> | null {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return null;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (!/^(0|[1-9][0-9]*)$/.test(k) || typeof x !== "string" || !/^(0|[1-9][0-9]*)$/.test(x)) {
      return null;
    }
    out[k] = x;
  }
  return out;
}

/** The status file was written by the container's current (or last) run. */
function statusOfThisRun(c: ContainerEvidence): Record<string, unknown> | null {
  const s = c.runnerStatus;
  if (!s || typeof s.started_at !== "string" || !c.everStarted) return null;
  const since = Math.floor(Date.parse(c.startedAt) / 1000) * 1000;
  if (!(Date.parse(s.started_at) >= since)) return null;
  if (s.generation !== c.labels.generation) return null;
  return s;
}

function offsetsMoved(
  c: ContainerEvidence,
  group: GroupOffsets,
): OffsetsMovedWhileStopped | null {
  const s = statusOfThisRun(c);
  if (!s) return null;
  const { topic, committed } = group;
  let evidence: OffsetsMovedWhileStopped["evidence"];
  let before: Record<string, string> | null;
  let after: Record<string, string | undefined>;
  let recordedAt: string | null;
  let moved: (b: string | null, a: string | null) => boolean = (b, a) => b !== a;
  if (c.running) {
    const prev = s.previous_close as Record<string, unknown> | null | undefined;
    // only a close of this generation: a new generation's volume may hold the one it replaced
    if (prev?.generation !== s.generation) return null;
    before = vector(prev?.close_offsets);
    const start = vector(s.start_offsets);
    if (!before || !start) return null;
    after = start;
    evidence = "start_vector";
    recordedAt = typeof prev?.closed_at === "string" ? prev.closed_at : null;
  } else if (
    c.exitCode === 143 && !c.oomKilled && s.state === "CLOSED" && s.exit_code === 143
  ) {
    before = vector(s.close_offsets);
    if (!before) return null;
    after = committed;
    evidence = "close_vector";
    recordedAt = typeof s.updated_at === "string" ? s.updated_at : null;
  } else {
    before = vector(s.start_offsets);
    if (!before) return null;
    after = committed;
    evidence = "rewound_below_start";
    recordedAt = typeof s.running_at === "string" ? s.running_at : null;
    // the runner only moves forward from where it started (and sluice's skip by one, forward)
    moved = (b, a) => b !== null && (a === null || BigInt(a) < BigInt(b));
  }
  const partitions = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .map(Number).sort((a, b) => a - b)
    .map((p) => ({
      topic,
      partition: p,
      before: before![String(p)] ?? null,
      after: after[String(p)] ?? null,
    }))
    .filter((p) => moved(p.before, p.after));
  if (partitions.length === 0) return null;
  const list = partitions.map((p) =>
    `${p.topic}-${p.partition} ${p.before ?? "none"} → ${p.after ?? "none"}`
  ).join(", ");
  const what = evidence === "close_vector"
    ? `committed offsets moved while ${c.name} was stopped (since its clean close at ${
      recordedAt ?? c.finishedAt
    })`
    : evidence === "start_vector"
    ? `${c.name} started at ${c.startedAt} on committed offsets moved after its previous clean close${
      recordedAt ? ` at ${recordedAt}` : ""
    }`
    : `committed offsets moved back below where ${c.name} started, after it stopped (exit ${c.exitCode}) at ${c.finishedAt}`;
  return {
    kind: "offsets_moved_while_stopped",
    container: c.name,
    container_id: c.id,
    stopped_at: c.finishedAt,
    started_at: c.startedAt,
    running: c.running,
    evidence,
    recorded_at: recordedAt,
    partitions,
    summary: `offsets moved outside sluice: ${what}: ${list}`,
  };
}
