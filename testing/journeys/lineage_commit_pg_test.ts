// test-needs: postgres
// OpenLineage around a reviewed replacement (C115), on both state backends' real code over the
// fakes: START is sent only after the intent is acknowledged — an intent whose answer is lost
// sends nothing, and the resume that finishes that operation reports its COMPLETE to the same
// sink (the sink works) — and telemetry cannot decide commit: a replacement whose sink fails
// every delivery (an HTTP endpoint on a closed port, a file that cannot be written) is still
// `committed: true`, with each undelivered event a warning on the result.
import assert from "node:assert/strict";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { closedPort } from "../net.ts";
import { historyEvents } from "../sweep/reads.ts";
import { BACKENDS, failingStore, replacementCase } from "./replacement_case.ts";

/** The events a file sink received (none when the file was never written). */
async function linesOf(path: string): Promise<Array<{ eventType: string; runId: string }>> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  return text.trim().split("\n").map((l) => {
    const event = JSON.parse(l);
    return { eventType: event.eventType, runId: event.run.runId };
  });
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] an intent whose acknowledgement is lost sends no lineage START`, async () => {
    await using rc = await replacementCase(backend);
    const sink = `${rc.cw.root}/lineage.jsonl`;
    const real = await rc.openStore();
    try {
      const store = failingStore(real, "beginOperation", () => true, "lose");
      const r = await executeReviewed(rc.options({ store, openlineage: sink }));
      assert.equal(r.committed, null, JSON.stringify(r));
      assert.equal(r.outcome, "unknown");
      assert.equal(r.last_boundary, null);
      assert.match(r.reason ?? "", /the intent was not acknowledged/);
      assert.deepEqual(await linesOf(sink), [], "a lineage event was sent");
      assert.deepEqual(r.lineage_warnings, []);
      // the intent did land: resume finishes the operation and reports it to the same sink
      const done = await resumeReviewed(rc.operation(r.operation_id, { openlineage: sink }));
      assert.equal(done.committed, true, JSON.stringify(done));
      assert.deepEqual(await linesOf(sink), [{ eventType: "COMPLETE", runId: r.operation_id }]);
    } finally {
      await real.close();
    }
  });

  const sinks = {
    "an HTTP endpoint on a closed port": async () =>
      `http://127.0.0.1:${await closedPort()}/api/v1/lineage`,
    // a path under a regular file: no directory can be made there
    "a file that cannot be written": async (root: string) => {
      await Deno.writeTextFile(`${root}/not-a-directory`, "");
      return `${root}/not-a-directory/lineage.jsonl`;
    },
  };
  for (const [name, sinkAt] of Object.entries(sinks)) {
    Deno.test(`[${backend}] a replacement whose lineage sink is ${name} is committed, with warnings`, async () => {
      await using rc = await replacementCase(backend);
      const sink = await sinkAt(rc.cw.root);
      const r = await executeReviewed(rc.options({ openlineage: sink }));
      assert.equal(r.committed, true, JSON.stringify(r));
      assert.equal(r.outcome, "completed");
      assert.equal(r.last_boundary, "finalized");
      assert.deepEqual(r.blockers, []);
      // START and COMPLETE were both attempted and both failed: a warning each, nothing more
      assert.equal(r.lineage_warnings.length, 2, JSON.stringify(r.lineage_warnings));
      for (const w of r.lineage_warnings) assert.match(w, /^OpenLineage event not delivered \(/);
      const state = await rc.state();
      assert.equal(state.control, null, "the operation is still pending");
      assert.equal(state.ownership?.serial, 2);
      const receipts = historyEvents(state).filter((e) =>
        e.kind === "runner_completed" && e.operation_id === r.operation_id
      );
      assert.equal(receipts.length, 1, "no receipt of the operation");
    });
  }
}
