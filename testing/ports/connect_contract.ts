/**
 * The Kafka Connect port contract: the behaviours of a Connect cluster that sluice's connector
 * journey relies on, as one list of cases that the fake cluster (`testing/fakes/connect.ts`)
 * and the REST adapter on the real worker (`lib/providers/connect/rest.ts`) must both pass.
 *
 * What it pins down: the cluster's identity (the worker group's Kafka cluster ID, the digest of
 * the endpoint asked); the stored configuration is exactly the submitted one plus `name`, and is
 * what a read returns (so a keyed fingerprint of a read equals the submitted one); exact reads of
 * an absent connector are null; create never replaces, update never creates, delete removes
 * only the named connector; refusals change nothing; an endpoint where nothing answers is
 * `ENV_CONNECT_UNREACHABLE`.
 *
 * @example
 * ```ts
 * import { CONNECT_CONTRACT, registerConnectContract } from "./connect_contract.ts";
 * // registerConnectContract("connect port (fake)", CONNECT_CONTRACT, fakeConnectSubject);
 * ```
 * @module
 */
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import type { ConnectorStatus, ConnectPort } from "../../lib/providers/connect/port.ts";

/** What the Connect contract runs against. */
export interface ConnectSubject {
  /** For messages only: the contract never branches on it. */
  kind: "fake" | "real";
  connect: ConnectPort;
  /** A port for an endpoint where no worker answers. */
  unreachable: ConnectPort;
  /** The Kafka cluster the worker group stores its state on. */
  kafkaClusterId: string;
  /** A fresh name with this subject's prefix. */
  unique(what: string): string;
  /** A valid FileStream source configuration writing a fresh, existing topic. */
  sourceConfig(): Promise<Record<string, string>>;
  /** A valid FileStream sink configuration reading a fresh, existing topic. */
  sinkConfig(): Promise<Record<string, string>>;
  /** How long an eventual property may take here. */
  eventuallyMs: number;
  /** Remove what the cases created. */
  dispose(): Promise<void>;
}

/** One behaviour, checked against a subject. */
export interface ConnectContractCase {
  name: string;
  run(s: ConnectSubject): Promise<void>;
}

const SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector";
const SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector";

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "no error";
  } catch (e) {
    if (e instanceof SluiceError) return e.code;
    throw e;
  }
}

