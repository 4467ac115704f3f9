/**
 * The crash sweep's day-two journey (`day_two` in the fault inventory): the deployed starter's
 * runner is stopped by someone else (`docker stop`: TERM, exit 143), then `sluice restart MODEL`
 * runs in a child process carrying the case's fault; after a death the recovery is what the
 * command's contract says: `state show` (a dead process's stale local lock), then the same
 * command again (with `--break-stale-lock` when the lock is stale), until it completes or blocks.
 * The invariants: the same container runs again, exactly one `runner_restarted` event names its
 * stop, exactly one start was made, no offset moved, control and ownership untouched, no lock
 * left.
 *
 * @example
 * ```ts
 * import { runDayTwoCase } from "./day_two.ts";
 * // const { journey, problems } = await runDayTwoCase(cw, c);
 * ```
 * @module
 */
import { fakeCli, type FakeCliResult } from "../fake_cli.ts";
import type { SweepCase } from "./cases.ts";
import { type CaseWorld, deployStarter } from "./fixture.ts";
import { checkFault, checkOutcome } from "./invariants.ts";
import type { JourneyRun, Step } from "./operator.ts";
import { committedOf, containersOf, historyEvents, readState, readWorldFile } from "./reads.ts";

/** The model of the starter. */
const MODEL = "eligible_orders";
/** The reason recorded by the sweep's operator. */
export const DAY_TWO_REASON = "sweep: bring the stopped runner back";
/** Upper bound on recovery rounds. */
const MAX_ROUNDS = 5;

interface ShowView {
  lock: { held: boolean; stale: boolean; holder: { lock_id: string } | null };
}

/**
 * Deploy the starter, stop its runner from outside sluice, run the journey and check it.
 *
 * @example
 * ```ts
 * import { runDayTwoCase } from "./day_two.ts";
 * // (await runDayTwoCase(cw, c)).problems.length === 0
 * ```
 */
export async function runDayTwoCase(
  cw: CaseWorld,
  c: SweepCase,
  options: { timeoutMs?: number } = {},
): Promise<{ journey: JourneyRun; problems: string[] }> {
  const deployed = await deployStarter(cw);
  // the runner catches up, then someone stops it (TERM: a clean close, exit 143)
  cw.world.control.snapshot();
  await cw.deps.docker!.signalTerm(deployed.oldContainerId);
  const w0 = readWorldFile(cw.worldPath);
  const stopSeq = w0.log.at(-1)?.seq ?? 0;
  const before = committedOf(w0, cw.applicationId, cw.project.inputTopic);
  const serialBefore = (await readState(cw.state)).ownership?.serial ?? null;
  const journey = await runDayTwoJourney(cw, c, options);
  const problems = [...checkFault(journey), ...checkOutcome(journey)];
  if (journey.outcome !== "completed") problems.push(`the restart ended ${journey.outcome}`);
  cw.world.control.snapshot();
  const w = readWorldFile(cw.worldPath);
  const state = await readState(cw.state);
  const mine = containersOf(w, cw.applicationId);
  if (mine.length !== 1 || mine[0].id !== deployed.oldContainerId) {
    problems.push(`containers ${mine.map((x) => x.name).join(", ")}, expected the same one`);
  } else if (!mine[0].state.running) {
    problems.push(`${mine[0].name} is not running after the restart`);
  }
  const starts = w.log.filter((m) => m.seq > stopSeq && m.by === "docker");
  if (starts.length !== 1 || starts[0].op !== "startContainer") {
    problems.push(
      `provider mutations after the stop: ${
        starts.map((m) => m.op).join(", ") || "none"
      }; expected one start`,
    );
  }
  if (w.log.some((m) => m.seq > stopSeq && m.by === "kafka")) {
    problems.push("a restart changed something in Kafka");
  }
  const events = historyEvents(state).filter((e) => e.kind === "runner_restarted");
  if (events.length !== 1) problems.push(`${events.length} runner_restarted events, expected 1`);
  const e = events[0] as { container?: { id: string; exit_code: number }; committed?: unknown };
  if (e && (e.container?.id !== deployed.oldContainerId || e.container?.exit_code !== 143)) {
    problems.push(`the event names ${JSON.stringify(e.container)}, not the stopped container`);
  }
  if (e) {
    const recorded = Object.fromEntries(Object.entries(before).map(([k, v]) => [k, String(v)]));
    if (JSON.stringify(e.committed) !== JSON.stringify(recorded)) {
      problems.push(
        `the event records offsets ${JSON.stringify(e.committed)}, not ${JSON.stringify(recorded)}`,
      );
    }
  }
  for (const s of journey.samples) {
    for (const [part, off] of Object.entries(before)) {
      if ((s.offsets[part] ?? -1n) < off) {
        problems.push(`partition ${part} moved backwards after ${s.after}`);
      }
    }
  }
  if (state.control !== null) problems.push("control is pending after a restart");
  if ((state.ownership?.serial ?? null) !== serialBefore) {
    problems.push("ownership changed (a restart changes no owner)");
  }
  if (cw.backend === "local" && state.lockFile) problems.push("lock.json left after the restart");
  return { journey, problems };
}

