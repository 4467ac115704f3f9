/**
 * A real environment for tests, probes and the demo: a uniquely named user-defined Docker
 * network and a single-node KRaft broker on it (reachable from containers by an alias and
 * from the host by a published port), a Kafka Connect worker beside it (`harness/connect.ts`;
 * `connect: false` leaves it out), plus the PostgreSQL URL. Everything it creates carries
 * the label `dev.sluice.run=<runId>`, and tear-down removes exactly what has that label: never a
 * broad prune.
 *
 * Many test files in one run share one environment: `tools/test.ts` starts it once and
 * passes its descriptor in `SLUICE_ENV_FILE`; {@link sharedEnv} attaches to it.
 *
 * @example
 * ```ts
 * import { startEnv } from "./env.ts";
 * await using env = await startEnv();
 * console.log(env.bootstrapHost, env.clusterId);
 * ```
 * @module
 */
import process from "node:process";
import { dirname } from "node:path";
import { randomBytes } from "node:crypto";
import { GenericContainer, Wait } from "npm:testcontainers@12.2.0";
import { docker, dockerCli, removeLabelled } from "./docker.ts";
import { KAFKA_IMAGE } from "./images.ts";
// imported as text so that the harness also works imported by URL (testing.ts)
import SERVER_PROPERTIES from "../images/kafka/server.properties" with { type: "text" };
import { removeConnectData, startConnectWorker } from "./connect.ts";
import type { ConnectDescriptor } from "./connect.ts";
import { logTail } from "./log_tail.ts";
import {
  KEYSTORE_TARGET,
  MTLS_INTERNAL_PORT,
  MTLS_PORT,
  SECURE_INTERNAL_PORT,
  SECURE_PORT,
  type SecureKafka,
  type SecureKafkaOptions,
  secureListenerFiles,
  TRUSTSTORE_TARGET,
} from "./secure_kafka.ts";

/** The broker's log lines that tell how far its start got, and every warning and error. */
const BROKER_MILESTONES = /\] (WARN|ERROR) |Exception|Kafka Server started|Transition from/;

export type { ConnectDescriptor } from "./connect.ts";

// No Ryuk: its image cannot be pulled here, and tear-down is by label anyway.
// testcontainers reads this lazily, when the first container starts.
process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

/** What a test, probe or demo needs to reach the real services. */
export interface EnvDescriptor {
  /** Unique ID of this environment; the value of the `dev.sluice.run` label on all it created. */
  runId: string;
  /** `host:port` of the broker's listener for clients on the host. */
  bootstrapHost: string;
  /** `alias:port` of the broker's listener for containers on {@link network}. */
  bootstrapInternal: string;
  /** Name of the user-defined Docker network. */
  network: string;
  /** The broker's Kafka cluster ID (22-character base64url UUID). */
  clusterId: string;
  /** PostgreSQL connection URL. */
  pgUrl: string;
  /** The broker container's exact ID. */
  brokerContainerId: string;
  /** Labels to put on anything created inside this environment, so tear-down finds it. */
  labels: Record<string, string>;
  /** The Kafka Connect worker, or null when the environment was started without one. */
  connect: ConnectDescriptor | null;
  /** The broker's SASL_SSL listeners (`secure` option), absent when it has none. */
  secure?: SecureKafka;
}

/** A started environment. Disposing it tears down what it created (if it owns it). */
export interface Env extends EnvDescriptor, AsyncDisposable {
  /** Remove every container, volume and network labelled with this run. Idempotent. */
  teardown(): Promise<TeardownReport>;
}

/** What tear-down removed. */
export interface TeardownReport {
  /** Containers removed. */
  containers: number;
  /** Volumes removed. */
  volumes: number;
  /** Networks removed. */
  networks: number;
  /** Containers without the run label found attached to the run's network (a leak). */
  strays: string[];
}

/** Options for {@link startEnv}. */
export interface StartEnvOptions {
  /** Broker image (default: the image scripts/bootstrap.sh builds). */
  image?: string;
  /** Network alias of the broker (default `kafka`). */
  alias?: string;
  /** PostgreSQL URL (default `SLUICE_PG_URL` or postgres://postgres@127.0.0.1:5432/postgres). */
  pgUrl?: string;
  /** How long to wait for the broker to start (default 120 s). */
  startupTimeoutMs?: number;
  /** Start a Kafka Connect worker beside the broker (default true). */
  connect?: boolean;
  /**
   * Broker settings that differ from the image's `server.properties` (images/kafka): a value
   * replaces the setting, `null` removes it so that Kafka's default applies. The benchmarks use
   * `{ "group.initial.rebalance.delay.ms": null }` for a broker as most users run it (3 s), where
   * the test broker sets 0.
   */
  brokerProperties?: Record<string, string | null>;
  /**
   * Give the broker SASL_SSL listeners with these SCRAM users and the StandardAuthorizer
   * (`harness/secure_kafka.ts`); the plaintext listeners stay.
   */
  secure?: SecureKafkaOptions;
}

