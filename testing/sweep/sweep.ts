/**
 * The fast exhaustive crash sweep: for every case of {@link sweepCases} (every fault site of the
 * inventory × before/after × state backend), a fresh fake world and starter project, the
 * journey in child processes of the real CLI killed by SIGKILL at the site, the public recovery
 * in fresh processes, and the invariants on independent reads. Cases run side by side in a
 * small pool (each case is its own world, project and database).
 *
 *   deno run -A testing/sweep/sweep.ts [--tier suite|full] [--only site[:side[:backend]],...]
 *                                      [--backend local|postgres] [--jobs N]
 *                                      [--pass crash|lock_lost]
 *
 * prints one line per case and the count and duration (every case unless `--tier suite`);
 * `crash_sweep_pg_test.ts` runs the suite tier in the test suite.
 *
 * @example
 * ```ts
 * import { runSweep } from "./sweep.ts";
 * // const results = await runSweep({ only: "docker.remove_old" });
 * ```
 * @module
 */
import type { Journey } from "../../lib/protocol/journeys.ts";
import { type CaseFilter, caseId, type SweepCase, sweepCases } from "./cases.ts";
import {
  type CaseWorld,
  connectorScenario,
  deployStarter,
  openCaseWorld,
  orders,
  prepareConnector,
  prepareRemoval,
} from "./fixture.ts";
import {
  checkAbandon,
  checkConnector,
  checkCreate,
  checkLockLoss,
  checkRemoval,
  checkReplacement,
  type Deleted,
  expireInput,
} from "./invariants.ts";
import {
  type JourneyRun,
  type JourneyScript,
  operatorDecision,
  PRE_OPERATOR_FAULT,
  PRE_RESUME_FAULT,
  runJourney,
} from "./operator.ts";
import { committedOf, readWorldFile } from "./reads.ts";
import { runDayTwoCase } from "./day_two.ts";
import { checkDestroy, deletesDataAt, destroysConnectorsAt, prepareDestroy } from "./destroy.ts";

/** The result of one case. */
export interface CaseResult {
  id: string;
  case: SweepCase;
  /** Every invariant that did not hold (empty: the case passed). */
  problems: string[];
  journey: JourneyRun | null;
  ms: number;
}

/** Options of {@link runSweep}. */
export interface SweepOptions extends CaseFilter {
  /** Cases at once (default `SLUICE_SWEEP_JOBS` or 2). */
  jobs?: number;
  /** Called as each case ends. */
  onCase?: (r: CaseResult, done: number, total: number) => void;
  /** Keep the worlds, projects and databases of failing cases. */
  keepFailing?: boolean;
}

/** What a harness leaves of its case: the journey's steps and the invariants that did not hold. */
export interface HarnessRun {
  journey: JourneyRun;
  problems: string[];
}

/**
 * How the sweep crosses one journey of the registry at a case's site: the world it needs, then
 * the journey armed at the site (its recovery included) and the invariants on independent reads.
 */
export interface JourneyHarness {
  /**
   * Whether the case's world has a data pipeline (a Connect cluster and a sink database): for
   * every case, or for the cases of some sites.
   */
  readonly pipeline?: boolean | ((c: SweepCase) => boolean);
  /** Run the case in its world. */
  run(cw: CaseWorld, c: SweepCase): Promise<HarnessRun>;
}

/**
 * A replacement from the deployed starter, records arriving while the process is dead (`script`:
 * where its first apply dies first, for a site only `state resume` crosses).
 */
const replacementHarness = (script: JourneyScript): JourneyHarness => ({
  async run(cw, c) {
    const deployed = await deployStarter(cw);
    const before = committedOf(
      readWorldFile(cw.worldPath),
      cw.applicationId,
      cw.project.inputTopic,
    );
    const journey = await runJourney(cw, c, deployed, {
      // records arrive while the process is dead, as they would on a live topic
      whileDead: () => cw.produce(orders("d", [150, 250, 99, 200, 320, 130])),
      script,
    });
    return { journey, problems: await checkReplacement(cw, deployed, journey, before) };
  },
});

