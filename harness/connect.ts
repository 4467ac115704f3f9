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
 * With `security`, the worker is one a production cluster runs: its REST API only over HTTPS
 * (a CA and a certificate for its alias, `localhost` and 127.0.0.1 made now with openssl, in a
 * PKCS#12 keystore) behind HTTP basic authentication (Kafka's own
 * `BasicAuthSecurityRestExtension`, a JAAS `PropertyFileLoginModule` file holding one user and a
 * password generated now), and, with `security.kafka`, its own Kafka clients — the worker's and the
 * connectors' producers, consumers and admin clients — on the broker's SASL_SSL listener as a
 * SCRAM principal that {@link grantConnectWorkerAcls} gives what the worker needs. Every secret
 * is in a file copied into the container, never in its environment or labels.
 *
 * @example
 * ```ts
 * import { startConnectWorker } from "./connect.ts";
 * const connect = await startConnectWorker({
 *   runId: "sluice-0a1b2c3d", network: "sluice-0a1b2c3d", labels: { "dev.sluice.run": "sluice-0a1b2c3d" },
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
import { randomBytes } from "node:crypto";
import {
  AclOperations,
  AclPermissionTypes,
  ResourcePatternTypes,
  ResourceTypes,
} from "npm:@platformatic/kafka@2.12.1";
import { docker } from "./docker.ts";
import { CONNECT_IMAGE } from "./images.ts";
import { type AclCreation, createAclsVisible } from "./kafka.ts";
import { logTail } from "./log_tail.ts";
import { makeTestPki } from "./tls_certs.ts";

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
  /** A secured worker's CA and REST login (`security` option), absent for a plain one. */
  secure?: SecureConnect;
}

/** What a client needs to reach a secured worker's REST API. */
export interface SecureConnect {
  /** The CA (PEM, on the host) that signed the worker's HTTPS certificate. */
  caFile: string;
  /** A CA that signed nothing here: what an unknown CA looks like to a client. */
  otherCaFile: string;
  /** The REST API's one basic-auth user. */
  restUser: string;
  /** Its generated password. */
  restPassword: string;
  /** The host directory holding these files (removed by {@link removeConnectData}). */
  dir: string;
  /** Whether the worker's own Kafka clients use the broker's SASL_SSL listener. */
  kafkaSecured: boolean;
}

/** How a secured worker is made (see the module documentation). */
export interface SecureConnectOptions {
  /** The REST API's basic-auth user (default `sluice-rest`); its password is generated. */
  restUser?: string;
  /**
   * The worker's Kafka clients on the broker's SASL_SSL listener as a SCRAM-SHA-512 user
   * (absent: the plaintext `bootstrapInternal`).
   */
  kafka?: {
    /** The SASL_SSL listener as containers on the network reach it, e.g. `kafka:9096`. */
    bootstrapInternal: string;
    /** The CA (PEM, on the host) that signed the broker's certificate. */
    caFile: string;
    username: string;
    password: string;
  };
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
  /** An HTTPS + basic-auth REST API, and optionally SASL_SSL clients (module documentation). */
  security?: SecureConnectOptions;
}

const REST_PORT = 8083;
const HTTPS_PORT = 8443;
const DATA_DIR = "/data";
/** Where a secured worker's files go in its container. */
const SECURE_DIR = "/opt/connect/config/secure";
/** The JAAS login module of Kafka's basic-auth REST extension (its realm is `KafkaConnect`). */
const REST_LOGIN_MODULE =
  "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule";

/** A password without characters that need quoting in a properties or JAAS file. */
function password(): string {
  return randomBytes(18).toString("base64url").replace(/[-_]/g, "x");
}

/** The files a secured worker gets, made on the host now. */
interface SecureFiles {
  descriptor: SecureConnect;
  /** Files to copy into the container: host path → container path. */
  copies: { source: string; target: string }[];
  /** Text files to write into the container. */
  contents: { content: string; target: string }[];
  /** Environment of `connect-start.sh`: paths only. */
  environment: Record<string, string>;
}

async function secureFiles(o: SecureConnectOptions, alias: string): Promise<SecureFiles> {
  const pki = await makeTestPki({ serverHosts: [alias, "localhost", "127.0.0.1"] });
  const storePassword = password();
  const out = await new Deno.Command("openssl", {
    args: [
      "pkcs12",
      "-export",
      "-in",
      pki.serverCertFile,
      "-inkey",
      pki.serverKeyFile,
      "-certfile",
      pki.caFile,
      "-name",
      "connect",
      "-out",
      `${pki.dir}/connect.p12`,
      "-passout",
      `pass:${storePassword}`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    await pki.remove();
    throw new Error(`openssl pkcs12 failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  // the worker runs as the host user, who must read the keystore copied in
  await Deno.chmod(`${pki.dir}/connect.p12`, 0o644);
  const restUser = o.restUser ?? "sluice-rest";
  const restPassword = password();
  const lines = [
    `listeners=https://0.0.0.0:${HTTPS_PORT}`,
    "rest.advertised.listener=https",
    `rest.advertised.port=${HTTPS_PORT}`,
    // the REST server's own TLS settings, apart from the Kafka clients' top-level ssl.*
    `listeners.https.ssl.keystore.type=PKCS12`,
    `listeners.https.ssl.keystore.location=${SECURE_DIR}/connect.p12`,
    `listeners.https.ssl.keystore.password=${storePassword}`,
    `listeners.https.ssl.key.password=${storePassword}`,
    "rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension." +
    "BasicAuthSecurityRestExtension",
  ];
  const copies = [{ source: `${pki.dir}/connect.p12`, target: `${SECURE_DIR}/connect.p12` }];
  if (o.kafka) {
    copies.push({ source: o.kafka.caFile, target: `${SECURE_DIR}/kafka-ca.pem` });
    const jaas = "org.apache.kafka.common.security.scram.ScramLoginModule required " +
      `username="${o.kafka.username}" password="${o.kafka.password}";`;
    // the worker's own clients (top level), then the connectors' producers, consumers and
    // admin clients, which do not inherit the worker's security settings
    for (const prefix of ["", "producer.", "consumer.", "admin."]) {
      lines.push(
        `${prefix}security.protocol=SASL_SSL`,
        `${prefix}sasl.mechanism=SCRAM-SHA-512`,
        `${prefix}sasl.jaas.config=${jaas}`,
        `${prefix}ssl.truststore.type=PEM`,
        `${prefix}ssl.truststore.location=${SECURE_DIR}/kafka-ca.pem`,
      );
    }
  }
  return {
    descriptor: {
      caFile: pki.caFile,
      otherCaFile: pki.otherCaFile,
      restUser,
      restPassword,
      dir: pki.dir,
      kafkaSecured: o.kafka !== undefined,
    },
    copies,
    contents: [
      { content: lines.join("\n") + "\n", target: `${SECURE_DIR}/secure.properties` },
      { content: `${restUser}: ${restPassword}\n`, target: `${SECURE_DIR}/rest-users.properties` },
      {
        content: `KafkaConnect {\n  ${REST_LOGIN_MODULE} required\n  file="${SECURE_DIR}/` +
          `rest-users.properties";\n};\n`,
        target: `${SECURE_DIR}/rest-jaas.conf`,
      },
    ],
    environment: {
      CONNECT_EXTRA_PROPERTIES: `${SECURE_DIR}/secure.properties`,
      CONNECT_JAAS_FILE: `${SECURE_DIR}/rest-jaas.conf`,
    },
  };
}

