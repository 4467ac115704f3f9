// Once driveThenFinalize and finalizeOperation call reverifyReviewed (C87): the result of
// `apply --plan` says what stopped it — a PLAN_STALE_SOURCE blocker, not an unknown outcome —
// at the transition after the edit, and at finalization; resume completes once restored.
import assert from "node:assert/strict";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { checkpointNames } from "../sweep/reads.ts";
import { NEW_WHERE } from "../sweep/fixture.ts";
import { BACKENDS, replacementCase } from "./replacement_case.ts";

for (const backend of BACKENDS) {
  for (const after of ["old_closed", "action_completed"] as const) {
    Deno.test(`[${backend}] an SQL edit once ${after} is recorded: apply reports the PLAN_STALE_SOURCE blocker at ${after}; resume completes after restoring it`, async () => {
      await using rc = await replacementCase(backend);
      const sqlPath = `${rc.cw.project.dir}/models/eligible_orders.sql`;
      const reviewed = Deno.readTextFileSync(sqlPath);
      const edited = reviewed.replace(NEW_WHERE, "amount >= 300 AND paid = TRUE");
      assert.notEqual(edited, reviewed);
      const r = await executeReviewed(rc.options({
        onProgress: (e) => {
          if (e.kind === "checkpoint" && e.checkpoint === after) {
            Deno.writeTextFileSync(sqlPath, edited);
          }
        },
      }));
      assert.equal(r.committed, false, JSON.stringify(r));
      assert.equal(r.outcome, "blocked");
      assert.equal(r.last_boundary, after);
      assert.deepEqual(r.blockers.map((b) => b.code), ["PLAN_STALE_SOURCE"]);
      const state = await rc.state();
      assert.equal(checkpointNames(state.control).at(-1), after);
      assert.equal(state.ownership?.serial, 1);
      const made = rc.mutations().length;
      assert.equal(made, after === "old_closed" ? 1 : 4);
      Deno.writeTextFileSync(sqlPath, reviewed);
      const done = await resumeReviewed(rc.operation(r.operation_id));
      assert.equal(done.committed, true, JSON.stringify(done));
      assert.equal(rc.mutations().length, 4, "each provider action once");
      assert.equal((await rc.state()).ownership?.serial, 2);
    });
  }
}
