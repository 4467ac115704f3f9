// Unit tests of the pure planner: hand-built ownership and observations, no services. The
// desired side is the orders starter written to a temporary directory and compiled.
import assert from "node:assert/strict";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { artifactSha256 } from "../artifact/artifact.ts";
import { canonicalSha256 } from "../artifact/canonical.ts";
import { compile } from "../project/compile.ts";
import { loadProject } from "../project/load.ts";
import { tempStarter } from "../project/_test_project.ts";
import type { OwnershipDocument } from "../state/ownership.ts";
import type { StoreIdentity } from "../state/journal.ts";
import type {
  ContainerEvidence,
  ProjectObservation,
  RunnerObservation,
} from "../validation/observation.ts";
import { targetOfArtifact } from "../validation/observation.ts";
import { reviewedEvidence } from "../validation/reviewed_evidence.ts";
import { buildMountedPlan, mountedPlanBytes } from "../protocol/mounted_plan.ts";
import { isNoop, planProject, typedActionSha256 } from "./plan.ts";
import { reviewOfPlan } from "../review/review.ts";
import { renderReviewText } from "../review/render_text.ts";
import type { Plan, PlanInput } from "./plan.ts";

const CLUSTER = "Zk7Jw2vLQmC8y1m0a6Fh3A";
const IN_ID = "bW9yZS1pbnB1dC10b3BpYw";
const OUT_ID = "b3V0cHV0LXRvcGljLWlkAA";
const DLQ_ID = "ZGVhZC1sZXR0ZXItdG9waWM";
const VOLUME_INSTANCE = "0b6c7a0e-5c0e-4f0e-9c43-6f1f0c9d1e01";
const STORE: StoreIdentity = {
  store_id: "11111111-2222-4333-8444-555555555555",
  backend: "local",
  address: "/tmp/state",
};
const NOW = "2026-11-29T12:00:00.000Z";
const SOURCE = "a".repeat(64);

/** Load and compile a starter edited by `edit` (manifest text) and `where` (new WHERE). */
async function desired(
  options: { manifest?: (t: string) => string; sql?: (t: string) => string } = {},
) {
  const dir = await tempStarter();
  const manifestPath = `${dir}/sluice.yaml`;
  const sqlPath = `${dir}/models/eligible_orders.sql`;
  if (options.manifest) {
    await Deno.writeTextFile(manifestPath, options.manifest(await Deno.readTextFile(manifestPath)));
  }
  if (options.sql) {
    await Deno.writeTextFile(sqlPath, options.sql(await Deno.readTextFile(sqlPath)));
  }
  const project = await loadProject(dir);
  await Deno.remove(dir, { recursive: true });
  return { project, compiled: compile(project) };
}

/** Ownership of the starter as `apply` records it for the artifact `owned`. */
function ownershipOf(owned: RunnerArtifact, serial = 1): OwnershipDocument {
  return {
    format: "sluice.ownership",
    version: 1,
    project: owned.project,
    environment: owned.environment,
    serial,
    topics: [
      { name: owned.output.topic, topic_id: OUT_ID },
      { name: owned.input.topic, topic_id: IN_ID },
      ...(owned.on_invalid ? [{ name: owned.on_invalid.topic, topic_id: DLQ_ID }] : []),
    ],
    runners: [{
      model: owned.model,
      application_id: owned.application_id,
      artifact_sha256: artifactSha256(owned),
      volume: { name: `${owned.application_id}-state`, instance_id: VOLUME_INSTANCE },
      container_name: owned.application_id,
    }],
  };
}

/** A healthy, running generation of `running` as the observer would report it. */
function runningContainer(running: RunnerArtifact): ContainerEvidence {
  const mounted = buildMountedPlan(running, "kafka:9092", {
    cluster_id: CLUSTER,
    input_topic_id: IN_ID,
    output_topic_id: OUT_ID,
    ...(running.on_invalid ? { dead_letter_topic_id: DLQ_ID } : {}),
  });
  const { bytes, sha256 } = mountedPlanBytes(mounted);
  const generation = "6a1f0f4e-8d8e-4a55-9b0e-2a1b3c4d5e6f/0";
  return {
    id: "c".repeat(64),
    name: running.application_id,
    status: "running",
    running: true,
    exitCode: 0,
    oomKilled: false,
    dockerError: "",
    startedAt: "2026-11-29T11:00:00Z",
    finishedAt: "0001-01-01T00:00:00Z",
    everStarted: true,
    imageId: running.image,
    networkMode: running.network,
    networks: { [running.network]: "n".repeat(64) },
    mounts: [],
    labels: {
      applicationId: running.application_id,
      artifactSha256: artifactSha256(running),
      planSha256: sha256,
      generation,
      operationId: "6a1f0f4e-8d8e-4a55-9b0e-2a1b3c4d5e6f",
      actionIndex: "0",
      evidenceFingerprint: null,
    },
    plan: {
      sha256,
      matchesLabel: true,
      artifactSha256: artifactSha256(running),
      identity: mounted.identity,
      error: null,
      text: new TextDecoder().decode(bytes),
    },
    environment: { ok: true, unexpected: [], missing: [] },
    execution: { ok: true, problems: [] },
    volumeInstance: VOLUME_INSTANCE,
    runnerStatus: { state: "RUNNING" },
  };
}

