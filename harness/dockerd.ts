/**
 * A private second Docker daemon, for disruptions that restart the daemon itself without
 * touching the machine's daemon or any other suite: its own socket, data root, exec root (so its
 * own containerd), pid file and log, and its own pre-created bridge for the default network, with
 * `--iptables=false` so it never edits the host's firewall. Images are copied into it with
 * `docker save | docker load`.
 *
 * Two dockerd behaviours would break the machine's daemon and are avoided: `--bridge none`
 * deletes the host's `docker0`, and so does a restart of a daemon started with
 * `--default-address-pool` without `--live-restore` (dockerd 20.10+ "clears the stale bridge
 * network" and then removes the interface named `docker0`, whoever owns it). So no address pool
 * is configured: the private network gets an explicit subnet from a free 10.x block, which also
 * keeps it from taking 172.17.0.0/16 beside the host's docker0. Every start, restart and stop is
 * wrapped in {@link guardDocker0}: should `docker0` vanish anyway, it is put back as it was (the
 * bridge, its address, its ports) and the step fails loudly.
 *
 * Its environment ({@link startPrivateEnv}) is a user-defined network and a KRaft broker whose
 * listener for everyone — the host and the runner containers — is the network's gateway address:
 * containers reach it through the host (the daemon's userland proxy), because bridged traffic
 * between containers would need firewall rules this daemon does not write.
 *
 * A daemon is described by plain data ({@link PrivateDocker}) so that another process (the case
 * running with `DOCKER_HOST` pointing at it) can restart it with {@link restartDaemon}.
 *
 * @example
 * ```ts
 * import { startPrivateDocker, stopPrivateDocker } from "./dockerd.ts";
 * // const d = await startPrivateDocker();
 * // await restartDaemon(d);
 * // await stopPrivateDocker(d);
 * ```
 * @module
 */
import { randomBytes } from "node:crypto";
import { dockerCli } from "./docker.ts";
import { type Env, newKafkaUuid, RUN_LABEL } from "./env.ts";
import { KAFKA_IMAGE } from "./images.ts";

/** A private daemon, as plain data. */
export interface PrivateDocker {
  /** Root of everything it owns (`/var/tmp/sl-<hex>`). */
  dir: string;
  socket: string;
  /** `unix://<socket>`, for `DOCKER_HOST`. */
  host: string;
  pidfile: string;
  log: string;
  /** The pre-created bridge of its default network. */
  bridge: string;
  /** The dockerd arguments (restarts reuse them). */
  args: string[];
  /** The 10.x.0.0/16 block its bridge and network addresses come from. */
  block: number;
  liveRestore: boolean;
  /**
   * `tcp://localhost:<port>`: the daemon's TCP+TLS address beside its socket, when started with
   * `tls` (it verifies clients: `--tlsverify`), else null.
   */
  tcp: string | null;
}

/** The daemon's TLS files (PEM paths), e.g. made by `tls_certs.ts`. */
export interface PrivateDockerTls {
  /** The CA its clients' certificates must be signed by. */
  caFile: string;
  /** Its server certificate and key (for `localhost`). */
  certFile: string;
  keyFile: string;
}

/** Run a command to its end: its exit code and its stdout and stderr, joined and trimmed. */
export async function sh(
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string }> {
  const o = await new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: o.code, out: (dec.decode(o.stdout) + dec.decode(o.stderr)).trim() };
}

async function must(cmd: string, args: string[], what: string): Promise<string> {
  const r = await sh(cmd, args);
  if (r.code !== 0) throw new Error(`private dockerd: ${what} failed: ${r.out.slice(-600)}`);
  return r.out;
}

/** `/_ping` answers OK on the socket. */
async function ping(socket: string): Promise<boolean> {
  try {
    const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
    try {
      const r = await fetch("http://docker/_ping", { client, signal: AbortSignal.timeout(3000) });
      return r.ok && (await r.text()) === "OK";
    } finally {
      client.close();
    }
  } catch {
    return false;
  }
}

