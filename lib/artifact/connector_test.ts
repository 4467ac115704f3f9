import assert from "node:assert/strict";
import {
  comparableConfig,
  configChanges,
  type ConnectorArtifact,
  connectorConfigFingerprint,
  desiredConnectorConfig,
  secretDigest,
  secretKeyId,
  validateConnectorArtifact,
} from "./connector.ts";

const KEY = "k".repeat(40);
const ENV: Record<string, string> = { SINK_PW: "hunter2", SLUICE_SECRET_HASH_KEY: KEY };
const env = (values: Record<string, string>) => (v: string) => values[v];

function sink(): ConnectorArtifact {
  return validateConnectorArtifact({
    format: "sluice.connector-artifact",
    version: 1,
    project: "orders",
    environment: null,
    connector: "orders_out",
    name: "sluice-orders-orders_out",
    cluster: "main",
    kind: "sink",
    topics: ["eligible_orders"],
    config: {
      "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
      file: "/data/eligible.jsonl",
      name: "sluice-orders-orders_out",
      "sftp.password": "${env:SINK_PW}",
      topics: "eligible_orders",
    },
    secrets: { SINK_PW: secretDigest(KEY, "SINK_PW", "hunter2") },
    secret_key_id: secretKeyId(KEY),
    ownership: { managed_by: "sluice", project: "orders", environment: null },
  });
}

Deno.test("the config fingerprint is keyed: it never holds a secret, and any value changes it", () => {
  const a = sink();
  const desired = desiredConnectorConfig(a, env(ENV));
  assert.deepEqual(desired.secretKeys, ["sftp.password"]);
  assert.match(desired.fingerprint, /^[0-9a-f]{64}$/);
  assert.equal(JSON.stringify(desired).includes("hunter2"), false);
  assert.match(desired.comparable["sftp.password"], /^hmac-sha256:[0-9a-f]{64}$/);
  // what the worker stores is the resolved configuration: it fingerprints the same
  const stored = { ...a.config, "sftp.password": "hunter2" };
  assert.equal(connectorConfigFingerprint(stored, ["sftp.password"], KEY), desired.fingerprint);
  // a changed secret, a changed plain value, an added key, another key: another fingerprint
  for (
    const [config, key] of [
      [{ ...stored, "sftp.password": "hunter3" }, KEY],
      [{ ...stored, file: "/data/other.jsonl" }, KEY],
      [{ ...stored, "tasks.max": "2" }, KEY],
      [stored, "j".repeat(40)],
    ] as const
  ) {
    assert.notEqual(
      connectorConfigFingerprint(config, ["sftp.password"], key),
      desired.fingerprint,
    );
  }
  // a secret-looking key is digested even when the artifact does not name it
  const extra = comparableConfig({ "db.token": "t0ps3cret" }, [], KEY);
  assert.match(extra["db.token"], /^hmac-sha256:/);
  assert.equal(comparableConfig({ "db.token": "a" }, [], null)["db.token"], "unkeyed-secret");
});

Deno.test("desired config: a secret changed since compile is refused before any fingerprint", () => {
  assert.throws(
    () => desiredConnectorConfig(sink(), env({ ...ENV, SINK_PW: "rotated" })),
    (e: Error & { code?: string }) => e.code === "BLOCKED_SECRET_CHANGED",
  );
});

Deno.test("the config diff names changed keys; secrets show redacted before, by reference after", () => {
  const a = sink();
  const observed = { ...a.config, "sftp.password": "old-pw", file: "/data/x.jsonl", extra: "1" };
  const observedComparable = comparableConfig(observed, ["sftp.password"], KEY);
  const shown = { ...observed, "sftp.password": "<redacted>" };
  const desired = desiredConnectorConfig(a, env(ENV));
  const changes = configChanges(observedComparable, shown, { config: a.config, ...desired });
  assert.deepEqual(changes, [
    { key: "extra", before: "1", after: null },
    { key: "file", before: "/data/x.jsonl", after: "/data/eligible.jsonl" },
    { key: "sftp.password", before: "<redacted>", after: "${env:SINK_PW}" },
  ]);
  assert.equal(JSON.stringify(changes).includes("old-pw"), false);
  // an absent connector: every desired key is new
  const fresh = configChanges(null, null, { config: a.config, ...desired });
  assert.deepEqual(fresh.map((c) => c.before), Object.keys(a.config).map(() => null));
  // the same configuration: no change at all
  const same = comparableConfig(
    { ...a.config, "sftp.password": "hunter2" },
    ["sftp.password"],
    KEY,
  );
  assert.deepEqual(configChanges(same, null, { config: a.config, ...desired }), []);
});