/** The observation of `running` deployed and healthy (or nothing deployed, when null). */
function observationOf(
  target: RunnerArtifact,
  running: RunnerArtifact | null,
): ProjectObservation {
  const deployed = running !== null;
  const r: RunnerObservation = {
    applicationId: target.application_id,
    target: targetOfArtifact(target),
    observedAt: NOW,
    daemonId: "DAEMON:ID",
    image: { id: target.image, env: ["PATH=/usr/bin"] },
    networkId: "n".repeat(64),
    containers: deployed ? [runningContainer(running)] : [],
    volume: deployed
      ? {
        name: `${target.application_id}-state`,
        exists: true,
        labels: {},
        instanceLabel: VOLUME_INSTANCE,
        instanceFile: VOLUME_INSTANCE,
        instanceFileVia: "c".repeat(64),
      }
      : {
        name: `${target.application_id}-state`,
        exists: false,
        labels: {},
        instanceLabel: null,
        instanceFile: null,
        instanceFileVia: null,
      },
    kafka: {
      clusterId: CLUSTER,
      input: deployed ? { name: target.input.topic, id: IN_ID, partitions: 3 } : null,
      output: deployed ? { name: target.output.topic, id: OUT_ID, partitions: 3 } : null,
      ...(target.on_invalid
        ? {
          deadLetter: deployed
            ? { name: target.on_invalid.topic, id: DLQ_ID, partitions: 1 }
            : null,
        }
        : {}),
      group: deployed
        ? {
          state: "Stable",
          members: [{
            memberId: "m-1",
            clientId: "c-1",
            clientHost: "/10.0.0.2",
            groupInstanceId: null,
            assignment: [],
          }],
        }
        : { state: "Dead", members: [] },
      committed: deployed ? { "0": "4", "1": "0", "2": "2" } : {},
      ranges: deployed
        ? [
          { partition: 0, earliest: "0", latest: "4" },
          { partition: 1, earliest: "0", latest: "0" },
          { partition: 2, earliest: "0", latest: "3" },
        ]
        : [],
    },
  };
  return { observedAt: NOW, daemonId: "DAEMON:ID", clusterId: CLUSTER, runners: [r] };
}

function topicsOf(a: RunnerArtifact) {
  return new Map([
    [a.input.topic, { id: IN_ID, partitions: 3 }],
    [a.output.topic, { id: OUT_ID, partitions: 3 }],
    ...(a.on_invalid ? [[a.on_invalid.topic, { id: DLQ_ID, partitions: 1 }] as const] : []),
  ]);
}

/** The starter as deployed (the baseline every change is compared with). */
async function deployed(): Promise<RunnerArtifact> {
  return (await desired()).compiled.artifacts[0].artifact;
}

/** Plan `want` against `running` deployed and owned, online unless `offline`. */
function planAgainst(
  want: Awaited<ReturnType<typeof desired>>,
  running: RunnerArtifact,
  options: { offline?: boolean; ownership?: OwnershipDocument; observation?: ProjectObservation } =
    {},
): Plan {
  const ownership = options.ownership ?? ownershipOf(running);
  const input: PlanInput = {
    project: want.project,
    compiled: want.compiled,
    state: { ownership, checksum: "b".repeat(64), identity: STORE },
    observation: options.offline
      ? null
      : options.observation ?? observationOf(want.compiled.artifacts[0].artifact, running),
    topics: options.offline ? null : topicsOf(running),
    now: NOW,
    sourceSha256: SOURCE,
  };
  return planProject(input);
}

const codes = (p: Plan): string[] => p.blockers.map((b) => b.code);

/** Plan `want` online on a fresh project: nothing owned, no runner, only `topics` exist. */
function planFresh(
  want: Awaited<ReturnType<typeof desired>>,
  topics: PlanInput["topics"] = new Map(),
): Plan {
  return planProject({
    project: want.project,
    compiled: want.compiled,
    state: { ownership: null, checksum: null, identity: STORE },
    observation: observationOf(want.compiled.artifacts[0].artifact, null),
    topics,
    now: NOW,
    sourceSha256: SOURCE,
  });
}

Deno.test("planner: nothing deployed → create both managed topics, then the runner", async () => {
  const want = await desired();
  const a = want.compiled.artifacts[0];
  const plan = planFresh(want);
  assert.deepEqual(plan.blockers, []);
  assert.equal(plan.format, 5);
  assert.equal(plan.mode, "online");
  assert.equal(plan.typed_action, null);
  assert.deepEqual(plan.protected_state, { checksum: null, serial: 0 });
  assert.deepEqual(plan.actions, [
    { type: "create_topic", topic: "raw_orders", partitions: 3, role: "source" },
    { type: "create_topic", topic: "eligible_orders", partitions: 3, role: "output" },
    {
      type: "create_runner",
      model: "eligible_orders",
      application_id: a.artifact.application_id,
      artifact_sha256: a.sha256,
    },
  ]);
  assert.equal(plan.artifacts[0].sha256, a.sha256);
  assert.equal(isNoop(plan), false);
});

