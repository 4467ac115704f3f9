/**
 * What a test does to the fake world from outside sluice: the things an operator, another
 * client, the kernel or time would do to the real Docker and Kafka (produce records, let
 * retention delete them, delete a topic, kill or OOM-kill a container, take the broker down),
 * and the failure hooks a sweep arms (a refused or lost port call, a runner that fails its
 * start or its close). Every control is one durable world transaction, logged with `by:
 * "control"`, so a hook armed here is honoured by a child process that opens the same file.
 *
 * @example
 * ```ts
 * import { createFakeWorld } from "./fake_world.ts";
 * const world = createFakeWorld({ seed: "doc" });
 * await world.kafka().createTopic("raw_orders", 1);
 * world.control.produce("raw_orders", [{ partition: 0, key: "k", value: "{}" }]);
 * world.control.failCall("createContainer", { effect: "lose_response" });
 * ```
 * @module
 */
import { dockerDaemonId, hex64 } from "./ids.ts";
import { crashProcess, killProcess, statusPath } from "./lifecycle.ts";
import { findContainer } from "./engine.ts";
import { readContainerPath, toB64 } from "./_files.ts";
import { appendRecord } from "./_records.ts";
import type { FakeContext } from "./_port_call.ts";
import { FakeProviderError, portCall } from "./_port_call.ts";
import type {
  CallHook,
  FakeContainer,
  FakeImage,
  MutationRecord,
  PlannedExit,
  RunnerHook,
  World,
} from "./world.ts";
import { advanceWorldClock, daemonOf, onDaemon, resolveDaemon } from "./world.ts";

/** A record to produce; without a partition, keyed records hash and others go round-robin. */
export interface ProducedRecord {
  partition?: number;
  key?: string | null;
  value?: string | null;
}

/**
 * The execution options, environment and mounts {@link FakeControl.reconfigureContainer}
 * changes (absent: kept).
 */
export type ContainerOptions = Partial<
  Pick<
    FakeContainer,
    "entrypoint" | "cmd" | "stop_timeout" | "memory" | "restart_policy" | "env" | "mounts"
  >
>;

