// The day-two commands cross their sites in the order of their table's rows
// (lib/protocol/day_two.ts DAY_TWO_TABLE), in process on a fake world: a skip-record crosses
// every row, the restart it ends with its last two.
import assert from "node:assert/strict";
import { skipRecord } from "./skip_record.ts";
import { onCrossing } from "../fault/site.ts";
import { dayTwoSites } from "../protocol/day_two.ts";
import { createdStarter } from "../../testing/ways/fake_project.ts";
import { order } from "../../testing/ways/replacement_fixture.ts";

Deno.test("skip-record crosses the day-two rows in table order, each before and after", async () => {
  await using f = await createdStarter("day-two-order");
  f.world.control.produce(f.p.inputTopic, [order("a1", 150)]);
  f.world.control.produce(f.p.inputTopic, [{
    key: "bad",
    value: JSON.stringify({ order_id: "x", amount: "lots", paid: true, customer: null }),
  }]);
  const status = (await f.cli(["-o", "json", "status", "--project", f.p.dir])).json();
  const rec = (status.data!.models as Array<
    { stop: { exit_code: number; runner: { record: { partition: number; offset: number } } } }
  >)[0].stop.runner.record;
  const mine = new Set(dayTwoSites().map((s) => s.name));
  const crossed: string[] = [];
  const stop = onCrossing((c) => {
    if (mine.has(c.site.name)) crossed.push(`${c.site.name}:${c.side}`);
  });
  try {
    await skipRecord({
      dir: f.p.dir,
      model: "eligible_orders",
      reason: "a test order with a text amount",
      partition: rec.partition,
      offset: String(rec.offset),
      ...f.deps,
    });
  } finally {
    stop();
  }
  assert.deepEqual(
    crossed,
    dayTwoSites("skip-record").flatMap((s) => [`${s.name}:before`, `${s.name}:after`]),
  );
  assert.deepEqual(
    crossed.slice(-4),
    dayTwoSites("restart").flatMap((s) => [`${s.name}:before`, `${s.name}:after`]),
  );
});