Deno.test("planner: a model with on_invalid: dead_letter → its dead-letter topic is created like the output", async () => {
  const want = await desired({ manifest: withDeadLetter });
  const a = want.compiled.artifacts[0];
  assert.deepEqual(a.artifact.on_invalid, { policy: "dead_letter", topic: "eligible_orders_dlq" });
  const plan = planFresh(want);
  assert.deepEqual(plan.blockers, []);
  assert.deepEqual(plan.actions.filter((x) => x.type === "create_topic"), [
    { type: "create_topic", topic: "raw_orders", partitions: 3, role: "source" },
    { type: "create_topic", topic: "eligible_orders", partitions: 3, role: "output" },
    { type: "create_topic", topic: "eligible_orders_dlq", partitions: 1, role: "dead_letter" },
  ]);
});

Deno.test("planner: the owned artifact running healthy → no-op", async () => {
  const running = await deployed();
  const plan = planAgainst(await desired(), running);
  assert.deepEqual(plan.actions, []);
  assert.deepEqual(plan.blockers, []);
  assert.equal(plan.format, 5);
  assert.equal(plan.protected_state.serial, 1);
  assert.equal(isNoop(plan), true);
  // and offline, from state alone
  const offline = planAgainst(await desired(), running, { offline: true });
  assert.equal(isNoop(offline), true);
  assert.equal(offline.mode, "offline");
});

Deno.test("planner: a predicate-only change → one typed replacement, format 6", async () => {
  const running = await deployed();
  const want = await desired({ sql: (t) => t.replace("amount >= 100", "amount >= 200") });
  const plan = planAgainst(want, running);
  assert.deepEqual(plan.blockers, []);
  assert.equal(plan.format, 6);
  assert.equal(plan.actions.length, 1);
  const action = plan.actions[0];
  assert.equal(action.type, "replace_runner_predicate");
  if (action.type !== "replace_runner_predicate") return;
  assert.equal(action.application_id, running.application_id);
  assert.equal(action.prior_artifact_sha256, artifactSha256(running));
  assert.equal(action.desired_artifact_sha256, want.compiled.artifacts[0].sha256);
  const ev = action.evidence as Record<string, unknown>;
  assert.equal(ev.old_container_id, "c".repeat(64));
  assert.deepEqual(ev.volume, {
    name: `${running.application_id}-state`,
    instance_id: VOLUME_INSTANCE,
  });
  assert.deepEqual(ev.offsets_lower_bounds, [
    { topic: "raw_orders", partition: 0, offset: "4" },
    { topic: "raw_orders", partition: 1, offset: "0" },
    { topic: "raw_orders", partition: 2, offset: "2" },
  ]);
  assert.deepEqual((ev.identities as Record<string, string>).cluster_id, CLUSTER);
  assert.deepEqual(ev.prior_artifact, running);
  assert.deepEqual(ev.desired_artifact, want.compiled.artifacts[0].artifact);
  // the typed action's checksum covers the complete action, not a redacted view
  assert.ok(plan.typed_action);
  assert.deepEqual(plan.typed_action.action, action);
  assert.equal(plan.typed_action.sha256, canonicalSha256(action));
  assert.equal(plan.typed_action.sha256, typedActionSha256(action));
  const other = structuredClone(action);
  (other.evidence as Record<string, unknown>).old_container_id = "d".repeat(64);
  assert.notEqual(typedActionSha256(other), plan.typed_action.sha256);
});

/** Each forbidden change of a running model, and the precise blocker it must give. */
const BLOCKED_CHANGES: Array<
  { name: string; code: string; field: string; edit: Parameters<typeof desired>[0] }
> = [
  {
    name: "projection",
    code: "BLOCKED_PROJECTION_CHANGE",
    field: "projection",
    edit: { sql: (t) => t.replace("SELECT order_id, amount, paid", "SELECT order_id, amount") },
  },
  {
    name: "schema",
    code: "BLOCKED_SCHEMA_CHANGE",
    field: "schema",
    edit: {
      manifest: (t) =>
        t.replace(
          "      - { name: customer, type: STRING, nullable: true }\n",
          "      - { name: customer, type: STRING, nullable: true }\n      - { name: region, type: STRING, nullable: true }\n",
        ),
    },
  },
  {
    name: "output topic",
    code: "BLOCKED_TOPIC_CHANGE",
    field: "output",
    edit: { manifest: (t) => t.replace("topic: eligible_orders", "topic: eligible_orders_v2") },
  },
  {
    name: "image",
    code: "BLOCKED_IMAGE_CHANGE",
    field: "image",
    edit: { manifest: (t) => t.replace(/^image: .*$/m, `image: sha256:${"1".repeat(64)}`) },
  },
  {
    name: "network",
    code: "BLOCKED_NETWORK_CHANGE",
    field: "network",
    edit: { manifest: (t) => t.replace(/^network: .*$/m, "network: other-net") },
  },
  {
    name: "initial offsets",
    code: "BLOCKED_OFFSET_POLICY_CHANGE",
    field: "initial_offsets",
    edit: { manifest: (t) => t.replace(/^initial_offsets: .*$/m, "initial_offsets: latest") },
  },
  {
    name: "on_invalid policy",
    code: "BLOCKED_INVALID_POLICY_CHANGE",
    field: "on_invalid",
    edit: { manifest: withDeadLetter },
  },
];

