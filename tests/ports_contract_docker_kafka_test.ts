// test-needs: env
// Needs: Docker, the broker and the runner image (shared environment from tools/test.ts).
// The port contracts (testing/ports) against the real adapters — dockerode on the real daemon
// and @platformatic/kafka on the real broker — with the real runner image. The same cases run
// against the fakes in testing/ports/fakes_contract_test.ts.
import Docker from "dockerode";
import { Buffer } from "node:buffer";
import { Consumer, MessagesStreamModes, stringDeserializers } from "@platformatic/kafka";
import { RUN_LABEL, sharedEnv } from "../harness/env.ts";
import { produce, readAll, withAdmin } from "../harness/kafka.ts";
import { dockerodePort } from "../lib/providers/docker/dockerode.ts";
import { platformaticKafka } from "../lib/providers/kafka/platformatic.ts";
import { DOCKER_CONTRACT } from "../testing/ports/docker_contract.ts";
import { KAFKA_CONTRACT } from "../testing/ports/kafka_contract.ts";
import type { PortSubject } from "../testing/ports/subject.ts";
import { registerContract } from "../testing/ports/subject.ts";
import { buildRunnerImage } from "./runner_fixture.ts";
import { tarSingleFile, untarSingleFile } from "../lib/providers/docker/_tar.ts";

let runnerImage: Promise<string> | undefined;

/**
 * The runner image as runner/build.sh built it. build.sh takes the first image labelled with
 * the runner's inputs, and an image committed from a runner container inherits those labels
 * (a test that commits one leaves it on the shared daemon): prefer the built one, recognisable
 * by carrying no run label.
 */
async function builtRunnerImage(docker: Docker): Promise<string> {
  const found = await buildRunnerImage();
  const inputs = (await docker.getImage(found).inspect()).Config.Labels?.["sluice.inputs"];
  const candidates = await docker.listImages({
    filters: JSON.stringify({ label: ["sluice.image=runner", `sluice.inputs=${inputs}`] }),
  });
  return candidates.find((i) => !(RUN_LABEL in (i.Labels ?? {})))?.Id ?? found;
}

/**
 * The outside world's hand on a volume: a short-lived helper container of the test (never
 * sluice's), labelled like the case's resources and removed at once.
 */
async function throughHelper<T>(
  docker: Docker,
  image: string,
  labels: Record<string, string>,
  volume: string,
  fn: (c: Docker.Container) => Promise<T>,
): Promise<T> {
  const c = await docker.createContainer({
    Image: image,
    Entrypoint: ["/bin/true"],
    Cmd: [],
    Labels: { ...labels, "sluice.test": "volume-hand" },
    HostConfig: { Binds: [`${volume}:/v`], NetworkMode: "none" },
  });
  try {
    return await fn(c);
  } finally {
    await c.remove({ v: false });
  }
}

async function realSubject(): Promise<PortSubject> {
  const env = await sharedEnv();
  const docker = new Docker();
  runnerImage ??= builtRunnerImage(docker);
  const image = await runnerImage;
  const kafka = platformaticKafka(env.bootstrapHost);
  const uid = crypto.randomUUID().slice(0, 8);
  const prefix = `${env.runId}-pc${uid}`;
  const tempDir = await Deno.makeTempDir({ prefix: "sluice-contract-" });
  await Deno.chmod(tempDir, 0o755);
  const consumers: Consumer<string, string, string, string>[] = [];
  let n = 0;
  const labels = { ...env.labels, "sluice.contract": uid };
  return {
    kind: "real",
    docker: dockerodePort(docker),
    kafka,
    runnerImage: image,
    network: env.network,
    bootstrapInternal: env.bootstrapInternal,
    // the broker's own host on a port nothing listens on: resolvable, never connected
    unreachableBootstrap: `${env.bootstrapInternal.split(":")[0]}:1`,
    labels,
    tempDir,
    unique: (what) => `${prefix}-${what}-${++n}`,
    produce: (topic, records) => produce(env.bootstrapHost, topic, records),
    async records(topic, expect) {
      const { topics } = await kafka.describe([topic]);
      const partitions = [...Array(topics.get(topic)?.partitions ?? 1).keys()];
      const got = await readAll(env.bootstrapHost, topic, { partitions, expect });
      return got.map((r) => ({
        partition: r.partition ?? 0,
        key: r.key ?? "",
        value: r.value ?? "",
      }));
    },
    deleteRecords: (topic, partition, before) =>
      withAdmin(env.bootstrapHost, async (admin) => {
        await admin.deleteRecords({
          topics: [{ name: topic, partitions: [{ partition, offset: before }] }],
        });
      }),
    deleteTopic: (topic) =>
      withAdmin(env.bootstrapHost, (admin) => admin.deleteTopics({ topics: [topic] })),
    async joinGroup(groupId, topic) {
      const consumer = new Consumer({
        clientId: `${prefix}-member`,
        groupId,
        bootstrapBrokers: [env.bootstrapHost],
        deserializers: stringDeserializers,
      });
      consumers.push(consumer);
      const stream = await consumer.consume({
        topics: [topic],
        mode: MessagesStreamModes.COMMITTED,
        autocommit: false,
      });
      return {
        async leave() {
          await stream.close();
          await consumer.close(true);
        },
      };
    },
    async killContainer(id) {
      await docker.getContainer(id).kill({ signal: "SIGKILL" });
    },
    async readVolumeFile(volume, relPath) {
      // a bind of an absent volume would create it: look first
      if (!(await docker.getVolume(volume).inspect().catch(() => null))) return null;
      return await throughHelper(docker, image, labels, volume, async (c) => {
        const stream = await c.getArchive({ path: `/v/${relPath}` }).catch((e) => {
          if ((e as { statusCode?: number }).statusCode === 404) return null;
          throw e;
        });
        if (!stream) return null;
        const chunks: Buffer[] = [];
        for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
        const bytes = untarSingleFile(new Uint8Array(Buffer.concat(chunks)));
        return bytes === null ? null : new TextDecoder().decode(bytes);
      });
    },
    async writeVolumeFile(volume, relPath, text) {
      await throughHelper(docker, image, labels, volume, async (c) => {
        const dir = `/v/${relPath}`.replace(/\/[^/]+$/, "");
        const name = relPath.slice(relPath.lastIndexOf("/") + 1);
        await c.putArchive(tarSingleFile(name, new TextEncoder().encode(text)), { path: dir });
      });
    },
    async removeVolume(volume) {
      await docker.getVolume(volume).remove();
    },
    eventuallyMs: 120_000,
    async dispose() {
      for (const c of consumers) await c.close(true).catch(() => {});
      await kafka.close();
      const filters = JSON.stringify({ label: [`sluice.contract=${uid}`] });
      for (const c of await docker.listContainers({ all: true, filters })) {
        await docker.getContainer(c.Id).remove({ force: true, v: false });
      }
      const { Volumes } = await docker.listVolumes({
        filters: JSON.stringify({ name: [prefix] }),
      });
      for (const v of Volumes ?? []) await docker.getVolume(v.Name).remove({ force: true });
      await Deno.remove(tempDir, { recursive: true });
    },
  };
}

const opts = { sanitizeOps: false, sanitizeResources: false };
registerContract("docker port contract (real)", DOCKER_CONTRACT, realSubject, opts);
registerContract("kafka port contract (real)", KAFKA_CONTRACT, realSubject, opts);
