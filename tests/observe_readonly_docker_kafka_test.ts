// test-needs: env
// Needs: Docker, the broker, the runner image (shared environment from tools/test.ts).
// Read-only commands are read-only on the wire: `plan`, `observe` and `state runner-status`
// send no Docker or Kafka mutation — counted at the port (a counting wrapper over the real
// adapters) and under it (every HTTP request to the daemon, every Kafka request) — including
// at the stage where no container mounts the state volume (the old runner removed, the
// candidate not created yet), where the volume used to be read through a scratch container.
// `state resume` then creates exactly the candidate, nothing else, and no helper container
// exists at any point.
import assert from "node:assert/strict";
import Docker from "dockerode";
import { sharedEnv } from "../harness/env.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { apply, observe, plan } from "../lib/runtime/session.ts";
import { writePlanFile } from "../lib/plan/plan_file.ts";
import { executeReviewed } from "../lib/runtime/replacement/execute.ts";
import { runnerStatus } from "../lib/runtime/replacement/runner_status.ts";
import { resumeReviewed } from "../lib/runtime/replacement/resume.ts";
import { dockerodePort } from "../lib/providers/docker/dockerode.ts";
import { platformaticKafka } from "../lib/providers/kafka/platformatic.ts";
import type { RuntimeDeps } from "../lib/runtime/deps.ts";
import {
  countingDocker,
  countingKafka,
  countingPort,
  DOCKER_PORT_MUTATIONS,
  dockerMutations,
  KAFKA_PORT_MUTATIONS,
  kafkaMutations,
} from "../testing/ports/counting.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** What one command sent: port calls, Docker HTTP routes, Kafka APIs. */
interface Sent {
  port: Map<string, number>;
  http: Map<string, number>;
  kafka: Map<string, number>;
}

/** Run `fn` with fresh counting ports over the real adapters; what it sent. */
async function counted<T>(
  bootstrap: string,
  fn: (deps: Required<Pick<RuntimeDeps, "docker" | "kafka">>) => Promise<T>,
): Promise<{ result: T; sent: Sent }> {
  const dc = countingDocker();
  const kc = countingKafka();
  const kafka = platformaticKafka(bootstrap);
  const port = new Map<string, number>();
  try {
    const result = await fn({
      docker: countingPort(dockerodePort(dc.client), port),
      kafka: countingPort(kafka, port),
    });
    return { result, sent: { port, http: new Map(dc.counts), kafka: new Map(kc.counts) } };
  } finally {
    kc.stop();
    await kafka.close();
  }
}

function assertReadOnly(what: string, sent: Sent): void {
  const portMutations = [...sent.port.keys()].filter((k) =>
    DOCKER_PORT_MUTATIONS.has(k) || KAFKA_PORT_MUTATIONS.has(k)
  );
  assert.deepEqual(portMutations, [], `${what}: no mutation through the ports`);
  assert.deepEqual(dockerMutations(sent.http), [], `${what}: only reads on the Docker API`);
  assert.deepEqual(kafkaMutations(sent.kafka), [], `${what}: only read requests to Kafka`);
  // it did observe (a command that read nothing would pass the checks above vacuously)
  assert.ok((sent.port.get("listContainersLabelled") ?? 0) >= 1, `${what} listed containers`);
  assert.ok((sent.http.get("GET /containers/json") ?? 0) >= 1, `${what} listed on the wire`);
  assert.ok((sent.kafka.get("DescribeGroups") ?? 0) >= 1, `${what} described the group`);
}

/** Containers mounting the project's state volume that are not its runners (a helper). */
async function helperContainers(docker: Docker, volume: string): Promise<string[]> {
  const all = await docker.listContainers({
    all: true,
    filters: JSON.stringify({ volume: [volume] }),
  });
  return all.filter((c) => !c.Labels?.["sluice.application-id"]).flatMap((c) => c.Names);
}

Deno.test("the counting checks see a mutation when one is sent", opts, async () => {
  const env = await sharedEnv();
  const topic = `${env.runId}-ro-probe-${crypto.randomUUID().slice(0, 8)}`;
  const { sent } = await counted(env.bootstrapHost, async ({ kafka }) => {
    await kafka.createTopic(topic, 1);
  });
  assert.deepEqual([...sent.port.keys()].filter((k) => KAFKA_PORT_MUTATIONS.has(k)), [
    "createTopic",
  ]);
  assert.ok(kafkaMutations(sent.kafka).includes("CreateTopics"));
  assert.throws(() => assertReadOnly("createTopic", sent));
});

