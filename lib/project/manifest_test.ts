import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import type { SluiceError } from "../errors.ts";
import { parseManifest, readManifest } from "./manifest.ts";
import { starterFiles } from "./starter.ts";

const STARTER = starterFiles().find((f) => f.path === "sluice.yaml")!.content;

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
    partitions: 3
    schema:
      - { name: order_id, type: STRING }
      - { name: amount, type: BIGINT, nullable: true }
models:
  m:
    sql: models/m.sql
    output: { topic: out }
`;

/** Assert the manifest fails with exactly this first error. */
function rejects(
  text: string,
  code: string,
  at: string,
  fragment: string,
  environment?: string | null,
): void {
  const { manifest, errors } = readManifest(text, "sluice.yaml", { environment });
  strictEqual(manifest, null);
  const e = errors.find((x) => x.code === code);
  if (!e) throw new Error(`no ${code} in: ${errors.map((x) => x.message).join("\n")}`);
  strictEqual(`${e.location?.file}:${e.location?.line}:${e.location?.column}`, at, e.message);
  strictEqual(e.message.startsWith(`${at}: `), true, e.message);
  strictEqual(e.message.includes(fragment), true, `${e.message} lacks ${fragment}`);
  strictEqual(e.message.includes("^"), true, "caret excerpt");
}

Deno.test("the starter manifest parses with environment null", () => {
  const m = parseManifest(STARTER, "sluice.yaml");
  strictEqual(m.project, "orders");
  strictEqual(m.environment, null);
  deepStrictEqual(m.environments, []);
  deepStrictEqual(m.kafka, { bootstrapHost: "localhost:19092", bootstrapInternal: "kafka:9092" });
  deepStrictEqual(m.state, { backend: "local", dir: ".sluice/state" });
  strictEqual(m.sources[0].schema.at(-1)?.nullable, true);
  strictEqual(m.models[0].outputPartitions, null);
  deepStrictEqual(m.externals[0].columns.map((c) => c.name), ["order_id", "amount"]);
});

Deno.test("a missing state.dir defaults to .sluice/state; postgres names an env var", () => {
  strictEqual(parseManifest(BASE, "sluice.yaml").state.backend, "local");
  const pg = BASE.replace("  backend: local", "  backend: postgres\n  dsn_env: SLUICE_STATE_DSN");
  deepStrictEqual(parseManifest(pg, "sluice.yaml").state, {
    backend: "postgres",
    dsnEnv: "SLUICE_STATE_DSN",
  });
});

Deno.test("environments overlay the top-level settings", () => {
  const text = `${BASE}environments:
  dev: {}
  prod:
    kafka: { bootstrap_internal: "broker-prod:9092" }
    initial_offsets: latest
    image: registry.local:5000/sluice/runner@sha256:${"b".repeat(64)}
`;
  const dev = parseManifest(text, "sluice.yaml", { environment: "dev" });
  strictEqual(dev.environment, "dev");
  strictEqual(dev.kafka.bootstrapInternal, "kafka:9092");
  const prod = parseManifest(text, "sluice.yaml", { environment: "prod" });
  deepStrictEqual(prod.kafka, {
    bootstrapHost: "localhost:19092",
    bootstrapInternal: "broker-prod:9092",
  });
  strictEqual(prod.initialOffsets, "latest");
  strictEqual(prod.image.endsWith("b".repeat(64)), true);
  deepStrictEqual(prod.environments, ["dev", "prod"]);
  rejects(text, "MANIFEST_ENVIRONMENT_REQUIRED", "sluice.yaml:21:1", "choose one with --env");
  rejects(text, "MANIFEST_UNKNOWN_ENVIRONMENT", "sluice.yaml:21:1", "'qa'", "qa");
  rejects(BASE, "MANIFEST_UNKNOWN_ENVIRONMENT", "sluice.yaml:1:1", "declares no environments", "x");
  rejects(
    `${BASE}environments:\n  dev:\n    sources: {}\n`,
    "MANIFEST_UNKNOWN_KEY",
    "sluice.yaml:23:5",
    "allowed keys: kafka, network, image, initial_offsets, state",
    "dev",
  );
});

Deno.test("each address keeps where its effective value is written, overlay or top level", () => {
  const at = (file: string, line: number, column: number) => ({ file, line, column });
  const starter = parseManifest(STARTER, "orders/sluice.yaml");
  deepStrictEqual(starter.addressSources, {
    "kafka.bootstrap_host": {
      setting: "kafka.bootstrap_host",
      location: at("orders/sluice.yaml", 6, 19),
    },
    "kafka.bootstrap_internal": {
      setting: "kafka.bootstrap_internal",
      location: at("orders/sluice.yaml", 8, 23),
    },
  });
  const text =
    BASE.replace("  backend: local", "  backend: postgres\n  dsn_env: SLUICE_STATE_DSN") +
    `environments:
  dev: {}
  prod:
    kafka: { bootstrap_host: "broker-prod:19092" }
    state: { backend: postgres, dsn_env: PROD_DSN }
