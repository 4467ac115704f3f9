/**
 * Wait until every job of the project is healthy — exactly one running generation reporting
 * RUNNING with its plan, one consumer-group member — by polling `status`, e.g. after a
 * deployment step of a pipeline.
 *
 *   deno run -A examples/wait_healthy.ts ./orders [timeout-seconds]
 *
 * Exit 0 once every job is healthy, 1 when the time runs out (what is not healthy is printed).
 * @module
 */
import { exitCodeFor, openProject, SluiceError } from "../mod.ts";

const [dir = ".", seconds = "120"] = Deno.args;

async function main(): Promise<number> {
  await using project = await openProject({ dir });
  const deadline = Date.now() + Number(seconds) * 1000;
  while (true) {
    const status = await project.status();
    const waiting = status.models.filter((m) => !m.healthy);
    if (waiting.length === 0) {
      for (const m of status.models) {
        console.log(
          `healthy: ${m.model} (${m.application_id}) generation ${m.generation} lag ${m.lag}`,
        );
      }
      return 0;
    }
    if (Date.now() > deadline) {
      for (const m of waiting) {
        console.error(`not healthy: ${m.model} ${m.state}, group ${m.group} (${m.members})`);
      }
      return 1;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

Deno.exitCode = await main().catch((error) => {
  // a SluiceError has a stable code and a documented exit status
  console.error(error instanceof SluiceError ? `error[${error.code}]: ${error.message}` : error);
  return exitCodeFor(error);
});
