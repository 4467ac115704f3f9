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
