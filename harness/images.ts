/**
 * Names of the locally built images, read from `scripts/versions.sh` (the single place where
 * pinned versions live) so the harness and the bootstrap script cannot disagree.
 * @module
 */
import { pinnedVersions } from "../lib/version.ts";
const versions = pinnedVersions();

/** The broker image built by scripts/bootstrap.sh. */
export const KAFKA_IMAGE: string = versions.KAFKA_IMAGE;
/** The Debian + Java 17 base image built by scripts/bootstrap.sh. */
export const BASE_IMAGE: string = versions.BASE_IMAGE;
/** The Apache Kafka version of the broker and of the runner's kafka-streams. */
export const KAFKA_VERSION: string = versions.KAFKA_VERSION;
/** The Kafka Connect worker image built by scripts/bootstrap.sh (same Kafka version). */
export const CONNECT_IMAGE: string = versions.CONNECT_IMAGE;
