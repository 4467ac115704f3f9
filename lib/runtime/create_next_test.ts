import assert from "node:assert/strict";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import type { ContainerEvidence, RunnerObservation } from "../validation/observation.ts";
import type { RunnerIdentity } from "./create_identities.ts";
import {
  type CreateMemory,
  decideCreate,
  noteKey,
  refusal,
  reportedCreate,
} from "./create_next.ts";
import type { CreateReadings, CreateRunnerReading } from "./create_reading.ts";
import { LABEL } from "./labels.ts";

// decideCreate is called through the states a create passes, on hand-built readings: only the
// fields its guards read are filled (the casts below say so)

const OP = "op-1";
const ARTIFACT_SHA = "art-orders";
const PLAN_SHA = "plan-orders";

const identity: RunnerIdentity = {
  model: "orders",
  application_id: "app-orders",
  volume: "vol-orders",
  volume_instance: "inst-1",
  container: "c-orders",
  generation: "g-1",
  input_topic: "in",
  offsets: [{ partition: 0, offset: "0" }],
};

interface World {
  volume?: "absent" | "ours" | "foreign";
  containers?: ContainerEvidence[];
  committed?: Record<string, string>;
  file?: "present" | "absent";
  instanceFile?: string | null;
}

function container(over: Partial<ContainerEvidence> & { op?: string } = {}): ContainerEvidence {
  const { op, ...rest } = over;
  return {
    id: "c".repeat(64),
    name: identity.container,
    status: "created",
    running: false,
    everStarted: false,
    exitCode: 0,
    oomKilled: false,
    labels: {
      operationId: op ?? OP,
      generation: identity.generation,
      planSha256: PLAN_SHA,
      artifactSha256: ARTIFACT_SHA,
    },
    plan: { matchesLabel: true, artifactSha256: ARTIFACT_SHA, sha256: PLAN_SHA, error: null },
    execution: { ok: true, problems: [] },
    environment: { ok: true, unexpected: [], missing: [] },
    runnerStatus: null,
    ...rest,
  } as unknown as ContainerEvidence;
}

function runner(w: World = {}): CreateRunnerReading {
  const volume = w.volume ?? "absent";
  const obs = {
    containers: w.containers ?? [],
    volume: {
      name: identity.volume,
      exists: volume !== "absent",
      labels: volume === "ours" ? { [LABEL.operationId]: OP } : {},
      instanceLabel: volume === "ours"
        ? identity.volume_instance
        : volume === "foreign"
        ? "x"
        : null,
      instanceFile: w.instanceFile ?? null,
    },
    kafka: {
      group: { state: "Empty", members: [] },
      committed: w.committed ?? {},
      ranges: [{ partition: 0, earliest: "0", latest: "5" }],
    },
  } as unknown as RunnerObservation;
  return {
    identity,
    artifact: { model: "orders", application_id: "app-orders" } as unknown as RunnerArtifact,
    artifactSha256: ARTIFACT_SHA,
    image: { id: "sha256:i", env: [], labels: {}, entrypoint: [] } as never,
    networkId: "net-1",
    obs,
    missingTopic: null,
    mounted: {
      bytes: new Uint8Array(),
      sha256: PLAN_SHA,
      path: `/plans/${PLAN_SHA}.json`,
      file: w.file ?? "absent",
    },
  };
}

function readings(r: CreateRunnerReading, over: Partial<CreateReadings> = {}): CreateReadings {
  return {
    operationId: OP,
    committed: false,
    changedOwnership: null,
    prior: null,
    topics: [],
    runners: [r],
    ...over,
  };
}

const POSITIONED = { "0": "0" };

