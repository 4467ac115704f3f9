import assert from "node:assert/strict";
import {
  describeRunnerStop,
  parseRunnerStop,
  RUNNER_EXITS,
  RUNNER_EXITS_FORMAT,
  RUNNER_REASONS,
  runnerExit,
  runnerReason,
} from "./runner_exits.ts";

const DOC = new URL("../../docs/runner.md", import.meta.url);

/** The rows of the Markdown table after `<!-- runner-exits: NAME -->`, cells trimmed. */
function docTable(text: string, name: string): string[][] {
  const start = text.indexOf(`<!-- runner-exits: ${name} -->`);
  assert.ok(start >= 0, `docs/runner.md has no runner-exits ${name} table`);
  const lines = text.slice(start).split("\n").slice(1);
  const rows: string[][] = [];
  let inTable = false;
  for (const line of lines) {
    if (line.startsWith("|")) {
      inTable = true;
      rows.push(line.split("|").slice(1, -1).map((c) => c.trim()));
    } else if (inTable) break;
  }
  return rows.slice(2); // header and separator
}

Deno.test("the exit table is well formed: unique codes and reasons, every reason's exit documented", () => {
  assert.deepEqual(RUNNER_EXITS_FORMAT, { format: "sluice.runner-exits", version: 1 });
  const codes = RUNNER_EXITS.map((e) => e.code);
  assert.equal(new Set(codes).size, codes.length);
  const reasons = RUNNER_REASONS.map((r) => r.reason);
  assert.equal(new Set(reasons).size, reasons.length);
  for (const r of RUNNER_REASONS) {
    assert.ok(codes.includes(r.exit), `${r.reason}: exit ${r.exit} is not documented`);
    assert.match(r.reason, /^[A-Z][A-Z0-9_]*$/);
  }
  for (const code of [0, 143, 10, 11, 12, 13, 14, 15]) {
    assert.ok(RUNNER_REASONS.some((r) => r.exit === code), `exit ${code} has no reason`);
  }
  assert.equal(runnerExit(13)?.kind, "decode");
  assert.equal(runnerReason("DECODE_WRONG_TYPE")?.exit, 13);
  assert.equal(runnerExit(42), null);
  assert.equal(runnerReason("NOPE"), null);
});

Deno.test("docs/runner.md shows exactly the shared table", async () => {
  const text = await Deno.readTextFile(DOC);
  assert.deepEqual(
    docTable(text, "exits"),
    RUNNER_EXITS.map((e) => [String(e.code), `\`${e.kind}\``, e.meaning]),
  );
  assert.deepEqual(
    docTable(text, "reasons"),
    RUNNER_REASONS.map((r) => [`\`${r.reason}\``, String(r.exit), r.meaning]),
  );
});

const CONTEXT = {
  application_id: "sluice-orders-eligible_orders",
  field: "amount",
  model: "eligible_orders",
  record: {
    fields: ["order_id", "amount", "paid", "note"],
    key_bytes: 3,
    offset: 9,
    partition: 0,
    topic: "raw_orders",
    value_bytes: 52,
  },
  rule: "the field expects BIGINT, got a string",
};

Deno.test("a stop reads the same from the exit line and from the status file", () => {
  const line = {
    context: CONTEXT,
    detail: "record raw_orders-0@9: field 'amount': the field expects BIGINT, got a string",
    reason: "DECODE_WRONG_TYPE",
    sluice_runner_exit: 13,
  };
  const status = {
    application_id: "sluice-orders-eligible_orders",
    detail: line.detail,
    exit_code: 13,
    format: "sluice.runner-status",
    generation: "g1",
    reason: "DECODE_WRONG_TYPE",
    state: "FAILED",
    stop: CONTEXT,
    version: 2,
  };
  const a = parseRunnerStop(line);
  assert.deepEqual(a, parseRunnerStop(status));
  assert.equal(a?.record?.offset, 9);
  assert.equal(
    describeRunnerStop(a!),
    "DECODE_WRONG_TYPE (exit 13) in model eligible_orders at raw_orders-0@9: field 'amount': " +
      "the field expects BIGINT, got a string; record 52 bytes (key 3), fields order_id, amount, paid, note",
  );
});

Deno.test("a stop without a record context is described from the table", () => {
  const stop = parseRunnerStop({
    context: { model: "m", application_id: "a" },
    detail: "group a has no committed offset for raw_orders-0",
    reason: "OFFSETS_MISSING",
    sluice_runner_exit: 14,
  });
  assert.equal(
    describeRunnerStop(stop!),
    "OFFSETS_MISSING (exit 14) in model m: no committed offset for an input partition",
  );
  // a version-1 status file (no stop context) still gives the reason
  const v1 = parseRunnerStop({
    format: "sluice.runner-status",
    version: 1,
    state: "FAILED",
    exit_code: 12,
    reason: "IDENTITY_TOPIC_MISMATCH",
    detail: "x",
  });
  assert.equal(v1?.reason, "IDENTITY_TOPIC_MISMATCH");
  assert.equal(v1?.record, null);
  // a version-4 status file (client_id added) is read the same way
  const v4 = parseRunnerStop({
    format: "sluice.runner-status",
    version: 4,
    client_id: "sluice-op-0",
    state: "FAILED",
    exit_code: 14,
    reason: "OFFSETS_MISSING",
    detail: "x",
    stop: { model: "m" },
  });
  assert.equal(v4?.reason, "OFFSETS_MISSING");
  assert.equal(v4?.model, "m");
  // a version this sluice does not know describes no stop it can read
  assert.equal(
    parseRunnerStop({
      format: "sluice.runner-status",
      version: 5,
      state: "FAILED",
      exit_code: 14,
      reason: "OFFSETS_MISSING",
    }),
    null,
  );
});

Deno.test("what is not a stop is null", () => {
  assert.equal(parseRunnerStop(null), null);
  assert.equal(parseRunnerStop("x"), null);
  assert.equal(
    parseRunnerStop({ format: "sluice.runner-status", version: 2, state: "RUNNING" }),
    null,
  );
  assert.equal(parseRunnerStop({ format: "other", version: 2, state: "FAILED" }), null);
  assert.equal(parseRunnerStop({ sluice_runner_exit: "13", reason: "X" }), null);
  // a malformed record context is dropped, not trusted
  const s = parseRunnerStop({
    sluice_runner_exit: 13,
    reason: "DECODE_MALFORMED",
    detail: null,
    context: { record: { topic: "t", partition: "0" } },
  });
  assert.equal(s?.record, null);
});
