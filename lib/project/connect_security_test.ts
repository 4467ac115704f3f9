import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { readManifest } from "./manifest.ts";

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
models:
  m:
    sql: models/m.sql
    output: { topic: out }
`;

const connect = (security: string) =>
  `connect:
  main:
    rest_host: https://connect.prod.internal:8443
    rest_internal: https://connect:8443
${security}`;

const SECURED = `    security:
      ca_file_env: CONNECT_CA_FILE
      username: sluice
      password_env: CONNECT_REST_PASSWORD
`;

function read(text: string, environment: string | null = null) {
  return readManifest(text, "sluice.yaml", { environment });
}

Deno.test("a Connect cluster's security: names the CA variable and the REST user and its password variable", () => {
  const { manifest, errors } = read(BASE + connect(SECURED));
  deepStrictEqual(errors, []);
  deepStrictEqual(manifest!.connect[0].security, {
    caFileEnv: "CONNECT_CA_FILE",
    basicAuth: { username: "sluice", passwordEnv: "CONNECT_REST_PASSWORD" },
  });
  strictEqual(read(BASE + connect("")).manifest!.connect[0].security, undefined);
});

Deno.test("an environment's cluster security replaces the top-level one", () => {
  const text = BASE + connect("") + `environments:
  dev: {}
  prod:
    connect:
      main:
${SECURED.replace(/^/gm, "    ").trimEnd()}
`;
  strictEqual(read(text, "dev").manifest!.connect[0].security, undefined);
  strictEqual(read(text, "prod").manifest!.connect[0].security!.caFileEnv, "CONNECT_CA_FILE");
});

Deno.test("a literal password, a path instead of a variable, and a user without password_env are located errors", () => {
  const cases: Array<[string, string, RegExp]> = [
    [
      "MANIFEST_LITERAL_SECRET",
      "    security:\n      username: sluice\n      password: hunter2-pw\n",
      /connect\.main\.security\.password is a secret written literally/,
    ],
    [
      "MANIFEST_INVALID_VALUE",
      "    security:\n      ca_file_env: /etc/connect/ca.pem\n",
      /connect\.main\.security\.ca_file_env must name an environment variable/,
    ],
    [
      "MANIFEST_MISSING_KEY",
      "    security:\n      username: sluice\n",
      /needs both username and password_env/,
    ],
  ];
  for (const [code, security, message] of cases) {
    const { manifest, errors } = read(BASE + connect(security));
    strictEqual(manifest, null, security);
    strictEqual(errors[0]?.code, code, security);
    match(errors[0].message, message);
    ok(errors[0].location !== undefined);
    ok(!JSON.stringify(errors.map((e) => e.toJSON())).includes("hunter2-pw"));
  }
});
