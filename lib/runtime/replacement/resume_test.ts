// No stranded finalize (issue 12 item 3): a reviewed replacement's `apply --plan` is killed by
// SIGKILL inside the finalization (one site for each state the local backend's receipt →
// ownership → clear writes can leave, and the finalize site itself), through the CLI in its own
// OS process on a file-backed fake world. A fresh `state resume` then completes the same
// operation: serial + 1 exactly once, one receipt, no Docker or Kafka mutation, and the next
// plan is a no-op; the OpenLineage run the apply started ends with the resume's COMPLETE. The same way out is proven on the real services in
// tests/ways_out_docker_kafka_pg_test.ts.
import assert from "node:assert/strict";
import { writePlanFile } from "../../plan/plan_file.ts";
import { OPERATION_WRITES } from "../../protocol/replacement.ts";
import { openStateStore } from "../../state/open.ts";
import { STATE_SITES } from "../../protocol/state_sites.ts";
import { apply, plan } from "../session.ts";
import { fakeProject } from "../../../testing/ways/fake_project.ts";

// one kill for each state the local finalize (receipt → ownership → clear) can leave, and the
// finalize site itself; the exhaustive sweep (testing/sweep) kills at every site
const FINALIZE_KILLS: Array<[string, "before" | "after"]> = [
  [OPERATION_WRITES.finalize.name, "before"], // nothing written
  ["state.local.finalize.history.rename", "before"], // a temp file only
  ["state.local.finalize.history.dirsync", "before"], // the receipt
  ["state.local.finalize.ownership.rename", "after"], // receipt and ownership
  ["state.local.finalize.control.unlink", "before"], // receipt and ownership, fsynced
  ["state.local.finalize.control.unlink", "after"], // cleared, directory not fsynced
  [OPERATION_WRITES.finalize.name, "after"], // finished, the response lost
];

const order = (i: number, amount: number) => ({
  key: `o${i}`,
  value: JSON.stringify({ order_id: `o${i}`, amount, paid: true, customer: null }),
});