/** The starter's model opted in to `on_invalid: dead_letter`. */
function withDeadLetter(t: string): string {
  return t.replace(
    "      topic: eligible_orders\n",
    "      topic: eligible_orders\n    on_invalid: dead_letter\n    dead_letter: { topic: eligible_orders_dlq }\n",
  );
}

for (const c of BLOCKED_CHANGES) {
  Deno.test(`planner: a ${c.name} change of a running model → ${c.code}`, async () => {
    const running = await deployed();
    const want = await desired(c.edit);
    const plan = planAgainst(want, running);
    const found = plan.blockers.filter((b) => b.model === "eligible_orders");
    assert.deepEqual(found.map((b) => b.code), [c.code]);
    assert.equal(found[0].evidence?.field, c.field);
    assert.deepEqual(found[0].evidence?.prior, running[c.field as keyof RunnerArtifact] ?? null);
    assert.equal(plan.actions.some((a) => a.type === "replace_runner_predicate"), false);
    assert.equal(plan.format, 5);
    assert.equal(plan.typed_action, null);
  });
}

Deno.test("planner: an identity change (application ID of the running plan) → BLOCKED_IDENTITY_CHANGE", async () => {
  const want = await desired();
  const target = want.compiled.artifacts[0].artifact;
  // the container carrying this application ID runs an artifact bound to another identity
  const running: RunnerArtifact = { ...target, application_id: `${target.application_id}_old` };
  const ownership = ownershipOf(running);
  ownership.runners[0].application_id = target.application_id;
  const plan = planAgainst(want, running, {
    ownership,
    observation: observationOf(target, running),
  });
  assert.deepEqual(codes(plan), ["BLOCKED_IDENTITY_CHANGE"]);
  assert.equal(plan.blockers[0].evidence?.field, "application_id");
  assert.deepEqual(plan.actions, []);
});

Deno.test("planner: a replacement mixed with another mutation → BLOCKED_MIXED_REPLACEMENT, format 5", async () => {
  const running = await deployed();
  // a predicate change plus a second model, whose topic and runner would be created
  const want = await desired({
    sql: (t) => t.replace("amount >= 100", "amount >= 200"),
    manifest: (t) =>
      t.replace(
        "\n# downstream applications",
        "  big_orders:\n    sql: models/eligible_orders.sql\n    output:\n      topic: big_orders\n\n# downstream applications",
      ),
  });
  const obs = observationOf(want.compiled.artifacts[0].artifact, running);
  const second = observationOf(want.compiled.artifacts[1].artifact, null).runners[0];
  obs.runners.push(second);
  const plan = planAgainst(want, running, { observation: obs });
  assert.deepEqual(codes(plan), ["BLOCKED_MIXED_REPLACEMENT"]);
  assert.deepEqual(plan.actions.map((a) => a.type).sort(), [
    "create_runner",
    "create_topic",
    "replace_runner_predicate",
  ]);
  assert.equal(plan.format, 5);
  assert.equal(plan.typed_action, null);
});

Deno.test("planner: a replacement planned offline → BLOCKED_OFFLINE_REPLACEMENT", async () => {
  const running = await deployed();
  const want = await desired({ sql: (t) => t.replace("amount >= 100", "amount >= 200") });
  const plan = planAgainst(want, running, { offline: true });
  assert.deepEqual(codes(plan), ["BLOCKED_OFFLINE_REPLACEMENT"]);
  assert.equal(plan.mode, "offline");
  assert.equal(plan.format, 5);
  assert.deepEqual(plan.actions, []);
  assert.equal(plan.typed_action, null);
});

Deno.test("planner: a missing external source topic → BLOCKED_EXTERNAL_TOPIC_MISSING, never created", async () => {
  const want = await desired({
    manifest: (t) =>
      t.replace("    kind: managed\n    partitions: 3\n", "    kind: external\n")
        .replace(
          "      topic: eligible_orders\n",
          "      topic: eligible_orders\n      partitions: 3\n",
        ),
  });
  const plan = planFresh(want);
  assert.deepEqual(codes(plan), ["BLOCKED_EXTERNAL_TOPIC_MISSING"]);
  assert.equal(
    plan.actions.some((x) => x.type === "create_topic" && x.topic === "raw_orders"),
    false,
  );
  // the external topic existing unblocks it, still without any action on it
  const present = planFresh(want, new Map([["raw_orders", { id: IN_ID, partitions: 3 }]]));
  assert.deepEqual(present.blockers, []);
  assert.deepEqual(present.actions.map((x) => x.type === "create_topic" ? x.topic : x.type), [
    "eligible_orders",
    "create_runner",
  ]);
});

