import assert from "node:assert/strict";
import { REMOVAL_TABLE } from "../protocol/removal.ts";
import { decideRemoval, reportedRemoval } from "./removal_next.ts";
import type { RemovalReadings, RunnerReading } from "./removal_reading.ts";
import { removeAction, runnerContainer, runnerReading } from "../../testing/removal_readings.ts";

// decideRemoval is called through the states a removal passes, on hand-built readings: only the
// fields its guards read are filled (the casts below say so)

function readings(runners: RunnerReading[], over: Partial<RemovalReadings> = {}): RemovalReadings {
  return {
    operationId: "op-1",
    actions: runners.map((r) => r.action),
    committed: false,
    changedOwnership: null,
    runners,
    ...over,
  };
}

Deno.test("decideRemoval walks one runner through the table: TERM, its close awaited, removed, then the commit", () => {
  const a = removeAction("orders");
  const running = runnerReading(a, runnerContainer(a, "running"));
  const term = decideRemoval(readings([running]));
  assert.equal(term.kind, "term_runner");
  // once this run sent TERM, the same reading is the row that waits for its exit
  const waiting = decideRemoval(readings([running]), { termSent: new Set([a.container.id]) });
  assert.equal(waiting.kind === "wait" && waiting.on, "exit");
  assert.equal(waiting.row?.step, "await_closed");
  // closed cleanly, its group not yet empty: still that row, waiting on the group
  const group = decideRemoval(readings([runnerReading(a, runnerContainer(a, "clean"), 1)]));
  assert.equal(group.kind === "wait" && group.on, "group");
  assert.match(
    group.kind === "wait" ? group.timedOut(1_000) : "",
    /^group app-orders still has 1 members/,
  );
  const remove = decideRemoval(readings([runnerReading(a, runnerContainer(a, "clean"))]));
  assert.equal(remove.kind, "remove_container");
  const commit = decideRemoval(readings([runnerReading(a, null)]));
  assert.equal(commit.kind === "commit" && commit.recorded, false);
  const clear = decideRemoval(readings([], { committed: true }));
  assert.equal(clear.kind === "commit" && clear.recorded, true);
  // every step named is a row of the table, in the table's order
  const order = [term, waiting, remove, commit].map((d) => REMOVAL_TABLE.indexOf(d.row!));
  assert.deepEqual(order, [...order].sort((x, y) => x - y));
  assert.ok(order.every((i) => i > 0));
});

Deno.test("decideRemoval takes the runners in plan order: an absent one is behind, the next one is decided", () => {
  const [a, b] = [removeAction("a"), removeAction("b")];
  const d = decideRemoval(
    readings([runnerReading(a, null), runnerReading(b, runnerContainer(b, "running"))]),
  );
  assert.equal(d.kind === "term_runner" && d.runner.action.model, "b");
});

Deno.test("decideRemoval blocks with its row's declared codes: an unclean close, another generation, changed ownership", () => {
  const a = removeAction("orders");
  const killed = decideRemoval(readings([runnerReading(a, runnerContainer(a, "killed"))]));
  assert.equal(killed.kind, "blocked");
  assert.equal(killed.row?.step, "await_closed");
  assert.deepEqual(
    killed.kind === "blocked" ? killed.blockers.map((b) => b.code) : [],
    ["BLOCKED_UNCLEAN_EXIT", "BLOCKED_UNCLEAN_EXIT"],
  );
  const other = { ...runnerContainer(a, "running"), id: "f".repeat(64) };
  const changed = decideRemoval(readings([runnerReading(a, other)]));
  assert.equal(
    changed.kind === "blocked" && changed.blockers[0].code,
    "BLOCKED_REMOVAL_GENERATION_CHANGED",
  );
  assert.equal(changed.row?.step, "term_runner");
  const state = decideRemoval(readings([], { changedOwnership: { recorded: "x", now: "y" } }));
  assert.equal(state.kind === "blocked" && state.blockers[0].code, "BLOCKED_STATE_CHANGED");
  assert.equal(state.row?.step, "intent");
});

Deno.test("runner-status reports the continuation's own decision: the row, as the table words it", () => {
  const a = removeAction("orders");
  const r = reportedRemoval(
    decideRemoval(readings([runnerReading(a, runnerContainer(a, "clean"))])),
  );
  assert.equal(r.step, "remove_container");
  assert.match(r.detail, /closed cleanly \(exit 143\)/);
  assert.match(r.table_row ?? "", /^requires the bound container is stopped/);
  const blocked = reportedRemoval(
    decideRemoval(readings([runnerReading(a, runnerContainer(a, "killed"))])),
  );
  assert.equal(blocked.step, "blocked");
  assert.equal(blocked.row, "await_closed");
});

Deno.test("decideRemoval over another table of the removal's rows decides by that table's rows (its sites)", () => {
  const a = removeAction("orders");
  const own = REMOVAL_TABLE.map((r) =>
    r.step === "term_runner" && r.site
      ? { ...r, site: { ...r.site, name: "docker.term_other" } }
      : r
  );
  const d = decideRemoval(
    readings([runnerReading(a, runnerContainer(a, "running"))]),
    undefined,
    own,
  );
  assert.equal(d.kind, "term_runner");
  assert.equal(d.row?.site?.name, "docker.term_other");
});
