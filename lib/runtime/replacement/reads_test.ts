// What each guard reads: a guard reads a runner status file only where GUARD_STATUS_READS
// says it does (the observer reads no other one), checked by running every guard over
// observations of every stage with status files that record who reads them.
import assert from "node:assert/strict";
import { compile } from "../../project/compile.ts";
import { loadProject } from "../../project/load.ts";
import { tempStarter } from "../../project/_test_project.ts";
import { typedActionSha256 } from "../../plan/plan.ts";
import type { Checkpoint, RunnerAction } from "../../state/journal.ts";
import { type GuardName, rowsAt, type Stage, STAGES } from "../../protocol/replacement.ts";
import type { ContainerEvidence, RunnerObservation } from "../../validation/observation.ts";
import { evidenceJson } from "../../validation/reviewed_evidence.ts";
import { expectCandidate } from "./candidate.ts";
import { GUARDS } from "./guards.ts";
import { GUARD_STATUS_READS, statusReadsAt, wakeOf } from "./reads.ts";

const OLD = "a".repeat(64);
const CAND_ID = "c".repeat(64);
const OP = "6f0e2b8a-1c3d-4e5f-8a9b-0c1d2e3f4a5b";
const T0 = "2026-11-29T12:00:00.000Z";

const dir = await tempStarter();
const artifact = compile(await loadProject(dir)).artifacts[0];
await Deno.remove(dir, { recursive: true });
const ACTION: RunnerAction = {
  type: "replace_runner_predicate",
  model: artifact.model,
  application_id: artifact.artifact.application_id,
  prior_artifact_sha256: artifact.sha256,
  desired_artifact_sha256: artifact.sha256,
  evidence: evidenceJson({
    old_container_id: OLD,
    old_container_name: artifact.artifact.application_id,
    old_generation: "g0",
    old_plan_sha256: null,
    volume: { name: `${artifact.artifact.application_id}-state`, instance_id: "v" },
    identities: {
      cluster_id: "C",
      input_topic_id: "I",
      output_topic_id: "O",
      docker_daemon_id: "D",
      image_id: artifact.artifact.image,
      network_id: "N",
    },
    offsets_lower_bounds: [],
    prior_artifact: artifact.artifact,
    desired_artifact: artifact.artifact,
  }),
};
const CAND = expectCandidate(ACTION, OP, 0, typedActionSha256(ACTION), "kafka:9092");

type Run = "running" | "exited" | "created";

/** Which containers' status files were read, by whether the container ran. */
const reads: Array<{ guard: GuardName; running: boolean }> = [];

function container(id: string, run: Run, guard: () => GuardName): ContainerEvidence {
  const c = {
    id,
    name: id === OLD ? artifact.artifact.application_id : CAND.name,
    status: run,
    running: run === "running",
    exitCode: run === "exited" ? 143 : 0,
    oomKilled: false,
    dockerError: "",
    startedAt: run === "created" ? "0001-01-01T00:00:00Z" : T0,
    finishedAt: run === "exited" ? "2026-11-29T12:00:02Z" : "0001-01-01T00:00:00Z",
    everStarted: run !== "created",
    imageId: artifact.artifact.image,
    networkMode: artifact.artifact.network,
    networks: {},
    mounts: [],
    labels: {
      applicationId: artifact.artifact.application_id,
      artifactSha256: artifact.sha256,
      planSha256: id === OLD ? "p0" : CAND.planSha256,
      generation: id === OLD ? "g0" : CAND.generation,
      operationId: id === OLD ? "op0" : OP,
      actionIndex: "0",
      evidenceFingerprint: id === OLD ? null : CAND.fingerprint,
    },
    plan: {
      sha256: id === OLD ? "p0" : CAND.planSha256,
      matchesLabel: true,
      artifactSha256: artifact.sha256,
      identity: null,
      error: null,
      text: null,
    },
    environment: { ok: true, unexpected: [], missing: [] },
    execution: { ok: true, problems: [] },
    volumeInstance: "v",
  } as Omit<ContainerEvidence, "runnerStatus">;
  const status = run === "running"
    ? { state: "RUNNING", generation: CAND.generation, plan_sha256: CAND.planSha256 }
    : { state: "CLOSED" };
  return Object.defineProperty(c, "runnerStatus", {
    enumerable: true,
    get() {
      reads.push({ guard: guard(), running: run === "running" });
      return status;
    },
  }) as ContainerEvidence;
}

function observation(containers: ContainerEvidence[], members: number): RunnerObservation {
  return {
    applicationId: artifact.artifact.application_id,
    target: {
      applicationId: artifact.artifact.application_id,
      inputTopic: artifact.artifact.input.topic,
      outputTopic: artifact.artifact.output.topic,
      image: artifact.artifact.image,
      network: artifact.artifact.network,
    },
    observedAt: "2026-11-29T12:00:05.000Z",
    daemonId: "D",
    image: { id: artifact.artifact.image, env: [] },
    networkId: "N",
    containers,
    volume: {
      name: `${artifact.artifact.application_id}-state`,
      exists: true,
      labels: {},
      instanceLabel: "v",
      instanceFile: "v",
      instanceFileVia: OLD,
    },
    kafka: {
      clusterId: "C",
      input: { name: artifact.artifact.input.topic, id: "I", partitions: 1 },
      output: { name: artifact.artifact.output.topic, id: "O", partitions: 1 },
      group: {
        state: members > 0 ? "Stable" : "Empty",
        members: Array.from({ length: members }, (_, i) => ({
          memberId: `m${i}`,
          clientId: "c",
          clientHost: "h",
          groupInstanceId: null,
          assignment: [],
        })),
      },
      committed: { "0": "5" },
      ranges: [{ partition: 0, earliest: "0", latest: "9" }],
    },
  };
}

