/**
 * A CI gate for a pull request: plan the project and fail when the plan has a blocker, or when
 * it changes a model that a declared downstream application reads (an `externals:` entry of
 * sluice.yaml). The review is printed as Markdown either way, ready to post as a comment.
 *
 *   deno run -A examples/ci_gate.ts ./orders [--offline]
 *
 * Exit 0 when the gate passes, 1 when it fails (each reason on stderr).
 * @module
 */
import { exitCodeFor, openProject, renderReviewMarkdown, SluiceError } from "../mod.ts";

const dir = Deno.args.find((a) => !a.startsWith("--")) ?? ".";
const offline = Deno.args.includes("--offline");

async function main(): Promise<number> {
  await using project = await openProject({ dir });
  const { plan, review } = await project.plan({ offline });
  console.log(renderReviewMarkdown(review));

  const reasons = [
    ...plan.blockers.map((b) => `blocked: [${b.code}] ${b.message}`),
    ...review.changes.flatMap((c) =>
      (c.impact?.declared ?? []).map((d) =>
        `${c.model} (${c.kind}) is read by ${d.external} (group ${d.group_id})`
      )
    ),
  ];
  for (const reason of reasons) console.error(`gate: ${reason}`);
  if (reasons.length === 0) console.error("gate: passed");
  return reasons.length === 0 ? 0 : 1;
}

Deno.exitCode = await main().catch((error) => {
  // a SluiceError has a stable code and a documented exit status
  console.error(error instanceof SluiceError ? `error[${error.code}]: ${error.message}` : error);
  return exitCodeFor(error);
});
