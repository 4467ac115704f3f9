// The lock-loss pass's own machinery (testing/sweep/lock_loss.ts, the `lock_lost` pass of the
// crash sweep), so that a green pass cannot be a vacuous one: the takeover really takes the lock
// from a holder on both backends (its next verification is STATE_LOCK_LOST, the lock then names
// the other holder) and really frees it on release; and checkLockLoss flags each way a process
// could go on after the loss. Needs PostgreSQL (SLUICE_PG_URL).
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import { openStateStore } from "../../lib/state/open.ts";
import { type CaseWorld, openCaseWorld } from "./fixture.ts";
import { checkLockLoss } from "./invariants.ts";
import { OTHER_HOLDER, takeOver } from "./lock_loss.ts";
import type { JourneyRun, Step } from "./operator.ts";

const lockLost = (e: unknown) => e instanceof SluiceError && e.code === "STATE_LOCK_LOST";

function storeOf(cw: CaseWorld) {
  const at = cw.state;
  return openStateStore(
    at.backend === "local"
      ? { backend: "local", dir: at.dir, project: at.project, environment: null }
      : { backend: "postgres", url: at.url, project: at.project, environment: null },
  );
}

for (const backend of ["local", "postgres"] as const) {
  Deno.test(`[${backend}] the lock-loss takeover takes the lock from its holder and frees it on release`, async () => {
    await using cw = await openCaseWorld({ backend, seed: crypto.randomUUID() });
    const holder = storeOf(cw);
    const next = storeOf(cw);
    try {
      await holder.init();
      await holder.acquireLock({ actor: "sweep: the journey" });
      await holder.verifyLock(); // positive control: held before the takeover
      const other = await takeOver(cw);
      assert.equal(other.how, "taken");
      await assert.rejects(holder.verifyLock(), lockLost);
      await next.init();
      const status = await next.inspectLock();
      assert.equal(status.held, true);
      assert.equal(status.holder?.actor, OTHER_HOLDER);
      await assert.rejects(
        next.acquireLock({ actor: "sweep: the recovery" }),
        (e) => e instanceof SluiceError && e.code === "STATE_LOCK_HELD",
      );
      await other.release();
      await next.acquireLock({ actor: "sweep: the recovery" });
      await next.releaseLock();
      // the holder that lost it cannot release it either
      await assert.rejects(holder.close(), lockLost);
    } finally {
      await next.close();
    }
  });
}

Deno.test("[local] a takeover while nobody holds the lock holds it for the other holder", async () => {
  await using cw = await openCaseWorld({ backend: "local", seed: crypto.randomUUID() });
  const s = storeOf(cw);
  try {
    await s.init();
    const other = await takeOver(cw);
    assert.equal(other.how, "held");
    await assert.rejects(
      s.acquireLock({ actor: "sweep: the journey" }),
      (e) => e instanceof SluiceError && e.code === "STATE_LOCK_HELD",
    );
    await other.release();
    await s.acquireLock({ actor: "sweep: the journey" });
    await s.releaseLock();
  } finally {
    await s.close();
  }
});

const POINT = "docker.remove_old:after";

function step(code: number, errors: string[] = []): Step {
  return {
    command: "apply --plan",
    armed: POINT,
    code,
    signal: null,
    fired: POINT,
    killedAtFault: false,
    timedOut: false,
    errors: errors.map((c) => ({ code: c, message: c })),
    ms: 1,
  };
}

function run(over: Partial<NonNullable<JourneyRun["lockLoss"]>>, s: Step): JourneyRun {
  return {
    fault: POINT,
    fired: true,
    outcome: "completed",
    codes: [],
    operationId: "op-1",
    steps: [s],
    samples: [],
    brokenLocks: [],
    lockLoss: {
      point: POINT,
      how: "taken",
      lossSeq: 10,
      siteDoneSeq: null,
      after: [],
      pendingAtLoss: "op-1",
      changed: [],
      named: "op-1",
      given: null,
      ...over,
    },
  };
}

const SITE = { site: "docker.remove_old", side: "after" };

Deno.test("checkLockLoss: an unknown outcome naming the pending operation, nothing done after, passes", () => {
  assert.deepEqual(checkLockLoss(SITE, run({}, step(6, ["UNKNOWN_OUTCOME"]))), []);
  assert.deepEqual(checkLockLoss(SITE, run({}, step(4, ["BLOCKED_OLD_VANISHED"]))), []);
  assert.deepEqual(
    checkLockLoss(SITE, run({ pendingAtLoss: null, named: null }, step(5, ["STATE_LOCK_LOST"]))),
    [],
  );
});

Deno.test("checkLockLoss: a mutation or a state write after the loss is a problem", () => {
  const mutated = checkLockLoss(
    SITE,
    run({
      after: [{ seq: 11, by: "docker", op: "createContainer", key: "cand", at: 0 }] as never,
    }, step(6, ["UNKNOWN_OUTCOME"])),
  );
  assert.match(mutated.join("\n"), /the process mutated docker\.createContainer\(cand\)/);
  const wrote = checkLockLoss(SITE, run({ changed: ["control"] }, step(6, ["UNKNOWN_OUTCOME"])));
  assert.match(wrote.join("\n"), /the process wrote control/);
  // a local write in the middle of its file finishes that file, and only that one
  const local = { site: "state.local.finalize.history.rename", side: "before" };
  assert.deepEqual(
    checkLockLoss(local, run({ changed: ["history"] }, step(6, ["UNKNOWN_OUTCOME"]))),
    [],
  );
  assert.match(
    checkLockLoss(local, run({ changed: ["history", "ownership"] }, step(6, ["X"]))).join("\n"),
    /wrote ownership/,
  );
});

Deno.test("checkLockLoss: an answer that hides the pending operation or is no refusal is a problem", () => {
  assert.match(
    checkLockLoss(SITE, run({ named: null }, step(5, ["STATE_LOCK_LOST"]))).join("\n"),
    /operation op-1 pending.*naming no operation/,
  );
  // a command that named the operation itself (state resume --operation-id) need not repeat it
  assert.deepEqual(
    checkLockLoss(SITE, run({ named: null, given: "op-1" }, step(5, ["STATE_LOCK_LOST"]))),
    [],
  );
  assert.deepEqual(
    checkLockLoss(SITE, run({ named: null, given: "op-1" }, step(6, ["UNKNOWN_OUTCOME"]))),
    [],
  );
  // a refusal before the lock was ever taken (a stale lock that is no longer stale) names none
  assert.deepEqual(
    checkLockLoss(SITE, run({ named: null }, step(5, ["STATE_LOCK_NOT_STALE"]))),
    [],
  );
  assert.match(
    checkLockLoss(SITE, run({ named: null, pendingAtLoss: null }, step(6, ["UNKNOWN_OUTCOME"])))
      .join("\n"),
    /names no operation/,
  );
  assert.match(
    checkLockLoss(SITE, run({}, step(5, ["PLAN_STALE_STATE"]))).join("\n"),
    /not a lock code/,
  );
  assert.match(checkLockLoss(SITE, run({}, step(1, ["INTERNAL"]))).join("\n"), /neither/);
});
