/**
 * The real {@link DockerPort} on dockerode, against the daemon at `DOCKER_HOST` or the default
 * socket.
 *
 * Failures leave as provider errors (`../errors.ts`) naming the daemon's address and where it
 * came from (`$DOCKER_HOST`, or the default socket): `ENV_DOCKER_UNREACHABLE`,
 * `ENV_DOCKER_DENIED`, `DOCKER_REFUSED` (the daemon's 4xx answer, its message kept),
 * `DOCKER_BAD_RESPONSE`, `UNKNOWN_OUTCOME_DOCKER`. A TCP daemon is first checked to accept a
 * connection within {@link DOCKER_CONNECT_TIMEOUT_MS}.
 *
 * @example
 * ```ts
 * import { dockerodePort } from "./dockerode.ts";
 * const docker = dockerodePort();
 * console.log(await docker.daemonId());
 * ```
 * @module
 */
// @ts-types="npm:@types/dockerode@4.0.2"
import Docker from "npm:dockerode@5.0.1";
import { Buffer } from "node:buffer";
import type { ContainerInfo, ContainerSpec, DockerPort, ImageInfo, VolumeInfo } from "./port.ts";
import { SluiceError } from "../../errors.ts";
import { tarSingleFile, untarSingleFile } from "./_tar.ts";
import {
  type AddressOrigin,
  type Failure,
  failureError,
  guardPort,
  type ProviderTarget,
  withoutCredentials,
} from "../errors.ts";
import { reachAny } from "../reach.ts";
import { logLines, sinceParam, stdoutLines } from "./_log_stream.ts";
import { dockerTlsFromEnv } from "./tls.ts";

interface HttpError {
  statusCode?: number;
  message?: string;
}

function status(error: unknown): number | undefined {
  return (error as HttpError).statusCode;
}

async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (error) {
    if (status(error) === 404) return null;
    throw error;
  }
}

