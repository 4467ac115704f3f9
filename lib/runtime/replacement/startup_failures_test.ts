import { strictEqual } from "node:assert/strict";
import { failedBeforeProcessing } from "./guards.ts";
import type { ContainerEvidence } from "../../validation/observation.ts";

/** A candidate that exited `exitCode` with `reason` in its status file, never RUNNING. */
function exited(exitCode: number, reason: string, runningAt: string | null = null) {
  return {
    status: "exited",
    running: false,
    exitCode,
    oomKilled: false,
    runnerStatus: { state: "FAILED", running_at: runningAt, reason, exit_code: exitCode },
  } as unknown as ContainerEvidence;
}

Deno.test("a runner principal's refused login or operation at start-up is a start-up failure state resume may restart", () => {
  for (const reason of ["KAFKA_AUTHENTICATION_FAILED", "KAFKA_AUTHORIZATION_FAILED"]) {
    strictEqual(failedBeforeProcessing(exited(15, reason)), true, reason);
    // once it processed (RUNNING), it is a failed candidate, not a start-up failure
    strictEqual(failedBeforeProcessing(exited(15, reason, "2026-12-06T00:00:00Z")), false, reason);
  }
  // an invalid client file is not cured by a restart (sluice writes it: a defect, exit 10)
  strictEqual(failedBeforeProcessing(exited(10, "KAFKA_CLIENT_INVALID")), false);
  strictEqual(failedBeforeProcessing(exited(15, "STREAMS_FATAL")), false);
});
