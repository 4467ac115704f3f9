/**
 * Observation helpers for the Docker/Kafka benchmarks: the Docker event stream (daemon
 * timestamps of kill/die/destroy/create/start), a consumer-group state poller, an output-topic
 * tail that timestamps each record's arrival, and a runner container created the way sluice
 * creates one (same image, plan mount, volume, memory limit, stop timeout and environment).
 * @module
 */
import Docker from "dockerode";
import {
  Consumer,
  FetchIsolationLevels,
  MessagesStreamModes,
  stringDeserializers,
} from "@platformatic/kafka";
import type { KafkaPort } from "../lib/providers/kafka/port.ts";
import { RUNNER_ENV, RUNNER_EXECUTION, RUNNER_PATHS } from "../lib/runtime/labels.ts";
import { sleep } from "./_common.ts";

/** One Docker event with the daemon's timestamp in epoch milliseconds (fractional). */
export interface DockerEvent {
  t: number;
  action: string;
  id: string;
  name: string;
  attributes: Record<string, string>;
}

/** Collects container events carrying `label=value` until stopped. */
export async function dockerEvents(label: string, value: string) {
  const d = new Docker();
  const events: DockerEvent[] = [];
  const abort = new AbortController();
  const stream = await d.getEvents({
    filters: JSON.stringify({ type: ["container"], label: [`${label}=${value}`] }),
    abortSignal: abort.signal,
  }) as unknown as NodeJS.ReadableStream;
  let buf = "";
  stream.on("data", (chunk: Uint8Array | string) => {
    buf += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (!line) continue;
      try {
        const e = JSON.parse(line);
        events.push({
          t: Number(BigInt(e.timeNano) / 1000n) / 1000,
          action: String(e.Action ?? e.status),
          id: e.Actor?.ID ?? e.id,
          name: e.Actor?.Attributes?.name ?? "",
          attributes: e.Actor?.Attributes ?? {},
        });
      } catch {
        // a partial line is completed by the next chunk
      }
    }
  });
  stream.on("error", () => {});
  return {
    events,
    /** The first event of `action` for container `idOrName` at or after `since`. */
    async first(
      idOrName: string,
      action: string,
      since = 0,
      timeoutMs = 5000,
    ): Promise<number | null> {
      const end = Date.now() + timeoutMs;
      while (Date.now() < end) {
        const e = events.find((x) =>
          (x.id === idOrName || x.name === idOrName) && x.action.split(":")[0] === action &&
          x.t >= since
        );
        if (e) return e.t;
        await sleep(20);
      }
      return null;
    },
    stop() {
      abort.abort();
    },
  };
}

