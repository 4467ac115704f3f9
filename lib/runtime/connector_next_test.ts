import assert from "node:assert/strict";
import type { ConnectorAction } from "../plan/connectors.ts";
import { CONNECTOR_TABLE, type ConnectorRow } from "../protocol/connector.ts";
import { blocker } from "../validation/blocker.ts";
import { decideConnectors, reportedConnector } from "./connector_next.ts";
import type { ActionReading, ConnectorReadings, Position } from "./connector_reading.ts";

// decideConnectors is called through the states a connector change passes, on hand-built
// readings (the positions an exact read gives; actionPosition has its own cases in
// connectors_test.ts through the fake Connect worker)

const IDENTITY = { kafka_cluster_id: "k1", endpoint_digest: "d".repeat(64) };

function action(type: ConnectorAction["type"], name: string): ConnectorAction {
  return {
    type,
    connector: name,
    name: `sluice-${name}`,
    cluster: "main",
    identity: IDENTITY,
    config_fingerprint: `fp-${name}`,
  } as unknown as ConnectorAction;
}

const BEFORE: Position = { kind: "before" };
const AFTER: Position = { kind: "after" };

function readings(
  actions: ActionReading[],
  over: Partial<ConnectorReadings> = {},
): ConnectorReadings {
  return {
    operationId: "op-1",
    continuing: false,
    committed: false,
    changedOwnership: null,
    actions,
    ...over,
  };
}

Deno.test("decideConnectors takes each action by the row of its type, in plan order, then the commit", () => {
  const steps: Array<[ConnectorAction["type"], string]> = [
    ["create_connector", "create_connector"],
    ["update_connector", "update_connector"],
    ["remove_connector", "delete_connector"],
    ["release_connector", "release_connector"],
  ];
  for (const [type, step] of steps) {
    const a = action(type, "sink");
    const d = decideConnectors(readings([{ action: a, position: BEFORE }]));
    assert.equal(d.kind, step);
    assert.equal(d.kind !== "blocked" && d.kind !== "commit" && d.kind !== "refuse" && d.action, a);
    assert.equal(reportedConnector(d).row, step);
    assert.equal(reportedConnector(d).detail, "connector sluice-sink (cluster main)");
  }
  // the second action waits for the first: only the first one read decides
  const first = action("create_connector", "source");
  const d = decideConnectors(readings([
    { action: first, position: BEFORE },
    { action: action("create_connector", "sink"), position: BEFORE },
  ]));
  assert.equal(d.kind === "create_connector" && d.action, first);
  // every action dealt with: the commit
  const commit = decideConnectors(readings([]));
  assert.equal(commit.kind, "commit");
  assert.equal(commit.kind === "commit" && commit.recorded, false);
  assert.equal(
    reportedConnector(commit).detail,
    "every connector change is in place; commit the connector records to ownership",
  );
});

Deno.test("a continuation reads past actions found done; the run that recorded the intent refuses them", () => {
  const done = action("create_connector", "source");
  const next = action("create_connector", "sink");
  const both = [{ action: done, position: AFTER }, { action: next, position: BEFORE }];
  const continued = decideConnectors(readings(both, { continuing: true }));
  assert.equal(continued.kind === "create_connector" && continued.action, next);
  // first run: a connector already as this run would make it is a look-alike, never adopted
  const first = decideConnectors(readings(both));
  assert.equal(first.kind, "refuse");
  assert.equal(first.kind === "refuse" && first.row.step, "create_connector");
  assert.deepEqual(
    first.kind === "refuse" && first.blockers.map((b) => b.code),
    ["BLOCKED_UNOWNED_CONNECTOR"],
  );
  assert.match(
    first.kind === "refuse" ? first.blockers[0].message : "",
    /changed between the check and the create_connector: someone else made it/,
  );
  // a removal found done by the first run: refused with the plain message
  const removed = decideConnectors(readings([{
    action: action("remove_connector", "sink"),
    position: AFTER,
  }]));
  assert.equal(
    removed.kind === "refuse" && removed.blockers[0].message,
    "connector sluice-sink changed between the check and the remove_connector",
  );
});

