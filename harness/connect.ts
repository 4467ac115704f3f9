/**
 * The Kafka Connect worker of a harness environment: one distributed-mode worker of the same
 * Kafka version as the broker (image built by scripts/bootstrap.sh from `images/connect/`),
 * on the environment's network under an alias, its REST API published on a host port, its
 * internal topics (config, offsets, status) on the broker with replication factor 1, the
 * FileStream connectors on its plugin path, and a host directory bind-mounted at `/data` for
 * the files FileStream connectors read and write. It runs as the host user, so those files
 * belong to whoever runs the tests.
 *
 * Readiness is the REST API's, not a log line: `GET /health` answers 200 (the herder has
 * joined its group), `GET /` names the broker's cluster ID, and `GET /connector-plugins` lists
 * both FileStream connectors.
 *
 * @example
 * ```ts
 * import { startConnectWorker } from "./connect.ts";
 * const connect = await startConnectWorker({
 *   runId: "sluice-0a1b2c3d", network: "sluice-0a1b2c3d", labels: { "sluice.run": "sluice-0a1b2c3d" },
 *   bootstrapInternal: "kafka:9092", clusterId: "4L6g3nShT-eMCtK--X86sw",
 * });
 * console.log(connect.restHost, connect.readyMs);
 * ```
 * @module
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GenericContainer, Wait } from "npm:testcontainers@12.2.0";
import { docker, dockerCli } from "./docker.ts";
import { CONNECT_IMAGE } from "./images.ts";

/** The two FileStream connector classes the worker must offer. */
export const FILE_STREAM_CONNECTORS = [
  "org.apache.kafka.connect.file.FileStreamSinkConnector",
  "org.apache.kafka.connect.file.FileStreamSourceConnector",
] as const;

/** What a test needs to reach an environment's Connect worker. */
export interface ConnectDescriptor {
  /** REST base URL for the host, e.g. `http://127.0.0.1:41817`. */
  restHost: string;
  /** REST base URL for containers on the environment's network, e.g. `http://connect:8083`. */
  restInternal: string;
  /** The worker container's exact ID. */
  containerId: string;
  /** The worker group (`group.id`). */
  groupId: string;
  /** The worker's internal topics on the broker. */
  topics: { config: string; offset: string; status: string };
  /** Host directory bind-mounted into the worker at {@link dataDirContainer}. */
  dataDirHost: string;
  /** Where the worker sees {@link dataDirHost}: FileStream `file=` settings point here. */
  dataDirContainer: string;
  /** Milliseconds from container create to the REST API being ready (a measurement). */
  readyMs: number;
}

/** Where and how to start the worker. */
export interface StartConnectOptions {
  runId: string;
  network: string;
  labels: Record<string, string>;
  /** The broker as containers on {@link network} reach it. */
  bootstrapInternal: string;
  /** The broker's cluster ID: the worker must report the same one. */
  clusterId: string;
  /** Image (default: the one scripts/bootstrap.sh builds). */
  image?: string;
  /** Network alias (default `connect`). */
  alias?: string;
  /** Worker group ID, also the internal topics' prefix (default `sluice-connect`). */
  groupId?: string;
  /** How long to wait for readiness (default 180 s: the machine may be busy). */
  startupTimeoutMs?: number;
}

const REST_PORT = 8083;
const DATA_DIR = "/data";

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * Start a Connect worker in an environment and wait until its REST API is ready. Everything
 * it creates carries the environment's labels (tear-down by label removes the container);
 * the data directory is removed by {@link removeConnectData}.
 */
