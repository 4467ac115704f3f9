/**
 * Counting wrappers over the real adapters, for tests that prove what a command sends and for
 * the benchmarks' round-trip counts: every method call through a port (a Proxy), every HTTP
 * request a dockerode client sends to the daemon (by route), every Kafka request any
 * `@platformatic/kafka` client of this process sends (by API, through the client's diagnostics
 * channel). Each side classifies what it saw as reads or mutations, so "nothing was changed"
 * is checked on the wire as well as at the port.
 *
 * @example
 * ```ts
 * import { countingDocker, dockerMutations } from "./counting.ts";
 * const dc = countingDocker();
 * await dc.client.info();
 * console.log(dockerMutations(dc.counts)); // []
 * ```
 * @module
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import Docker from "dockerode";

const KAFKA_API: Record<number, string> = {
  0: "Produce",
  1: "Fetch",
  2: "ListOffsets",
  3: "Metadata",
  8: "OffsetCommit",
  9: "OffsetFetch",
  10: "FindCoordinator",
  11: "JoinGroup",
  12: "Heartbeat",
  13: "LeaveGroup",
  14: "SyncGroup",
  15: "DescribeGroups",
  16: "ListGroups",
  18: "ApiVersions",
  19: "CreateTopics",
  20: "DeleteTopics",
  21: "DeleteRecords",
  22: "InitProducerId",
  32: "DescribeConfigs",
  33: "AlterConfigs",
  42: "DeleteGroups",
  47: "OffsetDelete",
  53: "AlterPartitionReassignments",
  60: "DescribeCluster",
};

/** The Kafka APIs that only read (everything else counts as a mutation). */
export const KAFKA_READ_APIS: ReadonlySet<string> = new Set([
  "ApiVersions",
  "Metadata",
  "FindCoordinator",
  "DescribeGroups",
  "ListGroups",
  "OffsetFetch",
  "ListOffsets",
  "Fetch",
  "DescribeCluster",
  "DescribeConfigs",
]);

/** The Docker port's methods that change something. */
export const DOCKER_PORT_MUTATIONS: ReadonlySet<string> = new Set([
  "createContainer",
  "startContainer",
  "signalTerm",
  "removeContainer",
  "createVolume",
  "writeContainerFile",
  "discardCreated",
]);

/** The Kafka port's methods that change something. */
export const KAFKA_PORT_MUTATIONS: ReadonlySet<string> = new Set([
  "createTopic",
  "setGroupOffsets",
]);

function dockerRoute(method: string, path: string): string {
  const p = path.replace(/^\/v[\d.]+/, "").split("?")[0];
  if (/^\/containers\/json/.test(p)) return `${method} /containers/json`;
  if (/^\/containers\/create/.test(p)) return `${method} /containers/create`;
  if (/^\/containers\/[^/]+\/json/.test(p)) return `${method} /containers/{id}/json`;
  if (/^\/containers\/[^/]+\/archive/.test(p)) return `${method} /containers/{id}/archive`;
  if (/^\/containers\/[^/]+\/(wait|logs|start|kill|stop)$/.test(p)) {
    return `${method} /containers/{id}/${p.split("/").pop()}`;
  }
  if (/^\/containers\/[^/]+$/.test(p)) return `${method} /containers/{id}`;
  if (/^\/volumes\/[^/]+$/.test(p)) return `${method} /volumes/{name}`;
  if (/^\/images\/[^/]+\/json/.test(p)) return `${method} /images/{id}/json`;
  if (/^\/networks\/[^/]+$/.test(p)) return `${method} /networks/{name}`;
  return `${method} ${p}`;
}

/** A dockerode client whose every HTTP request to the daemon is counted by route. */
export function countingDocker(): { client: Docker; counts: Map<string, number>; reset(): void } {
  const client = new Docker();
  const counts = new Map<string, number>();
  // deno-lint-ignore no-explicit-any -- docker-modem has no types for dial
  const modem = (client as any).modem;
  const dial = modem.dial.bind(modem);
  // deno-lint-ignore no-explicit-any -- docker-modem has no types for dial
  modem.dial = (options: any, callback: any) => {
    const k = dockerRoute(options.method ?? "GET", options.path ?? "");
    counts.set(k, (counts.get(k) ?? 0) + 1);
    return dial(options, callback);
  };
  return { client, counts, reset: () => counts.clear() };
}

/**
 * The Docker requests that may change something: any method but GET, except waiting for a
 * container to stop (`POST /containers/{id}/wait` only blocks).
 */
export function dockerMutations(counts: Map<string, number>): string[] {
  return [...counts.keys()].filter((k) =>
    !k.startsWith("GET ") && k !== "POST /containers/{id}/wait"
  );
}

/** Count every Kafka request sent by any `@platformatic/kafka` client in this process. */
export function countingKafka(): { counts: Map<string, number>; reset(): void; stop(): void } {
  const counts = new Map<string, number>();
  const onStart = (msg: unknown) => {
    const apiKey = (msg as { apiKey?: number }).apiKey;
    if (apiKey === undefined) return;
    const k = KAFKA_API[apiKey] ?? `api${apiKey}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  };
  const channel = "tracing:plt:kafka:connections:api:start";
  subscribe(channel, onStart);
  return { counts, reset: () => counts.clear(), stop: () => unsubscribe(channel, onStart) };
}

/** The Kafka requests that are not reads. */
export function kafkaMutations(counts: Map<string, number>): string[] {
  return [...counts.keys()].filter((k) => !KAFKA_READ_APIS.has(k));
}

/** One call of a port method: from the call to the settlement of its promise (epoch ms). */
export interface PortSpan {
  method: string;
  start: number;
  end: number;
}

/**
 * A port wrapped so that each method call is counted and, when `ms` is given, the time spent in
 * each method is summed (from the call to the settlement of its promise); when `spans` is given,
 * each call's span is appended to it.
 */
export function countingPort<T extends object>(
  port: T,
  counts: Map<string, number>,
  ms?: Map<string, number>,
  spans?: PortSpan[],
): T {
  return new Proxy(port, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        const k = String(prop);
        counts.set(k, (counts.get(k) ?? 0) + 1);
        const t0 = performance.now();
        const r = v.apply(target, args);
        if ((ms || spans) && r instanceof Promise) {
          const add = () => {
            const t1 = performance.now();
            ms?.set(k, (ms.get(k) ?? 0) + t1 - t0);
            const epoch = performance.timeOrigin;
            spans?.push({ method: k, start: epoch + t0, end: epoch + t1 });
          };
          r.then(add, add);
        }
        return r;
      };
    },
  });
}

/** The sum of a count map. */
export const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
