/**
 * The harness's Docker client (dockerode on the default socket or `DOCKER_HOST`) and
 * label-scoped clean-up. Only harness code uses this; product code reaches Docker through
 * `lib/providers/docker`.
 * @module
 */
// @ts-types="npm:@types/dockerode@4.0.2"
import Docker from "npm:dockerode@5.0.1";

let client: Docker | undefined;

/** A shared dockerode client for the daemon at `DOCKER_HOST` or the default socket. */
export function docker(): Docker {
  client ??= new Docker();
  return client;
}

/**
 * Remove every container (with its anonymous volumes), named volume and network that carries
 * `label=value`. Never prunes anything else. Idempotent.
 */
export async function removeLabelled(
  label: string,
  value: string,
): Promise<{ containers: number; volumes: number; networks: number; strays: string[] }> {
  const d = docker();
  const filters = JSON.stringify({ label: [`${label}=${value}`] });
  const containers = await d.listContainers({ all: true, filters });
  for (const c of containers) await removeContainerSurely(c.Id);
  const strays: string[] = [];
  const { Volumes } = await d.listVolumes({ filters });
  for (const v of Volumes ?? []) await removeVolume(v.Name, strays);
  const networks = await d.listNetworks({ filters });
  for (const n of networks) {
    // A container without the label still attached to our network is a leak of whoever
    // created it: detach it (the network is ours), remove the network, and report the stray.
    const info = await d.getNetwork(n.Id).inspect().catch(() => null) as
      | { Containers?: Record<string, { Name: string }> }
      | null;
    for (const [id, c] of Object.entries(info?.Containers ?? {})) {
      strays.push(c.Name);
      await d.getNetwork(n.Id).disconnect({ Container: id, Force: true }).catch(() => {});
    }
    await d.getNetwork(n.Id).remove().catch(ignoreNotFound);
  }
  return {
    containers: containers.length,
    volumes: (Volumes ?? []).length,
    networks: networks.length,
    strays,
  };
}

/**
 * Remove a labelled volume. A container without the label may still mount it (a helper sluice
 * started to read the volume, auto-removed when it ends, or one a killed worker left behind): it
 * is removed and reported as a stray, and a volume still "in use" (409) while such a container
 * goes away is tried again for a bounded time — a tear-down never fails on it.
 */
async function removeVolume(name: string, strays: string[]): Promise<void> {
  const d = docker();
  for (let attempt = 0; attempt < 20; attempt++) {
    const mounting = JSON.stringify({ volume: [name] });
    for (const c of await d.listContainers({ all: true, filters: mounting })) {
      strays.push(c.Names?.[0]?.replace(/^\//, "") ?? c.Id);
      await removeContainerSurely(c.Id);
    }
    try {
      await d.getVolume(name).remove({ force: true });
      return;
    } catch (e) {
      if ((e as { statusCode?: number }).statusCode === 404) return;
      if ((e as { statusCode?: number }).statusCode !== 409) throw e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  strays.push(`volume ${name} (still in use after 10 s)`);
}

/**
 * Force-remove container `id` with its anonymous volumes, and return once Docker no longer has
 * it. Under load the daemon can refuse the force-remove of a running container ("tried to kill
 * container, but did not receive an exit event": it waits only 2 s for the killed process's exit)
 * or answer 409 while another removal of it is in progress; both are tried again, bounded by
 * `boundMs`, and the last error is thrown if the container is still there.
 */
export async function removeContainerSurely(id: string, boundMs = 60_000): Promise<void> {
  const d = docker();
  const deadline = Date.now() + boundMs;
  for (;;) {
    let error: unknown;
    try {
      await d.getContainer(id).remove({ force: true, v: true });
      return;
    } catch (e) {
      if (statusOf(e) === 404) return;
      error = e;
    }
    const gone = await d.getContainer(id).inspect().then(() => false, (e) => statusOf(e) === 404);
    if (gone) return;
    if (Date.now() > deadline) throw error;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

function statusOf(error: unknown): number | undefined {
  return (error as { statusCode?: number } | null)?.statusCode;
}

/** Count what still carries `label=value` (used by tests of tear-down). */
export async function countLabelled(
  label: string,
  value: string,
): Promise<{ containers: number; volumes: number; networks: number }> {
  const d = docker();
  const filters = JSON.stringify({ label: [`${label}=${value}`] });
  const [containers, volumes, networks] = await Promise.all([
    d.listContainers({ all: true, filters }),
    d.listVolumes({ filters }),
    d.listNetworks({ filters }),
  ]);
  return {
    containers: containers.length,
    volumes: (volumes.Volumes ?? []).length,
    networks: networks.length,
  };
}

function ignoreNotFound(error: unknown): void {
  const status = (error as { statusCode?: number }).statusCode;
  if (status !== 404) throw error;
}

/** The Docker CLI matching the daemon (Debian's docker.io, API 1.41). */
export function dockerCli(): string {
  return Deno.env.get("SLUICE_DOCKER_CLI") ?? "/usr/bin/docker";
}

/** Result of {@link runOnce}. */
export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Run a one-off container to completion (`docker run --rm`) with labels, on a network, and
 * return its exit code and output. For tests and the smoke journey.
 */
export async function runOnce(
  image: string,
  args: string[],
  options: { network?: string; labels?: Record<string, string>; entrypoint?: string } = {},
): Promise<RunResult> {
  const cli: string[] = ["run", "--rm"];
  if (options.network) cli.push("--network", options.network);
  for (const [k, v] of Object.entries(options.labels ?? {})) cli.push("--label", `${k}=${v}`);
  if (options.entrypoint) cli.push("--entrypoint", options.entrypoint);
  cli.push(image, ...args);
  const out = await new Deno.Command(dockerCli(), { args: cli, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  return { exitCode: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
