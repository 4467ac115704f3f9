/**
 * The fake Kafka Connect cluster: a {@link ConnectPort} over the world document (so it survives
 * a SIGKILL and is shared by every process that opens the world), and the test's hands on it
 * (a connector created or edited by hand, a failed task, the workers down).
 *
 * It keeps the real adapter's contract (`testing/ports/connect_contract.ts`): the same error
 * codes (`CONNECT_CONNECTOR_EXISTS`, `CONNECT_NOT_FOUND`, `CONNECT_REFUSED`,
 * `ENV_CONNECT_UNREACHABLE`), the stored configuration is exactly the submitted one plus
 * `name`, the cluster info names the world's Kafka cluster and the digest of the endpoint
 * asked. An armed `failCall` on `createConnector`, `updateConnectorConfig` or `deleteConnector`
 * gives `ENV_CONNECT_UNREACHABLE` (`fail`: nothing was sent) or `UNKNOWN_OUTCOME_CONNECT`
 * (`lose_response`: applied, the answer lost), as the real adapter would.
 *
 * @example
 * ```ts
 * import { createFakeWorld } from "./fake_world.ts";
 * const world = createFakeWorld({ seed: "connect-doc" });
 * const connect = world.connect();
 * await connect.createConnector("sluice-orders-orders_in", {
 *   config: { "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
 *     file: "/data/orders.jsonl", topic: "raw_orders" },
 *   secretKeys: [],
 * });
 * console.log(await connect.listConnectors());
 * ```
 * @module
 */
import { SluiceError } from "../../lib/errors.ts";
import { endpointDigest, normalizeEndpoint } from "../../lib/providers/connect/rest.ts";
import type {
  ConfigSubmission,
  ConnectClusterInfo,
  ConnectorInfo,
  ConnectorPlugin,
  ConnectorStatus,
  ConnectPort,
} from "../../lib/providers/connect/port.ts";
import type { FakeContext } from "./_port_call.ts";
import { portCall } from "./_port_call.ts";
import type { FakeConnectCluster, FakeConnector, World } from "./world.ts";
import { logMutation } from "./world.ts";

/** The Connect version the fake reports (the real worker's). */
export const FAKE_CONNECT_VERSION = "4.1.2";

/** The plugins of the harness's worker image. */
export const FAKE_CONNECT_PLUGINS: FakeConnectCluster["plugins"] = [
  {
    class: "org.apache.kafka.connect.file.FileStreamSinkConnector",
    type: "sink",
    version: FAKE_CONNECT_VERSION,
  },
  {
    class: "org.apache.kafka.connect.file.FileStreamSourceConnector",
    type: "source",
    version: FAKE_CONNECT_VERSION,
  },
];

/**
 * A new Connect cluster reached at these endpoints.
 *
 * @example
 * ```ts
 * import { fakeConnectCluster } from "./connect.ts";
 * fakeConnectCluster(["http://fake-connect:8083"]).connectors; // {}
 * ```
 */
export function fakeConnectCluster(endpoints: string[]): FakeConnectCluster {
  return {
    endpoints: endpoints.map(normalizeEndpoint),
    version: FAKE_CONNECT_VERSION,
    reachable: true,
    plugins: structuredClone(FAKE_CONNECT_PLUGINS),
    connectors: {},
  };
}

function cluster(w: World, base: string): FakeConnectCluster {
  const c = w.connect;
  if (!c || !c.reachable || !c.endpoints.includes(base)) {
    throw new SluiceError(
      "ENV_CONNECT_UNREACHABLE",
      `Kafka Connect at ${base} did not answer (fake: ${
        !c ? "no Connect cluster in this world" : !c.reachable ? "workers down" : "unknown endpoint"
      })`,
      { evidence: { endpoint_digest: endpointDigest(base) } },
    );
  }
  return c;
}

function tasksOf(config: Record<string, string>): FakeConnector["tasks"] {
  const n = Math.max(1, Number.parseInt(config["tasks.max"] ?? "1", 10) || 1);
  return Array.from({ length: n }, (_, id) => ({ id, state: "RUNNING" as const, trace: null }));
}

function info(c: FakeConnector): ConnectorInfo {
  return {
    name: c.name,
    config: { ...c.config },
    tasks: c.tasks.map((t) => t.id),
    type: c.type,
  };
}