async function eventuallyStatus(
  s: ConnectSubject,
  name: string,
  ok: (x: ConnectorStatus | null) => boolean,
): Promise<ConnectorStatus | null> {
  const end = Date.now() + s.eventuallyMs;
  let last: ConnectorStatus | null = null;
  while (Date.now() <= end) {
    last = await s.connect.connectorStatus(name);
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${s.kind}: status of ${name} never matched; last ${JSON.stringify(last)}`);
}

const running = (x: ConnectorStatus | null) =>
  x?.connector.state === "RUNNING" && x.tasks.length > 0 &&
  x.tasks.every((t) => t.state === "RUNNING");

/** The cases, in the order they are registered. */
export const CONNECT_CONTRACT: readonly ConnectContractCase[] = [
  {
    name: "cluster info: the group's Kafka cluster ID and the endpoint's digest, stable",
    async run(s) {
      const a = await s.connect.clusterInfo();
      const b = await s.connect.clusterInfo();
      assert.equal(a.kafkaClusterId, s.kafkaClusterId);
      assert.match(a.endpointDigest, /^[0-9a-f]{64}$/);
      assert.deepEqual(b, a);
      assert.equal(a.version, "4.1.2");
      const plugins = (await s.connect.plugins()).map((p) => `${p.type}:${p.class}`);
      assert.ok(plugins.includes(`source:${SOURCE}`) && plugins.includes(`sink:${SINK}`));
    },
  },
  {
    name:
      "create stores exactly the submission plus name; it is listed and its tasks run; reads are exact",
    async run(s) {
      const name = s.unique("src");
      const config = await s.sourceConfig();
      assert.equal(await s.connect.connectorConfig(name), null);
      assert.equal(await s.connect.connectorStatus(name), null);
      const created = await s.connect.createConnector(name, {
        config: { ...config, name },
        secretKeys: [],
      });
      try {
        assert.equal(created.name, name);
        assert.equal(created.type, "source");
        assert.deepEqual(await s.connect.connectorConfig(name), { ...config, name });
        const list = await s.connect.listConnectors();
        assert.ok(list.includes(name));
        assert.deepEqual(list, [...list].sort());
        const status = await eventuallyStatus(s, name, running);
        assert.equal(status?.type, "source");
        assert.equal(status?.tasks[0].id, 0);
        // an exact read never matches by prefix
        assert.equal(await s.connect.connectorConfig(name.slice(0, -1)), null);
      } finally {
        await s.connect.deleteConnector(name).catch(() => {});
      }
    },
  },
  {
    name: "create never replaces: an existing name is CONNECT_CONNECTOR_EXISTS, nothing changes",
    async run(s) {
      const name = s.unique("dup");
      const config = await s.sinkConfig();
      await s.connect.createConnector(name, { config, secretKeys: [] });
      try {
        const other = { ...config, "tasks.max": "2" };
        assert.equal(
          await code(s.connect.createConnector(name, { config: other, secretKeys: [] })),
          "CONNECT_CONNECTOR_EXISTS",
        );
        assert.deepEqual(await s.connect.connectorConfig(name), { ...config, name });
      } finally {
        await s.connect.deleteConnector(name).catch(() => {});
      }
    },
  },
  {
    name: "a refused create (unknown class) creates nothing",
    async run(s) {
      const name = s.unique("bad");
      const config = {
        ...await s.sourceConfig(),
        "connector.class": "com.example.NoSuchConnector",
      };
      assert.equal(
        await code(s.connect.createConnector(name, { config, secretKeys: [] })),
        "CONNECT_REFUSED",
      );
      assert.equal(await s.connect.connectorConfig(name), null);
      assert.equal((await s.connect.listConnectors()).includes(name), false);
    },
  },
  {
    name: "update replaces the whole configuration; update of an absent connector creates nothing",
    async run(s) {
      const name = s.unique("upd");
      const config = { ...await s.sinkConfig(), "tasks.max": "1" };
      await s.connect.createConnector(name, { config, secretKeys: [] });
      try {
        const { "tasks.max": _dropped, ...rest } = config;
        const next = { ...rest, "errors.log.enable": "true" };
        const updated = await s.connect.updateConnectorConfig(name, {
          config: next,
          secretKeys: [],
        });
        assert.equal(updated.name, name);
        assert.deepEqual(await s.connect.connectorConfig(name), { ...next, name });
        await eventuallyStatus(s, name, running);
      } finally {
        await s.connect.deleteConnector(name).catch(() => {});
      }
      const absent = s.unique("absent");
      assert.equal(
        await code(s.connect.updateConnectorConfig(absent, { config, secretKeys: [] })),
        "CONNECT_NOT_FOUND",
      );
      assert.equal(await s.connect.connectorConfig(absent), null);
    },
  },
  {
    name: "delete removes only the named connector; deleting it again is CONNECT_NOT_FOUND",
    async run(s) {
      const [a, b] = [s.unique("del-a"), s.unique("del-b")];
      await s.connect.createConnector(a, { config: await s.sourceConfig(), secretKeys: [] });
      await s.connect.createConnector(b, { config: await s.sourceConfig(), secretKeys: [] });
      try {
        await s.connect.deleteConnector(a);
        assert.equal(await s.connect.connectorConfig(a), null);
        assert.equal((await s.connect.listConnectors()).includes(a), false);
        await eventuallyStatus(s, a, (x) => x === null);
        assert.notEqual(await s.connect.connectorConfig(b), null, "the other connector stays");
        assert.equal(await code(s.connect.deleteConnector(a)), "CONNECT_NOT_FOUND");
      } finally {
        await s.connect.deleteConnector(b).catch(() => {});
      }
    },
  },
  {
    name: "where no worker answers, reads and mutations are ENV_CONNECT_UNREACHABLE",
    async run(s) {
      assert.equal(await code(s.unreachable.clusterInfo()), "ENV_CONNECT_UNREACHABLE");
      assert.equal(await code(s.unreachable.connectorConfig("x")), "ENV_CONNECT_UNREACHABLE");
      assert.equal(
        await code(s.unreachable.deleteConnector(s.unique("nothing"))),
        "ENV_CONNECT_UNREACHABLE",
      );
    },
  },
];

/**
 * Register one `Deno.test` per case, each on a fresh subject that is disposed afterwards.
 *
 * @example
 * ```ts
 * import { CONNECT_CONTRACT, registerConnectContract } from "./connect_contract.ts";
 * // registerConnectContract("connect port contract (real)", CONNECT_CONTRACT, realSubject);
 * ```
 */
export function registerConnectContract(
  prefix: string,
  cases: readonly ConnectContractCase[],
  subject: () => Promise<ConnectSubject>,
  options: { sanitizeOps?: boolean; sanitizeResources?: boolean } = {},
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