Deno.test("decideCreate walks one runner through the table's rows, then the commit", () => {
  const steps = [
    [runner(), "create_volume"],
    [runner({ volume: "ours" }), "position_offsets"],
    [runner({ volume: "ours", committed: POSITIONED }), "write_mounted_plan"],
    [runner({ volume: "ours", committed: POSITIONED, file: "present" }), "create_container"],
    [
      runner({ volume: "ours", committed: POSITIONED, file: "present", containers: [container()] }),
      "write_volume_instance",
    ],
    [
      runner({
        volume: "ours",
        committed: POSITIONED,
        file: "present",
        containers: [container()],
        instanceFile: identity.volume_instance,
      }),
      "start_container",
    ],
  ] as const;
  for (const [r, step] of steps) assert.equal(decideCreate(readings(r)).kind, step, step);
  const running = container({ status: "running", running: true, everStarted: true });
  const started = {
    volume: "ours",
    committed: POSITIONED,
    file: "present",
    instanceFile: identity.volume_instance,
  } as const;
  const waiting = decideCreate(readings(runner({ ...started, containers: [running] })));
  assert.equal(waiting.kind, "wait");
  assert.equal(waiting.kind === "wait" && waiting.timeoutCode, "UNKNOWN_OUTCOME_NOT_READY");
  const ready = container({
    status: "running",
    running: true,
    everStarted: true,
    runnerStatus: { state: "RUNNING", generation: identity.generation, plan_sha256: PLAN_SHA },
  });
  const done = decideCreate(readings(runner({ ...started, containers: [ready] })));
  assert.equal(done.kind, "commit");
  // what an earlier run made is said once: the volume and the container adopted, the runner ready
  assert.deepEqual(done.notes.map((n) => n.event?.kind ?? null), [
    "adopted",
    null,
    null,
    "adopted",
    null,
    null,
    "ready",
  ]);
  assert.equal(reportedCreate(done).step, "commit");
});

Deno.test("a look-alike not bound to this operation blocks; it is never adopted", () => {
  const cases: Array<[string, CreateRunnerReading, string]> = [
    ["a volume of another instance", runner({ volume: "foreign" }), "create_volume"],
    [
      "a container of another operation",
      runner({ volume: "ours", containers: [container({ op: "op-2" })] }),
      "create_volume",
    ],
    [
      "offsets that are not the recorded positions",
      runner({ volume: "ours", committed: { "0": "3" } }),
      "position_offsets",
    ],
    [
      "a container of this operation's name and labels, but another artifact",
      runner({
        volume: "ours",
        committed: POSITIONED,
        file: "present",
        containers: [container({
          labels: {
            operationId: OP,
            generation: identity.generation,
            planSha256: PLAN_SHA,
            artifactSha256: "other",
          },
        } as Partial<ContainerEvidence>)],
      }),
      "create_container",
    ],
    [
      "an instance file of another volume",
      runner({
        volume: "ours",
        committed: POSITIONED,
        file: "present",
        containers: [container()],
        instanceFile: "inst-9",
      }),
      // the volume's own identity is its instance label and file: its row finds it first
      "create_volume",
    ],
  ];
  for (const [what, r, row] of cases) {
    const d = decideCreate(readings(r));
    assert.equal(d.kind, "blocked", what);
    assert.equal(d.kind === "blocked" && d.row?.step, row, what);
    assert.deepEqual(
      d.kind === "blocked" && d.blockers.map((b) => b.code),
      ["BLOCKED_UNOWNED_RUNTIME"],
      what,
    );
    const report = reportedCreate(d);
    assert.equal(report.step, "blocked", what);
    assert.match(report.detail, /sluice adopts only what operation op-1 created/, what);
  }
});

Deno.test("a topic to create: absent is created, the planned partitions adopted, others block", () => {
  const t = (seen: { id: string; partitions: number } | null) =>
    readings(runner(), { topics: [{ name: "out", partitions: 3, seen }] });
  assert.equal(decideCreate(t(null)).kind, "create_topic");
  const adopted = decideCreate(t({ id: "tid", partitions: 3 }));
  assert.equal(adopted.kind, "create_volume");
  assert.equal(adopted.notes[0].event?.kind, "adopted");
  const other = decideCreate(t({ id: "tid", partitions: 1 }));
  assert.equal(other.kind === "blocked" && other.blockers[0].code, "BLOCKED_UNOWNED_TOPIC");
});

Deno.test("what this run made is neither adopted nor made again, and its runner's exit blocks", () => {
  const memory: CreateMemory = {
    done: new Set(
      ["create_volume", "position_offsets", "write_mounted_plan", "create_container"].map((s) =>
        noteKey(s as "create_volume", "orders")
      ),
    ),
    created: new Set([noteKey("create_container", "orders")]),
    containers: new Map([["orders", "c".repeat(64)]]),
  };
  const r = runner({
    volume: "ours",
    committed: POSITIONED,
    file: "present",
    containers: [container()],
    instanceFile: null,
  });
  const write = decideCreate(readings(r), memory);
  assert.equal(write.kind, "write_volume_instance");
  assert.deepEqual(write.notes, [], "nothing this run made is said adopted");
  // started by this run, it exited before RUNNING: blocked, never started again in the same run
  const started: CreateMemory = {
    ...memory,
    done: new Set([
      ...memory.done,
      noteKey("write_volume_instance", "orders"),
      noteKey("start_container", "orders"),
    ]),
  };
  const exited = runner({
    volume: "ours",
    committed: POSITIONED,
    file: "present",
    instanceFile: identity.volume_instance,
    containers: [container({ status: "exited", everStarted: true, exitCode: 1 })],
  });
  const d = decideCreate(readings(exited), started);
  assert.equal(d.kind === "blocked" && d.blockers[0].code, "BLOCKED_RUNNER_EXITED");
  assert.equal(d.kind === "blocked" && d.row?.step, "await_ready");
  // a continuation (no memory) starts the same first start again: positions untouched
  const again = decideCreate(readings(exited));
  assert.equal(again.kind, "start_container");
  assert.equal(again.kind === "start_container" && again.exitedBefore, 1);
});