Deno.test("planner: drift of an owned runner gives precise blockers", async () => {
  const running = await deployed();
  const want = await desired();
  const base = () => observationOf(running, running);

  // a second container with the same application-ID label
  let obs = base();
  const foreign = structuredClone(obs.runners[0].containers[0]);
  foreign.id = "f".repeat(64);
  foreign.name = "intruder";
  obs.runners[0].containers.push(foreign);
  assert.ok(
    codes(planAgainst(want, running, { observation: obs })).includes(
      "BLOCKED_FOREIGN_GENERATION",
    ),
  );

  // the volume replaced under the same name
  obs = base();
  obs.runners[0].containers = [];
  obs.runners[0].volume.instanceLabel = "99999999-0000-4000-8000-000000000000";
  obs.runners[0].volume.instanceFile = "99999999-0000-4000-8000-000000000000";
  assert.deepEqual(codes(planAgainst(want, running, { observation: obs })), [
    "BLOCKED_RUNNER_MISSING",
    "BLOCKED_VOLUME_INSTANCE_CHANGED",
  ]);

  // the input topic deleted and recreated (a new topic ID)
  obs = base();
  obs.runners[0].kafka.input!.id = "bmV3LXRvcGljLWlkLWhlcmU";
  const topics = topicsOf(running);
  topics.set(running.input.topic, { id: "bmV3LXRvcGljLWlkLWhlcmU", partitions: 3 });
  const plan = planProject({
    project: want.project,
    compiled: want.compiled,
    state: { ownership: ownershipOf(running), checksum: "b".repeat(64), identity: STORE },
    observation: obs,
    topics,
    now: NOW,
    sourceSha256: SOURCE,
  });
  assert.ok(codes(plan).length > 0);
  assert.ok(codes(plan).every((c) => c === "BLOCKED_TOPIC_REPLACED"), codes(plan).join(","));
  assert.deepEqual(plan.actions, []);
});

Deno.test("planner: blockers without evidence still seal (canonical JSON has no undefined)", async () => {
  const running = await deployed();
  const obs = observationOf(running, running);
  obs.runners[0].containers = [];
  const plan = planAgainst(await desired(), running, { observation: obs });
  assert.deepEqual(codes(plan), ["BLOCKED_RUNNER_MISSING"]);
  // canonicalSha256 throws on an undefined field
  assert.equal(typeof canonicalSha256(plan), "string");
});

// ---- impact section and --select (issue 14)

Deno.test("planner: a replacement's impact names fraud_app and the live groups on the output topic", async () => {
  const running = await deployed();
  const want = await desired({ sql: (t) => t.replace("amount >= 100", "amount >= 200") });
  const plan = planProject({
    project: want.project,
    compiled: want.compiled,
    state: { ownership: ownershipOf(running), checksum: "b".repeat(64), identity: STORE },
    observation: observationOf(want.compiled.artifacts[0].artifact, running),
    topics: topicsOf(running),
    now: NOW,
    sourceSha256: SOURCE,
    consumers: {
      observed_at: NOW,
      topics: {
        eligible_orders: [
          { group_id: "fraud_app", state: "Stable", members: 1, committed: { "0": "3" } },
          { group_id: "mystery-reader", state: "Empty", members: 0, committed: { "1": "7" } },
        ],
      },
    },
  });
  assert.equal(plan.format, 6);
  assert.ok(plan.impact);
  const [m] = plan.impact.models;
  assert.equal(m.model, "eligible_orders");
  assert.equal(m.change, "replace_predicate");
  assert.equal(m.output_topic, "eligible_orders");
  assert.deepEqual(m.declared, [{
    external: "fraud_app",
    group_id: "fraud_app",
    columns: [
      { name: "order_id", type: "STRING", in_output: true },
      { name: "amount", type: "BIGINT", in_output: true },
    ],
  }]);
  assert.ok(m.live.observed);
  if (!m.live.observed) return;
  assert.deepEqual(m.live.groups.map((g) => [g.group_id, g.declared_as]), [
    ["fraud_app", "fraud_app"],
    ["mystery-reader", null],
  ]);
  assert.ok(m.uncertainties.some((u) => u.includes("mystery-reader") && /undeclared/.test(u)));
  assert.ok(!m.uncertainties.some((u) => u.includes("fraud_app is declared")));
});

Deno.test("planner: an offline plan says live consumers were not observed; no-op plans have no impact rows", async () => {
  const running = await deployed();
  const want = await desired({ sql: (t) => t.replace("amount >= 100", "amount >= 200") });
  const offline = planAgainst(want, running, { offline: true });
  assert.deepEqual(codes(offline), ["BLOCKED_OFFLINE_REPLACEMENT"]);
  const m = offline.impact!.models[0];
  assert.equal(m.change, "blocked");
  assert.deepEqual(m.live, { observed: false, reason: "offline plan" });
  assert.ok(m.uncertainties.some((u) => /were not observed \(offline plan\)/.test(u)));
  assert.equal(m.declared[0].external, "fraud_app");
  const noop = planAgainst(await desired(), running);
  assert.deepEqual(noop.impact, { models: [] });
});

