// test-needs: postgres
// The destroy journey (plan --destroy) on the fake world with the PostgreSQL state backend: the
// scenario of destroy_case.ts, as lib/runtime/destroy_test.ts runs it on the local backend.
import {
  destroyConnectorScenario,
  destroyDeletingScenario,
  destroyScenario,
} from "./destroy_case.ts";

Deno.test("destroy on fakes (PostgreSQL state): reviewed, every runner down and its data kept, a verified repeat, create again resumes from what was kept", async () => {
  await destroyScenario("postgres");
});

Deno.test("destroy --delete-data on fakes (PostgreSQL state): create → destroy deleting the groups, volumes and owned topics (the external input kept) → create again from nothing", async () => {
  await destroyDeletingScenario("postgres");
});

Deno.test("destroy on fakes with connectors (PostgreSQL state): each owned connector deleted first, a kill after a deletion continues, runners down, create again makes them anew", async () => {
  await destroyConnectorScenario("postgres");
});
