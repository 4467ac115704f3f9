import assert from "node:assert/strict";
import { caseWhy, tallyJunit } from "./test.ts";

Deno.test("JUnit tally counts passed, failed, errored and skipped test cases", () => {
  const xml = `<?xml version="1.0"?>
<testsuites><testsuite name="s" tests="5">
  <testcase name="a" classname="x" time="0.1"/>
  <testcase name="b &amp; c" classname="x" time="0.1"><failure message="boom">trace</failure></testcase>
  <testcase name="d" classname="y" time="0.1"><error message="e"/></testcase>
  <testcase name="e" classname="y" time="0"><skipped/></testcase>
  <testcase name="f" classname="y" time="0.2"><system-out>log</system-out></testcase>
</testsuite></testsuites>`;
  const t = tallyJunit("s", xml);
  assert.equal(t.passed, 2);
  assert.equal(t.failed, 2);
  assert.equal(t.skipped, 1);
  assert.deepEqual(t.failures, ["x > b & c", "y > d"]);
});

Deno.test("JUnit tally of an empty report counts nothing", () => {
  const t = tallyJunit("s", "<testsuites></testsuites>");
  assert.deepEqual([t.passed, t.failed, t.skipped], [0, 0, 0]);
});

Deno.test("a failed probe case says why in the summary line: its error's first line, else its failed checks", () => {
  const ok = { check: "rejection.code", ok: true };
  assert.equal(
    caseWhy({ error: "timed out waiting for RUNNING\n    at x.ts:1", setup: [], assertions: [] }),
    "timed out waiting for RUNNING",
  );
  assert.equal(
    caseWhy({
      error: null,
      setup: [{ check: "setup.tampered", ok: false }],
      assertions: [ok, { check: "rejection.exit_status", ok: false }],
    }),
    "failed: setup.tampered, rejection.exit_status",
  );
  assert.equal(caseWhy({ error: null, setup: [], assertions: [] }), "no assertion recorded");
});
