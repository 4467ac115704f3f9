/**
 * The Docker port contract: the behaviours of a Docker Engine that sluice's driver and
 * observer rely on, as one list of cases that the fake engine (testing/fakes) and the real
 * adapter on a real daemon (lib/providers/docker/dockerode.ts) must both pass — as Terraform's
 * `statemgr/testing.go` is for state managers. The runner cases check the simulated runner
 * against the real runner image on the real broker.
 *
 * What it pins down: exact 64-hex IDs and names; labels and environment merged with the
 * image's as Docker does; the spec's stop timeout and the image's entrypoint and command; a
 * created container is never started; create refusals change nothing; a missing volume is
 * created empty by create, so a create whose volume must exist checks it before and after and
 * undoes a create that met a vanished one (container and empty, unlabelled volume only);
 * start/TERM/remove refusals; the plan is read from the host file; container logs (tail, since, follow); the volume's instance file; the runner's status file, exit codes
 * 143/137/11/12/14/15, group membership and committed offsets through its lifecycle.
 *
 * @example
 * ```ts
 * import { DOCKER_CONTRACT } from "./docker_contract.ts";
 * import { registerContract } from "./subject.ts";
 * // registerContract("docker port (fake)", DOCKER_CONTRACT, fakeSubject);
 * ```
 * @module
 */
import assert from "node:assert/strict";
import {
  type ContainerInfo,
  DOCKER_ZERO_TIME,
  type DockerPort,
  type VolumeInfo,
} from "../../lib/providers/docker/port.ts";
import { createOnExistingVolume } from "../../lib/providers/docker/existing_volume.ts";
import { SluiceError } from "../../lib/errors.ts";
import { LABEL, RUNNER_PATHS } from "../../lib/runtime/labels.ts";
import type { ContractCase, PortSubject } from "./subject.ts";
import { eventually } from "./subject.ts";
import { INSTANCE_REL, prepareRunner, statusOf } from "./_runner_setup.ts";

const ZERO = DOCKER_ZERO_TIME;

/**
 * A container with its mounts in destination order: Docker reports them in no stable order
 * (two inspects of one container differ), so only the set is a property.
 */
function normalized(c: ContainerInfo | null): ContainerInfo | null {
  if (!c) return c;
  return {
    ...c,
    mounts: [...c.mounts].sort((a, b) => a.destination.localeCompare(b.destination)),
  };
}
const HEX64 = /^[0-9a-f]{64}$/;

/** A rejection check: a {@link SluiceError} with this code (and a message matching `message`). */
function coded(code: string, message?: RegExp): (e: unknown) => boolean {
  return (e) => {
    assert.ok(e instanceof SluiceError, `a SluiceError, not ${e}`);
    assert.equal(e.code, code, e.message);
    if (message) assert.match(e.message, message);
    return true;
  };
}

async function exited(s: PortSubject, id: string): Promise<ContainerInfo> {
  return await eventually(s, `container ${id.slice(0, 12)} to exit`, async () => {
    const c = await s.docker.inspectContainer(id);
    return c?.state.status === "exited" ? c : undefined;
  });
}

async function runningStatus(s: PortSubject, id: string, generation: string) {
  return await eventually(s, `runner ${id.slice(0, 12)} to report RUNNING`, async () => {
    const c = await s.docker.inspectContainer(id);
    if (c?.state.status === "exited") {
      throw new Error(`exited ${c.state.exitCode}: ${JSON.stringify(await statusOf(s, id))}`);
    }
    const st = await statusOf(s, id);
    return st?.state === "RUNNING" && st.generation === generation ? st : undefined;
  });
}

/** A runner that must exit before RUNNING: its exit, status and the group afterwards. */
async function failsBeforeRunning(
  s: PortSubject,
  options: Parameters<typeof prepareRunner>[1],
  code: number,
  reasons: string[],
) {
  const r = await prepareRunner(s, options);
  const id = await s.docker.createContainer(r.spec);
  await s.docker.startContainer(id);
  const c = await exited(s, id);
  assert.equal(c.state.exitCode, code, `exit code of a runner that should fail with ${code}`);
  assert.equal(c.state.oomKilled, false);
  const st = await statusOf(s, id);
  assert.equal(st?.state, "FAILED");
  assert.equal(st?.exit_code, code);
  assert.ok(reasons.includes(String(st?.reason)), `reason ${st?.reason} is one of ${reasons}`);
  assert.equal(st?.running_at, null, "it never reached RUNNING");
  const g = await s.kafka.describeGroup(r.applicationId);
  assert.deepEqual(g.members, [], "it never joined the group");
  await s.docker.removeContainer(id);
  return { r, st };
}