`;
  const dev = parseManifest(text, "sluice.yaml", { environment: "dev" });
  deepStrictEqual(dev.addressSources["kafka.bootstrap_host"], {
    setting: "kafka.bootstrap_host",
    location: at("sluice.yaml", 3, 19),
  });
  deepStrictEqual(dev.addressSources["state.dsn_env"], {
    setting: "state.dsn_env",
    location: at("sluice.yaml", 10, 12),
  });
  const prod = parseManifest(text, "sluice.yaml", { environment: "prod" });
  strictEqual(prod.kafka.bootstrapHost, "broker-prod:19092");
  deepStrictEqual(prod.addressSources["kafka.bootstrap_host"], {
    setting: "environments.prod.kafka.bootstrap_host",
    location: at("sluice.yaml", 25, 30),
  });
  // not overridden in prod: still the top-level line
  deepStrictEqual(prod.addressSources["kafka.bootstrap_internal"], {
    setting: "kafka.bootstrap_internal",
    location: at("sluice.yaml", 4, 23),
  });
  deepStrictEqual(prod.addressSources["state.dsn_env"], {
    setting: "environments.prod.state.dsn_env",
    location: at("sluice.yaml", 26, 42),
  });
  // a local backend has no DSN variable to point at
  strictEqual(parseManifest(BASE, "sluice.yaml").addressSources["state.dsn_env"], undefined);
});

Deno.test("MANIFEST_YAML_SYNTAX and MANIFEST_DUPLICATE_KEY", () => {
  rejects("project: [orders\n", "MANIFEST_YAML_SYNTAX", "sluice.yaml:2:1", "invalid YAML");
  rejects(`${BASE}network: other\n`, "MANIFEST_DUPLICATE_KEY", "sluice.yaml:21:1", "unique");
});

Deno.test("MANIFEST_UNKNOWN_KEY: unknown keys are errors everywhere", () => {
  rejects(
    BASE.replace("network:", "netwrok:"),
    "MANIFEST_UNKNOWN_KEY",
    "sluice.yaml:5:1",
    "'netwrok'",
  );
  rejects(
    BASE.replace("    partitions: 3", "    partitions: 3\n    retention: 1"),
    "MANIFEST_UNKNOWN_KEY",
    "sluice.yaml:14:5",
    "unknown key 'retention' in sources.raw_orders",
  );
});

Deno.test("MANIFEST_MISSING_KEY names the key", () => {
  rejects(
    BASE.replace("network: sluice-net\n", ""),
    "MANIFEST_MISSING_KEY",
    "sluice.yaml:1:1",
    "'network'",
  );
  rejects(
    BASE.replace("    partitions: 3\n", ""),
    "MANIFEST_MISSING_KEY",
    "sluice.yaml:11:3",
    "'partitions'",
  );
});

Deno.test("MANIFEST_WRONG_TYPE says what was found", () => {
  rejects(
    BASE.replace("partitions: 3", 'partitions: "3"'),
    "MANIFEST_WRONG_TYPE",
    "sluice.yaml:13:17",
    "must be an integer, found the string '3'",
  );
  rejects(
    BASE.replace("sources:\n", "sources: 5\nx:\n"),
    "MANIFEST_WRONG_TYPE",
    "sluice.yaml:10:10",
    "mapping",
  );
});

Deno.test("MANIFEST_INVALID_IMAGE: tags are mutable", () => {
  rejects(
    BASE.replace(/image: .*/, "image: sluice-runner:latest"),
    "MANIFEST_INVALID_IMAGE",
    "sluice.yaml:6:8",
    "immutable image ID",
  );
  rejects(
    BASE.replace(/image: .*/, "image: sha256:abc"),
    "MANIFEST_INVALID_IMAGE",
    "sluice.yaml:6:8",
    "sha256:<64 hex>",
  );
});

Deno.test("MANIFEST_INVALID_VALUE, _NAME, _TYPE, _TOPIC", () => {
  rejects(
    BASE.replace("earliest", "newest"),
    "MANIFEST_INVALID_VALUE",
    "sluice.yaml:7:18",
    "'earliest' or 'latest'",
  );
  rejects(
    BASE.replace("localhost:19092", "localhost"),
    "MANIFEST_INVALID_VALUE",
    "sluice.yaml:3:19",
    "host:port",
  );
  rejects(
    BASE.replace("project: orders", "project: Orders-1"),
    "MANIFEST_INVALID_NAME",
    "sluice.yaml:1:10",
    "[a-z][a-z0-9_]*",
  );
  rejects(
    BASE.replace("type: BIGINT", "type: bigint"),
    "MANIFEST_INVALID_TYPE",
    "sluice.yaml:16:31",
    "upper-case",
  );
  rejects(
    BASE.replace("topic: out", "topic: 'a b'"),
    "MANIFEST_INVALID_TOPIC",
    "sluice.yaml:20:22",
    "Kafka topic name",
  );
  rejects(
    BASE.replace("  backend: local", "  backend: postgres\n  dsn_env: postgres://u:p@h/db"),
    "MANIFEST_INVALID_VALUE",
    "sluice.yaml:10:12",
    "never goes in sluice.yaml",
  );
});

Deno.test("MANIFEST_DUPLICATE_NAME, MANIFEST_UNKNOWN_MODEL, MANIFEST_TOPIC_CONFLICT", () => {
  rejects(
    BASE.replace("name: amount", "name: order_id"),
    "MANIFEST_DUPLICATE_NAME",
    "sluice.yaml:16:17",
    "declared twice",
  );
  rejects(
    `${BASE}externals:\n  app:\n    consumes: nope\n    columns: []\n`,
    "MANIFEST_UNKNOWN_MODEL",
    "sluice.yaml:23:15",
    "unknown model 'nope'",
  );
  rejects(
    BASE.replace("topic: out", "topic: raw_orders"),
    "MANIFEST_TOPIC_CONFLICT",
    "sluice.yaml:18:3",
    "also used by source",
  );
});

Deno.test("every error is reported, in document order", () => {
  const text = BASE.replace("network: sluice-net", "network: 5").replace("earliest", "soon");
  const { errors } = readManifest(text, "sluice.yaml");
  deepStrictEqual(errors.map((e) => e.location?.line), [5, 7]);
  throws(() => parseManifest(text, "sluice.yaml"), (e: unknown) => {
    strictEqual((e as SluiceError).code, "MANIFEST_INVALID");
    strictEqual(((e as SluiceError).evidence?.diagnostics as unknown[]).length, 2);
    return true;
  });
});

Deno.test("on_invalid: stop by default; dead_letter with a declared dead-letter topic", () => {
  const plain = parseManifest(BASE, "sluice.yaml").models[0];
  strictEqual(plain.onInvalid, "stop");
  strictEqual(plain.deadLetter, null);
  const stop = parseManifest(`${BASE}    on_invalid: stop\n`, "sluice.yaml").models[0];
  strictEqual(stop.onInvalid, "stop");
  strictEqual(stop.deadLetter, null);
  const dl = parseManifest(
    `${BASE}    on_invalid: dead_letter\n    dead_letter: { topic: m_dlq, partitions: 2 }\n`,
    "sluice.yaml",
  ).models[0];
  strictEqual(dl.onInvalid, "dead_letter");
  strictEqual(dl.deadLetter?.topic, "m_dlq");
  strictEqual(dl.deadLetter?.partitions, 2);
  const one = parseManifest(
    `${BASE}    on_invalid: dead_letter\n    dead_letter: { topic: m_dlq }\n`,
    "sluice.yaml",
  ).models[0];
  strictEqual(one.deadLetter?.partitions, 1);
});

Deno.test("a malformed on_invalid entry is an error at its file:line:col", () => {
  rejects(
    `${BASE}    on_invalid: skip\n`,
    "MANIFEST_INVALID_VALUE",
    "sluice.yaml:21:17",
    "must be 'stop' or 'dead_letter', found 'skip'",
  );
  rejects(
    `${BASE}    on_invalid: dead_letter\n`,
    "MANIFEST_MISSING_KEY",
    "sluice.yaml:21:17",
    "needs a declared dead-letter topic",
  );
  rejects(
    `${BASE}    dead_letter: { topic: x }\n`,
    "MANIFEST_UNKNOWN_KEY",
    "sluice.yaml:21:5",
    "applies only with 'on_invalid: dead_letter'",
  );
  rejects(
    `${BASE}    on_invalid: dead_letter\n    dead_letter: { topic: "bad topic" }\n`,
    "MANIFEST_INVALID_TOPIC",
    "sluice.yaml:22:27",
    "is not a valid Kafka topic name",
  );
});

Deno.test("the dead-letter topic is distinct from every input and output topic", () => {
  rejects(
    `${BASE}    on_invalid: dead_letter\n    dead_letter: { topic: raw_orders }\n`,
    "MANIFEST_TOPIC_CONFLICT",
    "sluice.yaml:22:27",
    "dead-letter topic 'raw_orders' of model 'm' is also used by source 'raw_orders'",
  );
  rejects(
    `${BASE}    on_invalid: dead_letter\n    dead_letter: { topic: out }\n`,
    "MANIFEST_TOPIC_CONFLICT",
    "sluice.yaml:22:27",
    "dead-letter topic 'out' of model 'm' is also used by model 'm'",
  );
});

Deno.test("a value typed where none is supported is never echoed: keys that look secret, env maps, user:pass@ addresses", () => {
  const planted: Array<[string, string]> = [
    [
      BASE.replace("  bootstrap_internal:", "  sasl_password: Hunter2pw\n  bootstrap_internal:"),
      "Hunter2pw",
    ],
    [
      BASE.replace(
        "    sql: models/m.sql",
        "    sql: models/m.sql\n    env: {DB_URL: postgres://x/y, MODE: S3cretMode}",
      ),
      "S3cretMode",
    ],
    [
      BASE.replace(
        "    sql: models/m.sql",
        "    sql: models/m.sql\n    env:\n      API_KEY: Bl0ckValue",
      ),
      "Bl0ckValue",
    ],
    [BASE.replace("localhost:19092", "app:Pa55word@localhost:19092"), "Pa55word"],
    [
      BASE.replace(
        "  backend: local",
        "  backend: postgres\n  dsn_env: postgres://u:Dsn5ecret@db/x",
      ),
      "Dsn5ecret",
    ],
  ];
  for (const [text, secret] of planted) {
    const { manifest, errors } = readManifest(text, "sluice.yaml");
    strictEqual(manifest, null, secret);
    strictEqual(errors.length > 0, true, secret);
    for (const e of errors) {
      const seen = JSON.stringify({ message: e.message, evidence: e.evidence ?? null });
      strictEqual(seen.includes(secret), false, `${e.code} echoed ${secret}: ${e.message}`);
      strictEqual(e.message.includes("^"), true, "the excerpt is still there");
    }
  }
});
