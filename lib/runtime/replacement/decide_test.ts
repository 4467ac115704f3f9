// Unit tests of the transition function: every row of the boundary table and every
// rejection, with hand-built observations (no services). `decide` is a pure lookup here; its
// real-service behaviour is covered by tests/replace_*_test.ts and the probes.
import type { ErrorCode } from "../../errors.ts";
import assert from "node:assert/strict";
import type { RunnerArtifact } from "../../artifact/artifact.ts";
import { compile } from "../../project/compile.ts";
import { loadProject } from "../../project/load.ts";
import { tempStarter } from "../../project/_test_project.ts";
import { typedActionSha256 } from "../../plan/plan.ts";
import type { Checkpoint, RunnerAction } from "../../state/journal.ts";
import type { Stage } from "../../protocol/replacement.ts";
import { buildMountedPlan, mountedPlanBytes } from "../../protocol/mounted_plan.ts";
import type { ContainerEvidence, RunnerObservation } from "../../validation/observation.ts";
import { runnerClientId } from "../../validation/group_member.ts";
import { evidenceJson } from "../../validation/reviewed_evidence.ts";
import { expectCandidate } from "./candidate.ts";
import { decide } from "./decide.ts";
import { GUARDS } from "./guards.ts";
import { REPLACEMENT_TABLE } from "../../protocol/replacement.ts";
import type { DecideInput, Step } from "./decide.ts";

const CLUSTER = "Zk7Jw2vLQmC8y1m0a6Fh3A";
const IN_ID = "bW9yZS1pbnB1dC10b3BpYw";
const OUT_ID = "b3V0cHV0LXRvcGljLWlkAA";
const DAEMON = "DAEMON:ID";
const IMAGE = "sha256:" + "1".repeat(64);
const NETWORK_ID = "n".repeat(64);
const VI = "0b6c7a0e-5c0e-4f0e-9c43-6f1f0c9d1e01";
const OP = "6f0e2b8a-1c3d-4e5f-8a9b-0c1d2e3f4a5b";
const OLD = "a".repeat(64);
const T0 = "2026-11-29T12:00:00.000Z";

async function artifacts(): Promise<
  { prior: RunnerArtifact; desired: RunnerArtifact; priorSha: string; desiredSha: string }
> {
  const dir = await tempStarter();
  const manifest = `${dir}/sluice.yaml`;
  await Deno.writeTextFile(
    manifest,
    (await Deno.readTextFile(manifest)).replace(/^image: .*$/m, `image: ${IMAGE}`),
  );
  const prior = compile(await loadProject(dir)).artifacts[0];
  const sql = `${dir}/models/eligible_orders.sql`;
  await Deno.writeTextFile(
    sql,
    (await Deno.readTextFile(sql)).replace("amount >= 100", "amount >= 200"),
  );
  const desired = compile(await loadProject(dir)).artifacts[0];
  await Deno.remove(dir, { recursive: true });
  return {
    prior: prior.artifact,
    desired: desired.artifact,
    priorSha: prior.sha256,
    desiredSha: desired.sha256,
  };
}

const A = await artifacts();
const ACTION: RunnerAction = {
  type: "replace_runner_predicate",
  model: A.desired.model,
  application_id: A.desired.application_id,
  prior_artifact_sha256: A.priorSha,
  desired_artifact_sha256: A.desiredSha,
  evidence: evidenceJson({
    old_container_id: OLD,
    old_container_name: A.prior.application_id,
    old_generation: "g0",
    old_plan_sha256: null,
    volume: { name: `${A.prior.application_id}-state`, instance_id: VI },
    identities: {
      cluster_id: CLUSTER,
      input_topic_id: IN_ID,
      output_topic_id: OUT_ID,
      docker_daemon_id: DAEMON,
      image_id: IMAGE,
      network_id: NETWORK_ID,
    },
    offsets_lower_bounds: [0, 1, 2].map((p) => ({
      topic: A.prior.input.topic,
      partition: p,
      offset: "5",
    })),
    prior_artifact: A.prior,
    desired_artifact: A.desired,
  }),
};
const CAND = expectCandidate(ACTION, OP, 0, typedActionSha256(ACTION), "kafka:9092");
const OLD_PLAN = mountedPlanBytes(
  buildMountedPlan(A.prior, "kafka:9092", {
    cluster_id: CLUSTER,
    input_topic_id: IN_ID,
    output_topic_id: OUT_ID,
  }),
);

