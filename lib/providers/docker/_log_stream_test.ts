import assert from "node:assert/strict";
import { logLines, sinceParam, stdoutLines } from "./_log_stream.ts";

function frame(kind: number, text: string): Uint8Array {
  const body = new TextEncoder().encode(text);
  const out = new Uint8Array(8 + body.length);
  out[0] = kind;
  new DataView(out.buffer).setUint32(4, body.length);
  out.set(body, 8);
  return out;
}

Deno.test("stdout lines are split across frames and chunks; stderr frames are skipped", () => {
  const feed = stdoutLines();
  const all = new Uint8Array([
    ...frame(1, "SLUICE_RUNNER_STATE STA"),
    ...frame(2, "a log line on stderr\n"),
    ...frame(1, "RTING g -\nSLUICE_RUNNER_STATE RUNNING g p\npartial"),
  ]);
  // cut in the middle of a header and of a payload
  assert.deepEqual(feed(all.subarray(0, 5)), []);
  assert.deepEqual(feed(all.subarray(5, 40)), []);
  assert.deepEqual(feed(all.subarray(40)), [
    "SLUICE_RUNNER_STATE STARTING g -",
    "SLUICE_RUNNER_STATE RUNNING g p",
  ]);
  assert.deepEqual(feed(frame(1, " line\n")), ["partial line"]);
});

Deno.test("since keeps the nanoseconds of an RFC 3339 time; the zero time is every line", () => {
  assert.equal(sinceParam("2026-12-01T11:00:00.123456789Z"), "1796122800.123456789");
  assert.equal(sinceParam("2026-12-01T11:00:00Z"), "1796122800.000000000");
  assert.equal(sinceParam("2026-12-01T12:00:00.5+01:00"), "1796122800.500000000");
  assert.equal(sinceParam("0001-01-01T00:00:00Z"), "0");
  assert.throws(() => sinceParam("yesterday"));
});

Deno.test("log lines keep both streams in order, split across chunks; end() returns the partial lines", () => {
  const lines = logLines();
  const all = new Uint8Array([
    ...frame(1, "first\nsec"),
    ...frame(2, "an error\n"),
    ...frame(1, "ond\nlast"),
  ]);
  assert.deepEqual(lines.feed(all.subarray(0, 11)), []);
  assert.deepEqual(lines.feed(all.subarray(11)), [
    { stream: "stdout", line: "first" },
    { stream: "stderr", line: "an error" },
    { stream: "stdout", line: "second" },
  ]);
  assert.deepEqual(lines.end(), [{ stream: "stdout", line: "last" }]);
  assert.deepEqual(lines.end(), []);
});
