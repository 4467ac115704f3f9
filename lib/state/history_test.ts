import assert from "node:assert/strict";
import { hex } from "../../testing/state/fixtures.ts";
import { SluiceError } from "../errors.ts";
import {
  appendedRows,
  appendEvents,
  emptyHistory,
  type HistoryEvent,
  openHistory,
  verifyHistoryRows,
} from "./history.ts";

const commit: HistoryEvent = {
  kind: "ownership_committed",
  operation_id: null,
  recorded_at: "2026-11-29T10:00:00.000Z",
  serial: 1,
  state_checksum: hex("s1"),
};

Deno.test("the history envelope goes 1 → 2 only with a resume and keeps earlier bytes", () => {
  const h1 = appendEvents(emptyHistory("orders", null), [commit]);
  assert.equal(h1.version, 1);
  const resume = { kind: "resume_authorized", authorization_id: "a" } as unknown as HistoryEvent;
  const h2 = appendEvents(h1, [resume]);
  assert.equal(h2.version, 2);
  assert.deepEqual(h2.events[0], h1.events[0]);
  assert.equal(openHistory(h2).length, 2);
  const receipt = { kind: "runner_completed", operation_id: "op" } as unknown as HistoryEvent;
  const h3 = appendEvents(h2, [receipt]);
  assert.equal(h3.version, 3);
  assert.deepEqual(h3.events.slice(0, 2), h2.events);
  assert.equal(appendEvents(h3, [commit]).version, 3);
});

Deno.test("a completion without a resume is version 3; a wrong version is corruption", () => {
  const receipt = { kind: "runner_completed", operation_id: "op" } as unknown as HistoryEvent;
  assert.equal(appendEvents(emptyHistory("orders", null), [receipt]).version, 3);
  const lying = { ...appendEvents(emptyHistory("orders", null), [commit]), version: 3 as const };
  assert.throws(() => openHistory(lying), /version 3 does not match its events \(expected 1\)/);
});

Deno.test("a day-two audit event makes the envelope version 5, keeping earlier bytes; 5 without one is corruption", () => {
  const h4 = appendEvents(emptyHistory("orders", null), [
    commit,
    { kind: "operator_decision", decision_id: "d" } as unknown as HistoryEvent,
  ]);
  assert.equal(h4.version, 4);
  for (const kind of ["runner_restarted", "record_skipped"]) {
    const e = { kind, event_id: "e" } as unknown as HistoryEvent;
    const h5 = appendEvents(h4, [e]);
    assert.equal(h5.version, 5);
    assert.deepEqual(h5.events.slice(0, 2), h4.events);
    assert.equal(openHistory(h5).length, 3);
    assert.equal(appendEvents(emptyHistory("orders", null), [e]).version, 5);
  }
  const lying = { ...appendEvents(emptyHistory("orders", null), [commit]), version: 5 as const };
  assert.throws(() => openHistory(lying), /version 5 does not match its events \(expected 1\)/);
});

Deno.test("history rows: a write appends one row per new event, and the rows must be exactly the events", () => {
  const h1 = appendEvents(emptyHistory("orders", null), [commit]);
  const incident = { kind: "incident", operation_id: "op", incident_id: "i" } as HistoryEvent;
  const h2 = appendEvents(h1, [incident, { ...commit, operation_id: "op" }]);
  const added = appendedRows(h2, h1.events.length);
  assert.deepEqual(added.map((r) => [r.index, r.kind, r.operation_id]), [
    [1, "incident", "op"],
    [2, "ownership_committed", "op"],
  ]);
  assert.deepEqual(added.map((r) => r.bytes), h2.events.slice(1).map((e) => e.bytes));
  const stored = [...appendedRows(h1, 0), ...added].map((r) => ({ ...r, committed_at: null }));
  verifyHistoryRows(h2.events, stored, "t"); // the positive control: exact rows verify
  const field = (rows: typeof stored) => {
    try {
      verifyHistoryRows(h2.events, rows, "t");
    } catch (e) {
      assert.ok(e instanceof SluiceError && e.code === "STATE_CORRUPT_HISTORY", String(e));
      return e.evidence?.field;
    }
    return "verified";
  };
  assert.equal(field(stored.slice(0, 2)), "rows");
  assert.equal(field([...stored, stored[2]]), "rows");
  assert.equal(field([stored[0], stored[2], stored[1]]), "rows[1].index");
  assert.equal(
    field(stored.map((r, i) => i === 2 ? { ...r, operation_id: null } : r)),
    "rows[2].operation_id",
  );
  assert.equal(
    field(stored.map((r, i) => i === 0 ? { ...r, bytes: r.bytes + " " } : r)),
    "rows[0].bytes",
  );
});
