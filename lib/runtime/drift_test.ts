// Drift (issue 18 item 4) on a file-backed fake world, each command its own OS process: a runner
// started again by hand after a stop is reported by status and plan with what changed (never a
// no-op), and is resolved explicitly: stopped, then brought back by `sluice restart` (recorded).
import assert from "node:assert/strict";
import { createdStarter } from "../../testing/ways/fake_project.ts";
import { order } from "../../testing/ways/replacement_fixture.ts";

const MODEL = "eligible_orders";

type Row = {
  healthy: boolean;
  drift: { kind: string; container: string; stopped_at: string; started_at: string } | null;
};

Deno.test("a runner started again by hand is drift in status and plan until it is stopped and restarted through sluice", async () => {
  await using f = await createdStarter("drift-start");
  const name = `sluice-${f.applicationId.replace(/^sluice-/, "")}`;
  f.world.control.produce(f.p.inputTopic, [order("a1", 150)]);
  const row = async () =>
    ((await f.cli(["-o", "json", "status", "--project", f.p.dir])).json().data!
      .models as Row[])[0];
  assert.equal((await row()).drift, null);
  assert.equal((await f.cli(["-o", "json", "plan", "--project", f.p.dir])).code, 0);

  // someone stops it and starts it again with docker
  await f.deps.docker.signalTerm(name);
  await f.deps.docker.startContainer(name);
  const stoppedAt = f.world.control.container(name)!.state.finished_at;
  const drifted = await row();
  assert.equal(drifted.healthy, false);
  assert.equal(drifted.drift?.kind, "started_outside_sluice");
  assert.equal(drifted.drift?.container, name);
  assert.equal(drifted.drift?.stopped_at, stoppedAt);
  const text = await f.cli(["status", "--project", f.p.dir]);
  assert.match(text.stdout, /^FAIL /m);
  assert.match(
    text.stdout,
    new RegExp(`\\n     drift: started again outside sluice: ${name} stopped at ${stoppedAt}`),
  );
  const blocked = await f.cli(["-o", "json", "plan", "--project", f.p.dir]);
  assert.equal(blocked.code, 4);
  const err = blocked.json().errors[0] as {
    code: string;
    message: string;
    evidence: { blockers: Array<{ evidence: { drift: { stopped_at: string } } }> };
  };
  assert.equal(err.code, "BLOCKED_RUNNER_DRIFT");
  assert.match(err.message, /sluice restart eligible_orders --reason TEXT/);
  assert.equal(err.evidence.blockers[0].evidence.drift.stopped_at, stoppedAt);
  const applied = await f.cli(["-o", "json", "apply", "--project", f.p.dir]);
  assert.equal(applied.code, 4, "apply is not a silent no-op either");

  // resolved explicitly: stopped, and brought back through sluice (recorded)
  await f.deps.docker.signalTerm(name);
  const r = await f.cli([
    "-o",
    "json",
    "restart",
    MODEL,
    "--project",
    f.p.dir,
    "--reason",
    "someone ran docker start; taken back",
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const resolved = await row();
  assert.equal(resolved.drift, null);
  assert.equal(resolved.healthy, true);
  assert.equal((await f.cli(["-o", "json", "plan", "--project", f.p.dir])).code, 0);

  // a later stop and start by hand is drift again (its stop is not the recorded one)
  await f.deps.docker.signalTerm(name);
  await f.deps.docker.startContainer(name);
  assert.equal((await row()).drift?.kind, "started_outside_sluice");
});