/** How long one `/health` request may take while the worker starts (bounded by the startup timeout). */
const HEALTH_READ_TIMEOUT_MS = 30_000;
/** How often `/health` is asked while the worker starts. */
const HEALTH_INTERVAL_MS = 500;

/**
 * The worker's log lines that tell how far its start got: the REST server, each internal
 * topic's log, the group, the herder, every request it answered, and every warning and error.
 */
const WORKER_MILESTONES =
  /REST server listening|REST resources initialized|KafkaBasedLog|Discovered group coordinator|Joined group|Herder started|"GET |\] (WARN|ERROR) |Exception|Stopping|Kafka Connect stopped/;
/** The worker's threads whose stacks say where a start that stalled waits. */
const WORKER_THREADS = /^main$|DistributedHerder|KafkaBasedLog|herder|kafka-admin-client/;

/**
 * Wait until the worker's `GET /health` answers 200 (the herder has started: KIP-1017), asking
 * every {@link HEALTH_INTERVAL_MS} from the host, over HTTPS trusting the worker's CA only and
 * with its REST login when secured — the way sluice reaches it. Throws with the last answer
 * (or the last request's error) when `deadline` passes.
 */
async function waitHealthy(
  restHost: string,
  deadline: number,
  secure?: Pick<SecureConnect, "caFile" | "restUser" | "restPassword">,
): Promise<void> {
  let last = "no answer yet";
  let asked = 0;
  const t0 = Date.now();
  while (Date.now() < deadline) {
    asked++;
    try {
      const timeout = Math.min(HEALTH_READ_TIMEOUT_MS, deadline - Date.now());
      const r = await connectRead(`${restHost}/health`, 0, secure, timeout);
      if (r.status === 200) return;
      const body = typeof r.body === "string" ? r.body : JSON.stringify(r.body);
      last = `${r.status} ${body.replace(/\s+/g, " ").slice(0, 300)}`;
    } catch (error) {
      last = `request failed: ${String(error).slice(0, 300)}`;
    }
    await new Promise((r) => setTimeout(r, HEALTH_INTERVAL_MS));
  }
  throw new Error(
    `GET ${restHost}/health did not answer 200 in ${
      ((Date.now() - t0) / 1000).toFixed(0)
    } s (${asked} requests); the last answer: ${last}`,
  );
}

