// The destroy journey (plan --destroy) on the fake world with the local state backend: the
// scenario is testing/journeys/destroy_case.ts (create → destroy keeping data → create again
// from the kept volumes and offsets; --delete-data refused); PostgreSQL runs the same scenario
// in testing/journeys/destroy_pg_test.ts, and the crash sweep's `destroy` journey kills it at
// each site of its table.
import { destroyScenario } from "../../testing/journeys/destroy_case.ts";

Deno.test("destroy on fakes (local state): reviewed, every runner down and its data kept, a verified repeat, create again resumes from what was kept", async () => {
  await destroyScenario("local");
});