/** The image's server.properties with `overrides` applied (see {@link StartEnvOptions}). */
export function brokerServerProperties(
  overrides: Record<string, string | null>,
): string {
  const base = SERVER_PROPERTIES;
  const keys = Object.keys(overrides);
  const kept = base.split("\n").filter((line) => !keys.some((k) => line.startsWith(`${k}=`)));
  const set = Object.entries(overrides).flatMap(([k, v]) => v === null ? [] : [`${k}=${v}`]);
  return [...kept.join("\n").trimEnd().split("\n"), ...set].join("\n") + "\n";
}

/** The label every harness resource carries; its value is the run ID. */
/**
 * The label on everything an environment created. Outside sluice's own namespace (`sluice.*`):
 * tests pass the environment's labels to sluice as extra labels, which may not use it.
 */
export const RUN_LABEL = "dev.sluice.run";

/** The default PostgreSQL URL (trust auth on loopback, as on this machine kind). */
export function defaultPgUrl(): string {
  return Deno.env.get("SLUICE_PG_URL") ?? "postgres://postgres@127.0.0.1:5432/postgres";
}

/** A fresh 22-character base64url UUID, the form Kafka uses for cluster and topic IDs. */
export function newKafkaUuid(): string {
  while (true) {
    const b = randomBytes(16);
    b[6] = (b[6] & 0x0f) | 0x40; // version 4, as Kafka's Uuid.randomUuid
    b[8] = (b[8] & 0x3f) | 0x80;
    const id = b.toString("base64url");
    // never one that starts with "-", as Kafka's Uuid.randomUuid: kafka-storage.sh reads
    // `--cluster-id -…` as a missing value, and the broker exits before it starts (1 in 64)
    if (!id.startsWith("-")) return id;
  }
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * Start a network and a broker. The caller owns the result: dispose it (or call
 * `teardown()`) when done.
 */
export async function startEnv(options: StartEnvOptions = {}): Promise<Env> {
  refuseInUnitStage("startEnv");
  const runId = `sluice-${randomBytes(4).toString("hex")}`;
  const labels = { [RUN_LABEL]: runId };
  const alias = options.alias ?? "kafka";
  const network = runId;
  const clusterId = newKafkaUuid();
  const secure = options.secure ? await secureListenerFiles(options.secure, alias) : null;
  await docker().createNetwork({ Name: network, Driver: "bridge", Labels: labels });
  try {
    let lastError: unknown;
    let broker: EnvDescriptor | undefined;
    // Retries: the published port is chosen before the container binds it, so another
    // process can take it in between; and under a heavy load (a second broker started beside
    // the shared one, while other cases run) a broker's start has been seen to end before it
    // logged "Kafka Server started". The error names the cause from the broker's log.
    for (let attempt = 1; attempt <= 3; attempt++) {
      const hostPort = freePort();
      const securePort = secure ? freePort() : null;
      const mtlsPort = secure?.certificates ? freePort() : null;
      const name = `${runId}-kafka-${attempt}`;
      // the broker's own lines, kept as they arrive: testcontainers removes a container that
      // never became ready, so `docker logs` after the failure finds nothing to read
      const seen = logTail({ notable: BROKER_MILESTONES });
      try {
        let container = new GenericContainer(options.image ?? KAFKA_IMAGE);
        const properties = { ...secure?.properties, ...options.brokerProperties };
        if (Object.keys(properties).length > 0) {
          container = container.withCopyContentToContainer([{
            content: brokerServerProperties(properties),
            target: "/opt/kafka/config/server.properties",
          }]);
        }
        if (secure) {
          container = container
            .withCopyContentToContainer([{
              content: secure.scramUsers,
              target: "/opt/kafka/config/scram-users",
            }])
            .withCopyFilesToContainer([
              { source: secure.keystore, target: KEYSTORE_TARGET },
              ...(secure.certificates
                ? [{ source: secure.caFile, target: TRUSTSTORE_TARGET }]
                : []),
            ]);
        }
        const advertised = [
          `INTERNAL://${alias}:9092`,
          `EXTERNAL://127.0.0.1:${hostPort}`,
          ...(securePort
            ? [`SECURE://127.0.0.1:${securePort}`, `SECURE_INT://${alias}:${SECURE_INTERNAL_PORT}`]
            : []),
          ...(mtlsPort
            ? [`MTLS://127.0.0.1:${mtlsPort}`, `MTLS_INT://${alias}:${MTLS_INTERNAL_PORT}`]
            : []),
        ];
        const started = await container
          .withName(name)
          .withLabels(labels)
          .withNetworkMode(network)
          .withNetworkAliases(alias)
          .withHostname(alias)
          .withExposedPorts(
            { container: 9094, host: hostPort },
            ...(securePort ? [{ container: SECURE_PORT, host: securePort }] : []),
            ...(mtlsPort ? [{ container: MTLS_PORT, host: mtlsPort }] : []),
          )
          .withEnvironment({
            CLUSTER_ID: clusterId,
            ADVERTISED_LISTENERS: advertised.join(","),
          })
          .withLogConsumer((stream) => seen.follow(stream))
          .withWaitStrategy(Wait.forLogMessage("Kafka Server started"))
          .withStartupTimeout(options.startupTimeoutMs ?? 120_000)
          .start();
        broker = {
          runId,
          bootstrapHost: `127.0.0.1:${hostPort}`,
          bootstrapInternal: `${alias}:9092`,
          network,
          clusterId,
          pgUrl: options.pgUrl ?? defaultPgUrl(),
          brokerContainerId: started.getId(),
          labels,
          connect: null,
          ...(secure && securePort
            ? {
              secure: {
                bootstrapHost: `127.0.0.1:${securePort}`,
                bootstrapInternal: `${alias}:${SECURE_INTERNAL_PORT}`,
                caFile: secure.caFile,
                passwords: secure.passwords,
                ...(secure.certificates && mtlsPort
                  ? {
                    mtls: {
                      bootstrapHost: `127.0.0.1:${mtlsPort}`,
                      bootstrapInternal: `${alias}:${MTLS_INTERNAL_PORT}`,
                      certificates: secure.certificates,
                    },
                  }
                  : {}),
              },
            }
            : {}),
        };
        break;
      } catch (error) {
        // every attempt's cause is kept: the last one alone hid why the first failed
        lastError = new Error(
          `${lastError instanceof Error ? `${lastError.message}\n` : ""}broker ${name} did not ` +
            `start (attempt ${attempt}): ${String(error)}\n${seen.text(name)}`,
          { cause: error },
        );
        await docker().getContainer(name).remove({ force: true }).catch(() => {});
      }
    }
    if (!broker) throw lastError;
    if (options.connect !== false) {
      broker.connect = await startConnectWorker({ ...broker, network, labels });
    }
    return withTeardown(broker);
  } catch (error) {
    await removeLabelled(RUN_LABEL, runId);
    throw error;
  }
}

/** Remove what carries the run label, then the files of the run (the Connect data directory). */
async function teardownRun(descriptor: EnvDescriptor): Promise<TeardownReport> {
  const report = await removeLabelled(RUN_LABEL, descriptor.runId);
  if (descriptor.connect) await removeConnectData(descriptor.connect);
  // the secured listener's throwaway CA, keystore and keys
  if (descriptor.secure) {
    await Deno.remove(dirname(descriptor.secure.caFile), { recursive: true }).catch(() => {});
  }
  return report;
}

function withTeardown(descriptor: EnvDescriptor): Env {
  const teardown = () => teardownRun(descriptor);
  return {
    ...descriptor,
    teardown,
    async [Symbol.asyncDispose]() {
      await teardown();
    },
  };
}

/** Write a descriptor so that other processes can attach to the environment. */
export async function writeEnvFile(path: string, env: EnvDescriptor): Promise<void> {
  const { teardown: _t, ...plain } = env as Partial<Env> & EnvDescriptor;
  const tmp = `${path}.tmp`;
  await Deno.writeTextFile(tmp, JSON.stringify(plain, null, 2));
  await Deno.rename(tmp, path);
}

let shared: Promise<Env> | undefined;

/**
 * A file run in the test suite's unit stage (`tools/test.ts`) declared no service: reaching for
 * the environment there is a missing `// test-needs: env` line, named instead of a hang.
 */
function refuseInUnitStage(what: string): void {
  if (Deno.env.get("SLUICE_TEST_STAGE") === "unit") {
    throw new Error(
      `${what}() in a test file that declares no service: add '// test-needs: env' to the ` +
        "file (see tools/test_files.ts)",
    );
  }
}

/**
 * The environment shared by every test file of one run. Under `tools/test.ts` it attaches to
 * the environment named by `SLUICE_ENV_FILE` (whose tear-down belongs to the runner, so
 * disposing the result here does nothing). Without it, it starts one on first use and
 * removes it when the process exits normally.
 */
export function sharedEnv(): Promise<Env> {
  if (shared) return shared;
  refuseInUnitStage("sharedEnv");
  const file = Deno.env.get("SLUICE_ENV_FILE");
  if (file) {
    shared = Deno.readTextFile(file).then((text) => {
      const d = JSON.parse(text) as EnvDescriptor;
      return {
        ...d,
        teardown: () => teardownRun(d),
        [Symbol.asyncDispose]: async () => {},
      };
    });
  } else {
    shared = startEnv().then((env) => {
      globalThis.addEventListener("unload", () => {
        // unload cannot await: remove synchronously through the docker CLI
        const d = dockerCli();
        const f = `--filter label=${RUN_LABEL}=${env.runId}`;
        const script = [
          `${d} ps -aq ${f} | xargs -r ${d} rm -fv`,
          `${d} volume ls -q ${f} | xargs -r ${d} volume rm -f`,
          `${d} network ls -q ${f} | xargs -r ${d} network rm`,
          ...(env.connect ? [`rm -rf '${env.connect.dataDirHost}'`] : []),
        ].join("; ");
        new Deno.Command("bash", { args: ["-c", script], stdout: "null", stderr: "null" })
          .outputSync();
      });
      return { ...env, [Symbol.asyncDispose]: async () => {} };
    });
  }
  return shared;
}
