// A Docker daemon named in code (settings.docker.endpoint): an unreachable one is
// ENV_DOCKER_UNREACHABLE naming the setting (no daemon runs here: nothing listens at the
// addresses used).
import assert from "node:assert/strict";
import { SluiceError } from "../../errors.ts";
import { DOCKER_ENDPOINT_SETTING, dockerAtEndpoint } from "./endpoint.ts";

for (
  const [endpoint, address] of [
    ["tcp://127.0.0.1:1", "http://127.0.0.1:1"],
    ["unix:///nonexistent-sluice/docker.sock", "unix:///nonexistent-sluice/docker.sock"],
  ]
) {
  Deno.test(`a Docker endpoint given in code is the daemon reached, named in its error: ${endpoint}`, async () => {
    const docker = await dockerAtEndpoint(endpoint, DOCKER_ENDPOINT_SETTING);
    await assert.rejects(
      () => docker.daemonId(),
      (e: unknown) =>
        e instanceof SluiceError && e.code === "ENV_DOCKER_UNREACHABLE" &&
        e.message.includes(`Docker at ${address} (settings.docker.endpoint)`) &&
        (e.evidence?.origin as { setting?: string }).setting === "settings.docker.endpoint",
    );
  });
}
