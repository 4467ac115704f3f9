/**
 * SIGKILL at seeded random times across the whole replacement, not only at armed sites: each
 * case runs `apply --plan` in a separate OS process and kills it after a delay drawn from the
 * seed (a fraction of the chain's measured uninterrupted replacement), then recovers through the
 * public path in fresh processes (`state show`, `state runner-status`, `state resume`, or the same
 * plan applied again when no operation was recorded) and checks every invariant with the
 * independent witnesses.
 *
 * To keep the cost down the cases run in chains (probes/catalogue.ts: one per backend, run side
 * by side): one deployment per chain, one measured baseline replacement, then one replacement
 * per case, the filter toggling between the old and the new predicate. The output is checked
 * against the whole timeline: each record must have been filtered by the predicate in force
 * after the clean closes (from every completion receipt) that precede its offset.
 *
 *   deno run -A probes/random_kill.ts [--seed N] [--backend local|postgres] [--allow-dirty]
 * @module
 */
import { sharedEnv } from "../harness/env.ts";
import type { EnvDescriptor } from "../harness/env.ts";
import { runnerImageId } from "../harness/project.ts";
import { runFaultJourney } from "../harness/faults.ts";
import { runWorker } from "../harness/worker.ts";
import {
  type GroupMonitor,
  type GroupMonitorReport,
  startGroupMonitor,
} from "../harness/group_monitor.ts";
import { containersOf } from "../harness/witness.ts";
import type { Recorder } from "./evidence.ts";
import type { CaseEvidence } from "./evidence.ts";
import {
  type Backend,
  RANDOM_KILLS,
  randomKillCases,
  randomKillDelay,
  selectedCaseIds,
} from "./catalogue.ts";
import {
  caseEvidence,
  type CaseFixture,
  type CaseMeta,
  cleanupFailed,
  failedCase,
  flag,
  NEW_PREDICATE,
  NEW_PREDICATE_SQL,
  newCase,
  OLD_PREDICATE,
  OLD_PREDICATE_SQL,
  orders,
  runProbe,
  selectionFlags,
} from "./common.ts";
import {
  caseState,
  type Deployed,
  interrupted,
  planReplacement,
  sample,
  verifyCompletion,
  writePlan,
} from "./invariants.ts";

/** The predicate in force after `n` completed replacements of a chain (toggling). */
function predicateAfter(n: number) {
  return n % 2 === 0 ? OLD_PREDICATE : NEW_PREDICATE;
}

function sqlAfter(n: number) {
  return n % 2 === 0 ? OLD_PREDICATE_SQL : NEW_PREDICATE_SQL;
}

/** A chain's shared deployment and what it measured. */
interface Chain {
  fx: CaseFixture;
  /** The fastest uninterrupted replacement measured so far (the delays' scale). */
  baselineMs: number;
  /** Completed replacements so far (the baseline is the first). */
  completed: number;
}

/** Deploy, produce, then one uninterrupted replacement whose duration sets the delays' scale. */
async function startChain(env: EnvDescriptor, image: string, backend: Backend): Promise<Chain> {
  const fx = await newCase(env, image, backend);
  try {
    const first = orders("a", [50, 150, 250, 120, 300, 90, 210, 180]);
    await fx.produce(first);
    await fx.output(first.filter((o) => OLD_PREDICATE(o.value)).length);
    await fx.project.setPredicate(sqlAfter(1));
    const planPath = `${fx.project.dir}/baseline.plan.json`;
    const planned = await writePlan(fx, planPath);
    if (planned.code !== 0) throw new Error(`baseline plan failed (exit ${planned.code})`);
    const w = await runWorker([
      "-o",
      "json",
      "apply",
      "--project",
      fx.project.dir,
      "--plan",
      planPath,
    ], {
      env: fx.workerEnv,
    });
    fx.history.push({
      process: "baseline",
      type: w.code === 0 ? "ok" : "fail",
      f: "apply",
      value: { exit: w.code, ms: w.ms },
      time: w.endedAt,
    });
    if (w.code !== 0) throw new Error(`the baseline replacement failed (exit ${w.code})`);
    return { fx, baselineMs: w.ms, completed: 1 };
  } catch (e) {
    await fx.cleanup().catch(cleanupFailed);
    throw e;
  }
}

