// test-needs: postgres
// The destroy journey (plan --destroy) on the fake world with the PostgreSQL state backend: the
// scenario of destroy_case.ts, as lib/runtime/destroy_test.ts runs it on the local backend.
import { destroyScenario } from "./destroy_case.ts";

Deno.test("destroy on fakes (PostgreSQL state): reviewed, every runner down and its data kept, a verified repeat, create again resumes from what was kept", async () => {
  await destroyScenario("postgres");
});
