/**
 * The crash sweep's day-two journey (`day_two` in the fault inventory). For the skip's own sites
 * (`journal.record_skipped`, `kafka.skip_record_offset`) the deployed starter's runner stops on a
 * record it cannot decode (exit 13) and `sluice skip-record MODEL --partition P --offset O` runs;
 * for every other day-two site the runner is stopped by someone else (`docker stop`: TERM, exit
 * 143) and `sluice restart MODEL` runs. The command runs in a child process carrying the case's
 * fault; after a death the recovery is what the command's contract says: `state show` (a dead
 * process's stale local lock), then the same command again (with `--break-stale-lock` when the
 * lock is stale), until it completes or blocks. The invariants: the same container runs again,
 * exactly one `runner_restarted` event names its stop, exactly one start was made, control and
 * ownership untouched, no lock left; a restart moved no offset; a skip recorded exactly one
 * `record_skipped` event and moved exactly that partition, once, to the record's offset + 1, and
 * the bad record was never output.
 *
 * @example
 * ```ts
 * import { runDayTwoCase } from "./day_two.ts";
 * // const { journey, problems } = await runDayTwoCase(cw, c);
 * ```
 * @module
 */
import { DAY_TWO_SITES } from "../../lib/protocol/day_two.ts";
import type { SweepCase } from "./cases.ts";
import { type CaseWorld, deployStarter } from "./fixture.ts";
import { checkFault, checkOutcome } from "./invariants.ts";
import { journeyRecorder, type JourneyRun } from "./operator.ts";
import { committedOf, containersOf, historyEvents, readState, readWorldFile } from "./reads.ts";

/** The model of the starter. */
const MODEL = "eligible_orders";
/** The reason recorded by the sweep's operator. */
export const DAY_TWO_REASON = "sweep: bring the stopped runner back";
/** The sites only `skip-record` crosses (the rest are crossed by `restart`). */
const SKIP_SITES: ReadonlySet<string> = new Set([
  DAY_TWO_SITES.skipRecord.name,
  DAY_TWO_SITES.advanceOffset.name,
]);
/** The key of the record the runner cannot decode. */
const BAD_KEY = "bad-record";
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
  const skip = SKIP_SITES.has(c.site);
  // the runner catches up, then it stops: on a record it cannot decode, or by someone's TERM
  cw.world.control.snapshot();
  let bad: { partition: number; offset: bigint } | null = null;
  if (skip) {
    cw.world.control.produce(cw.project.inputTopic, [{
      key: BAD_KEY,
      value: JSON.stringify({ order_id: BAD_KEY, amount: "lots", paid: true, customer: null }),
    }]);
    cw.world.control.snapshot();
    const st = cw.world.control.runnerStatus(deployed.oldContainerId) as {
      stop?: { record?: { partition: number; offset: number } };
    } | null;
    const rec = st?.stop?.record;
    if (!rec) throw new Error("setup: the runner did not stop on the bad record");
    bad = { partition: rec.partition, offset: BigInt(rec.offset) };
  } else {
    await cw.deps.docker!.signalTerm(deployed.oldContainerId);
  }
  const w0 = readWorldFile(cw.worldPath);
  const stopSeq = w0.log.at(-1)?.seq ?? 0;
  const before = committedOf(w0, cw.applicationId, cw.project.inputTopic);
  const serialBefore = (await readState(cw.state)).ownership?.serial ?? null;
  const journey = await runDayTwoJourney(cw, c, { ...options, skip: bad });
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
      `docker mutations after the stop: ${
        starts.map((m) => m.op).join(", ") || "none"
      }; expected one start`,
    );
  }
  const kafka = w.log.filter((m) => m.seq > stopSeq && m.by === "kafka");
  const expectedKafka = bad ? ["setGroupOffsets"] : [];
  if (JSON.stringify(kafka.map((m) => m.op)) !== JSON.stringify(expectedKafka)) {
    problems.push(
      `kafka mutations after the stop: ${kafka.map((m) => m.op).join(", ") || "none"}; expected ${
        expectedKafka.join(", ") || "none"
      }`,
    );
  }
  const all = historyEvents(state);
  const events = all.filter((e) => e.kind === "runner_restarted");
  if (events.length !== 1) problems.push(`${events.length} runner_restarted events, expected 1`);
  const e = events[0] as {
    container?: { id: string; exit_code: number };
    committed?: Record<string, string>;
    after_skip?: string | null;
  };
  if (
    e &&
    (e.container?.id !== deployed.oldContainerId || e.container?.exit_code !== (bad ? 13 : 143))
  ) {
    problems.push(`the event names ${JSON.stringify(e.container)}, not the stopped container`);
  }
  const expectedAtStart = Object.fromEntries(
    Object.entries(before).map(([k, v]) => [
      k,
      String(bad && Number(k) === bad.partition ? bad.offset + 1n : v),
    ]),
  );
  if (e && JSON.stringify(e.committed) !== JSON.stringify(expectedAtStart)) {
    problems.push(
      `the event records offsets ${JSON.stringify(e.committed)}, not ${
        JSON.stringify(expectedAtStart)
      }`,
    );
  }
  if (bad) {
    const skips = all.filter((x) => x.kind === "record_skipped") as unknown as Array<
      { event_id: string; record: { partition: number; offset: string } }
    >;
    if (skips.length !== 1) problems.push(`${skips.length} record_skipped events, expected 1`);
    else {
      if (
        skips[0].record.partition !== bad.partition || skips[0].record.offset !== String(bad.offset)
      ) problems.push(`the skip names ${JSON.stringify(skips[0].record)}, not the bad record`);
      if (e && e.after_skip !== skips[0].event_id) {
        problems.push("the restart does not name the skip");
      }
      const at = (id: unknown) => all.findIndex((x) => x.event_id === id);
      if (e && at(skips[0].event_id) > at((e as { event_id?: string }).event_id)) {
        problems.push("the restart was recorded before the skip");
      }
    }
    const final = committedOf(w, cw.applicationId, cw.project.inputTopic);
    if ((final[String(bad.partition)] ?? -1n) < bad.offset + 1n) {
      problems.push(`partition ${bad.partition} is not past the bad record`);
    }
    const output = w.kafka.topics[cw.project.outputTopic]?.partitions.flatMap((x) => x.records) ??
      [];
    if (output.some((r) => r.key === BAD_KEY)) problems.push("the bad record was output");
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
  options: { timeoutMs?: number; skip?: { partition: number; offset: bigint } | null } = {},
): Promise<JourneyRun> {
  const { run, call, finish } = journeyRecorder(
    cw,
    `${c.site}:${c.side}`,
    options.timeoutMs,
    undefined,
    c.pass,
  );
  const dir = cw.project.dir;
  const skip = options.skip ?? null;
  const command = (breakLock: string | null) =>
    call(skip ? "skip-record" : "restart", [
      skip ? "skip-record" : "restart",
      MODEL,
      "--project",
      dir,
      ...(skip ? ["--partition", String(skip.partition), "--offset", String(skip.offset)] : []),
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
