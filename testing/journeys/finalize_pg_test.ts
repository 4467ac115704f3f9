// Finalization (the table's last row) on the fakes, on both state backends' real code: it
// re-observes the ready candidate before committing serial + 1 once with one receipt; it
// waits while the candidate is not running, or running but not ready as the ready boundary
// defines it (RUNNING status of its generation and plan, one group member) — and a resume
// finishes once it is ready again; the group's one member must be the candidate's own (by the
// client ID its generation gives it; counted only for a runner of an older image, which declares
// none); a local finalization interrupted after its receipt is completed only once the candidate
// is ready (the same rule); a lost acknowledgement is unknown, and the next resume verifies the
// receipt without a second increment.
import assert from "node:assert/strict";
import { onCrossing } from "../../lib/fault/site.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { runnerStatus } from "../../lib/runtime/replacement/runner_status.ts";
import type { ReplacementResult } from "../../lib/runtime/replacement/result.ts";
import { localWriteSites } from "../../lib/protocol/state_sites.ts";
import type { StateStore } from "../../lib/state/store.ts";
import { readContainerPath, writeContainerPath } from "../fakes/_files.ts";
import { findContainer } from "../fakes/engine.ts";
import { statusPath } from "../fakes/lifecycle.ts";
import type { FakeMember } from "../fakes/world.ts";
import { checkpointNames, historyEvents } from "../sweep/reads.ts";
import {
  BACKENDS,
  failingStore,
  type ReplacementCase,
  replacementCase,
} from "./replacement_case.ts";

/** Execute with the finalization failing (`fail`: never written; `lose`: written, unacknowledged). */
async function executeWithFinalize(rc: ReplacementCase, effect: "fail" | "lose") {
  const store: StateStore = await rc.openStore();
  try {
    const failing = failingStore(store, "finalizeCompletedRunner", () => true, effect);
    return await executeReviewed(rc.options({ store: failing }));
  } finally {
    await store.close();
  }
}

/**
 * Execute with `between` run once the action_completed checkpoint is acknowledged: the ready
 * boundary is durable, finalization has not observed yet.
 */
async function executeThen(rc: ReplacementCase, between: () => void) {
  let armed = true;
  const stop = onCrossing((c) => {
    if (armed && c.site.name === "journal.action_completed" && c.side === "after") {
      armed = false;
      between();
    }
  });
  try {
    return await executeReviewed(rc.options());
  } finally {
    stop();
  }
}

/** The group loses every member (the candidate's among them); returns them. */
function dropMembers(rc: ReplacementCase): FakeMember[] {
  return rc.cw.world.store.transact((w) => {
    const g = w.kafka.groups[rc.cw.applicationId];
    const gone = g.members;
    g.members = [];
    return gone;
  });
}

/**
 * The group's one member becomes a consumer that is not the candidate (its member replaced by an
 * external one, as if the candidate had left and another process joined); returns the original.
 */
function foreignMember(rc: ReplacementCase): FakeMember[] {
  return rc.cw.world.store.transact((w) => {
    const g = w.kafka.groups[rc.cw.applicationId];
    const gone = g.members;
    g.members = [{
      member_id: "external-consumer-5f8e8f8c-9a53-4a0e-8f0f-6c1d2b3a4e5f",
      client_id: "external-consumer",
      client_host: "/127.0.0.1",
      group_instance_id: null,
      container_id: null,
      expires_ms: null,
      topics: [],
    }];
    return gone;
  });
}

/** The members come back (the candidate rejoins its group). */
function restoreMembers(rc: ReplacementCase, members: FakeMember[]): void {
  rc.cw.world.store.transact((w) => {
    w.kafka.groups[rc.cw.applicationId].members = members;
  });
}

/** Rewrite the running candidate's status file; returns its previous bytes. */
function editStatus(
  rc: ReplacementCase,
  operationId: string,
  edit: (s: Record<string, unknown>) => Record<string, unknown>,
): Uint8Array {
  return rc.cw.world.store.transact((w) => {
    const c = findContainer(w, rc.candidateName(operationId))!;
    const before = readContainerPath(w, c, statusPath(c))!;
    const s = JSON.parse(new TextDecoder().decode(before));
    writeContainerPath(w, c, statusPath(c), new TextEncoder().encode(JSON.stringify(edit(s))));
    return before;
  });
}

