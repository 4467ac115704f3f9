/**
 * The fake outside world: one JSON document holding everything the fake Docker Engine, the
 * fake Kafka cluster and the simulated runners know (containers, volumes and their files,
 * images, networks, topics with their records, consumer groups, pending failure hooks), plus
 * the world clock and the ID counter. A {@link WorldStore} keeps it in memory or in a file.
 *
 * The file store is what lets a sweep SIGKILL a process mid-journey and recover in a fresh
 * one: every transaction that changes the world is written before it returns (temp file,
 * fsync, rename, fsync of the directory), under an exclusive `flock` on `<path>.lock`, so two
 * processes never interleave their read-modify-write cycles and a process killed at any point
 * leaves the world as it was before or after its last transaction, never in between. A lock
 * held by a killed process is released by the kernel.
 *
 * Offsets are decimal strings in the document (JSON has no 64-bit integers).
 *
 * @example
 * ```ts
 * import { createWorldFile, emptyWorld, fileWorldStore } from "./world.ts";
 * const path = `${await Deno.makeTempDir()}/world.json`;
 * createWorldFile(path, emptyWorld({ seed: "s" }));
 * const store = fileWorldStore(path);
 * store.transact((w) => { w.kafka.reachable = false; });
 * console.log(fileWorldStore(path).read().kafka.reachable); // false
 * ```
 * @module
 */
import { dirname, resolve } from "node:path";
import type { Expr } from "../../lib/expr/ast.ts";
import type { AclBinding } from "../../lib/providers/kafka/port.ts";
import { DOCKER_ZERO_TIME } from "../../lib/providers/docker/port.ts";
import type { SchemaField } from "../../lib/expr/schema.ts";
import type { Clock } from "./clock.ts";
import type { IdSource } from "./ids.ts";
import { idSource, seededBytes } from "./ids.ts";

/** The format name of the world document. */
export const WORLD_FORMAT = "sluice.fake-world";
/** Its version. */
export const WORLD_VERSION = 1;

/** Docker's zero time: a container that never started or never finished (the port's own). */
export const ZERO_TIME = DOCKER_ZERO_TIME;

/** How the simulated processes behave in world time. */
export interface WorldConfig {
  /** World milliseconds from `start` to the runner's verdict (RUNNING or a failed exit). */
  runner_startup_ms: number;
  /** World milliseconds from TERM to the runner's exit. */
  runner_close_ms: number;
  /** How long a member of a killed process stays in its group (Kafka's session timeout). */
  session_timeout_ms: number;
  /** How far the world clock moves each time it is read. */
  clock_step_ms: number;
}

/** An image: what `docker inspect` reports plus how a container of it behaves when started. */
export interface FakeImage {
  id: string;
  tags: string[];
  env: string[];
  labels: Record<string, string>;
  entrypoint: string[];
  cmd: string[];
  /**
   * `runner`: the simulated sluice runner (lifecycle.ts); `idle`: a process that runs until
   * TERM and then exits 143.
   */
  behaviour: "runner" | "idle";
}

/** A mount as the port reports it. */
export interface FakeMount {
  type: "bind" | "volume";
  /** Host path (bind) or volume name. */
  source: string;
  destination: string;
  readOnly: boolean;
}

/** The simulated process of a running container. */
export interface FakeProcess {
  /** `starting`: before the verdict; `running`: RUNNING (runner) or up (idle); `closing`: after TERM. */
  phase: "starting" | "running" | "closing";
  /** World time at which the current phase ends (verdict or exit). */
  due_ms: number;
  /** The consumer-group member this process holds, once RUNNING. */
  member_id: string | null;
  /** The group (application ID) of that member. */
  group_id: string | null;
  /** The input topic the runner consumes (from its plan), once known. */
  input_topic: string | null;
  /** What the runner does with each record (from its plan), once RUNNING. */
  topology: FakeTopology | null;
  /** The runner's status-file fields that stay fixed for this process. */
  generation: string | null;
  plan_sha256: string | null;
  application_id: string | null;
  started_at: string;
  running_at: string | null;
  /** Set by a hook: how the process ends at its next transition instead of the normal way. */
  planned_exit: PlannedExit | null;
  /** The status file's offset vectors (version 3): found at this start, once past the gate. */
  start_offsets?: Record<string, string> | null;
  /** The earlier run's clean close carried into this run's status file, or null. */
  previous_close?: Record<string, unknown> | null;
}

/** The runner's topology: decode against the schema, filter, project, write to the output. */
export interface FakeTopology {
  /** The model the plan's artifact names (the runner's stop context carries it). */
  model?: string;
  output_topic: string;
  schema: SchemaField[];
  predicate: Expr;
  projection: Array<{ source: string; name: string }>;
}

