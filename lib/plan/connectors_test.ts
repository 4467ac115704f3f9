import assert from "node:assert/strict";
import { type ConnectorArtifact, validateConnectorArtifact } from "../artifact/connector.ts";
import { sha256Hex } from "../artifact/canonical.ts";
import type { OwnedConnector } from "../state/ownership.ts";
import type { ConnectorObservation } from "../validation/connector_observation.ts";
import { type DesiredConnector, ownedAfter, planConnectors } from "./connectors.ts";

const ID = { kafka_cluster_id: "CCCCCCCCCCCCCCCCCCCCCC", endpoint_digest: sha256Hex("ep") };
const NAME = "sluice-orders-orders_in";

function artifact(file = "/data/in.jsonl"): ConnectorArtifact {
  return validateConnectorArtifact({
    format: "sluice.connector-artifact",
    version: 1,
    project: "orders",
    environment: null,
    connector: "orders_in",
    name: NAME,
    cluster: "main",
    kind: "source",
    topics: ["raw_orders"],
    config: {
      "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
      file,
      name: NAME,
      topic: "raw_orders",
    },
    secrets: {},
    secret_key_id: null,
    ownership: { managed_by: "sluice", project: "orders", environment: null },
  });
}

function desired(file?: string): DesiredConnector {
  const a = artifact(file);
  return {
    artifact: a,
    sha256: sha256Hex(JSON.stringify(a)),
    config: { fingerprint: sha256Hex(`fp:${file}`), comparable: a.config, secretKeys: [] },
  };
}

function owned(d: DesiredConnector, identity = ID): OwnedConnector {
  return {
    connector: "orders_in",
    name: NAME,
    cluster: "main",
    cluster_identity: identity,
    kind: "source",
    artifact_sha256: d.sha256,
    config_fingerprint: d.config.fingerprint,
    secret_keys: [],
    secret_key_id: null,
  };
}

function observed(fp: string | null, identity = ID): ConnectorObservation {
  return {
    connector: "orders_in",
    name: NAME,
    cluster: "main",
    identity,
    exists: fp !== null,
    shown: fp === null ? null : artifact().config,
    comparable: fp === null ? null : artifact().config,
    fingerprints: { desired: fp, owned: fp },
    status: fp === null
      ? null
      : { type: "source", state: "RUNNING", tasks: [{ id: 0, state: "RUNNING" }] },
  };
}

const obs = (...c: ConnectorObservation[]) => ({ observedAt: "t", clusters: {}, connectors: c });
const codes = (r: ReturnType<typeof planConnectors>) => r.blockers.map((b) => b.code);

Deno.test("a create binds the observed cluster identity, the artifact and the desired fingerprint", () => {
  const d = desired();
  const r = planConnectors({
    desired: [d],
    removals: [],
    owned: [],
    observation: obs(observed(null)),
  });
  assert.deepEqual(r.actions, [{
    type: "create_connector",
    connector: "orders_in",
    name: NAME,
    cluster: "main",
    identity: ID,
    artifact_sha256: d.sha256,
    config_fingerprint: d.config.fingerprint,
  }]);
  assert.equal(r.section.items[0].change, "create");
});

Deno.test("the owned connector on another cluster identity is blocked, whatever else holds", () => {
  const d = desired();
  const other = { ...ID, kafka_cluster_id: "DDDDDDDDDDDDDDDDDDDDDD" };
  const r = planConnectors({
    desired: [d],
    removals: [],
    owned: [owned(d)],
    observation: obs(observed(d.config.fingerprint, other)),
  });
  assert.deepEqual(codes(r), ["BLOCKED_CONNECT_CLUSTER_CHANGED"]);
  assert.deepEqual(r.actions, []);
});

Deno.test("offline: an unchanged owned connector is a no-op; any change is planned online only", () => {
  const d = desired();
  const same = planConnectors({ desired: [d], removals: [], owned: [owned(d)], observation: null });
  assert.deepEqual(same.blockers, []);
  const changed = planConnectors({
    desired: [desired("/data/other.jsonl")],
    removals: [],
    owned: [owned(d)],
    observation: null,
  });
  assert.deepEqual(codes(changed), ["BLOCKED_OFFLINE_CONNECTOR_CHANGE"]);
});

Deno.test("an owned connector neither declared nor declared removed is never removed", () => {
  const d = desired();
  const r = planConnectors({
    desired: [],
    removals: [],
    owned: [owned(d)],
    observation: obs(observed(d.config.fingerprint)),
  });
  assert.deepEqual(codes(r), ["BLOCKED_CONNECTOR_UNDECLARED"]);
  assert.deepEqual(r.actions, []);
  assert.match(r.blockers[0].message, /lifecycle\.connector_removals/);
});

Deno.test("ownedAfter records creates and updates from their artifacts and drops removals", () => {
  const d = desired();
  const plan = planConnectors({
    desired: [d],
    removals: [],
    owned: [],
    observation: obs(observed(null)),
  });
  const after = ownedAfter([], plan.actions, plan.section.artifacts);
  assert.deepEqual(after, [owned(d)]);
  const removed = ownedAfter(after, [{
    type: "remove_connector",
    connector: "orders_in",
    name: NAME,
    cluster: "main",
    identity: ID,
    config_fingerprint: d.config.fingerprint,
  }], []);
  assert.deepEqual(removed, []);
});
