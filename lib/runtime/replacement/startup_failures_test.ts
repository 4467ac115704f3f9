import { strictEqual } from "node:assert/strict";
import { closeCutShort, failedBeforeProcessing } from "./guards.ts";
import type { ContainerEvidence } from "../../validation/observation.ts";

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

Deno.test("a TERM during start-up whose close could not finish (the broker gone with it) stopped the candidate before processing: state resume may restart it", () => {
  // Streams started, never RUNNING; its close timed out (exit 15), or the kill came while closing
  strictEqual(failedBeforeProcessing(exited(15, "CLOSE_TIMEOUT")), true);
  strictEqual(failedBeforeProcessing(exited(137, "SIGTERM", null, "CLOSING")), true);
  // once it was RUNNING it may have processed: a failed candidate, not a start-up stop
  strictEqual(failedBeforeProcessing(exited(15, "CLOSE_TIMEOUT", "2026-12-06T00:00:00Z")), false);
  strictEqual(
    failedBeforeProcessing(exited(137, "SIGTERM", "2026-12-06T00:00:00Z", "CLOSING")),
    false,
  );
  // an OOM kill, or a kill with no TERM recorded, is never taken for one
  strictEqual(failedBeforeProcessing(exited(137, "SIGTERM", null, "CLOSING", true)), false);
  strictEqual(failedBeforeProcessing(exited(137, "", null, "STARTING")), false);
});

Deno.test("a candidate killed before it wrote a status of its own never reached Kafka: state resume may restart it", () => {
  // the runner writes STARTING, with its generation, before it creates any Kafka client; the
  // status file found is the old runner's (the same volume), or none
  const killed = (status: Record<string, unknown> | null, oomKilled = false) =>
    ({
      status: "exited",
      running: false,
      exitCode: 137,
      oomKilled,
      labels: { generation: "op/3" },
      runnerStatus: status,
    }) as unknown as ContainerEvidence;
  const old = { state: "CLOSED", generation: "op0/1", running_at: "2026-12-06T00:00:00Z" };
  strictEqual(failedBeforeProcessing(killed(old)), true);
  strictEqual(failedBeforeProcessing(killed(null)), true);
  // its own status (it started its work), an OOM kill, or a file that cannot be read: not one
  strictEqual(
    failedBeforeProcessing(killed({ state: "STARTING", generation: "op/3", running_at: null })),
    false,
  );
  strictEqual(failedBeforeProcessing(killed(old, true)), false);
  strictEqual(failedBeforeProcessing(killed({ unreadable: true })), false);
});

Deno.test("a TERM after RUNNING whose close a kill cut short (a daemon's shutdown) is told apart from a failure", () => {
  const killed = (
    status: Record<string, unknown> | null,
    options: { oomKilled?: boolean; exitCode?: number } = {},
  ) =>
    ({
      status: "exited",
      running: false,
      exitCode: options.exitCode ?? 137,
      oomKilled: options.oomKilled ?? false,
      labels: { generation: "op/3" },
      runnerStatus: status,
    }) as unknown as ContainerEvidence;
  const closing = {
    state: "CLOSING",
    reason: "SIGTERM",
    generation: "op/3",
    running_at: "2026-12-06T00:00:00Z",
  };
  strictEqual(closeCutShort(killed(closing)), true);
  // not a start-up failure: it reached RUNNING (the row asks the positions separately)
  strictEqual(failedBeforeProcessing(killed(closing)), false);
  // a kill without a TERM, an OOM kill, another exit, another generation's status: not one
  strictEqual(closeCutShort(killed({ ...closing, state: "RUNNING", reason: null })), false);
  strictEqual(closeCutShort(killed(closing, { oomKilled: true })), false);
  strictEqual(closeCutShort(killed(closing, { exitCode: 1 })), false);
  strictEqual(closeCutShort(killed({ ...closing, generation: "op0/1" })), false);
  strictEqual(closeCutShort(killed(null)), false);
});