/** Ask a worker's JVM for a thread dump (written to its log) and give it a moment to arrive. */
async function dumpThreads(name: string, seen: { dumped(): boolean }): Promise<void> {
  try {
    await docker().getContainer(name).kill({ signal: "SIGQUIT" });
  } catch {
    return; // gone or never started: its log says why
  }
  for (let i = 0; i < 20 && !seen.dumped(); i++) await new Promise((r) => setTimeout(r, 250));
  // the dump's lines follow its first line within a moment
  await new Promise((r) => setTimeout(r, 1_000));
}

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
  const secure = options.security ? await secureFiles(options.security, alias) : null;
  const port = secure ? HTTPS_PORT : REST_PORT;
  const scheme = secure ? "https" : "http";
  const bootstrap = options.security?.kafka?.bootstrapInternal ?? options.bootstrapInternal;
  const uid = Deno.uid();
  const gid = Deno.gid();
  const failures: string[] = [];
  // One retry, as for the broker: the host port is chosen before the container binds it.
  for (let attempt = 1; attempt <= 2; attempt++) {
    const hostPort = freePort();
    const name = `${options.runId}-connect-${attempt}`;
    const t0 = Date.now();
    const seen = logTail({ notable: WORKER_MILESTONES, threads: WORKER_THREADS });
    const deadline = t0 + (options.startupTimeoutMs ?? 180_000);
    try {
      let container = new GenericContainer(options.image ?? CONNECT_IMAGE)
        .withName(name)
        .withLogConsumer((stream) => seen.follow(stream))
        .withLabels(options.labels)
        .withNetworkMode(options.network)
        .withNetworkAliases(alias)
        .withHostname(alias)
        .withExposedPorts({ container: port, host: hostPort })
        .withBindMounts([{ source: dataDirHost, target: DATA_DIR, mode: "rw" }])
        .withEnvironment({
          BOOTSTRAP_SERVERS: bootstrap,
          CONNECT_GROUP_ID: groupId,
          ADVERTISED_HOST: alias,
          ...secure?.environment,
        })
        // started once its REST server listens; ready is asked below, the way sluice asks
        // (testcontainers' HTTP wait asks once per read timeout, and through its own client)
        .withWaitStrategy(Wait.forLogMessage(/REST server listening at/))
        .withStartupTimeout(options.startupTimeoutMs ?? 180_000);
      if (secure) {
        container = container
          .withCopyFilesToContainer(secure.copies)
          .withCopyContentToContainer(secure.contents.map((c) => ({ ...c, mode: 0o644 })));
      }
      if (uid !== null && gid !== null) container = container.withUser(`${uid}:${gid}`);
      const started = await container.start();
      const restHost = `${scheme}://127.0.0.1:${hostPort}`;
      await waitHealthy(restHost, deadline, secure?.descriptor);
      await checkReady(restHost, options.clusterId, secure?.descriptor);
      return {
        restHost,
        restInternal: `${scheme}://${alias}:${port}`,
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
        ...(secure ? { secure: secure.descriptor } : {}),
      };
    } catch (error) {
      // where a start that stalled waits: the worker's own threads, before it is removed
      await dumpThreads(name, seen);
      // both attempts' reasons and logs are kept: the second often fails as the first did
      failures.push(
        `Connect worker ${name} did not become ready (attempt ${attempt}, ${
          ((Date.now() - t0) / 1000).toFixed(0)
        } s): ${String(error)}\n${seen.text(name)}`,
      );
      await docker().getContainer(name).remove({ force: true }).catch(() => {});
    }
  }
  await rm(dataDirHost, { recursive: true, force: true });
  if (secure) await rm(secure.descriptor.dir, { recursive: true, force: true });
  throw new Error(failures.join("\n"));
}