/** The cases, in the order they are registered. */
export const DOCKER_CONTRACT: readonly ContractCase[] = [
  {
    name: "the daemon ID is stable; images and networks resolve by ID, absent ones are null",
    async run(s) {
      const id = await s.docker.daemonId();
      assert.match(id, /\S/);
      assert.equal(await s.docker.daemonId(), id);
      const image = await s.docker.inspectImage(s.runnerImage);
      assert.equal(image?.id, s.runnerImage);
      assert.ok(image.env.some((e) => e.startsWith("PATH=")), "the image has its environment");
      assert.ok(image.entrypoint.length > 0);
      assert.equal(image.labels["sluice.image"], "runner");
      assert.equal(await s.docker.inspectImage(`sha256:${"0".repeat(64)}`), null);
      const net = await s.docker.networkId(s.network);
      assert.match(net ?? "", HEX64);
      assert.equal(await s.docker.networkId(net!), net, "a network resolves by its own ID");
      assert.equal(await s.docker.networkId(s.unique("no-net")), null);
      assert.equal(await s.docker.inspectVolume(s.unique("no-vol")), null);
      assert.equal(await s.docker.inspectContainer(s.unique("no-container")), null);
      assert.equal(await s.docker.readContainerFile("0".repeat(64), RUNNER_PATHS.plan), null);
    },
  },
  {
    name:
      "a volume keeps its labels and starts empty; creating it again is refused and changes nothing",
    async run(s) {
      const name = s.unique("vol");
      const uuid = crypto.randomUUID();
      const labels = { ...s.labels, [LABEL.volumeInstance]: uuid };
      await s.docker.createVolume(name, labels);
      const v = await s.docker.inspectVolume(name);
      assert.equal(v?.name, name);
      assert.deepEqual(v.labels, labels);
      assert.ok(!Number.isNaN(Date.parse(v.createdAt)), `createdAt ${v.createdAt}`);
      assert.equal(
        await s.readVolumeFile(name, INSTANCE_REL),
        null,
        "no file until one is written",
      );
      await assert.rejects(
        s.docker.createVolume(name, { ...labels, [LABEL.volumeInstance]: "other" }),
        (e: Error & { code?: string }) => e.code === "BLOCKED_VOLUME_EXISTS",
      );
      assert.deepEqual((await s.docker.inspectVolume(name))?.labels, labels);
    },
  },
  {
    name:
      "a file written into a never-started container lands on its volume: seen through every mount, it outlives the container; the read-only plan is refused",
    async run(s) {
      const r = await prepareRunner(s);
      const id = await s.docker.createContainer(r.spec);
      const written = new TextEncoder().encode("written-through-the-mount\n");
      await s.docker.writeContainerFile(id, `${RUNNER_PATHS.volume}/probe`, written);
      assert.equal(
        (await s.docker.inspectContainer(id))?.state.status,
        "created",
        "still never started",
      );
      assert.deepEqual(
        await s.docker.readContainerFile(id, `${RUNNER_PATHS.volume}/probe`),
        written,
      );
      const other = await s.docker.createContainer({ ...r.spec, name: s.unique("other") });
      assert.deepEqual(
        await s.docker.readContainerFile(other, `${RUNNER_PATHS.volume}/probe`),
        written,
        "the other container mounting the volume sees it",
      );
      await assert.rejects(
        s.docker.writeContainerFile(id, RUNNER_PATHS.plan, written),
        Error,
        "the plan is a read-only bind mount",
      );
      assert.deepEqual(
        await s.docker.readContainerFile(id, RUNNER_PATHS.plan),
        await Deno.readFile(r.planPath),
      );
      await s.docker.removeContainer(id);
      await s.docker.removeContainer(other);
      assert.equal(await s.readVolumeFile(r.volume, "probe"), "written-through-the-mount\n");
      assert.equal(await s.readVolumeFile(r.volume, INSTANCE_REL), r.instance + "\n");
    },
  },
  {
    name:
      "project-wide reads: one listing of the containers with a label among values (inspected), one of the volumes by exact name",
    async run(s) {
      const a = await prepareRunner(s);
      const b = await prepareRunner(s);
      const c = await prepareRunner(s);
      const ia = await s.docker.createContainer(a.spec);
      const ib = await s.docker.createContainer(b.spec);
      const ib2 = await s.docker.createContainer({ ...b.spec, name: s.unique("b2") });
      const ic = await s.docker.createContainer(c.spec);
      const listed = await s.docker.listContainersLabelled(LABEL.applicationId, [
        a.applicationId,
        b.applicationId,
        s.unique("nobody"),
      ]);
      assert.deepEqual(
        listed.map((x) => x.id).sort(),
        [ia, ib, ib2].sort(),
        "only the asked label values",
      );
      for (const x of listed) {
        assert.deepEqual(normalized(x), normalized(await s.docker.inspectContainer(x.id)));
      }
      assert.deepEqual(await s.docker.listContainersLabelled(LABEL.applicationId, []), []);
      const absent = s.unique("no-vol");
      const vols = await s.docker.listVolumes([a.volume, b.volume, absent, a.volume.slice(0, -2)]);
      assert.deepEqual([...vols.keys()].sort(), [a.volume, b.volume].sort());
      assert.deepEqual(vols.get(a.volume), await s.docker.inspectVolume(a.volume));
      assert.equal((await s.docker.listVolumes([])).size, 0);
      for (const id of [ia, ib, ib2, ic]) await s.docker.removeContainer(id);
    },
  },
  {
    name:
      "create makes one never-started container: exact ID and name, merged labels and environment, mounts, options",
    async run(s) {
      const r = await prepareRunner(s);
      const image = (await s.docker.inspectImage(s.runnerImage))!;
      const spec = { ...r.spec, env: ["SLUICE_EXTRA=1", "PATH=/custom"] };
      const id = await s.docker.createContainer(spec);
      assert.match(id, HEX64);
      const c = await s.docker.inspectContainer(id);
      assert.ok(c);
      assert.equal(c.id, id);
      assert.equal(c.name, spec.name);
      assert.deepEqual(normalized(await s.docker.inspectContainer(spec.name)), normalized(c));
      assert.equal((await s.docker.inspectContainer(id.slice(0, 16)))?.id, id, "by ID prefix");
      assert.equal(c.imageId, s.runnerImage);
      // the image's labels are inherited; the container's own win
      assert.deepEqual(c.labels, { ...image.labels, ...spec.labels });
      // the container's variables first, then the image's it does not override
      const own = new Set(spec.env.map((e) => e.split("=")[0]));
      assert.deepEqual(c.env, [
        ...spec.env,
        ...image.env.filter((e) => !own.has(e.split("=")[0])),
      ]);
      assert.deepEqual(c.entrypoint, image.entrypoint);
      assert.deepEqual(c.state, {
        status: "created",
        running: false,
        exitCode: 0,
        oomKilled: false,
        startedAt: ZERO,
        finishedAt: ZERO,
        error: "",
      });
      assert.equal(c.networkMode, s.network);
      assert.deepEqual(c.networks, { [s.network]: "" }, "no network ID before the first start");
      const mounts = [...c.mounts].sort((a, b) => a.destination.localeCompare(b.destination));
      assert.deepEqual(mounts, [
        { type: "bind", source: r.planPath, destination: RUNNER_PATHS.plan, readOnly: true },
        { type: "volume", source: r.volume, destination: RUNNER_PATHS.volume, readOnly: false },
      ]);
      assert.equal(c.restartPolicy, "no");
      assert.equal(c.memory, spec.memoryBytes);
      assert.ok(!Number.isNaN(Date.parse(c.createdAt)));
      // files without exec, before any start: the host's plan bytes and the volume's instance
      assert.deepEqual(
        await s.docker.readContainerFile(id, RUNNER_PATHS.plan),
        await Deno.readFile(r.planPath),
      );
      assert.equal(
        new TextDecoder().decode(
          (await s.docker.readContainerFile(id, RUNNER_PATHS.instanceFile))!,
        ),
        r.instance + "\n",
      );
      assert.equal(await s.docker.readContainerFile(id, RUNNER_PATHS.statusFile), null);
      assert.equal(await s.docker.readContainerFile(id, "/no/such/file"), null);
      // listed under its labels only
      const listed = await s.docker.listContainers(LABEL.applicationId, r.applicationId);
      assert.deepEqual(listed.map((x) => x.id), [id]);
      assert.deepEqual(await s.docker.listContainers(LABEL.applicationId, s.unique("none")), []);
      // the plan is a bind mount: the container sees the host file as it is now
      await Deno.writeTextFile(r.planPath, "changed");
      assert.equal(
        new TextDecoder().decode((await s.docker.readContainerFile(id, RUNNER_PATHS.plan))!),
        "changed",
      );
      await s.docker.removeContainer(id);
    },
  },
  {
    name:
      "a created container reports the spec's stop timeout and the image's entrypoint and command",
    async run(s) {
      const r = await prepareRunner(s);
      const image = (await s.docker.inspectImage(s.runnerImage))!;
      assert.ok(Array.isArray(image.cmd), "the image reports its command");
      // not the value sluice pins: the port reports what the spec asked for
      const spec = { ...r.spec, stopTimeoutSeconds: r.spec.stopTimeoutSeconds + 7 };
      const id = await s.docker.createContainer(spec);
      const c = (await s.docker.inspectContainer(id))!;
      assert.equal(c.stopTimeout, spec.stopTimeoutSeconds);
      assert.deepEqual(c.entrypoint, image.entrypoint);
      assert.deepEqual(c.cmd, image.cmd);
      const [listed] = await s.docker.listContainersLabelled(LABEL.applicationId, [
        r.applicationId,
      ]);
      assert.equal(listed.stopTimeout, spec.stopTimeoutSeconds, "a listing reports it too");
      assert.deepEqual(listed.cmd, image.cmd);
      await s.docker.removeContainer(id);
    },
  },
  {
    name: "create refuses a duplicate name and a missing image, and changes nothing",
    async run(s) {
      const r = await prepareRunner(s);
      const id = await s.docker.createContainer(r.spec);
      const before = normalized(await s.docker.inspectContainer(id));
      await assert.rejects(
        s.docker.createContainer({ ...r.spec, labels: { ...r.spec.labels, other: "1" } }),
        /already in use/,
      );
      assert.deepEqual(normalized(await s.docker.inspectContainer(id)), before);
      const missing = { ...r.spec, name: s.unique("no-image"), image: `sha256:${"0".repeat(64)}` };
      await assert.rejects(s.docker.createContainer(missing), /No such image/);
      assert.equal(await s.docker.inspectContainer(missing.name), null);
      const listed = await s.docker.listContainers(LABEL.applicationId, r.applicationId);
      assert.deepEqual(listed.map((x) => x.id), [id]);
      await s.docker.removeContainer(id);
    },
  },
  {
    name: "create naming a missing volume creates it empty and unlabelled (no instance file)",
    async run(s) {
      const r = await prepareRunner(s);
      const volume = s.unique("implicit-vol");
      assert.equal(await s.docker.inspectVolume(volume), null);
      const id = await s.docker.createContainer({ ...r.spec, name: s.unique("c"), volume });
      const v = await s.docker.inspectVolume(volume);
      assert.equal(v?.name, volume);
      assert.deepEqual(v.labels, {});
      assert.equal(await s.docker.readContainerFile(id, RUNNER_PATHS.instanceFile), null);
      assert.equal(
        await s.readVolumeFile(volume, INSTANCE_REL),
        null,
      );
      await s.docker.removeContainer(id);
    },
  },
  {
    name:
      "a create whose volume must exist refuses a missing one or another instance, leaving no container and no volume",
    async run(s) {
      const r = await prepareRunner(s);
      const instance = { [LABEL.volumeInstance]: r.instance };
      const before = await s.docker.inspectVolume(r.volume);
      // positive control: on its own volume the create happens and the volume is untouched
      const id = await createOnExistingVolume(s.docker, r.spec, instance);
      assert.equal((await s.docker.inspectContainer(id))?.name, r.spec.name);
      assert.deepEqual(await s.docker.inspectVolume(r.volume), before);
      await s.docker.removeContainer(id);

      const volume = s.unique("gone-vol");
      const missing = { ...r.spec, name: s.unique("c"), volume };
      await assert.rejects(
        createOnExistingVolume(s.docker, missing, instance),
        coded("BLOCKED_VOLUME_MISSING"),
      );
      assert.equal(await s.docker.inspectContainer(missing.name), null, "no container");
      assert.equal(await s.docker.inspectVolume(volume), null, "no volume");

      const other = { ...r.spec, name: s.unique("c") };
      await assert.rejects(
        createOnExistingVolume(s.docker, other, { [LABEL.volumeInstance]: "another" }),
        coded("BLOCKED_VOLUME_INSTANCE_CHANGED"),
      );
      assert.equal(await s.docker.inspectContainer(other.name), null, "no container");
      assert.deepEqual(await s.docker.inspectVolume(r.volume), before);
    },
  },
  {
    name:
      "a volume removed between the check and the create: the container and the empty volume Docker's create made are removed, and the create is refused",
    async run(s) {
      const r = await prepareRunner(s);
      const instance = { [LABEL.volumeInstance]: r.instance };
      const spec = { ...r.spec, name: s.unique("c") };
      const seen: { created: string | null; volume: VolumeInfo | null; discard: string | null } = {
        created: null,
        volume: null,
        discard: null,
      };
      // the outside world removes the volume right before the create reaches the daemon
      const racing: DockerPort = {
        ...s.docker,
        createContainer: async (x) => {
          await s.removeVolume(x.volume);
          seen.created = await s.docker.createContainer(x);
          seen.volume = await s.docker.inspectVolume(x.volume);
          return seen.created;
        },
        discardCreated: async (id, v) => (seen.discard = await s.docker.discardCreated(id, v)),
      };
      await assert.rejects(
        createOnExistingVolume(racing, spec, instance),
        coded("BLOCKED_VOLUME_MISSING", /vanished during the create/),
      );
      // the race happened: the create ran and Docker made an unlabelled volume of that name
      assert.match(seen.created ?? "", HEX64);
      assert.deepEqual(seen.volume?.labels, {});
      assert.equal(seen.discard, "removed");
      assert.equal(await s.docker.inspectContainer(spec.name), null, "no container");
      assert.equal(await s.docker.inspectContainer(seen.created!), null, "no container");
      assert.equal(await s.docker.inspectVolume(r.volume), null, "no volume");
    },
  },
  {
    name:
      "undoing a create removes the container and only an empty, unlabelled volume of that creation time no other container uses",
    async run(s) {
      const r = await prepareRunner(s);
      const make = async (volume: string) => {
        const id = await s.docker.createContainer({ ...r.spec, name: s.unique("c"), volume });
        return { id, createdAt: (await s.docker.inspectVolume(volume))!.createdAt };
      };
      // sluice's own (labelled) volume: kept, with its instance file
      const own = await make(r.volume);
      assert.equal(await s.docker.discardCreated(own.id, { name: r.volume, ...own }), "labelled");
      assert.equal(await s.docker.inspectContainer(own.id), null);
      assert.equal(await s.readVolumeFile(r.volume, INSTANCE_REL), r.instance + "\n");
      // written to: kept
      const written = s.unique("written-vol");
      const w = await make(written);
      const probe = `${RUNNER_PATHS.volume}/probe`;
      await s.docker.writeContainerFile(w.id, probe, new TextEncoder().encode("data\n"));
      assert.equal(await s.docker.discardCreated(w.id, { name: written, ...w }), "not_empty");
      assert.equal(await s.readVolumeFile(written, "probe"), "data\n");
      await s.removeVolume(written);
      // another creation time: kept
      const later = s.unique("later-vol");
      const l = await make(later);
      const then = "2001-01-01T00:00:00Z";
      assert.equal(
        await s.docker.discardCreated(l.id, { name: later, createdAt: then }),
        "replaced",
      );
      assert.notEqual(await s.docker.inspectVolume(later), null);
      await s.removeVolume(later);
      // used by another container: kept, and so is that container
      const shared = s.unique("shared-vol");
      const a = await make(shared);
      const b = await make(shared);
      assert.equal(await s.docker.discardCreated(a.id, { name: shared, ...a }), "in_use");
      assert.equal(await s.docker.inspectContainer(a.id), null);
      assert.notEqual(await s.docker.inspectContainer(b.id), null);
      // its last user undone: removed
      assert.equal(await s.docker.discardCreated(b.id, { name: shared, ...b }), "removed");
      assert.equal(await s.docker.inspectContainer(b.id), null);
      assert.equal(await s.docker.inspectVolume(shared), null);
    },
  },
  {
    name:
      "removing an owned volume: refused while a container mounts it or when its labels differ (nothing removed), removed once unused, then absent",
    async run(s) {
      const r = await prepareRunner(s);
      const owner = {
        [LABEL.managedBy]: "sluice",
        [LABEL.applicationId]: r.applicationId,
        [LABEL.volumeInstance]: r.instance,
      };
      // a created (never started) container mounts it: in use
      const id = await s.docker.createContainer(r.spec);
      await assert.rejects(
        s.docker.removeOwnedVolume(r.volume, owner),
        coded("BLOCKED_VOLUME_IN_USE", new RegExp(`volume ${r.volume} is mounted by`)),
      );
      assert.notEqual(await s.docker.inspectContainer(id), null, "the container stays");
      await s.docker.removeContainer(id);
      // another instance under that name: not the owned volume
      await assert.rejects(
        s.docker.removeOwnedVolume(r.volume, { ...owner, [LABEL.volumeInstance]: "other" }),
        coded("BLOCKED_VOLUME_INSTANCE_CHANGED", /sluice removes only the volume it created/),
      );
      assert.equal(await s.readVolumeFile(r.volume, INSTANCE_REL), r.instance + "\n");
      assert.equal(await s.docker.removeOwnedVolume(r.volume, owner), "removed");
      assert.equal(await s.docker.inspectVolume(r.volume), null);
      // a deletion whose response was lost, continued: already done
      assert.equal(await s.docker.removeOwnedVolume(r.volume, owner), "absent");
    },
  },
  {
    name:
      "start on a missing network fails and leaves the container created, exit code 128, with the error",
    async run(s) {
      const r = await prepareRunner(s);
      const network = s.unique("no-net");
      const id = await s.docker.createContainer({ ...r.spec, network });
      await assert.rejects(s.docker.startContainer(id), /not found/);
      const c = await s.docker.inspectContainer(id);
      assert.equal(c?.state.status, "created");
      assert.equal(c.state.running, false);
      assert.equal(c.state.exitCode, 128);
      assert.match(c.state.error, new RegExp(`network ${network} not found`));
      assert.equal(c.state.startedAt, ZERO);
      await s.docker.removeContainer(id);
    },
  },
  {
    name:
      "TERM of a never-started container is refused; remove keeps the volume; a removed container is gone",
    async run(s) {
      const r = await prepareRunner(s);
      const id = await s.docker.createContainer(r.spec);
      await assert.rejects(s.docker.signalTerm(id), /is not running/);
      assert.equal((await s.docker.inspectContainer(id))?.state.status, "created");
      await s.docker.removeContainer(id);
      assert.equal(await s.docker.inspectContainer(id), null);
      assert.equal(await s.docker.readContainerFile(id, RUNNER_PATHS.plan), null);
      await assert.rejects(s.docker.startContainer(id), /No such container/);
      await assert.rejects(s.docker.removeContainer(id), /No such container/);
      assert.equal(
        await s.readVolumeFile(r.volume, INSTANCE_REL),
        r.instance + "\n",
        "the volume and its instance file outlive the container",
      );
    },
  },
  {
    name:
      "runner lifecycle: RUNNING with one member, processing commits, refusals while running, TERM → 143 CLOSED and Empty, restart",
    async run(s) {
      const r = await prepareRunner(s, { partitions: 2 });
      const id = await s.docker.createContainer(r.spec);
      await s.docker.startContainer(id);
      const started = (await s.docker.inspectContainer(id))!;
      assert.equal(started.state.running, true);
      assert.equal(started.state.status, "running");
      assert.notEqual(started.state.startedAt, ZERO);
      assert.equal(started.state.finishedAt, ZERO);
      assert.equal(started.networks[s.network], await s.docker.networkId(s.network));

      const st = await runningStatus(s, id, r.generation);
      assert.equal(st.format, "sluice.runner-status");
      assert.equal(st.plan_sha256, r.planSha256);
      assert.equal(st.application_id, r.applicationId);
      assert.equal(st.exit_code, null);
      assert.ok(typeof st.running_at === "string");
      const g = await eventually(s, "one group member", async () => {
        const g = await s.kafka.describeGroup(r.applicationId);
        return g.members.length === 1 && g.state === "Stable" ? g : undefined;
      });
      assert.equal(g.groupId, r.applicationId);

      // the runner processes what is produced and commits it
      await s.produce(r.inputTopic, [
        { partition: 0, key: "o-1", value: JSON.stringify({ order_id: "o-1", amount: 150 }) },
        { partition: 0, key: "o-2", value: JSON.stringify({ order_id: "o-2", amount: 50 }) },
        { partition: 1, key: "o-3", value: JSON.stringify({ order_id: "o-3", amount: 300 }) },
      ]);
      await eventually(s, "offsets committed up to the latest", async () => {
        const c = await s.kafka.committedOffsets(r.applicationId, r.inputTopic);
        return c.get(0) === 2n && c.get(1) === 1n ? c : undefined;
      });
      // filtered (amount >= 100) and projected in SELECT order, keyed as the input
      const out = await eventually(s, "two output records", async () => {
        const got = await s.records(r.outputTopic, 2);
        return got.length >= 2 ? got : undefined;
      });
      assert.deepEqual(
        out.map((x) => [x.key, x.value]).sort(),
        [
          ["o-1", '{"order_id":"o-1","amount":150}'],
          ["o-3", '{"order_id":"o-3","amount":300}'],
        ],
      );

      // refusals while it runs: a second start, a remove (never forced), new offsets
      await assert.rejects(s.docker.startContainer(id), /already started/);
      await assert.rejects(s.docker.removeContainer(id), /running container/);
      await assert.rejects(
        s.kafka.setGroupOffsets(r.applicationId, r.inputTopic, new Map([[0, 0n]])),
      );
      assert.deepEqual(
        await s.kafka.committedOffsets(r.applicationId, r.inputTopic),
        new Map([[0, 2n], [1, 1n]]),
      );

      await s.docker.signalTerm(id);
      const closed = await exited(s, id);
      assert.equal(closed.state.exitCode, 143, "TERM is a clean close with the raw code 143");
      assert.equal(closed.state.oomKilled, false);
      assert.equal(closed.state.startedAt, started.state.startedAt);
      assert.ok(Date.parse(closed.state.finishedAt) >= Date.parse(closed.state.startedAt));
      assert.equal(closed.networks[s.network], started.networks[s.network], "kept after exit");
      const after = await statusOf(s, id);
      assert.equal(after?.state, "CLOSED");
      assert.equal(after?.exit_code, 143);
      assert.equal(after?.reason, "SIGTERM");
      assert.equal(after?.generation, r.generation);
      const empty = await eventually(s, "group Empty", async () => {
        const g = await s.kafka.describeGroup(r.applicationId);
        return g.state === "Empty" ? g : undefined;
      });
      assert.deepEqual(empty.members, []);
      assert.deepEqual(
        await s.kafka.committedOffsets(r.applicationId, r.inputTopic),
        new Map([[0, 2n], [1, 1n]]),
        "offsets are retained by the closed group",
      );
      await assert.rejects(s.docker.signalTerm(id), /is not running/);

      // started again: running with exit code 0, FinishedAt of the last run, RUNNING again
      await s.docker.startContainer(id);
      const again = (await s.docker.inspectContainer(id))!;
      assert.equal(again.state.running, true);
      assert.equal(again.state.exitCode, 0);
      assert.equal(again.state.finishedAt, closed.state.finishedAt);
      assert.ok(Date.parse(again.state.startedAt) >= Date.parse(closed.state.finishedAt));
      await runningStatus(s, id, r.generation);
      await s.docker.signalTerm(id);
      assert.equal((await exited(s, id)).state.exitCode, 143);
      await s.docker.removeContainer(id);
      assert.equal(
        await s.readVolumeFile(r.volume, INSTANCE_REL),
        r.instance + "\n",
      );
    },
  },
  {
    name:
      "waits block on the daemon: exit (at once when never started, after TERM when running), the runner's stdout marker since its start; a timeout changes nothing",
    async run(s) {
      const r = await prepareRunner(s, { partitions: 1 });
      assert.equal(await s.docker.awaitExit(s.unique("no-container"), 1_000), "absent");
      const id = await s.docker.createContainer(r.spec);
      assert.equal(await s.docker.awaitExit(id, s.eventuallyMs), "stopped", "never started");
      await s.docker.startContainer(id);
      const since = (await s.docker.inspectContainer(id))!.state.startedAt;
      const marker = `SLUICE_RUNNER_STATE RUNNING ${r.generation} `;
      assert.equal(await s.docker.awaitOutputLine(id, [marker], since, s.eventuallyMs), "line");
      assert.equal((await statusOf(s, id))?.state, "RUNNING", "the status file comes first");
      assert.equal(await s.docker.awaitExit(id, 300), "timeout");
      assert.equal(await s.docker.awaitOutputLine(id, ["NO SUCH LINE"], since, 300), "timeout");
      assert.equal((await s.docker.inspectContainer(id))?.state.running, true, "still running");
      await s.docker.signalTerm(id);
      assert.equal(await s.docker.awaitExit(id, s.eventuallyMs), "stopped");
      assert.equal((await s.docker.inspectContainer(id))?.state.exitCode, 143);
      // on a stopped container: an earlier line since the time is found, else it has stopped
      assert.equal(await s.docker.awaitOutputLine(id, [marker], since, s.eventuallyMs), "line");
      assert.equal(
        await s.docker.awaitOutputLine(id, ["NO SUCH LINE"], since, s.eventuallyMs),
        "stopped",
      );
      await s.docker.removeContainer(id);
      assert.equal(await s.docker.awaitExit(id, 1_000), "absent");
      assert.equal(await s.docker.awaitOutputLine(id, [marker], since, 1_000), "absent");
    },
  },
  {
    name:
      "container logs: the lines so far (the last N with tail, none before since), a followed read that ends when the container stops, absent for no container",
    async run(s) {
      const r = await prepareRunner(s, { partitions: 1 });
      const none: string[] = [];
      const absent = await s.docker.containerLogs(s.unique("no-container"), {}, (l) => {
        none.push(l.line);
      });
      assert.equal(absent, "absent");
      const id = await s.docker.createContainer(r.spec);
      await s.docker.startContainer(id);
      await runningStatus(s, id, r.generation);
      const marker = `SLUICE_RUNNER_STATE RUNNING ${r.generation} `;
      const read = async (options: Parameters<typeof s.docker.containerLogs>[1]) => {
        const lines: Array<{ stream: string; line: string }> = [];
        const end = await s.docker.containerLogs(id, options, (l) => lines.push(l));
        return { end, lines };
      };
      const all = await eventually(s, "the RUNNING marker in the logs", async () => {
        const got = await read({});
        return got.lines.some((l) => l.line.startsWith(marker)) ? got : undefined;
      });
      assert.equal(all.end, "done");
      const stdout = all.lines.filter((l) => l.stream === "stdout");
      const last = await read({ tail: 1 });
      assert.equal(last.lines.length, 1);
      assert.deepEqual(last.lines[0], all.lines.at(-1));
      assert.deepEqual((await read({ tail: 0 })).lines, []);
      const later = new Date(
        Date.parse(
          (await s.docker.inspectContainer(id))!.state.startedAt,
        ) + 3_600_000,
      ).toISOString();
      assert.deepEqual((await read({ since: later })).lines, [], "nothing written an hour later");
      assert.ok(stdout.some((l) => l.line.startsWith(marker)));
      // a followed read ends by itself when the container stops
      const followed = read({ follow: true, tail: 0 });
      await s.docker.signalTerm(id);
      assert.equal((await followed).end, "stopped");
      assert.equal((await exited(s, id)).state.exitCode, 143);
      // an aborted followed read of a stopped container ends at once
      const ac = new AbortController();
      ac.abort();
      assert.equal((await read({ follow: true, signal: ac.signal })).end, "aborted");
      await s.docker.removeContainer(id);
    },
  },
  {
    name: "SIGKILL exits 137 and leaves the status file as it was",
    async run(s) {
      const r = await prepareRunner(s, { partitions: 1 });
      const id = await s.docker.createContainer(r.spec);
      await s.docker.startContainer(id);
      const st = await runningStatus(s, id, r.generation);
      await s.killContainer(id);
      const c = await exited(s, id);
      assert.equal(c.state.exitCode, 137);
      assert.equal(c.state.oomKilled, false);
      assert.deepEqual(await statusOf(s, id), st, "a killed runner writes nothing");
      await s.docker.removeContainer(id);
    },
  },
  {
    name: "a runner whose SLUICE_PLAN_SHA256 differs from the plan exits 11 before RUNNING",
    async run(s) {
      const { st } = await failsBeforeRunning(s, { planSha256Env: "f".repeat(64) }, 11, [
        "PLAN_SHA256_MISMATCH",
      ]);
      assert.equal(st?.plan_sha256, null, "the plan was not accepted");
    },
  },
  {
    name: "a runner whose group has no committed offsets exits 14 before RUNNING",
    async run(s) {
      const { r, st } = await failsBeforeRunning(s, { skipOffsets: true }, 14, [
        "OFFSETS_MISSING",
      ]);
      assert.equal(st?.plan_sha256, r.planSha256);
      assert.deepEqual(await s.kafka.committedOffsets(r.applicationId, r.inputTopic), new Map());
    },
  },
  {
    name: "a runner whose plan names another input topic ID exits 12 before RUNNING",
    async run(s) {
      await failsBeforeRunning(s, { inputTopicId: "AAAAAAAAAAAAAAAAAAAAAQ" }, 12, [
        "IDENTITY_TOPIC_MISMATCH",
      ]);
    },
  },
  {
    name: "a runner that cannot reach the broker exits 15 before RUNNING",
    async run(s) {
      await failsBeforeRunning(s, { bootstrap: s.unreachableBootstrap }, 15, [
        "KAFKA_UNREACHABLE",
        "KAFKA_ADMIN_FAILED",
      ]);
    },
  },
  {
    name:
      "a record that does not decode stops the runner (exit 13); the committed offset stays before it",
    async run(s) {
      const r = await prepareRunner(s, { partitions: 1 });
      const id = await s.docker.createContainer(r.spec);
      await s.docker.startContainer(id);
      await runningStatus(s, id, r.generation);
      await s.produce(r.inputTopic, [
        { partition: 0, key: "o-1", value: JSON.stringify({ order_id: "o-1", amount: 150 }) },
      ]);
      await eventually(s, "o-1 committed", async () => {
        const c = await s.kafka.committedOffsets(r.applicationId, r.inputTopic);
        return c.get(0) === 1n ? c : undefined;
      });
      await s.produce(r.inputTopic, [
        { partition: 0, key: "o-2", value: JSON.stringify({ order_id: "o-2" }) },
        { partition: 0, key: "o-3", value: JSON.stringify({ order_id: "o-3", amount: 300 }) },
      ]);
      const c = await exited(s, id);
      assert.equal(c.state.exitCode, 13);
      const st = await statusOf(s, id);
      assert.equal(st?.state, "FAILED");
      assert.equal(st?.reason, "DECODE_MISSING_FIELD");
      assert.ok(String(st?.detail).includes(`${r.inputTopic}-0@1`), String(st?.detail));
      assert.deepEqual(
        await s.kafka.committedOffsets(r.applicationId, r.inputTopic),
        new Map([[0, 1n]]),
      );
      const out = await s.records(r.outputTopic, 1);
      assert.deepEqual(out.map((x) => x.key), ["o-1"], "nothing after the bad record");
      await s.docker.removeContainer(id);
    },
  },
  {
    name:
      "a runner whose committed offset fell below the retained records exits 15 and resets nothing",
    async run(s) {
      const r = await prepareRunner(s, { partitions: 1 });
      await s.produce(r.inputTopic, [
        { partition: 0, key: "o-1", value: JSON.stringify({ order_id: "o-1", amount: 150 }) },
        { partition: 0, key: "o-2", value: JSON.stringify({ order_id: "o-2", amount: 250 }) },
      ]);
      await s.deleteRecords(r.inputTopic, 0, 2n);
      const id = await s.docker.createContainer(r.spec);
      await s.docker.startContainer(id);
      const c = await exited(s, id);
      assert.equal(c.state.exitCode, 15);
      assert.equal((await statusOf(s, id))?.state, "FAILED");
      assert.deepEqual(
        await s.kafka.committedOffsets(r.applicationId, r.inputTopic),
        new Map([[0, 0n]]),
      );
      assert.deepEqual(await s.records(r.outputTopic, 0), []);
      await s.docker.removeContainer(id);
    },
  },
];
