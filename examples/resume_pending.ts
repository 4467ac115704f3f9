/**
 * Resume an interrupted operation found in state — a replacement, a create, a runner removal or
 * a connector change: read the pending operation from the state store, show what runner-status
 * proves about it, and continue the same operation from its last durable boundary with the plan
 * file it was started from. A lock left by a process
 * that died is broken only when asked (`--break-stale-lock`), by its exact ID.
 *
 *   deno run -A examples/resume_pending.ts ./orders replace.plan.json [--break-stale-lock]
 *
 * Exit 0 when nothing is pending or the operation is committed; 4 when blocked; 5 when the lock
 * is held; 6 when the outcome is unknown.
 * @module
 */
import { exitCodeFor, openProject, progressLabel, SluiceError } from "../mod.ts";

const [dir = ".", planFile = `${dir}/replace.plan.json`] = Deno.args.filter((a) =>
  !a.startsWith("--")
);
const breakStale = Deno.args.includes("--break-stale-lock");

async function main(): Promise<number> {
  await using project = await openProject({
    dir,
    onProgress: (e) => {
      if (e.kind !== "wait") console.log(`  ${progressLabel(e).padEnd(20)} ${e.message}`);
    },
  });
  const state = await project.state();
  const pending = state.pending_operation;
  if (!pending) {
    console.log("no pending operation");
    return 0;
  }
  let breakStaleLock: string | undefined;
  if (state.lock.stale && state.lock.holder) {
    console.log(`stale lock: ${state.lock.diagnosis}`);
    if (!breakStale) return 5;
    breakStaleLock = state.lock.holder.lock_id;
  }

  const operation = { plan: planFile, operationId: pending.operation_id, breakStaleLock };
  const report = await project.runnerStatus(operation);
  console.log(
    `operation ${report.operation_id} (${report.journey}): ${report.state}, last durable boundary ${report.last_boundary}`,
  );
  console.log(`next proven step: ${report.next.step} (${report.next.detail})`);

  const outcome = await project.resume({ plan: planFile, operationId: pending.operation_id });
  if (outcome.kind === "change") {
    // a create, runner removal or connector change: continued to its commit, or it threw
    console.log(
      `committed: operation ${outcome.result.operation_id}, serial ${outcome.result.serial}`,
    );
    return 0;
  }
  const r = outcome.result;
  if (r.outcome === "completed") {
    console.log(`committed: operation ${r.operation_id}, ownership serial ${r.serial}`);
    return 0;
  }
  console.error(`${r.outcome} after ${r.last_boundary}: ${r.reason ?? ""}`);
  for (const b of r.blockers) console.error(`  [${b.code}] ${b.message}`);
  return r.outcome === "unknown" ? 6 : 4;
}

Deno.exitCode = await main().catch((error) => {
  // a SluiceError has a stable code and a documented exit status
  console.error(error instanceof SluiceError ? `error[${error.code}]: ${error.message}` : error);
  return exitCodeFor(error);
});
