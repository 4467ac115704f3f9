/**
 * A whole fake environment in one value: the world (in memory, or in a file that survives the
 * process), its clock and ID source, the fake Docker and Kafka ports and the test controls.
 * A seeded world has what the harness's real environment has: a daemon, a cluster, a network
 * and the runner image (the simulated runner), with host and internal broker addresses.
 *
 * Across processes: the parent creates the file with {@link createFakeWorld}, a child opens it
 * with {@link openFakeWorld} and gets the same world, the same clock (in the world) and the
 * continuation of the same ID sequence (the counter is in the world). Time and IDs are
 * deterministic for a seed.
 *
 * @example
 * ```ts
 * import { createFakeWorld, openFakeWorld } from "./fake_world.ts";
 * const path = `${await Deno.makeTempDir()}/world.json`;
 * const parent = createFakeWorld({ seed: "sweep-1", path });
 * await parent.kafka(parent.env.bootstrapHost).createTopic("raw_orders", 3);
 * const child = openFakeWorld(path); // e.g. in another process
 * console.log((await child.kafka().describe(["raw_orders"])).topics.get("raw_orders"));
 * ```
 * @module
 */
import type { DockerPort } from "../../lib/providers/docker/port.ts";
import type { KafkaPort } from "../../lib/providers/kafka/port.ts";
import type { ConnectPort } from "../../lib/providers/connect/port.ts";
import type { Clock } from "./clock.ts";
import type { IdSource } from "./ids.ts";
import { dockerDaemonId, hex64, kafkaUuid } from "./ids.ts";
import { fakeKafkaPort } from "./broker.ts";
import { fakeDockerPort } from "./engine.ts";
import type { FakeControl } from "./control.ts";
import { fakeControl } from "./control.ts";
import type { FakeConnectControl } from "./connect.ts";
import { fakeConnectCluster, fakeConnectControl, fakeConnectPort } from "./connect.ts";
import type { FakeEnv, WorldConfig, WorldStore } from "./world.ts";
import {
  createWorldFile,
  emptyWorld,
  fileWorldStore,
  memoryWorldStore,
  worldClock,
  worldIds,
} from "./world.ts";

/** A fake environment. */
export interface FakeWorld {
  store: WorldStore;
  clock: Clock;
  ids: IdSource;
  /** What was seeded (daemon, cluster, network, runner image, broker addresses). */
  env: FakeEnv;
  docker: DockerPort;
  /** A Kafka client for `bootstrap` (default: any address; the broker must be up). */
  kafka(bootstrap?: string): KafkaPort;
  /** A Connect client for `endpoint` (default: the seeded host address). */
  connect(endpoint?: string): ConnectPort;
  control: FakeControl;
  /** The test's hands on the Connect cluster. */
  connectControl: FakeConnectControl;
  /**
   * The Docker port and the controls of the daemon named `name` (added by
   * `control.addDaemon`): an endpoint of `docker.endpoints`. A name the world has no daemon of
   * (when a call is made) is the default daemon: the first endpoint, where single-instance
   * models run, needs no daemon of its own.
   */
  endpoint(name: string): { docker: DockerPort; control: FakeControl };
}

/** How to create a world. */
export interface CreateOptions {
  seed: string;
  /** The world file; absent for a world in this process's memory. */
  path?: string;
  startMs?: number;
  config?: Partial<WorldConfig>;
  /**
   * Defaults: network `sluice-net`, host broker `fake-broker:9094`, internal `kafka:9092`,
   * Connect at `http://fake-connect:8083` (host) and `http://connect:8083` (internal).
   */
  network?: string;
  bootstrapHost?: string;
  bootstrapInternal?: string;
  connectRestHost?: string;
  connectRestInternal?: string;
  /** A clock to use instead of the world clock (the world clock is stored in the world). */
  clock?: Clock;
}

