import assert from "node:assert/strict";
import { withEnv } from "../../testing/with_env.ts";
import { removalSites } from "./removal.ts";
import {
  faultInventory,
  faultSiteNames,
  formatInventory,
  guardInventorySwitch,
} from "./inventory.ts";
import { FAULT_ENV } from "../fault/site.ts";
import type { SluiceError } from "../errors.ts";
import { REPLACEMENT_TABLE } from "./replacement.ts";
import { CREATE_TABLE } from "./create.ts";
import { CONNECT_SITES, CONNECTOR_TABLE } from "./connector.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("the inventory holds every site of both tables and the coordinator's writes, once", () => {
  const inv = faultInventory();
  const names = inv.map((e) => e.site.name);
  assert.equal(new Set(names).size, names.length);
  for (const row of REPLACEMENT_TABLE) assert.ok(names.includes(row.site.name), row.id);
  for (const row of CREATE_TABLE) if (row.site) assert.ok(names.includes(row.site.name), row.step);
  for (const row of CONNECTOR_TABLE) {
    if (row.site) assert.ok(names.includes(row.site.name), row.step);
  }
  for (const n of ["journal.intent", "journal.interruption", "journal.resume", "state.finalize"]) {
    assert.ok(names.includes(n), n);
  }
  assert.deepEqual(faultSiteNames(), new Set(names));
});

Deno.test("each site names the journey that crosses it first", () => {
  const journeys = new Map(faultInventory().map((e) => [e.site.name, e.journeys]));
  assert.deepEqual(journeys.get("docker.remove_old"), ["replacement"]);
  assert.deepEqual(journeys.get("journal.resume"), ["resume"]);
  assert.deepEqual(journeys.get("journal.interruption"), ["resume"]);
  assert.deepEqual(journeys.get("kafka.position_offsets"), ["create"]);
  assert.deepEqual(journeys.get("runtime.mounted_plan.write"), ["replacement", "create"]);
  for (const s of Object.values(CONNECT_SITES)) {
    assert.deepEqual(journeys.get(s.name), ["connector"], s.name);
  }
  assert.deepEqual(journeys.get("journal.connector_intent"), ["connector"]);
  assert.deepEqual(journeys.get("state.commit_connectors"), ["connector"]);
  // the state layer's writes of begin and commit are crossed by the connector journey too
  const local = faultInventory().filter((e) => e.site.name.startsWith("state.local.begin."));
  assert.ok(local.length > 0);
  for (const e of local) assert.ok(e.journeys.includes("connector"), e.site.name);
  // the runner removal's own sites, and the state writes of its begin and commit
  for (const s of removalSites()) assert.deepEqual(journeys.get(s.name), ["removal"], s.name);
  assert.deepEqual(removalSites().map((s) => s.name), [
    "journal.removal_intent",
    "docker.term_removed_runner",
    "docker.remove_removed_runner",
    "state.commit_removal",
  ]);
  for (const e of local) assert.ok(e.journeys.includes("removal"), e.site.name);
});

Deno.test("every location is a module of the repository that declares or crosses the site", async () => {
  for (const e of faultInventory()) {
    const text = await Deno.readTextFile(`${ROOT}${e.location}`);
    // a table names its sites literally; a module whose sites are generated crosses them
    assert.ok(
      text.includes(`"${e.site.name}"`) || text.includes("atSite("),
      `${e.site.name} is declared or crossed in ${e.location}`,
    );
  }
});

Deno.test("--list prints one line per site with kind, backends, journeys and location", () => {
  const inv = faultInventory();
  const lines = formatInventory(inv).split("\n");
  assert.equal(lines.length, inv.length + 2);
  assert.equal(lines.at(-1), `${inv.length} fault sites`);
  for (const [i, e] of inv.entries()) {
    const cols = lines[i + 1].split(/\s{2,}/);
    assert.deepEqual(cols.slice(0, 5), [
      e.site.name,
      e.site.kind,
      (e.site.backends ?? ["local", "postgres"]).join(","),
      e.journeys.join(","),
      e.location,
    ]);
  }
});

Deno.test("entry points refuse a stray switch and a site outside the inventory", () => {
  const code = (e: unknown) => (e as SluiceError).code;
  withEnv({ [FAULT_ENV.point]: "docker.remove_old:after", [FAULT_ENV.allow]: undefined }, () => {
    assert.throws(guardInventorySwitch, (e) => code(e) === "USAGE_FAULT_SWITCH_NOT_ALLOWED");
  });
  withEnv({ [FAULT_ENV.point]: "docker.remove_everything:after", [FAULT_ENV.allow]: "1" }, () => {
    assert.throws(guardInventorySwitch, (e) => code(e) === "USAGE_FAULT_POINT");
  });
  withEnv({ [FAULT_ENV.point]: "docker.create_volume:before@2", [FAULT_ENV.allow]: "1" }, () => {
    guardInventorySwitch();
  });
  withEnv({ [FAULT_ENV.point]: undefined, [FAULT_ENV.allow]: undefined }, () => {
    guardInventorySwitch();
  });
});
