import assert from "node:assert/strict";
import { hex } from "../../testing/state/fixtures.ts";
import { appendEvents, emptyHistory, type HistoryEvent, openHistory } from "./history.ts";

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
