import assert from "node:assert/strict";
import { exitCodeFor, SluiceError } from "../errors.ts";
import {
  connectorArtifactSha256,
  redactObservedConfig,
  resolveConnectorConfig,
  secretDigest,
  secretKeyId,
  validateConnectorArtifact,
} from "../artifact/connector.ts";
import { canonicalJson } from "../artifact/canonical.ts";
import { parseManifest } from "./manifest.ts";
import { compileConnectors } from "./compile_connectors.ts";

const KEY = "k".repeat(40);

const MANIFEST = `project: orders
kafka: { bootstrap_host: "localhost:19092", bootstrap_internal: "kafka:9092" }
network: sluice-net
image: sha256:${"a".repeat(64)}
initial_offsets: earliest
state: { backend: local }
sources:
  raw_orders:
    kind: managed
    partitions: 1
    schema: [{ name: order_id, type: STRING }]
models:
  eligible:
    sql: models/eligible.sql
    output: { topic: eligible_orders }
connect:
  main: { rest_host: "http://127.0.0.1:18083", rest_internal: "http://connect:8083" }
connectors:
  orders_in:
    cluster: main
    kind: source
    class: org.apache.kafka.connect.file.FileStreamSourceConnector
    topics: [raw_orders]
    config: { file: /data/orders.jsonl, topic: raw_orders, tasks.max: 1 }
  orders_out:
    cluster: main
    kind: sink
    class: org.apache.kafka.connect.file.FileStreamSinkConnector
    topics: [eligible_orders]
    config:
      file: /data/eligible.jsonl
      sftp.password: "\${env:SINK_PW}"
      url: "sftp://app:\${env:SINK_PW}@files/\${env:SINK_DIR}"
`;

function envOf(values: Record<string, string>) {
  return (v: string) => values[v];
}

const ENV = { SINK_PW: "hunter2", SINK_DIR: "out", SLUICE_SECRET_HASH_KEY: KEY };

function compiled(env: Record<string, string> = ENV, environment?: string) {
  const text = environment ? `${MANIFEST}environments:\n  ${environment}: {}\n` : MANIFEST;
  return compileConnectors(parseManifest(text, "sluice.yaml", { environment }), {
    env: envOf(env),
  });
}

function codeOf(fn: () => unknown): SluiceError {
  try {
    fn();
  } catch (e) {
    if (e instanceof SluiceError) return e;
    throw e;
  }
  throw new Error("expected a SluiceError");
}

Deno.test("a source connector compiles to the exact artifact; checksum is over canonical JSON", () => {
  const [source] = compiled();
  assert.deepEqual(source.artifact, {
    format: "sluice.connector-artifact",
    version: 1,
    project: "orders",
    environment: null,
    connector: "orders_in",
    name: "sluice-orders-orders_in",
    cluster: "main",
    kind: "source",
    topics: ["raw_orders"],
    config: {
      "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
      file: "/data/orders.jsonl",
      name: "sluice-orders-orders_in",
      "tasks.max": "1",
      topic: "raw_orders",
    },
    secrets: {},
    secret_key_id: null,
    ownership: { managed_by: "sluice", project: "orders", environment: null },
  });
  assert.equal(source.canonical, canonicalJson(source.artifact));
  assert.equal(source.sha256, connectorArtifactSha256(source.artifact));
  assert.deepEqual(validateConnectorArtifact(JSON.parse(source.canonical)), source.artifact);
});

Deno.test("a sink's topics are set by sluice; names carry the environment", () => {
  const [, sink] = compiled(ENV, "prod");
  assert.equal(sink.artifact.name, "sluice-orders-prod-orders_out");
  assert.equal(sink.artifact.config.name, "sluice-orders-prod-orders_out");
  assert.equal(sink.artifact.config.topics, "eligible_orders");
  assert.equal(sink.artifact.environment, "prod");
});

Deno.test("secrets: references and keyed digests in the artifact, never the value", () => {
  const [, sink] = compiled();
  assert.equal(sink.canonical.includes("hunter2"), false);
  assert.equal(sink.artifact.config["sftp.password"], "${env:SINK_PW}");
  assert.deepEqual(sink.artifact.secrets, {
    SINK_DIR: secretDigest(KEY, "SINK_DIR", "out"),
    SINK_PW: secretDigest(KEY, "SINK_PW", "hunter2"),
  });
  assert.equal(sink.artifact.secret_key_id, secretKeyId(KEY));
  assert.match(sink.artifact.secrets.SINK_PW, /^hmac-sha256:[0-9a-f]{64}$/);
  // same value under another variable: another digest
  assert.notEqual(secretDigest(KEY, "A", "x"), secretDigest(KEY, "B", "x"));
});

Deno.test("a changed secret or key changes the checksum; the same inputs give the same bytes", () => {
  const base = compiled()[1];
  assert.equal(compiled()[1].canonical, base.canonical, "deterministic");
  const changedSecret = compiled({ ...ENV, SINK_PW: "hunter3" })[1];
  assert.notEqual(changedSecret.sha256, base.sha256);
  assert.equal(changedSecret.artifact.secret_key_id, base.artifact.secret_key_id);
  const changedKey = compiled({ ...ENV, SLUICE_SECRET_HASH_KEY: "j".repeat(40) })[1];
  assert.notEqual(changedKey.sha256, base.sha256);
  assert.notEqual(changedKey.artifact.secret_key_id, base.artifact.secret_key_id);
  // a connector without secrets does not change with them
  assert.equal(compiled({ ...ENV, SINK_PW: "hunter3" })[0].sha256, compiled()[0].sha256);
});

