/**
 * The Docker port: the only operations sluice performs on a Docker Engine. The driver and the
 * observer take this interface, so unit tests can pass a fake and probes the real adapter
 * ({@link "./dockerode.ts"}).
 *
 * Mutations are deliberately narrow: create a stopped container (labels are written
 * atomically by create), start it, request TERM (never a forced kill), remove a stopped
 * container without `force` and without its volumes, create a labelled volume, write a file
 * into a created container (the volume's instance file, through the first runner's own mount),
 * and undo a create that met a vanished volume (the container, and the empty, unlabelled volume
 * Docker's create made in its place — never a volume anyone labelled or wrote to), and — for a
 * destroy asked to delete data (`plan --destroy --delete-data`) — remove a state volume sluice
 * created, only while it still carries the labels sluice wrote on it and nothing mounts it.
 * There is no pull, no build, no prune, and no helper container: every read goes through the
 * API or a container that already exists.
 *
 * Reads come in two shapes: exact lookups, and project-wide ones
 * ({@link DockerPort.listContainersLabelled}, {@link DockerPort.listVolumes}) whose request
 * count does not grow with the number of models. The waits ({@link DockerPort.awaitExit},
 * {@link DockerPort.awaitOutputLine}) block on the daemon instead of polling.
 * @module
 */

/** Docker's zero time: a container's `startedAt` / `finishedAt` before it ever started / finished. */
export const DOCKER_ZERO_TIME = "0001-01-01T00:00:00Z";

/** Whether a Docker timestamp is set (not {@link DOCKER_ZERO_TIME}, not empty). */
export function dockerTimeSet(t: string): boolean {
  return t !== DOCKER_ZERO_TIME && t !== "";
}

/** A container as `docker inspect` reports it, reduced to what the spec needs. */
export interface ContainerInfo {
  /** Exact 64-hex container ID. */
  id: string;
  /** Name without the leading slash. */
  name: string;
  /** Image ID (`sha256:...`) the container was created from. */
  imageId: string;
  /** Its labels. */
  labels: Record<string, string>;
  /** Environment as `KEY=value` strings, in the container's order. */
  env: string[];
  /** The entrypoint as created (the image's unless overridden). */
  entrypoint: string[];
  /** The command (arguments after the entrypoint). */
  cmd: string[];
  /** Its state as `docker inspect` reports it. */
  state: {
    status: "created" | "running" | "paused" | "restarting" | "removing" | "exited" | "dead";
    running: boolean;
    exitCode: number;
    oomKilled: boolean;
    /** RFC 3339; {@link DOCKER_ZERO_TIME} when never started/finished. */
    startedAt: string;
    finishedAt: string;
    error: string;
  };
  /** The network the container was created on (HostConfig.NetworkMode). */
  networkMode: string;
  /** Network name → network ID the container is attached to (IDs are empty until started). */
  networks: Record<string, string>;
  /** Its mounts. */
  mounts: Array<{
    type: string;
    /** Volume name (volumes) or host path (binds). */
    source: string;
    destination: string;
    readOnly: boolean;
  }>;
  /** Restart policy name ("no" or ""), which must stay off for sluice's runners. */
  restartPolicy: string;
  /** Memory limit in bytes (0 = none). */
  memory: number;
  /**
   * Seconds Docker waits after SIGTERM before SIGKILL when it stops the container
   * (`Config.StopTimeout`); null when the container was created without one (Docker's default).
   */
  stopTimeout: number | null;
  /** When it was created (RFC 3339). */
  createdAt: string;
}

/** A named volume. Docker volumes have no ID; the instance UUID is a label and a file. */
export interface VolumeInfo {
  /** The volume name. */
  name: string;
  /** Its labels. */
  labels: Record<string, string>;
  /** When it was created (RFC 3339). */
  createdAt: string;
}

/** An image, by its immutable ID. */
export interface ImageInfo {
  /** The immutable image ID (`sha256:...`). */
  id: string;
  /** Its environment as `KEY=value` strings. */
  env: string[];
  /** Its labels. */
  labels: Record<string, string>;
  /** Its entrypoint. */
  entrypoint: string[];
  /** Its command (`Config.Cmd`: the arguments after the entrypoint; empty when none). */
  cmd: string[];
}

/** What `create` needs; the adapter adds nothing of its own. */
export interface ContainerSpec {
  /** The container name. */
  name: string;
  /** The image ID to create it from. */
  image: string;
  /** Labels to set. */
  labels: Record<string, string>;
  /** Environment as `KEY=value` strings. */
  env: string[];
  /** The network to create it on. */
  network: string;
  /** Host path of the plan file, bind-mounted read-only. */
  planHostPath: string;
  /** Where the plan file appears inside the container. */
  planContainerPath: string;
  /** The state volume to mount. */
  volume: string;
  /** Where the volume appears inside the container. */
  volumeContainerPath: string;
  /** Memory limit in bytes. */
  memoryBytes: number;
  /**
   * Seconds Docker waits after SIGTERM before SIGKILL when *it* stops the container (daemon
   * shutdown, `docker stop`). sluice itself never escalates; this must exceed the runner's
   * own close bound so a daemon restart still gets a clean close.
   */
  stopTimeoutSeconds: number;
}

/**
 * What {@link DockerPort.discardCreated} did with the volume: removed it, or kept it because it
 * was already gone (`absent`), carries a label, is another volume than the one the create made
 * (`replaced`: another creation time), holds a file, or another container uses it.
 */
export type VolumeDiscard = "removed" | "absent" | "labelled" | "replaced" | "not_empty" | "in_use";

