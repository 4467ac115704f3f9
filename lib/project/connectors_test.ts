import assert from "node:assert/strict";
import { parseManifest, readManifest } from "./manifest.ts";

const BASE = `project: orders
kafka:
  bootstrap_host: localhost:19092
  bootstrap_internal: kafka:9092
network: sluice-net
image: sha256:${"a".repeat(64)}
initial_offsets: earliest
state:
  backend: local
sources:
  raw_orders:
    kind: managed
    partitions: 1
    schema:
      - { name: order_id, type: STRING }
models:
  eligible:
    sql: models/eligible.sql
    output: { topic: eligible_orders }
connect:
  main:
    rest_host: http://127.0.0.1:18083
    rest_internal: http://connect:8083
`;

const CONNECTORS = `connectors:
  orders_in:
    cluster: main
    kind: source
    class: org.apache.kafka.connect.file.FileStreamSourceConnector
    topics: [raw_orders]
    config:
      file: /data/orders.jsonl
      topic: raw_orders
      tasks.max: 1
      errors.tolerance: none
  orders_out:
    cluster: main
    kind: sink
    class: org.apache.kafka.connect.file.FileStreamSinkConnector
    topics: [eligible_orders]
    config:
      file: /data/eligible.jsonl
      sftp.password: "\${env:SINK_PW}"
`;

/** "sluice.yaml:line:col" of the first occurrence of `needle` (which must be unique). */
function at(text: string, needle: string): string {
  const i = text.indexOf(needle);
  assert.ok(i >= 0 && text.indexOf(needle, i + 1) < 0, `'${needle}' must occur once`);
  const before = text.slice(0, i).split("\n");
  return `sluice.yaml:${before.length}:${before.at(-1)!.length + 1}`;
}

/** The manifest fails with `code` located at `needle`, and the message has `fragment`. */
function rejects(text: string, code: string, needle: string, fragment: string, env?: string) {
  const { manifest, errors } = readManifest(text, "sluice.yaml", { environment: env });
  assert.equal(manifest, null);
  const e = errors.find((x) => x.code === code);
  if (!e) throw new Error(`no ${code} in:\n${errors.map((x) => x.message).join("\n")}`);
  const where = at(text, needle);
  assert.equal(`${e.location?.file}:${e.location?.line}:${e.location?.column}`, where, e.message);
  assert.ok(e.message.startsWith(`${where}: `), e.message);
  assert.ok(e.message.includes(fragment), `${e.message}\nlacks: ${fragment}`);
  return e;
}

Deno.test("connect clusters, connectors and removals parse into the manifest", () => {
  const text = `${BASE}${CONNECTORS}lifecycle:
  connector_removals:
    - logical_name: old_sink
      connector: sluice-orders-old_sink
      cluster: main
`;
  const m = parseManifest(text, "sluice.yaml");
  assert.deepEqual(m.connect.map((c) => [c.alias, c.restHost, c.restInternal]), [
    ["main", "http://127.0.0.1:18083", "http://connect:8083"],
  ]);
  assert.deepEqual(m.connectors.map((c) => [c.name, c.kind, c.cluster, c.topics]), [
    ["orders_in", "source", "main", ["raw_orders"]],
    ["orders_out", "sink", "main", ["eligible_orders"]],
  ]);
  assert.equal(
    m.connectors[0].className,
    "org.apache.kafka.connect.file.FileStreamSourceConnector",
  );
  // integers and booleans are Connect's strings; references stay references
  assert.deepEqual(m.connectors[0].config, {
    file: "/data/orders.jsonl",
    topic: "raw_orders",
    "tasks.max": "1",
    "errors.tolerance": "none",
  });
  assert.equal(m.connectors[1].config["sftp.password"], "${env:SINK_PW}");
  assert.deepEqual(
    m.connectorRemovals.map((r) => [r.logicalName, r.connector, r.cluster, r.environment]),
    [["old_sink", "sluice-orders-old_sink", "main", null]],
  );
});