async function pidOf(d: PrivateDocker): Promise<number | null> {
  try {
    const pid = Number((await Deno.readTextFile(d.pidfile)).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT"); // a no-op signal that fails for a dead process
    return true;
  } catch {
    return false;
  }
}

/** A free 10.A.0.0/16 (no route overlaps it). */
async function freeBlock(): Promise<number> {
  const routes = await must("ip", ["-4", "route"], "ip route");
  for (let tries = 0; tries < 60; tries++) {
    const a = 150 + Math.floor(Math.random() * 100);
    if (!routes.includes(`10.${a}.`)) return a;
  }
  throw new Error("private dockerd: no free 10.x.0.0/16 block for its networks");
}

/** The host's docker0 as found: its address and the ports (veths) attached to it. */
interface Docker0 {
  exists: boolean;
  addresses: string[];
  ports: string[];
}

async function docker0(): Promise<Docker0> {
  const link = await sh("ip", ["-o", "-4", "addr", "show", "dev", "docker0"]);
  if (link.code !== 0) return { exists: false, addresses: [], ports: [] };
  const addresses = [...link.out.matchAll(/inet (\S+)/g)].map((m) => m[1]);
  const ports = (await sh("ip", ["-o", "link", "show", "master", "docker0"])).out.split("\n")
    .map((l) => /^\d+: ([^@:]+)/.exec(l)?.[1]).filter((x): x is string => !!x);
  return { exists: true, addresses, ports };
}

/**
 * Run a private-daemon step and check that the host's docker0 survived it; if it did not, put it
 * back as it was and throw (a dockerd behaviour the arguments above avoid must never pass quietly).
 */
export async function guardDocker0<T>(step: string, fn: () => Promise<T>): Promise<T> {
  const before = await docker0();
  const result = await fn();
  if (!before.exists || (await docker0()).exists) return result;
  await sh("ip", ["link", "add", "name", "docker0", "type", "bridge"]);
  for (const a of before.addresses) await sh("ip", ["addr", "add", a, "dev", "docker0"]);
  for (const p of before.ports) await sh("ip", ["link", "set", p, "master", "docker0"]);
  await sh("ip", ["link", "set", "docker0", "up"]);
  throw new Error(
    `private dockerd ${step}: the host's docker0 disappeared; it was recreated with ${
      before.addresses.join(", ")
    } and ${before.ports.length} ports`,
  );
}

/** Start dockerd with `d.args`, detached in its own session, and wait until it answers. */
async function launch(d: PrivateDocker): Promise<void> {
  const quoted = d.args.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(" ");
  await must("sh", [
    "-c",
    `setsid /usr/sbin/dockerd ${quoted} >> '${d.log}' 2>&1 < /dev/null &`,
  ], "start");
  const end = Date.now() + 90_000;
  while (Date.now() < end) {
    if (await ping(d.socket)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  const tail = await Deno.readTextFile(d.log).catch(() => "");
  throw new Error(`private dockerd did not answer within 90 s:\n${tail.slice(-1500)}`);
}

function freeTcpPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * Start a private daemon. The caller must {@link stopPrivateDocker} it. With `tls` it also
 * listens on `tcp://127.0.0.1:<port>` with TLS, verifying its clients (the Docker CLI's
 * `--tlsverify`), while the harness keeps administering it on its socket.
 */
export async function startPrivateDocker(
  options: { liveRestore?: boolean; tls?: PrivateDockerTls } = {},
): Promise<PrivateDocker> {
  const tcpPort = options.tls ? freeTcpPort() : 0;
  const hex = randomBytes(4).toString("hex");
  const dir = `/var/tmp/sl-${hex}`;
  await Deno.mkdir(dir, { mode: 0o700 });
  const a = await freeBlock();
  const bridge = `sl${hex}`;
  // its own trust key, hence its own daemon ID (`GET /info`): without it dockerd 20.10 reads
  // /etc/docker/key.json, the machine daemon's, and both answer with one ID
  await Deno.writeTextFile(
    `${dir}/daemon.json`,
    `${JSON.stringify({ "deprecated-key-path": `${dir}/key.json` })}\n`,
  );
  const d: PrivateDocker = {
    dir,
    socket: `${dir}/d.sock`,
    host: `unix://${dir}/d.sock`,
    pidfile: `${dir}/d.pid`,
    log: `${dir}/dockerd.log`,
    bridge,
    block: a,
    liveRestore: options.liveRestore ?? false,
    tcp: options.tls ? `tcp://localhost:${tcpPort}` : null,
    args: [
      "--host",
      `unix://${dir}/d.sock`,
      "--pidfile",
      `${dir}/d.pid`,
      "--data-root",
      `${dir}/root`,
      "--exec-root",
      `${dir}/x`,
      "--config-file",
      `${dir}/daemon.json`,
      "--bridge",
      bridge,
      "--iptables=false",
      "--ip-masq=false",
      "--ip-forward=false",
      "--log-level",
      Deno.env.get("SLUICE_PRIVATE_DOCKERD_LOG_LEVEL") ?? "warn",
      ...(options.liveRestore ? ["--live-restore"] : []),
      ...(options.tls
        ? [
          "--host",
          `tcp://127.0.0.1:${tcpPort}`,
          "--tlsverify",
          "--tlscacert",
          options.tls.caFile,
          "--tlscert",
          options.tls.certFile,
          "--tlskey",
          options.tls.keyFile,
        ]
        : []),
    ],
  };
  try {
    await must("ip", ["link", "add", "name", bridge, "type", "bridge"], "bridge create");
    await must("ip", ["addr", "add", `10.${a}.200.1/24`, "dev", bridge], "bridge address");
    await must("ip", ["link", "set", bridge, "up"], "bridge up");
    await guardDocker0("start", () => launch(d));
  } catch (e) {
    await stopPrivateDocker(d).catch(() => {});
    throw e;
  }
  return d;
}

/** The pid of the daemon's managed containerd (under its exec root), if it runs. */
async function containerdPidOf(d: PrivateDocker): Promise<number | null> {
  try {
    const pid = Number((await Deno.readTextFile(`${d.dir}/x/containerd/containerd.pid`)).trim());
    return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : null;
  } catch {
    return null;
  }
}

async function waitExit(pid: number, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !alive(pid);
}

/** What a stop left behind: whether the managed containerd outlived dockerd. */
export interface Terminated {
  /** The managed containerd was still alive when dockerd's pid exited. */
  containerd_outlived_dockerd: boolean;
}

/**
 * Stop the daemon as an operator's `systemctl stop docker` does: SIGTERM to dockerd only (it
 * stops its running containers, then its managed containerd; the containers' shims are never
 * signalled), wait for its exit, then for its containerd's exit — dockerd waits for it itself,
 * so a containerd that outlives dockerd is recorded and waited for, never killed: a relaunch
 * must not race the old containerd on the same exec root.
 */
async function terminate(d: PrivateDocker, timeoutMs = 90_000): Promise<Terminated> {
  const pid = await pidOf(d);
  const containerd = await containerdPidOf(d);
  if (pid === null || !alive(pid)) return { containerd_outlived_dockerd: false };
  Deno.kill(pid, "SIGTERM");
  if (!(await waitExit(pid, timeoutMs))) {
    throw new Error(`private dockerd ${pid} still alive ${timeoutMs / 1000} s after SIGTERM`);
  }
  const outlived = containerd !== null && alive(containerd);
  if (outlived && !(await waitExit(containerd, timeoutMs))) {
    throw new Error(
      `private dockerd's containerd ${containerd} outlived it by ${timeoutMs / 1000} s`,
    );
  }
  return { containerd_outlived_dockerd: outlived };
}

/** A containerd shim of the private daemon's containerd, read from `/proc`. */
export interface Shim {
  pid: number;
  /** The container ID the shim was started for (its `-id`). */
  containerId: string;
  /** PIDs of its children (a shim with none holds no container process). */
  children: number[];
}

/**
 * The shims of the private daemon's containerd (`containerd-shim-runc-v2 … -id ID -address
 * <exec-root>/containerd/containerd.sock`), optionally only the one of `containerId`. A shim
 * outlives the containerd that started it; one started for a start in flight when containerd
 * died holds the container's ID, and every later start then answers "task … already exists"
 * while no `ctr task ls` of the new containerd lists it.
 */
export async function shimsOf(d: PrivateDocker, containerId?: string): Promise<Shim[]> {
  const address = `${d.dir}/x/containerd/containerd.sock`;
  const parents = new Map<number, number[]>();
  const found: Array<{ pid: number; containerId: string }> = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const pid = Number(e.name);
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => null);
    // the parent PID is the second field after the parenthesised command name
    const ppid = stat ? Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) : NaN;
    if (Number.isFinite(ppid)) parents.set(ppid, [...(parents.get(ppid) ?? []), pid]);
    const argv = (await Deno.readTextFile(`/proc/${pid}/cmdline`).catch(() => "")).split("\0");
    if (!argv[0]?.endsWith("containerd-shim-runc-v2")) continue;
    const arg = (flag: string) => argv[argv.indexOf(flag) + 1];
    if (arg("-address") !== address) continue;
    const id = arg("-id");
    if (id && (!containerId || id === containerId)) found.push({ pid, containerId: id });
  }
  return found.map((f) => ({ ...f, children: parents.get(f.pid) ?? [] }));
}