Deno.test("planner: --select plans creates for the selected model only, and a selected replacement is blocked", async () => {
  const running = await deployed();
  // a second model reading the same source, so that selection has something to leave out
  const two = await desired({
    manifest: (t) =>
      t.replace(
        "externals:",
        "  big_orders:\n    sql: models/eligible_orders.sql\n    output:\n      topic: big_orders\n\nexternals:",
      ),
  });
  const created = planProject({
    project: two.project,
    compiled: two.compiled,
    state: { ownership: null, checksum: null, identity: STORE },
    observation: observationOf(two.compiled.artifacts[1].artifact, null),
    topics: new Map(),
    now: NOW,
    sourceSha256: SOURCE,
    select: ["big_orders"],
  });
  assert.equal(created.scope, "selected");
  assert.deepEqual(created.selected, ["big_orders"]);
  assert.deepEqual(created.blockers, []);
  assert.deepEqual(
    created.actions.map((a) =>
      "topic" in a ? a.topic : "model" in a ? a.model : "name" in a ? a.name : a.type
    ),
    [
      "raw_orders",
      "big_orders",
      "big_orders",
    ],
  );
  assert.deepEqual(created.artifacts.map((a) => a.model), ["big_orders"]);

  const want = await desired({ sql: (t) => t.replace("amount >= 100", "amount >= 200") });
  const selected = planProject({
    project: want.project,
    compiled: want.compiled,
    state: { ownership: ownershipOf(running), checksum: "b".repeat(64), identity: STORE },
    observation: observationOf(want.compiled.artifacts[0].artifact, running),
    topics: topicsOf(running),
    now: NOW,
    sourceSha256: SOURCE,
    select: ["eligible_orders"],
  });
  assert.equal(selected.format, 5);
  assert.equal(selected.typed_action, null);
  assert.deepEqual(selected.actions, []);
  assert.deepEqual(codes(selected), ["BLOCKED_SELECTED_REPLACEMENT"]);
  assert.throws(
    () =>
      planProject({
        project: want.project,
        compiled: want.compiled,
        state: { ownership: null, checksum: null, identity: STORE },
        observation: null,
        topics: null,
        now: NOW,
        sourceSha256: SOURCE,
        select: ["nope"],
      }),
    (e) => e instanceof Error && (e as { code?: string }).code === "USAGE_SELECT_UNKNOWN_MODEL",
  );
});

// ---- explicit runner removals (lifecycle.runner_removals)

/** The starter's model renamed big_orders (same SQL file); eligible_orders declared removed unless `declare` is false. */
function removalManifest(declare = true) {
  return (t: string) =>
    t.replace("  eligible_orders:\n    sql:", "  big_orders:\n    sql:")
      .replace("topic: eligible_orders", "topic: big_orders")
      .replace("consumes: eligible_orders", "consumes: big_orders") +
    (declare ? "lifecycle:\n  runner_removals:\n    - model: eligible_orders\n" : "");
}

/** eligible_orders owned and running; big_orders desired and, unless `createsBig`, owned and running. */
async function removalWorld(options: { declare?: boolean; createsBig?: boolean } = {}) {
  const running = await deployed();
  const want = await desired({ manifest: removalManifest(options.declare ?? true) });
  const big = want.compiled.artifacts.find((a) => a.model === "big_orders")!.artifact;
  const ownership = ownershipOf(running);
  const bigObs = observationOf(big, big).runners[0];
  if (!options.createsBig) {
    ownership.runners.push({
      model: "big_orders",
      application_id: big.application_id,
      artifact_sha256: artifactSha256(big),
      volume: { name: `${big.application_id}-state`, instance_id: VOLUME_INSTANCE },
      container_name: big.application_id,
    });
    ownership.topics.push({ name: big.output.topic, topic_id: OUT_ID });
  }
  const observation: ProjectObservation = {
    ...observationOf(running, running),
    runners: [
      observationOf(running, running).runners[0],
      ...(options.createsBig ? [observationOf(big, null).runners[0]] : [bigObs]),
    ],
  };
  const topics = new Map([
    ...topicsOf(running),
    ...(options.createsBig ? [] : [[big.output.topic, { id: OUT_ID, partitions: 3 }] as const]),
  ]);
  const planWith = (o: { offline?: boolean; observation?: ProjectObservation } = {}) =>
    planProject({
      project: want.project,
      compiled: want.compiled,
      state: { ownership, checksum: "b".repeat(64), identity: STORE },
      observation: o.offline ? null : o.observation ?? observation,
      topics: o.offline ? null : topics,
      now: NOW,
      sourceSha256: SOURCE,
    });
  return { running, observation, planWith };
}

Deno.test("planner: a declared removal of an owned running runner → remove_runner bound to its exact generation", async () => {
  const { running, planWith } = await removalWorld();
  const p = planWith();
  assert.deepEqual(codes(p), []);
  assert.equal(p.format, 5);
  assert.equal(p.actions.length, 1);
  const a = p.actions[0];
  assert.ok(a.type === "remove_runner");
  const c = runningContainer(running);
  assert.deepEqual(a.container, {
    id: c.id,
    name: c.name,
    generation: c.labels.generation,
    plan_sha256: c.labels.planSha256,
  });
  assert.equal(a.model, "eligible_orders");
  assert.equal(a.application_id, running.application_id);
  assert.equal(a.artifact_sha256, artifactSha256(running));
  assert.deepEqual(a.volume, {
    name: `${running.application_id}-state`,
    instance_id: VOLUME_INSTANCE,
  });
  assert.deepEqual(a.runner, {
    input_topic: running.input.topic,
    output_topic: running.output.topic,
    image: running.image,
    network: running.network,
  });
  // what it keeps: the volume, the group with the observed offsets, both topics
  assert.deepEqual(a.keeps, {
    volume: `${running.application_id}-state`,
    consumer_group: running.application_id,
    committed: [
      { topic: running.input.topic, partition: 0, offset: "4" },
      { topic: running.input.topic, partition: 1, offset: "0" },
      { topic: running.input.topic, partition: 2, offset: "2" },
    ],
    topics: [running.input.topic, running.output.topic],
  });
  assert.deepEqual(
    p.impact?.models.map((m) => [m.model, m.change]),
    [["eligible_orders", "remove"]],
  );
});