/**
 * The sweep's harness of every crossing the registry names ({@link Journey}: the journey
 * registry's `crossings[].by`, `lib/protocol/journeys.ts`). The type asks for every one: a
 * journey registered without its harness here is a type error (and `sweep_test.ts` fails), never
 * a case run by another journey's harness. A new journey's harness is one entry.
 */
export const HARNESSES: { readonly [J in Journey]: JourneyHarness } = {
  replacement: replacementHarness({ resumesCandidate: true }),
  // `state resume` of a replacement: the replacement's harness, its apply killed where only a
  // resume continues, arms it
  resume: replacementHarness({ resumesCandidate: true, preFault: PRE_RESUME_FAULT }),
  create: {
    async run(cw, c) {
      const journey = await runJourney(cw, c, null, { script: { plans: true } });
      return { journey, problems: await checkCreate(cw, journey) };
    },
  },
  operator: {
    async run(cw, c) {
      const deployed = await deployStarter(cw);
      const before = committedOf(
        readWorldFile(cw.worldPath),
        cw.applicationId,
        cw.project.inputTopic,
      );
      const decision = operatorDecision(c.site);
      let deathSeq = 0;
      let deleted: Deleted | undefined;
      const journey = await runJourney(cw, c, deployed, {
        whileDead: () => {
          deathSeq = readWorldFile(cw.worldPath).log.at(-1)?.seq ?? 0;
          cw.produce(orders("d", [150, 250, 99, 200, 320, 130]));
          // retention overtakes the stopped operation: every unprocessed record is gone
          if (decision === "accept-retention-loss") deleted = expireInput(cw);
        },
        script: {
          preFault: PRE_OPERATOR_FAULT,
          decision: operatorDecision,
          resumesCandidate: true,
        },
      });
      const problems = decision === "abandon"
        ? await checkAbandon(cw, journey, deathSeq)
        : await checkReplacement(cw, deployed, journey, before, deleted ?? new Map());
      return { journey, problems };
    },
  },
  connector: {
    pipeline: true,
    async run(cw, c) {
      const change = await prepareConnector(cw, connectorScenario(c.site));
      const journey = await runJourney(cw, c, change);
      return { journey, problems: await checkConnector(cw, journey, change) };
    },
  },
  day_two: { run: (cw, c) => runDayTwoCase(cw, c) },
  removal: {
    async run(cw, c) {
      const change = await prepareRemoval(cw);
      const journey = await runJourney(cw, c, change);
      return { journey, problems: await checkRemoval(cw, journey, change) };
    },
  },
  destroy: {
    // the connector row is crossed only by a project that owns connectors: the pipeline's
    pipeline: (c) => destroysConnectorsAt(c.site),
    async run(cw, c) {
      const change = await prepareDestroy(cw, { deleteData: deletesDataAt(c.site) });
      const journey = await runJourney(cw, c, change);
      return { journey, problems: await checkDestroy(cw, journey, change) };
    },
  },
};

/**
 * The harness of a case's journey; a journey the table does not know (a case built by hand, or
 * a registry the type check did not see) is an error of the case, never another harness's run.
 *
 * @example
 * ```ts
 * import { harnessOf } from "./sweep.ts";
 * console.log(harnessOf("connector").pipeline); // true
 * ```
 */
export function harnessOf(journey: Journey): JourneyHarness {
  const h = Object.hasOwn(HARNESSES, journey) ? HARNESSES[journey] : undefined;
  if (!h) {
    throw new Error(
      `the sweep has no harness for the journey ${JSON.stringify(journey)} ` +
        `(add its entry to HARNESSES in testing/sweep/sweep.ts)`,
    );
  }
  return h;
}

/**
 * Run one case to its end (never throws: a setup error is a problem of the case).
 *
 * @example
 * ```ts
 * import { runCase } from "./sweep.ts";
 * // const r = await runCase({
 * //   site: "docker.remove_old", side: "after", backend: "local", journey: "replacement", pass: "crash",
 * // });
 * ```
 */
