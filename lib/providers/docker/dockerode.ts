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
import Docker from "dockerode";
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
    createdAt: c.Created,
  };
}

function asList(v: string | string[] | undefined | null): string[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

/** How long a TCP daemon (`DOCKER_HOST=tcp://...`) may take to accept a connection. */
export const DOCKER_CONNECT_TIMEOUT_MS = 5_000;

/** The Docker port's mutations; every other method is a read. */
const MUTATIONS: ReadonlySet<keyof DockerPort & string> = new Set([
  "createContainer",
  "startContainer",
  "signalTerm",
  "removeContainer",
  "createVolume",
]);

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

  async function withScratch<T>(
    volume: string,
    image: string,
    mountPath: string,
    readOnly: boolean,
    fn: (c: Docker.Container) => Promise<T>,
  ): Promise<T> {
    // A created, never-started container is enough to read or write a volume through the
    // archive API: no process runs in it.
    const c = await d.createContainer({
      Image: image,
      name: `sluice-volume-io-${crypto.randomUUID().slice(0, 12)}`,
      Entrypoint: ["/bin/true"],
      Cmd: [],
      Labels: { "sluice.managed-by": "sluice", "sluice.role": "volume-io" },
      HostConfig: {
        Binds: [`${volume}:${mountPath}${readOnly ? ":ro" : ""}`],
        NetworkMode: "none",
      },
    });
    try {
      return await fn(c);
    } finally {
      await c.remove({ v: false }).catch(() => {});
    }
  }

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

    async createVolume(name, labels, instance) {
      if (await orNull(d.getVolume(name).inspect())) {
        // `docker volume create` on an existing name silently keeps the old volume and labels
        throw new SluiceError(
          "BLOCKED_VOLUME_EXISTS",
          `volume ${name} already exists; sluice never adopts a volume it did not create`,
          { evidence: { volume: name } },
        );
      }
      await d.createVolume({ Name: name, Labels: labels });
      const dir = instance.path.replace(/\/[^/]+$/, "");
      const file = instance.path.slice(dir.length + 1);
      await withScratch(name, instance.image, dir, false, async (c) => {
        await c.putArchive(tarSingleFile(file, new TextEncoder().encode(instance.uuid + "\n")), {
          path: dir,
        });
      });
    },

    async readVolumeFile(volume, image, path) {
      if (!(await orNull(d.getVolume(volume).inspect()))) return null;
      const dir = path.replace(/\/[^/]+$/, "");
      return await withScratch(volume, image, dir, true, async (c) => {
        const stream = await orNull(c.getArchive({ path }));
        if (!stream) return null;
        const bytes = untarSingleFile(await drain(stream));
        return bytes === null ? null : new TextDecoder().decode(bytes);
      });
    },
  }, { target, mutations: MUTATIONS, specific: dockerFailure, ready });
}