/** An exit decided in advance (start failure, close timeout, ...). */
export interface PlannedExit {
  code: number;
  reason: string;
  detail: string | null;
  oom: boolean;
  /** The runner's stop context (status `stop`, version 2): a decode failure's record and rule. */
  stop?: Record<string, unknown> | null;
}

/** A container, as the fake engine keeps it. */
export interface FakeContainer {
  id: string;
  name: string;
  image_id: string;
  labels: Record<string, string>;
  env: string[];
  entrypoint: string[];
  cmd: string[];
  network_mode: string;
  networks: Record<string, string>;
  mounts: FakeMount[];
  restart_policy: string;
  memory: number;
  /** Seconds Docker waits after SIGTERM (`Config.StopTimeout`); null when none was set. */
  stop_timeout: number | null;
  created_at: string;
  state: {
    status: "created" | "running" | "exited";
    running: boolean;
    exit_code: number;
    oom_killed: boolean;
    started_at: string;
    finished_at: string;
    error: string;
  };
  process: FakeProcess | null;
  /** Files written outside any mount (absolute path → base64 content). */
  rootfs: Record<string, string>;
  /**
   * Lines the process wrote on stdout, with the world time of each (the runner's
   * `SLUICE_RUNNER_STATE` markers); absent in worlds written before it was kept.
   */
  stdout?: Array<{ at: string; line: string }>;
}

/** A named volume and its files (path relative to the volume root → base64 content). */
export interface FakeVolume {
  name: string;
  labels: Record<string, string>;
  created_at: string;
  files: Record<string, string>;
}

/** One retained record of a partition. */
export interface FakeRecord {
  offset: string;
  key: string | null;
  value: string | null;
  timestamp_ms: number;
}

/** A partition: retained records from `earliest`; `latest` is the next offset to be written. */
export interface FakePartition {
  earliest: string;
  latest: string;
  records: FakeRecord[];
}

/** A topic with its Kafka-form ID. */
export interface FakeTopic {
  id: string;
  partitions: FakePartition[];
}

/** A consumer-group member. `expires_ms` is set once its process died without leaving. */
export interface FakeMember {
  member_id: string;
  client_id: string;
  client_host: string;
  group_instance_id: string | null;
  /** The container whose runner holds it, or null for an external member. */
  container_id: string | null;
  expires_ms: number | null;
  /** The topics it subscribes to (the group's assignment shares their partitions out). */
  topics: string[];
}

/** A consumer group: members and committed offsets (topic → partition → offset). */
export interface FakeGroup {
  members: FakeMember[];
  offsets: Record<string, Record<string, string>>;
}

/** A failure hook on a port call (consumed `times` times). */
export interface CallHook {
  kind: "call";
  /** The port method, e.g. `createContainer`, `setGroupOffsets`. */
  op: string;
  /** Only calls whose key (ID, name, topic or group, see the ports) equals this. */
  match: string | null;
  /** `fail`: refused before anything happens; `lose_response`: applied, then the caller gets an error. */
  effect: "fail" | "lose_response";
  message: string;
  times: number;
}

/** A hook on the simulated runner's next start verdict or next close. */
export interface RunnerHook {
  kind: "runner";
  on: "start" | "term";
  /** Container ID, container name or application ID; null for any runner. */
  match: string | null;
  exit: PlannedExit;
  times: number;
}

/** A pending failure hook. */
export type Hook = CallHook | RunnerHook;

/** One applied mutation, in order: what the sweep's invariants read. */
export interface MutationRecord {
  seq: number;
  at: string;
  /** Who applied it: a port call, a test control, or a simulated process. */
  by: "docker" | "kafka" | "connect" | "control" | "runner";
  op: string;
  key: string;
}

/** What a seeded world offers a test (fake_world.ts), as the harness's environment does. */
export interface FakeEnv {
  daemonId: string;
  clusterId: string;
  /** The Docker network runners join, and its ID. */
  network: string;
  networkId: string;
  /** The image ID of the simulated runner. */
  runnerImage: string;
  /** The broker address for clients on the host, and for runner containers. */
  bootstrapHost: string;
  bootstrapInternal: string;
  /** The fake Connect cluster's REST API, as the CLI and as containers reach it. */
  connect?: { restHost: string; restInternal: string };
}

