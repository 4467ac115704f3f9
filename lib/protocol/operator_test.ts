import assert from "node:assert/strict";
import {
  OPERATOR_JOURNEY,
  OPERATOR_SITES,
  OPERATOR_TABLE,
  operatorSite,
  operatorSites,
} from "./operator.ts";

Deno.test("the operator's rows: an acceptance's record then its offset move, then an abandonment", () => {
  assert.deepEqual(OPERATOR_TABLE.map((r) => r.step), [
    "record_decision",
    "move_offsets",
    "abandon",
  ]);
  assert.deepEqual(operatorSites().map((s) => s.name), [
    "journal.operator_decision",
    "kafka.move_offsets_to_retained",
    "journal.abandon",
  ]);
  assert.deepEqual(operatorSites("accept-retention-loss").map((s) => s.name), [
    "journal.operator_decision",
    "kafka.move_offsets_to_retained",
  ]);
  assert.deepEqual(operatorSites("abandon").map((s) => s.name), ["journal.abandon"]);
  assert.deepEqual(OPERATOR_JOURNEY.crossings[0].sites(), operatorSites());
});

Deno.test("the inventory's operator names are the rows' sites, not a second declaration", () => {
  assert.equal(OPERATOR_SITES.decision, operatorSite("record_decision"));
  assert.equal(OPERATOR_SITES.moveOffsets, operatorSite("move_offsets"));
  assert.equal(OPERATOR_SITES.abandon, operatorSite("abandon"));
  for (const r of OPERATOR_TABLE) assert.ok(r.requires.length > 20 && r.next.length > 10, r.step);
});
