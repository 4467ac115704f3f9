// test-needs: env
// Needs: Docker, the broker, the Connect worker, PostgreSQL and the runner image (shared
// environment from tools/test.ts). The pipeline journey (tests/pipeline_journey.ts) with the
// PostgreSQL state backend: the same checks as the local-state file, the connector records in
// PostgreSQL.
import { sharedEnv } from "../harness/env.ts";
import { runPipelineJourney } from "./pipeline_journey.ts";

Deno.test(
  "pipeline on PostgreSQL state: source → runner → sink with exact lines, a replacement that leaves the connectors untouched, an explicit sink removal",
  { sanitizeOps: false, sanitizeResources: false },
  async () => await runPipelineJourney(await sharedEnv(), { backend: "postgres" }),
);