/**
 * Restart the private daemon: SIGTERM (without `--live-restore` it stops every container it
 * knows to be running), wait for its exit and its containerd's, start it again with the same
 * arguments, wait until it answers.
 */
export async function restartDaemon(
  d: PrivateDocker,
): Promise<
  { ms: number; pid_before: number | null; pid_after: number | null } & Terminated
> {
  const t0 = Date.now();
  const before = await pidOf(d);
  const stopped = await guardDocker0("restart", async () => {
    const t = await terminate(d);
    await launch(d);
    return t;
  });
  return { ms: Date.now() - t0, pid_before: before, pid_after: await pidOf(d), ...stopped };
}

/** The daemon's `docker` CLI arguments prefix. */
function cli(d: PrivateDocker): string[] {
  return ["-H", d.host];
}

/** Copy images from the machine's daemon into the private one (`docker save | docker load`). */
export async function loadImages(d: PrivateDocker, images: string[]): Promise<{ ms: number }> {
  const t0 = Date.now();
  const docker = dockerCli();
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  await must("bash", [
    "-c",
    `set -o pipefail; ${docker} save ${images.map(q).join(" ")} | ${docker} -H ${
      q(d.host)
    } load -q`,
  ], "image copy");
  return { ms: Date.now() - t0 };
}