export async function runCase(
  c: SweepCase,
  options: { keepFailing?: boolean } = {},
): Promise<CaseResult> {
  const t0 = Date.now();
  const id = caseId(c);
  let journey: JourneyRun | null = null;
  let problems: string[] = [];
  let keep = false;
  try {
    const harness = harnessOf(c.journey);
    const cw = await openCaseWorld({
      backend: c.backend,
      seed: id,
      pipeline: typeof harness.pipeline === "function"
        ? harness.pipeline(c)
        : harness.pipeline ?? false,
    });
    try {
      ({ journey, problems } = await harness.run(cw, c));
      if (c.pass === "lock_lost" && journey) problems.push(...checkLockLoss(c, journey));
    } finally {
      keep = (options.keepFailing ?? false) && problems.length > 0;
      if (keep) console.error(`[sweep] kept ${id}: ${cw.root}`);
      if (!keep) await cw[Symbol.asyncDispose]();
    }
  } catch (error) {
    problems.push(
      `the case could not run: ${error instanceof Error ? error.stack ?? error.message : error}`,
    );
  }
  return { id, case: c, problems, journey, ms: Date.now() - t0 };
}

/**
 * Run the selected cases in a pool and return their results in case order.
 *
 * @example
 * ```ts
 * import { runSweep } from "./sweep.ts";
 * // for (const r of await runSweep({ backend: "local" })) console.log(r.id, r.problems);
 * ```
 */
export async function runSweep(options: SweepOptions = {}): Promise<CaseResult[]> {
  const cases = sweepCases(options);
  const jobs = Math.max(1, options.jobs ?? Number(Deno.env.get("SLUICE_SWEEP_JOBS") ?? "2"));
  const results: CaseResult[] = new Array(cases.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      results[i] = await runCase(cases[i], { keepFailing: options.keepFailing });
      options.onCase?.(results[i], ++done, cases.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, cases.length) }, worker));
  return results;
}

/**
 * One line per step of a journey (for a failing case's report).
 *
 * @example
 * ```ts
 * import { describeJourney } from "./sweep.ts";
 * // console.log(describeJourney(result.journey));
 * ```
 */
export function describeJourney(j: JourneyRun | null): string {
  if (!j) return "(no journey)";
  return j.steps.map((s) =>
    `${s.command}${s.armed ? ` [${s.armed}]` : ""} → ${
      s.signal ? `${s.signal}${s.fired ? ` at ${s.fired}` : ""}` : `exit ${s.code}`
    }${s.errors.length ? ` ${s.errors.map((e) => e.code).join(",")}` : ""}`
  ).join(" | ");
}

function flag(name: string): string | undefined {
  const i = Deno.args.indexOf(name);
  if (i >= 0) return Deno.args[i + 1];
  return Deno.args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

if (import.meta.main) {
  const t0 = Date.now();
  const jobs = flag("--jobs");
  const results = await runSweep({
    only: flag("--only"),
    backend: flag("--backend"),
    tier: flag("--tier") === "suite" ? "suite" : "full",
    pass: flag("--pass") === "lock_lost" ? "lock_lost" : "crash",
    jobs: jobs ? Number(jobs) : undefined,
    keepFailing: Deno.args.includes("--keep"),
    onCase: (r, done, total) => {
      console.log(
        `[sweep] ${done}/${total} ${r.id} ${r.problems.length ? "FAILED" : "ok"} (${
          (r.ms / 1000).toFixed(1)
        }s)`,
      );
      if (r.problems.length) {
        console.log(`        ${describeJourney(r.journey)}`);
        for (const p of r.problems) console.log(`        - ${p}`);
      }
    },
  });
  const failed = results.filter((r) => r.problems.length > 0).length;
  console.log(
    `[sweep] ${results.length} cases, ${results.length - failed} passed, ${failed} failed in ${
      ((Date.now() - t0) / 1000).toFixed(0)
    }s`,
  );
}
