/**
 * The fault matrix: every site of the fault inventory (the journeys it drives:
 * `MATRIX_JOURNEYS` in catalogue.ts) × before/after × the backends the site exists on is one
 * case (the `suite` tier runs each site once; see `TIERS` in catalogue.ts). The runner-removal
 * and day-two cases are in probes/matrix_lifecycle.ts (the same `apply --plan`, or the same
 * `sluice skip-record` / `sluice restart`, again in a fresh process finishes what the armed one
 * left). The break of a dead worker's local lock is armed in `state runner-status
 * --break-stale-lock` after the apply died holding its lock. The create and connector cases
 * are in probes/matrix_journeys.ts: the armed `apply --plan` (or, for the store's creation,
 * `plan --out`) dies at the site and the same `apply --plan` run again in fresh processes
 * finishes it. So are the operator cases: a replacement's apply dies with the runner stopped,
 * the operator's decision (`state accept-retention-loss` after a real retention loss, or
 * `state abandon`) dies at the site, and the same decision again — then `state resume` after
 * an acceptance — finishes it. A replacement case deploys a fresh
 * starter project on the shared broker,
 * produces records, prepares the reviewed filter change with the installed CLI, and runs
 * `apply --plan` in a separate OS process that dies by SIGKILL at the armed fault point;
 * fresh processes then diagnose and resume (harness/faults.ts). Records are also produced
 * while the worker is dead, and after completion. The invariants are read by independent
 * witnesses (probes/invariants.ts) and written to `verification/fault-matrix.json`.
 *
 *   deno run -A probes/fault_matrix.ts [--tier suite|full] [--only site:side,...]
 *                                      [--backend local|postgres]
 *                                      [--jobs N] [--allow-dirty]
 *
 * Uses the environment named by `SLUICE_ENV_FILE`, or starts (and removes) its own.
 * @module
 */
import { sharedEnv } from "../harness/env.ts";
import type { EnvDescriptor } from "../harness/env.ts";
import { runnerImageId } from "../harness/project.ts";
import { runFaultJourney } from "../harness/faults.ts";
import type { CaseEvidence } from "./evidence.ts";
import type { Journey } from "../lib/protocol/journeys.ts";
import {
  matrixJourney,
  matrixPoints,
  PRE_RESUME_FAULT,
  RESUME_ONLY,
  stopsRunner,
  type Tier,
} from "./catalogue.ts";
import {
  caseEvidence,
  jobs,
  NEW_PREDICATE,
  OLD_PREDICATE,
  orders,
  runProbe,
  selectionFlags,
} from "./common.ts";
import {
  frozenAtDeath,
  interrupted,
  prepareCase,
  recordKilledAtSite,
  recordPreKill,
  recordStaleLocksBroken,
  sample,
  verifyCompletion,
} from "./invariants.ts";
import {
  type MatrixCase,
  runConnectorCase,
  runCreateCase,
  runOperatorCase,
} from "./matrix_journeys.ts";
import { runDayTwoCase, runRemovalCase } from "./matrix_lifecycle.ts";
import { runDestroyCase } from "./matrix_destroy.ts";

/** The cases of a tier, generated from the fault inventory (`matrixPoints`). */
export function matrixCases(
  filter: { only?: string; backend?: string; tier?: Tier } = {},
): MatrixCase[] {
  const only = filter.only?.split(",");
  return matrixPoints(filter.tier).filter((m) =>
    (!filter.backend || filter.backend === m.backend) && (!only || only.includes(m.point))
  ).map((m) => {
    const i = m.point.lastIndexOf(":");
    return {
      boundary: m.point.slice(0, i),
      side: m.point.slice(i + 1) as "before" | "after",
      backend: m.backend,
    };
  });
}

/** How the matrix runs the cases of one journey: its harness's entry point. */
export type MatrixCaseRun = (
  env: EnvDescriptor,
  image: string,
  c: MatrixCase,
  runId: string,
) => Promise<CaseEvidence>;

/**
 * The matrix's harness of every crossing the registry names ({@link Journey}: the journey
 * registry's `crossings[].by`, as `MATRIX_JOURNEYS` lists them). The type asks for every one: a
 * journey registered without its harness here is a type error, never a case run by another
 * journey's harness. A new journey's harness is one entry.
 */
