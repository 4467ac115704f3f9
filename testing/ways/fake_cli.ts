/**
 * The `sluice` command on a file-backed fake world, as its own OS process: `runCli` with the
 * world's Docker and Kafka ports, clock and UUID source (`SLUICE_FAKE_WORLD=<world file>`). A
 * test arms a fault site with `SLUICE_FAULT_POINT` + `SLUICE_TEST_ONLY_ALLOW_FAULTS=1` exactly
 * as on the real CLI, and the process dies by SIGKILL there; the world survives it.
 *
 * ```sh
 * SLUICE_FAKE_WORLD=/tmp/w.json deno run -A testing/ways/fake_cli.ts -o json state show --project DIR
 * ```
 * @module
 */
import { runCli } from "../../cli/main.ts";
import { openFakeWorld } from "../fakes/fake_world.ts";

const path = Deno.env.get("SLUICE_FAKE_WORLD");
if (!path) {
  console.error("SLUICE_FAKE_WORLD must name the world file");
  Deno.exit(2);
}
const world = openFakeWorld(path);
const kafka = world.kafka(world.env.bootstrapHost);
const status = await runCli(Deno.args, {
  docker: world.docker,
  // a docker.endpoints daemon is the world's daemon of that name (control.addDaemon)
  dockerEndpoint: (name) => world.endpoint(name).docker,
  kafka,
  clock: world.clock,
  uuids: world.ids,
});
await kafka.close();
Deno.exit(status);
