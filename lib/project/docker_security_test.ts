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
      "docker:\n  endpoint: tcp://d:2376/?auth=s3cret\n",
      /docker\.endpoint tcp:\/\/d:2376\/ \(query withheld\) must not carry a query or fragment/,
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

// ---- instances over named endpoints (docs/project-format.md, "Instances")

const TWO = `docker:
  endpoints:
    east: { endpoint: unix:///var/run/docker.sock }
    west:
      endpoint: tcp://docker-west.internal:2376
      tls: { ca_file_env: WEST_CA, cert_file_env: WEST_CERT, key_file_env: WEST_KEY }
`;

Deno.test("a model without instances: is one instance on the one daemon, as before", () => {
  const { manifest, errors } = read(BASE);
  deepStrictEqual(errors, []);
  strictEqual(manifest!.models[0].instances, 1);
  strictEqual(manifest!.models[0].instancesSpan, null);
  deepStrictEqual(manifest!.placement, { endpoints: [], rule: "spread" });
  strictEqual(manifest!.docker, null);
});

Deno.test("two named endpoints hold two spread instances; the first is the single-instance daemon", () => {
  const { manifest, errors } = read(BASE + "    instances: 2\n" + TWO);
  deepStrictEqual(errors, []);
  strictEqual(manifest!.models[0].instances, 2);
  deepStrictEqual(manifest!.placement, { endpoints: ["east", "west"], rule: "spread" });
  deepStrictEqual(manifest!.docker, {
    endpoint: "unix:///var/run/docker.sock",
    endpointAt: {
      setting: "docker.endpoints.east.endpoint",
      location: { file: "sluice.yaml", line: 23, column: 23 },
    },
    tls: null,
  });
});

Deno.test("more spread instances than daemons is MANIFEST_PLACEMENT at the instances value", () => {
  for (const [docker, daemons] of [["", "one Docker daemon"], [TWO, "2 Docker endpoints"]]) {
    const { manifest, errors } = read(BASE + "    instances: 3\n" + docker);
    strictEqual(manifest, null);
    strictEqual(errors.length, 1, docker);
    strictEqual(errors[0].code, "MANIFEST_PLACEMENT");
    deepStrictEqual(errors[0].location, { file: "sluice.yaml", line: 20, column: 16 });
    match(errors[0].message, new RegExp(`models\\.m\\.instances: 3 instances .*${daemons}`));
    match(errors[0].message, /docker\.placement: shared/);
  }
});

Deno.test("placement: shared lets instances share a daemon, with endpoints or without", () => {
  for (const docker of ["docker:\n  placement: shared\n", TWO + "  placement: shared\n"]) {
    const { manifest, errors } = read(BASE + "    instances: 3\n" + docker);
    deepStrictEqual(errors, [], docker);
    strictEqual(manifest!.placement.rule, "shared");
  }
  strictEqual(read(BASE + "docker:\n  placement: shared\n").manifest!.docker, null);
});

Deno.test("each environment places on its own daemons; an override's endpoint is one daemon", () => {
  const text = BASE + "    instances: 2\n" + TWO + `environments:
  dev:
    docker: { placement: shared }
  prod: {}
`;
  strictEqual(read(text, "dev").manifest!.placement.rule, "shared");
  deepStrictEqual(read(text, "prod").manifest!.placement.endpoints, [
    "east",
    "west",
  ]);
  const overridden = readManifest(text, "sluice.yaml", {
    environment: "prod",
    settings: { docker: { endpoint: "unix:///run/other.sock" } },
  });
  strictEqual(overridden.manifest, null);
  strictEqual(overridden.errors[0].code, "MANIFEST_PLACEMENT");
  match(overridden.errors[0].message, /one Docker daemon of environment 'prod'/);
});

Deno.test("bad instances, endpoints and placement are located errors", () => {
  const cases: Array<[string, string, RegExp]> = [
    ["    instances: 0\n", "MANIFEST_INVALID_VALUE", /instances must be between 1 and 32/],
    ["    instances: 33\n", "MANIFEST_INVALID_VALUE", /instances must be between 1 and 32/],
    ['    instances: "2"\n', "MANIFEST_WRONG_TYPE", /instances must be an integer/],
    [
      "docker:\n  endpoint: unix:///a.sock\n  endpoints: { a: { endpoint: unix:///b.sock } }\n",
      "MANIFEST_INVALID_VALUE",
      /docker\.endpoint and docker\.endpoints exclude each other/,
    ],
    [
      "docker:\n  endpoints:\n    a: { endpoint: tcp://D:2376 }\n    b: { endpoint: tcp://d:2376 }\n",
      "MANIFEST_DUPLICATE_NAME",
      /docker\.endpoints\.b names the same daemon as docker\.endpoints\.a/,
    ],
    [
      "docker:\n  endpoints:\n    a: { endpoint: tcp://d }\n    b: { endpoint: http://d:2375 }\n",
      "MANIFEST_DUPLICATE_NAME",
      /docker\.endpoints\.b names the same daemon as docker\.endpoints\.a/,
    ],
    [
      "docker:\n  endpoints:\n    a: { endpoint: unix:///run/d.sock }\n    b: { endpoint: unix:///run//d.sock }\n",
      "MANIFEST_DUPLICATE_NAME",
      /docker\.endpoints\.b names the same daemon as docker\.endpoints\.a/,
    ],
    [
      "docker:\n  endpoints: { East: { endpoint: unix:///a.sock } }\n",
      "MANIFEST_INVALID_NAME",
      /endpoint name 'East'/,
    ],
    ["docker:\n  endpoints: {}\n", "MANIFEST_INVALID_VALUE", /between 1 and 32 daemons/],
    [
      "docker:\n  endpoints: { a: { endpoint: tcp://u:pw@d:2376 } }\n",
      "MANIFEST_INVALID_VALUE",
      /docker\.endpoints\.a\.endpoint \(credentials withheld\)/,
    ],
    [
      "docker:\n  placement: packed\n",
      "MANIFEST_INVALID_VALUE",
      /docker\.placement must be 'spread' or 'shared', found 'packed'/,
    ],
    ["docker:\n  endpoints: { a: { tls: {} } }\n", "MANIFEST_MISSING_KEY", /endpoint/],
  ];
  for (const [extra, code, message] of cases) {
    const { manifest, errors } = read(BASE + extra);
    strictEqual(manifest, null, extra);
    ok(errors.some((e) => e.code === code), `${extra}: ${errors.map((e) => e.code)}`);
    match(errors.map((e) => e.message).join("\n"), message);
    ok(errors.every((e) => e.location !== undefined), `every error is located: ${extra}`);
    ok(!JSON.stringify(errors.map((e) => e.toJSON())).includes(":pw@"), extra);
  }
});
