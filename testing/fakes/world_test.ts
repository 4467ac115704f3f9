import assert from "node:assert/strict";
import { seededIds } from "./ids.ts";
import { createFakeWorld, openFakeWorld } from "./fake_world.ts";
import {
  createWorldFile,
  emptyWorld,
  fileWorldStore,
  memoryWorldStore,
  worldClock,
  worldIds,
} from "./world.ts";
import type { WorldStore } from "./world.ts";

const WORKER = new URL("./_world_worker.ts", import.meta.url).pathname;

async function worker(
  ...args: string[]
): Promise<{ code: number; signal: string | null; out: string; err: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", WORKER, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, signal: r.signal, out: dec.decode(r.stdout), err: dec.decode(r.stderr) };
}

async function tempWorldPath(): Promise<string> {
  return `${await Deno.makeTempDir({ prefix: "sluice-world-test-" })}/world.json`;
}

for (
  const [kind, make] of [
    ["memory", () => Promise.resolve(memoryWorldStore(emptyWorld({ seed: "s", startMs: 0 })))],
    ["file", async () => {
      const path = await tempWorldPath();
      createWorldFile(path, emptyWorld({ seed: "s", startMs: 0 }));
      return fileWorldStore(path);
    }],
  ] as Array<[string, () => Promise<WorldStore>]>
) {
  Deno.test(`${kind} store: a transaction that throws keeps nothing; a nested one shares the world`, async () => {
    const store = await make();
    assert.throws(() =>
      store.transact((w) => {
        w.kafka.cluster_id = "half-done";
        throw new Error("refused");
      }), /refused/);
    assert.equal(store.read().kafka.cluster_id, "");
    const seen = store.transact((w) => {
      w.kafka.cluster_id = "outer";
      return store.transact((inner) => inner.kafka.cluster_id);
    });
    assert.equal(seen, "outer");
    assert.equal(store.read().kafka.cluster_id, "outer");
    const copy = store.read();
    copy.kafka.cluster_id = "changed outside";
    assert.equal(store.read().kafka.cluster_id, "outer", "read returns a copy");
  });

  Deno.test(`${kind} store: the world clock only moves forward and the ID source continues the seed's sequence`, async () => {
    const store = await make();
    const clock = worldClock(store);
    assert.deepEqual([clock.now(), clock.now(), clock.now()], [1, 2, 3]);
    const ids = worldIds(store);
    const expected = seededIds("s");
    assert.deepEqual([ids.uuid(), ids.uuid()], [expected.uuid(), expected.uuid()]);
    // another clock and ID source on the same store (as a fresh process would have)
    assert.equal(worldClock(store).now(), 4);
    await clock.sleep!(10_000); // a wait is world time passing
    assert.equal(worldClock(store).now(), 10_005);
    assert.equal(worldIds(store).uuid(), expected.uuid());
  });
}

Deno.test("file store: a fresh store reads exactly what the last one wrote; a second create is refused", async () => {
  const path = await tempWorldPath();
  createWorldFile(path, emptyWorld({ seed: "f" }));
  fileWorldStore(path).transact((w) => {
    w.kafka.topics.t = { id: "AAAAAAAAAAAAAAAAAAAAAQ", partitions: [] };
  });
  assert.deepEqual(fileWorldStore(path).read().kafka.topics.t, {
    id: "AAAAAAAAAAAAAAAAAAAAAQ",
    partitions: [],
  });
  assert.throws(() => createWorldFile(path, emptyWorld({ seed: "f" })), /already exists/);
  await Deno.writeTextFile(`${path}.other`, "{}");
  assert.throws(() => fileWorldStore(`${path}.other`).read(), /not a sluice.fake-world/);
});

Deno.test("the same seed and the same calls give byte-identical worlds", async () => {
  async function run(path: string) {
    const w = createFakeWorld({ seed: "replay", path });
    const kafka = w.kafka(w.env.bootstrapHost);
    await kafka.createTopic("a", 2);
    w.control.produce("a", [{ key: "x", value: "1" }, { key: "y", value: "2" }]);
    await kafka.setGroupOffsets("g", "a", new Map([[0, 0n], [1, 1n]]));
    await w.docker.createVolume("v", { l: "1", instance: w.ids.uuid() });
    return await Deno.readTextFile(path);
  }
  const a = await run(await tempWorldPath());
  const b = await run(await tempWorldPath());
  assert.equal(a, b);
  assert.notEqual(
    a,
    await (async () => {
      const w = createFakeWorld({ seed: "other", path: await tempWorldPath() });
      return await Deno.readTextFile(w.store.path!);
    })(),
  );
});

Deno.test("a world built by one process is read exactly by another", async () => {
  const path = await tempWorldPath();
  const world = createFakeWorld({ seed: "cross", path });
  const planDir = await Deno.makeTempDir();
  const built = await worker(path, "build", planDir);
  assert.equal(built.code, 0, built.err);
  const child = JSON.parse(built.out);
  // the child saw a RUNNING runner with one member that processed the record it produced
  assert.equal(child.status.state, "RUNNING");
  assert.equal(child.group.state, "Stable");
  assert.equal(child.group.members.length, 1);
  assert.deepEqual(child.committed, [[0, "1"]]);
  assert.deepEqual(child.ranges, [["0", "1"]]);
  assert.equal(child.containers.length, 1);
  // this process and a third one see the same
  const { view } = await import("./_world_worker.ts");
  assert.deepEqual(JSON.parse(JSON.stringify(await view(openFakeWorld(path)))), child);
  const observed = await worker(path, "observe");
  assert.equal(observed.code, 0, observed.err);
  assert.deepEqual(JSON.parse(observed.out), child);
  // the IDs the child drew continue the seed's sequence: this process draws fresh ones
  assert.notEqual(world.ids.uuid(), child.containers[0].id);
});

Deno.test("a process killed right after a mutation returned leaves the mutation applied (a lost response)", async () => {
  const path = await tempWorldPath();
  createFakeWorld({ seed: "lost", path });
  const planDir = await Deno.makeTempDir();
  assert.equal((await worker(path, "build", planDir)).code, 0);
  const killed = await worker(path, "lose");
  assert.equal(killed.signal, "SIGKILL");
  const after = openFakeWorld(path);
  const [c] = await after.docker.listContainers("sluice.application-id", "wk-app");
  assert.equal(c.state.status, "exited", "the TERM the dead process sent took effect");
  assert.equal(c.state.exitCode, 143);
  assert.equal(after.control.runnerStatus(c.id)?.state, "CLOSED");
  const log = after.control.mutations().map((m) => `${m.by}:${m.op}`);
  assert.ok(log.includes("docker:signalTerm"), log.join(", "));
});

Deno.test("two processes writing at once never lose each other's writes", async () => {
  const path = await tempWorldPath();
  const world = createFakeWorld({ seed: "race", path });
  await world.kafka().createTopic("race", 1);
  const [a, b] = await Promise.all([
    worker(path, "produce", "race", "150"),
    worker(path, "produce", "race", "150"),
  ]);
  assert.equal(a.code, 0, a.err);
  assert.equal(b.code, 0, b.err);
  const part = openFakeWorld(path).store.read().kafka.topics.race.partitions[0];
  assert.equal(part.latest, "300");
  assert.deepEqual(part.records.map((r) => r.offset), [...Array(300).keys()].map(String));
  assert.equal(new Set(part.records.map((r) => r.key)).size, 300);
});