function container(over: Partial<ContainerEvidence> & { id: string }): ContainerEvidence {
  return {
    name: "x",
    status: "running",
    running: true,
    exitCode: 0,
    oomKilled: false,
    dockerError: "",
    startedAt: "2026-11-29T11:00:00Z",
    finishedAt: "0001-01-01T00:00:00Z",
    everStarted: true,
    imageId: IMAGE,
    networkMode: A.prior.network,
    networks: {},
    mounts: [],
    labels: {
      applicationId: A.prior.application_id,
      artifactSha256: null,
      planSha256: null,
      generation: null,
      operationId: null,
      actionIndex: null,
      evidenceFingerprint: null,
    },
    plan: {
      sha256: null,
      matchesLabel: true,
      artifactSha256: null,
      identity: null,
      error: null,
      text: null,
    },
    environment: { ok: true, unexpected: [], missing: [] },
    execution: { ok: true, problems: [] },
    volumeInstance: VI,
    runnerStatus: { state: "RUNNING" },
    ...over,
  };
}

function oldRunner(over: Partial<ContainerEvidence> = {}): ContainerEvidence {
  return container({
    id: OLD,
    name: A.prior.application_id,
    labels: {
      applicationId: A.prior.application_id,
      artifactSha256: A.priorSha,
      planSha256: OLD_PLAN.sha256,
      generation: "g0",
      operationId: "op0",
      actionIndex: "0",
      evidenceFingerprint: null,
    },
    plan: {
      sha256: OLD_PLAN.sha256,
      matchesLabel: true,
      artifactSha256: A.priorSha,
      identity: null,
      error: null,
      text: null,
    },
    ...over,
  });
}

function candidate(over: Partial<ContainerEvidence> = {}): ContainerEvidence {
  return container({
    id: "c".repeat(64),
    name: CAND.name,
    status: "created",
    running: false,
    everStarted: false,
    startedAt: "0001-01-01T00:00:00Z",
    labels: {
      applicationId: A.desired.application_id,
      artifactSha256: A.desiredSha,
      planSha256: CAND.planSha256,
      generation: CAND.generation,
      operationId: OP,
      actionIndex: "0",
      evidenceFingerprint: CAND.fingerprint,
    },
    plan: {
      sha256: CAND.planSha256,
      matchesLabel: true,
      artifactSha256: A.desiredSha,
      identity: null,
      error: null,
      text: null,
    },
    runnerStatus: null,
    ...over,
  });
}

interface ObsOptions {
  containers?: ContainerEvidence[];
  committed?: Record<string, string>;
  earliest?: string;
  group?: { state: string; members: number };
  cluster?: string;
  inputId?: string;
  volumeInstance?: string | null;
  image?: string;
  networkId?: string;
  daemon?: string;
}

function obs(o: ObsOptions = {}): RunnerObservation {
  const members = Array.from({ length: o.group?.members ?? 1 }, (_, i) => ({
    memberId: `m${i}`,
    clientId: "c",
    clientHost: "/1.2.3.4",
    groupInstanceId: null,
    assignment: [],
  }));
  return {
    applicationId: A.prior.application_id,
    target: {
      applicationId: A.prior.application_id,
      inputTopic: A.prior.input.topic,
      outputTopic: A.prior.output.topic,
      image: IMAGE,
      network: A.prior.network,
    },
    observedAt: "2026-11-29T12:00:05.000Z",
    daemonId: o.daemon ?? DAEMON,
    image: { id: o.image ?? IMAGE, env: [] },
    networkId: o.networkId ?? NETWORK_ID,
    containers: o.containers ?? [oldRunner()],
    volume: {
      name: `${A.prior.application_id}-state`,
      exists: o.volumeInstance !== null,
      labels: {},
      instanceLabel: o.volumeInstance === undefined ? VI : o.volumeInstance,
      instanceFile: o.volumeInstance === undefined ? VI : o.volumeInstance,
      instanceFileVia: OLD,
    },
    kafka: {
      clusterId: o.cluster ?? CLUSTER,
      input: { name: A.prior.input.topic, id: o.inputId ?? IN_ID, partitions: 3 },
      output: { name: A.prior.output.topic, id: OUT_ID, partitions: 3 },
      group: { state: o.group?.state ?? "Stable", members },
      committed: o.committed ?? { "0": "7", "1": "5", "2": "6" },
      ranges: [0, 1, 2].map((p) => ({ partition: p, earliest: o.earliest ?? "0", latest: "9" })),
    },
  };
}