Deno.test("a blocked read blocks a continuation (pending) and refuses in the first run (commit what was done)", () => {
  const a = action("update_connector", "sink");
  const drift = blocker("BLOCKED_CONNECTOR_DRIFT", "connector sluice-sink drifted");
  const position: Position = { kind: "blocked", blocker: drift };
  const continued = decideConnectors(readings([{ action: a, position }], { continuing: true }));
  assert.equal(continued.kind, "blocked");
  assert.deepEqual(continued.kind === "blocked" && continued.blockers, [drift]);
  const status = reportedConnector(continued);
  assert.equal(status.step, "blocked");
  assert.equal(status.row, "update_connector");
  assert.deepEqual(status.blockers, [drift]);
  const first = decideConnectors(readings([{ action: a, position }]));
  assert.equal(first.kind, "refuse");
  assert.deepEqual(first.kind === "refuse" && first.blockers, [drift]);
});

Deno.test("ownership changed under a pending operation blocks at its intent row; a recorded commit is only cleared", () => {
  const changed = decideConnectors(
    readings([], { continuing: true, changedOwnership: { recorded: "aaa", now: "bbb" } }),
  );
  assert.equal(changed.kind, "blocked");
  assert.equal(changed.kind === "blocked" && changed.row?.step, "intent");
  assert.equal(
    changed.kind === "blocked" && changed.blockers[0].message,
    "ownership changed since connector operation op-1 began (aaa → bbb)",
  );
  assert.equal(changed.kind === "blocked" && changed.blockers[0].code, "BLOCKED_STATE_CHANGED");
  const recorded = decideConnectors(readings([], { continuing: true, committed: true }));
  assert.equal(recorded.kind === "commit" && recorded.recorded, true);
  assert.equal(
    reportedConnector(recorded).detail,
    "the commit is recorded; only clearing the operation remains",
  );
});

Deno.test("a guard's code its row does not declare is a programming error, never a silent blocker", () => {
  const table: ConnectorRow[] = CONNECTOR_TABLE.map((r) =>
    r.step === "update_connector" ? { ...r, blockers: ["BLOCKED_CONNECTOR_MISSING"] } : r
  );
  const position: Position = {
    kind: "blocked",
    blocker: blocker("BLOCKED_CONNECTOR_DRIFT", "drifted"),
  };
  assert.throws(
    () =>
      decideConnectors(readings([{ action: action("update_connector", "s"), position }]), table),
    /connector row update_connector: its guard gave undeclared blockers BLOCKED_CONNECTOR_DRIFT/,
  );
});

Deno.test("every code a connector row's guard can give is declared by that row", () => {
  // the positions' codes (actionPosition) and the first run's look-alike, per action type
  const byType: Record<ConnectorAction["type"], string[]> = {
    create_connector: ["BLOCKED_CONNECT_CLUSTER_CHANGED", "BLOCKED_UNOWNED_CONNECTOR"],
    update_connector: [
      "BLOCKED_CONNECT_CLUSTER_CHANGED",
      "BLOCKED_CONNECTOR_MISSING",
      "BLOCKED_CONNECTOR_DRIFT",
      "BLOCKED_UNOWNED_CONNECTOR",
    ],
    remove_connector: [
      "BLOCKED_CONNECT_CLUSTER_CHANGED",
      "BLOCKED_CONNECTOR_DRIFT",
      "BLOCKED_UNOWNED_CONNECTOR",
    ],
    release_connector: ["BLOCKED_CONNECT_CLUSTER_CHANGED", "BLOCKED_UNOWNED_CONNECTOR"],
  };
  for (
    const [type, codes] of Object.entries(byType) as Array<[ConnectorAction["type"], string[]]>
  ) {
    for (const code of codes) {
      const position: Position = {
        kind: "blocked",
        blocker: blocker(code as "BLOCKED_CONNECTOR_DRIFT", "x"),
      };
      const d = decideConnectors(
        readings([{ action: action(type, "s"), position }], { continuing: true }),
      );
      assert.equal(d.kind, "blocked", `${type} ${code}`);
    }
  }
});
