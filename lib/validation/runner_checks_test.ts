// The checks the planner (verifyOwnedRunner) and the driver (verifyReviewedRuntime) share: one
// implementation, so the same fault gives the same code and message to both.
import assert from "node:assert/strict";
import type { OwnedRunner } from "../state/ownership.ts";
import type { ContainerEvidence, RunnerObservation } from "./observation.ts";
import { type CandidateIdentity, verifyReviewedRuntime } from "./reviewed_runtime.ts";
import type { ReviewedEvidence } from "./reviewed_evidence.ts";
import { checkProgress, checkTopics, checkVolume, verifyOwnedRunner } from "./runner_checks.ts";

const APP = "sluice-orders-eligible_orders";
const VI = "vol-1";
const SHA = "d".repeat(64);

function container(over: Partial<ContainerEvidence> = {}): ContainerEvidence {
  return {
    id: "a".repeat(64),
    name: APP,
    status: "running",
    running: true,
    exitCode: 0,
    oomKilled: false,
    dockerError: "",
    startedAt: "2026-12-01T00:00:00Z",
    finishedAt: "0001-01-01T00:00:00Z",
    everStarted: true,
    imageId: "sha256:img",
    networkMode: "net",
    networks: { net: "N" },
    mounts: [],
    labels: {
      applicationId: APP,
      artifactSha256: SHA,
      planSha256: "p",
      generation: "g",
      operationId: "op",
      actionIndex: "0",
      evidenceFingerprint: null,
    },
    plan: {
      sha256: "p",
      matchesLabel: true,
      artifactSha256: SHA,
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

function obs(over: Partial<RunnerObservation> = {}): RunnerObservation {
  return {
    applicationId: APP,
    target: {
      applicationId: APP,
      inputTopic: "in",
      outputTopic: "out",
      image: "sha256:img",
      network: "net",
    },
    observedAt: "2026-12-01T00:00:01.000Z",
    daemonId: "D",
    image: { id: "sha256:img", env: [] },
    networkId: "N",
    containers: [container()],
    volume: {
      name: `${APP}-state`,
      exists: true,
      labels: {},
      instanceLabel: VI,
      instanceFile: VI,
      instanceFileVia: "c".repeat(64),
    },
    kafka: {
      clusterId: "C",
      input: { name: "in", id: "I", partitions: 1 },
      output: { name: "out", id: "O", partitions: 1 },
      group: { state: "Stable", members: [] },
      committed: { "0": "5" },
      ranges: [{ partition: 0, earliest: "0", latest: "9" }],
    },
    ...over,
  };
}

const OWNED: OwnedRunner = {
  model: "eligible_orders",
  application_id: APP,
  artifact_sha256: SHA,
  volume: { name: `${APP}-state`, instance_id: VI },
  container_name: APP,
};

// only the fields verifyReviewedRuntime reads; the artifacts are never looked at there
const REVIEWED = {
  old_container_id: "a".repeat(64),
  volume: { name: `${APP}-state`, instance_id: VI },
  identities: {
    cluster_id: "C",
    input_topic_id: "I",
    output_topic_id: "O",
    docker_daemon_id: "D",
    image_id: "sha256:img",
    network_id: "N",
  },
  offsets_lower_bounds: [{ topic: "in", partition: 0, offset: "5" }],
} as ReviewedEvidence;

const CAND: CandidateIdentity = {
  name: `${APP}.op-x.a0`,
  generation: "x/0",
  operationId: "x",
  actionIndex: 0,
  fingerprint: "f",
  planSha256: "q",
  desiredArtifactSha256: "e".repeat(64),
};

const codes = (bs: Array<{ code: string }>) => bs.map((b) => b.code);

Deno.test("a healthy owned runner passes both the planner's and the driver's checks", () => {
  assert.deepEqual(verifyOwnedRunner(obs(), OWNED, []).blockers, []);
  const r = verifyReviewedRuntime(obs(), REVIEWED, CAND, "eligible_orders");
  assert.deepEqual(r.blockers, []);
  assert.equal(r.old?.id, "a".repeat(64));
  assert.equal(r.cand, null);
});

Deno.test("the same drift gives the planner and the driver the same blocker, word for word", () => {
  const drifts: Array<[string, RunnerObservation]> = [
    ["BLOCKED_VOLUME_INSTANCE_CHANGED", obs({ volume: { ...obs().volume, instanceFile: "v2" } })],
    ["BLOCKED_VOLUME_MISSING", obs({ volume: { ...obs().volume, exists: false } })],
    [
      "BLOCKED_EXTRA_GROUP_MEMBERS",
      obs({
        kafka: {
          ...obs().kafka,
          group: {
            state: "Stable",
            members: [1, 2].map((i) => ({
              memberId: `m${i}`,
              clientId: "c",
              clientHost: "h",
              groupInstanceId: null,
              assignment: [],
            })),
          },
        },
      }),
    ],
    [
      "BLOCKED_RETENTION_LOSS",
      obs({
        kafka: { ...obs().kafka, ranges: [{ partition: 0, earliest: "6", latest: "9" }] },
      }),
    ],
    ["BLOCKED_OFFSETS_MISSING", obs({ kafka: { ...obs().kafka, committed: {} } })],
  ];
  for (const [code, o] of drifts) {
    const planner = verifyOwnedRunner(o, OWNED, []).blockers.filter((b) => b.code === code);
    const driver = verifyReviewedRuntime(o, REVIEWED, CAND, "eligible_orders").blockers
      .filter((b) => b.code === code);
    assert.equal(planner.length, 1, `${code}: ${JSON.stringify(planner)}`);
    assert.deepEqual(driver.map((b) => b.message), planner.map((b) => b.message), code);
  }
});

Deno.test("a volume instance seen differently through the runner's own mount is a changed instance", () => {
  assert.deepEqual(
    codes(checkVolume(obs(), VI, null, "another")),
    ["BLOCKED_VOLUME_INSTANCE_CHANGED"],
  );
  assert.deepEqual(checkVolume(obs(), VI, null, null), []);
});

Deno.test("a topic ID is compared with every expectation, and the source is named", () => {
  const [b] = checkTopics(obs(), "m", {
    input: [{ id: "I", source: "owned" }, { id: "I-old", source: "mounted-plan" }],
    output: [{ id: null, source: "owned" }],
  });
  assert.equal(b.code, "BLOCKED_TOPIC_REPLACED");
  assert.match(b.message, /not the mounted-plan I-old: it was deleted and recreated/);
});

Deno.test("reviewed offsets are lower bounds: advancing is fine, going below is a regression", () => {
  assert.deepEqual(checkProgress(obs(), null, [{ topic: "in", partition: 0, offset: "4" }]), []);
  assert.deepEqual(
    codes(checkProgress(obs(), null, [{ topic: "in", partition: 0, offset: "6" }])),
    ["BLOCKED_OFFSET_REGRESSION"],
  );
});

Deno.test("the driver classifies containers: the reviewed old runner, its own candidate, or foreign", () => {
  const ours = container({
    id: "c".repeat(64),
    name: CAND.name,
    labels: {
      ...container().labels,
      operationId: "x",
      actionIndex: "0",
      generation: "x/0",
      evidenceFingerprint: "f",
    },
  });
  const stranger = container({ id: "f".repeat(64), name: CAND.name });
  const r = verifyReviewedRuntime(
    obs({ containers: [container(), ours, stranger] }),
    REVIEWED,
    CAND,
    "eligible_orders",
  );
  assert.equal(r.cand?.id, "c".repeat(64));
  assert.deepEqual(codes(r.blockers), ["BLOCKED_FOREIGN_GENERATION"]);
  assert.equal(r.blockers[0].evidence.container, "f".repeat(64));
});

Deno.test("the dead-letter topic joins the topic checks: owned, mounted-plan and reviewed IDs", () => {
  const dl = (id: string | null, bound = "L"): RunnerObservation => {
    const base = obs();
    return {
      ...base,
      target: { ...base.target, deadLetterTopic: "dlq" },
      containers: [container({
        plan: {
          ...container().plan,
          identity: {
            cluster_id: "C",
            input_topic_id: "I",
            output_topic_id: "O",
            dead_letter_topic_id: bound,
          },
        },
      })],
      kafka: { ...base.kafka, deadLetter: id === null ? null : { name: "dlq", id, partitions: 1 } },
    };
  };
  const owned = [
    { name: "in", topic_id: "I" },
    { name: "out", topic_id: "O" },
    { name: "dlq", topic_id: "L" },
  ];
  const planner = (o: RunnerObservation) => verifyOwnedRunner(o, OWNED, owned).blockers;
  const reviewed = {
    ...REVIEWED,
    identities: { ...REVIEWED.identities, dead_letter_topic_id: "L" },
  };
  const driver = (o: RunnerObservation) =>
    verifyReviewedRuntime(o, reviewed, CAND, "eligible_orders").blockers;

  assert.deepEqual(planner(dl("L")), []);
  assert.deepEqual(driver(dl("L")), []);
  // deleted and recreated: another ID than the owned, the mounted plan's and the reviewed one
  const recreated = planner(dl("L2"));
  assert.deepEqual(codes(recreated), ["BLOCKED_TOPIC_REPLACED"]);
  assert.match(recreated[0].message, /^dead-letter topic dlq has ID L2, not the owned L/);
  assert.deepEqual(recreated[0].evidence?.topic, "dlq");
  assert.deepEqual(codes(driver(dl("L2"))), ["BLOCKED_TOPIC_REPLACED"]);
  assert.match(driver(dl("L2"))[0].message, /not the reviewed L/);
  // the mounted plan bound another topic than the owned one
  const foreign = planner(dl("L", "X"));
  assert.deepEqual(codes(foreign), ["BLOCKED_TOPIC_REPLACED"]);
  assert.equal(foreign[0].evidence?.source, "mounted-plan");
  // missing
  const gone = planner(dl(null));
  assert.deepEqual(codes(gone), ["BLOCKED_TOPIC_MISSING"]);
  assert.equal(gone[0].message, "dead-letter topic dlq does not exist");
  assert.deepEqual(codes(driver(dl(null))), ["BLOCKED_TOPIC_MISSING"]);
  // a target without a dead-letter topic is not checked for one
  assert.deepEqual(checkTopics(obs(), null, { input: [], output: [] }), []);
});
