/**
 * Replace the filter predicate of a running job, end to end: plan and review the change, keep
 * the reviewed plan in a file, apply it boundary by boundary, and say what to do if it did not
 * finish. Edit the model's `WHERE` clause first.
 *
 *   deno run -A examples/replace_predicate.ts ./orders [replace.plan.json]
 *
 * Exit 0 when the replacement is committed; 1 when the plan is not a reviewable replacement
 * (nothing was applied); 4 when it is blocked and 6 when its outcome is unknown (run the
 * printed command, or examples/resume_pending.ts).
 * @module
 */
import {
  exitCodeFor,
  openProject,
  progressLabel,
  renderReviewText,
  SluiceError,
  writePlanFile,
} from "../mod.ts";

const [dir = ".", planFile = `${dir}/replace.plan.json`] = Deno.args;

async function main(): Promise<number> {
  await using project = await openProject({
    dir,
    // one line per durable boundary and provider action (waits are left out)
    onProgress: (e) => {
      if (e.kind !== "wait") console.log(`  ${progressLabel(e).padEnd(20)} ${e.message}`);
    },
  });

  const { plan, review } = await project.plan();
  console.log(renderReviewText(review));
  if (plan.format !== 6 || plan.blockers.length > 0) {
    console.error("not a reviewable predicate replacement: nothing was applied");
    return 1;
  }
  // the reviewed plan is applied from its file: the resume commands name it
  await writePlanFile(planFile, plan);

  const outcome = await project.apply({ plan: planFile });
  if (outcome.kind !== "replacement") throw new Error("a format-6 plan is always a replacement");
  const r = outcome.result;
  if (r.outcome === "completed") {
    console.log(`committed: operation ${r.operation_id}, ownership serial ${r.serial}`);
    return 0;
  }
  console.error(`${r.outcome} after ${r.last_boundary}: ${r.reason ?? ""}`);
  for (const b of r.blockers) console.error(`  [${b.code}] ${b.message}`);
  console.error(`inspect: ${r.commands.status}\nresume:  ${r.commands.resume}`);
  return r.outcome === "unknown" ? 6 : 4;
}

Deno.exitCode = await main().catch((error) => {
  // a SluiceError has a stable code and a documented exit status
  console.error(error instanceof SluiceError ? `error[${error.code}]: ${error.message}` : error);
  return exitCodeFor(error);
});
