// "Read-only startup polling is bounded, including when status is briefly unavailable at the
// start of a resumed invocation" (issue 26, C71), on the fakes and both state backends: an
// operation left at replacement_created by a ready timeout (the candidate still starting) is
// resumed while the candidate's status file is missing or unreadable. The resume waits — within
// its ready bound, never stopping the candidate — and completes once the status appears; when it
// never appears, the resume times out (`UNKNOWN_OUTCOME_TIMEOUT`, exit 6, from the CLI) and the
// candidate keeps running.
import assert from "node:assert/strict";
import { RUNNER_PATHS, volumeName } from "../../lib/runtime/labels.ts";
import type { ProgressEvent } from "../../lib/runtime/progress.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { fakeCli } from "../fake_cli.ts";
import { checkpointNames, historyEvents } from "../sweep/reads.ts";
import { BACKENDS, type ReplacementCase, replacementCase } from "./replacement_case.ts";

/** The status file's path in the state volume (the candidate's `/var/lib/sluice/status.json`). */
const STATUS = RUNNER_PATHS.statusFile.slice(RUNNER_PATHS.volume.length + 1);

/**
 * The ready bound of the first invocation and of the resume that times out (world time, which
 * the fakes' waits cross in 20 ms steps: kept short).
 */
const SHORT_READY_MS = 2_000;

/**
 * Run the replacement until its ready wait times out at replacement_created, the candidate
 * still starting (`startupMs` of world time before its verdict), then make its status file
 * `missing` or `unreadable`. Returns the operation and the candidate's container ID.
 */
async function leftStarting(
  rc: ReplacementCase,
  startupMs: number,
  status: "missing" | "unreadable",
): Promise<{ operationId: string; candidateId: string }> {
  rc.configure({ runner_startup_ms: startupMs });
  const first = await executeReviewed(rc.options({ readyTimeoutMs: SHORT_READY_MS }));
  assert.equal(first.outcome, "timeout", JSON.stringify(first));
  assert.equal(first.last_boundary, "replacement_created");
  const control = rc.cw.world.control;
  const candidateId = control.container(rc.candidateName(first.operation_id))!.id;
  // positive control: the volume holds a status (the old runner's CLOSED one) before the change
  assert.equal(control.runnerStatus(candidateId)?.state, "CLOSED");
  control.writeVolumeFile(
    volumeName(rc.cw.applicationId),
    STATUS,
    status === "missing" ? null : '{"state":"RUNN',
  );
  if (status === "missing") assert.equal(control.runnerStatus(candidateId), null);
  else assert.throws(() => control.runnerStatus(candidateId), SyntaxError);
  assert.equal(control.container(candidateId)?.process?.phase, "starting");
  return { operationId: first.operation_id, candidateId };
}

/** The Docker mutations of a replacement whose candidate was started once and never stopped. */
function assertStartedOnceNeverStopped(
  rc: ReplacementCase,
  operationId: string,
  candidateId: string,
) {
  assert.deepEqual(rc.mutations(), [
    { op: "signalTerm", key: rc.d.oldContainerId },
    { op: "removeContainer", key: rc.d.oldContainerId },
    { op: "createContainer", key: rc.candidateName(operationId) },
    { op: "startContainer", key: candidateId },
  ]);
  assert.equal(rc.cw.world.control.container(candidateId)?.state.running, true, "still running");
}

for (const backend of BACKENDS) {
  for (const status of ["missing", "unreadable"] as const) {
    Deno.test(`[${backend}] resume with the candidate's status file ${status} waits within its bound, then completes once the status appears`, async () => {
      await using rc = await replacementCase(backend);
      const { operationId, candidateId } = await leftStarting(rc, 6_000, status);
      const events: ProgressEvent[] = [];
      const bound = 60_000;
      const r = await resumeReviewed(rc.operation(operationId, {
        readyTimeoutMs: bound,
        onProgress: (e) => events.push(e),
      }));
      assert.equal(r.committed, true, JSON.stringify(r));
      // the resume was authorized on a wait for readiness, with the status unavailable
      const authorized = events.find((e) => e.kind === "resume_authorized");
      assert.ok(authorized, JSON.stringify(events));
      const state = await rc.state();
      const receipt = historyEvents(state).find((e) => e.kind === "runner_completed")!;
      const resumes = receipt.resume_history as Array<{ recovery: Record<string, unknown> }>;
      assert.equal(resumes.length, 1);
      assert.deepEqual(resumes[0].recovery.next_step, {
        kind: "wait",
        row: "record_action_completed",
      });
      // it waited, bounded, before the status appeared
      const waits = events.filter((e) => e.kind === "wait");
      assert.ok(waits.length > 0, JSON.stringify(events));
      for (const w of waits) {
        assert.ok(w.kind === "wait" && w.bound_ms === bound && w.waited_ms <= bound);
        assert.match(w.message, /candidate not yet RUNNING/);
      }
      // the status appeared on its own (the runner's verdict): RUNNING, the candidate's
      const now = rc.cw.world.control.runnerStatus(candidateId);
      assert.equal(now?.state, "RUNNING");
      assert.equal(state.control, null);
      assertStartedOnceNeverStopped(rc, operationId, candidateId);
    });
  }

  Deno.test(`[${backend}] resume whose candidate's status never appears times out at its bound without stopping the candidate`, async () => {
    await using rc = await replacementCase(backend);
    // the runner's verdict is days away: no status within any bound
    const { operationId, candidateId } = await leftStarting(rc, 864_000_000, "missing");
    const events: ProgressEvent[] = [];
    const r = await resumeReviewed(rc.operation(operationId, {
      readyTimeoutMs: SHORT_READY_MS,
      onProgress: (e) => events.push(e),
    }));
    assert.equal(r.committed, false, JSON.stringify(r));
    assert.equal(r.outcome, "timeout");
    assert.equal(r.last_boundary, "replacement_created");
    assert.match(r.reason ?? "", /timed out waiting: candidate not yet RUNNING/);
    const waits = events.filter((e) => e.kind === "wait");
    assert.ok(waits.length > 0);
    for (const w of waits) assert.ok(w.kind === "wait" && w.waited_ms <= SHORT_READY_MS);
    // left as it is: still pending at replacement_created, the candidate still starting
    const state = await rc.state();
    assert.deepEqual(checkpointNames(state.control).at(-1), "replacement_created");
    assert.equal(rc.cw.world.control.container(candidateId)?.process?.phase, "starting");
    assert.equal(rc.cw.world.control.runnerStatus(candidateId), null);
    assertStartedOnceNeverStopped(rc, operationId, candidateId);

    // the same from the CLI (its default ready bound, 120 s of world time; once: the backend
    // does not matter to the exit code): the documented code and exit status, the candidate
    // still untouched
    if (backend !== "local") return;
    const cli = await fakeCli(rc.cw.worldPath, [
      "-o",
      "json",
      "state",
      "resume",
      "--project",
      rc.cw.project.dir,
      "--plan",
      rc.d.planPath,
      "--operation-id",
      operationId,
    ], { env: rc.cw.env, timeoutMs: 300_000 });
    assert.equal(cli.code, 6, cli.stderr.slice(-2000));
    assert.deepEqual(cli.json?.errors.map((e) => e.code), ["UNKNOWN_OUTCOME_TIMEOUT"]);
    assert.equal(rc.cw.world.control.container(candidateId)?.process?.phase, "starting");
    assertStartedOnceNeverStopped(rc, operationId, candidateId);
  });
}
