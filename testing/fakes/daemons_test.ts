// A fake world of several Docker daemons (the endpoints a set of instances is placed on): each
// daemon keeps its own containers, volumes and files, every runner reaches the one broker, and a
// daemon taken down fails its calls as an unreachable endpoint while its runners go on.
import assert from "node:assert/strict";
import { instanceContainerName, instanceVolumeName } from "../../lib/runtime/labels.ts";
import { notTheSetReady } from "../../lib/validation/group_member.ts";
import { fakeSubject } from "../ports/fake_subject.ts";
import { INSTANCE_REL, prepareRunner, statusOf } from "../ports/_runner_setup.ts";
import { daemonNames, daemonOf, emptyWorld } from "./world.ts";
import { SluiceError } from "../../lib/errors.ts";

Deno.test("two daemons: each its own containers and volumes, both runners in one group holding every partition", async () => {
  const s = await fakeSubject();
  try {
    const r = await prepareRunner(s, { partitions: 4 });
    const westId = s.world.control.addDaemon("west");
    const west = s.world.endpoint("west");
    assert.notEqual(westId, await s.docker.daemonId());
    assert.equal(await west.docker.daemonId(), westId);
    // the seeded network and the runner image are there too, the network under its own ID
    const net = await west.docker.networkId(s.network);
    assert.ok(net !== null && net !== await s.docker.networkId(s.network));
    assert.ok(await west.docker.inspectImage(s.runnerImage));
    // an endpoint the world has no daemon of is the default one (where single runners run)
    assert.equal(await s.world.endpoint("east").docker.daemonId(), await s.docker.daemonId());

    const volume1 = instanceVolumeName(r.applicationId, 1);
    const spec1 = { ...r.spec, name: instanceContainerName(r.spec.name, 1), volume: volume1 };
    await west.docker.createVolume(volume1, {});
    west.control.writeVolumeFile(volume1, INSTANCE_REL, `${crypto.randomUUID()}\n`);
    const id0 = await s.docker.createContainer(r.spec);
    const id1 = await west.docker.createContainer(spec1);
    // each daemon sees its own only
    assert.equal(await s.docker.inspectContainer(spec1.name), null);
    assert.equal(await west.docker.inspectContainer(r.spec.name), null);
    assert.equal(await s.docker.inspectVolume(volume1), null);
    assert.equal(await west.docker.inspectVolume(r.volume), null);

    await s.docker.startContainer(id0);
    await west.docker.startContainer(id1);
    const st0 = await statusOf(s, id0);
    const st1 = await statusOf({ ...s, docker: west.docker }, id1);
    assert.equal(st0?.state, "RUNNING");
    assert.equal(st1?.state, "RUNNING");
    assert.equal(await statusOf(s, id1), null, "the other daemon's container is not here");
    const group = await s.kafka.describeGroup(r.applicationId);
    assert.equal(group.members.length, 2);
    const input = { name: r.inputTopic, partitions: 4 };
    assert.equal(notTheSetReady(group.members, [st0, st1], r.generation, input), null);
  } finally {
    await s.dispose();
  }
});

Deno.test("a daemon taken down fails every call as unreachable; its runner goes on; the others answer", async () => {
  const s = await fakeSubject();
  try {
    const r = await prepareRunner(s, { partitions: 1 });
    s.world.control.addDaemon("west");
    const west = s.world.endpoint("west");
    const id = await west.docker.createContainer(r.spec);
    await west.docker.startContainer(id);
    s.world.control.setDaemonReachable("west", false);
    await assert.rejects(
      west.docker.daemonId(),
      (e) => e instanceof SluiceError && e.code === "ENV_DOCKER_UNREACHABLE",
    );
    await assert.rejects(west.docker.inspectContainer(id), /unreachable/);
    assert.ok(await s.docker.daemonId());
    // the process does not need its daemon's API: it is still the group's member
    s.world.control.advanceClock(60_000);
    assert.equal((await s.kafka.describeGroup(r.applicationId)).members.length, 1);
    s.world.control.setDaemonReachable("west", true);
    assert.equal((await west.docker.inspectContainer(id))?.state.running, true);
  } finally {
    await s.dispose();
  }
});

Deno.test("a world without further daemons has the default one only; an unknown name is an error", () => {
  const w = emptyWorld({ seed: "x" });
  assert.deepEqual(daemonNames(w), [null]);
  assert.equal("daemons" in w, false);
  assert.throws(() => daemonOf(w, "nope"), /no Docker daemon named nope/);
});
