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

const TLS_DOCKER = `docker:
  endpoint: tcp://docker.prod.internal:2376
  tls:
    ca_file_env: DOCKER_CA_FILE
    cert_file_env: DOCKER_CERT_FILE
    key_file_env: DOCKER_KEY_FILE
`;

function read(text: string, environment: string | null = null) {
  return readManifest(text, "sluice.yaml", { environment });
}

Deno.test("no docker: section leaves the daemon to the Docker CLI's variables", () => {
  const { manifest, errors } = read(BASE);
  deepStrictEqual(errors, []);
  strictEqual(manifest!.docker, null);
});

Deno.test("docker: names the endpoint (located) and the variables holding the TLS files", () => {
  const { manifest, errors } = read(BASE + TLS_DOCKER);
  deepStrictEqual(errors, []);
  deepStrictEqual(manifest!.docker, {
    endpoint: "tcp://docker.prod.internal:2376",
    endpointAt: {
      setting: "docker.endpoint",
      location: { file: "sluice.yaml", line: 21, column: 13 },
    },
    tls: {
      caFileEnv: "DOCKER_CA_FILE",
      certFileEnv: "DOCKER_CERT_FILE",
      keyFileEnv: "DOCKER_KEY_FILE",
    },
  });
});

Deno.test("an environment's docker: replaces the top-level one whole", () => {
  const text = BASE + `docker:
  endpoint: unix:///var/run/docker.sock
environments:
  dev: {}
  prod:
${TLS_DOCKER.replace(/^/gm, "    ").trimEnd()}
`;
  strictEqual(read(text, "dev").manifest!.docker!.endpoint, "unix:///var/run/docker.sock");
  strictEqual(read(text, "dev").manifest!.docker!.tls, null);
  const prod = read(text, "prod").manifest!.docker!;
  strictEqual(prod.endpoint, "tcp://docker.prod.internal:2376");
  strictEqual(prod.endpointAt.setting, "environments.prod.docker.endpoint");
  strictEqual(prod.tls!.caFileEnv, "DOCKER_CA_FILE");
});

Deno.test("a bad endpoint, TLS on a socket, a path instead of a variable and a missing key are located errors", () => {
  const cases: Array<[string, RegExp]> = [
    [
      "docker:\n  endpoint: ftp://d:21\n",
      /docker\.endpoint ftp:\/\/d:21 must use unix, tcp, http, https/,
    ],
    [
      "docker:\n  endpoint: tcp://me:s3cret@d:2376\n",
      /docker\.endpoint \(credentials withheld\) must not carry credentials/,
    ],
    [
      "docker:\n  endpoint: unix:///run/d.sock\n  tls: { ca_file_env: A, cert_file_env: B, key_file_env: C }\n",
      /docker\.tls applies to a tcp:\/\/ or https:\/\/ endpoint only/,
    ],
    [
      "docker:\n  endpoint: tcp://d:2376\n  tls: { ca_file_env: /etc/ca.pem, cert_file_env: B, key_file_env: C }\n",
      /docker\.tls\.ca_file_env must name an environment variable/,
    ],
    [
      "docker:\n  endpoint: tcp://d:2376\n  tls: { ca_file_env: A, cert_file_env: B }\n",
      /key_file_env/,
    ],
    ["docker:\n  tls: { ca_file_env: A, cert_file_env: B, key_file_env: C }\n", /endpoint/],
  ];
  for (const [docker, message] of cases) {
    const { manifest, errors } = read(BASE + docker);
    strictEqual(manifest, null, docker);
    ok(errors.length > 0, docker);
    match(errors.map((e) => e.message).join("\n"), message);
    ok(errors.every((e) => e.location !== undefined), `every error is located: ${docker}`);
    ok(!JSON.stringify(errors.map((e) => e.toJSON())).includes("s3cret"));
  }
});