Deno.test("planner: an owned model that vanished without a removal → BLOCKED_RUNNER_REMOVAL naming the declaration", async () => {
  const p = (await removalWorld({ declare: false })).planWith();
  assert.deepEqual(codes(p), ["BLOCKED_RUNNER_REMOVAL"]);
  assert.deepEqual(p.actions, []);
  assert.match(
    p.blockers[0].message,
    /lifecycle\.runner_removals: \[\{ model: eligible_orders \}\]/,
  );
});

Deno.test("planner: a removal planned offline → BLOCKED_OFFLINE_REMOVAL", async () => {
  const p = (await removalWorld()).planWith({ offline: true });
  assert.deepEqual(codes(p), ["BLOCKED_OFFLINE_REMOVAL"]);
  assert.deepEqual(p.actions, []);
});

Deno.test("planner: a removal is blocked precisely when the observed runner is not the owned one", async () => {
  const { observation, planWith } = await removalWorld();
  const edit = (f: (o: RunnerObservation) => void) => {
    const o = structuredClone(observation);
    f(o.runners[0]);
    return planWith({ observation: o });
  };
  const cases: Array<[string, (o: RunnerObservation) => void, string]> = [
    ["another generation's artifact", (o) => {
      o.containers[0].labels.artifactSha256 = "f".repeat(64);
    }, "BLOCKED_FOREIGN_GENERATION"],
    ["a second container", (o) => {
      o.containers.push({ ...o.containers[0], id: "d".repeat(64), name: "other" });
    }, "BLOCKED_FOREIGN_GENERATION"],
    ["no container", (o) => {
      o.containers = [];
    }, "BLOCKED_RUNNER_MISSING"],
    ["a stopped runner", (o) => {
      Object.assign(o.containers[0], { running: false, status: "exited", exitCode: 137 });
    }, "BLOCKED_RUNNER_NOT_RUNNING"],
    ["another volume instance", (o) => {
      o.volume.instanceLabel = "9".repeat(8);
    }, "BLOCKED_VOLUME_INSTANCE_CHANGED"],
  ];
  for (const [what, f, code] of cases) {
    const p = edit(f);
    assert.ok(codes(p).includes(code), `${what}: ${codes(p).join(",")}`);
    assert.deepEqual(p.actions, [], what);
    // the model is gone from the project: each blocker names the owned runner's application ID,
    // and the review shows it (not "no application ID")
    const running = p.blockers.filter((b) => b.model === "eligible_orders");
    assert.ok(running.length > 0, what);
    for (const b of running) {
      assert.match(String(b.evidence.application_id), /^sluice-.*eligible_orders$/, what);
    }
    const text = renderReviewText(
      reviewOfPlan({
        project: (await desired({ manifest: removalManifest(true) })).project,
        plan: p,
        sha256: "0".repeat(64),
        file: null,
      }),
    );
    assert.ok(!text.includes("no application ID"), `${what}:\n${text}`);
    assert.match(
      text,
      /- remove model eligible_orders \(sluice-.*eligible_orders\): blocked/,
      what,
    );
  }
});

Deno.test("planner: a removal with any other change → BLOCKED_REMOVAL_MIXED", async () => {
  const p = (await removalWorld({ createsBig: true })).planWith();
  assert.deepEqual(codes(p), ["BLOCKED_REMOVAL_MIXED"]);
  assert.deepEqual(
    p.actions.map((a) => a.type).sort(),
    ["create_topic", "create_runner", "remove_runner"].sort(),
  );
});

Deno.test("planner: a declared removal of a model this project does not own → nothing to do", async () => {
  const want = await desired({
    manifest: (t) => t + "lifecycle:\n  runner_removals:\n    - model: long_gone\n",
  });
  const running = await deployed();
  const p = planAgainst(want, running);
  assert.ok(isNoop(p), JSON.stringify(p.blockers));
});

