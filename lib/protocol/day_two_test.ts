import assert from "node:assert/strict";
import { DAY_TWO_SITES, DAY_TWO_TABLE, dayTwoSite, dayTwoSites } from "./day_two.ts";
import { DAY_TWO_JOURNEY } from "./day_two.ts";

Deno.test("the day-two rows: a skip's record and offset move, then the restart's record and start", () => {
  assert.deepEqual(DAY_TWO_TABLE.map((r) => r.step), [
    "record_skip",
    "advance_offset",
    "record_restart",
    "start_stopped",
  ]);
  assert.deepEqual(dayTwoSites().map((s) => s.name), [
    "journal.record_skipped",
    "kafka.skip_record_offset",
    "journal.runner_restarted",
    "docker.start_stopped",
  ]);
  // a skip-record crosses every row; a restart alone its last two
  assert.deepEqual(dayTwoSites("skip-record"), dayTwoSites());
  assert.deepEqual(dayTwoSites("restart"), dayTwoSites().slice(2));
  assert.deepEqual(DAY_TWO_JOURNEY.crossings[0].sites(), dayTwoSites());
});

Deno.test("every day-two write is recorded before the provider change it authorizes", () => {
  assert.deepEqual(dayTwoSites().map((s) => s.kind), [
    "journal",
    "provider",
    "journal",
    "provider",
  ]);
  for (const r of DAY_TWO_TABLE) {
    assert.equal(dayTwoSite(r.step), r.site, r.step);
    assert.ok(r.requires.length > 20 && r.next.length > 10, r.step);
  }
  // the harnesses' names are the rows' sites, not a second declaration
  assert.equal(DAY_TWO_SITES.skipRecord, dayTwoSite("record_skip"));
  assert.equal(DAY_TWO_SITES.advanceOffset, dayTwoSite("advance_offset"));
  assert.equal(DAY_TWO_SITES.restartRecord, dayTwoSite("record_restart"));
  assert.equal(DAY_TWO_SITES.startStopped, dayTwoSite("start_stopped"));
});