/**
 * The readiness checks beyond `/health`: the worker's group uses the environment's broker
 * (same Kafka cluster ID) and both FileStream connectors are installed. A secured worker is
 * asked over HTTPS trusting its CA only, with its REST login.
 */
export async function checkReady(
  restHost: string,
  clusterId: string,
  secure?: Pick<SecureConnect, "caFile" | "restUser" | "restPassword">,
): Promise<void> {
  const getJson = async (url: string): Promise<unknown> => {
    const r = await connectRead(url, 30_000, secure);
    if (r.status !== 200) {
      throw new Error(`GET ${url} answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
    }
    return r.body;
  };
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

/**
 * A witness's read of Connect's REST API (never through sluice's client), taken when the worker
 * can answer: right after a connector is created or changed the worker expects a rebalance and
 * answers reads 409, or 500 "a rebalance is expected" — a state with no answer yet, not one — so
 * such an answer is asked again, up to `settleMs` (then returned as it is, for the evidence; 0:
 * one request). Each request may take `requestTimeoutMs`.
 */
export async function connectRead(
  url: string,
  settleMs = 120_000,
  secure?: Pick<SecureConnect, "caFile" | "restUser" | "restPassword">,
  requestTimeoutMs = 30_000,
): Promise<{ status: number; body: unknown }> {
  const deadline = Date.now() + settleMs;
  const headers: Record<string, string> = secure
    ? { authorization: `Basic ${btoa(`${secure.restUser}:${secure.restPassword}`)}` }
    : {};
  const ca = secure ? await Deno.readTextFile(secure.caFile) : null;
  for (;;) {
    const client = ca === null ? undefined : Deno.createHttpClient({ caCerts: [ca] });
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { headers, client, signal: AbortSignal.timeout(requestTimeoutMs) });
      text = await res.text();
    } finally {
      client?.close();
    }
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

/**
 * Remove the worker's bind-mounted data directory (files the worker wrote included) and a
 * secured worker's CA, keystore and keys.
 */
export async function removeConnectData(
  connect: Pick<ConnectDescriptor, "dataDirHost" | "secure">,
) {
  await rm(connect.dataDirHost, { recursive: true, force: true });
  if (connect.secure) await rm(connect.secure.dir, { recursive: true, force: true });
}

/**
 * Allow a secured worker's Kafka principal (`User:name`) what the worker itself needs on the
 * broker and nothing more: everything on its internal topics (`<prefix>-configs`, `-offsets`,
 * `-status`: it creates, describes, reads and writes them) and READ on its worker group. A
 * connector's topics and a sink's group (`connect-<connector>`) are the connector's to grant.
 * Created through `bootstrap`, a plaintext listener (its `User:ANONYMOUS` is a super user).
 */
export async function grantConnectWorkerAcls(
  bootstrap: string,
  principal: string,
  groupId = "sluice-connect",
  topicPrefix = groupId,
): Promise<void> {
  await grantAcls(bootstrap, principal, [
    { type: "topic", name: `${topicPrefix}-`, operation: "all", prefixed: true },
    { type: "group", name: groupId, operation: "read" },
  ]);
}

/** One ALLOW binding of {@link grantAcls}. */
export interface AllowBinding {
  type: "topic" | "group";
  name: string;
  operation: "read" | "write" | "all";
  /** A PREFIXED pattern (default LITERAL). */
  prefixed?: boolean;
}

/** Create ALLOW bindings for `principal` on any host, through a plaintext listener. */
export async function grantAcls(
  bootstrap: string,
  principal: string,
  bindings: AllowBinding[],
): Promise<void> {
  const operations = {
    read: AclOperations.READ,
    write: AclOperations.WRITE,
    all: AclOperations.ALL,
  };
  const creations = bindings.map((b) => ({
    resourceType: b.type === "topic" ? ResourceTypes.TOPIC : ResourceTypes.GROUP,
    resourceName: b.name,
    resourcePatternType: b.prefixed ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
    principal,
    host: "*",
    operation: operations[b.operation],
    permissionType: AclPermissionTypes.ALLOW,
  }));
  await createAclsVisible(bootstrap, creations as AclCreation[]);
}