/** Read a whole Node stream into bytes. */
async function drain(stream: NodeJS.ReadableStream): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Buffer | string>) {
    chunks.push(typeof c === "string" ? Buffer.from(c) : c);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

function toInfo(c: Docker.ContainerInspectInfo): ContainerInfo {
  const networks: Record<string, string> = {};
  for (const [name, n] of Object.entries(c.NetworkSettings?.Networks ?? {})) {
    networks[name] = n.NetworkID;
  }
  return {
    id: c.Id,
    name: c.Name.replace(/^\//, ""),
    imageId: c.Image,
    labels: c.Config.Labels ?? {},
    env: c.Config.Env ?? [],
    entrypoint: asList(c.Config.Entrypoint),
    cmd: asList(c.Config.Cmd),
    state: {
      status: c.State.Status as ContainerInfo["state"]["status"],
      running: c.State.Running,
      exitCode: c.State.ExitCode,
      oomKilled: c.State.OOMKilled,
      startedAt: c.State.StartedAt,
      finishedAt: c.State.FinishedAt,
      error: c.State.Error ?? "",
    },
    networkMode: c.HostConfig?.NetworkMode ?? "",
    networks,
    mounts: (c.Mounts ?? []).map((m) => ({
      type: m.Type,
      source: m.Type === "volume" ? (m.Name ?? m.Source) : m.Source,
      destination: m.Destination,
      readOnly: !m.RW,
    })),
    restartPolicy: c.HostConfig?.RestartPolicy?.Name ?? "",
    memory: c.HostConfig?.Memory ?? 0,
    stopTimeout: stopTimeoutOf(c.Config),
    createdAt: c.Created,
  };
}

/** `Config.StopTimeout` (absent from the typings; absent or null when none was set). */
function stopTimeoutOf(config: Docker.ContainerInspectInfo["Config"]): number | null {
  const v = (config as { StopTimeout?: number | null }).StopTimeout;
  return typeof v === "number" ? v : null;
}

/** Containers inspected at once by a project-wide listing. */
const INSPECT_CONCURRENCY = 8;
/** Volume names per listing (they travel in the query string). */
const VOLUME_NAMES_PER_LIST = 100;

function isAbort(error: unknown): boolean {
  const e = error as { name?: string; code?: string; message?: string };
  return e?.name === "AbortError" || e?.code === "ABORT_ERR" || /aborted/i.test(e?.message ?? "");
}

function asList(v: string | string[] | undefined | null): string[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

/** How long a TCP daemon (`DOCKER_HOST=tcp://...`) may take to accept a connection. */
export const DOCKER_CONNECT_TIMEOUT_MS = 5_000;

/**
 * How long one Docker API call may go unanswered before it fails (a read:
 * `ENV_DOCKER_UNREACHABLE`; a mutation: `UNKNOWN_OUTCOME_DOCKER`): a daemon that accepts and never
 * answers (stopped, hung, cut off mid-connection) ends the command instead of blocking it. Far
 * above what a call takes on a loaded daemon; the waits carry their own bounds
 * ({@link DOCKER_WAITS}).
 */
export const DOCKER_CALL_BOUND_MS = 120_000;

/** The methods that wait on purpose, each with the bound its caller gives. */
const DOCKER_WAITS: ReadonlySet<keyof DockerPort & string> = new Set([
  "awaitExit",
  "awaitOutputLine",
  "containerLogs",
]);

/** The Docker port's mutations; every other method is a read. */
const MUTATIONS: ReadonlySet<keyof DockerPort & string> = new Set([
  "createContainer",
  "startContainer",
  "signalTerm",
  "removeContainer",
  "createVolume",
  "writeContainerFile",
  "discardCreated",
  "removeOwnedVolume",
]);

/** A volume removal refused because containers mount it. */
function volumeInUse(name: string, containers: string[], cause?: unknown): SluiceError {
  return new SluiceError(
    "BLOCKED_VOLUME_IN_USE",
    `volume ${name} is mounted by ${
      containers.length > 0
        ? `container${containers.length === 1 ? "" : "s"} ${
          containers.map((c) => c.slice(0, 12)).join(", ")
        }`
        : "a container"
    }: sluice removes a state volume only when nothing uses it`,
    { evidence: { volume: name, containers }, cause },
  );
}

/** The daemon's answer: 401/403 deny access, other 4xx refuse the request, 5xx fail. */
function dockerFailure(error: unknown): Failure | null {
  const code = status(error);
  if (code === undefined) return null;
  const detail = (error as HttpError).message ?? `HTTP ${code}`;
  if (code === 401 || code === 403) return { kind: "denied", detail };
  return { kind: code >= 500 ? "server" : "refused", detail };
}

function envGet(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    return undefined;
  }
}

/** The socket docker-modem uses without DOCKER_HOST (for display only). */
function defaultSocket(): string {
  const home = envGet("HOME");
  for (
    const path of ["/var/run/docker.sock", ...(home ? [`${home}/.docker/run/docker.sock`] : [])]
  ) {
    try {
      Deno.statSync(path);
      return path;
    } catch {
      // not there: the next candidate
    }
  }
  return "/var/run/docker.sock";
}

/** The daemon's address as shown, and where it came from. */
function daemonTarget(client: Docker | undefined, origin?: AddressOrigin): ProviderTarget {
  const modem = (client as unknown as { modem?: DockerModem } | undefined)?.modem;
  if (modem) {
    // a client given by the caller: its own address
    const address = typeof modem.socketPath === "string"
      ? `unix://${modem.socketPath}`
      : modem.host
      ? `${modem.protocol ?? "http"}://${modem.host}${modem.port ? `:${modem.port}` : ""}`
      : `unix://${defaultSocket()}`;
    return { provider: "docker", address: withoutCredentials(address), origin: origin ?? {} };
  }
  const host = envGet("DOCKER_HOST");
  return host
    ? {
      provider: "docker",
      address: withoutCredentials(host),
      origin: origin ?? { variable: "DOCKER_HOST" },
    }
    : {
      provider: "docker",
      address: `unix://${defaultSocket()}`,
      origin: origin ?? { default: "DOCKER_HOST is not set" },
    };
}

/** What docker-modem knows of the daemon's address. */
interface DockerModem {
  socketPath?: unknown;
  host?: string;
  port?: string | number;
  protocol?: string;
}

/** Options of {@link dockerodePort}. */
export interface DockerodePortOptions {
  /** Where the daemon's address came from (default: `$DOCKER_HOST`, or the default socket). */
  origin?: AddressOrigin;
  /** How long one call may go unanswered (default {@link DOCKER_CALL_BOUND_MS}). */
  callBoundMs?: number;
}

/**
 * A {@link DockerPort} for the daemon the Docker CLI's variables name: over TCP with TLS when
 * `DOCKER_TLS_VERIFY` is set (`./tls.ts`: `DOCKER_CERT_PATH`'s `ca.pem`, `cert.pem`,
 * `key.pem`), else the one dockerode finds (`DOCKER_HOST` or the default socket).
 */
export async function dockerodeFromEnv(): Promise<DockerPort> {
  const tls = await dockerTlsFromEnv();
  return tls === null
    ? dockerodePort()
    : dockerodePort(new Docker(tls.options), { origin: tls.origin });
}

/** A {@link DockerPort} for the daemon dockerode finds (`DOCKER_HOST` or the default socket). */
export function dockerodePort(client?: Docker, options: DockerodePortOptions = {}): DockerPort {
  const target = daemonTarget(client, options.origin);
  let d: Docker;
  try {
    d = client ?? new Docker();
  } catch (error) {
    // docker-modem refuses a malformed DOCKER_HOST when the client is made
    throw new SluiceError(
      "ENV_DOCKER_HOST_INVALID",
      `$DOCKER_HOST (${target.address}) is not a Docker address: ${(error as Error).message}`,
      { evidence: { address: target.address, origin: target.origin }, cause: error },
    );
  }
  const modem = (d as unknown as { modem?: DockerModem }).modem;
  let reached: Promise<void> | null = null;
  const ready = modem?.host
    ? () =>
      reached ??= reachAny([`${modem.host}:${modem.port ?? 2375}`], DOCKER_CONNECT_TIMEOUT_MS)
        .then((failure) => {
          if (failure === null) return;
          reached = null;
          throw failureError(failure, target, { operation: "connect", mutation: false });
        })
    : undefined;

  return guardPort<DockerPort>({
    async daemonId() {
      const info = await d.info() as { ID: string };
      return info.ID;
    },

    async listContainers(label, value) {
      const list = await d.listContainers({
        all: true,
        filters: JSON.stringify({ label: [`${label}=${value}`] }),
      });
      const out: ContainerInfo[] = [];
      for (const c of list) {
        const info = await orNull(d.getContainer(c.Id).inspect());
        if (info) out.push(toInfo(info));
      }
      return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    },

    async inspectContainer(idOrName) {
      const info = await orNull(d.getContainer(idOrName).inspect());
      return info ? toInfo(info) : null;
    },

    async readContainerFile(id, path) {
      const stream = await orNull(d.getContainer(id).getArchive({ path }));
      if (!stream) return null;
      return untarSingleFile(await drain(stream));
    },

    async inspectVolume(name) {
      const v = await orNull(d.getVolume(name).inspect());
      if (!v) return null;
      const extra = v as unknown as { CreatedAt?: string };
      return {
        name: v.Name,
        labels: v.Labels ?? {},
        createdAt: extra.CreatedAt ?? "",
      } satisfies VolumeInfo;
    },

    async inspectImage(id) {
      const i = await orNull(d.getImage(id).inspect());
      if (!i) return null;
      return {
        id: i.Id,
        env: i.Config?.Env ?? [],
        labels: i.Config?.Labels ?? {},
        entrypoint: asList(i.Config?.Entrypoint),
        cmd: asList(i.Config?.Cmd),
      } satisfies ImageInfo;
    },

    async networkId(name) {
      const n = await orNull(d.getNetwork(name).inspect());
      return n ? (n as { Id: string }).Id : null;
    },

    async createContainer(spec: ContainerSpec) {
      const c = await d.createContainer({
        name: spec.name,
        Image: spec.image,
        Labels: spec.labels,
        Env: spec.env,
        StopTimeout: spec.stopTimeoutSeconds,
        HostConfig: {
          Binds: [
            `${spec.planHostPath}:${spec.planContainerPath}:ro`,
            `${spec.volume}:${spec.volumeContainerPath}`,
          ],
          NetworkMode: spec.network,
          RestartPolicy: { Name: "no" },
          Memory: spec.memoryBytes,
        },
      });
      return c.id;
    },

    async startContainer(id) {
      await d.getContainer(id).start();
    },

    async signalTerm(id) {
      await d.getContainer(id).kill({ signal: "SIGTERM" });
    },

    async removeContainer(id) {
      // no force (a running container is refused) and no v (the state volume is kept)
      await d.getContainer(id).remove({ force: false, v: false });
    },

    async createVolume(name, labels) {
      if (await orNull(d.getVolume(name).inspect())) {
        // `docker volume create` on an existing name silently keeps the old volume and labels
        throw new SluiceError(
          "BLOCKED_VOLUME_EXISTS",
          `volume ${name} already exists; sluice never adopts a volume it did not create`,
          { evidence: { volume: name } },
        );
      }
      await d.createVolume({ Name: name, Labels: labels });
    },

    async writeContainerFile(id, path, bytes, options) {
      const dir = path.replace(/\/[^/]+$/, "");
      const name = path.slice(dir.length + 1);
      await d.getContainer(id).putArchive(tarSingleFile(name, bytes, options?.mode), {
        path: dir,
      });
    },

    async discardCreated(id, volume) {
      const c = await orNull(d.getContainer(id).inspect());
      // emptiness is seen through the container's own mount (no helper container): unproven
      // without it
      let empty = false;
      if (c) {
        const mount = (c.Mounts ?? []).find((m) => m.Type === "volume" && m.Name === volume.name);
        if (c.State.Status !== "created" || !mount) {
          throw new SluiceError(
            "INTERNAL",
            `discardCreated: ${id} is not a never-started container mounting ${volume.name}`,
          );
        }
        const stream = await orNull(d.getContainer(id).getArchive({ path: mount.Destination }));
        empty = stream !== null && untarSingleFile(await drain(stream)) === null;
        await d.getContainer(id).remove({ force: false, v: false });
      }
      const v = await orNull(d.getVolume(volume.name).inspect());
      if (!v) return "absent";
      if (Object.keys(v.Labels ?? {}).length > 0) return "labelled";
      // emptiness before the creation time: the local driver reports the ctime of the volume's
      // `_data` directory as CreatedAt (measured: writing a file at the volume's root moves it to
      // that second), so a written volume reads as "another creation time" while an empty one
      // keeps the time its create gave it
      if (!empty) return "not_empty";
      if ((v as unknown as { CreatedAt?: string }).CreatedAt !== volume.createdAt) {
        return "replaced";
      }
      try {
        await d.getVolume(volume.name).remove();
      } catch (error) {
        if (status(error) === 409) return "in_use";
        if (status(error) === 404) return "absent";
        throw error;
      }
      return "removed";
    },

    async removeOwnedVolume(name, owner) {
      const v = await orNull(d.getVolume(name).inspect());
      if (!v) return "absent";
      const labels = v.Labels ?? {};
      const differ = Object.entries(owner).filter(([k, value]) => labels[k] !== value);
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
              actual: Object.fromEntries(differ.map(([k]) => [k, labels[k] ?? null])),
            },
          },
        );
      }
      // Docker refuses (409) a volume that any container, running or not, mounts
      const users = await d.listContainers({
        all: true,
        filters: JSON.stringify({ volume: [name] }),
      });
      if (users.length > 0) throw volumeInUse(name, users.map((c) => c.Id));
      try {
        await d.getVolume(name).remove();
      } catch (error) {
        if (status(error) === 404) return "absent";
        if (status(error) === 409) throw volumeInUse(name, [], error);
        throw error;
      }
      return "removed";
    },

    async listContainersLabelled(label, values) {
      const wanted = new Set(values);
      if (wanted.size === 0) return [];
      const list = await d.listContainers({
        all: true,
        filters: JSON.stringify({ label: [label] }),
      });
      const ids = list.filter((c) => wanted.has(c.Labels?.[label] ?? "")).map((c) => c.Id);
      const out: ContainerInfo[] = [];
      // inspect a few at a time: one request per container, not all at once on a busy daemon
      for (let i = 0; i < ids.length; i += INSPECT_CONCURRENCY) {
        const infos = await Promise.all(
          ids.slice(i, i + INSPECT_CONCURRENCY).map((id) => orNull(d.getContainer(id).inspect())),
        );
        for (const info of infos) if (info) out.push(toInfo(info));
      }
      return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    },

    async listVolumes(names) {
      const wanted = [...new Set(names)];
      const out = new Map<string, VolumeInfo>();
      // the name filter matches substrings: keep exact names only
      for (let i = 0; i < wanted.length; i += VOLUME_NAMES_PER_LIST) {
        const batch = wanted.slice(i, i + VOLUME_NAMES_PER_LIST);
        const r = await d.listVolumes({ filters: JSON.stringify({ name: batch }) });
        for (const v of r.Volumes ?? []) {
          if (!batch.includes(v.Name)) continue;
          const extra = v as unknown as { CreatedAt?: string };
          out.set(v.Name, {
            name: v.Name,
            labels: v.Labels ?? {},
            createdAt: extra.CreatedAt ?? "",
          });
        }
      }
      return out;
    },

    async awaitExit(id, timeoutMs) {
      try {
        // blocks in the daemon until the container is not running (at once if it never ran)
        await d.getContainer(id).wait({
          condition: "not-running",
          abortSignal: AbortSignal.timeout(Math.max(1, timeoutMs)),
        });
        return "stopped";
      } catch (error) {
        if (status(error) === 404) return "absent";
        if (isAbort(error)) return "timeout";
        throw error;
      }
    },

    async awaitOutputLine(id, prefixes, since, timeoutMs) {
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), Math.max(1, timeoutMs));
      try {
        const stream = await d.getContainer(id).logs(
          {
            follow: true,
            stdout: true,
            stderr: false,
            since: sinceParam(since),
            abortSignal: abort.signal,
          } as Docker.ContainerLogsOptions & { follow: true; abortSignal: AbortSignal },
        ) as
          & NodeJS.ReadableStream
          & { destroy?: () => void };
        const lines = stdoutLines();
        try {
          for await (const chunk of stream as AsyncIterable<Buffer | string>) {
            const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
            if (lines(new Uint8Array(bytes)).some((l) => prefixes.some((p) => l.startsWith(p)))) {
              return "line";
            }
          }
        } finally {
          stream.destroy?.();
        }
        // the daemon ends a followed stream when the container stops
        return abort.signal.aborted ? "timeout" : "stopped";
      } catch (error) {
        if (status(error) === 404) return "absent";
        if (abort.signal.aborted || isAbort(error)) return "timeout";
        throw error;
      } finally {
        clearTimeout(timer);
        abort.abort();
      }
    },

    async containerLogs(id, options, onLine) {
      const follow = options.follow ?? false;
      const abort = new AbortController();
      const stop = () => abort.abort();
      options.signal?.addEventListener("abort", stop);
      if (options.signal?.aborted) return "aborted";
      try {
        const params = {
          follow,
          stdout: true,
          stderr: true,
          ...(options.since !== undefined ? { since: sinceParam(options.since) } : {}),
          ...(options.tail !== undefined ? { tail: options.tail } : {}),
          abortSignal: abort.signal,
        };
        // without follow the daemon answers the whole (multiplexed) log at once; with it a stream
        const answer = await d.getContainer(id).logs(
          params as Docker.ContainerLogsOptions & { follow: true; abortSignal: AbortSignal },
        ) as unknown;
        const lines = logLines();
        const emit = (xs: ReturnType<typeof lines.end>) => xs.forEach(onLine);
        if (answer instanceof Uint8Array) {
          emit(lines.feed(new Uint8Array(answer)));
          emit(lines.end());
          return "done";
        }
        const stream = answer as NodeJS.ReadableStream & { destroy?: () => void };
        try {
          for await (const chunk of stream as AsyncIterable<Buffer | string>) {
            emit(
              lines.feed(new Uint8Array(typeof chunk === "string" ? Buffer.from(chunk) : chunk)),
            );
          }
        } catch (error) {
          if (!abort.signal.aborted && !isAbort(error)) throw error;
        } finally {
          stream.destroy?.();
        }
        emit(lines.end());
        // the daemon ends a followed stream when the container stops
        return abort.signal.aborted ? "aborted" : follow ? "stopped" : "done";
      } catch (error) {
        if (status(error) === 404) return "absent";
        if (abort.signal.aborted || isAbort(error)) return "aborted";
        throw error;
      } finally {
        options.signal?.removeEventListener("abort", stop);
        abort.abort();
      }
    },
  }, {
    target,
    mutations: MUTATIONS,
    specific: dockerFailure,
    ready,
    bound: { ms: options.callBoundMs ?? DOCKER_CALL_BOUND_MS, exempt: DOCKER_WAITS },
  });
}