Deno.test("a project without connect sections has none", () => {
  const m = parseManifest(BASE.slice(0, BASE.indexOf("connect:\n")), "sluice.yaml");
  assert.deepEqual([m.connect, m.connectors, m.connectorRemovals], [[], [], []]);
});

Deno.test("environments re-address Connect clusters per key; removals name their environment", () => {
  const text = `${BASE}${CONNECTORS}lifecycle:
  connector_removals:
    - { logical_name: old_sink, connector: sluice-orders-prod-old_sink, cluster: main }
environments:
  dev: {}
  prod:
    connect:
      main: { rest_internal: "http://connect-prod:8083" }
`;
  const prod = parseManifest(text, "sluice.yaml", { environment: "prod" });
  assert.deepEqual(prod.connect.map((c) => [c.restHost, c.restInternal]), [
    ["http://127.0.0.1:18083", "http://connect-prod:8083"],
  ]);
  assert.equal(prod.connectorRemovals[0].environment, "prod");
  const dev = parseManifest(text, "sluice.yaml", { environment: "dev" });
  assert.equal(dev.connect[0].restInternal, "http://connect:8083");
  // the same declaration, read in dev: it names prod's connector, so it applies only there
  assert.equal(dev.connectorRemovals[0].environment, "prod");
});

Deno.test("an overlay cannot invent a Connect cluster", () => {
  const text = `${BASE}environments:
  prod:
    connect:
      other: { rest_host: "http://x:1" }
`;
  rejects(text, "MANIFEST_UNKNOWN_CONNECT_CLUSTER", "other:", "does not declare", "prod");
});

Deno.test("Connect addresses: credentials are refused and never echoed; both are required", () => {
  const creds = BASE.replace("http://127.0.0.1:18083", "http://admin:hunter2@127.0.0.1:18083");
  const e = rejects(creds, "MANIFEST_INVALID_VALUE", "http://admin", "must not carry credentials");
  assert.equal(JSON.stringify(e.toJSON()).includes("hunter2"), false);
  rejects(
    BASE.replace("http://connect:8083", "connect:8083"),
    "MANIFEST_INVALID_VALUE",
    "connect:8083",
    "must use http or https",
  );
  rejects(
    BASE.replace("    rest_internal: http://connect:8083\n", ""),
    "MANIFEST_MISSING_KEY",
    "main:",
    "missing required key 'rest_internal'",
  );
  rejects(
    BASE.replace("    rest_host:", "    rest_hots:"),
    "MANIFEST_UNKNOWN_KEY",
    "rest_hots",
    "allowed keys: rest_host, rest_internal",
  );
  rejects(BASE.replace("  main:", "  Main:"), "MANIFEST_INVALID_NAME", "Main:", "alias 'Main'");
});