const CLEAN = [["0", "7"], ["1", "5"], ["2", "6"]].map(([p, o]) => ({
  topic: A.prior.input.topic,
  partition: Number(p),
  offset: o,
}));

function cps(stage: Stage): Checkpoint[] {
  const all: Checkpoint[] = [
    { name: "action_started", action_index: 0, recorded_at: T0 },
    { name: "old_closed", action_index: 0, recorded_at: T0, offsets: CLEAN, exit_code: 143 },
    { name: "old_removed", action_index: 0, recorded_at: T0 },
    { name: "replacement_created", action_index: 0, recorded_at: T0, container_id: "c".repeat(64) },
    {
      name: "action_completed",
      action_index: 0,
      recorded_at: T0,
      outcome: "success",
      detail: null,
    },
  ];
  if (stage === "intent") return [];
  return all.slice(0, all.findIndex((c) => c.name === stage) + 1);
}

/** Rows whose step (not a wait or blocker) some test reached. */
const reached = new Set<string>();

function step(stage: Stage, o: RunnerObservation, extra: Partial<DecideInput> = {}): Step {
  const s = decideStep(stage, o, extra);
  if (s.kind !== "blocked" && s.kind !== "wait") reached.add(s.row.id);
  return s;
}

function decideStep(stage: Stage, o: RunnerObservation, extra: Partial<DecideInput> = {}): Step {
  return decide({
    stage,
    checkpoints: cps(stage),
    action: ACTION,
    candidate: CAND,
    obs: o,
    memory: { termRequested: false, startRequested: false },
    resuming: false,
    ...extra,
  });
}

/** A step without its row object, naming the row by ID (what the assertions compare). */
function brief(s: Step): Record<string, unknown> {
  const { row, ...rest } = s;
  return { ...rest, row: row?.id ?? null };
}

function blockedWith(s: Step, code: string): void {
  assert.equal(s.kind, "blocked", JSON.stringify(s));
  if (s.kind === "blocked") {
    assert.ok(s.blockers.some((b) => b.code === code), JSON.stringify(s.blockers));
  }
}

const exited = (code: number, over: Partial<ContainerEvidence> = {}) =>
  oldRunner({
    status: "exited",
    running: false,
    exitCode: code,
    finishedAt: "2026-11-29T12:00:02Z",
    // the old generation's own status file, written by this run of it
    runnerStatus: {
      state: "CLOSED",
      generation: "g0",
      plan_sha256: OLD_PLAN.sha256,
      started_at: "2026-11-29T11:00:01Z",
    },
    ...over,
  });
const stopped = { group: { state: "Empty", members: 0 } };

Deno.test("intent: the exact prior runner authorizes recording action_started", () => {
  const s = step("intent", obs());
  assert.equal(s.kind, "record");
  if (s.kind === "record") assert.equal(s.checkpoint.name, "action_started");
});

Deno.test("intent: a prior runner that is not running blocks", () => {
  blockedWith(
    step("intent", obs({ containers: [exited(143)], ...stopped })),
    "BLOCKED_RUNNER_NOT_RUNNING",
  );
});

Deno.test("action_started: a running old runner gets TERM once, then the driver waits", () => {
  assert.deepEqual(brief(step("action_started", obs())), {
    kind: "term",
    containerId: OLD,
    row: "request_term",
  });
  assert.equal(
    step("action_started", obs(), { memory: { termRequested: true, startRequested: false } }).kind,
    "wait",
  );
});

