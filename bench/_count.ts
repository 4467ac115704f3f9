/**
 * Round-trip counters for the benchmarks: every HTTP request a dockerode client sends to the
 * daemon (by route), every Kafka request any `@platformatic/kafka` client of this process sends
 * (by API, through the client's diagnostics channel), and calls through a port (a Proxy).
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
  15: "DescribeGroups",
  16: "ListGroups",
  18: "ApiVersions",
  19: "CreateTopics",
  32: "DescribeConfigs",
  42: "DeleteGroups",
  53: "AlterPartitionReassignments",
  60: "DescribeCluster",
};

function dockerRoute(method: string, path: string): string {
  const p = path.replace(/^\/v[\d.]+/, "").split("?")[0];
  if (/^\/containers\/json/.test(p)) return `${method} /containers/json`;
  if (/^\/containers\/create/.test(p)) return `${method} /containers/create`;
  if (/^\/containers\/[^/]+\/json/.test(p)) return `${method} /containers/{id}/json`;
  if (/^\/containers\/[^/]+\/archive/.test(p)) return `${method} /containers/{id}/archive`;
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
  // deno-lint-ignore no-explicit-any
  const modem = (client as any).modem;
  const dial = modem.dial.bind(modem);
  // deno-lint-ignore no-explicit-any
  modem.dial = (options: any, callback: any) => {
    const k = dockerRoute(options.method ?? "GET", options.path ?? "");
    counts.set(k, (counts.get(k) ?? 0) + 1);
    return dial(options, callback);
  };
  return { client, counts, reset: () => counts.clear() };
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

/**
 * A port wrapped so that each method call is counted and, when `ms` is given, the time spent in
 * each method is summed (from the call to the settlement of its promise).
 */
export function countingPort<T extends object>(
  port: T,
  counts: Map<string, number>,
  ms?: Map<string, number>,
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
        if (ms && r instanceof Promise) {
          const add = () => ms.set(k, (ms.get(k) ?? 0) + performance.now() - t0);
          r.then(add, add);
        }
        return r;
      };
    },
  });
}

export const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