Deno.test("connector entries: every malformed field is located", () => {
  const cases: Array<[string, string, string, string, string]> = [
    // [replace, with, code, needle, fragment]
    [
      "cluster: main\n    kind: source",
      "cluster: mian\n    kind: source",
      "MANIFEST_UNKNOWN_CONNECT_CLUSTER",
      "mian",
      "unknown Connect cluster 'mian'; declared under 'connect:': main",
    ],
    [
      "kind: source",
      "kind: sauce",
      "MANIFEST_INVALID_VALUE",
      "sauce",
      "must be 'source' or 'sink'",
    ],
    [
      "class: org.apache.kafka.connect.file.FileStreamSourceConnector",
      "class: not a class",
      "MANIFEST_INVALID_VALUE",
      "not a class",
      "is not a Java class name",
    ],
    [
      "topics: [raw_orders]",
      "topics: [eligible_orders]",
      "MANIFEST_UNKNOWN_TOPIC",
      "eligible_orders]\n    config:\n      file: /data/orders",
      "no declared source's topic",
    ],
    [
      "topics: [eligible_orders]",
      "topics: [raw_orders]",
      "MANIFEST_UNKNOWN_TOPIC",
      "raw_orders]\n    config:\n      file: /data/eligible",
      "no model's output topic",
    ],
    [
      "topics: [raw_orders]",
      "topics: [raw_orders, raw_orders]",
      "MANIFEST_DUPLICATE_NAME",
      "raw_orders]",
      "listed twice",
    ],
    ["topics: [raw_orders]", "topics: []", "MANIFEST_INVALID_VALUE", "[]", "at least one topic"],
    [
      "topics: [raw_orders]",
      "topics: raw_orders",
      "MANIFEST_WRONG_TYPE",
      "raw_orders\n    config:\n      file: /data/orders",
      "must be a list",
    ],
    [
      "      topic: raw_orders\n",
      "      topic: elsewhere\n",
      "MANIFEST_CONNECTOR_TOPIC_MISMATCH",
      "elsewhere",
      "not among the topics",
    ],
    [
      "      file: /data/orders.jsonl\n",
      "      name: custom\n",
      "MANIFEST_RESERVED_CONFIG_KEY",
      "name: custom",
      "the connector's name is derived",
    ],
    [
      "      file: /data/orders.jsonl\n",
      "      connector.class: x.Y\n",
      "MANIFEST_RESERVED_CONFIG_KEY",
      "connector.class",
      "write the class as 'class:'",
    ],
    [
      "      file: /data/eligible.jsonl\n",
      "      topics.regex: eli.*\n",
      "MANIFEST_RESERVED_CONFIG_KEY",
      "topics.regex",
      "a sink reads exactly the topics",
    ],
    [
      "      tasks.max: 1\n",
      "      tasks.max: 1.5\n",
      "MANIFEST_WRONG_TYPE",
      "1.5",
      "found the number 1.5 (quote it)",
    ],
    [
      "      tasks.max: 1\n",
      "      tasks.max: null\n",
      "MANIFEST_WRONG_TYPE",
      "null",
      "must be a string",
    ],
    [
      "      tasks.max: 1\n",
      "      'tasks max': 1\n",
      "MANIFEST_INVALID_NAME",
      "'tasks max'",
      "configuration key 'tasks max'",
    ],
    [
      '"${env:SINK_PW}"',
      '"${env:SINK-PW}"',
      "MANIFEST_INVALID_SECRET_REFERENCE",
      '"${env:SINK-PW}"',
      "'SINK-PW' is not an environment variable name",
    ],
    [
      '"${env:SINK_PW}"',
      '"${vault:x}"',
      "MANIFEST_INVALID_SECRET_REFERENCE",
      '"${vault:x}"',
      "only ${env:NAME} references are supported",
    ],
    [
      '"${env:SINK_PW}"',
      '"${env:SINK_PW"',
      "MANIFEST_INVALID_SECRET_REFERENCE",
      '"${env:SINK_PW"',
      "unterminated",
    ],
    [
      "    class: org.apache.kafka.connect.file.FileStreamSinkConnector\n",
      "",
      "MANIFEST_MISSING_KEY",
      "orders_out:",
      "missing required key 'class'",
    ],
    [
      "    kind: sink\n",
      "    kind: sink\n    tasks: 2\n",
      "MANIFEST_UNKNOWN_KEY",
      "tasks: 2",
      "unknown key 'tasks'",
    ],
    [
      "  orders_out:",
      "  OrdersOut:",
      "MANIFEST_INVALID_NAME",
      "OrdersOut",
      "connector name 'OrdersOut'",
    ],
  ];
  for (const [from, to, code, needle, fragment] of cases) {
    const source = `${BASE}${CONNECTORS}`;
    assert.ok(source.includes(from), from);
    rejects(source.replace(from, to), code, needle, fragment);
  }
});

Deno.test("a secret written literally is refused without echoing it", () => {
  const text = `${BASE}${CONNECTORS}`.replace('"${env:SINK_PW}"', "hunter2hunter2");
  const e = rejects(text, "MANIFEST_LITERAL_SECRET", "hunter2hunter2", "${env:NAME}");
  assert.equal(JSON.stringify(e.toJSON()).includes("hunter2"), false, e.message);
  // the excerpt still points at the value, masked
  assert.ok(e.message.includes("sftp.password: **************\n"), e.message);
});

