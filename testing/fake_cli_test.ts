// The real CLI in a child process over a fake world: it sees the world's resources, and the
// fault switch kills it by SIGKILL at the armed site with the marker.
import assert from "node:assert/strict";
import { fakeCli } from "./fake_cli.ts";
import { openCaseWorld } from "./sweep/fixture.ts";

Deno.test("fake_cli runs plan, then dies at an armed site of the create journey", async () => {
  await using cw = await openCaseWorld({ backend: "local", seed: "fake-cli" });
  const plan = `${cw.project.dir}/create.plan.json`;
  const planned = await fakeCli(cw.worldPath, [
    "-o",
    "json",
    "plan",
    "--project",
    cw.project.dir,
    "--out",
    plan,
  ]);
  assert.equal(planned.code, 0, planned.stderr);
  assert.equal(planned.json?.ok, true);
  const killed = await fakeCli(cw.worldPath, [
    "apply",
    "--project",
    cw.project.dir,
    "--plan",
    plan,
  ], { fault: "docker.create_volume:after" });
  assert.equal(killed.signal, "SIGKILL");
  assert.equal(killed.fired, "docker.create_volume:after@1");
  assert.equal(killed.killedAtFault, true);
  // the volume was created in the world before the process died (a lost response)
  const volumes = Object.keys(cw.world.control.snapshot().docker.volumes);
  assert.deepEqual(volumes, [`${cw.applicationId}-state`]);
});
