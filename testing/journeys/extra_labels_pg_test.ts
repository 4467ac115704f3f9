// Labels given at apply are recorded and reapplied by resume, on both state backends' real code
// (the intent's details through the local files and the PostgreSQL rows): a replacement started
// with extraLabels dies right after its intent (a crossing listener throws at the intent's
// "after" point), and a resume by a handle without them creates the candidate with the recorded
// labels; an intent without the field resumes with none, whatever the resuming handle gives.
// lib/runtime/operation_labels_test.ts proves the same through the CLI and for the create.
import assert from "node:assert/strict";
import { onCrossing } from "../../lib/fault/site.ts";
import { OPERATION_WRITES } from "../../lib/protocol/replacement.ts";
import { LABEL } from "../../lib/runtime/labels.ts";
import { EXTRA_LABELS_DETAIL } from "../../lib/runtime/operation_labels.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { BACKENDS, type ReplacementCase, replacementCase } from "./replacement_case.ts";

/** Execute the reviewed replacement, dying right after its intent; the recorded intent. */
async function killedAfterIntent(rc: ReplacementCase, extraLabels?: Record<string, string>) {
  const site = OPERATION_WRITES.intent.name;
  let fired = false;
  const stop = onCrossing((c) => {
    if (c.site.name !== site || c.side !== "after") return;
    fired = true;
    throw new Error(`killed after ${site}`);
  });
  try {
    const answer = await executeReviewed(rc.options({ extraLabels })).catch((e: Error) => e);
    assert.ok(fired, `${site} was crossed`);
    assert.ok(
      answer instanceof Error || answer.committed !== true,
      JSON.stringify(answer),
    );
  } finally {
    stop();
  }
  const store = await rc.openStore();
  try {
    const snap = await store.load();
    assert.ok(snap.control, "the operation is pending");
    return snap.control.opened.intent;
  } finally {
    await store.close();
  }
}

async function candidateLabels(rc: ReplacementCase, operationId: string) {
  const found = await rc.cw.world.docker.listContainers(LABEL.operationId, operationId);
  assert.equal(found.length, 1, `one candidate of ${operationId}`);
  return found[0].labels;
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] a resume without extraLabels creates the candidate with the labels recorded at apply`, async () => {
    await using rc = await replacementCase(backend);
    const intent = await killedAfterIntent(rc, { "ci.run": "t1" });
    assert.deepEqual(intent.details[EXTRA_LABELS_DETAIL], { "ci.run": "t1" });
    const r = await resumeReviewed(rc.operation(intent.operation_id));
    assert.equal(r.committed, true, JSON.stringify(r));
    const labels = await candidateLabels(rc, intent.operation_id);
    assert.equal(labels["ci.run"], "t1");
    assert.equal(labels[LABEL.model], intent.details.model);
  });

  Deno.test(`[${backend}] an intent without extra labels resumes with none, whatever the resuming handle gives`, async () => {
    await using rc = await replacementCase(backend);
    const intent = await killedAfterIntent(rc);
    assert.equal(EXTRA_LABELS_DETAIL in intent.details, false);
    const r = await resumeReviewed(
      rc.operation(intent.operation_id, { extraLabels: { "ci.run": "other" } }),
    );
    assert.equal(r.committed, true, JSON.stringify(r));
    assert.equal((await candidateLabels(rc, intent.operation_id))["ci.run"], undefined);
  });
}
