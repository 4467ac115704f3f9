// The fault matrix's lock invariant: a killed worker's stale lock must be broken explicitly
// only where the worker held one when it died (the full tier arms the local lock's acquire and
// release on both sides; before the acquire and after the release it holds none).
import assert from "node:assert/strict";
import type { FaultJourney } from "../harness/faults.ts";
import type { WorkerResult } from "../harness/worker.ts";
import { Recorder } from "./evidence.ts";
import { recordStaleLocksBroken } from "./invariants.ts";

function journey(fault: string, brokenLocks: string[]): FaultJourney {
  const killed = {
    fault,
    killedAtFault: true,
    signal: "SIGKILL",
  } as unknown as WorkerResult;
  const resumed = { fault: null, killedAtFault: false, signal: null } as unknown as WorkerResult;
  return {
    fault,
    faultFired: true,
    operationId: null,
    outcome: "completed",
    blockers: [],
    brokenLocks,
    workers: [killed, resumed],
    shows: [],
    statuses: [],
    history: [],
  };
}

function verdict(fault: string, brokenLocks: string[]): boolean {
  const rec = new Recorder();
  recordStaleLocksBroken(rec, journey(fault, brokenLocks));
  return rec.assertions.every((a) => a.ok);
}

Deno.test("lock.stale_broken_explicitly counts only workers killed while holding a lock", () => {
  // held: its stale lock must have been broken, once
  for (
    const at of ["lock.local.acquire:after", "lock.local.release:before", "journal.intent:after"]
  ) {
    assert.equal(verdict(at, ["L1"]), true, at);
    assert.equal(verdict(at, []), false, at);
  }
  // not held: nothing may have been broken
  for (
    const at of [
      "lock.local.acquire:before",
      "lock.local.release:after",
      "lock.local.break:after",
      "lock.local.acquire:before@2",
    ]
  ) {
    assert.equal(verdict(at, []), true, at);
    assert.equal(verdict(at, ["L1"]), false, at);
  }
});
