// The destroy journey (plan --destroy) on the fake world with the local state backend: the
// scenario is testing/journeys/destroy_case.ts (create → destroy keeping data → create again
// from the kept volumes and offsets; --delete-data refused); PostgreSQL runs the same scenario
// in testing/journeys/destroy_pg_test.ts, and the crash sweep's `destroy` journey kills it at
// each site of its table.
import assert from "node:assert/strict";
import {
  destroyConnectorScenario,
  destroyDeletingScenario,
  destroyScenario,
} from "../../testing/journeys/destroy_case.ts";
import { openCaseWorld } from "../../testing/sweep/fixture.ts";
import { prepareDestroy } from "../../testing/sweep/destroy.ts";
import { containersOf } from "../../testing/sweep/reads.ts";
import { fakeCli } from "../../testing/fake_cli.ts";

Deno.test("destroy on fakes (local state): reviewed, every runner down and its data kept, a verified repeat, create again resumes from what was kept", async () => {
  await destroyScenario("local");
});

Deno.test("destroy --delete-data on fakes (local state): create → destroy deleting the groups, volumes and owned topics (the external input kept) → create again from nothing", async () => {
  await destroyDeletingScenario("local");
});

// While a destroy is pending, the day-two commands act on its own runners only, as beside a
// pending removal: a runner it already stopped cleanly is not restarted (the destroy can use
// that close), and the same apply then finishes.
Deno.test("destroy on fakes: a pending destroy's runner that closed cleanly is not restarted — the destroy continues with its plan file", async () => {
  await using cw = await openCaseWorld({ backend: "local", seed: "destroy-clean-no-restart" });
  const ch = await prepareDestroy(cw);
  const dir = cw.project.dir;
  const applyArgs = ["-o", "json", "apply", "--project", dir, "--plan", ch.planPath];
  const died = await fakeCli(cw.worldPath, applyArgs, {
    fault: "docker.remove_destroyed_runner:before",
    env: cw.env,
  });
  assert.equal(died.killedAtFault, true, died.stderr);
  const cli = (args: string[]) =>
    fakeCli(cw.worldPath, ["-o", "json", ...args, "--project", dir], { env: cw.env });
  const view = (await cli(["state", "show"])).json!.data as {
    lock: { stale: boolean; holder: { lock_id: string } | null };
    pending_operation: { kind: string } | null;
  };
  assert.equal(view.pending_operation?.kind, "destroy");
  const brk = view.lock.stale ? ["--break-stale-lock", view.lock.holder!.lock_id] : [];
  const w = cw.world.control.snapshot();
  const closed = ch.runners.find((r) =>
    containersOf(w, r.applicationId)[0]?.state.running === false
  );
  assert.ok(closed, "the destroy stopped its first runner before it died");
  const model = closed.applicationId.replace(/^sluice-[^-]+-/, "");
  const seq = w.log.at(-1)?.seq ?? 0;
  const refused = await cli(["restart", model, "--reason", "no", ...brk]);
  assert.equal(refused.code, 4, refused.stdout + refused.stderr);
  assert.deepEqual(refused.json!.errors.map((e) => e.code), ["BLOCKED_OPERATION_PENDING"]);
  assert.match(
    (refused.json!.errors[0] as { message: string }).message,
    /closed cleanly \(exit 143\): the destroy can use that close; continue it with its plan file/,
  );
  assert.deepEqual(
    cw.world.control.snapshot().log.filter((m) =>
      m.seq > seq && ["docker", "kafka"].includes(m.by)
    ),
    [],
  );
  const done = await fakeCli(cw.worldPath, applyArgs, { env: cw.env });
  assert.equal(done.code, 0, done.stdout + done.stderr);
  for (const r of ch.runners) {
    assert.deepEqual(containersOf(cw.world.control.snapshot(), r.applicationId), []);
  }
});

Deno.test("destroy on fakes with connectors (local state): each owned connector deleted first, a kill after a deletion continues, runners down, create again makes them anew", async () => {
  await destroyConnectorScenario("local");
});