Deno.test("planner: a model declared again after a removal resumes from what was kept, exactly", async () => {
  const running = await deployed();
  const want = await desired();
  const obsOf = (f: (o: RunnerObservation) => void = () => {}) => {
    const o = observationOf(running, running);
    const r = o.runners[0];
    r.containers = [];
    r.kafka.group = { state: "Empty", members: [] };
    f(r);
    return o;
  };
  const ownership = ownershipOf(running);
  const kept = {
    model: running.model,
    application_id: running.application_id,
    volume: ownership.runners[0].volume,
    input_topic: running.input.topic,
    removed_by: "6a1f0f4e-8d8e-4a55-9b0e-000000000001",
  };
  ownership.runners = [];
  ownership.retained = [kept];
  const planWith = (observation: ProjectObservation | null) =>
    planProject({
      project: want.project,
      compiled: want.compiled,
      state: { ownership, checksum: "b".repeat(64), identity: STORE },
      observation,
      topics: observation ? topicsOf(running) : null,
      now: NOW,
      sourceSha256: SOURCE,
    });
  const p = planWith(obsOf());
  assert.deepEqual(codes(p), []);
  assert.deepEqual(p.actions, [{
    type: "create_runner",
    model: running.model,
    application_id: running.application_id,
    artifact_sha256: artifactSha256(running),
    resume: { removed_by: kept.removed_by, volume_instance: VOLUME_INSTANCE, volume_kept: true },
  }]);
  // the kept volume deleted by hand: a new one is made, the offsets still kept
  const gone = planWith(obsOf((r) => {
    r.volume = { ...r.volume, exists: false, instanceLabel: null, instanceFile: null };
  }));
  assert.equal(
    gone.actions[0].type === "create_runner" && gone.actions[0].resume?.volume_kept,
    false,
  );
  // anything but what was kept blocks
  for (
    const [what, f, code] of [
      ["another volume instance", (r: RunnerObservation) => {
        r.volume.instanceLabel = "f".repeat(8);
      }, "BLOCKED_RETAINED_MISMATCH"],
      ["a group member", (r: RunnerObservation) => {
        r.kafka.group = {
          state: "Stable",
          members: [{
            memberId: "m",
            clientId: "c",
            clientHost: "h",
            groupInstanceId: null,
            assignment: [],
          }],
        };
      }, "BLOCKED_RETAINED_MISMATCH"],
      ["a container", (r: RunnerObservation) => {
        r.containers = [runningContainer(running)];
      }, "BLOCKED_RETAINED_MISMATCH"],
    ] as Array<[string, (r: RunnerObservation) => void, string]>
  ) {
    const b = planWith(obsOf(f));
    assert.deepEqual(codes(b), [code], what);
    assert.deepEqual(b.actions.filter((a) => a.type === "create_runner"), [], what);
  }
  // another input topic than the one the kept offsets are for
  ownership.retained = [{ ...kept, input_topic: "other_topic" }];
  assert.deepEqual(codes(planWith(obsOf())), ["BLOCKED_RETAINED_MISMATCH"]);
});

Deno.test("planner: a predicate change of a dead-letter model binds the dead-letter topic's ID in the reviewed evidence", async () => {
  const running = (await desired({ manifest: withDeadLetter })).compiled.artifacts[0].artifact;
  const want = await desired({
    manifest: withDeadLetter,
    sql: (t) => t.replace("amount >= 100", "amount >= 200"),
  });
  const plan = planAgainst(want, running);
  assert.deepEqual(plan.blockers, []);
  const action = plan.actions[0];
  assert.equal(action.type, "replace_runner_predicate");
  if (action.type !== "replace_runner_predicate") return;
  const ev = reviewedEvidence(action);
  assert.equal(ev.identities.dead_letter_topic_id, DLQ_ID);
  assert.deepEqual(ev.desired_artifact.on_invalid, ev.prior_artifact.on_invalid);
  // evidence that lost the binding (or binds one for a model that stops) is refused
  const { dead_letter_topic_id: _, ...without } = ev.identities;
  assert.throws(
    () => reviewedEvidence({ ...action, evidence: { ...action.evidence, identities: without } }),
    /evidence\.identities has fields/,
  );

  // the dead-letter topic deleted and recreated under the running model: blocked, no action
  const obs = observationOf(want.compiled.artifacts[0].artifact, running);
  obs.runners[0].kafka.deadLetter = {
    name: "eligible_orders_dlq",
    id: "cmVjcmVhdGVk",
    partitions: 1,
  };
  const recreated = planAgainst(want, running, { observation: obs });
  assert.ok(codes(recreated).includes("BLOCKED_TOPIC_REPLACED"), codes(recreated).join());
  assert.ok(
    recreated.blockers.some((b) => b.message.startsWith("dead-letter topic eligible_orders_dlq")),
  );
  assert.equal(recreated.typed_action, null);
  // and gone
  obs.runners[0].kafka.deadLetter = null;
  const gone = planAgainst(want, running, { observation: obs });
  assert.ok(codes(gone).includes("BLOCKED_TOPIC_MISSING"), codes(gone).join());
  assert.equal(gone.typed_action, null);
});

Deno.test("planner: a model of several instances → BLOCKED_INSTANCES_UNSUPPORTED with its placement, no runner action", async () => {
  const want = await desired({
    manifest: (t) =>
      t.replace(
        "      topic: eligible_orders\n",
        "      topic: eligible_orders\n    instances: 2\n",
      ) + "docker:\n  placement: shared\n",
  });
  assert.equal(want.project.models[0].decl.instances, 2);
  const a = want.compiled.artifacts[0];
  // the artifact is the single-instance one: instances is placement, not what a runner mounts
  assert.equal(a.sha256, (await desired()).compiled.artifacts[0].sha256);
  const fresh = planFresh(want);
  assert.deepEqual(codes(fresh), ["BLOCKED_INSTANCES_UNSUPPORTED"]);
  assert.equal(fresh.blockers[0].model, "eligible_orders");
  assert.deepEqual(fresh.blockers[0].evidence, {
    instances: 2,
    rule: "shared",
    placement: [{ instance: 0, endpoint: null }, { instance: 1, endpoint: null }],
  });
  assert.equal(fresh.actions.some((x) => x.type === "create_runner"), false);
  // a running single instance asked to become two is blocked the same way, never replaced
  const running = planAgainst(want, await deployed());
  assert.deepEqual(codes(running), ["BLOCKED_INSTANCES_UNSUPPORTED"]);
  assert.deepEqual(running.actions, []);
});
