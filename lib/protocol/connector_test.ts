import assert from "node:assert/strict";
import {
  CONNECT_SITES,
  CONNECTOR_TABLE,
  connectorRow,
  connectorSite,
  connectorSites,
} from "./connector.ts";

Deno.test("the connector journey records its intent first and commits before waiting", () => {
  assert.equal(CONNECTOR_TABLE[0].step, "intent");
  assert.equal(CONNECTOR_TABLE[0].site?.kind, "journal");
  const steps = CONNECTOR_TABLE.map((r) => r.step);
  assert.ok(steps.indexOf("commit") < steps.indexOf("await_running"));
  assert.equal(connectorRow("commit").site?.kind, "state");
});

Deno.test("each Connect mutation is its own provider site; checks and waits cross none", () => {
  assert.equal(connectorSite("create_connector"), CONNECT_SITES.create);
  assert.equal(connectorSite("update_connector"), CONNECT_SITES.update);
  assert.equal(connectorSite("delete_connector"), CONNECT_SITES.delete);
  for (const s of Object.values(CONNECT_SITES)) assert.equal(s.kind, "provider");
  const without = CONNECTOR_TABLE.filter((r) => r.site === null).map((r) => r.step);
  assert.deepEqual(without, ["release_connector", "await_running"]);
  const names = connectorSites().map((s) => s.name);
  assert.equal(new Set(names).size, names.length);
  assert.deepEqual(names, [
    "journal.connector_intent",
    "connect.create_connector",
    "connect.update_connector_config",
    "connect.delete_connector",
    "state.commit_connectors",
  ]);
});

Deno.test("a lost response of each mutation is resolved by what an exact read shows", () => {
  for (const step of ["create_connector", "update_connector", "delete_connector"] as const) {
    assert.ok(connectorRow(step).lostResponse, step);
  }
  // removal needs the explicit declaration and the owned fingerprint
  assert.match(connectorRow("delete_connector").requires, /explicit removal declaration/);
  assert.ok(connectorRow("delete_connector").blockers.includes("BLOCKED_CONNECTOR_DRIFT"));
});
