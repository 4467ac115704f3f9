// test-needs: env
// Needs: Docker and the broker (shared environment from tools/test.ts).
import assert from "node:assert/strict";
import { sharedEnv } from "../harness/env.ts";
import { KAFKA_IMAGE } from "../harness/images.ts";
import { dockerCli } from "../harness/docker.ts";
import { newKafkaUuid } from "../harness/env.ts";
import { dockerodePort } from "../lib/providers/docker/dockerode.ts";
import { platformaticKafka } from "../lib/providers/kafka/platformatic.ts";
import { produce } from "../harness/kafka.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function logsOf(id: string): Promise<string> {
  const out = await new Deno.Command(dockerCli(), {
    args: ["logs", id],
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  return new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
}

async function waitFor<T>(fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("timed out");
}

Deno.test(
  "docker port: volume instance file, exact labels, mounted file bytes, TERM gives 143, remove keeps the volume",
  opts,
  async () => {
    const env = await sharedEnv();
    const docker = dockerodePort();
    const suffix = crypto.randomUUID().slice(0, 8);
    const volume = `${env.runId}-prov-${suffix}`;
    const uuid = crypto.randomUUID();
    const labels = { ...env.labels, "sluice.test": "providers" };
    await docker.createVolume(volume, labels);
    assert.equal((await docker.inspectVolume(volume))?.labels["sluice.test"], "providers");
    // creating it again is refused, never silently adopted
    await assert.rejects(docker.createVolume(volume, labels), /already exists/);

    const planDir = await Deno.makeTempDir();
    const planBytes = new TextEncoder().encode('{"plan":1}');
    await Deno.writeFile(`${planDir}/plan.json`, planBytes);
    const id = await docker.createContainer({
      name: `${env.runId}-prov-${suffix}`,
      image: KAFKA_IMAGE,
      labels: { ...labels, "sluice.generation": "g1" },
      env: [`CLUSTER_ID=${newKafkaUuid()}`],
      network: env.network,
      planHostPath: `${planDir}/plan.json`,
      planContainerPath: "/etc/sluice/plan.json",
      volume,
      volumeContainerPath: "/var/lib/sluice",
      memoryBytes: 768 * 1024 * 1024,
      stopTimeoutSeconds: 30,
    });
    const created = await docker.inspectContainer(id);
    assert.ok(created);
    assert.equal(created.id, id);
    assert.equal(created.state.status, "created");
    assert.equal(created.labels["sluice.generation"], "g1");
    assert.equal(created.restartPolicy, "no");
    assert.equal(created.networkMode, env.network);
    assert.deepEqual(created.mounts.map((m) => [m.destination, m.readOnly]).sort(), [
      ["/etc/sluice/plan.json", true],
      ["/var/lib/sluice", false],
    ]);
    // the instance file is written through the created container's own mount (no helper
    // container); the mounted plan and the volume are readable without exec, before any start
    await docker.writeContainerFile(
      id,
      "/var/lib/sluice/instance-id",
      new TextEncoder().encode(uuid + "\n"),
    );
    assert.deepEqual(await docker.readContainerFile(id, "/etc/sluice/plan.json"), planBytes);
    assert.equal(
      new TextDecoder().decode(
        (await docker.readContainerFile(id, "/var/lib/sluice/instance-id"))!,
      ),
      uuid + "\n",
    );
    assert.equal(await docker.readContainerFile(id, "/no/such/file"), null);

    await docker.startContainer(id);
    const running = await waitFor(async () => {
      const c = await docker.inspectContainer(id);
      return c?.state.running ? c : undefined;
    });
    assert.equal(running.networks[env.network], await docker.networkId(env.network));
    // TERM must reach the JVM, not the entry script that runs before it execs java
    await waitFor(
      async () => (await logsOf(id)).includes("Kafka Server started") || undefined,
      60_000,
    );
    await assert.rejects(docker.removeContainer(id), /running|stop/i); // never forced
    await docker.signalTerm(id);
    const exited = await waitFor(async () => {
      const c = await docker.inspectContainer(id);
      return c?.state.status === "exited" ? c : undefined;
    }, 60_000);
    assert.equal(exited.state.exitCode, 143); // JVM as PID 1: 128 + SIGTERM, kept as is
    assert.equal(exited.state.oomKilled, false);
    await docker.removeContainer(id);
    assert.equal(await docker.inspectContainer(id), null);
    assert.ok(await docker.inspectVolume(volume), "removing the container keeps its volume");
    assert.match(await docker.daemonId(), /\S+/);
  },
);

Deno.test(
  "kafka port: cluster and topic identity, unknown group is Dead, initial offsets set before start are read back",
  opts,
  async () => {
    const env = await sharedEnv();
    const kafka = platformaticKafka(env.bootstrapHost);
    try {
      const topic = `prov-${crypto.randomUUID().slice(0, 8)}`;
      const group = `prov-group-${crypto.randomUUID().slice(0, 8)}`;
      const id = await kafka.createTopic(topic, 2);
      const d = await kafka.describe([topic, "no-such-topic"]);
      assert.equal(d.clusterId, env.clusterId);
      assert.deepEqual(d.topics.get(topic), { name: topic, id, partitions: 2 });
      assert.equal(d.topics.has("no-such-topic"), false);

      assert.deepEqual(await kafka.describeGroup(group), {
        groupId: group,
        state: "Dead",
        members: [],
      });
      assert.deepEqual(await kafka.committedOffsets(group, topic), new Map());

      await produce(env.bootstrapHost, topic, [{ key: "a", value: "1", partition: 0 }, {
        key: "b",
        value: "2",
        partition: 0,
      }]);
      assert.deepEqual(await kafka.offsetRanges(topic, [0, 1]), [
        { partition: 0, earliest: 0n, latest: 2n },
        { partition: 1, earliest: 0n, latest: 0n },
      ]);
      await kafka.setGroupOffsets(group, topic, new Map([[0, 0n], [1, 0n]]));
      assert.deepEqual(await kafka.committedOffsets(group, topic), new Map([[0, 0n], [1, 0n]]));
      assert.equal((await kafka.describeGroup(group)).state, "Empty");
    } finally {
      await kafka.close();
    }
  },
);