export async function startConnectWorker(options: StartConnectOptions): Promise<ConnectDescriptor> {
  const alias = options.alias ?? "connect";
  const groupId = options.groupId ?? "sluice-connect";
  const dataDirHost = await mkdtemp(join(tmpdir(), `${options.runId}-connect-`));
  const uid = Deno.uid();
  const gid = Deno.gid();
  let lastError: unknown;
  // One retry, as for the broker: the host port is chosen before the container binds it.
  for (let attempt = 1; attempt <= 2; attempt++) {
    const hostPort = freePort();
    const name = `${options.runId}-connect-${attempt}`;
    const t0 = Date.now();
    try {
      let container = new GenericContainer(options.image ?? CONNECT_IMAGE)
        .withName(name)
        .withLabels(options.labels)
        .withNetworkMode(options.network)
        .withNetworkAliases(alias)
        .withHostname(alias)
        .withExposedPorts({ container: REST_PORT, host: hostPort })
        .withBindMounts([{ source: dataDirHost, target: DATA_DIR, mode: "rw" }])
        .withEnvironment({
          BOOTSTRAP_SERVERS: options.bootstrapInternal,
          CONNECT_GROUP_ID: groupId,
          ADVERTISED_HOST: alias,
        })
        .withWaitStrategy(Wait.forHttp("/health", REST_PORT).forStatusCode(200))
        .withStartupTimeout(options.startupTimeoutMs ?? 180_000);
      if (uid !== null && gid !== null) container = container.withUser(`${uid}:${gid}`);
      const started = await container.start();
      const restHost = `http://127.0.0.1:${hostPort}`;
      await checkReady(restHost, options.clusterId);
      return {
        restHost,
        restInternal: `http://${alias}:${REST_PORT}`,
        containerId: started.getId(),
        groupId,
        topics: {
          config: `${groupId}-configs`,
          offset: `${groupId}-offsets`,
          status: `${groupId}-status`,
        },
        dataDirHost,
        dataDirContainer: DATA_DIR,
        readyMs: Date.now() - t0,
      };
    } catch (error) {
      lastError = new Error(
        `Connect worker ${name} did not become ready (attempt ${attempt}): ${String(error)}\n` +
          (await logTail(name)),
        { cause: error },
      );
      await docker().getContainer(name).remove({ force: true }).catch(() => {});
    }
  }
  await rm(dataDirHost, { recursive: true, force: true });
  throw lastError;
}

/**
 * The readiness checks beyond `/health`: the worker's group uses the environment's broker
 * (same Kafka cluster ID) and both FileStream connectors are installed.
 */
export async function checkReady(restHost: string, clusterId: string): Promise<void> {
  const root = await getJson(`${restHost}/`) as { kafka_cluster_id?: string; version?: string };
  if (root.kafka_cluster_id !== clusterId) {
    throw new Error(
      `GET / reports Kafka cluster ${root.kafka_cluster_id}, expected the broker's ${clusterId}`,
    );
  }
  const plugins = await getJson(`${restHost}/connector-plugins`) as Array<{ class: string }>;
  const classes = new Set(plugins.map((p) => p.class));
  const absent = FILE_STREAM_CONNECTORS.filter((c) => !classes.has(c));
  if (absent.length > 0) {
    throw new Error(`GET /connector-plugins lacks ${absent.join(", ")}: plugin path broken`);
  }
}

async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/**
 * A witness's read of Connect's REST API (never through sluice's client), taken when the worker
 * can answer: right after a connector is created or changed the worker expects a rebalance and
 * answers reads 409, or 500 "a rebalance is expected" — a state with no answer yet, not one — so
 * such an answer is asked again, up to `settleMs` (then returned as it is, for the evidence).
 */
export async function connectRead(
  url: string,
  settleMs = 120_000,
): Promise<{ status: number; body: unknown }> {
  const deadline = Date.now() + settleMs;
  for (;;) {
    const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    const notNow = res.status === 409 || (res.status >= 500 && /rebalance/i.test(text));
    if (!notNow || Date.now() >= deadline) return { status: res.status, body };
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Remove the worker's bind-mounted data directory (files the worker wrote included). */
export async function removeConnectData(connect: Pick<ConnectDescriptor, "dataDirHost">) {
  await rm(connect.dataDirHost, { recursive: true, force: true });
}

async function logTail(name: string): Promise<string> {
  const out = await new Deno.Command(dockerCli(), {
    args: ["logs", "--tail", "40", name],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return `last log lines of ${name}:\n${dec.decode(out.stdout)}${dec.decode(out.stderr)}`;
}
