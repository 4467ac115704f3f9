/**
 * A fake Docker Engine behind the {@link DockerPort}, over a {@link World}. It keeps what the
 * driver and the observer rely on, as Docker 20.10 does (tests/ports_contract_docker_kafka_test.ts
 * runs the same contract against the real daemon):
 *
 * - exact 64-hex container IDs; lookup by ID, by name, or by a unique ID prefix;
 * - create merges the image's labels and environment under the container's own (the
 *   container's entries first, then the image's that it does not override), takes entrypoint
 *   and command from the image, keeps the spec's stop timeout, and writes the labels
 *   atomically with the container;
 * - a created container is never started: zero StartedAt/FinishedAt, exit code 0, its network
 *   listed without an ID; started, the network has its ID, kept after the exit;
 * - create refuses a duplicate name (409) and a missing image (404), but not a missing network
 *   (start fails then, with exit code 128 and the error kept); naming a missing volume creates
 *   an empty, unlabelled one, as Docker does (`discardCreated` undoes that create);
 * - start of a running container is 304, TERM of a stopped one 409, remove of a running one
 *   409 (never forced), and remove keeps the volume;
 * - the plan is a bind mount of a real host file, read when asked; volume files (the instance
 *   file, written through a created container's mount; the runner's status file) live in the
 *   world;
 * - the waits (exit, a stdout line) poll the world in world time where the daemon blocks; the
 *   runner's stdout keeps its `SLUICE_RUNNER_STATE` marker lines;
 * - processes (lifecycle.ts): the simulated runner, exit codes 0/143/137/10–15, OOM.
 *
 * Failure hooks key calls by: `createContainer` → name, `startContainer`/`signalTerm`/
 * `removeContainer`/`writeContainerFile`/`discardCreated` → the ID or name passed, `createVolume`/
 * `removeOwnedVolume` → volume name.
 *
 * @example
 * ```ts
 * import { createFakeWorld } from "./fake_world.ts";
 * const world = createFakeWorld({ seed: "doc" });
 * console.log(await world.docker.daemonId());
 * ```
 * @module
 */
import type {
  ContainerInfo,
  ContainerSpec,
  DockerPort,
  ImageInfo,
  VolumeDiscard,
  VolumeInfo,
} from "../../lib/providers/docker/port.ts";
import { SluiceError } from "../../lib/errors.ts";
import { isoAt } from "./clock.ts";
import { hex64 } from "./ids.ts";
import { startProcess, termProcess } from "./lifecycle.ts";
import { readContainerPath, writeContainerPath } from "./_files.ts";
import type { FakeContext } from "./_port_call.ts";
import { dockerError, FailedWithTrace, portCall } from "./_port_call.ts";
import type { FakeContainer, FakeImage, World } from "./world.ts";
import { daemonOf, onDaemon, resolveDaemon, ZERO_TIME } from "./world.ts";

/** World milliseconds between two polls of a fake wait. */
const WAIT_POLL_MS = 20;

/** Docker's volume timestamps have whole seconds. */
function isoSeconds(ms: number): string {
  return isoAt(ms).replace(/\.\d{3}Z$/, "Z");
}