/** The test's hands on the fake world. */
export interface FakeControl {
  /** Add an image (its ID is generated unless given); returns the ID. */
  addImage(image: Partial<FakeImage> & Pick<FakeImage, "behaviour">): string;
  /** Add a network; returns its ID. */
  addNetwork(name: string): string;
  removeNetwork(name: string): void;
  /** SIGKILL (exit 137), or the OOM killer with `oom`; the status file is left as it was. */
  killContainer(idOrName: string, options?: { oom?: boolean }): void;
  /** A fatal error of the running process: status FAILED with this exit. */
  crashContainer(idOrName: string, exit: { code: number; reason: string; detail?: string }): void;
  /**
   * Change a container's labels (null removes one): what a container re-created by hand under
   * the same name looks like to the observer.
   */
  relabelContainer(idOrName: string, labels: Record<string, string | null>): void;
  /**
   * Change a container's fixed execution options, environment or mounts as `docker inspect`
   * reports them (`null` stop timeout: none set): what a container re-created by hand under the
   * same name with other options (`--entrypoint`, a command, `--stop-timeout`, `-e`, `-v`, ...)
   * looks like to the observer.
   */
  reconfigureContainer(idOrName: string, options: ContainerOptions): void;
  /** Remove a volume (refused while a container uses it, as Docker does). */
  removeVolume(name: string): void;
  /** Create a volume outside sluice (labels, no instance file). */
  createForeignVolume(name: string, labels?: Record<string, string>): void;
  /** Replace (or, with null, delete) a file of a volume, path relative to its root. */
  writeVolumeFile(volume: string, relPath: string, text: string | null): void;
  /** Append records; returns their offsets. */
  produce(topic: string, records: ProducedRecord[]): bigint[];
  /** Retention: delete the records of a partition below `before`. */
  deleteRecords(topic: string, partition: number, before: bigint): void;
  /** Delete a topic (with every group's offsets for it). */
  deleteTopic(name: string): void;
  /**
   * An external consumer joins a group, subscribed to `topics` (none by default: it is assigned
   * nothing); returns its member ID.
   */
  joinGroup(groupId: string, clientId?: string, topics?: string[]): string;
  leaveGroup(groupId: string, memberId: string): void;
  /** Take the broker down (every client and runner fails to reach it) or bring it back. */
  setBrokerReachable(reachable: boolean): void;
  /**
   * Add a Docker daemon named `name` (an endpoint of `docker.endpoints`): its own daemon ID, the
   * seeded network under its own ID, and the default daemon's images (one build loaded on both);
   * returns its daemon ID. Its containers reach the one broker.
   */
  addDaemon(name: string): string;
  /** Take a daemon down (every call to it fails as an unreachable endpoint) or bring it back. */
  setDaemonReachable(name: string, reachable: boolean): void;
  /** Arm a failure of the next matching port call(s). */
  failCall(
    op: string,
    options?: { match?: string; effect?: CallHook["effect"]; times?: number; message?: string },
  ): void;
  /** Arm an exit of the next matching runner start verdict or close, instead of the normal one. */
  failRunner(
    on: RunnerHook["on"],
    exit: { code: number; reason: string; detail?: string; oom?: boolean },
    options?: { match?: string; times?: number },
  ): void;
  /** Let world time pass (only for a world whose clock is the world clock). */
  advanceClock(ms: number): void;
  /** Every mutation applied so far, in order. */
  mutations(): MutationRecord[];
  /** A container as the fake keeps it (after moving the world to now), or null. */
  container(idOrName: string): FakeContainer | null;
  /** The runner status file of a container, parsed, or null. */
  runnerStatus(idOrName: string): Record<string, unknown> | null;
  /** A copy of the whole world (after moving it to now). */
  snapshot(): World;
}

/**
 * The controls of a world.
 *
 * @example
 * ```ts
 * import { createFakeWorld } from "./fake_world.ts";
 * const { control } = createFakeWorld({ seed: "x" });
 * control.setBrokerReachable(false);
 * ```
 */