/** A connector as the fake Connect cluster keeps it. */
export interface FakeConnector {
  name: string;
  /** The stored configuration, exactly as submitted plus `name`. */
  config: Record<string, string>;
  type: "source" | "sink";
  state: "UNASSIGNED" | "RUNNING" | "PAUSED" | "STOPPED" | "FAILED" | "RESTARTING";
  tasks: Array<{ id: number; state: FakeConnector["state"]; trace: string | null }>;
  created_at: string;
}

/**
 * A fake Kafka Connect cluster: one worker group storing its state on the world's Kafka
 * cluster. Connectors run at once (every task RUNNING) unless a control fails them; nothing
 * moves records (the FileStream connectors' data is not simulated).
 */
export interface FakeConnectCluster {
  /** The normalized REST endpoints that reach it (host and internal). */
  endpoints: string[];
  version: string;
  /** False: the workers answer nobody. */
  reachable: boolean;
  plugins: Array<{ class: string; type: "source" | "sink"; version: string }>;
  connectors: Record<string, FakeConnector>;
}

/** The whole world. */
export interface World {
  format: typeof WORLD_FORMAT;
  version: typeof WORLD_VERSION;
  seed: string;
  /** Set when the world was seeded with a daemon, a cluster, a network and a runner image. */
  env: FakeEnv | null;
  clock: { now_ms: number };
  ids: { counter: number };
  config: WorldConfig;
  /** The default Docker daemon (the environment's one daemon). */
  docker: FakeDaemon;
  /**
   * Further daemons by endpoint name (`docker.endpoints`), each with its own containers,
   * volumes, images and networks, all reaching the one broker; absent in worlds made before
   * sets of instances existed ({@link daemonOf}).
   */
  daemons?: Record<string, FakeDaemon>;
  kafka: {
    cluster_id: string;
    /** False: the broker answers nobody (host clients fail, runners exit 15). */
    reachable: boolean;
    /** Addresses host clients may use. */
    host_listeners: string[];
    /** Addresses runner containers may use (the plan's bootstrap_servers). */
    internal_listeners: string[];
    topics: Record<string, FakeTopic>;
    groups: Record<string, FakeGroup>;
    /** The authorizer's ACL bindings (absent: none; worlds made before ACLs existed). */
    acls?: AclBinding[];
    /** True: sluice's admin principal may not describe ACLs (CLUSTER_AUTHORIZATION_FAILED). */
    acl_describe_denied?: boolean;
  };
  /** The Connect cluster (absent in worlds created before it existed). */
  connect?: FakeConnectCluster;
  hooks: Hook[];
  log: MutationRecord[];
}

/** One Docker daemon of the world. */
export interface FakeDaemon {
  daemon_id: string;
  /** False: the daemon answers nobody (its endpoint is unreachable); absent: it answers. */
  reachable?: boolean;
  images: Record<string, FakeImage>;
  /** Network name → ID. */
  networks: Record<string, string>;
  containers: Record<string, FakeContainer>;
  volumes: Record<string, FakeVolume>;
}

/**
 * The daemon named `name` (null: the default one); a programming error when the world has none
 * of that name.
 *
 * @example
 * ```ts
 * import { daemonOf, emptyWorld } from "./world.ts";
 * console.log(daemonOf(emptyWorld({ seed: "x" }), null).daemon_id); // ""
 * ```
 */
export function daemonOf(w: World, name: string | null): FakeDaemon {
  if (name === null) return w.docker;
  const d = w.daemons?.[name];
  if (!d) throw new Error(`fake: the world has no Docker daemon named ${name}`);
  return d;
}

/**
 * The daemon a name stands for: itself; with `orDefault`, a name the world has no daemon of is
 * the default daemon (an endpoint a test did not add is the one daemon, as the first endpoint is
 * the daemon single-instance models run on).
 *
 * @example
 * ```ts
 * import { emptyWorld, resolveDaemon } from "./world.ts";
 * console.log(resolveDaemon(emptyWorld({ seed: "x" }), "east", true)); // null
 * ```
 */
export function resolveDaemon(w: World, name: string | null, orDefault: boolean): string | null {
  return name !== null && orDefault && !w.daemons?.[name] ? null : name;
}

/**
 * The world as seen from daemon `name`: the same world (every part shared, so changes persist)
 * with that daemon as its `docker`. Every fake Docker call and every simulated process works on
 * such a view, so a container's files, volumes and image are its own daemon's.
 *
 * @example
 * ```ts
 * import { emptyWorld, onDaemon } from "./world.ts";
 * const w = emptyWorld({ seed: "x" });
 * console.log(onDaemon(w, null).docker === w.docker); // true
 * ```
 */
export function onDaemon(w: World, name: string | null): World {
  return name === null ? w : { ...w, docker: daemonOf(w, name) };
}