Deno.test("removals: collision, unmanaged name, duplicate, unknown cluster, shape", () => {
  const removal = (body: string) =>
    `${BASE}${CONNECTORS}lifecycle:\n  connector_removals:\n${body}`;
  rejects(
    removal(
      "    - { logical_name: orders_out, connector: sluice-orders-orders_out, cluster: main }\n",
    ),
    "MANIFEST_REMOVAL_COLLISION",
    "orders_out, connector",
    "which 'connectors:' still declares",
  );
  rejects(
    removal("    - { logical_name: old, connector: my-hand-made-connector, cluster: main }\n"),
    "MANIFEST_REMOVAL_UNMANAGED_NAME",
    "my-hand-made-connector",
    "expected sluice-orders-old",
  );
  rejects(
    removal(
      "    - { logical_name: old, connector: sluice-orders-old, cluster: main }\n" +
        "    - { logical_name: old, connector: sluice-orders-old, cluster: main } # again\n",
    ),
    "MANIFEST_DUPLICATE_NAME",
    "old, connector: sluice-orders-old, cluster: main } # again",
    "declared removed twice",
  );
  rejects(
    removal("    - { logical_name: old, connector: sluice-orders-old, cluster: side }\n"),
    "MANIFEST_UNKNOWN_CONNECT_CLUSTER",
    "side",
    "unknown Connect cluster 'side'",
  );
  rejects(
    removal("    - { logical_name: old, cluster: main }\n"),
    "MANIFEST_MISSING_KEY",
    "{ logical_name: old, cluster: main }",
    "missing required key 'connector'",
  );
  rejects(
    removal("    - { logical_name: Old, connector: sluice-orders-Old, cluster: main }\n"),
    "MANIFEST_INVALID_NAME",
    "Old, connector",
    "logical_name 'Old'",
  );
  rejects(
    `${BASE}lifecycle:\n  topic_removals: []\n`,
    "MANIFEST_UNKNOWN_KEY",
    "topic_removals",
    "allowed keys: connector_removals",
  );
  rejects(
    `${BASE}lifecycle:\n  connector_removals: { a: 1 }\n`,
    "MANIFEST_WRONG_TYPE",
    "{ a: 1 }",
    "must be a list",
  );
});

Deno.test("a removal with environments must name one environment's connector", () => {
  const text = `${BASE}lifecycle:
  connector_removals:
    - { logical_name: old, connector: sluice-orders-old, cluster: main }
environments:
  dev: {}
  prod: {}
`;
  rejects(
    text,
    "MANIFEST_REMOVAL_UNMANAGED_NAME",
    "sluice-orders-old,",
    "expected sluice-orders-dev-old or sluice-orders-prod-old",
    "dev",
  );
});

Deno.test("a credential inside a URL or a query string under a plain key is a literal secret", () => {
  const plant = (value: string) =>
    `${BASE}${CONNECTORS}`.replace('"${env:SINK_PW}"', '"${env:SINK_PW}"\n      x.conn: ' + value);
  for (
    const [value, what] of [
      ["postgres://u:Url5ecret@db/x", "the password of a URL"],
      ['"jdbc:postgresql://db/x?user=u&password=Qu3rySecret"', "a password= value"],
      ['"jdbc:sqlserver://db;user=u;password=Jdbc5ecret"', "a password= value"],
    ]
  ) {
    const e = rejects(plant(value), "MANIFEST_LITERAL_SECRET", value, what);
    assert.equal(
      /Url5ecret|Qu3rySecret|Jdbc5ecret/.test(JSON.stringify(e.toJSON())),
      false,
      e.message,
    );
  }
  // a reference is no literal
  const { errors } = readManifest(plant('"postgres://u:${env:DB_PW}@db/x"'), "sluice.yaml");
  assert.deepEqual(errors.map((x) => x.code), []);
});