/** Polls a group's state every `intervalMs` and keeps the transitions. */
export function groupWatcher(kafka: KafkaPort, groupId: string, intervalMs = 25) {
  const log: Array<{ t: number; state: string; members: number }> = [];
  let running = true;
  const loop = (async () => {
    let last = "";
    while (running) {
      try {
        const t = Date.now();
        const g = await kafka.describeGroup(groupId);
        const now = `${g.state} ${g.members.length}`;
        if (now !== last) {
          log.push({ t, state: g.state, members: g.members.length });
          last = now;
        }
      } catch {
        // transient broker errors: poll again
      }
      await sleep(intervalMs);
    }
  })();
  return {
    log,
    /** First time at or after `since` the group was seen Empty (or Dead) with no members. */
    async emptySince(since: number, timeoutMs = 90_000): Promise<number | null> {
      const end = Date.now() + timeoutMs;
      while (Date.now() < end) {
        const e = log.find((x) =>
          x.t >= since && (x.state === "Empty" || x.state === "Dead") && x.members === 0
        );
        if (e) return e.t;
        await sleep(intervalMs);
      }
      return null;
    },
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** Tails topics from the beginning (read_committed) and timestamps each key's first arrival. */
export async function outputTail(bootstrap: string, topics: string[]) {
  const arrivals = new Map<string, number>();
  const consumer = new Consumer({
    clientId: "sluice-bench-tail",
    groupId: `sluice-bench-tail-${crypto.randomUUID()}`,
    bootstrapBrokers: [bootstrap],
    deserializers: stringDeserializers,
    maxWaitTime: 100,
  });
  const stream = await consumer.consume({
    topics,
    mode: MessagesStreamModes.EARLIEST,
    autocommit: false,
    isolationLevel: FetchIsolationLevels.READ_COMMITTED,
  });
  const loop = (async () => {
    try {
      for await (const m of stream) {
        if (m.key && !arrivals.has(m.key)) arrivals.set(m.key, Date.now());
      }
    } catch {
      // closed
    }
  })();
  return {
    arrivals,
    async waitFor(key: string, timeoutMs = 60_000): Promise<number | null> {
      const end = Date.now() + timeoutMs;
      while (Date.now() < end) {
        const t = arrivals.get(key);
        if (t !== undefined) return t;
        await sleep(10);
      }
      return null;
    },
    async close() {
      await stream.close().catch(() => {});
      await loop;
      await consumer.close(true).catch(() => {});
    },
  };
}

/** What a runner container needs (mirrors sluice's candidate spec). */
export interface RunnerSpec {
  name: string;
  image: string;
  imageEnv: string[];
  network: string;
  planPath: string;
  planSha256: string;
  generation: string;
  volume: string;
  labels: Record<string, string>;
  extraEnv?: string[];
  cmd?: string[];
  /** Overrides the image's entrypoint (JVM option variants of the benchmarks). */
  entrypoint?: string[];
}

/** Create (not start) a runner container exactly as sluice does; returns its ID. */
export async function createRunner(d: Docker, s: RunnerSpec): Promise<string> {
  const c = await d.createContainer({
    name: s.name,
    Image: s.image,
    Labels: s.labels,
    Env: [
      ...s.imageEnv,
      `${RUNNER_ENV.planSha256}=${s.planSha256}`,
      `${RUNNER_ENV.generation}=${s.generation}`,
      ...(s.extraEnv ?? []),
    ],
    ...(s.cmd ? { Cmd: s.cmd } : {}),
    ...(s.entrypoint ? { Entrypoint: s.entrypoint } : {}),
    StopTimeout: RUNNER_EXECUTION.stopTimeoutSeconds,
    HostConfig: {
      Binds: [`${s.planPath}:${RUNNER_PATHS.plan}:ro`, `${s.volume}:${RUNNER_PATHS.volume}`],
      NetworkMode: s.network,
      RestartPolicy: { Name: "no" },
      Memory: RUNNER_EXECUTION.memoryBytes,
    },
  });
  return c.id;
}

/** Read the runner's status file through the container (as sluice's observer does). */
export async function readStatus(
  readFile: (id: string, path: string) => Promise<Uint8Array | null>,
  id: string,
): Promise<Record<string, unknown> | null> {
  const b = await readFile(id, RUNNER_PATHS.statusFile).catch(() => null);
  if (!b) return null;
  try {
    return JSON.parse(new TextDecoder().decode(b));
  } catch {
    return null;
  }
}

/**
 * CPU time the container has used (all its threads: stream thread, clients, GC, JIT), from its
 * cgroup on this host (v1 cpuacct or v2 cpu.stat); null where neither is readable. Records per
 * CPU-second measure the program where wall-clock rates mostly measure the machine's load.
 */
export async function containerCpuMs(id: string): Promise<number | null> {
  const v1 = await Deno.readTextFile(`/sys/fs/cgroup/cpuacct/docker/${id}/cpuacct.usage`)
    .catch(() => null);
  if (v1 !== null) return Number(v1.trim()) / 1e6;
  for (
    const dir of [`/sys/fs/cgroup/system.slice/docker-${id}.scope`, `/sys/fs/cgroup/docker/${id}`]
  ) {
    const stat = await Deno.readTextFile(`${dir}/cpu.stat`).catch(() => null);
    const m = stat && /^usage_usec (\d+)$/m.exec(stat);
    if (m) return Number(m[1]) / 1000;
  }
  return null;
}

/** One stream of a container's log, as text (Docker's 8-byte frame headers removed). */
export async function containerLog(
  d: Docker,
  id: string,
  stream: "stdout" | "stderr",
): Promise<string> {
  const raw = await d.getContainer(id).logs({
    stdout: stream === "stdout",
    stderr: stream === "stderr",
    follow: false,
  });
  const b = raw as unknown as Uint8Array;
  const parts: Uint8Array[] = [];
  for (let i = 0; i + 8 <= b.length;) {
    const size = (b[i + 4] << 24) | (b[i + 5] << 16) | (b[i + 6] << 8) | b[i + 7];
    parts.push(b.subarray(i + 8, i + 8 + size));
    i += 8 + size;
  }
  return parts.map((p) => new TextDecoder().decode(p)).join("");
}
