/**
 * What the port contracts run against: the ports themselves plus the few things a test does
 * from outside sluice (produce, retention, delete a topic, an external consumer, SIGKILL).
 * The fake world and the real services each provide one {@link PortSubject}; the contracts
 * (docker_contract.ts, kafka_contract.ts) see nothing else, so a property holds for both or
 * the contract fails on one of them.
 *
 * @example
 * ```ts
 * import { registerContract } from "./subject.ts";
 * import { KAFKA_CONTRACT } from "./kafka_contract.ts";
 * // registerContract("kafka port (fake)", KAFKA_CONTRACT, () => fakeSubject());
 * ```
 * @module
 */
import type { DockerPort } from "../../lib/providers/docker/port.ts";
import type { KafkaPort } from "../../lib/providers/kafka/port.ts";

/** A record a contract produces. */
export interface SubjectRecord {
  partition: number;
  key: string;
  value: string;
}

/** The ports under test and the outside world's hands. */
export interface PortSubject {
  /** Which implementation this is (for messages only: the contract never branches on it). */
  kind: "fake" | "real";
  docker: DockerPort;
  kafka: KafkaPort;
  /** The runner image (`sha256:` ID) present on the daemon. */
  runnerImage: string;
  /** A network that exists; runners on it reach the broker at {@link bootstrapInternal}. */
  network: string;
  bootstrapInternal: string;
  /** A bootstrap address no runner can reach. */
  unreachableBootstrap: string;
  /** Labels to put on every container and volume a case creates (clean-up finds them). */
  labels: Record<string, string>;
  /** A host directory for plan files (bind-mounted into containers). */
  tempDir: string;
  /** A fresh name starting with this subject's prefix (containers, volumes, topics, groups). */
  unique(what: string): string;
  produce(topic: string, records: SubjectRecord[]): Promise<void>;
  /** The committed records of a topic (all partitions), once at least `expect` are there. */
  records(topic: string, expect: number): Promise<SubjectRecord[]>;
  /** Retention: delete a partition's records below `before`. */
  deleteRecords(topic: string, partition: number, before: bigint): Promise<void>;
  deleteTopic(topic: string): Promise<void>;
  /** An external consumer joins `groupId` (subscribed to `topic`) until `leave`. */
  joinGroup(groupId: string, topic: string): Promise<{ leave(): Promise<void> }>;
  /** SIGKILL a container's process (exit 137). */
  killContainer(id: string): Promise<void>;
  /**
   * A file of a volume (path relative to the volume's root) as the outside world reads it,
   * whether or not a container mounts it; null when the volume or the file is absent.
   */
  readVolumeFile(volume: string, relPath: string): Promise<string | null>;
  /** Write a file of a volume from outside sluice (what an operator or another tool could do). */
  writeVolumeFile(volume: string, relPath: string, text: string): Promise<void>;
  /** Remove a volume from outside sluice (refused while a container uses it, as Docker does). */
  removeVolume(volume: string): Promise<void>;
  /** How long an eventual property may take here (real services are slow, fakes are not). */
  eventuallyMs: number;
  /** Remove what the cases created and release clients. */
  dispose(): Promise<void>;
}

/** One behaviour the driver relies on, checked against a subject. */
export interface ContractCase {
  name: string;
  run(s: PortSubject): Promise<void>;
}

/**
 * Register one `Deno.test` per case, each on a fresh subject that is disposed afterwards.
 *
 * @example
 * ```ts
 * import { registerContract } from "./subject.ts";
 * // registerContract("docker port (real)", DOCKER_CONTRACT, realSubject, { sanitizeOps: false });
 * ```
 */
export function registerContract(
  prefix: string,
  cases: readonly ContractCase[],
  subject: () => Promise<PortSubject>,
  options: { sanitizeOps?: boolean; sanitizeResources?: boolean; ignore?: boolean } = {},
): void {
  for (const c of cases) {
    Deno.test({
      name: `${prefix}: ${c.name}`,
      ...options,
      fn: async () => {
        const s = await subject();
        try {
          await c.run(s);
        } finally {
          await s.dispose();
        }
      },
    });
  }
}

/**
 * Poll `fn` until it returns a value other than undefined, within the subject's bound; the
 * error names what was awaited and the last value seen.
 *
 * @example
 * ```ts
 * import { eventually } from "./subject.ts";
 * // const c = await eventually(s, "exit", async () => { ... });
 * ```
 */
export async function eventually<T>(
  s: Pick<PortSubject, "eventuallyMs">,
  what: string,
  fn: () => Promise<T | undefined>,
): Promise<T> {
  const end = Date.now() + s.eventuallyMs;
  let last: unknown = undefined;
  let delay = 10;
  while (true) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
      last = undefined;
    } catch (error) {
      last = error;
    }
    if (Date.now() > end) {
      throw new Error(
        `timed out after ${s.eventuallyMs} ms waiting for ${what}${last ? `: ${last}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 250);
  }
}
