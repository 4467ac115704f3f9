// The fake engine's behaviour beyond the port contract: failure hooks, lost responses, the
// mutation log, unordered mounts, controls.
import assert from "node:assert/strict";
import { LABEL } from "../../lib/runtime/labels.ts";
import { fakeSubject } from "../ports/fake_subject.ts";
import type { FakeSubject } from "../ports/fake_subject.ts";
import { prepareRunner } from "../ports/_runner_setup.ts";
import { FakeProviderError } from "./_port_call.ts";

async function withSubject(fn: (s: FakeSubject) => Promise<void>) {
  const s = await fakeSubject();
  try {
    await fn(s);
  } finally {
    await s.dispose();
  }
}

const ops = (s: FakeSubject) => s.world.control.mutations().map((m) => `${m.by}:${m.op}:${m.key}`);

Deno.test("a lost create response: the container exists with its labels, the caller got an error", async () => {
  await withSubject(async (s) => {
    const r = await prepareRunner(s);
    s.world.control.failCall("createContainer", { match: r.spec.name, effect: "lose_response" });
    const error = await s.docker.createContainer(r.spec).then(() => null, (e) => e);
    assert.ok(error instanceof FakeProviderError && error.injected, String(error));
    const found = await s.docker.inspectContainer(r.spec.name);
    assert.match(found?.id ?? "", /^[0-9a-f]{64}$/);
    assert.equal(found?.labels[LABEL.generation], r.generation);
    // the hook was used once: the next identical create is refused as a duplicate
    await assert.rejects(s.docker.createContainer(r.spec), /already in use/);
  });
});

Deno.test("an injected failure applies nothing; a hook matches its key only and counts down", async () => {
  await withSubject(async (s) => {
    const r = await prepareRunner(s);
    const id = await s.docker.createContainer(r.spec);
    s.world.control.failCall("startContainer", { match: "someone-else", times: 1 });
    s.world.control.failCall("startContainer", { match: id, times: 2 });
    await assert.rejects(s.docker.startContainer(id), /injected/);
    await assert.rejects(s.docker.startContainer(id), /injected/);
    assert.equal((await s.docker.inspectContainer(id))?.state.status, "created");
    assert.ok(!ops(s).includes(`docker:startContainer:${id}`), "a refused call is not logged");
    await s.docker.startContainer(id);
    assert.equal((await s.docker.inspectContainer(id))?.state.running, true);
    const left = s.world.control.snapshot().hooks;
    assert.deepEqual(left.map((h) => h.kind === "call" && h.match), ["someone-else"]);
  });
});

Deno.test("the mutation log has every applied mutation in order and no read", async () => {
  await withSubject(async (s) => {
    const r = await prepareRunner(s);
    const id = await s.docker.createContainer(r.spec);
    await s.docker.inspectContainer(id);
    await s.docker.listContainers(LABEL.applicationId, r.applicationId);
    await s.docker.startContainer(id);
    await s.docker.signalTerm(id);
    await s.docker.inspectContainer(id); // the runner exits at this step of the world
    await s.docker.removeContainer(id);
    const log = s.world.control.mutations();
    assert.deepEqual(log.map((m) => m.seq), log.map((_, i) => i + 1));
    assert.deepEqual(
      ops(s).filter((o) => o.startsWith("docker:") || o.startsWith("runner:")),
      [
        `docker:createVolume:${r.volume}`,
        `docker:createContainer:${r.spec.name}`,
        `docker:startContainer:${id}`,
        `runner:RUNNING:${id}`,
        `docker:signalTerm:${id}`,
        `runner:exit 143:${id}`,
        `docker:removeContainer:${id}`,
      ],
    );
  });
});

Deno.test("mounts come in no fixed order, as Docker reports them", async () => {
  await withSubject(async (s) => {
    const r = await prepareRunner(s);
    const id = await s.docker.createContainer(r.spec);
    const orders = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const c = await s.docker.inspectContainer(id);
      orders.add(c!.mounts.map((m) => m.destination).join(","));
    }
    assert.equal(orders.size, 2);
  });
});

Deno.test("an ambiguous ID prefix is refused; a volume in use cannot be removed; a foreign volume has no instance", async () => {
  await withSubject(async (s) => {
    const r = await prepareRunner(s);
    // 17 IDs: two of them share their first hex digit (16 digits)
    const ids: string[] = [];
    for (let i = 0; i < 17; i++) {
      ids.push(await s.docker.createContainer({ ...r.spec, name: s.unique("c") }));
    }
    const [a, b] = ids.flatMap((x, i) =>
      ids.slice(i + 1).filter((y) => y[0] === x[0]).map((y) => [x, y])
    )[0];
    assert.equal((await s.docker.inspectContainer(a.slice(0, 12)))?.id, a);
    await assert.rejects(s.docker.inspectContainer(a[0]), /ambiguous/);
    assert.notEqual(a, b);
    assert.throws(() => s.world.control.removeVolume(r.volume), /in use/);
    for (const id of ids) await s.docker.removeContainer(id);
    s.world.control.removeVolume(r.volume);
    assert.equal(await s.docker.inspectVolume(r.volume), null);
    s.world.control.createForeignVolume(r.volume, { [LABEL.volumeInstance]: "forged" });
    assert.equal(await s.readVolumeFile(r.volume, "instance-id"), null);
  });
});

Deno.test("a tampered instance file is what the container reads", async () => {
  await withSubject(async (s) => {
    const r = await prepareRunner(s);
    const id = await s.docker.createContainer(r.spec);
    s.world.control.writeVolumeFile(r.volume, "instance-id", "other\n");
    const bytes = await s.docker.readContainerFile(id, "/var/lib/sluice/instance-id");
    assert.equal(new TextDecoder().decode(bytes!), "other\n");
  });
});

Deno.test("reconfigureContainer changes only the options it names, as inspect reports them, logged by control", async () => {
  await withSubject(async (s) => {
    const r = await prepareRunner(s);
    const id = await s.docker.createContainer(r.spec);
    const before = (await s.docker.inspectContainer(id))!;
    assert.equal(before.stopTimeout, r.spec.stopTimeoutSeconds);
    s.world.control.reconfigureContainer(id, { stop_timeout: null, cmd: ["sh"] });
    const after = (await s.docker.inspectContainer(id))!;
    assert.equal(after.stopTimeout, null);
    assert.deepEqual(after.cmd, ["sh"]);
    assert.deepEqual(after.entrypoint, before.entrypoint);
    assert.equal(after.memory, before.memory);
    assert.equal(after.restartPolicy, before.restartPolicy);
    assert.ok(ops(s).includes(`control:reconfigureContainer:${id}`));
    assert.throws(
      () => s.world.control.reconfigureContainer("no-such", { cmd: [] }),
      /no container/,
    );
  });
});