/** A container by exact ID, exact name, or unique ID prefix (Docker's resolution order). */
export function findContainer(w: World, idOrName: string): FakeContainer | null {
  const all = w.docker.containers;
  if (all[idOrName]) return all[idOrName];
  const name = idOrName.replace(/^\//, "");
  const byName = Object.values(all).find((c) => c.name === name);
  if (byName) return byName;
  if (!/^[0-9a-f]+$/.test(idOrName)) return null;
  const byPrefix = Object.values(all).filter((c) => c.id.startsWith(idOrName));
  if (byPrefix.length > 1) {
    throw dockerError(404, `No such container: ${idOrName} (ambiguous prefix)`);
  }
  return byPrefix[0] ?? null;
}

function mustFind(w: World, idOrName: string): FakeContainer {
  const c = findContainer(w, idOrName);
  if (!c) throw dockerError(404, `No such container: ${idOrName}`);
  return c;
}

/** An image by ID (`sha256:...` or bare hex) or tag. */
export function findImage(w: World, ref: string): FakeImage | null {
  const images = w.docker.images;
  if (images[ref]) return images[ref];
  if (images[`sha256:${ref}`]) return images[`sha256:${ref}`];
  return Object.values(images).find((i) => i.tags.includes(ref)) ?? null;
}

function keyOf(env: string): string {
  const i = env.indexOf("=");
  return i < 0 ? env : env.slice(0, i);
}

/**
 * The port's view of a container. Docker lists mounts in no stable order (two inspects of one
 * container differ); the fake alternates the order with the world's time so that no consumer
 * comes to depend on one.
 */
function toInfo(c: FakeContainer, now: number): ContainerInfo {
  const mounts = c.mounts.map((m) => ({ ...m }));
  return {
    id: c.id,
    name: c.name,
    imageId: c.image_id,
    labels: { ...c.labels },
    env: [...c.env],
    entrypoint: [...c.entrypoint],
    cmd: [...c.cmd],
    state: {
      status: c.state.status,
      running: c.state.running,
      exitCode: c.state.exit_code,
      oomKilled: c.state.oom_killed,
      startedAt: c.state.started_at,
      finishedAt: c.state.finished_at,
      error: c.state.error,
    },
    networkMode: c.network_mode,
    networks: { ...c.networks },
    mounts: now % 2 === 0 ? mounts : mounts.reverse(),
    restartPolicy: c.restart_policy,
    memory: c.memory,
    // worlds written before the stop timeout was kept have none
    stopTimeout: c.stop_timeout ?? null,
    createdAt: c.created_at,
  };
}

/**
 * The fake {@link DockerPort} over a world.
 *
 * @example
 * ```ts
 * import { createFakeWorld } from "./fake_world.ts";
 * const { docker, env } = createFakeWorld({ seed: "x" });
 * console.log(await docker.networkId(env.network));
 * ```
 */
export function fakeDockerPort(
  ctx: FakeContext,
  daemon: string | null = null,
  options: { orDefault?: boolean } = {},
): DockerPort {
  type Fn<T> = (w: World, now: number) => T | FailedWithTrace;
  /** Every call works on the world as seen from this port's daemon; one that answers nobody fails. */
  const on = <T>(op: string, fn: Fn<T>): Fn<T> => (w, now) => {
    const name = resolveDaemon(w, daemon, options.orDefault ?? false);
    const d = daemonOf(w, name);
    if (d.reachable === false) {
      // what the real port's guard makes of a refused connection: its code, and the evidence
      // that names the provider and its address (what a journey's "stays pending" message reads)
      throw new SluiceError(
        "ENV_DOCKER_UNREACHABLE",
        `Docker daemon ${daemon ?? "(default)"} is unreachable: connect ECONNREFUSED (fake)`,
        {
          evidence: {
            provider: "docker",
            address: `fake://${daemon ?? "(default)"}`,
            operation: op,
            reason: "connect ECONNREFUSED (fake)",
          },
        },
      );
    }
    return fn(onDaemon(w, name), now);
  };
  const read = <T>(op: string, key: string, fn: Fn<T>) =>
    Promise.resolve().then(() => portCall(ctx, "docker", op, key, false, on(op, fn)));
  const mutate = <T>(op: string, key: string, fn: Fn<T>) =>
    Promise.resolve().then(() => portCall(ctx, "docker", op, key, true, on(op, fn)));
  /** Poll `check` every few world milliseconds until it answers, or "timeout". */
  const until = async <T>(timeoutMs: number, check: () => Promise<T | null>) => {
    const end = ctx.clock.now() + timeoutMs;
    while (true) {
      const v = await check();
      if (v !== null) return v;
      if (ctx.clock.now() >= end) return "timeout" as const;
      await (ctx.clock.sleep?.(WAIT_POLL_MS) ?? new Promise((r) => setTimeout(r, WAIT_POLL_MS)));
    }
  };

  return {
    daemonId: () => read("daemonId", "", (w) => w.docker.daemon_id),

    listContainers: (label, value) =>
      read("listContainers", `${label}=${value}`, (w, now) =>
        Object.values(w.docker.containers)
          .filter((c) => c.labels[label] === value)
          .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
          .map((c) => toInfo(c, now))),

    inspectContainer: (idOrName) =>
      read("inspectContainer", idOrName, (w, now) => {
        const c = findContainer(w, idOrName);
        return c ? toInfo(c, now) : null;
      }),

    readContainerFile: (id, path) =>
      read("readContainerFile", id, (w) => {
        const c = findContainer(w, id);
        return c ? readContainerPath(w, c, path) : null;
      }),

    inspectVolume: (name) =>
      read("inspectVolume", name, (w): VolumeInfo | null => {
        const v = w.docker.volumes[name];
        return v ? { name: v.name, labels: { ...v.labels }, createdAt: v.created_at } : null;
      }),

    inspectImage: (id) =>
      read("inspectImage", id, (w): ImageInfo | null => {
        const i = findImage(w, id);
        return i
          ? {
            id: i.id,
            env: [...i.env],
            labels: { ...i.labels },
            entrypoint: [...i.entrypoint],
            cmd: [...i.cmd],
          }
          : null;
      }),

    networkId: (name) =>
      read("networkId", name, (w) => {
        const n = w.docker.networks;
        if (n[name] !== undefined) return n[name];
        return Object.values(n).includes(name) ? name : null;
      }),

    createContainer: (spec: ContainerSpec) =>
      mutate("createContainer", spec.name, (w, now) => {
        const image = findImage(w, spec.image);
        if (!image) throw dockerError(404, `No such image: ${spec.image}`);
        const clash = Object.values(w.docker.containers).find((c) => c.name === spec.name);
        if (clash) {
          throw dockerError(
            409,
            `Conflict. The container name "/${spec.name}" is already in use by container "${clash.id}". You have to remove (or rename) that container to be able to reuse that name.`,
          );
        }
        // a named volume that does not exist is created, empty and unlabelled, by create
        w.docker.volumes[spec.volume] ??= {
          name: spec.volume,
          labels: {},
          created_at: isoSeconds(now),
          files: {},
        };
        const ownKeys = new Set(spec.env.map(keyOf));
        const id = hex64(ctx.ids);
        w.docker.containers[id] = {
          id,
          name: spec.name,
          image_id: image.id,
          labels: { ...image.labels, ...spec.labels },
          env: [...spec.env, ...image.env.filter((e) => !ownKeys.has(keyOf(e)))],
          entrypoint: [...image.entrypoint],
          cmd: [...image.cmd],
          network_mode: spec.network,
          networks: { [spec.network]: "" },
          mounts: [
            {
              type: "bind",
              source: spec.planHostPath,
              destination: spec.planContainerPath,
              readOnly: true,
            },
            {
              type: "volume",
              source: spec.volume,
              destination: spec.volumeContainerPath,
              readOnly: false,
            },
          ],
          restart_policy: "no",
          memory: spec.memoryBytes,
          stop_timeout: spec.stopTimeoutSeconds,
          created_at: isoAt(now),
          state: {
            status: "created",
            running: false,
            exit_code: 0,
            oom_killed: false,
            started_at: ZERO_TIME,
            finished_at: ZERO_TIME,
            error: "",
          },
          process: null,
          rootfs: {},
        };
        return id;
      }),

    startContainer: (id) =>
      mutate("startContainer", id, (w, now) => {
        const c = mustFind(w, id);
        if (c.state.running) throw dockerError(304, "");
        const networkId = w.docker.networks[c.network_mode];
        if (networkId === undefined) {
          // Docker keeps the failed start on the container: still created, exit code 128
          const message = `network ${c.network_mode} not found`;
          c.state.exit_code = 128;
          c.state.error = message;
          return new FailedWithTrace(dockerError(404, message));
        }
        c.state = {
          ...c.state,
          status: "running",
          running: true,
          exit_code: 0,
          oom_killed: false,
          started_at: isoAt(now),
          error: "",
        };
        c.networks[c.network_mode] = networkId;
        startProcess(w, c, now);
      }),

    signalTerm: (id) =>
      mutate("signalTerm", id, (w, now) => {
        const c = mustFind(w, id);
        if (!c.state.running) {
          throw dockerError(
            409,
            `Cannot kill container: ${id}: Container ${c.id} is not running`,
          );
        }
        termProcess(w, c, now);
      }),

    removeContainer: (id) =>
      mutate("removeContainer", id, (w) => {
        const c = mustFind(w, id);
        if (c.state.running) {
          throw dockerError(
            409,
            `You cannot remove a running container ${c.id}. Stop the container before attempting removal or force remove`,
          );
        }
        delete w.docker.containers[c.id];
      }),

    createVolume: (name, labels) =>
      mutate("createVolume", name, (w, now) => {
        if (w.docker.volumes[name]) {
          throw new SluiceError(
            "BLOCKED_VOLUME_EXISTS",
            `volume ${name} already exists; sluice never adopts a volume it did not create`,
            { evidence: { volume: name } },
          );
        }
        w.docker.volumes[name] = {
          name,
          labels: { ...labels },
          created_at: isoSeconds(now),
          files: {},
        };
      }),

    writeContainerFile: (id, path, bytes) =>
      mutate("writeContainerFile", id, (w) => {
        const c = mustFind(w, id);
        try {
          writeContainerPath(w, c, path, bytes);
        } catch (error) {
          throw dockerError(500, (error as Error).message);
        }
      }),

    // one transaction: the fake has no window between the checks and the removals
    discardCreated: (id, volume) =>
      mutate("discardCreated", id, (w): VolumeDiscard => {
        const c = findContainer(w, id);
        let empty = false;
        if (c) {
          const mount = c.mounts.find((m) => m.type === "volume" && m.source === volume.name);
          if (c.state.status !== "created" || !mount) {
            throw new SluiceError(
              "INTERNAL",
              `discardCreated: ${id} is not a never-started container mounting ${volume.name}`,
            );
          }
          empty = Object.keys(w.docker.volumes[volume.name]?.files ?? {}).length === 0;
          delete w.docker.containers[c.id];
        }
        const v = w.docker.volumes[volume.name];
        if (!v) return "absent";
        if (Object.keys(v.labels).length > 0) return "labelled";
        // a file first: Docker's CreatedAt moves when one is written (see the real port)
        if (!empty) return "not_empty";
        if (v.created_at !== volume.createdAt) return "replaced";
        const users = Object.values(w.docker.containers).some((o) =>
          o.mounts.some((m) => m.type === "volume" && m.source === volume.name)
        );
        if (users) return "in_use";
        delete w.docker.volumes[volume.name];
        return "removed";
      }),

    // one transaction: the labels, the users and the removal are one step here
    removeOwnedVolume: (name, owner) =>
      mutate("removeOwnedVolume", name, (w): "removed" | "absent" => {
        const v = w.docker.volumes[name];
        if (!v) return "absent";
        const differ = Object.entries(owner).filter(([k, value]) => v.labels[k] !== value);
        if (differ.length > 0) {
          throw new SluiceError(
            "BLOCKED_VOLUME_INSTANCE_CHANGED",
            `volume ${name} is not the one sluice created: its labels ${
              differ.map(([k]) => k).join(", ")
            } differ from the owned volume's; sluice removes only the volume it created`,
            {
              evidence: {
                volume: name,
                expected: owner,
                actual: Object.fromEntries(differ.map(([k]) => [k, v.labels[k] ?? null])),
              },
            },
          );
        }
        const users = Object.values(w.docker.containers).filter((c) =>
          c.mounts.some((m) => m.type === "volume" && m.source === name)
        ).map((c) => c.id);
        if (users.length > 0) {
          throw new SluiceError(
            "BLOCKED_VOLUME_IN_USE",
            `volume ${name} is mounted by container${users.length === 1 ? "" : "s"} ${
              users.map((c) => c.slice(0, 12)).join(", ")
            }: sluice removes a state volume only when nothing uses it`,
            { evidence: { volume: name, containers: users } },
          );
        }
        delete w.docker.volumes[name];
        return "removed";
      }),

    listContainersLabelled: (label, values) =>
      read("listContainersLabelled", label, (w, now) =>
        Object.values(w.docker.containers)
          .filter((c) => c.labels[label] !== undefined && values.includes(c.labels[label]))
          .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
          .map((c) => toInfo(c, now))),

    listVolumes: (names) =>
      read("listVolumes", names.join(","), (w) => {
        const out = new Map<string, VolumeInfo>();
        for (const n of names) {
          const v = w.docker.volumes[n];
          if (v) out.set(n, { name: v.name, labels: { ...v.labels }, createdAt: v.created_at });
        }
        return out;
      }),

    // The waits poll the world in world time (a world clock advances instead of waiting); the
    // real daemon blocks instead. Each poll is one read transaction, so the simulated
    // processes move on between polls.
    awaitExit: (id, timeoutMs) =>
      until(timeoutMs, () =>
        read("awaitExit", id, (w) => {
          const c = findContainer(w, id);
          if (!c) return "absent" as const;
          return c.state.running ? null : "stopped" as const;
        })),

    awaitOutputLine: (id, prefixes, since, timeoutMs) =>
      until(timeoutMs, () =>
        read("awaitOutputLine", id, (w) => {
          const c = findContainer(w, id);
          if (!c) return "absent" as const;
          const from = Date.parse(since);
          const seen = (c.stdout ?? []).some((l) =>
            (Number.isNaN(from) || Date.parse(l.at) >= from) &&
            prefixes.some((p) => l.line.startsWith(p))
          );
          if (seen) return "line" as const;
          return c.state.running ? null : "stopped" as const;
        })),

    // the lines since `since`, the last `tail` of them, then (follow) each new one, polled in
    // world time until the container stops. The fake keeps stdout only.
    containerLogs: async (id, options, onLine) => {
      const from = options.since === undefined ? NaN : Date.parse(options.since);
      const wanted = (l: { at: string }) => Number.isNaN(from) || Date.parse(l.at) >= from;
      let next = 0;
      let first = true;
      while (true) {
        if (options.signal?.aborted) return "aborted";
        const got = await read("containerLogs", id, (w) => {
          const c = findContainer(w, id);
          return c ? { lines: [...(c.stdout ?? [])], running: c.state.running } : null;
        });
        if (!got) return first ? "absent" : "stopped";
        let fresh = got.lines.slice(next).filter(wanted);
        if (first && options.tail !== undefined) {
          fresh = options.tail === 0 ? [] : fresh.slice(-options.tail);
        }
        for (const l of fresh) onLine({ stream: "stdout", line: l.line });
        next = got.lines.length;
        first = false;
        if (!options.follow) return "done";
        if (!got.running) return "stopped";
        await (ctx.clock.sleep?.(WAIT_POLL_MS) ??
          new Promise((r) => setTimeout(r, WAIT_POLL_MS)));
      }
    },
  };
}