for (const code of [143, 0]) {
  Deno.test(`action_started: a clean close with raw exit ${code} records old_closed with that exact code`, () => {
    const s = step("action_started", obs({ containers: [exited(code)], ...stopped }));
    assert.equal(s.kind, "record");
    if (s.kind === "record" && s.checkpoint.name === "old_closed") {
      assert.equal(s.checkpoint.exit_code, code);
      assert.deepEqual(s.checkpoint.offsets, CLEAN);
    } else assert.fail(JSON.stringify(s));
  });
}

Deno.test("action_started: exit codes other than 0 and 143 are not a clean close", () => {
  for (const code of [137, 1, 13, 15]) {
    blockedWith(
      step("action_started", obs({ containers: [exited(code)], ...stopped })),
      "BLOCKED_UNCLEAN_EXIT",
    );
  }
});

Deno.test("action_started: an OOM-killed runner is not a clean close", () => {
  blockedWith(
    step("action_started", obs({ containers: [exited(137, { oomKilled: true })], ...stopped })),
    "BLOCKED_OOM",
  );
});

Deno.test("action_started: a status that finished before the action started is stale", () => {
  blockedWith(
    step(
      "action_started",
      obs({ containers: [exited(143, { finishedAt: "2026-11-29T11:59:00Z" })], ...stopped }),
    ),
    "BLOCKED_STALE_STATUS",
  );
});

Deno.test("action_started: the runner's own status file must say CLOSED", () => {
  blockedWith(
    step(
      "action_started",
      obs({
        containers: [exited(143, { runnerStatus: { state: "FAILED", reason: "X" } })],
        ...stopped,
      }),
    ),
    "BLOCKED_UNCLEAN_EXIT",
  );
});

Deno.test("action_started: a group that is still active is waited for, not accepted", () => {
  assert.equal(
    step(
      "action_started",
      obs({ containers: [exited(143)], group: { state: "Stable", members: 1 } }),
    ).kind,
    "wait",
  );
});

Deno.test("action_started: an old runner that vanished proves nothing", () => {
  blockedWith(step("action_started", obs({ containers: [], ...stopped })), "BLOCKED_OLD_VANISHED");
});

Deno.test("old_closed: the exact stopped old container is removed", () => {
  assert.deepEqual(brief(step("old_closed", obs({ containers: [exited(143)], ...stopped }))), {
    kind: "remove",
    containerId: OLD,
    row: "remove_old",
  });
});

Deno.test("old_closed: a lost remove response is resolved by exact absence", () => {
  const s = step("old_closed", obs({ containers: [], ...stopped }));
  assert.equal(s.kind === "record" && s.checkpoint.name, "old_removed");
});

Deno.test("old_closed: an offset that moved while stopped is rejected", () => {
  blockedWith(
    step(
      "old_closed",
      obs({ containers: [exited(143)], committed: { "0": "8", "1": "5", "2": "6" }, ...stopped }),
    ),
    "BLOCKED_OFFSET_JUMP_WHILE_STOPPED",
  );
});

Deno.test("old_closed: progress overtaken by retention is rejected", () => {
  blockedWith(
    step("old_closed", obs({ containers: [exited(143)], earliest: "6", ...stopped })),
    "BLOCKED_RETENTION_LOSS",
  );
});

Deno.test("old_closed: a group member while no runner runs is rejected", () => {
  blockedWith(
    step("old_closed", obs({ containers: [exited(143)], group: { state: "Stable", members: 1 } })),
    "BLOCKED_GROUP_ACTIVE",
  );
});

Deno.test("old_closed: a restarted old runner is rejected", () => {
  blockedWith(
    step("old_closed", obs({ containers: [oldRunner()], ...stopped })),
    "BLOCKED_OLD_RESTARTED",
  );
});

Deno.test("old_removed: with old and candidate absent, one candidate is created", () => {
  assert.deepEqual(brief(step("old_removed", obs({ containers: [], ...stopped }))), {
    kind: "create",
    row: "create_candidate",
  });
});

Deno.test("old_removed: a lost create response adopts only this operation's exact, never-started candidate", () => {
  const s = step("old_removed", obs({ containers: [candidate()], ...stopped }));
  assert.equal(s.kind === "record" && s.checkpoint.name, "replacement_created");
  if (s.kind === "record" && s.checkpoint.name === "replacement_created") {
    assert.equal(s.checkpoint.container_id, "c".repeat(64));
  }
});