/**
 * Every daemon's name (null: the default one), the default first, then by name.
 *
 * @example
 * ```ts
 * import { daemonNames, emptyWorld } from "./world.ts";
 * console.log(daemonNames(emptyWorld({ seed: "x" }))); // [null]
 * ```
 */
export function daemonNames(w: World): Array<string | null> {
  return [null, ...Object.keys(w.daemons ?? {}).sort()];
}

/** What a new world starts with. */
export interface WorldOptions {
  seed: string;
  /** World clock at creation (default 2026-01-01T00:00:00Z). */
  startMs?: number;
  config?: Partial<WorldConfig>;
}

/** The default world configuration: verdicts and exits at the next read, Kafka's 45 s session. */
export const DEFAULT_CONFIG: WorldConfig = {
  runner_startup_ms: 0,
  runner_close_ms: 0,
  session_timeout_ms: 45_000,
  clock_step_ms: 1,
};

/**
 * An empty world (no daemon or cluster identity yet: {@link "./fake_world.ts"} seeds them).
 *
 * @example
 * ```ts
 * import { emptyWorld } from "./world.ts";
 * console.log(emptyWorld({ seed: "x" }).format); // sluice.fake-world
 * ```
 */
export function emptyWorld(options: WorldOptions): World {
  return {
    format: WORLD_FORMAT,
    version: WORLD_VERSION,
    seed: options.seed,
    env: null,
    clock: { now_ms: options.startMs ?? Date.parse("2026-01-01T00:00:00Z") },
    ids: { counter: 0 },
    config: { ...DEFAULT_CONFIG, ...options.config },
    docker: { daemon_id: "", images: {}, networks: {}, containers: {}, volumes: {} },
    kafka: {
      cluster_id: "",
      reachable: true,
      host_listeners: [],
      internal_listeners: [],
      topics: {},
      groups: {},
    },
    hooks: [],
    log: [],
  };
}

/** Where the world lives. */
export interface WorldStore {
  /** The file, or null for an in-memory world. */
  readonly path: string | null;
  /**
   * Run `fn` (synchronous) on the current world under the exclusive lock. If it returns
   * normally and changed the world, the change is durable before `transact` returns; if it
   * throws, nothing is kept. A nested call (from `fn`) works on the same world.
   */
  transact<T>(fn: (w: World) => T): T;
  /** A copy of the current world. */
  read(): World;
}

function check(w: World, where: string): World {
  if (w?.format !== WORLD_FORMAT || w.version !== WORLD_VERSION) {
    throw new Error(`${where} is not a ${WORLD_FORMAT} version ${WORLD_VERSION} document`);
  }
  return w;
}

/**
 * A world kept in this process only (fast unit tests).
 *
 * @example
 * ```ts
 * import { emptyWorld, memoryWorldStore } from "./world.ts";
 * const s = memoryWorldStore(emptyWorld({ seed: "m" }));
 * s.transact((w) => { w.kafka.cluster_id = "c"; });
 * console.log(s.read().kafka.cluster_id); // c
 * ```
 */
export function memoryWorldStore(initial: World): WorldStore {
  let text = JSON.stringify(check(initial, "the initial world"));
  let active: World | null = null;
  return {
    path: null,
    transact(fn) {
      if (active) return fn(active);
      const w = JSON.parse(text) as World;
      active = w;
      try {
        const result = fn(w);
        text = JSON.stringify(w);
        return result;
      } finally {
        active = null;
      }
    },
    read: () => JSON.parse(text) as World,
  };
}

const encoder = new TextEncoder();

/** The world of each file with a transaction in progress in this process. */
const active = new Map<string, World>();

function writeDurably(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  const f = Deno.openSync(tmp, { write: true, create: true, truncate: true, mode: 0o644 });
  try {
    const bytes = encoder.encode(text);
    let off = 0;
    while (off < bytes.length) off += f.writeSync(bytes.subarray(off));
    f.syncSync();
  } finally {
    f.close();
  }
  Deno.renameSync(tmp, path);
  const dir = Deno.openSync(dirname(path), { read: true });
  try {
    dir.syncSync();
  } catch {
    // some filesystems cannot fsync a directory; the rename is still atomic
  } finally {
    dir.close();
  }
}

function withFileLock<T>(path: string, exclusive: boolean, fn: () => T): T {
  const lock = Deno.openSync(`${path}.lock`, { read: true, write: true, create: true });
  try {
    lock.lockSync(exclusive);
    return fn();
  } finally {
    lock.close(); // closing the descriptor releases the flock
  }
}

