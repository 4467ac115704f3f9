import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { readManifest } from "./manifest.ts";
import { MAX_INSTANCES, placeInstances, placementCapacity } from "./placement.ts";

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

const TWO = `docker:
  endpoints:
    east: { endpoint: unix:///var/run/docker.sock }
    west:
      endpoint: tcp://docker-west.internal:2376
      tls: { ca_file_env: WEST_CA, cert_file_env: WEST_CERT, key_file_env: WEST_KEY }
`;

function read(text: string, options: Parameters<typeof readManifest>[2] = {}) {
  return readManifest(text, "sluice.yaml", options);
}

Deno.test("spread puts instance i on the i-th endpoint and refuses more instances than endpoints", () => {
  const two = { endpoints: ["a", "b"], rule: "spread" as const };
  deepStrictEqual(placeInstances(2, two), [
    { instance: 0, endpoint: "a" },
    { instance: 1, endpoint: "b" },
  ]);
  strictEqual(placeInstances(3, two), null);
  strictEqual(placementCapacity(two), 2);
  deepStrictEqual(placeInstances(1, { endpoints: [], rule: "spread" }), [
    { instance: 0, endpoint: null },
  ]);
  strictEqual(placeInstances(2, { endpoints: [], rule: "spread" }), null);
  for (const bad of [0, -1, 1.5, MAX_INSTANCES + 1]) {
    strictEqual(placeInstances(bad, { endpoints: ["a"], rule: "shared" }), null, String(bad));
  }
});

Deno.test("shared goes round the endpoints, and no instance moves when N grows or shrinks", () => {
  const shared = { endpoints: ["a", "b"], rule: "shared" as const };
  deepStrictEqual(placeInstances(3, shared)?.map((p) => p.endpoint), ["a", "b", "a"]);
  deepStrictEqual(placeInstances(2, { endpoints: [], rule: "shared" })?.map((p) => p.endpoint), [
    null,
    null,
  ]);
  for (const rule of ["spread", "shared"] as const) {
    const p = { endpoints: ["a", "b", "c", "d"], rule };
    for (let n = 1; n < 4; n++) {
      deepStrictEqual(placeInstances(n + 1, p)!.slice(0, n), placeInstances(n, p), `${rule} ${n}`);
    }
  }
});

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
  strictEqual(read(text, { environment: "dev" }).manifest!.placement.rule, "shared");
  deepStrictEqual(read(text, { environment: "prod" }).manifest!.placement.endpoints, [
    "east",
    "west",
  ]);
  const overridden = read(text, {
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