Deno.test("old_removed: an unrelated container that shares the candidate's name is never accepted", () => {
  const stranger = candidate({
    id: "d".repeat(64),
    labels: {
      ...candidate().labels,
      operationId: "someone-else",
      generation: "other/0",
      evidenceFingerprint: "x",
    },
  });
  blockedWith(
    step("old_removed", obs({ containers: [stranger], ...stopped })),
    "BLOCKED_FOREIGN_GENERATION",
  );
});

Deno.test("old_removed: a candidate mounting another plan is rejected", () => {
  const wrong = candidate({
    plan: { ...candidate().plan, sha256: "e".repeat(64), matchesLabel: false },
  });
  blockedWith(
    step("old_removed", obs({ containers: [wrong], ...stopped })),
    "BLOCKED_WRONG_MOUNTED_PLAN",
  );
});

Deno.test("old_removed: a candidate that already ran is rejected", () => {
  blockedWith(
    step(
      "old_removed",
      obs({ containers: [candidate({ everStarted: true, status: "exited" })], ...stopped }),
    ),
    "BLOCKED_CANDIDATE_STARTED_EARLY",
  );
});

Deno.test("replacement_created: the exact stopped candidate is started, once", () => {
  assert.deepEqual(
    brief(step("replacement_created", obs({ containers: [candidate()], ...stopped }))),
    { kind: "start", containerId: "c".repeat(64), row: "start_candidate" },
  );
  assert.equal(
    step("replacement_created", obs({ containers: [candidate()], ...stopped }), {
      memory: { termRequested: false, startRequested: true },
    }).kind,
    "wait",
  );
});

Deno.test("replacement_created: a ready candidate with one member records action_completed", () => {
  const ready = candidate({
    status: "running",
    running: true,
    everStarted: true,
    runnerStatus: { state: "RUNNING", generation: CAND.generation, plan_sha256: CAND.planSha256 },
  });
  const s = step(
    "replacement_created",
    obs({ containers: [ready], committed: { "0": "9", "1": "5", "2": "6" } }),
  );
  assert.equal(s.kind === "record" && s.checkpoint.name, "action_completed");
});