/**
 * A {@link ConnectPort} for the fake cluster at `endpoint` (default: the seeded host address).
 *
 * @example
 * ```ts
 * import { createFakeWorld } from "./fake_world.ts";
 * const info = await createFakeWorld({ seed: "i" }).connect().clusterInfo();
 * console.log(info.version, info.kafkaClusterId);
 * ```
 */
export function fakeConnectPort(ctx: FakeContext, endpoint: string): ConnectPort {
  const base = normalizeEndpoint(endpoint);
  const digest = endpointDigest(base);
  const injected = (name: string) => (effect: "fail" | "lose_response", message: string) =>
    effect === "fail"
      ? new SluiceError(
        "ENV_CONNECT_UNREACHABLE",
        `Kafka Connect at ${base} did not answer (fake: ${message}); nothing was sent`,
        { evidence: { connector: name, endpoint_digest: digest } },
      )
      : new SluiceError(
        "UNKNOWN_OUTCOME_CONNECT",
        `the response about connector ${name} from Kafka Connect at ${base} was lost (fake: ${message}); it may or may not have been applied: observe the connector`,
        { evidence: { connector: name, endpoint_digest: digest } },
      );
  const read = <T>(op: string, key: string, fn: (c: FakeConnectCluster) => T) =>
    Promise.resolve().then(() =>
      portCall(ctx, "connect", op, key, false, (w) => fn(cluster(w, base)))
    );
  const notFound = (name: string, method: string) =>
    new SluiceError(
      "CONNECT_NOT_FOUND",
      `connector ${name} does not exist on Kafka Connect at ${base} (${method})`,
      { evidence: { connector: name, endpoint_digest: digest, method } },
    );
  return {
    clusterInfo: () =>
      Promise.resolve().then(() =>
        portCall(ctx, "connect", "clusterInfo", base, false, (w): ConnectClusterInfo => {
          const c = cluster(w, base);
          return {
            version: c.version,
            commit: "fake",
            kafkaClusterId: w.kafka.cluster_id,
            endpointDigest: digest,
          };
        })
      ),
    plugins: () => read("plugins", base, (c): ConnectorPlugin[] => structuredClone(c.plugins)),
    listConnectors: () => read("listConnectors", base, (c) => Object.keys(c.connectors).sort()),
    connectorConfig: (name) =>
      read(
        "connectorConfig",
        name,
        (c) => c.connectors[name] ? { ...c.connectors[name].config } : null,
      ),
    connectorStatus: (name) =>
      read("connectorStatus", name, (c): ConnectorStatus | null => {
        const x = c.connectors[name];
        if (!x) return null;
        const failed = x.tasks.some((t) => t.state === "FAILED");
        return {
          name,
          type: x.type,
          connector: { state: x.state, workerId: "fake-connect:8083", trace: null },
          tasks: x.tasks.map((t) => ({
            id: t.id,
            state: t.state,
            workerId: "fake-connect:8083",
            trace: failed ? t.trace : null,
          })),
        };
      }),
    createConnector: (name: string, s: ConfigSubmission) =>
      Promise.resolve().then(() =>
        portCall(ctx, "connect", "createConnector", name, true, (w, now) => {
          const c = cluster(w, base);
          if (c.connectors[name]) {
            throw new SluiceError(
              "CONNECT_CONNECTOR_EXISTS",
              `Kafka Connect at ${base} refused POST /connectors: Connector ${name} already exists`,
              { evidence: { status: 409, endpoint_digest: digest } },
            );
          }
          const plugin = c.plugins.find((p) => p.class === s.config["connector.class"]);
          if (!plugin) {
            throw new SluiceError(
              "CONNECT_REFUSED",
              `Kafka Connect at ${base} refused POST /connectors (400): Failed to find any class that implements Connector and which name matches ${
                s.config["connector.class"]
              }`,
              { evidence: { status: 400, endpoint_digest: digest } },
            );
          }
          if (s.config.name !== undefined && s.config.name !== name) {
            throw new SluiceError(
              "CONNECT_REFUSED",
              `Kafka Connect at ${base} refused POST /connectors (400): Connector name configuration (${s.config.name}) doesn't match connector name in the URL (${name})`,
              { evidence: { status: 400, endpoint_digest: digest } },
            );
          }
          const config = { ...s.config, name };
          c.connectors[name] = {
            name,
            config,
            type: plugin.type,
            state: "RUNNING",
            tasks: tasksOf(config),
            created_at: new Date(now).toISOString(),
          };
          return info(c.connectors[name]);
        }, injected(name))
      ),
    updateConnectorConfig: (name: string, s: ConfigSubmission) =>
      Promise.resolve().then(() =>
        portCall(ctx, "connect", "updateConnectorConfig", name, true, (w) => {
          const c = cluster(w, base);
          const x = c.connectors[name];
          // the real adapter reads first: an update never creates a connector
          if (!x) throw notFound(name, "PUT config");
          const plugin = c.plugins.find((p) => p.class === s.config["connector.class"]);
          if (!plugin) {
            throw new SluiceError(
              "CONNECT_REFUSED",
              `Kafka Connect at ${base} refused PUT /connectors/${name}/config (400): unknown connector class`,
              { evidence: { status: 400, endpoint_digest: digest } },
            );
          }
          x.config = { ...s.config, name };
          x.type = plugin.type;
          x.state = "RUNNING";
          x.tasks = tasksOf(x.config);
          return info(x);
        }, injected(name))
      ),
    deleteConnector: (name: string) =>
      Promise.resolve().then(() =>
        portCall(ctx, "connect", "deleteConnector", name, true, (w) => {
          const c = cluster(w, base);
          if (!c.connectors[name]) throw notFound(name, "DELETE");
          delete c.connectors[name];
        }, injected(name))
      ),
  };
}

