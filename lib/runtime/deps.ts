/**
 * What the journeys take from outside besides the project: the ports (Docker, Kafka, the state
 * store), a clock, a UUID source and a logger. Production code uses the real adapters, the system clock
 * and `crypto.randomUUID`; tests and the crash sweep pass fakes. Nothing in `lib/runtime` reads
 * the time or makes an ID any other way, so a journey run on fakes is reproducible.
 *
 * @example
 * ```ts
 * import { isoNow, type RuntimeDeps } from "./deps.ts";
 * let t = Date.parse("2026-12-01T00:00:00Z");
 * const deps: RuntimeDeps = {
 *   clock: { now: () => t, sleep: (ms) => Promise.resolve(void (t += ms)) },
 *   uuids: { uuid: () => "00000000-0000-4000-8000-000000000001" },
 * };
 * console.log(isoNow(deps.clock!)); // 2026-12-01T00:00:00.000Z
 * ```
 * @module
 */
import type { DockerPort } from "../providers/docker/port.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import type { ConnectPort } from "../providers/connect/port.ts";
import type { StateStore } from "../state/store.ts";

/** Milliseconds since the epoch, and a way to wait (a fake clock may advance instead). */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Wait `ms` (default: a real timer). A fake clock advances its time and returns. */
  sleep?(ms: number): Promise<void>;
}

/** Where operation, incident, authorization and volume-instance UUIDs come from. */
export interface UuidSource {
  /** A fresh UUID. */
  uuid(): string;
}

/** Injectable dependencies of every journey; each absent one is the real thing. */
export interface RuntimeDeps {
  /**
   * The Docker Engine (default: the daemon at `DOCKER_HOST` or the default socket).
   * @internal a port or test hook: its interface is not part of the versioned SDK (leave it to
   * the real adapter, or give a test double)
   */
  docker?: DockerPort;
  /**
   * The Docker Engine of a `docker.endpoints` daemon, by name (default: the real adapter on its
   * address). `status` reads every endpoint through it, the first one included (the daemon
   * single-instance models run on, which the journeys reach as `docker`).
   * @internal a port or test hook: its interface is not part of the versioned SDK (leave it to
   * the real adapter, or give a test double)
   */
  dockerEndpoint?: (name: string) => DockerPort;
  /**
   * The Kafka cluster (default: a client for the manifest's `kafka.bootstrap_host`).
   * @internal a port or test hook: its interface is not part of the versioned SDK (leave it to
   * the real adapter, or give a test double)
   */
  kafka?: KafkaPort;
  /**
   * The Connect port of a declared cluster (default: the REST adapter on its `rest_host`).
   * @internal a port or test hook: its interface is not part of the versioned SDK (leave it to
   * the real adapter, or give a test double)
   */
  connect?: (cluster: { alias: string; restHost: string }) => ConnectPort;
  /**
   * A state store to use instead of the one the manifest names (the caller closes it).
   * @internal a port or test hook: its interface is not part of the versioned SDK (leave it to
   * the real adapter, or give a test double)
   */
  store?: StateStore;
  /**
   * The clock (default: the system clock).
   * @internal a port or test hook: its interface is not part of the versioned SDK (leave it to
   * the real adapter, or give a test double)
   */
  clock?: Clock;
  /**
   * The UUID source (default: `crypto.randomUUID`).
   * @internal a port or test hook: its interface is not part of the versioned SDK (leave it to
   * the real adapter, or give a test double)
   */
  uuids?: UuidSource;
  /**
   * How the runner principal's variables are read (default: the process environment).
   * @internal a test hook: a test passes its values explicitly instead of setting process-wide
   * variables another test file may clear
   */
  env?: (name: string) => string | undefined;
  /** Warnings that do not change a result (default: dropped; lib never prints). */
  logger?: Logger;
  /**
   * Cancels the journeys run with these dependencies at their next durable boundary or inside
   * a bounded wait (`CANCELLED`, exit 8): the operation stays pending and continues as after any
   * interruption.
   */
  signal?: AbortSignal;
}

/**
 * The system clock.
 *
 * @example
 * ```ts
 * import { SYSTEM_CLOCK } from "./deps.ts";
 * console.log(SYSTEM_CLOCK.now() > 0);
 * ```
 */
export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/**
 * Random (v4) UUIDs.
 *
 * @example
 * ```ts
 * import { RANDOM_UUIDS } from "./deps.ts";
 * console.log(RANDOM_UUIDS.uuid().length); // 36
 * ```
 */
export const RANDOM_UUIDS: UuidSource = { uuid: () => crypto.randomUUID() };

/**
 * The clock's time as an RFC 3339 string (what journals and intents record).
 *
 * @example
 * ```ts
 * import { isoNow, SYSTEM_CLOCK } from "./deps.ts";
 * console.log(isoNow(SYSTEM_CLOCK));
 * ```
 */
export function isoNow(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

/**
 * Wait on the clock (a real timer unless the clock has its own `sleep`).
 *
 * @example
 * ```ts
 * import { sleep, SYSTEM_CLOCK } from "./deps.ts";
 * await sleep(SYSTEM_CLOCK, 1);
 * ```
 */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return clock.sleep ? clock.sleep(ms) : new Promise((r) => setTimeout(r, ms));
}

/** Where warnings go that do not change a result. */
export interface Logger {
  /** A warning: something failed without changing the result. */
  warn(message: string): void;
}

/**
 * The logger used when none is given: it drops warnings (lib never prints).
 *
 * @example
 * ```ts
 * import { SILENT_LOGGER } from "./deps.ts";
 * SILENT_LOGGER.warn("nobody hears this");
 * ```
 */
export const SILENT_LOGGER: Logger = { warn: () => {} };