/**
 * Write a new world file; refuses to overwrite an existing one.
 *
 * @example
 * ```ts
 * import { createWorldFile, emptyWorld } from "./world.ts";
 * createWorldFile(`${await Deno.makeTempDir()}/w.json`, emptyWorld({ seed: "s" }));
 * ```
 */
export function createWorldFile(path: string, world: World): void {
  check(world, "the new world");
  withFileLock(path, true, () => {
    try {
      Deno.statSync(path);
      throw new Error(`world file ${path} already exists`);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    writeDurably(path, JSON.stringify(world));
  });
}

/**
 * The world in `path`, shared by every process that opens it.
 *
 * @example
 * ```ts
 * import { createWorldFile, emptyWorld, fileWorldStore } from "./world.ts";
 * const path = `${await Deno.makeTempDir()}/w.json`;
 * createWorldFile(path, emptyWorld({ seed: "s" }));
 * console.log(fileWorldStore(path).read().seed); // s
 * ```
 */
export function fileWorldStore(file: string): WorldStore {
  const path = resolve(file);
  const load = () => check(JSON.parse(Deno.readTextFileSync(path)) as World, path);
  return {
    path,
    transact(fn) {
      // nested (a clock or ID read inside a port call), even through another store object
      // for the same file: the same world, or the second flock would wait for the first
      const open = active.get(path);
      if (open) return fn(open);
      return withFileLock(path, true, () => {
        const before = Deno.readTextFileSync(path);
        const w = check(JSON.parse(before) as World, path);
        active.set(path, w);
        try {
          const result = fn(w);
          const after = JSON.stringify(w);
          if (after !== before) writeDurably(path, after);
          return result;
        } finally {
          active.delete(path);
        }
      });
    },
    read() {
      const open = active.get(path);
      return open ? structuredClone(open) : withFileLock(path, false, load);
    },
  };
}

/**
 * The world's clock: its time is in the world document and moves `clock_step_ms` forward at
 * each read, durably, so it is deterministic and never goes backwards across processes;
 * `sleep(ms)` moves it `ms` forward at once.
 *
 * @example
 * ```ts
 * import { emptyWorld, memoryWorldStore, worldClock } from "./world.ts";
 * const clock = worldClock(memoryWorldStore(emptyWorld({ seed: "s", startMs: 0 })));
 * console.log(clock.now(), clock.now()); // 1 2
 * ```
 */
export function worldClock(store: WorldStore): Clock {
  return {
    now: () => store.transact((w) => (w.clock.now_ms += w.config.clock_step_ms)),
    // a wait is world time passing: polls and bounded waits cost no real time
    sleep(ms) {
      advanceWorldClock(store, Math.max(0, ms));
      return new Promise((r) => setTimeout(r, 0));
    },
  };
}

/**
 * Move the world clock forward by `ms` (a test's way to let time pass).
 *
 * @example
 * ```ts
 * import { advanceWorldClock, emptyWorld, memoryWorldStore } from "./world.ts";
 * const s = memoryWorldStore(emptyWorld({ seed: "s", startMs: 0 }));
 * advanceWorldClock(s, 60_000);
 * console.log(s.read().clock.now_ms); // 60000
 * ```
 */
export function advanceWorldClock(store: WorldStore, ms: number): void {
  if (!(ms >= 0)) throw new RangeError(`the world clock only moves forward (advance ${ms})`);
  store.transact((w) => {
    w.clock.now_ms += ms;
  });
}

/**
 * The world's ID source: the n-th ID of the world's seed, with the counter in the document,
 * so a fresh process continues the sequence instead of repeating it.
 *
 * @example
 * ```ts
 * import { emptyWorld, memoryWorldStore, worldIds } from "./world.ts";
 * console.log(worldIds(memoryWorldStore(emptyWorld({ seed: "s" }))).uuid());
 * ```
 */
export function worldIds(store: WorldStore): IdSource {
  return idSource(() => store.transact((w) => seededBytes(w.seed, w.ids.counter++)));
}

/**
 * Append a mutation to the world's log.
 *
 * @example
 * ```ts
 * import { emptyWorld, logMutation } from "./world.ts";
 * const w = emptyWorld({ seed: "s" });
 * logMutation(w, 0, "control", "produce", "raw_orders");
 * console.log(w.log.length); // 1
 * ```
 */
export function logMutation(
  w: World,
  nowMs: number,
  by: MutationRecord["by"],
  op: string,
  key: string,
): void {
  w.log.push({ seq: w.log.length + 1, at: new Date(nowMs).toISOString(), by, op, key });
}