Deno.test(
  "plan, observe and state runner-status send no Docker or Kafka mutation, even with no container mounting the volume; resume creates only the candidate",
  opts,
  async () => {
    const env = await sharedEnv();
    const docker = new Docker();
    const p = await starterProject(env, { image: await runnerImageId() });
    const created = await plan({ dir: p.dir });
    const applied = await apply({
      dir: p.dir,
      plan: created.plan,
      planSha256: created.sha256,
      extraLabels: env.labels,
    });
    const volume = `${applied.runners[0].application_id}-state`;
    const helpers = () => helperContainers(docker, volume);
    assert.deepEqual(await helpers(), [], "the create made no helper container");

    // with the runner running
    const readOnly: Array<[string, (deps: RuntimeDeps) => Promise<unknown>]> = [
      ["plan", (deps) => plan({ dir: p.dir, ...deps })],
      ["observe", (deps) => observe({ dir: p.dir, ...deps })],
    ];
    for (const [what, run] of readOnly) {
      const { result, sent } = await counted(env.bootstrapHost, run);
      assertReadOnly(`${what} (runner running)`, sent);
      assert.ok(result);
    }

    // a reviewed replacement interrupted right after old_removed: no container mounts the
    // volume any more, the candidate does not exist yet
    await p.setPredicate("amount >= 200 AND paid = TRUE");
    const reviewed = await plan({ dir: p.dir });
    assert.deepEqual(reviewed.plan.blockers, []);
    const planPath = `${p.dir}/replace.plan.json`;
    await writePlanFile(planPath, reviewed.plan);
    const interrupted = await executeReviewed({
      dir: p.dir,
      planPath,
      extraLabels: env.labels,
      onProgress: (e) => {
        if (e.kind === "checkpoint" && e.checkpoint === "old_removed") {
          throw new Error("interrupted after old_removed (test)");
        }
      },
    });
    assert.equal(interrupted.committed, null, JSON.stringify(interrupted));
    assert.equal(interrupted.last_boundary, "old_removed");
    const operationId = interrupted.operation_id;

    const status = await counted(
      env.bootstrapHost,
      (deps) => runnerStatus({ dir: p.dir, planPath, operationId, ...deps }),
    );
    assertReadOnly("state runner-status (old removed)", status.sent);
    const report = status.result;
    assert.ok(report.observation, "runner-status observed");
    assert.equal(report.last_boundary, "old_removed");
    assert.equal(report.next.step, "create", JSON.stringify(report.next));
    assert.deepEqual(report.observation.containers, [], "no container mounts the volume");
    assert.equal(report.observation.volume.instanceFileVia, null);
    assert.equal(report.observation.volume.exists, true);
    assert.equal(
      status.sent.http.get("GET /containers/{id}/archive") ?? 0,
      0,
      "nothing to read a file through",
    );
    for (const [what, run] of readOnly) {
      const { sent } = await counted(env.bootstrapHost, run);
      assertReadOnly(`${what} (old removed)`, sent);
    }
    assert.deepEqual(await helpers(), []);

    // resume continues the same operation: the candidate's create and start are its only
    // Docker mutations (its instance file is checked through the candidate's own mount)
    const resumed = await counted(
      env.bootstrapHost,
      (deps) =>
        resumeReviewed({ dir: p.dir, planPath, operationId, extraLabels: env.labels, ...deps }),
    );
    assert.equal(resumed.result.outcome, "completed", JSON.stringify(resumed.result));
    assert.equal(resumed.sent.port.get("createContainer"), 1);
    assert.equal(resumed.sent.port.get("startContainer"), 1);
    assert.deepEqual(
      [...resumed.sent.port.keys()].filter((k) => DOCKER_PORT_MUTATIONS.has(k)).sort(),
      ["createContainer", "startContainer"],
    );
    assert.equal(resumed.sent.http.get("POST /containers/create"), 1);
    assert.deepEqual(kafkaMutations(resumed.sent.kafka), []);
    assert.deepEqual(await helpers(), []);

    const after = await counted(env.bootstrapHost, (deps) => plan({ dir: p.dir, ...deps }));
    assertReadOnly("plan (after the replacement)", after.sent);
    assert.equal(after.result.plan.actions.length, 0, "a no-op plan");
  },
);