function restoreStatus(rc: ReplacementCase, operationId: string, bytes: Uint8Array): void {
  rc.cw.world.store.transact((w) => {
    const c = findContainer(w, rc.candidateName(operationId))!;
    writeContainerPath(w, c, statusPath(c), bytes);
  });
}

/** Not committed at action_completed: no increment, no receipt, the checkpoints unchanged. */
async function assertWaitsAtActionCompleted(rc: ReplacementCase, r: ReplacementResult) {
  const { receipt: _, commands: __, ...said } = r;
  assert.equal(r.committed, false, JSON.stringify(said));
  assert.equal(r.outcome, "blocked");
  assert.equal(r.last_boundary, "action_completed");
  assert.deepEqual(r.blockers.map((b) => b.code), ["BLOCKED_CANDIDATE_NOT_READY"]);
  const state = await rc.state();
  assert.equal(state.ownership?.serial, 1, "no increment");
  assert.equal(historyEvents(state).filter((e) => e.kind === "runner_completed").length, 0);
  assert.equal(checkpointNames(state.control).at(-1), "action_completed");
}

/** A resume (once the candidate is ready again) finalizes: serial + 1 once, one receipt. */
async function assertResumeFinalizes(rc: ReplacementCase, operationId: string) {
  const mutations = rc.mutations().length;
  const r = await resumeReviewed(rc.operation(operationId));
  assert.equal(r.committed, true, JSON.stringify(r));
  assert.equal(r.serial, 2);
  const state = await rc.state();
  assert.equal(state.ownership?.serial, 2);
  assert.equal(state.control, null);
  assert.equal(historyEvents(state).filter((e) => e.kind === "runner_completed").length, 1);
  assert.equal(rc.mutations().length, mutations, "finalization makes no provider call");
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] finalization re-checks readiness: a candidate whose group lost its member is not committed until resume finds it ready`, async () => {
    await using rc = await replacementCase(backend);
    let gone: FakeMember[] = [];
    // the candidate still runs (and its status says RUNNING), but the group has no member
    const first = await executeThen(rc, () => gone = dropMembers(rc));
    assert.equal(gone.length, 1);
    await assertWaitsAtActionCompleted(rc, first);
    // runner-status does not name finalization as the next step while the candidate is not ready
    const diagnosed = await runnerStatus(rc.operation(first.operation_id));
    assert.equal(diagnosed.last_boundary, "action_completed");
    assert.equal(diagnosed.next.step, "blocked", JSON.stringify(diagnosed.next));
    assert.deepEqual(diagnosed.blockers.map((b) => b.code), ["BLOCKED_CANDIDATE_NOT_READY"]);
    // still not ready: a resume finalizes nothing and stays resumable
    await assertWaitsAtActionCompleted(rc, await resumeReviewed(rc.operation(first.operation_id)));
    restoreMembers(rc, gone);
    const ready = await runnerStatus(rc.operation(first.operation_id));
    assert.equal(ready.next.step, "complete", JSON.stringify(ready.next));
    assert.deepEqual(ready.blockers, []);
    await assertResumeFinalizes(rc, first.operation_id);
  });

  Deno.test(`[${backend}] finalization re-checks readiness: a group whose one member is not the candidate's is not committed`, async () => {
    await using rc = await replacementCase(backend);
    let own: FakeMember[] = [];
    // the candidate runs and says RUNNING; the group has one member, but not the candidate's
    const first = await executeThen(rc, () => own = foreignMember(rc));
    assert.equal(own.length, 1);
    await assertWaitsAtActionCompleted(rc, first);
    assert.match(first.blockers[0].message, /one member \(client ID external-consumer\)/);
    const diagnosed = await runnerStatus(rc.operation(first.operation_id));
    assert.equal(diagnosed.next.step, "blocked", JSON.stringify(diagnosed.next));
    assert.deepEqual(diagnosed.blockers.map((b) => b.code), ["BLOCKED_CANDIDATE_NOT_READY"]);
    await assertWaitsAtActionCompleted(rc, await resumeReviewed(rc.operation(first.operation_id)));
    // positive control: the candidate's own member is back
    restoreMembers(rc, own);
    await assertResumeFinalizes(rc, first.operation_id);
  });

  Deno.test(`[${backend}] a candidate of an older runner image (no client ID in its status) is finalized on the member count`, async () => {
    await using rc = await replacementCase(backend);
    let operationId = "";
    // as a runner built before the client ID: Kafka's default client ID, no client_id declared
    const first = await executeThen(rc, () => {
      const members = rc.cw.world.store.transact((w) =>
        w.kafka.groups[rc.cw.applicationId].members
      );
      assert.equal(members.length, 1);
      operationId =
        (members[0].client_id.match(/^sluice-(.+)-0-StreamThread-1-consumer$/) ?? [])[1];
      assert.ok(operationId, members[0].client_id);
      editStatus(rc, operationId, (s) => {
        const { client_id: _, ...legacy } = s;
        return { ...legacy, version: 3 };
      });
      rc.cw.world.store.transact((w) => {
        const m = w.kafka.groups[rc.cw.applicationId].members[0];
        m.client_id =
          `${rc.cw.applicationId}-8d7f1c2e-3b4a-4c5d-9e6f-0a1b2c3d4e5f-StreamThread-1-consumer`;
      });
    });
    assert.equal(first.operation_id, operationId);
    assert.equal(first.committed, true, JSON.stringify(first));
    assert.equal(first.serial, 2);
  });

  Deno.test(`[${backend}] finalization re-checks readiness: a running candidate whose status is no longer RUNNING is not committed`, async () => {
    await using rc = await replacementCase(backend);
    const first = await executeWithFinalize(rc, "fail");
    assert.equal(first.committed, null, JSON.stringify(first));
    assert.equal(first.last_boundary, "action_completed");
    // the runner is closing (its status says so) while its container still runs
    const saved = editStatus(rc, first.operation_id, (s) => ({ ...s, state: "CLOSING" }));
    await assertWaitsAtActionCompleted(rc, await resumeReviewed(rc.operation(first.operation_id)));
    // a RUNNING status of another plan is not this candidate's readiness either
    editStatus(
      rc,
      first.operation_id,
      (s) => ({ ...s, state: "RUNNING", plan_sha256: "0".repeat(64) }),
    );
    await assertWaitsAtActionCompleted(rc, await resumeReviewed(rc.operation(first.operation_id)));
    restoreStatus(rc, first.operation_id, saved);
    await assertResumeFinalizes(rc, first.operation_id);
  });

  Deno.test(`[${backend}] finalization after action_completed commits serial + 1 once with one receipt`, async () => {
    await using rc = await replacementCase(backend);
    const first = await executeWithFinalize(rc, "fail");
    assert.equal(first.committed, null, JSON.stringify(first));
    assert.equal(first.last_boundary, "action_completed");
    let state = await rc.state();
    assert.equal(state.ownership?.serial, 1);
    assert.deepEqual(checkpointNames(state.control).at(-1), "action_completed");
    const mutations = rc.mutations().length;
    const r = await resumeReviewed(rc.operation(first.operation_id));
    assert.equal(r.committed, true, JSON.stringify(r));
    assert.equal(r.serial, 2);
    state = await rc.state();
    assert.equal(state.ownership?.serial, 2);
    assert.equal(state.control, null);
    assert.equal(historyEvents(state).filter((e) => e.kind === "runner_completed").length, 1);
    assert.equal(rc.mutations().length, mutations, "finalization makes no provider call");
  });

  Deno.test(`[${backend}] finalization waits while the completed candidate is not running`, async () => {
    await using rc = await replacementCase(backend);
    const first = await executeWithFinalize(rc, "fail");
    assert.equal(first.last_boundary, "action_completed");
    const candidate = Object.values(rc.world().docker.containers).find((c) =>
      c.name === rc.candidateName(first.operation_id)
    )!;
    rc.cw.world.control.killContainer(candidate.id);
    const before = await rc.state();
    const r = await resumeReviewed(rc.operation(first.operation_id));
    assert.equal(r.committed, false, JSON.stringify(r));
    assert.equal(r.outcome, "blocked");
    assert.ok(r.blockers.length > 0);
    const after = await rc.state();
    assert.equal(after.ownership?.serial, 1, "no increment");
    assert.equal(historyEvents(after).filter((e) => e.kind === "runner_completed").length, 0);
    assert.deepEqual(checkpointNames(after.control), checkpointNames(before.control));
  });

  Deno.test(`[${backend}] a lost finalization acknowledgement is unknown; resume verifies the receipt`, async () => {
    await using rc = await replacementCase(backend);
    const first = await executeWithFinalize(rc, "lose");
    assert.equal(first.committed, null, JSON.stringify(first));
    assert.equal(first.outcome, "unknown");
    const r = await resumeReviewed(rc.operation(first.operation_id));
    assert.equal(r.committed, true, JSON.stringify(r));
    const state = await rc.state();
    assert.equal(state.ownership?.serial, 2, "exactly one increment");
    assert.equal(historyEvents(state).filter((e) => e.kind === "runner_completed").length, 1);
  });

  if (backend === "local") {
    Deno.test(`[${backend}] a finalization interrupted after its receipt is completed by resume only once the candidate is ready`, async () => {
      await using rc = await replacementCase(backend);
      // the receipt (the first write of the local finalization) is durable, then the
      // invocation dies: only ownership and clear remain, decided by the receipt
      const receipt = localWriteSites("finalize", "history", "replace").dirsync.name;
      let armed = true;
      const stop = onCrossing((c) => {
        if (armed && c.site.name === receipt && c.side === "after") {
          armed = false;
          throw new Error("injected: the finalization stops after its receipt");
        }
      });
      let first: ReplacementResult;
      try {
        first = await executeReviewed(rc.options());
      } finally {
        stop();
      }
      assert.equal(first.committed, null, JSON.stringify(first));
      const before = await rc.state();
      assert.equal(historyEvents(before).filter((e) => e.kind === "runner_completed").length, 1);
      assert.notEqual(before.control, null);
      // the candidate is no longer ready: the retry verifies the ready candidate too (spec: "with
      // the original plan, current project, exact receipt and ready candidate verified, retry
      // clears control"), so it writes nothing and stays resumable
      const gone = dropMembers(rc);
      const mutations = rc.mutations().length;
      const blocked = await resumeReviewed(rc.operation(first.operation_id));
      assert.equal(blocked.committed, false, JSON.stringify(blocked));
      assert.equal(blocked.outcome, "blocked");
      assert.deepEqual(blocked.blockers.map((b) => b.code), ["BLOCKED_CANDIDATE_NOT_READY"]);
      const unchanged = await rc.state();
      assert.deepEqual(unchanged.control, before.control, "nothing written");
      assert.deepEqual(unchanged.ownership, before.ownership, "nothing written");
      assert.deepEqual(unchanged.history, before.history, "nothing written");
      assert.equal(rc.mutations().length, mutations, "no provider call");
      const diagnosed = await runnerStatus(rc.operation(first.operation_id));
      assert.equal(diagnosed.next.step, "blocked", JSON.stringify(diagnosed.next));
      assert.deepEqual(diagnosed.blockers.map((b) => b.code), ["BLOCKED_CANDIDATE_NOT_READY"]);
      // ready again: the retry completes ownership and clear, with the one receipt
      restoreMembers(rc, gone);
      const r = await resumeReviewed(rc.operation(first.operation_id));
      assert.equal(r.committed, true, JSON.stringify(r));
      assert.equal(r.serial, 2);
      const state = await rc.state();
      assert.equal(state.control, null);
      assert.equal(state.ownership?.serial, 2);
      assert.equal(historyEvents(state).filter((e) => e.kind === "runner_completed").length, 1);
      assert.equal(rc.mutations().length, mutations, "no provider call");
    });
  }
}
