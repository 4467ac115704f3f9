/**
 * Names of the locally built images, read from `scripts/versions.sh` (the single place where
 * pinned versions live) so the harness and the bootstrap script cannot disagree.
 * @module
 */
const versionsFile = new URL("../scripts/versions.sh", import.meta.url);

function readVersions(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of Deno.readTextFileSync(versionsFile).split("\n")) {
    const m = /^([A-Z_]+)=([^$\s]+)\s*$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

const versions = readVersions();

/** The broker image built by scripts/bootstrap.sh. */
export const KAFKA_IMAGE: string = versions.KAFKA_IMAGE;
/** The Debian + Java 17 base image built by scripts/bootstrap.sh. */
export const BASE_IMAGE: string = versions.BASE_IMAGE;
/** The Apache Kafka version of the broker and of the runner's kafka-streams. */
export const KAFKA_VERSION: string = versions.KAFKA_VERSION;
/** The Kafka Connect worker image built by scripts/bootstrap.sh (same Kafka version). */
export const CONNECT_IMAGE: string = versions.CONNECT_IMAGE;