/** The journey and its recovery (see the module documentation). */
export async function runDayTwoJourney(
  cw: CaseWorld,
  c: SweepCase,
  options: { timeoutMs?: number } = {},
): Promise<JourneyRun> {
  const fault = `${c.site}:${c.side}`;
  const dir = cw.project.dir;
  const run: JourneyRun = {
    fault,
    fired: false,
    outcome: "failed",
    codes: [],
    operationId: null,
    steps: [],
    samples: [],
    brokenLocks: [],
  };
  const call = async (command: string, args: string[]): Promise<FakeCliResult> => {
    const armed = run.fired ? null : fault;
    const r = await fakeCli(cw.worldPath, ["-o", "json", ...args], {
      fault: armed,
      env: cw.env,
      timeoutMs: options.timeoutMs,
    });
    const step: Step = {
      command,
      armed,
      code: r.code,
      signal: r.signal,
      fired: r.fired,
      killedAtFault: r.killedAtFault,
      timedOut: r.timedOut,
      errors: (r.json?.errors ?? []).map((e) => ({ code: e.code, message: e.message })),
      ms: r.ms,
    };
    run.steps.push(step);
    if (r.killedAtFault && armed === fault) run.fired = true;
    if (r.signal !== null) {
      run.samples.push({
        after: command,
        offsets: committedOf(readWorldFile(cw.worldPath), cw.applicationId, cw.project.inputTopic),
      });
    }
    return r;
  };
  const finish = (r: FakeCliResult): boolean => {
    if (r.code === 0) {
      run.outcome = "completed";
      run.codes = [];
      return true;
    }
    run.codes = (r.json?.errors ?? []).map((e) => ({ code: e.code, message: e.message }));
    if (r.code === 4) {
      run.outcome = "blocked";
      return true;
    }
    if (r.timedOut || ![137, 5, 6].includes(r.code)) {
      run.outcome = "failed";
      if (run.codes.length === 0) {
        run.codes.push({ code: `EXIT_${r.code}`, message: r.stderr.slice(-800) });
      }
      return true;
    }
    return false;
  };
  const command = (breakLock: string | null) =>
    call("restart", [
      "restart",
      MODEL,
      "--project",
      dir,
      "--reason",
      DAY_TWO_REASON,
      ...(breakLock ? ["--break-stale-lock", breakLock] : []),
    ]);

  if (finish(await command(null))) return run;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const s = await call("state show", ["state", "show", "--project", dir]);
    if (s.signal !== null) continue;
    if (s.code !== 0) {
      finish(s);
      run.outcome = "failed";
      return run;
    }
    const view = s.json!.data as ShowView;
    const stale = view.lock.held && view.lock.stale && view.lock.holder
      ? view.lock.holder.lock_id
      : null;
    const r = await command(stale);
    if (stale && r.code !== 5 && r.signal === null) run.brokenLocks.push(stale);
    if (finish(r)) return run;
  }
  run.outcome = "failed";
  run.codes.push({
    code: "SWEEP_NOT_CONVERGED",
    message: `no completion or blocker after ${MAX_ROUNDS} recovery rounds`,
  });
  return run;
}
