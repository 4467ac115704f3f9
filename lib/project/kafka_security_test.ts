import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { parseManifest, readManifest } from "./manifest.ts";
import { PLAINTEXT } from "./kafka_security.ts";

const HEAD = `project: orders
kafka:
  bootstrap_host: localhost:19092
  bootstrap_internal: kafka:9092
`;
const TAIL = `network: sluice-net
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
models:
  m:
    sql: models/m.sql
    output: { topic: out }
`;

const SASL_SSL = `  security:
    protocol: SASL_SSL
    tls:
      ca_file_env: KAFKA_CA_FILE
    admin:
      sasl_mechanism: SCRAM-SHA-512
      username: sluice-admin
      password_env: SLUICE_KAFKA_ADMIN_PASSWORD
    runner:
      sasl_mechanism: SCRAM-SHA-512
      username: orders-runner
      password_env: SLUICE_KAFKA_RUNNER_PASSWORD
`;

function manifest(security: string, environments = ""): string {
  return `${HEAD}${security}${TAIL}${environments}`;
}

/** The one error of this code, at this line:column, whose message holds `fragment`. */
function refused(text: string, code: string, at: string, fragment: string, env?: string) {
  const { manifest, errors } = readManifest(text, "sluice.yaml", { environment: env ?? null });
  strictEqual(manifest, null);
  const e = errors.find((x) => x.code === code);
  if (!e) throw new Error(`no ${code} in: ${errors.map((x) => x.message).join("\n")}`);
  strictEqual(`${e.location?.line}:${e.location?.column}`, at, e.message);
  strictEqual(e.message.includes(fragment), true, `${e.message} lacks ${fragment}`);
  return e;
}

Deno.test("kafka.security absent: PLAINTEXT, no principal (today's projects unchanged)", () => {
  deepStrictEqual(parseManifest(manifest(""), "sluice.yaml").kafkaSecurity, PLAINTEXT);
});

Deno.test("kafka.security SASL_SSL: two principals, each by reference; TLS verifies hostnames", () => {
  deepStrictEqual(parseManifest(manifest(SASL_SSL), "sluice.yaml").kafkaSecurity, {
    protocol: "SASL_SSL",
    tls: { caFileEnv: "KAFKA_CA_FILE", hostnameVerification: true },
    admin: {
      sasl: {
        mechanism: "SCRAM-SHA-512",
        username: "sluice-admin",
        passwordEnv: "SLUICE_KAFKA_ADMIN_PASSWORD",
      },
      certificate: null,
    },
    runner: {
      sasl: {
        mechanism: "SCRAM-SHA-512",
        username: "orders-runner",
        passwordEnv: "SLUICE_KAFKA_RUNNER_PASSWORD",
      },
      certificate: null,
    },
  });
});

Deno.test("kafka.security SSL with client certificates (mutual TLS)", () => {
  const text = manifest(`  security:
    protocol: SSL
    admin: { cert_file_env: ADMIN_CERT, key_file_env: ADMIN_KEY }
    runner: { cert_file_env: RUNNER_CERT, key_file_env: RUNNER_KEY }
`);
  const s = parseManifest(text, "sluice.yaml").kafkaSecurity;
  strictEqual(s.protocol, "SSL");
  deepStrictEqual(s.tls, { caFileEnv: null, hostnameVerification: true });
  deepStrictEqual(s.admin, {
    sasl: null,
    certificate: { certFileEnv: "ADMIN_CERT", keyFileEnv: "ADMIN_KEY" },
  });
  deepStrictEqual(s.runner?.certificate, { certFileEnv: "RUNNER_CERT", keyFileEnv: "RUNNER_KEY" });
});

Deno.test("a literal password in kafka.security is refused at its key, its value never shown", () => {
  const text = manifest(SASL_SSL.replace(
    "      password_env: SLUICE_KAFKA_ADMIN_PASSWORD",
    "      password: hunter2hunter2",
  ));
  const e = refused(text, "MANIFEST_LITERAL_SECRET", "12:7", "password_env");
  strictEqual(JSON.stringify(e.toJSON()).includes("hunter2"), false, e.message);
  strictEqual(e.message.includes("password: **************"), true, e.message);
});

