import { strictEqual } from "node:assert/strict";
import { failedBeforeProcessing, startupFailureEvidence } from "./guards.ts";
import type { ContainerEvidence } from "../../validation/observation.ts";
import { outsideStopOf } from "../../validation/runner_stop.ts";

/** Whether a stop was from outside (the one reading: `outsideStopOf`). */
const stoppedFromOutside = (c: ContainerEvidence) => outsideStopOf(c) !== null;

/** A candidate that exited `exitCode` with `reason` in its status file, never RUNNING. */
function exited(
  exitCode: number,
  reason: string,
  runningAt: string | null = null,
  state = "FAILED",
  oomKilled = false,
) {
  return {
    status: "exited",
    running: false,
    exitCode,
    oomKilled,
    labels: { generation: "op/3" },
    runnerStatus: {
      generation: "op/3",
      state,
      running_at: runningAt,
      reason,
      exit_code: state === "FAILED" ? exitCode : null,
    },
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

Deno.test("a TERM during start-up whose close timed out (the broker gone with it) stopped the candidate before processing: state resume may restart it", () => {
  // Streams started, never RUNNING; its close timed out (exit 15)
  strictEqual(failedBeforeProcessing(exited(15, "CLOSE_TIMEOUT")), true);
  // once it was RUNNING it may have processed: a failed candidate, not a start-up stop
  strictEqual(failedBeforeProcessing(exited(15, "CLOSE_TIMEOUT", "2026-12-06T00:00:00Z")), false);
  // a kill is not a start-up failure of its own (stoppedFromOutside tells it)
  strictEqual(failedBeforeProcessing(exited(137, "SIGTERM", null, "CLOSING")), false);
});

/** A candidate killed with exit 137 (by default), its status file `status`. */
function killed(
  status: Record<string, unknown> | null,
  options: { oomKilled?: boolean; exitCode?: number } = {},
) {
  return {
    id: "c".repeat(64),
    status: "exited",
    running: false,
    exitCode: options.exitCode ?? 137,
    oomKilled: options.oomKilled ?? false,
    finishedAt: "2026-12-06T00:00:31Z",
    labels: { generation: "op/3" },
    runnerStatus: status,
  } as unknown as ContainerEvidence;
}

Deno.test("a candidate stopped by a signal before it wrote a status of its own never reached Kafka: a stop from outside", () => {
  // the runner writes STARTING, with its generation, before it creates any Kafka client; the
  // status file found is the old runner's (the same volume), or none
  const old = { state: "CLOSED", generation: "op0/1", running_at: "2026-12-06T00:00:00Z" };
  strictEqual(stoppedFromOutside(killed(old)), true);
  strictEqual(stoppedFromOutside(killed(null)), true);
  strictEqual(startupFailureEvidence(killed(old)).reason, "KILLED_BEFORE_STARTING");
  // the old runner's RUNNING time is not this candidate's
  strictEqual(startupFailureEvidence(killed(old)).running_at, null);
  // a TERM before the runner's handler existed ends the JVM with 143, also before its status
  strictEqual(stoppedFromOutside(killed(old, { exitCode: 143 })), true);
  strictEqual(stoppedFromOutside(killed(null, { exitCode: 143 })), true);
  strictEqual(
    startupFailureEvidence(killed(null, { exitCode: 143 })).reason,
    "TERMINATED_BEFORE_STARTING",
  );
  // an OOM kill, another exit, or a file that cannot be read: not one
  strictEqual(stoppedFromOutside(killed(null, { exitCode: 1 })), false);
  strictEqual(stoppedFromOutside(killed(old, { oomKilled: true })), false);
  strictEqual(stoppedFromOutside(killed({ unreadable: true })), false);
});

Deno.test("a candidate killed while its own status said STARTING, RUNNING or CLOSING was killed from outside (a daemon's shutdown, docker kill): told apart from its own failure", () => {
  const own = (state: string, over: Record<string, unknown> = {}) => ({
    state,
    reason: state === "CLOSING" ? "SIGTERM" : null,
    generation: "op/3",
    running_at: state === "STARTING" ? null : "2026-12-06T00:00:00Z",
    ...over,
  });
  // a TERM ignored while the JVM starts as PID 1, then the kill at the stop timeout
  strictEqual(stoppedFromOutside(killed(own("STARTING"))), true);
  // a kill with no TERM (docker kill) while RUNNING
  strictEqual(stoppedFromOutside(killed(own("RUNNING"))), true);
  // a TERM whose close could not finish, before or after RUNNING
  strictEqual(stoppedFromOutside(killed(own("CLOSING"))), true);
  strictEqual(stoppedFromOutside(killed(own("CLOSING", { running_at: null }))), true);
  const e = startupFailureEvidence(killed(own("CLOSING")));
  strictEqual(e.reason, "KILLED_WHILE_CLOSING");
  strictEqual(e.running_at, "2026-12-06T00:00:00Z");
  strictEqual(e.exit_code, 137);
  strictEqual(startupFailureEvidence(killed(own("STARTING"))).reason, "KILLED_WHILE_STARTING");
  // none of them is a start-up failure of its own
  strictEqual(failedBeforeProcessing(killed(own("STARTING"))), false);
  // an OOM kill, another exit, a final status of its own: not a kill from outside
  strictEqual(stoppedFromOutside(killed(own("RUNNING"), { oomKilled: true })), false);
  strictEqual(stoppedFromOutside(killed(own("RUNNING"), { exitCode: 1 })), false);
  strictEqual(stoppedFromOutside(killed(own("CLOSING"), { exitCode: 143 })), false);
  strictEqual(
    stoppedFromOutside(killed(own("FAILED", { exit_code: 12, reason: "RECORD_DECODE" }))),
    false,
  );
  strictEqual(stoppedFromOutside(killed(own("CLOSED", { exit_code: 143 }))), false);
});