export function fakeControl(
  ctx: FakeContext,
  daemon: string | null = null,
  options: { orDefault?: boolean } = {},
): FakeControl {
  const view = (w: World) => onDaemon(w, resolveDaemon(w, daemon, options.orDefault ?? false));
  // the whole world, for what is not one daemon's
  const actOnWorld = <T>(op: string, key: string, fn: (w: World, now: number) => T): T =>
    portCall(ctx, "control", op, key, true, fn);
  // the world as seen from this control's daemon
  const act = <T>(op: string, key: string, fn: (w: World, now: number) => T): T =>
    actOnWorld(op, key, (w, now) => fn(view(w), now));
  const look = <T>(fn: (w: World, now: number) => T): T =>
    portCall(ctx, "control", "look", "", false, (w, now) => fn(view(w), now));
  const mustFind = (w: World, idOrName: string) => {
    const c = findContainer(w, idOrName);
    if (!c) throw new FakeProviderError(`fake: no container ${idOrName}`);
    return c;
  };
  const topicOf = (w: World, name: string) => {
    const t = w.kafka.topics[name];
    if (!t) throw new FakeProviderError(`fake: no topic ${name}`);
    return t;
  };

  return {
    addImage: (image) =>
      act("addImage", image.id ?? "", (w) => {
        const id = image.id ?? `sha256:${hex64(ctx.ids)}`;
        w.docker.images[id] = {
          id,
          tags: image.tags ?? [],
          env: image.env ?? [],
          labels: image.labels ?? {},
          entrypoint: image.entrypoint ?? [],
          cmd: image.cmd ?? [],
          behaviour: image.behaviour,
        };
        return id;
      }),

    addNetwork: (name) =>
      act("addNetwork", name, (w) => {
        if (w.docker.networks[name]) throw new FakeProviderError(`fake: network ${name} exists`);
        return (w.docker.networks[name] = hex64(ctx.ids));
      }),

    removeNetwork: (name) =>
      act("removeNetwork", name, (w) => {
        delete w.docker.networks[name];
      }),

    killContainer: (idOrName, options = {}) =>
      act(options.oom ? "oomKill" : "kill", idOrName, (w, now) => {
        const c = mustFind(w, idOrName);
        if (!c.state.running) throw new FakeProviderError(`fake: ${idOrName} is not running`);
        killProcess(w, c, now, options.oom ?? false);
      }),

    crashContainer: (idOrName, exit) =>
      act("crash", idOrName, (w, now) => {
        const c = mustFind(w, idOrName);
        if (!c.state.running) throw new FakeProviderError(`fake: ${idOrName} is not running`);
        crashProcess(w, c, now, {
          code: exit.code,
          reason: exit.reason,
          detail: exit.detail ?? null,
          oom: false,
        });
      }),

    relabelContainer: (idOrName, labels) =>
      act("relabelContainer", idOrName, (w) => {
        const c = mustFind(w, idOrName);
        for (const [k, v] of Object.entries(labels)) {
          if (v === null) delete c.labels[k];
          else c.labels[k] = v;
        }
      }),

    reconfigureContainer: (idOrName, options) =>
      act("reconfigureContainer", idOrName, (w) => {
        const c = mustFind(w, idOrName);
        if (options.entrypoint !== undefined) c.entrypoint = [...options.entrypoint];
        if (options.cmd !== undefined) c.cmd = [...options.cmd];
        if (options.stop_timeout !== undefined) c.stop_timeout = options.stop_timeout;
        if (options.memory !== undefined) c.memory = options.memory;
        if (options.restart_policy !== undefined) c.restart_policy = options.restart_policy;
        if (options.env !== undefined) c.env = [...options.env];
        if (options.mounts !== undefined) c.mounts = options.mounts.map((m) => ({ ...m }));
      }),

    removeVolume: (name) =>
      act("removeVolume", name, (w) => {
        const users = Object.values(w.docker.containers).filter((c) =>
          c.mounts.some((m) => m.type === "volume" && m.source === name)
        );
        if (users.length > 0) {
          throw new FakeProviderError(
            `fake: remove ${name}: volume is in use - [${users.map((c) => c.id).join(", ")}]`,
          );
        }
        delete w.docker.volumes[name];
      }),

    createForeignVolume: (name, labels = {}) =>
      act("createForeignVolume", name, (w, now) => {
        if (w.docker.volumes[name]) throw new FakeProviderError(`fake: volume ${name} exists`);
        w.docker.volumes[name] = {
          name,
          labels: { ...labels },
          created_at: new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z"),
          files: {},
        };
      }),

    writeVolumeFile: (volume, relPath, text) =>
      act("writeVolumeFile", `${volume}/${relPath}`, (w) => {
        const v = w.docker.volumes[volume];
        if (!v) throw new FakeProviderError(`fake: no volume ${volume}`);
        if (text === null) delete v.files[relPath];
        else v.files[relPath] = toB64(new TextEncoder().encode(text));
      }),

    produce: (topic, records) =>
      act("produce", topic, (w, now) => {
        const t = topicOf(w, topic);
        return records.map((r) => {
          if (r.partition !== undefined && !t.partitions[r.partition]) {
            throw new FakeProviderError(`fake: ${topic} has no partition ${r.partition}`);
          }
          return appendRecord(t, {
            partition: r.partition,
            key: r.key ?? null,
            value: r.value ?? null,
          }, now)
            .offset;
        });
      }),

    deleteRecords: (topic, partition, before) =>
      act("deleteRecords", `${topic}-${partition}`, (w) => {
        const part = topicOf(w, topic).partitions[partition];
        if (!part) throw new FakeProviderError(`fake: ${topic} has no partition ${partition}`);
        if (before > BigInt(part.latest)) {
          throw new FakeProviderError(
            `OFFSET_OUT_OF_RANGE: ${before} is above the latest offset ${part.latest}`,
          );
        }
        if (before <= BigInt(part.earliest)) return;
        part.earliest = before.toString();
        part.records = part.records.filter((r) => BigInt(r.offset) >= before);
      }),

    deleteTopic: (name) =>
      act("deleteTopic", name, (w) => {
        topicOf(w, name);
        delete w.kafka.topics[name];
        for (const g of Object.values(w.kafka.groups)) delete g.offsets[name];
      }),

    joinGroup: (groupId, clientId = "external-consumer", topics = []) =>
      act("joinGroup", groupId, (w) => {
        const memberId = `${clientId}-${ctx.ids.uuid()}`;
        const g = (w.kafka.groups[groupId] ??= { members: [], offsets: {} });
        g.members.push({
          member_id: memberId,
          client_id: clientId,
          client_host: "/127.0.0.1",
          group_instance_id: null,
          container_id: null,
          expires_ms: null,
          topics: [...topics],
        });
        return memberId;
      }),

    leaveGroup: (groupId, memberId) =>
      act("leaveGroup", groupId, (w) => {
        const g = w.kafka.groups[groupId];
        if (g) g.members = g.members.filter((m) => m.member_id !== memberId);
      }),

    setBrokerReachable: (reachable) =>
      act("setBrokerReachable", String(reachable), (w) => {
        w.kafka.reachable = reachable;
      }),

    addDaemon: (name) =>
      actOnWorld("addDaemon", name, (w) => {
        if (w.daemons?.[name]) throw new FakeProviderError(`fake: daemon ${name} exists`);
        const networks = Object.fromEntries(
          Object.keys(w.docker.networks).map((n) => [n, hex64(ctx.ids)]),
        );
        const d = {
          daemon_id: dockerDaemonId(ctx.ids),
          images: structuredClone(w.docker.images),
          networks,
          containers: {},
          volumes: {},
        };
        (w.daemons ??= {})[name] = d;
        return d.daemon_id;
      }),

    setDaemonReachable: (name, reachable) =>
      actOnWorld("setDaemonReachable", `${name}=${reachable}`, (w) => {
        const d = daemonOf(w, name);
        if (reachable) delete d.reachable;
        else d.reachable = false;
      }),

    failCall: (op, options = {}) =>
      act("failCall", op, (w) => {
        const effect = options.effect ?? "fail";
        w.hooks.push({
          kind: "call",
          op,
          match: options.match ?? null,
          effect,
          times: options.times ?? 1,
          message: options.message ??
            (effect === "fail"
              ? `fake: ${op} failed (injected)`
              : `fake: the response to ${op} was lost (injected; the call was applied)`),
        });
      }),

    failRunner: (on, exit, options = {}) =>
      act("failRunner", on, (w) => {
        const planned: PlannedExit = {
          code: exit.code,
          reason: exit.reason,
          detail: exit.detail ?? null,
          oom: exit.oom ?? false,
        };
        w.hooks.push({
          kind: "runner",
          on,
          match: options.match ?? null,
          exit: planned,
          times: options.times ?? 1,
        });
      }),

    advanceClock: (ms) => advanceWorldClock(ctx.store, ms),

    mutations: () => ctx.store.read().log,

    container: (idOrName) => look((w) => structuredClone(findContainer(w, idOrName))),

    runnerStatus: (idOrName) =>
      look((w) => {
        const c = findContainer(w, idOrName);
        const bytes = c ? readContainerPath(w, c, statusPath(c)) : null;
        return bytes === null ? null : JSON.parse(new TextDecoder().decode(bytes));
      }),

    snapshot: () => look((w) => structuredClone(w)),
  };
}
