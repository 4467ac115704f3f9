// test-needs: env
// Needs: Docker, the broker, the Connect worker and the runner image (shared environment from
// tools/test.ts). The pipeline journey (tests/pipeline_journey.ts) with local state: FileStream
// source → runner → FileStream sink, exact sink lines; a predicate replacement that leaves the
// connectors untouched; the explicit removal of the sink connector. And a connector of the same
// name made by hand, which sluice never modifies or deletes.
import { sharedEnv } from "../harness/env.ts";
import { runHandMadeCase, runPipelineJourney } from "./pipeline_journey.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "pipeline on local state: source → runner → sink with exact lines, a replacement that leaves the connectors untouched, an explicit sink removal",
  opts,
  async () => await runPipelineJourney(await sharedEnv(), { backend: "local" }),
);

Deno.test(
  "a connector of the same name created by hand is never modified or deleted",
  opts,
  async () => await runHandMadeCase(await sharedEnv()),
);
