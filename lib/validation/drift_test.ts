// Offsets moved while the runner was stopped (issue 18 item 4): the runner's offset vectors in its
// status file against the group's committed offsets, and explicit acknowledgments.
import assert from "node:assert/strict";
import type { ContainerEvidence } from "./observation.ts";
import type { DriftAcknowledged, HistoryEvent } from "../state/history.ts";
import { driftNextStep, runnerDrift, runnerDrifts } from "./drift.ts";

const TOPIC = "raw_orders";
const STARTED = "2026-12-01T00:00:00.123456789Z";
const FINISHED = "2026-12-01T00:05:00.5Z";

function container(
  over: Partial<ContainerEvidence>,
  status: Record<string, unknown> | null,
): ContainerEvidence {
  return {
    id: "a".repeat(64),
    name: "sluice-orders-eligible_orders",
    status: "exited",
    running: false,
    exitCode: 143,
    oomKilled: false,
    startedAt: STARTED,
    finishedAt: FINISHED,
    everStarted: true,
    imageId: "sha256:img",
    networkMode: "net",
    networks: {},
    mounts: [],
    labels: {
      applicationId: "sluice-orders-eligible_orders",
      artifactSha256: "d".repeat(64),
      planSha256: "p",
      generation: "g1",
      operationId: null,
      actionIndex: null,
      evidenceFingerprint: null,
    },
    plan: {
      sha256: "p",
      matchesLabel: true,
      artifactSha256: "d".repeat(64),
      identity: null,
      error: null,
      text: null,
    },
    environment: { ok: true, unexpected: [], missing: [] },
    execution: { ok: true, problems: [] },
    volumeInstance: "vol",
    runnerStatus: status,
    ...over,
  } as ContainerEvidence;
}

/** The status file a runner of version 3 leaves after a clean close. */
function closed(close: Record<string, string> | null, over: Record<string, unknown> = {}) {
  return {
    format: "sluice.runner-status",
    version: 3,
    generation: "g1",
    state: "CLOSED",
    exit_code: 143,
    reason: "SIGTERM",
    started_at: "2026-12-01T00:00:00.400Z",
    running_at: "2026-12-01T00:00:03Z",
    updated_at: "2026-12-01T00:05:00.4Z",
    start_offsets: { "0": "0", "1": "0" },
    close_offsets: close,
    previous_close: null,
    ...over,
  };
}

const group = (committed: Record<string, string>) => ({ topic: TOPIC, committed });

Deno.test("a clean close's own commit is no drift: the group holds exactly the close vector", () => {
  const c = container({}, closed({ "0": "7", "1": "3" }));
  assert.equal(runnerDrift(c, [], group({ "0": "7", "1": "3" })), null);
});

Deno.test("offsets moved after a clean close are drift, per partition before and after", () => {
  const c = container({}, closed({ "0": "7", "1": "3" }));
  const d = runnerDrift(c, [], group({ "0": "2", "1": "3" }));
  assert.ok(d && d.kind === "offsets_moved_while_stopped");
  assert.equal(d.evidence, "close_vector");
  assert.equal(d.running, false);
  assert.equal(d.stopped_at, FINISHED);
  assert.deepEqual(d.partitions, [{ topic: TOPIC, partition: 0, before: "7", after: "2" }]);
  assert.match(d.summary, /raw_orders-0 7 → 2/);
  // forward counts too: nothing may consume with the group while the runner is stopped
  const fwd = runnerDrift(c, [], group({ "0": "7", "1": "9" }));
  assert.ok(fwd && fwd.kind === "offsets_moved_while_stopped");
  assert.deepEqual(fwd.partitions, [{ topic: TOPIC, partition: 1, before: "3", after: "9" }]);
  // a partition whose offset was deleted
  const gone = runnerDrift(c, [], group({ "0": "7" }));
  assert.ok(gone && gone.kind === "offsets_moved_while_stopped");
  assert.deepEqual(gone.partitions, [{ topic: TOPIC, partition: 1, before: "3", after: null }]);
  assert.match(
    driftNextStep(d, "eligible_orders"),
    /--reset-offsets --topic raw_orders:0 --to-offset 7.*sluice acknowledge-drift eligible_orders --reason TEXT.*sluice restart eligible_orders/,
  );
});

Deno.test("a status file of an earlier run, of another generation, or without a close vector is not judged", () => {
  const moved = group({ "0": "2", "1": "3" });
  // written before the container's current start (a SIGTERM before the plan was read)
  const stale = closed({ "0": "7", "1": "3" }, { started_at: "2026-11-30T23:00:00Z" });
  assert.equal(runnerDrift(container({}, stale), [], moved), null);
  const other = closed({ "0": "7", "1": "3" }, { generation: "g0" });
  assert.equal(runnerDrift(container({}, other), [], moved), null);
  // a close whose offsets the runner could not read, and a version-2 runner
  assert.equal(runnerDrift(container({}, closed(null)), [], moved), null);
  const v2 = closed(null);
  delete (v2 as Record<string, unknown>).close_offsets;
  assert.equal(runnerDrift(container({}, v2), [], moved), null);
  assert.equal(runnerDrift(container({}, null), [], moved), null);
});