export const MATRIX_HARNESSES: { readonly [J in Journey]: MatrixCaseRun } = {
  replacement: runReplacementCase,
  // `state resume` of a replacement: the replacement's harness arms it (runFaultJourney)
  resume: runReplacementCase,
  create: runCreateCase,
  operator: runOperatorCase,
  connector: runConnectorCase,
  day_two: runDayTwoCase,
  removal: runRemovalCase,
  destroy: runDestroyCase,
};

/**
 * Run one matrix case, by the harness of the journey the site is armed in, and return its
 * evidence. A site the matrix does not arm is an error of the case list, never another
 * journey's case.
 */
export function runCase(
  env: EnvDescriptor,
  image: string,
  c: MatrixCase,
  runId: string,
): Promise<CaseEvidence> {
  const journey = matrixJourney(c.boundary);
  if (journey === null || !Object.hasOwn(MATRIX_HARNESSES, journey)) {
    throw new Error(
      `the fault matrix has no harness for the site ${c.boundary} (journey ${
        JSON.stringify(journey)
      }): add its journey's entry to MATRIX_HARNESSES in probes/fault_matrix.ts`,
    );
  }
  return MATRIX_HARNESSES[journey](env, image, c, runId);
}

/**
 * A replacement case (and a `state resume` one): the reviewed `apply --plan` killed at the
 * point, fresh processes diagnose and resume (see the module documentation).
 */
function runReplacementCase(
  env: EnvDescriptor,
  image: string,
  c: MatrixCase,
  runId: string,
): Promise<CaseEvidence> {
  const point = `${c.boundary}:${c.side}`;
  return caseEvidence(
    {
      id: `${point}:${c.backend}`,
      kind: "matrix",
      run_id: runId,
      boundary: c.boundary,
      side: c.side,
      backend: c.backend,
      params: { site: point, resume_only: RESUME_ONLY.has(c.boundary) },
    },
    () => prepareCase(env, image, c.backend),
    async (p) => {
      const during = orders("d", [150, 250, 99, 200, 320, 130]);
      const lineageFile = `${p.fx.project.dir}/lineage.jsonl`;
      let deaths = 0;
      const j = await runFaultJourney({
        projectDir: p.fx.project.dir,
        planPath: p.planPath,
        boundary: c.boundary,
        side: c.side,
        env: p.fx.workerEnv,
        openlineage: lineageFile,
        afterDeath: async (jj) => {
          deaths++;
          const dead = jj.workers.filter((w) => w.signal !== null).at(-1);
          // the death at the case's own point may leave the old runner closing: let it stop
          const own = dead?.fault === point;
          await sample(p, p, dead?.process ?? `death-${deaths}`, own && stopsRunner(point));
        },
        whileDead: async () => {
          await p.fx.produce(during);
        },
      });
      p.history.push(...j.history);
      // the worker that carried the case's own fault point
      const armed = j.workers.find((w) => w.fault === point);
      recordKilledAtSite(p.rec, armed, point);
      if (RESUME_ONLY.has(c.boundary)) {
        recordPreKill(
          p.rec,
          j,
          PRE_RESUME_FAULT,
          "fault.pre_resume_kill",
          "the apply first died where the operation can only be continued by a resume",
        );
      }
      if (c.backend === "local") recordStaleLocksBroken(p.rec, j);
      await verifyCompletion(p, p, j, {
        interrupted: interrupted(j),
        predicates: [OLD_PREDICATE, NEW_PREDICATE],
        afterPrefix: "b",
        lineageFile,
      });
      if (frozenAtDeath(j)) {
        const st = await p.fx.state();
        p.rec.record({
          check: "audit.frozen_no_new_incident",
          name:
            "killed after its receipt was archived: finishing the finalization recorded no incident (the receipt freezes the terminal control)",
          kind: "count",
          witness: c.backend === "local" ? "state-files" : "state-rows",
          expected: { max: 0 },
          actual: st.history.filter((e) => e.kind === "incident").map((e) => e.incident_id),
        });
      }
    },
  );
}

/** Run the matrix and write its evidence. */
export async function main(): Promise<number> {
  const env = await sharedEnv();
  const image = await runnerImageId();
  const { only, backend, tier, selection } = selectionFlags();
  const cases = matrixCases({ only: only?.join(","), backend: backend ?? undefined, tier });
  return await runProbe({
    probe: "fault-matrix",
    env,
    jobs: jobs(3),
    selection,
    cases: cases.map((c) => ({
      id: `${c.boundary}:${c.side}:${c.backend}`,
      run: (runId) => runCase(env, image, c, runId),
    })),
  });
}

if (import.meta.main) {
  Deno.exit(await main());
}