Deno.test("no secrets: no key is needed", () => {
  const text = MANIFEST.slice(0, MANIFEST.indexOf("  orders_out:"));
  const [c] = compileConnectors(parseManifest(text, "sluice.yaml"), { env: envOf({}) });
  assert.equal(c.artifact.secret_key_id, null);
});

Deno.test("unset secret variables are located at their references (exit 7)", () => {
  const e = codeOf(() => compiled({ SLUICE_SECRET_HASH_KEY: KEY }));
  assert.equal(e.code, "ENV_SECRET_UNSET");
  assert.equal(exitCodeFor(e), 7);
  const diags = (e.evidence?.diagnostics ?? []) as Array<{ location: { line: number } }>;
  // sftp.password (line 32) and url, which references both (line 33)
  assert.deepEqual(diags.map((d) => d.location.line), [32, 33, 33]);
  const one = codeOf(() => compiled({ SINK_PW: "hunter2", SLUICE_SECRET_HASH_KEY: KEY }));
  assert.equal(one.code, "ENV_SECRET_UNSET");
  assert.ok(one.message.startsWith("sluice.yaml:33:12: "), one.message);
  assert.ok(one.message.includes("SINK_DIR, which is not set"), one.message);
  assert.equal(one.message.includes("hunter2"), false);
});

Deno.test("the digest key: unset or short is refused, never shown", () => {
  const unset = codeOf(() => compiled({ SINK_PW: "hunter2", SINK_DIR: "out" }));
  assert.equal(unset.code, "ENV_SECRET_HASH_KEY_UNSET");
  const weak = codeOf(() => compiled({ ...ENV, SLUICE_SECRET_HASH_KEY: "short-key-123" }));
  assert.equal(weak.code, "ENV_SECRET_HASH_KEY_WEAK");
  assert.equal(weak.message.includes("short-key-123"), false);
  assert.equal(exitCodeFor(weak), 7);
});

Deno.test("resolving for submission: values substituted, secret keys named, drift refused", () => {
  const [, sink] = compiled();
  const { config, secretKeys } = resolveConnectorConfig(sink.artifact, envOf(ENV));
  assert.equal(config["sftp.password"], "hunter2");
  assert.equal(config.url, "sftp://app:hunter2@files/out");
  assert.deepEqual(secretKeys, ["sftp.password", "url"]);
  const changed = codeOf(() =>
    resolveConnectorConfig(sink.artifact, envOf({ ...ENV, SINK_PW: "rotated" }))
  );
  assert.equal(changed.code, "BLOCKED_SECRET_CHANGED");
  assert.equal(exitCodeFor(changed), 4);
  assert.ok(changed.message.includes("the value of SINK_PW changed"), changed.message);
  assert.equal(JSON.stringify(changed.toJSON()).includes("rotated"), false);
  const rekeyed = codeOf(() =>
    resolveConnectorConfig(sink.artifact, envOf({ ...ENV, SLUICE_SECRET_HASH_KEY: "j".repeat(40) }))
  );
  assert.equal(rekeyed.code, "BLOCKED_SECRET_CHANGED");
  const unset = codeOf(() => resolveConnectorConfig(sink.artifact, envOf({ SINK_DIR: "out" })));
  assert.equal(unset.code, "ENV_SECRET_UNSET");
});

Deno.test("an observed configuration is shown with its secret values redacted", () => {
  const [, sink] = compiled();
  const observed = { ...resolveConnectorConfig(sink.artifact, envOf(ENV)).config, "a.token": "t" };
  const shown = redactObservedConfig(observed, sink.artifact);
  assert.equal(shown["sftp.password"], "<redacted>");
  assert.equal(shown.url, "<redacted>");
  assert.equal(shown["a.token"], "<redacted>");
  assert.equal(shown.file, "/data/eligible.jsonl");
  assert.equal(JSON.stringify(shown).includes("hunter2"), false);
});

Deno.test("validation refuses a tampered connector artifact, naming the path", () => {
  const [, sink] = compiled();
  const tamper = (edit: (a: Record<string, unknown>) => void, path: string) => {
    const a = JSON.parse(sink.canonical);
    edit(a);
    const e = codeOf(() => validateConnectorArtifact(a));
    assert.equal(e.code, "ARTIFACT_INVALID");
    assert.ok(e.message.startsWith(path), `${e.message} should start with ${path}`);
  };
  tamper((a) => (a.extra = 1), "$.extra");
  tamper((a) => (a.name = "sluice-orders-other"), "$.name");
  tamper((a) => ((a.config as Record<string, string>).topics = "raw_orders"), "$.config.topics");
  tamper((a) => delete (a.secrets as Record<string, string>).SINK_DIR, "$.secrets");
  tamper((a) => ((a.secrets as Record<string, string>).SINK_PW = "hunter2"), "$.secrets.SINK_PW");
  tamper((a) => (a.secret_key_id = null), "$.secret_key_id");
  tamper((a) => ((a.config as Record<string, string>).x = "${nope}"), "$.config.x");
  tamper((a) => (a.topics = ["b", "a"]), "$.topics");
  tamper((a) => ((a.ownership as Record<string, unknown>).project = "x"), "$.ownership");
});
