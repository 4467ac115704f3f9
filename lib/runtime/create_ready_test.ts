// The create journey's ready wait on the fake world: it ends when the runner reports RUNNING,
// whenever in the wait that happens. A runner whose report landed between the decision's reading
// and the wait's first look used to be waited on for the whole bound (120 s): in a CI run, 8 of
// 38 creates took about 126 s instead of 4 to 19 s. World time, not wall-clock time: the fake's
// clock moves only as the journey reads and sleeps.
import assert from "node:assert/strict";
import { fakeProject } from "../../testing/ways/fake_project.ts";
import { apply, plan } from "./session.ts";

Deno.test("a create waits for RUNNING only until it is reported, whenever the runner reports it", async () => {
  // startup delays around the decision's reading and the wait's first look (16 to 24 ms hit the
  // gap between them before the fix)
  for (let ms = 10; ms <= 30; ms++) {
    await using f = await fakeProject(`ready-${ms}`, { config: { runner_startup_ms: ms } });
    const created = await plan({ dir: f.p.dir, ...f.deps });
    const t0 = f.world.clock.now();
    const c = await apply({
      dir: f.p.dir,
      plan: created.plan,
      planSha256: created.sha256,
      ...f.deps,
    });
    const waited = f.world.clock.now() - t0;
    assert.equal(c.runners.length, 1);
    assert.ok(waited < 10_000, `startup ${ms} ms: the create took ${waited} ms of world time`);
  }
});
