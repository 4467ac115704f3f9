/**
 * The real Docker and Kafka adapters, loaded on first use. Their npm clients (dockerode,
 * @platformatic/kafka) take about a CPU-second to load, which every process that never talks
 * to Docker or Kafka — `validate`, `plan --offline`, `state show`, the CLI over fakes — would
 * otherwise pay at start-up. A session or project handle that is given its ports never loads
 * them.
 *
 * @example
 * ```ts
 * import { realDocker, realKafka } from "./real.ts";
 * // const docker = await realDocker();
 * // const kafka = await realKafka("127.0.0.1:9094");
 * ```
 * @module
 */
import type { DockerPort } from "./docker/port.ts";
import type { KafkaPort } from "./kafka/port.ts";
import type { PlatformaticKafkaOptions } from "./kafka/platformatic.ts";
import type { Manifest } from "../project/manifest.ts";
import { resolveKafkaSecurity } from "./kafka/security.ts";

/**
 * The Docker daemon the Docker CLI's variables name (`DOCKER_HOST`, with TLS when
 * `DOCKER_TLS_VERIFY` is set) or the default socket.
 */
export async function realDocker(): Promise<DockerPort> {
  const { dockerodeFromEnv } = await import("./docker/dockerode.ts");
  return await dockerodeFromEnv();
}

/** The Kafka cluster at `bootstrap` (`host:port`, comma-separated). */
export async function realKafka(
  bootstrap: string,
  options: PlatformaticKafkaOptions = {},
): Promise<KafkaPort> {
  const { platformaticKafka } = await import("./kafka/platformatic.ts");
  return platformaticKafka(bootstrap, options);
}

/**
 * The Kafka cluster a manifest names, reached from the host (`kafka.bootstrap_host`, its place in
 * sluice.yaml named in errors) as sluice's own principal (`kafka.security.admin`).
 */
export async function projectKafka(manifest: Manifest): Promise<KafkaPort> {
  return await realKafka(manifest.kafka.bootstrapHost, {
    origin: manifest.addressSources["kafka.bootstrap_host"],
    security: await resolveKafkaSecurity(manifest.kafkaSecurity, "admin"),
  });
}
