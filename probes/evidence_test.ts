// Needs nothing running: the verdict rule of every assertion kind, and that an empty sample
// is a failure where the kind needs one (no vacuous pass).
import assert from "node:assert/strict";
import {
  ASSERTION_KINDS,
  type AssertionKind,
  isEmpty,
  judge,
  Recorder,
  summarize,
} from "./evidence.ts";
import { loadRunEventValidator } from "../lib/lineage/validate.ts";
import { buildRunEvent } from "../lib/lineage/events.ts";

const ok = (kind: AssertionKind, expected: unknown, actual: unknown) =>
  judge({ kind, expected, actual }).ok;

Deno.test("equal, set-equal, all-equal", () => {
  assert.ok(ok("equal", { a: 1, b: [2] }, { b: [2], a: 1 }));
  assert.ok(!ok("equal", 2, 1));
  assert.ok(ok("set-equal", [1, 2, 2], [2, 1, 2]));
  assert.ok(!ok("set-equal", [1, 2], [1, 2, 2]), "a duplicate is not the same multiset");
  assert.ok(!ok("set-equal", [], []), "two empty sets compare nothing");
  assert.ok(ok("all-equal", { value: { "0": "3" } }, [{ "0": "3" }, { "0": "3" }]));
  assert.ok(!ok("all-equal", { value: { "0": "3" } }, [{ "0": "3" }, { "0": "4" }]));
  assert.ok(!ok("all-equal", { value: { "0": "3" } }, []), "no sample is a failure");
  assert.ok(!ok("all-equal", { value: null }, [null]), "an empty expected value proves nothing");
  assert.ok(!ok("all-equal", { value: [] }, [[]]));
});

Deno.test("monotonic: at least two non-empty vectors, same partitions, never backwards", () => {
  assert.ok(ok("monotonic", {}, [{ "0": "1", "1": "0" }, { "0": "1", "1": "5" }]));
  assert.ok(!ok("monotonic", {}, [{ "0": "2" }, { "0": "1" }]));
  assert.ok(!ok("monotonic", {}, [{ "0": "1" }]), "one vector compares nothing");
  assert.ok(!ok("monotonic", {}, [{}, {}]), "empty vectors compare nothing");
  assert.ok(!ok("monotonic", {}, [{ "0": "1" }, { "0": "1", "1": "1" }]), "partitions changed");
  assert.ok(!ok("monotonic", {}, [{ "0": "x" }, { "0": "1" }]));
  // 64-bit offsets compare as integers, not as floats or strings
  assert.ok(ok("monotonic", {}, [{ "0": "9007199254740993" }, { "0": "9007199254740994" }]));
  assert.ok(!ok("monotonic", {}, [{ "0": "10" }, { "0": "9" }]));
});

Deno.test("exit-status and killed-by-signal tell a harness timeout from a fault", () => {
  assert.ok(ok("exit-status", { exit: 4 }, { exit: 4, signal: null }));
  assert.ok(!ok("exit-status", { exit: 0 }, { exit: 0, signal: "SIGKILL" }));
  assert.ok(!ok("exit-status", { exit: 0 }, { exit: 0, signal: null, timed_out: true }));
  // a refusal's failure names its blockers: CI's printed line is often all there is to read
  const refused = judge({
    kind: "exit-status",
    expected: { exit: 0 },
    actual: {
      exit: 4,
      signal: null,
      blockers: [{ code: "BLOCKED_CANDIDATE_FAILED", message: "the candidate failed: exit 15" }],
    },
  });
  assert.equal(refused.ok, false);
  assert.match(
    String(refused.why),
    /^exit 4, expected 0 \(BLOCKED_CANDIDATE_FAILED: the candidate failed: exit 15\)$/,
  );
  const site = { signal: "SIGKILL", site: "docker.remove_old:after" };
  assert.ok(ok("killed-by-signal", site, { signal: "SIGKILL", fired: "docker.remove_old:after" }));
  assert.ok(
    ok("killed-by-signal", site, { signal: "SIGKILL", fired: "docker.remove_old:after@1" }),
  );
  assert.ok(
    !ok("killed-by-signal", site, {
      signal: "SIGKILL",
      fired: "docker.remove_old:after",
      timed_out: true,
    }),
    "a timeout is never a fired fault",
  );
  assert.ok(!ok("killed-by-signal", site, { signal: "SIGKILL", fired: null }));
  assert.ok(
    !ok("killed-by-signal", site, { signal: "SIGKILL", fired: "docker.remove_old:before" }),
  );
  assert.ok(!ok("killed-by-signal", site, { signal: null, exit: 0 }));
  const harness = { signal: "SIGKILL", killed_by: "harness" };
  assert.ok(ok("killed-by-signal", harness, { signal: "SIGKILL", killed_by: "harness" }));
  assert.ok(!ok("killed-by-signal", harness, { signal: "SIGKILL", killed_by: "harness-timeout" }));
  assert.ok(!ok("killed-by-signal", { signal: "SIGKILL" }, { signal: "SIGKILL" }));
});

