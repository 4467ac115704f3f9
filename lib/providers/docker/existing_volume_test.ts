// createOnExistingVolume beyond the port contract (testing/ports/docker_contract.ts has the
// refusals and the undone race on the fake and the real daemon): a labelled volume standing in
// the vanished one's place is another instance and is kept; a lost lock leaves the undo undone.
import assert from "node:assert/strict";
import { SluiceError } from "../../errors.ts";
import { createFakeWorld } from "../../../testing/fakes/fake_world.ts";
import type { ContainerSpec, DockerPort } from "./port.ts";
import { createOnExistingVolume } from "./existing_volume.ts";

const INSTANCE = { "sluice.volume-instance": "11111111-1111-4111-8111-111111111111" };

function setup() {
  const world = createFakeWorld({ seed: `existing-volume-${crypto.randomUUID()}` });
  const spec: ContainerSpec = {
    name: "candidate",
    image: world.env.runnerImage,
    labels: {},
    env: [],
    network: world.env.network,
    planHostPath: "/nonexistent/plan.json",
    planContainerPath: "/etc/sluice/plan.json",
    volume: "app-state",
    volumeContainerPath: "/var/lib/sluice",
    memoryBytes: 0,
    stopTimeoutSeconds: 90,
  };
  world.control.createForeignVolume(spec.volume, INSTANCE);
  return { world, spec };
}

/** The port, whose create first lets the outside world replace the volume. */
function racing(docker: DockerPort, replace: () => void): DockerPort {
  return {
    ...docker,
    createContainer: (spec) => {
      replace();
      return docker.createContainer(spec);
    },
  };
}

Deno.test("a labelled volume standing in the vanished one's place is another instance: the container is removed, the volume kept", async () => {
  const { world, spec } = setup();
  const docker = racing(world.docker, () => {
    world.control.removeVolume(spec.volume);
    world.control.createForeignVolume(spec.volume, { owner: "someone" });
  });
  const error = await createOnExistingVolume(docker, spec, INSTANCE).then(() => null, (e) => e);
  assert.ok(error instanceof SluiceError, String(error));
  assert.equal(error.code, "BLOCKED_VOLUME_INSTANCE_CHANGED");
  assert.match(error.message, /replaced by another, labelled volume .* that volume kept/);
  assert.equal(error.evidence?.volume_discard, "labelled");
  assert.equal(await world.docker.inspectContainer(spec.name), null);
  assert.deepEqual((await world.docker.inspectVolume(spec.volume))?.labels, { owner: "someone" });
});

Deno.test("a lost lock before the undo leaves the container and the volume Docker made as they are", async () => {
  const { world, spec } = setup();
  const docker = racing(world.docker, () => world.control.removeVolume(spec.volume));
  const lost = new SluiceError("STATE_LOCK_LOST", "the lock is held by another");
  const error = await createOnExistingVolume(docker, spec, INSTANCE, {
    beforeUndo: () => Promise.reject(lost),
  }).then(() => null, (e) => e);
  assert.equal(error, lost);
  assert.notEqual(await world.docker.inspectContainer(spec.name), null);
  assert.deepEqual((await world.docker.inspectVolume(spec.volume))?.labels, {});
  assert.ok(!world.control.mutations().some((m) => m.op === "discardCreated"), "no undo");
});
