/**
 * Private child process of world_test.ts: opens a world file and acts on it.
 *
 *   deno run -A _world_worker.ts <world.json> build <dir>  # a started runner (plan file in dir); print the view
 *   deno run -A _world_worker.ts <world.json> observe  # print what the ports see
 *   deno run -A _world_worker.ts <world.json> produce <topic> <n>   # n one-record transactions
 *   deno run -A _world_worker.ts <world.json> lose     # remove a container, then SIGKILL itself
 * @module
 */
import { openFakeWorld } from "./fake_world.ts";
import type { FakeWorld } from "./fake_world.ts";
import { worldSubject } from "../ports/fake_subject.ts";
import { prepareRunner } from "../ports/_runner_setup.ts";

/** Everything the ports report about the world, as JSON-safe values. */
export async function view(w: FakeWorld) {
  const kafka = w.kafka(w.env.bootstrapHost);
  const topics = await kafka.describe(["wk-in", "wk-out"]);
  const containers = await w.docker.listContainers("sluice.application-id", "wk-app");
  const out = {
    daemonId: await w.docker.daemonId(),
    clusterId: topics.clusterId,
    topics: [...topics.topics.values()],
    ranges: topics.topics.has("wk-in")
      ? (await kafka.offsetRanges("wk-in", [0])).map((r) => [String(r.earliest), String(r.latest)])
      : [],
    group: await kafka.describeGroup("wk-app"),
    committed: [...(await kafka.committedOffsets("wk-app", "wk-in"))].map((
      [p, o],
    ) => [p, String(o)]),
    containers: containers.map((c) => ({
      ...c,
      mounts: [...c.mounts].sort((a, b) => a.destination.localeCompare(b.destination)),
    })),
    status: containers.length > 0 ? w.control.runnerStatus(containers[0].id) : null,
    volume: await w.docker.inspectVolume("wk-app-state"),
  };
  await kafka.close();
  return out;
}

if (import.meta.main) {
  const [path, mode, ...rest] = Deno.args;
  const world = openFakeWorld(path);
  switch (mode) {
    case "build": {
      // fixed names, so the parent knows where to look
      const names: Record<string, string> = { app: "wk-app", in: "wk-in", out: "wk-out" };
      const s = worldSubject(world, { tempDir: rest[0], unique: (w) => names[w] ?? `wk-${w}` });
      const r = await prepareRunner(s, { partitions: 1 });
      const id = await s.docker.createContainer(r.spec);
      await s.docker.startContainer(id);
      world.control.produce("wk-in", [
        { partition: 0, key: "k", value: JSON.stringify({ order_id: "k", amount: 100 }) },
      ]);
      await s.dispose();
      console.log(JSON.stringify(await view(world)));
      break;
    }
    case "observe":
      console.log(JSON.stringify(await view(world)));
      break;
    case "produce":
      for (let i = 0; i < Number(rest[1]); i++) {
        world.control.produce(rest[0], [{ partition: 0, key: `${Deno.pid}-${i}`, value: "v" }]);
      }
      break;
    case "lose": {
      const [c] = await world.docker.listContainers("sluice.application-id", "wk-app");
      await world.docker.signalTerm(c.id);
      // the call returned: its effect is durable; die before anyone hears of it
      Deno.kill(Deno.pid, "SIGKILL");
      break;
    }
    default:
      throw new Error(`unknown mode ${mode}`);
  }
}
