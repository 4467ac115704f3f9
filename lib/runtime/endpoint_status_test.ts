import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { SluiceError } from "../errors.ts";
import { parseManifest } from "../project/manifest.ts";
import type { DockerPort } from "../providers/docker/port.ts";
import { endpointDocker } from "../providers/docker/endpoint.ts";
import { silentDaemon } from "../../testing/silent_daemon.ts";
import { endpointStatuses, type OpenEndpoint } from "./endpoint_status.ts";

const MANIFEST = `project: orders
kafka: { bootstrap_host: "localhost:19092", bootstrap_internal: "kafka:9092" }
network: sluice-net
image: sha256:${"a".repeat(64)}
initial_offsets: earliest
state: { backend: local }
sources:
  raw_orders: { kind: managed, partitions: 3, schema: [{ name: order_id, type: STRING }] }
models:
  m: { sql: models/m.sql, output: { topic: out } }
`;

const endpoints = (hung: string) =>
  `docker:
  endpoints:
    east: { endpoint: unix:///run/east.sock }
    west: { endpoint: unix:///run/west.sock }
    hung: { endpoint: "unix://${hung}" }
`;

Deno.test("status reads each endpoint's daemon ID, and says why one did not answer, within its bound", async () => {
  // hung is a real Docker port on a socket that accepts and never answers; east and west are fakes
  await using daemon = await silentDaemon();
  const manifest = parseManifest(MANIFEST + endpoints(daemon.path), "sluice.yaml");
  const opened: string[] = [];
  const open: OpenEndpoint = (m, name, options) => {
    opened.push(name);
    if (name === "hung") return endpointDocker(m, name, options);
    const daemonId = name === "east" ? () => Promise.resolve("EAST:ID") : () =>
      Promise.reject(
        new SluiceError("ENV_DOCKER_UNREACHABLE", "cannot reach the Docker daemon at west"),
      );
    return Promise.resolve({ daemonId } as unknown as DockerPort);
  };
  const rows = await endpointStatuses(manifest, open, 200);
  deepStrictEqual(opened.sort(), ["east", "hung", "west"]);
  deepStrictEqual(rows.map((r) => [r.name, r.reachable, r.daemon_id]), [
    ["east", true, "EAST:ID"],
    ["west", false, null],
    ["hung", false, null],
  ]);
  strictEqual(rows[0].problem, null);
  strictEqual(rows[0].endpoint, "unix:///run/east.sock");
  deepStrictEqual(rows[1].problem, {
    code: "ENV_DOCKER_UNREACHABLE",
    message: "cannot reach the Docker daemon at west",
  });
  strictEqual(rows[2].problem?.code, "ENV_DOCKER_UNREACHABLE");
  match(rows[2].problem!.message, /did not answer daemonId: no answer within 0\.2 s/);
  match(rows[2].problem!.message, /docker\.endpoints\.hung\.endpoint/);
});

Deno.test("a project of one daemon has no endpoint rows, and nothing is opened", async () => {
  const rows = await endpointStatuses(parseManifest(MANIFEST, "sluice.yaml"), () => {
    throw new Error("opened");
  });
  deepStrictEqual(rows, []);
});

Deno.test("a real endpoint whose socket does not exist is ENV_DOCKER_UNREACHABLE naming its setting", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const manifest = parseManifest(
      MANIFEST + `docker:\n  endpoints:\n    gone: { endpoint: "unix://${dir}/none.sock" }\n`,
      "sluice.yaml",
    );
    const [row] = await endpointStatuses(manifest);
    strictEqual(row.reachable, false);
    strictEqual(row.problem?.code, "ENV_DOCKER_UNREACHABLE");
    match(row.problem!.message, /docker\.endpoints\.gone\.endpoint/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