/** One random-kill case on the chain's deployment. */
function runKill(
  env: EnvDescriptor,
  chain: Chain,
  c: ReturnType<typeof randomKillCases>[number],
  seed: number,
  runId: string,
): Promise<CaseEvidence> {
  const { fx } = chain;
  const delay = randomKillDelay(seed, c.index, chain.baselineMs);
  const n = chain.completed;
  // the chain's history belongs to its first case; later cases record their own part only
  const from = fx.history.length;
  return caseEvidence(
    killMeta(c, runId, {
      seed,
      baseline_ms: chain.baselineMs,
      delay_ms: delay,
      window: [RANDOM_KILLS.lo, RANDOM_KILLS.hi],
    }),
    async () => {
      const cs = await caseState(fx);
      const d = await planReplacement(env, fx, sqlAfter(n + 1), `replace-${c.index}.plan.json`, cs);
      return { ...d, ...cs };
    },
    async (p) => {
      const lineageFile = `${fx.project.dir}/lineage-${c.index}.jsonl`;
      const known = new Set((await fx.state()).receipts.map((r) => r.operation_id));
      let deaths = 0;
      const generationBefore = await runningGeneration(fx.applicationId);
      const monitor = startGroupMonitor(env.bootstrapHost, fx.applicationId);
      const j = await monitored(monitor, () =>
        runFaultJourney({
          projectDir: fx.project.dir,
          planPath: p.planPath,
          boundary: null,
          side: null,
          env: fx.workerEnv,
          killFirstAfterMs: delay,
          openlineage: lineageFile,
          finalizedOperation: async () =>
            (await fx.state()).receipts.map((r) => r.operation_id).find((o) => !known.has(o)) ??
              null,
          afterDeath: async (jj) => {
            deaths++;
            await sample(p as Deployed, p, jj.workers.at(-1)?.process ?? `death-${deaths}`);
          },
          whileDead: async () => {
            await fx.produce(orders(`d${c.index}`, [150, 250, 99, 200, 320, 130]));
          },
        }));
      p.history.push(...j.history);
      await recordGroupMonitor(p.rec, j.monitor, generationBefore, fx.applicationId);
      const first = j.workers[0];
      p.rec.record({
        check: "fault.random_kill",
        name: `the apply worker was killed by SIGKILL ${delay} ms after its start`,
        kind: "killed-by-signal",
        witness: "process",
        expected: { signal: "SIGKILL", killed_by: "harness", delay_ms: delay },
        actual: {
          process: first?.process ?? null,
          signal: first?.signal ?? null,
          killed_by: first?.killedBy ?? null,
          timed_out: first?.timedOut ?? false,
          exit: first?.code ?? null,
          ran_ms: first?.ms ?? null,
        },
      });
      await verifyCompletion(p, p, j, {
        interrupted: interrupted(j),
        predicates: Array.from({ length: n + 2 }, (_, k) => predicateAfter(k)),
        afterPrefix: `b${c.index}`,
        lineageFile,
      });
      if (j.outcome === "completed") chain.completed++;
      // the kill came after the replacement had finished: the machine got faster; later delays
      // scale with this faster replacement
      if (first && first.signal === null && first.code === 0) {
        chain.baselineMs = Math.min(chain.baselineMs, first.ms);
      }
    },
    (p) => {
      // the deployment lives on; keep only this case's part of the chain's history
      p.history.unshift(...fx.history.slice(from));
      fx.history.splice(from);
      return Promise.resolve();
    },
  );
}

/** Run `journey` under `monitor`, stopped when the journey ends (even by a throw). */
async function monitored<T>(
  monitor: GroupMonitor,
  journey: () => Promise<T>,
): Promise<T & { monitor: GroupMonitorReport }> {
  try {
    const result = await journey();
    return { ...result, monitor: await monitor.stop() };
  } finally {
    await monitor.stop();
  }
}

