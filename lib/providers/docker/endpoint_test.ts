// A Docker daemon named in code (settings.docker.endpoint): an unreachable one is
// ENV_DOCKER_UNREACHABLE naming the setting (no daemon runs here: nothing listens at the
// addresses used).
import assert from "node:assert/strict";
import { SluiceError } from "../../errors.ts";
import {
  DOCKER_ENDPOINT_SETTING,
  DOCKER_TLS_SETTING,
  dockerAtEndpoint,
  projectDocker,
} from "./endpoint.ts";
import type { Manifest } from "../../project/manifest.ts";

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

Deno.test("a Docker endpoint given in code with settings.docker.tls is reached over TLS: an unset variable is ENV_DOCKER_TLS_MISSING naming its setting", async () => {
  const manifest = {
    docker: null,
    override: {
      canonical: "",
      dockerEndpoint: "tcp://127.0.0.1:1",
      dockerTls: {
        caFileEnv: "SLUICE_TEST_UNSET_DOCKER_CA_8c1f",
        certFileEnv: "SLUICE_TEST_UNSET_DOCKER_CERT_8c1f",
        keyFileEnv: "SLUICE_TEST_UNSET_DOCKER_KEY_8c1f",
      },
    },
  } as unknown as Manifest;
  await assert.rejects(
    () => projectDocker(manifest),
    (e: unknown) =>
      e instanceof SluiceError && e.code === "ENV_DOCKER_TLS_MISSING" &&
      e.message.startsWith(`${DOCKER_TLS_SETTING}.ca_file_env names`) &&
      e.message.includes("SLUICE_TEST_UNSET_DOCKER_CA_8c1f"),
  );
});