Deno.test("present, absent, subset, count", () => {
  assert.ok(ok("present", ["A"], ["B", "A"]));
  assert.ok(!ok("present", ["A"], ["B"]));
  assert.ok(!ok("present", [], ["A"]), "nothing expected proves nothing");
  assert.ok(ok("absent", ["control"], ["history", "ownership"]));
  assert.ok(!ok("absent", ["control"], ["control"]));
  assert.ok(!ok("absent", [], ["x"]));
  assert.ok(ok("subset", ["g1", "g2"], ["g1"]));
  assert.ok(!ok("subset", ["g1"], ["g1", "g3"]));
  assert.ok(!ok("subset", ["g1"], []), "an empty sample is a failure");
  assert.ok(ok("count", { min: 1, max: 1 }, ["m"]));
  assert.ok(!ok("count", { min: 1, max: 1 }, []));
  assert.ok(!ok("count", { min: 1, max: 1 }, ["m", "n"]));
  assert.ok(!ok("count", {}, []), "a count without bounds checks nothing");
});

Deno.test("agree needs two different witnesses and a non-empty value; unchanged a non-empty snapshot", () => {
  const a = (w: string, value: unknown) => ({ witness: w, value });
  assert.ok(ok("agree", a("kafka-tools", 1), a("sluice", 1)));
  assert.ok(!ok("agree", a("kafka-tools", 1), a("sluice", 2)));
  assert.ok(!ok("agree", a("sluice", 1), a("sluice", 1)), "one witness agreeing with itself");
  assert.ok(!ok("agree", a("kafka-tools", null), a("sluice", null)), "agreeing on nothing");
  assert.ok(ok("unchanged", { s: 1 }, { s: 1 }));
  assert.ok(!ok("unchanged", { s: 1 }, { s: 2 }));
  assert.ok(!ok("unchanged", {}, {}), "an empty snapshot proves nothing");
});

Deno.test("conformant re-validates the recorded OpenLineage events", async () => {
  const validate = await loadRunEventValidator();
  const ev = buildRunEvent("START", {
    operationId: crypto.randomUUID(),
    project: "p",
    environment: null,
    applicationId: "app",
    bootstrap: "kafka:9092",
    inputTopic: "in",
    outputTopic: "out",
  });
  assert.ok(judge({ kind: "conformant", expected: {}, actual: { events: [ev] } }, validate).ok);
  const bad = { ...ev, eventTime: "yesterday" };
  const v = judge({ kind: "conformant", expected: {}, actual: { events: [ev, bad] } }, validate);
  assert.equal(v.ok, false);
  assert.match(v.why!, /event 1: .*eventTime/);
  assert.ok(!judge({ kind: "conformant", expected: {}, actual: { events: [] } }, validate).ok);
  assert.ok(!judge({ kind: "conformant", expected: {}, actual: { events: [ev] } }).ok);
});

Deno.test("every kind has a rule; an unknown kind fails", () => {
  for (const kind of ASSERTION_KINDS) {
    const v = judge({ kind, expected: null, actual: null });
    assert.equal(typeof v.ok, "boolean", kind);
  }
  assert.ok(!judge({ kind: "maybe" as AssertionKind, expected: 1, actual: 1 }).ok);
  assert.ok(isEmpty({}) && isEmpty([]) && isEmpty(null) && isEmpty("") && !isEmpty(0));
});

Deno.test("the recorder keeps setup checks apart; the summary counts evidence only", () => {
  const r = new Recorder();
  r.recordSetup({
    check: "setup.x",
    name: "x",
    kind: "equal",
    witness: "process",
    expected: 1,
    actual: 1,
  });
  r.record({
    check: "a.b",
    name: "b",
    kind: "equal",
    witness: "process",
    expected: 1n,
    actual: 1n,
  });
  assert.equal(r.assertions[0].expected, "1", "bigint recorded as a decimal string");
  const s = summarize([{ error: null, setup: r.setup, assertions: r.assertions }]);
  assert.deepEqual(s, { cases: 1, passed: 1, failed: 0, assertions: 1, failed_assertions: 0 });
  const failedSetup = summarize([{
    error: null,
    setup: [{ ...r.setup[0], ok: false }],
    assertions: r.assertions,
  }]);
  assert.equal(failedSetup.failed, 1, "a failed setup check fails the case");
  assert.equal(failedSetup.assertions, 1);
});
