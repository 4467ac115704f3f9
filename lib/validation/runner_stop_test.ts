import assert from "node:assert/strict";
import type { ContainerEvidence } from "./observation.ts";
import { notACleanClose, runnerStopOf } from "./runner_stop.ts";

function exited(
  exitCode: number,
  runnerStatus: Record<string, unknown> | null,
  over: Partial<ContainerEvidence> = {},
): ContainerEvidence {
  return {
    id: "a".repeat(64),
    name: "sluice-orders-eligible_orders",
    status: "exited",
    running: false,
    exitCode,
    oomKilled: false,
    dockerError: "",
    startedAt: "2026-12-01T00:00:00Z",
    finishedAt: "2026-12-01T00:01:00Z",
    everStarted: true,
    imageId: "sha256:img",
    networkMode: "net",
    networks: {},
    mounts: [],
    labels: {
      applicationId: "sluice-orders-eligible_orders",
      artifactSha256: "d".repeat(64),
      planSha256: "p",
      generation: "g",
      operationId: null,
      actionIndex: null,
      evidenceFingerprint: null,
    },
    plan: {
      sha256: "p",
      matchesLabel: true,
      artifactSha256: "d".repeat(64),
      identity: null,
      error: null,
      text: null,
    },
    environment: { ok: true, unexpected: [], missing: [] },
    execution: { ok: true, problems: [] },
    volumeInstance: "vol",
    runnerStatus,
    ...over,
  } as ContainerEvidence;
}

const DECODE = {
  format: "sluice.runner-status",
  version: 2,
  state: "FAILED",
  exit_code: 13,
  reason: "DECODE_WRONG_TYPE",
  detail: "record raw_orders-0@9: field 'amount': the field expects BIGINT, got a string",
  stop: {
    model: "eligible_orders",
    application_id: "sluice-orders-eligible_orders",
    field: "amount",
    rule: "the field expects BIGINT, got a string",
    record: {
      topic: "raw_orders",
      partition: 0,
      offset: 9,
      key_bytes: 3,
      value_bytes: 52,
      fields: ["order_id", "amount"],
    },
  },
};

Deno.test("a decode failure is reported with the runner's reason, position and the record's shape", () => {
  const stop = runnerStopOf(exited(13, DECODE))!;
  assert.equal(stop.kind, "decode");
  assert.equal(stop.runner?.reason, "DECODE_WRONG_TYPE");
  assert.equal(stop.runner?.record?.offset, 9);
  assert.equal(
    stop.summary,
    "DECODE_WRONG_TYPE (exit 13) in model eligible_orders at raw_orders-0@9: field 'amount': " +
      "the field expects BIGINT, got a string; record 52 bytes (key 3), fields order_id, amount",
  );
});

Deno.test("an exit the status file does not describe is explained by the shared exit table", () => {
  // SIGKILL: the status file still says RUNNING
  const killed = runnerStopOf(exited(137, { ...DECODE, state: "RUNNING", exit_code: null }))!;
  assert.equal(killed.runner, null);
  assert.equal(killed.kind, "killed");
  assert.match(killed.summary, /^exit 137 \(killed\): SIGKILL/);
  // a FAILED file of an earlier run does not explain a later kill
  assert.equal(runnerStopOf(exited(137, DECODE))!.runner, null);
  // the OOM killer
  const oom = runnerStopOf(exited(137, null, { oomKilled: true }))!;
  assert.match(oom.summary, /^exit 137 \(OOM-killed\)/);
  assert.equal(oom.oom_killed, true);
  // a TERM close: the runner's own SIGTERM reason
  const closed = runnerStopOf(exited(143, {
    format: "sluice.runner-status",
    version: 2,
    state: "CLOSED",
    exit_code: 143,
    reason: "SIGTERM",
    detail: "closed and committed",
    stop: null,
  }))!;
  assert.equal(closed.runner?.reason, "SIGTERM");
  assert.equal(closed.kind, "closed");
  // an exit the runner does not document
  assert.match(runnerStopOf(exited(99, null))!.summary, /exit 99: not an exit code/);
});

Deno.test("a running container, or one never started, has no stop", () => {
  assert.equal(runnerStopOf(exited(0, null, { running: true, status: "running" })), null);
  assert.equal(runnerStopOf(exited(0, null, { status: "created", everStarted: false })), null);
});

/** A status file this container's own run wrote (its generation and plan, after its start). */
const own = (state: string, over: Record<string, unknown> = {}) => ({
  generation: "g",
  plan_sha256: "p",
  started_at: "2026-12-01T00:00:01Z",
  state,
  ...over,
});

Deno.test("the clean-close rule: exited, raw exit 0 or 143, no OOM kill, no Docker error, its own fresh CLOSED status file", () => {
  const codes = (c: ContainerEvidence) => notACleanClose(c).map((f) => f.code);
  assert.deepEqual(codes(exited(143, own("CLOSED"))), []);
  assert.deepEqual(codes(exited(0, own("CLOSED"))), []);
  assert.deepEqual(codes(exited(137, own("RUNNING"))), [
    "BLOCKED_UNCLEAN_EXIT",
    "BLOCKED_UNCLEAN_EXIT",
  ]);
  assert.deepEqual(codes(exited(13, own("FAILED", { reason: "DECODE_WRONG_TYPE" }))), [
    "BLOCKED_UNCLEAN_EXIT",
    "BLOCKED_UNCLEAN_EXIT",
  ]);
  assert.deepEqual(codes(exited(137, own("CLOSED"), { oomKilled: true })), [
    "BLOCKED_UNCLEAN_EXIT",
    "BLOCKED_OOM",
  ]);
  assert.deepEqual(codes(exited(143, own("CLOSED"), { status: "running", running: true })), [
    "BLOCKED_UNKNOWN_EXIT",
  ]);
  assert.deepEqual(codes(exited(143, own("CLOSED"), { dockerError: "OCI runtime error" })), [
    "BLOCKED_UNCLEAN_EXIT",
  ]);
  assert.equal(
    notACleanClose(exited(137, own("CLOSED")), "the old runner")[0].message,
    "the old runner exited with code 137; only 0 or 143 is a clean close",
  );
});

Deno.test("an exit code alone proves no close: a missing, foreign or stale status file is refused with its own code", () => {
  const codes = (c: ContainerEvidence) => notACleanClose(c).map((f) => f.code);
  // no status file at all (the runner never recorded a close): 0 and 143 alike
  assert.deepEqual(codes(exited(0, null)), ["BLOCKED_CLOSE_STATUS_MISSING"]);
  assert.deepEqual(codes(exited(143, null)), ["BLOCKED_CLOSE_STATUS_MISSING"]);
  // written by another generation, or for another plan
  assert.deepEqual(codes(exited(143, own("CLOSED", { generation: "other" }))), [
    "BLOCKED_CLOSE_STATUS_FOREIGN",
  ]);
  assert.deepEqual(codes(exited(143, own("CLOSED", { plan_sha256: "q" }))), [
    "BLOCKED_CLOSE_STATUS_FOREIGN",
  ]);
  // left by an earlier run of the same container (this run started at 00:00:00)
  assert.deepEqual(codes(exited(143, own("CLOSED", { started_at: "2026-11-30T23:00:00Z" }))), [
    "BLOCKED_STALE_STATUS",
  ]);
  assert.deepEqual(codes(exited(143, own("CLOSED", { started_at: null }))), [
    "BLOCKED_STALE_STATUS",
  ]);
  assert.match(notACleanClose(exited(143, null))[0].message, /left no status file/);
});