Deno.test("kafka.security: every malformed setting is located", () => {
  refused(
    manifest("  security:\n    protocol: SASL_TLS\n"),
    "MANIFEST_INVALID_VALUE",
    "6:15",
    "must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL",
  );
  refused(
    manifest(SASL_SSL.replace("SCRAM-SHA-512", "GSSAPI")),
    "MANIFEST_INVALID_VALUE",
    "10:23",
    "sasl_mechanism must be one of SCRAM-SHA-512, SCRAM-SHA-256, PLAIN",
  );
  refused(
    manifest(SASL_SSL.replace("password_env: SLUICE_KAFKA_ADMIN_PASSWORD", "password_env: $PW")),
    "MANIFEST_INVALID_VALUE",
    "12:21",
    "must name an environment variable",
  );
  // SASL needs both principals
  refused(
    manifest(SASL_SSL.split("    runner:")[0]),
    "MANIFEST_MISSING_KEY",
    "5:3",
    "missing required key 'runner'",
  );
  // TLS settings under a protocol without TLS
  refused(
    manifest(SASL_SSL.replace("SASL_SSL", "SASL_PLAINTEXT")),
    "MANIFEST_INVALID_VALUE",
    "7:5",
    "tls applies to SSL and SASL_SSL only",
  );
  // a certificate needs its key
  refused(
    manifest(
      "  security:\n    protocol: SSL\n    admin: { cert_file_env: C }\n    runner: { cert_file_env: C, key_file_env: K }\n",
    ),
    "MANIFEST_MISSING_KEY",
    "7:14",
    "needs both cert_file_env and key_file_env",
  );
  // principals under PLAINTEXT
  refused(
    manifest("  security:\n    protocol: PLAINTEXT\n    admin: { username: x }\n"),
    "MANIFEST_INVALID_VALUE",
    "7:5",
    "admin applies to SSL, SASL_PLAINTEXT and SASL_SSL only",
  );
  refused(
    manifest("  security:\n    protocol: SSL\n    tls: { ca_file: /etc/ssl/ca.pem }\n"),
    "MANIFEST_UNKNOWN_KEY",
    "7:12",
    "unknown key 'ca_file'",
  );
});

Deno.test("an environment's kafka.security replaces the top-level one whole", () => {
  const text = manifest(
    "",
    `environments:
  dev:
    network: sluice-dev
  prod:
    kafka:
${SASL_SSL.replace(/^/gm, "    ").trimEnd()}
`,
  );
  deepStrictEqual(
    parseManifest(text, "sluice.yaml", { environment: "dev" }).kafkaSecurity,
    PLAINTEXT,
  );
  const prod = parseManifest(text, "sluice.yaml", { environment: "prod" }).kafkaSecurity;
  strictEqual(prod.protocol, "SASL_SSL");
  strictEqual(prod.runner?.sasl?.username, "orders-runner");
});

Deno.test("kafka.security SSL: a runner certificate's principal may be declared (User:<name>), under SSL only", () => {
  const text = manifest(`  security:
    protocol: SSL
    admin: { cert_file_env: ADMIN_CERT, key_file_env: ADMIN_KEY }
    runner: { cert_file_env: RUNNER_CERT, key_file_env: RUNNER_KEY, principal: "User:orders-runner" }
`);
  deepStrictEqual(parseManifest(text, "sluice.yaml").kafkaSecurity.runner?.certificate, {
    certFileEnv: "RUNNER_CERT",
    keyFileEnv: "RUNNER_KEY",
    principal: "User:orders-runner",
  });
  refused(
    text.replace('"User:orders-runner"', "orders-runner"),
    "MANIFEST_INVALID_VALUE",
    "8:80",
    "must be User:<name>",
  );
  refused(
    manifest(`  security:
    protocol: SASL_SSL
    runner:
      sasl_mechanism: PLAIN
      username: r
      password_env: R_PW
      principal: User:r
`),
    "MANIFEST_INVALID_VALUE",
    "11:7",
    "under SASL the username is the principal",
  );
});