/** One line a container wrote (without its newline). */
export interface LogLine {
  /** Which stream it was written on. */
  stream: "stdout" | "stderr";
  /** The text of the line. */
  line: string;
}

/** Which of a container's log lines {@link DockerPort.containerLogs} reads. */
export interface LogReadOptions {
  /** Only lines written at or after this RFC 3339 time (of the daemon's clock). */
  since?: string;
  /** Only the last N lines (of those since `since`), then, with `follow`, the new ones. */
  tail?: number;
  /** Keep reading new lines until the container stops or `signal` aborts. */
  follow?: boolean;
  /** Ends a followed read. */
  signal?: AbortSignal;
}

/** The operations sluice needs from a Docker Engine. */
export interface DockerPort {
  /** The daemon's own ID (`docker info` → ID): part of the immutable provider identity. */
  daemonId(): Promise<string>;
  /** Every container (running or not) carrying `label=value`. */
  listContainers(label: string, value: string): Promise<ContainerInfo[]>;
  /** Exact container by ID or name; `null` when absent. */
  inspectContainer(idOrName: string): Promise<ContainerInfo | null>;
  /** Bytes of a file inside a container (works on created and exited containers, and mounts). */
  readContainerFile(id: string, path: string): Promise<Uint8Array | null>;
  /** A volume by name; `null` when absent. */
  inspectVolume(name: string): Promise<VolumeInfo | null>;
  /** An image by ID; `null` when absent. */
  inspectImage(id: string): Promise<ImageInfo | null>;
  /** Network ID by name; `null` when absent. */
  networkId(name: string): Promise<string | null>;

  /** Create (never start) a container. Returns its exact ID. */
  createContainer(spec: ContainerSpec): Promise<string>;
  /** Start a created container. */
  startContainer(id: string): Promise<void>;
  /** Send SIGTERM. Never escalates to SIGKILL. */
  signalTerm(id: string): Promise<void>;
  /** Remove a stopped container; fails on a running one (no force) and keeps volumes. */
  removeContainer(id: string): Promise<void>;
  /** Create a labelled volume; fails (`BLOCKED_VOLUME_EXISTS`) if one with this name exists. */
  createVolume(name: string, labels: Record<string, string>): Promise<void>;
  /**
   * Write a file into a container that exists (through its mounts: a path under a volume mount
   * is written on the volume). Refused for a path on a read-only bind mount. `mode`: the file's
   * permission bits (default 0644; owned by root).
   */
  writeContainerFile(
    id: string,
    path: string,
    bytes: Uint8Array,
    options?: { mode?: number },
  ): Promise<void>;
  /**
   * Undo a create whose named volume had vanished: Docker's create then made an empty,
   * unlabelled volume of that name that nobody asked for (the Engine has no create option that
   * refuses a missing volume). Removes the never-started container `id` (refused for any other:
   * `INTERNAL`), then the volume it mounts as `volume.name` only while it is still what that
   * create made — no label, no regular file seen through the container's mount, created at
   * `volume.createdAt`, used by no other container, checked in that order — and answers why a
   * volume was kept otherwise. Docker's local driver reports the ctime of the volume's `_data`
   * directory as its CreatedAt, which a file written there moves: a written volume is
   * `not_empty`, never `replaced`. {@link "./existing_volume.ts"} is its one caller.
   */
  discardCreated(id: string, volume: { name: string; createdAt: string }): Promise<VolumeDiscard>;
  /**
   * Remove a state volume sluice created (a destroy that deletes data): only while it carries
   * each of `owner`'s labels with exactly that value (the project, environment, application ID
   * and volume instance sluice wrote at its create) and no container, running or not, mounts
   * it. Idempotent: a volume already gone is `"absent"`, so a deletion whose response was lost
   * is done when continued. Refused, removing nothing: a volume whose labels differ
   * (`BLOCKED_VOLUME_INSTANCE_CHANGED`: another volume under that name), one a container mounts
   * (`BLOCKED_VOLUME_IN_USE`).
   */
  removeOwnedVolume(name: string, owner: Record<string, string>): Promise<"removed" | "absent">;

  /**
   * Every container (running or not) whose `label` has one of `values`, from one listing; only
   * those are inspected.
   */
  listContainersLabelled(label: string, values: string[]): Promise<ContainerInfo[]>;
  /** The named volumes that exist, from one listing (absent names are left out). */
  listVolumes(names: string[]): Promise<Map<string, VolumeInfo>>;
  /**
   * Block until the container is not running (it exited, or never started), is gone, or
   * `timeoutMs` passed. Read-only: it never stops anything.
   */
  awaitExit(id: string, timeoutMs: number): Promise<"stopped" | "absent" | "timeout">;
  /**
   * Block until the container writes a line to stdout that starts with one of `prefixes`
   * (counting lines written since `since`, an RFC 3339 time of the daemon's clock such as the
   * container's `startedAt`), stops, is gone, or `timeoutMs` passed. Read-only; a wake-up
   * only: callers decide on a fresh observation, never on the line.
   */
  awaitOutputLine(
    id: string,
    prefixes: string[],
    since: string,
    timeoutMs: number,
  ): Promise<"line" | "stopped" | "absent" | "timeout">;
  /**
   * The container's log lines, stdout and stderr in the order written, each handed to `onLine`
   * as it is read. Without `follow` it answers `"done"` once the lines written so far are read;
   * with it, `"stopped"` when the container stops, `"aborted"` when `signal` ends the read.
   * `"absent"` for a container that does not exist. Read-only.
   */
  containerLogs(
    id: string,
    options: LogReadOptions,
    onLine: (line: LogLine) => void,
  ): Promise<"done" | "stopped" | "aborted" | "absent">;
}
