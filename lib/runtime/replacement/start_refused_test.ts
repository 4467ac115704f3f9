// A candidate start the Docker daemon refuses (issue 13 item 5: after a daemon restart, containerd
// answered every start of the created candidate with HTTP 500 "task … already exists"). The
// refusal is an answer, not a lost response: a fresh observation shows the candidate never
// started, so apply and resume end precisely blocked (BLOCKED_CANDIDATE_START_REFUSED, exit 4)
// at replacement_created — never UNKNOWN_OUTCOME — each invocation asks the daemon once, and
// once the daemon is fixed `state resume` starts the same candidate and completes. Each command
// is its own OS process on a file-backed fake world.
import assert from "node:assert/strict";
import { order, reviewedReplacement } from "../../../testing/ways/replacement_fixture.ts";

const REFUSAL = "task 3f1c already exists: unknown";

type Envelope = {
  code: string;
  message: string;
  evidence: {
    result: {
      operation_id: string;
      last_boundary: string;
      outcome: string;
      blockers: Array<{ code: string; evidence: { ever_started: boolean; daemon: string } }>;
    };
  };
};

Deno.test("a candidate start refused by the Docker daemon is a precise blocker, and state resume starts it once the daemon is fixed", async () => {
  await using r = await reviewedReplacement("start-refused");
  const refuseNextStart = () =>
    r.world.control.failCall("startContainer", { effect: "fail", times: 1, message: REFUSAL });
  const pendingHooks = () => r.world.control.snapshot().hooks.length;

  refuseNextStart();
  const applied = await r.cli(["-o", "json", "apply", "--project", r.p.dir, "--plan", r.planPath]);
  assert.equal(applied.code, 4, applied.stdout + applied.stderr);
  const err = applied.json().errors[0] as unknown as Envelope;
  assert.equal(err.code, "BLOCKED_CANDIDATE_START_REFUSED", err.message);
  assert.equal(err.evidence.result.last_boundary, "replacement_created");
  assert.equal(err.evidence.result.outcome, "blocked");
  const operationId = err.evidence.result.operation_id;
  const blocker = err.evidence.result.blockers.find((b) =>
    b.code === "BLOCKED_CANDIDATE_START_REFUSED"
  )!;
  assert.equal(blocker.evidence.ever_started, false);
  assert.match(blocker.evidence.daemon, /task 3f1c already exists/);
  assert.equal(pendingHooks(), 0, "the refusal was asked once");
  const cand = r.world.control.container(`${r.applicationId}.op-${operationId}.a0`);
  assert.ok(cand, "the candidate exists");
  assert.equal(cand.state.status, "created");

  // the daemon is not fixed: one explicit resume asks it once more and stops precisely, with
  // the candidate still never started. Only one refusal is armed: a second start in the same
  // invocation would succeed and complete, so exit 4 proves the resume asked once (no loop)
  refuseNextStart();
  const refusedAgain = await r.cli(["-o", "json", "state", "resume", ...r.common(operationId)]);
  assert.equal(refusedAgain.code, 4, refusedAgain.stdout + refusedAgain.stderr);
  assert.equal(
    (refusedAgain.json().errors[0] as unknown as Envelope).code,
    "BLOCKED_CANDIDATE_START_REFUSED",
  );
  assert.equal(pendingHooks(), 0);
  assert.equal(r.world.control.container(cand.id)!.state.status, "created");
  const state = await r.state();
  assert.equal(state.control!.opened.resume_history.length, 1);
  assert.deepEqual(
    state.control!.opened.checkpoints.map((c) => c.name),
    ["action_started", "old_closed", "old_removed", "replacement_created"],
  );

  // the daemon is fixed (nothing armed): resume starts the same candidate and completes
  const before = await r.committed();
  const resumed = await r.cli(["-o", "json", "state", "resume", ...r.common(operationId)]);
  assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
  assert.equal(resumed.json().data!.committed, true);
  const done = r.world.control.container(cand.id)!;
  assert.equal(done.state.running, true, "the same candidate runs");
  r.world.control.produce(r.p.inputTopic, [order("b1", 500)]);
  const after = await r.committed();
  for (const [p, o] of Object.entries(before)) assert.ok(BigInt(after[p]) >= BigInt(o));
});