/** The runner image as `runner/build.sh` makes it (labels, environment, entry point). */
function runnerImage(ids: IdSource) {
  return {
    id: `sha256:${hex64(ids)}`,
    tags: ["sluice/runner:fake"],
    env: [
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "LANG=C.UTF-8",
      "JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64",
    ],
    labels: {
      "sluice.image": "runner",
      "sluice.runner.version": "0.1.0",
      "sluice.inputs": hex64(ids),
    },
    entrypoint: [
      "java",
      "-XX:+ExitOnOutOfMemoryError",
      "-cp",
      "/opt/sluice/lib/*",
      "dev.sluice.runner.Main",
    ],
    cmd: ["run"],
    behaviour: "runner" as const,
  };
}

function assemble(store: WorldStore, clock: Clock | undefined): FakeWorld {
  const ctx = { store, clock: clock ?? worldClock(store), ids: worldIds(store) };
  const env = store.read().env;
  if (!env) throw new Error("the fake world was never seeded (use createFakeWorld)");
  return {
    ...ctx,
    env,
    docker: fakeDockerPort(ctx),
    kafka: (bootstrap) => fakeKafkaPort(ctx, bootstrap),
    connect: (endpoint) => {
      const at = endpoint ?? env.connect?.restHost;
      if (!at) throw new Error("this fake world has no Connect cluster");
      return fakeConnectPort(ctx, at);
    },
    control: fakeControl(ctx),
    connectControl: fakeConnectControl(ctx),
    endpoint: (name) => ({
      docker: fakeDockerPort(ctx, name, { orDefault: true }),
      control: fakeControl(ctx, name, { orDefault: true }),
    }),
  };
}

/**
 * Create and seed a world: a daemon ID, a cluster ID, the network, the runner image and a
 * Connect cluster on that Kafka cluster.
 *
 * @example
 * ```ts
 * import { createFakeWorld } from "./fake_world.ts";
 * const world = createFakeWorld({ seed: "unit" });
 * console.log(world.env.runnerImage.startsWith("sha256:")); // true
 * ```
 */
export function createFakeWorld(options: CreateOptions): FakeWorld {
  const initial = emptyWorld(options);
  const store = options.path === undefined
    ? memoryWorldStore(initial)
    : (createWorldFile(options.path, initial), fileWorldStore(options.path));
  const ids = worldIds(store);
  store.transact((w) => {
    const network = options.network ?? "sluice-net";
    const image = runnerImage(ids);
    w.docker.daemon_id = dockerDaemonId(ids);
    w.docker.networks[network] = hex64(ids);
    w.docker.images[image.id] = image;
    w.kafka.cluster_id = kafkaUuid(ids);
    const host = options.bootstrapHost ?? "fake-broker:9094";
    const internal = options.bootstrapInternal ?? "kafka:9092";
    w.kafka.host_listeners = [host];
    w.kafka.internal_listeners = [internal];
    const connect = {
      restHost: options.connectRestHost ?? "http://fake-connect:8083",
      restInternal: options.connectRestInternal ?? "http://connect:8083",
    };
    w.connect = fakeConnectCluster([connect.restHost, connect.restInternal]);
    w.env = {
      daemonId: w.docker.daemon_id,
      clusterId: w.kafka.cluster_id,
      network,
      networkId: w.docker.networks[network],
      runnerImage: image.id,
      bootstrapHost: host,
      bootstrapInternal: internal,
      connect,
    };
  });
  return assemble(store, options.clock);
}

/**
 * Open a world file created by {@link createFakeWorld} (in this or another process).
 *
 * @example
 * ```ts
 * import { createFakeWorld, openFakeWorld } from "./fake_world.ts";
 * const path = `${await Deno.makeTempDir()}/w.json`;
 * createFakeWorld({ seed: "s", path });
 * console.log(openFakeWorld(path).env.network); // sluice-net
 * ```
 */
export function openFakeWorld(path: string, options: { clock?: Clock } = {}): FakeWorld {
  return assemble(fileWorldStore(path), options.clock);
}
