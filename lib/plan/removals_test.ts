// planDestroy's data choice (pure): without --delete-data nothing is deleted and everything is
// listed as kept; with it, the groups, volumes and owned topics (by recorded ID) are listed as
// deleted, topics the project does not own as kept, and an owned topic without a recorded ID
// blocks. The runner bindings are planRunnerRemovals' (tested through the destroy scenario).
import assert from "node:assert/strict";
import { destroyDataLines, planDestroy } from "./removals.ts";
import type { OwnedConnector, OwnedTopic, RetainedRunner } from "../state/ownership.ts";
import type {
  ConnectorObservation,
  ConnectorsObservation,
} from "../validation/connector_observation.ts";

const retained: RetainedRunner[] = [{
  model: "m",
  application_id: "sluice-p-m",
  volume: { name: "sluice-p-m-state", instance_id: "i-1" },
  input_topic: "raw_external",
  removed_by: "op-1",
}];
const topics: OwnedTopic[] = [{ name: "out", topic_id: "AAAAAAAAAAAAAAAAAAAAAQ" }];
const input = (deleteData: boolean, ownedTopics = topics) => ({
  owned: [],
  ownedTopics,
  retained,
  connectors: null,
  deleteData,
  observation: null,
});

Deno.test("a destroy without --delete-data deletes nothing: no runner running, nothing to do", () => {
  assert.deepEqual(planDestroy(input(false)), { actions: [], blockers: [] });
});

Deno.test("a destroy with --delete-data lists the kept groups, volumes and owned topics as deleted, the external input as kept", () => {
  const { actions, blockers } = planDestroy(input(true));
  assert.deepEqual(blockers, []);
  assert.equal(actions.length, 1);
  const a = actions[0];
  assert.deepEqual(a.runners, []);
  assert.deepEqual(a.deletes, {
    consumer_groups: ["sluice-p-m"],
    volumes: [{ name: "sluice-p-m-state", application_id: "sluice-p-m", instance_id: "i-1" }],
    topics: [{ name: "out", topic_id: "AAAAAAAAAAAAAAAAAAAAAQ" }],
  });
  assert.deepEqual(a.keeps, { topics: ["raw_external"], volumes: [], consumer_groups: [] });
  const lines = destroyDataLines(a);
  assert.match(
    lines[0],
    /^DELETED by this destroy \(--delete-data\): consumer groups with their offsets sluice-p-m; state volumes sluice-p-m-state; topics with their records out \(id AAAAAAAAAAAAAAAAAAAAAQ\)\.$/,
  );
  assert.equal(
    lines[1],
    "KEPT by this destroy (not this project's to delete): topics raw_external.",
  );
});

Deno.test("--delete-data with an owned topic of no recorded ID is BLOCKED_DESTROY_DATA_DELETION naming it", () => {
  const { blockers } = planDestroy(input(true, [...topics, { name: "legacy", topic_id: null }]));
  assert.deepEqual(blockers.map((b) => b.code), ["BLOCKED_DESTROY_DATA_DELETION"]);
  assert.match(blockers[0].message, /owned topic legacy has no recorded topic ID/);
});

Deno.test("a destroy that keeps data lists everything as kept", () => {
  const lines = destroyDataLines({
    type: "destroy",
    runners: [],
    keeps: { topics: ["out"], volumes: ["v"], consumer_groups: ["g"] },
  });
  assert.deepEqual(lines, [
    "KEPT by this destroy (nothing data-bearing is deleted): topics out; state volumes v; consumer groups with their offsets g.",
  ]);
});

// owned connectors: each planned as a declared connector removal plans it (planConnectors)
const identity = { kafka_cluster_id: "k1", endpoint_digest: "d".repeat(64) };
const sink: OwnedConnector = {
  connector: "orders_out",
  name: "sluice-p-orders_out",
  cluster: "main",
  cluster_identity: identity,
  kind: "sink",
  artifact_sha256: "a".repeat(64),
  config_fingerprint: "f".repeat(64),
  secret_keys: [],
  secret_key_id: null,
};
const seen = (o: Partial<ConnectorObservation>): ConnectorsObservation => ({
  observedAt: "2026-01-01T00:00:00Z",
  clusters: {},
  connectors: [{
    connector: sink.connector,
    name: sink.name,
    cluster: "main",
    identity,
    exists: true,
    shown: {},
    comparable: {},
    fingerprints: { desired: null, owned: sink.config_fingerprint },
    status: null,
    ...o,
  }],
});
const withSink = (observation: ConnectorsObservation | null) => ({
  ...input(false),
  retained: [],
  ownedTopics: [],
  connectors: { owned: [sink], observation },
});

Deno.test("a destroy takes an owned connector down: bound to its owned cluster and fingerprint, named in the review", () => {
  const { actions, blockers } = planDestroy(withSink(seen({})));
  assert.deepEqual(blockers, []);
  assert.deepEqual(actions[0].connectors, [{
    type: "remove_connector",
    connector: "orders_out",
    name: "sluice-p-orders_out",
    cluster: "main",
    identity,
    config_fingerprint: sink.config_fingerprint,
  }]);
  assert.match(
    destroyDataLines(actions[0])[0],
    /CONNECTORS taken down first.*sluice-p-orders_out on main \(deleted\)/,
  );
});

Deno.test("a destroy releases an owned connector already absent, and blocks on a drifted one or on another cluster", () => {
  const absent = planDestroy(withSink(seen({ exists: false })));
  assert.deepEqual(absent.actions[0].connectors?.map((c) => c.type), ["release_connector"]);
  const drift = planDestroy(
    withSink(seen({ fingerprints: { desired: null, owned: "0".repeat(64) } })),
  );
  assert.deepEqual(drift.blockers.map((b) => b.code), ["BLOCKED_CONNECTOR_DRIFT"]);
  const moved = planDestroy(withSink(seen({ identity: { ...identity, kafka_cluster_id: "k2" } })));
  assert.deepEqual(moved.blockers.map((b) => b.code), ["BLOCKED_CONNECT_CLUSTER_CHANGED"]);
  const offline = planDestroy(withSink(null));
  assert.deepEqual(offline.blockers.map((b) => b.code), ["BLOCKED_OFFLINE_CONNECTOR_CHANGE"]);
});