async function killedFinalize(site: string, side: "before" | "after") {
  await using f = await fakeProject(`finalize-${site}-${side}`);
  const { world, p, deps } = f;
  const created = await plan({ dir: p.dir, ...deps });
  await apply({ dir: p.dir, plan: created.plan, planSha256: created.sha256, ...deps });
  world.control.produce(p.inputTopic, [order(1, 150), order(2, 250), order(3, 50)]);
  await p.setPredicate("amount >= 200 AND paid = TRUE");
  const reviewed = await plan({ dir: p.dir, ...deps });
  assert.equal(reviewed.plan.format, 6, JSON.stringify(reviewed.plan.blockers));
  const planPath = `${p.dir}/replace.plan.json`;
  await writePlanFile(planPath, reviewed.plan);

  const lineage = `${p.dir}/lineage.jsonl`;
  const killed = await f.cli([
    "apply",
    "--project",
    p.dir,
    "--plan",
    planPath,
    "--openlineage",
    lineage,
  ], {
    SLUICE_FAULT_POINT: `${site}:${side}`,
    SLUICE_TEST_ONLY_ALLOW_FAULTS: "1",
  });
  assert.equal(killed.signal, "SIGKILL", `${site}:${side}: exit ${killed.code}\n${killed.stderr}`);
  assert.match(killed.stderr, new RegExp(`SLUICE_FAULT_FIRED ${site.replaceAll(".", "\\.")}`));
  const mutationsAtKill = world.control.mutations().filter((m) => m.by !== "runner").length;

  const shown = (await f.cli(["-o", "json", "state", "show", "--project", p.dir])).json().data!;
  const pending = shown.pending_operation as
    | { operation_id: string; receipt_archived: boolean }
    | null;
  const lock = shown.lock as { stale: boolean; holder: { lock_id: string } };
  assert.equal(lock.stale, true);
  // killed once the clear was written (the control file unlinked) or the whole finalization
  // returned: the operation is complete and only the response was lost
  const completed = pending === null;
  assert.equal(
    completed,
    side === "after" &&
      [OPERATION_WRITES.finalize.name, "state.local.finalize.control.unlink"].includes(site),
  );
  // state show says when the operation's own receipt is archived (its control frozen): from the
  // history's rename until the control is cleared
  if (pending) {
    const i = FINALIZE_KILLS.findIndex(([s, d]) => s === site && d === side);
    assert.equal(pending.receipt_archived, i >= 2, `${site}:${side}: receipt_archived`);
  }
  const operationId = pending?.operation_id ?? await receiptOperation(p.dir, p.name);
  const common = ["--project", p.dir, "--plan", planPath, "--operation-id", operationId];

  // the diagnosis names finalization as the next step (or the verified completion)
  const status = await f.cli([
    "-o",
    "json",
    "state",
    "runner-status",
    ...common,
    "--break-stale-lock",
    lock.holder.lock_id,
  ]);
  assert.equal(status.code, 0, status.stderr + status.stdout);
  const report = status.json().data!;
  assert.deepEqual(
    [report.last_boundary, (report.next as { step: string }).step],
    [completed ? "finalized" : "action_completed", "complete"],
  );

  const resumed = await f.cli([
    "-o",
    "json",
    "state",
    "resume",
    ...common,
    "--openlineage",
    lineage,
  ]);
  assert.equal(resumed.code, 0, `${site}:${side}: ${resumed.stderr}${resumed.stdout}`);
  // the run's START went out with the killed apply, its COMPLETE with the resume
  const events = (await Deno.readTextFile(lineage)).trim().split("\n").map((l) =>
    JSON.parse(l) as { eventType: string; run: { runId: string } }
  );
  assert.deepEqual(
    events.map((e) => [e.eventType, e.run.runId]),
    [["START", operationId], ["COMPLETE", operationId]],
  );
  const result = resumed.json().data!;
  assert.equal(result.committed, true);
  assert.equal(result.serial, 2);
  // finalization made no runtime writes
  assert.equal(world.control.mutations().filter((m) => m.by !== "runner").length, mutationsAtKill);

  const store = openStateStore({
    backend: "local",
    dir: `${p.dir}/.sluice/state`,
    project: p.name,
    environment: null,
  });
  try {
    const snap = await store.load();
    assert.equal(snap.control, null);
    assert.equal(snap.ownership?.document.serial, 2);
    const receipts = snap.history.events.filter((e) => e.kind === "runner_completed");
    assert.equal(receipts.length, 1);
    assert.equal(receipts[0].operation_id, operationId);
  } finally {
    await store.close();
  }
  // a second resume verifies the receipt and writes nothing; the next plan is a no-op
  const again = await f.cli(["-o", "json", "state", "resume", ...common]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.json().data!.serial, 2);
  const next = await f.cli(["-o", "json", "plan", "--project", p.dir]);
  assert.equal(next.code, 0, next.stderr + next.stdout);
  assert.equal(next.json().data!.noop, true);
}

async function receiptOperation(dir: string, project: string): Promise<string> {
  const store = openStateStore({
    backend: "local",
    dir: `${dir}/.sluice/state`,
    project,
    environment: null,
  });
  try {
    const snap = await store.load();
    const r = snap.history.events.filter((e) => e.kind === "runner_completed");
    assert.equal(r.length, 1);
    return r[0].operation_id!;
  } finally {
    await store.close();
  }
}

for (const [site, side] of FINALIZE_KILLS) {
  assert.ok(
    site === OPERATION_WRITES.finalize.name || STATE_SITES.some((s) => s.name === site),
    `${site} is a declared site`,
  );
  Deno.test(`a replacement killed at ${site}:${side} is finished by state resume`, () =>
    killedFinalize(site, side));
}