/** The test's hands on the fake Connect cluster: what an operator does outside sluice. */
export interface FakeConnectControl {
  /** Create a connector by hand (as `curl -X POST` would), with all tasks RUNNING. */
  createByHand(name: string, config: Record<string, string>): void;
  /** Change a connector's configuration by hand (`undefined` removes a key). */
  editByHand(name: string, patch: Record<string, string | undefined>): void;
  /** Delete a connector by hand. */
  deleteByHand(name: string): void;
  /** Make a connector's tasks FAILED with this trace. */
  failTasks(name: string, trace: string): void;
  /** Take every worker down (true) or bring them back. */
  setReachable(reachable: boolean): void;
  /** The connectors as the cluster holds them (a copy). */
  connectors(): Record<string, FakeConnector>;
}

/**
 * The hands on the world's Connect cluster; each is one durable world transaction logged with
 * `by: "control"`.
 *
 * @example
 * ```ts
 * import { createFakeWorld } from "./fake_world.ts";
 * const world = createFakeWorld({ seed: "hands" });
 * world.connectControl.createByHand("sluice-orders-orders_out", {
 *   "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", topics: "t",
 * });
 * ```
 */
export function fakeConnectControl(ctx: FakeContext): FakeConnectControl {
  const act = (op: string, key: string, fn: (c: FakeConnectCluster, now: number) => void) =>
    ctx.store.transact((w) => {
      if (!w.connect) throw new Error("this fake world has no Connect cluster");
      const now = ctx.clock.now();
      fn(w.connect, now);
      logMutation(w, now, "control", op, key);
    });
  const existing = (c: FakeConnectCluster, name: string) => {
    const x = c.connectors[name];
    if (!x) throw new Error(`no connector ${name} in the fake Connect cluster`);
    return x;
  };
  return {
    createByHand(name, config) {
      act("connect.createByHand", name, (c, now) => {
        if (c.connectors[name]) throw new Error(`connector ${name} exists`);
        const plugin = c.plugins.find((p) => p.class === config["connector.class"]);
        const full = { ...config, name };
        c.connectors[name] = {
          name,
          config: full,
          type: plugin?.type ?? "source",
          state: "RUNNING",
          tasks: tasksOf(full),
          created_at: new Date(now).toISOString(),
        };
      });
    },
    editByHand(name, patch) {
      act("connect.editByHand", name, (c) => {
        const x = existing(c, name);
        for (const [k, v] of Object.entries(patch)) {
          if (v === undefined) delete x.config[k];
          else x.config[k] = v;
        }
      });
    },
    deleteByHand(name) {
      act("connect.deleteByHand", name, (c) => {
        existing(c, name);
        delete c.connectors[name];
      });
    },
    failTasks(name, trace) {
      act("connect.failTasks", name, (c) => {
        const x = existing(c, name);
        x.tasks = x.tasks.map((t) => ({ ...t, state: "FAILED", trace }));
      });
    },
    setReachable(reachable) {
      act("connect.setReachable", String(reachable), (c) => {
        c.reachable = reachable;
      });
    },
    connectors: () => structuredClone(ctx.store.read().connect?.connectors ?? {}),
  };
}