/** Stop and remove everything the private daemon owns. Idempotent. */
export async function stopPrivateDocker(d: PrivateDocker): Promise<void> {
  const docker = dockerCli();
  if (await ping(d.socket)) {
    const ids = (await sh(docker, [...cli(d), "ps", "-aq"])).out.split("\n").filter((x) => x);
    if (ids.length) await sh(docker, [...cli(d), "rm", "-fv", ...ids]);
    const nets = (await sh(docker, [
      ...cli(d),
      "network",
      "ls",
      "-q",
      "--filter",
      "type=custom",
    ])).out.split("\n").filter((x) => x);
    for (const n of nets) await sh(docker, [...cli(d), "network", "rm", n]);
  }
  await guardDocker0("stop", async () => {
    try {
      await terminate(d);
    } catch {
      const pid = await pidOf(d);
      if (pid !== null && alive(pid)) Deno.kill(pid, "SIGKILL");
    }
  });
  // shims outlive their containerd (one a restart orphaned among them): nothing of this daemon
  // may outlive its tear-down
  for (const shim of await shimsOf(d)) {
    for (const pid of [...shim.children, shim.pid]) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  // anything still mounted under the daemon's directories (overlay layers, netns, shm)
  const mounts = (await Deno.readTextFile("/proc/mounts")).split("\n").map((l) => l.split(" ")[1])
    .filter((m) => m?.startsWith(`${d.dir}/`)).sort((x, y) => y.length - x.length);
  for (const m of mounts) await sh("umount", ["-l", m]);
  await sh("ip", ["link", "del", d.bridge]);
  // the daemon's log (its containerd's too) outlives the daemon where asked: the only account
  // of what a restart left behind
  const keep = Deno.env.get("SLUICE_PRIVATE_DOCKERD_LOGS");
  if (keep) await Deno.copyFile(d.log, `${keep}/dockerd-${d.bridge}.log`).catch(() => {});
  await Deno.remove(d.dir, { recursive: true }).catch(() => {});
}

/**
 * A network and a broker on the private daemon, reachable from the host and from containers at
 * the network's gateway address. Tear-down is {@link stopPrivateDocker}.
 */
export async function startPrivateEnv(d: PrivateDocker, pgUrl: string): Promise<Env> {
  const docker = dockerCli();
  const runId = `sluice-${randomBytes(4).toString("hex")}`;
  const labels = { [RUN_LABEL]: runId };
  const network = runId;
  await must(docker, [
    ...cli(d),
    "network",
    "create",
    "--subnet",
    `10.${d.block}.1.0/24`,
    "--gateway",
    `10.${d.block}.1.1`,
    "--label",
    `${RUN_LABEL}=${runId}`,
    "-o",
    `com.docker.network.bridge.name=sn${runId.slice(-8)}`,
    network,
  ], "network create");
  const gateway = await must(docker, [
    ...cli(d),
    "network",
    "inspect",
    "--format",
    "{{range .IPAM.Config}}{{.Gateway}}{{end}}",
    network,
  ], "network inspect");
  const l = Deno.listen({ hostname: gateway, port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const clusterId = newKafkaUuid();
  const id = await must(docker, [
    ...cli(d),
    "run",
    "-d",
    "--name",
    `${runId}-kafka`,
    "--label",
    `${RUN_LABEL}=${runId}`,
    "--network",
    network,
    "--network-alias",
    "kafka",
    "--hostname",
    "kafka",
    "-p",
    `${gateway}:${port}:9094`,
    "-e",
    `CLUSTER_ID=${clusterId}`,
    "-e",
    `ADVERTISED_LISTENERS=INTERNAL://kafka:9092,EXTERNAL://${gateway}:${port}`,
    KAFKA_IMAGE,
  ], "broker start");
  await waitBroker(d, id);
  const bootstrap = `${gateway}:${port}`;
  return {
    runId,
    bootstrapHost: bootstrap,
    bootstrapInternal: bootstrap,
    network,
    clusterId,
    pgUrl,
    brokerContainerId: id.split("\n").at(-1)!,
    connect: null,
    labels,
    teardown: () => Promise.resolve({ containers: 0, volumes: 0, networks: 0, strays: [] }),
    [Symbol.asyncDispose]: () => Promise.resolve(),
  };
}

/** Wait until the broker container logs that it started (since its last start). */
export async function waitBroker(d: PrivateDocker, id: string, since?: string): Promise<void> {
  const end = Date.now() + 120_000;
  while (Date.now() < end) {
    const logs = await sh(dockerCli(), [
      ...cli(d),
      "logs",
      ...(since ? ["--since", since] : []),
      id,
    ]);
    if (/Kafka Server started/.test(logs.out)) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`private dockerd: broker ${id.slice(0, 12)} did not start`);
}

/** Start the broker container again after a daemon restart (the environment comes back). */
export async function restartBroker(d: PrivateDocker, id: string): Promise<void> {
  const since = new Date().toISOString();
  await must(dockerCli(), [...cli(d), "start", id], "broker restart");
  await waitBroker(d, id, since);
}