Deno.test("a runner killed from outside while RUNNING (a daemon's shutdown) or closed by a TERM from outside is started again, whatever its positions; its own failure or an OOM kill is not", () => {
  const after = (over: Partial<ContainerEvidence>) =>
    runner({
      volume: "ours",
      committed: POSITIONED,
      file: "present",
      instanceFile: identity.volume_instance,
      containers: [container({ status: "exited", everStarted: true, ...over })],
    });
  const killed = {
    exitCode: 137,
    runnerStatus: {
      state: "RUNNING",
      generation: identity.generation,
      plan_sha256: PLAN_SHA,
      running_at: "2026-12-07T00:00:00Z",
    },
  };
  const again = decideCreate(readings(after(killed)));
  assert.equal(again.kind, "start_container");
  assert.equal(again.kind === "start_container" && again.exitedBefore, 137);
  // it processed (its positions moved) before the kill: it continues from its committed
  // positions, its open transaction aborted, as any Kafka Streams instance started again
  const processed = (over: Partial<ContainerEvidence>) =>
    runner({
      volume: "ours",
      committed: { "0": "5" },
      file: "present",
      instanceFile: identity.volume_instance,
      containers: [container({ status: "exited", everStarted: true, ...over })],
    });
  const m = decideCreate(readings(processed(killed)));
  assert.equal(m.kind, "start_container");
  assert.match(m.kind === "start_container" ? m.detail : "", /stopped from outside/);
  // closed cleanly by a TERM from outside (a daemon's stop, docker stop): its own CLOSED status
  const closed = decideCreate(readings(processed({
    exitCode: 143,
    startedAt: "2026-12-07T00:00:00Z",
    runnerStatus: {
      ...killed.runnerStatus,
      state: "CLOSED",
      started_at: "2026-12-07T00:00:00Z",
      closed_at: "2026-12-07T00:01:00Z",
    },
  })));
  assert.equal(closed.kind, "start_container", JSON.stringify(closed));
  assert.match(closed.kind === "start_container" ? closed.detail : "", /closed cleanly/);
  // exited before RUNNING of its own accord with moved positions: not proven the same first start
  const early = decideCreate(readings(processed({ exitCode: 15, runnerStatus: null })));
  assert.equal(early.kind === "blocked" && early.blockers[0].code, "BLOCKED_RUNNER_EXITED");
  // its own failure after RUNNING (exit 13, a final status of its own), or an OOM kill
  for (
    const over of [
      {
        exitCode: 13,
        runnerStatus: {
          ...killed.runnerStatus,
          state: "FAILED",
          exit_code: 13,
          reason: "RECORD_DECODE",
        },
      },
      { ...killed, oomKilled: true },
    ]
  ) {
    for (const reading of [after(over), processed(over)]) {
      const d = decideCreate(readings(reading));
      assert.equal(d.kind === "blocked" && d.blockers[0].code, "BLOCKED_RUNNER_EXITED");
    }
  }
});

Deno.test("ownership changed under the operation blocks at the intent row, before any step", () => {
  const changed = readings(runner(), {
    changedOwnership: {
      code: "BLOCKED_STATE_CHANGED",
      model: null,
      message: "ownership changed",
      evidence: { original: "a", current: "b" },
    },
  });
  const d = decideCreate(changed);
  assert.equal(d.kind === "blocked" && d.row?.step, "intent");
  const error = refusal(d.kind === "blocked" ? d.blockers : []);
  assert.equal(error.code, "BLOCKED_STATE_CHANGED");
  assert.deepEqual(error.evidence, { original: "a", current: "b" });
});
