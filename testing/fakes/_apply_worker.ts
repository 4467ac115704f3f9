/**
 * Private child process of the connector journey tests: applies a plan file to a project whose
 * providers are a fake world file, in a process of its own, so that an armed fault site
 * (`SLUICE_FAULT_POINT` with `SLUICE_TEST_ONLY_ALLOW_FAULTS=1`) kills a real process.
 *
 *   deno run -A _apply_worker.ts <world.json> <project dir> <plan file>
 *
 * Prints the apply result as JSON on success; a SluiceError is printed as `{"error": {...}}`
 * with the exit status sluice gives it.
 * @module
 */
import { exitCodeFor, SluiceError } from "../../lib/errors.ts";
import { guardInventorySwitch } from "../../lib/protocol/inventory.ts";
import { readPlanFile } from "../../lib/plan/plan_file.ts";
import { apply } from "../../lib/runtime/session.ts";
import { systemClock } from "./clock.ts";
import { openFakeWorld } from "./fake_world.ts";

if (import.meta.main) {
  guardInventorySwitch();
  const [worldPath, dir, planPath] = Deno.args;
  const world = openFakeWorld(worldPath, { clock: systemClock() });
  const kafka = world.kafka(world.env.bootstrapHost);
  try {
    const file = await readPlanFile(planPath);
    const r = await apply({
      dir,
      plan: file.plan,
      planSha256: file.sha256,
      docker: world.docker,
      kafka,
      connect: () => world.connect(),
    });
    console.log(JSON.stringify({ ...r, plan: undefined }));
  } catch (e) {
    if (!(e instanceof SluiceError)) throw e;
    console.log(JSON.stringify({ error: e.toJSON() }));
    Deno.exitCode = exitCodeFor(e);
  } finally {
    await kafka.close();
  }
}