Deno.test("replacement_created: the one member must be the candidate's own by its generation's client ID; an older runner declaring none is counted only", () => {
  const running = (client_id?: string | null) =>
    candidate({
      status: "running",
      running: true,
      everStarted: true,
      runnerStatus: {
        state: "RUNNING",
        generation: CAND.generation,
        plan_sha256: CAND.planSha256,
        ...(client_id === undefined ? {} : { client_id }),
      },
    });
  const withMember = (c: ContainerEvidence, clientId: string) => {
    const o = obs({ containers: [c], committed: { "0": "9", "1": "5", "2": "6" } });
    o.kafka.group.members = [{ ...o.kafka.group.members[0], clientId }];
    return step("replacement_created", o);
  };
  const own = `${runnerClientId(CAND.generation)}-StreamThread-1-consumer`;
  const declared = running(runnerClientId(CAND.generation));
  // positive control: the candidate's own member
  const ready = withMember(declared, own);
  assert.equal(ready.kind === "record" && ready.checkpoint.name, "action_completed");
  // one member, but another generation's runner or a consumer of none: waited for
  const other = `${runnerClientId(`${OP}/1`)}-StreamThread-1-consumer`;
  for (const foreign of [other, "external-consumer"]) {
    const s = withMember(declared, foreign);
    assert.equal(s.kind, "wait", foreign);
    assert.match(s.kind === "wait" ? s.reason : "", /is not the runner's/);
  }
  // a status declaring another generation's client ID is not this candidate's readiness
  assert.equal(withMember(running(runnerClientId(`${OP}/1`)), own).kind, "wait");
  // an older runner image declares no client ID: its one member is counted, not identified
  const legacy = withMember(running(), "sluice-orders-eligible_orders-x-StreamThread-1-consumer");
  assert.equal(legacy.kind === "record" && legacy.checkpoint.name, "action_completed");
});

Deno.test("replacement_created: a running candidate not yet RUNNING is waited for", () => {
  const starting = candidate({
    status: "running",
    running: true,
    everStarted: true,
    runnerStatus: { state: "STARTING" },
  });
  assert.equal(step("replacement_created", obs({ containers: [starting] })).kind, "wait");
});

Deno.test("replacement_created: after the start offsets may advance but never fall below the clean close", () => {
  const ready = candidate({
    status: "running",
    running: true,
    everStarted: true,
    runnerStatus: { state: "RUNNING" },
  });
  blockedWith(
    step(
      "replacement_created",
      obs({ containers: [ready], committed: { "0": "7", "1": "5", "2": "5" } }),
    ),
    "BLOCKED_OFFSET_REGRESSION",
  );
});

Deno.test("replacement_created: a failed candidate blocks; a cleanly closed one restarts only under resume, with its own fresh CLOSED record", () => {
  const failed = candidate({ status: "exited", everStarted: true, exitCode: 1 });
  blockedWith(
    step("replacement_created", obs({ containers: [failed], ...stopped })),
    "BLOCKED_CANDIDATE_FAILED",
  );
  // its own generation's CLOSED record, written by the run that started at 11:30
  const closedRecord = {
    state: "CLOSED",
    generation: CAND.generation,
    plan_sha256: CAND.planSha256,
    started_at: "2026-11-29T11:30:00.200Z",
  };
  const closed = candidate({
    status: "exited",
    everStarted: true,
    exitCode: 143,
    startedAt: "2026-11-29T11:30:00Z",
    runnerStatus: closedRecord,
  });
  blockedWith(
    step("replacement_created", obs({ containers: [closed], ...stopped })),
    "BLOCKED_CANDIDATE_CLOSED",
  );
  // "with fresh clean-close evidence": an exit 143 with a stale record of its own is none
  blockedWith(
    step(
      "replacement_created",
      obs({
        containers: [{
          ...closed,
          runnerStatus: { ...closedRecord, started_at: "2026-11-29T11:00:00Z" },
        }],
        ...stopped,
      }),
      { resuming: true },
    ),
    "BLOCKED_STALE_STATUS",
  );
  // an exit 143 with no status of its own (none, or the old runner's): a TERM ended the JVM
  // before the runner wrote STARTING and installed its handler — it never reached Kafka and
  // never started in the contract's sense; with nothing committed, resume starts it again
  for (const runnerStatus of [null, { ...closedRecord, generation: "g0" }]) {
    const early = { ...closed, runnerStatus };
    blockedWith(
      step("replacement_created", obs({ containers: [early], ...stopped })),
      "BLOCKED_CANDIDATE_STARTUP_FAILED",
    );
    assert.deepEqual(
      brief(
        step("replacement_created", obs({ containers: [early], ...stopped }), { resuming: true }),
      ),
      { kind: "start", containerId: "c".repeat(64), row: "restart_failed_candidate" },
    );
  }
  assert.deepEqual(
    brief(
      step("replacement_created", obs({ containers: [closed], ...stopped }), { resuming: true }),
    ),
    { kind: "start", containerId: "c".repeat(64), row: "restart_candidate" },
  );
});

Deno.test("replacement_created: a candidate that failed at start-up before processing is started again only under resume", () => {
  const startupFailed = (over: Partial<ContainerEvidence> = {}) =>
    candidate({
      status: "exited",
      everStarted: true,
      exitCode: 15,
      finishedAt: "2026-11-29T12:00:03Z",
      runnerStatus: {
        state: "FAILED",
        exit_code: 15,
        reason: "KAFKA_UNREACHABLE",
        detail: "describeCluster timed out after 30 s",
        running_at: null,
      },
      ...over,
    });
  const at = (c: ContainerEvidence, extra: Partial<DecideInput> = {}, o: ObsOptions = {}) =>
    step("replacement_created", obs({ containers: [c], ...stopped, ...o }), extra);
  // apply (no resume): a precise blocker naming the way out
  blockedWith(at(startupFailed()), "BLOCKED_CANDIDATE_STARTUP_FAILED");
  // resume: start the same candidate again
  assert.deepEqual(brief(at(startupFailed(), { resuming: true })), {
    kind: "start",
    containerId: "c".repeat(64),
    row: "restart_failed_candidate",
  });
  // the restart failed again in this invocation: blocked, no loop
  blockedWith(
    at(startupFailed(), { resuming: true, memory: { termRequested: false, startRequested: true } }),
    "BLOCKED_CANDIDATE_STARTUP_FAILED",
  );
  // it processed something (offsets moved past the clean close): a failed candidate, as before
  blockedWith(
    at(startupFailed(), { resuming: true }, { committed: { "0": "8", "1": "5", "2": "6" } }),
    "BLOCKED_CANDIDATE_FAILED",
  );
  // it reached RUNNING before failing, or failed for another reason, or was OOM-killed
  for (
    const other of [
      startupFailed({
        runnerStatus: {
          state: "FAILED",
          exit_code: 15,
          reason: "STREAMS_FATAL",
          running_at: null,
        },
      }),
      startupFailed({
        runnerStatus: {
          state: "FAILED",
          exit_code: 15,
          reason: "KAFKA_UNREACHABLE",
          running_at: T0,
        },
      }),
      startupFailed({ exitCode: 13 }),
      startupFailed({ oomKilled: true }),
    ]
  ) {
    blockedWith(at(other, { resuming: true }), "BLOCKED_CANDIDATE_FAILED");
  }
  // killed from outside (exit 137, not OOM) with nothing committed: a Docker daemon's shutdown
  // TERMs and kills at the stop timeout (a TERM the JVM ignored while it started as PID 1, or a
  // close that could not finish), or a docker kill while RUNNING. Apply names the way on, resume
  // starts it again
  const killedWhile = (state: string, runningAt: string | null) =>
    startupFailed({
      exitCode: 137,
      runnerStatus: {
        state,
        reason: state === "CLOSING" ? "SIGTERM" : null,
        exit_code: null,
        running_at: runningAt,
        generation: candidate().labels.generation,
      },
    });
  for (
    const k of [
      killedWhile("STARTING", null),
      killedWhile("RUNNING", T0),
      killedWhile("CLOSING", null),
      killedWhile("CLOSING", T0),
    ]
  ) {
    const state = String(k.runnerStatus!.state);
    const b = at(k);
    blockedWith(b, "BLOCKED_CANDIDATE_STARTUP_FAILED");
    assert.match(JSON.stringify(b), /killed \(exit 137, not by the OOM killer\)/, state);
    assert.deepEqual(brief(at(k, { resuming: true })), {
      kind: "start",
      containerId: "c".repeat(64),
      row: "restart_failed_candidate",
    }, state);
    // its member still in the group (a killed member stays until its session times out): wait
    const lingering = { group: { state: "PreparingRebalance", members: 1 } };
    assert.equal(at(k, { resuming: true }, lingering).kind, "wait", state);
    // the same kill once the positions moved past the clean close: it committed, so apply names
    // the way on and resume starts it again from its committed positions (Kafka's exactly-once
    // aborts its open transaction), once its member has left the group; once per resume
    const moved = { committed: { "0": "8", "1": "5", "2": "6" } };
    const k2 = at(k, {}, moved);
    blockedWith(k2, "BLOCKED_CANDIDATE_KILLED");
    assert.match(JSON.stringify(k2), /after it committed/, state);
    assert.deepEqual(brief(at(k, { resuming: true }, moved)), {
      kind: "start",
      containerId: "c".repeat(64),
      row: "restart_candidate",
    }, state);
    assert.equal(at(k, { resuming: true }, { ...moved, ...lingering }).kind, "wait", state);
    blockedWith(
      at(k, { resuming: true, memory: { termRequested: false, startRequested: true } }, moved),
      "BLOCKED_CANDIDATE_KILLED",
    );
    // the same exit with the OOM killer's mark: a failed candidate
    blockedWith(at({ ...k, oomKilled: true }, { resuming: true }), "BLOCKED_CANDIDATE_FAILED");
    blockedWith(
      at({ ...k, oomKilled: true }, { resuming: true }, moved),
      "BLOCKED_CANDIDATE_FAILED",
    );
  }
  // stopped before its own first status, yet the positions moved: not its commits
  const early = startupFailed({ exitCode: 137, runnerStatus: null });
  blockedWith(
    at(early, { resuming: true }, { committed: { "0": "8", "1": "5", "2": "6" } }),
    "BLOCKED_CANDIDATE_FAILED",
  );
});

Deno.test("action_completed: success hands over to finalization", () => {
  assert.deepEqual(
    brief(step(
      "action_completed",
      obs({ containers: [candidate({ running: true, status: "running" })] }),
    )),
    { kind: "complete", row: "finalize" },
  );
});

Deno.test("every stage rejects changed provider identities, volume instance and extra members", () => {
  const cases: Array<[ObsOptions, string]> = [
    [{ cluster: "OtherClusterAAAAAAAAAAA" }, "BLOCKED_CLUSTER_CHANGED"],
    [{ inputId: "OtherTopicIdAAAAAAAAAAA" }, "BLOCKED_TOPIC_REPLACED"],
    [{ volumeInstance: "another-instance" }, "BLOCKED_VOLUME_INSTANCE_CHANGED"],
    [{ volumeInstance: null }, "BLOCKED_VOLUME_MISSING"],
    [{ image: "sha256:" + "2".repeat(64) }, "BLOCKED_WRONG_IMAGE"],
    [{ networkId: "m".repeat(64) }, "BLOCKED_WRONG_NETWORK"],
    [{ daemon: "OTHER" }, "BLOCKED_DOCKER_DAEMON_CHANGED"],
    [{ group: { state: "Stable", members: 2 } }, "BLOCKED_EXTRA_GROUP_MEMBERS"],
    [{ committed: { "0": "7", "1": "5" } }, "BLOCKED_OFFSETS_MISSING"],
    [{ committed: { "0": "4", "1": "5", "2": "6" } }, "BLOCKED_OFFSET_REGRESSION"],
  ];
  for (
    const stage of [
      "intent",
      "action_started",
      "old_closed",
      "old_removed",
      "replacement_created",
    ] as Stage[]
  ) {
    for (const [o, code] of cases) blockedWith(step(stage, obs(o)), code);
  }
});

Deno.test("a foreign generation with the application ID blocks at every stage", () => {
  const foreign = container({ id: "f".repeat(64), name: "intruder" });
  for (
    const stage of [
      "intent",
      "action_started",
      "old_closed",
      "old_removed",
      "replacement_created",
    ] as Stage[]
  ) {
    blockedWith(
      step(stage, obs({ containers: [oldRunner(), foreign] })),
      "BLOCKED_FOREIGN_GENERATION",
    );
  }
});

Deno.test("the old runner with a wrong mounted plan blocks before anything is written", () => {
  const wrong = oldRunner({
    plan: { ...oldRunner().plan, matchesLabel: false, sha256: "9".repeat(64) },
  });
  blockedWith(step("intent", obs({ containers: [wrong] })), "BLOCKED_WRONG_MOUNTED_PLAN");
});

Deno.test("a guard may give only the blockers its row declares", () => {
  const saved = GUARDS.oldAbsent;
  GUARDS.oldAbsent = () => ({
    kind: "blocked",
    // a code the row does not declare (not even a stable code: the cast is the point)
    blockers: [{
      code: "BLOCKED_SOMETHING_NEW" as ErrorCode,
      model: null,
      message: "x",
      evidence: {},
    }],
  });
  try {
    assert.throws(
      () => decideStep("old_closed", obs({ containers: [], ...stopped })),
      /row record_old_removed: guard oldAbsent gave undeclared blockers BLOCKED_SOMETHING_NEW/,
    );
  } finally {
    GUARDS.oldAbsent = saved;
  }
});

Deno.test("every guard of the table is implemented, and every row's step was reached above", () => {
  assert.deepEqual(
    Object.keys(GUARDS).sort(),
    [...new Set(REPLACEMENT_TABLE.map((r) => r.guard))].sort(),
  );
  assert.deepEqual([...reached].sort(), REPLACEMENT_TABLE.map((r) => r.id).sort());
});
