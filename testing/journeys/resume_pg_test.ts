// resumeReviewed (state resume) on the fakes, on both state backends' real code: lost create
// and remove responses resolved by observation, a started-then-closed candidate restarted only
// under resume, an already completed operation verified without writing (by its candidate's exact
// generation labels and mounted plan, never its name alone, and by the ready boundary's rule: a
// candidate whose group's one member is not its own is not verified), an unknown operation.
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { runnerStatus } from "../../lib/runtime/replacement/runner_status.ts";
import type { FakeMember } from "../fakes/world.ts";
import { checkpointNames, historyEvents, unseal } from "../sweep/reads.ts";
import { BACKENDS, failingStore, replacementCase } from "./replacement_case.ts";

for (const backend of BACKENDS) {
  for (const lost of ["createContainer", "removeContainer"]) {
    Deno.test(`[${backend}] resume after a lost ${lost} response continues the same operation to completion`, async () => {
      await using rc = await replacementCase(backend);
      rc.cw.world.control.failCall(lost, { effect: "lose_response" });
      const first = await executeReviewed(rc.options());
      assert.equal(first.committed, null, JSON.stringify(first));
      const r = await resumeReviewed(rc.operation(first.operation_id));
      assert.equal(r.committed, true, JSON.stringify(r));
      assert.equal(r.serial, 2);
      // the lost action was applied once and never repeated; one candidate
      const ops = rc.mutations().map((m) => m.op);
      assert.deepEqual(ops, ["signalTerm", "removeContainer", "createContainer", "startContainer"]);
      const state = await rc.state();
      const receipt = historyEvents(state).find((e) => e.kind === "runner_completed")!;
      assert.equal((receipt.incidents as unknown[]).length, 1, "the interruption is kept");
      assert.equal((receipt.resume_history as unknown[]).length, 1);
      assert.equal(state.control, null);
    });
  }

  Deno.test(`[${backend}] a candidate that started and then closed is restarted by resume only`, async () => {
    await using rc = await replacementCase(backend);
    // action_completed never reaches the store: the candidate runs, the journal says created
    const store = await rc.openStore();
    try {
      const failing = failingStore(
        store,
        "recordCheckpoint",
        (a) => (a[1] as { name: string }).name === "action_completed",
        "fail",
      );
      const first = await executeReviewed(rc.options({ store: failing }));
      assert.equal(first.committed, null, JSON.stringify(first));
      assert.equal(first.last_boundary, "replacement_created");
    } finally {
      await store.close();
    }
    const id = Object.values(rc.world().docker.containers).find((x) =>
      x.name.startsWith(`${rc.cw.applicationId}.op-`)
    )!.id;
    // the candidate closes cleanly (TERM from outside, exit 143)
    await rc.cw.world.docker.signalTerm(id);
    rc.cw.world.control.advanceClock(1_000);
    assert.equal(rc.cw.world.control.container(id)?.state.exit_code, 143);
    const opId = (await rc.state()).control!.operation_id as string;
    const status = await runnerStatus(rc.operation(opId));
    assert.equal(status.next.row, "restart_candidate", JSON.stringify(status.next));
    const r = await resumeReviewed(rc.operation(opId));
    assert.equal(r.committed, true, JSON.stringify(r));
    const starts = rc.mutations().filter((m) =>
      m.op === "startContainer"
    );
    assert.deepEqual(starts.map((m) => m.key), [id, id], "the same candidate, started twice");
    assert.equal(rc.mutations().filter((m) => m.op === "createContainer").length, 1);
    assert.equal(rc.cw.world.control.container(id)?.state.running, true);
  });

  Deno.test(`[${backend}] resume of an already completed operation verifies it and writes nothing`, async () => {
    await using rc = await replacementCase(backend);
    const done = await executeReviewed(rc.options());
    assert.equal(done.committed, true);
    const before = await rc.state();
    const mutations = rc.mutations().length;
    const r = await resumeReviewed(rc.operation(done.operation_id));
    assert.equal(r.committed, true);
    assert.match(r.reason ?? "", /already completed/);
    const after = await rc.state();
    assert.deepEqual(after.ownership, before.ownership);
    assert.deepEqual(after.history, before.history);
    assert.equal(rc.mutations().length, mutations);
  });

  for (
    const [label, value, code] of [
      ["sluice.generation", "00000000-0000-4000-8000-000000000000", "BLOCKED_FOREIGN_GENERATION"],
      ["sluice.plan-sha256", "0".repeat(64), "BLOCKED_WRONG_MOUNTED_PLAN"],
    ] as const
  ) {
    Deno.test(`[${backend}] an already completed operation whose candidate's ${label} differs is ${code}, nothing written`, async () => {
      await using rc = await replacementCase(backend);
      const done = await executeReviewed(rc.options());
      assert.equal(done.committed, true);
      const before = await rc.state();
      const mutations = rc.mutations().length;
      // a container with the candidate's name, running, but not its generation or plan
      rc.cw.world.control.relabelContainer(rc.candidateName(done.operation_id), {
        [label]: value,
      });
      await assert.rejects(
        resumeReviewed(rc.operation(done.operation_id)),
        (e) => e instanceof SluiceError && e.code === code,
      );
      const after = await rc.state();
      assert.deepEqual(after.ownership, before.ownership);
      assert.deepEqual(after.history, before.history);
      assert.equal(rc.mutations().length, mutations);
    });
  }

  for (
    const [label, edit] of [
      ["its group lost its member", (members: FakeMember[]) => members.slice(0, 0)],
      [
        "its group's one member is not the candidate's",
        (members: FakeMember[]) => members.map((m) => ({ ...m, client_id: "external-consumer" })),
      ],
    ] as const
  ) {
    Deno.test(`[${backend}] an already completed operation whose candidate is not ready (${label}) is BLOCKED_CANDIDATE_NOT_READY, nothing written; runner-status names it`, async () => {
      await using rc = await replacementCase(backend);
      const done = await executeReviewed(rc.options());
      assert.equal(done.committed, true);
      const before = await rc.state();
      const mutations = rc.mutations().length;
      const own = rc.cw.world.store.transact((w) => {
        const g = w.kafka.groups[rc.cw.applicationId];
        const was = g.members;
        g.members = edit(was);
        return was;
      });
      await assert.rejects(
        resumeReviewed(rc.operation(done.operation_id)),
        (e) => e instanceof SluiceError && e.code === "BLOCKED_CANDIDATE_NOT_READY",
      );
      const report = await runnerStatus(rc.operation(done.operation_id));
      assert.equal(report.state, "completed");
      assert.equal(report.next.step, "blocked", JSON.stringify(report.next));
      assert.deepEqual(report.blockers.map((b) => b.code), ["BLOCKED_CANDIDATE_NOT_READY"]);
      const after = await rc.state();
      assert.deepEqual(after.ownership, before.ownership);
      assert.deepEqual(after.history, before.history);
      assert.equal(rc.mutations().length, mutations);
      // positive control: the candidate's own member back, the operation verifies
      rc.cw.world.store.transact((w) => {
        w.kafka.groups[rc.cw.applicationId].members = own;
      });
      const ready = await runnerStatus(rc.operation(done.operation_id));
      assert.equal(ready.next.step, "complete", JSON.stringify(ready.next));
      assert.deepEqual(ready.blockers, []);
      const r = await resumeReviewed(rc.operation(done.operation_id));
      assert.equal(r.committed, true);
      assert.match(r.reason ?? "", /already completed/);
    });
  }

  Deno.test(`[${backend}] resume of an operation that never existed is BLOCKED_NO_PENDING_OPERATION`, async () => {
    await using rc = await replacementCase(backend);
    await assert.rejects(
      resumeReviewed(rc.operation(crypto.randomUUID())),
      (e) => e instanceof SluiceError && e.code === "BLOCKED_NO_PENDING_OPERATION",
    );
    assert.deepEqual(rc.mutations(), []);
  });

  Deno.test(`[${backend}] resume after a lost checkpoint acknowledgement records the interruption before continuing`, async () => {
    await using rc = await replacementCase(backend);
    rc.cw.world.control.failCall("signalTerm", { effect: "lose_response" });
    const first = await executeReviewed(rc.options());
    assert.equal(first.last_boundary, "action_started");
    const r = await resumeReviewed(rc.operation(first.operation_id));
    assert.equal(r.committed, true);
    const receipt = historyEvents(await rc.state()).find((e) => e.kind === "runner_completed")!;
    const terminal = unseal<Record<string, unknown>>(receipt.terminal_control);
    assert.deepEqual(checkpointNames(terminal), [
      "action_started",
      "old_closed",
      "old_removed",
      "replacement_created",
      "action_completed",
    ]);
    assert.equal(rc.mutations().filter((m) => m.op === "signalTerm").length, 1);
  });
}
