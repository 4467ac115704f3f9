/**
 * The contracts' subject for the fakes: a file-backed fake world (the configuration the crash
 * sweep uses) in a temporary directory, with the world's controls as the outside world.
 *
 * @example
 * ```ts
 * import { fakeSubject } from "./fake_subject.ts";
 * const s = await fakeSubject();
 * console.log(await s.docker.daemonId());
 * await s.dispose();
 * ```
 * @module
 */
import { createFakeWorld } from "../fakes/fake_world.ts";
import type { FakeWorld } from "../fakes/fake_world.ts";
import type { WorldConfig } from "../fakes/world.ts";
import { fromB64 } from "../fakes/_files.ts";
import type { PortSubject } from "./subject.ts";
import type { ConnectSubject } from "./connect_contract.ts";

/** A subject with its fake world exposed, for fake-only assertions. */
export type FakeSubject = PortSubject & { world: FakeWorld };

/**
 * A subject over an existing world. `unique` defaults to numbered names; `dispose` only
 * closes the Kafka client unless `onDispose` adds more.
 *
 * @example
 * ```ts
 * import { createFakeWorld } from "../fakes/fake_world.ts";
 * import { worldSubject } from "./fake_subject.ts";
 * const s = worldSubject(createFakeWorld({ seed: "x" }), { tempDir: await Deno.makeTempDir() });
 * await s.dispose();
 * ```
 */
export function worldSubject(
  world: FakeWorld,
  options: { tempDir: string; unique?: (what: string) => string; onDispose?: () => Promise<void> },
): FakeSubject {
  const kafka = world.kafka(world.env.bootstrapHost);
  let n = 0;
  return {
    kind: "fake",
    world,
    docker: world.docker,
    kafka,
    runnerImage: world.env.runnerImage,
    network: world.env.network,
    bootstrapInternal: world.env.bootstrapInternal,
    unreachableBootstrap: `${world.env.bootstrapInternal.split(":")[0]}:1`,
    labels: { "sluice.contract": "fake" },
    tempDir: options.tempDir,
    unique: options.unique ?? ((what) => `fake-${what}-${++n}`),
    produce: (topic, records) => Promise.resolve(void world.control.produce(topic, records)),
    records: (topic) =>
      Promise.resolve(
        (world.control.snapshot().kafka.topics[topic]?.partitions ?? []).flatMap((p, partition) =>
          p.records.map((r) => ({ partition, key: r.key ?? "", value: r.value ?? "" }))
        ),
      ),
    deleteRecords: (topic, partition, before) =>
      Promise.resolve(world.control.deleteRecords(topic, partition, before)),
    deleteTopic: (topic) => Promise.resolve(world.control.deleteTopic(topic)),
    joinGroup: (groupId, topic) => {
      const member = world.control.joinGroup(groupId, undefined, [topic]);
      return Promise.resolve({
        leave: () => Promise.resolve(world.control.leaveGroup(groupId, member)),
      });
    },
    killContainer: (id) => Promise.resolve(world.control.killContainer(id)),
    readVolumeFile: (volume, relPath) => {
      const b64 = world.control.snapshot().docker.volumes[volume]?.files[relPath];
      return Promise.resolve(b64 === undefined ? null : new TextDecoder().decode(fromB64(b64)));
    },
    writeVolumeFile: (volume, relPath, text) =>
      Promise.resolve(world.control.writeVolumeFile(volume, relPath, text)),
    removeVolume: (volume) => Promise.resolve(world.control.removeVolume(volume)),
    eventuallyMs: 5_000,
    async dispose() {
      await kafka.close();
      await options.onDispose?.();
    },
  };
}

/** A subject over a new file-backed world in a new temporary directory (removed on dispose). */
export async function fakeSubject(
  options: { seed?: string; config?: Partial<WorldConfig> } = {},
): Promise<FakeSubject> {
  const tempDir = await Deno.makeTempDir({ prefix: "sluice-fake-world-" });
  const world = createFakeWorld({
    seed: options.seed ?? `contract-${crypto.randomUUID()}`,
    path: `${tempDir}/world.json`,
    config: options.config,
  });
  return worldSubject(world, {
    tempDir,
    onDispose: () => Deno.remove(tempDir, { recursive: true }),
  });
}

/**
 * The Connect contract's subject for the fakes: a file-backed fake world with its Connect
 * cluster (removed on dispose).
 *
 * @example
 * ```ts
 * import { fakeConnectSubject } from "./fake_subject.ts";
 * const s = await fakeConnectSubject();
 * console.log((await s.connect.clusterInfo()).kafkaClusterId === s.kafkaClusterId);
 * await s.dispose();
 * ```
 */
export async function fakeConnectSubject(): Promise<ConnectSubject> {
  const tempDir = await Deno.makeTempDir({ prefix: "sluice-fake-connect-" });
  const world = createFakeWorld({
    seed: `connect-contract-${crypto.randomUUID()}`,
    path: `${tempDir}/world.json`,
  });
  const kafka = world.kafka(world.env.bootstrapHost);
  let n = 0;
  const unique = (what: string) => `fake-${what}-${++n}`;
  const topic = async () => {
    const t = unique("topic");
    await kafka.createTopic(t, 1);
    return t;
  };
  return {
    kind: "fake",
    connect: world.connect(),
    unreachable: world.connect("http://127.0.0.1:1"),
    kafkaClusterId: world.env.clusterId,
    unique,
    sourceConfig: async () => ({
      "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
      "tasks.max": "1",
      file: `/data/${unique("in")}.jsonl`,
      topic: await topic(),
    }),
    sinkConfig: async () => ({
      "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
      "tasks.max": "1",
      file: `/data/${unique("out")}.jsonl`,
      topics: await topic(),
    }),
    eventuallyMs: 5_000,
    async dispose() {
      await kafka.close();
      await Deno.remove(tempDir, { recursive: true });
    },
  };
}