/** The generation label of the application's one running container (the Docker API). */
async function runningGeneration(applicationId: string): Promise<string | null> {
  const running = (await containersOf(applicationId)).filter((c) => c.running);
  return running.length === 1 ? running[0].labels.generation : null;
}

/**
 * The independent group monitor's two checks: no reading saw two runner generations in the group
 * at once, and its readings saw the old generation and the one running after the case (so the
 * first check is not about an empty window).
 */
async function recordGroupMonitor(
  rec: Recorder,
  report: GroupMonitorReport,
  before: string | null,
  applicationId: string,
): Promise<void> {
  const after = await runningGeneration(applicationId);
  rec.record({
    check: "group.one_generation_at_a_time",
    name: "no reading of the consumer group saw members of two runner generations at once",
    kind: "subset",
    witness: "kafka-admin",
    expected: [0, 1],
    actual: report.counts,
  });
  rec.record({
    check: "group.generations_seen",
    name: "the group monitor saw the old generation and the one running after the case",
    kind: "present",
    witness: "kafka-admin",
    expected: [before ?? "no running runner before", after ?? "no running runner after"],
    actual: report.generations,
  });
}

/** The identity and seed of a random-kill case. */
function killMeta(
  c: ReturnType<typeof randomKillCases>[number],
  runId: string,
  params: Record<string, unknown>,
): CaseMeta {
  return {
    id: c.id,
    kind: "random-kill",
    run_id: runId,
    boundary: null,
    side: null,
    backend: c.backend,
    params: { index: c.index, chain: c.chain, position: c.position, ...params },
  };
}

if (import.meta.main) {
  const env = await sharedEnv();
  const image = await runnerImageId();
  const seed = Number(flag("--seed") ?? Math.floor(Math.random() * 2 ** 31));
  const { selection } = selectionFlags();
  const wanted = new Set(selectedCaseIds("random-kill", selection));
  console.log(`[random-kill] seed ${seed}`);
  const all = randomKillCases().filter((c) => wanted.has(c.id));
  // every case is reported as it ends; the cases of one chain run in order on its deployment,
  // the chains side by side
  const done = new Map<string, (r: CaseEvidence) => void>();
  const results = new Map(all.map((c) => [
    c.id,
    new Promise<CaseEvidence>((resolve) => done.set(c.id, resolve)),
  ]));
  const runChain = async (cases: typeof all, runId: string) => {
    let chain: Chain | null = null;
    let stop: string | null = null;
    try {
      chain = await startChain(env, image, cases[0].backend);
    } catch (e) {
      stop = `the chain could not start: ${e instanceof Error ? e.message : e}`;
    }
    for (const c of cases) {
      if (stop || !chain) {
        done.get(c.id)!(failedCase(killMeta(c, runId, { seed }), stop ?? "no chain"));
        continue;
      }
      const before = chain.completed;
      done.get(c.id)!(await runKill(env, chain, c, seed, runId));
      if (chain.completed === before) stop = `case ${c.id} did not complete: the chain stops`;
    }
    await chain?.fx.cleanup().catch(cleanupFailed);
  };
  // a chain cleans up after its last case has been reported: the probe waits for that before it
  // exits, or the last case's runner, volume, topics and database would outlive it (found as a
  // stray by the environment's tear-down)
  const chains: Promise<void>[] = [];
  const start = (runId: string) => {
    if (chains.length > 0) return;
    for (const ch of new Set(all.map((c) => c.chain))) {
      chains.push(
        runChain(all.filter((c) => c.chain === ch), runId).catch((e) => {
          for (const c of all.filter((x) => x.chain === ch)) {
            done.get(c.id)!(failedCase(killMeta(c, runId, { seed }), `the chain crashed: ${e}`));
          }
        }),
      );
    }
  };
  const status = await runProbe({
    probe: "random-kill",
    env,
    jobs: all.length,
    selection,
    cases: all.map((c) => ({
      id: c.id,
      run: (runId) => {
        start(runId);
        return results.get(c.id)!;
      },
    })),
  });
  await Promise.all(chains);
  Deno.exit(status);
}