Deno.test("after a kill only a move below where the run started is knowable", () => {
  const running = {
    ...closed(null),
    state: "RUNNING",
    exit_code: null,
    reason: null,
    start_offsets: { "0": "5", "1": "5" },
  };
  const killed = container({ exitCode: 137 }, running);
  // progress past the start is the runner's own (uncommitted-at-kill work aside)
  assert.equal(runnerDrift(killed, [], group({ "0": "9", "1": "5" })), null);
  const d = runnerDrift(killed, [], group({ "0": "1", "1": "6" }));
  assert.ok(d && d.kind === "offsets_moved_while_stopped");
  assert.equal(d.evidence, "rewound_below_start");
  assert.deepEqual(d.partitions, [{ topic: TOPIC, partition: 0, before: "5", after: "1" }]);
});

Deno.test("a runner started on offsets moved after its previous close is drift while it runs", () => {
  const status = {
    ...closed(null),
    state: "RUNNING",
    exit_code: null,
    reason: null,
    start_offsets: { "0": "2", "1": "3" },
    previous_close: {
      close_offsets: { "0": "7", "1": "3" },
      closed_at: "2026-12-01T00:05:00.4Z",
      generation: "g1",
      plan_sha256: "p",
    },
    started_at: "2026-12-01T00:10:00.2Z",
  };
  const c = container(
    { running: true, status: "running", startedAt: "2026-12-01T00:10:00.1Z" },
    status,
  );
  const d = runnerDrift(c, [], group({ "0": "40", "1": "50" }));
  assert.ok(d && d.kind === "offsets_moved_while_stopped");
  assert.equal(d.evidence, "start_vector");
  assert.equal(d.running, true);
  assert.deepEqual(d.partitions, [{ topic: TOPIC, partition: 0, before: "7", after: "2" }]);
  // the previous close was another generation's (a replacement's volume): not compared
  const replaced = {
    ...status,
    previous_close: { ...status.previous_close, generation: "g0" },
  };
  assert.equal(runnerDrift(container({ running: true }, replaced), [], group({})), null);
  // started where it closed: nothing moved
  const same = { ...status, start_offsets: { "0": "7", "1": "3" } };
  assert.equal(runnerDrift(container({ running: true }, same), [], group({})), null);
});

function ack(drifts: ReturnType<typeof runnerDrifts>["unacknowledged"]): HistoryEvent {
  const e: DriftAcknowledged = {
    kind: "drift_acknowledged",
    event_id: "e1",
    actor: "me",
    recorded_at: "2026-12-01T00:06:00Z",
    reason: "reset on purpose",
    model: "eligible_orders",
    application_id: "sluice-orders-eligible_orders",
    container: {
      id: "a".repeat(64),
      name: "n",
      running: false,
      started_at: STARTED,
      finished_at: FINISHED,
    },
    drifts,
  };
  return e;
}

Deno.test("an acknowledged drift is not reported again; the same move seen from the next start neither; a new move is", () => {
  const stopped = container({}, closed({ "0": "7", "1": "3" }));
  const moved = group({ "0": "2", "1": "3" });
  const found = runnerDrifts(stopped, [], moved);
  assert.equal(found.unacknowledged.length, 1);
  const history = [ack(found.unacknowledged)];
  assert.equal(runnerDrift(stopped, history, moved), null);
  assert.deepEqual(
    runnerDrifts(stopped, history, moved).acknowledged.map((a) => a.event_id),
    ["e1"],
  );
  // moved again while still stopped: a new drift
  const again = runnerDrift(stopped, history, group({ "0": "1", "1": "3" }));
  assert.ok(again && again.kind === "offsets_moved_while_stopped");
  assert.deepEqual(again.partitions, [{ topic: TOPIC, partition: 0, before: "7", after: "1" }]);

  // restarted on the acknowledged offsets: the start vector shows the same move, acknowledged
  const running = container(
    { running: true, status: "running", startedAt: "2026-12-01T00:10:00Z" },
    {
      ...closed(null),
      state: "RUNNING",
      exit_code: null,
      reason: null,
      started_at: "2026-12-01T00:10:00.3Z",
      start_offsets: { "0": "2", "1": "3" },
      previous_close: { close_offsets: { "0": "7", "1": "3" }, closed_at: "x", generation: "g1" },
    },
  );
  assert.equal(runnerDrift(running, history, group({ "0": "9", "1": "3" })), null);
  assert.ok(runnerDrift(running, [], group({ "0": "9", "1": "3" })));
  // another container (another stop) is not covered by this acknowledgment
  const other = container({ id: "b".repeat(64) }, closed({ "0": "7", "1": "3" }));
  assert.ok(runnerDrift(other, history, moved));
});