function checkpoints(stage: Stage): Checkpoint[] {
  const all: Checkpoint[] = [
    { name: "action_started", action_index: 0, recorded_at: T0 },
    {
      name: "old_closed",
      action_index: 0,
      recorded_at: T0,
      offsets: [{ topic: artifact.artifact.input.topic, partition: 0, offset: "5" }],
      exit_code: 143,
    },
    { name: "old_removed", action_index: 0, recorded_at: T0 },
    { name: "replacement_created", action_index: 0, recorded_at: T0, container_id: CAND_ID },
    {
      name: "action_completed",
      action_index: 0,
      recorded_at: T0,
      outcome: "success",
      detail: null,
    },
  ];
  return stage === "intent" ? [] : all.slice(0, all.findIndex((c) => c.name === stage) + 1);
}

const RUNS: Array<Run | null> = [null, "created", "running", "exited"];

Deno.test("a guard reads a status file only where GUARD_STATUS_READS declares it", () => {
  let calls = 0;
  for (const stage of STAGES) {
    for (const row of rowsAt(stage)) {
      for (const oldRun of RUNS) {
        for (const candRun of RUNS) {
          for (const members of [0, 1, 2]) {
            for (const memory of [false, true]) {
              const current = () => row.guard;
              const old = oldRun ? container(OLD, oldRun, current) : null;
              const cand = candRun ? container(CAND_ID, candRun, current) : null;
              GUARDS[row.guard]({
                stage,
                checkpoints: checkpoints(stage),
                action: ACTION,
                candidate: CAND,
                obs: observation([old, cand].filter((c) => c !== null), members),
                old,
                cand,
                memory: { termRequested: memory, startRequested: memory },
                resuming: memory,
                decisions: [],
              });
              calls++;
            }
          }
        }
      }
    }
  }
  assert.ok(calls > 500, `${calls} guard calls`);
  for (const r of reads) {
    const declared = GUARD_STATUS_READS[r.guard];
    assert.equal(
      declared,
      r.running ? "running" : "stopped",
      `${r.guard} read the status file of a ${r.running ? "running" : "stopped"} container`,
    );
  }
  // not vacuous: every declared read was exercised
  for (const [guard, declared] of Object.entries(GUARD_STATUS_READS)) {
    if (declared === "none") continue;
    assert.ok(reads.some((r) => r.guard === guard), `${guard} read a status file`);
  }
});

Deno.test("a stage's observation reads the status files its rows' guards read", () => {
  const running = { state: { running: true, startedAt: T0 } };
  const stopped = { state: { running: false, startedAt: T0 } };
  const neverStarted = { state: { running: false, startedAt: "0001-01-01T00:00:00Z" } };
  assert.deepEqual([statusReadsAt("intent")(running), statusReadsAt("intent")(stopped)], [
    false,
    false,
  ]);
  assert.deepEqual(
    [statusReadsAt("action_started")(running), statusReadsAt("action_started")(stopped)],
    [false, true],
  );
  assert.deepEqual(
    [statusReadsAt("old_removed")(running), statusReadsAt("old_removed")(stopped)],
    [false, false],
  );
  assert.deepEqual(
    [statusReadsAt("replacement_created")(running), statusReadsAt("replacement_created")(stopped)],
    // the running candidate's RUNNING record; a stopped one's FAILED record (start-up failure)
    [true, true],
  );
  // the file a candidate never started shows is the old runner's (it lives on the volume)
  for (const stage of STAGES) assert.equal(statusReadsAt(stage)(neverStarted), false, stage);
});

Deno.test("a waiting guard blocks on the one change that can end its wait", () => {
  const g = (members: number, containers: ContainerEvidence[]) => ({
    obs: observation(containers, members),
    generation: CAND.generation,
  });
  const none = () => "oldStillRunning" as GuardName;
  const old = container(OLD, "running", none);
  assert.deepEqual(wakeOf("oldStillRunning", { ...g(1, [old]), old, cand: null }), {
    kind: "exit",
    containerId: OLD,
  });
  const closed = container(OLD, "exited", none);
  assert.deepEqual(wakeOf("oldClosedCleanly", { ...g(1, [closed]), old: closed, cand: null }), {
    kind: "group",
    groupId: artifact.artifact.application_id,
    members: "none",
  });
  const starting = { ...container(CAND_ID, "running", none), runnerStatus: { state: "STARTING" } };
  assert.deepEqual(wakeOf("candidateReady", { ...g(0, [starting]), old: null, cand: starting }), {
    kind: "state_line",
    containerId: CAND_ID,
    since: T0,
  });
  const ready = container(CAND_ID, "running", none);
  assert.deepEqual(wakeOf("candidateReady", { ...g(0, [ready]), old: null, cand: ready }), {
    kind: "group",
    groupId: artifact.artifact.application_id,
    members: "one",
  });
  const created = container(CAND_ID, "created", none);
  assert.deepEqual(
    wakeOf("recordedCandidateStopped", { ...g(0, [created]), old: null, cand: created }),
    { kind: "started", containerId: CAND_ID },
  );
  assert.equal(wakeOf("noCandidateYet", { ...g(0, []), old: null, cand: null }), null);
});
