// Needs no Docker daemon: a missing socket, and a stand-in daemon on a temporary unix socket
// that gives the answers a real daemon gives (a 409 conflict, a 500, a 403, a dropped
// connection). The real daemon's behaviour is covered by tests/providers_docker_kafka_test.ts.
import assert from "node:assert/strict";
import Docker from "dockerode";
import type { SluiceError } from "../../errors.ts";
import { exitCodeFor } from "../../errors.ts";
import { missingSocket } from "../../../testing/net.ts";
import { dockerodePort } from "./dockerode.ts";
import type { ContainerSpec } from "./port.ts";

const spec: ContainerSpec = {
  name: "sluice-test",
  image: `sha256:${"0".repeat(64)}`,
  labels: {},
  env: [],
  planHostPath: "/tmp/plan.json",
  planContainerPath: "/sluice/plan.json",
  volume: "v",
  volumeContainerPath: "/sluice/state",
  network: "none",
  stopTimeoutSeconds: 30,
  memoryBytes: 0,
};

async function failure(p: Promise<unknown>): Promise<SluiceError> {
  return await p.then(() => assert.fail("no error"), (e: SluiceError) => e);
}

Deno.test("a missing socket is ENV_DOCKER_UNREACHABLE for reads and mutations, naming the socket and its origin", async () => {
  const path = missingSocket();
  const docker = dockerodePort(new Docker({ socketPath: path }), {
    origin: { variable: "DOCKER_HOST" },
  });
  for (const call of [() => docker.daemonId(), () => docker.createContainer(spec)]) {
    const e = await failure(call());
    assert.equal(e.code, "ENV_DOCKER_UNREACHABLE");
    assert.equal(exitCodeFor(e), 7);
    assert.equal(
      e.message,
      `Docker at unix://${path} ($DOCKER_HOST) is unreachable: no socket at ${path}; ` +
        "start the Docker daemon, or correct $DOCKER_HOST if the address is wrong",
    );
    assert.deepEqual(e.evidence?.origin, { variable: "DOCKER_HOST" });
  }
});

Deno.test("the daemon's answers: 4xx refused with its message, 403 denied, 5xx a bad response (read) or an unknown outcome (mutation)", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/docker.sock`;
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  const server = Deno.serve({ path, onListen: () => {} }, (req) => {
    const url = new URL(req.url).pathname.replace(/^\/v[0-9.]+/, "");
    if (url === "/info") return json(200, { ID: "STAND-IN" });
    if (url === "/containers/create") {
      return json(409, {
        message: 'Conflict. The container name "/sluice-test" is already in use',
      });
    }
    if (url === "/containers/c1/start") return json(500, { message: "driver failed" });
    if (url === "/containers/c1/json") return json(500, { message: "inspect failed" });
    if (url === "/volumes/v") return json(403, { message: "authorization denied by plugin" });
    return json(404, { message: `no route ${url}` });
  });
  try {
    const docker = dockerodePort(new Docker({ socketPath: path }));
    assert.equal(await docker.daemonId(), "STAND-IN");
    const conflict = await failure(docker.createContainer(spec));
    assert.equal(conflict.code, "DOCKER_REFUSED");
    assert.equal(exitCodeFor(conflict), 1);
    assert.match(conflict.message, /already in use/);
    assert.match(
      conflict.message,
      new RegExp(`^Docker at unix://${path} \\(given by the caller\\) refused createContainer`),
    );
    const start = await failure(docker.startContainer("c1"));
    assert.equal(start.code, "UNKNOWN_OUTCOME_DOCKER");
    assert.match(start.message, /answered a server error .*driver failed/);
    assert.equal(exitCodeFor(start), 6);
    const inspect = await failure(docker.inspectContainer("c1"));
    assert.equal(inspect.code, "DOCKER_BAD_RESPONSE");
    const denied = await failure(docker.inspectVolume("v"));
    assert.equal(denied.code, "ENV_DOCKER_DENIED");
    assert.equal(exitCodeFor(denied), 7);
    // a 404 a read expects is still an absence, not an error
    assert.equal(await docker.inspectImage("sha256:none"), null);
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a daemon that takes the request and closes the connection: a read did not answer, a mutation lost its response", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/docker.sock`;
  const listener = Deno.listen({ transport: "unix", path });
  const serving = (async () => {
    for await (const conn of listener) {
      // read the request, answer nothing
      await conn.read(new Uint8Array(65536)).catch(() => null);
      conn.close();
    }
  })();
  try {
    const docker = dockerodePort(new Docker({ socketPath: path }));
    const read = await failure(docker.listContainers("sluice.application-id", "a"));
    assert.equal(read.code, "ENV_DOCKER_UNREACHABLE", read.message);
    assert.match(read.message, /did not answer listContainers/);
    const term = await failure(docker.signalTerm("c1"));
    assert.equal(term.code, "UNKNOWN_OUTCOME_DOCKER", term.message);
    assert.equal(exitCodeFor(term), 6);
    assert.match(
      term.message,
      /^signalTerm on Docker at .* lost its response .*observe before retrying/,
    );
  } finally {
    listener.close();
    await serving.catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
