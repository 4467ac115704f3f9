/**
 * The real {@link DockerPort} on dockerode, against the daemon at `DOCKER_HOST` or the default
 * socket.
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

/** A {@link DockerPort} for the daemon dockerode finds (`DOCKER_HOST` or the default socket). */
export function dockerodePort(client: Docker = new Docker()): DockerPort {
  const d = client;

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

  return {
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
  };
}
