// The fast exhaustive crash sweep (issue 12, item 5), in every test run: every fault site of the
// inventory × before/after × state backend, the journey killed by SIGKILL at the site in a child
// process of the real CLI on the fake world, the public recovery in fresh processes, and the
// invariants on independent reads (testing/sweep/). A case listed in expected_failures.ts is a
// known product defect: it must still fail with its described symptom (and the test says so
// when it passes, so that the list shrinks as fixes land). Needs PostgreSQL (SLUICE_PG_URL).
//
//
// The lock-loss pass (issue 26 item 2) runs the same journeys, recoveries and invariants, but at
// the site the process loses its deployment lock to another holder instead of dying
// (lock_loss.ts): it must stop at once — no provider mutation or state write after the loss —
// answer with a blocker, the lock's refusal or an unknown outcome naming the operation, and the
// recovery must finish exact once the other holder released the lock.
//
// SLUICE_SWEEP_TIER=full (default: suite, one case per site in each pass; see cases.ts);
// SLUICE_SWEEP_ONLY=site[:side[:backend]],...  SLUICE_SWEEP_BACKEND=local|postgres  select cases;
// SLUICE_SWEEP_PASS=crash|lock_lost runs one pass only (default both);
// SLUICE_SWEEP_JOBS=N cases at once (default 2); SLUICE_SWEEP_KEEP=1 keeps failing cases' files.
import { caseId, sweepCases, type SweepPass } from "./cases.ts";
import { EXPECTED_FAILURES, expectedFailure } from "./expected_failures.ts";
import { type CaseResult, describeJourney, runCase } from "./sweep.ts";

const env = (name: string) => Deno.env.get(name) || undefined;
// the test suite runs the suite tier (one case per site); SLUICE_SWEEP_TIER=full runs every case
const tier = env("SLUICE_SWEEP_TIER") === "full" ? "full" : "suite";
const filter = {
  only: env("SLUICE_SWEEP_ONLY"),
  backend: env("SLUICE_SWEEP_BACKEND"),
  tier,
} as const;
const jobs = Math.max(1, Number(env("SLUICE_SWEEP_JOBS") ?? "2"));
const passes: SweepPass[] = env("SLUICE_SWEEP_PASS") === "crash"
  ? ["crash"]
  : env("SLUICE_SWEEP_PASS") === "lock_lost"
  ? ["lock_lost"]
  : ["crash", "lock_lost"];
const NO_SANITIZERS = { sanitizeOps: false, sanitizeResources: false, sanitizeExit: false };

Deno.test("the expected-failures list names only cases of the inventory, once each", () => {
  const ids = new Set([...sweepCases(), ...sweepCases({ pass: "lock_lost" })].map(caseId));
  const seen = new Set<string>();
  for (const f of EXPECTED_FAILURES) {
    if (f.cases.length === 0) throw new Error(`an expected failure lists no case: ${f.defect}`);
    for (const id of f.cases) {
      if (!ids.has(id)) throw new Error(`${id} is not a case of the inventory (${f.defect})`);
      if (seen.has(id)) throw new Error(`${id} is listed twice`);
      seen.add(id);
    }
  }
});

const NAMES: Record<SweepPass, Record<typeof tier, string>> = {
  crash: {
    full:
      "crash sweep: every fault site × before/after × backend ends finished or precisely blocked",
    suite: "crash sweep (suite tier): every fault site, once, ends finished or precisely blocked",
  },
  lock_lost: {
    full:
      "lock-loss sweep: a lock lost at every fault site × before/after × backend stops the journey at once, and the recovery finishes exact",
    suite:
      "lock-loss sweep (suite tier): a lock lost at every fault site, once, stops the journey at once, and the recovery finishes exact",
  },
};

for (const pass of passes) {
  Deno.test({
    name: NAMES[pass][tier],
    ...NO_SANITIZERS,
    fn: (t) => runPass(t, pass),
  });
}

/** Run one pass's selected cases as steps, a few at once, and print the tally. */
async function runPass(t: Deno.TestContext, pass: SweepPass): Promise<void> {
  const t0 = Date.now();
  const cases = sweepCases({ ...filter, pass });
  if (cases.length === 0) throw new Error(`no case selected by ${JSON.stringify(filter)}`);
  const results: CaseResult[] = [];
  const tally = { passed: 0, expected: 0, failed: 0 };
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++];
      const id = caseId(c);
      await t.step({
        name: id,
        ...NO_SANITIZERS,
        async fn() {
          const r = await runCase(c, { keepFailing: env("SLUICE_SWEEP_KEEP") === "1" });
          results.push(r);
          const known = expectedFailure(id);
          const story = `${describeJourney(r.journey)}\n  - ${r.problems.join("\n  - ")}`;
          if (known) {
            if (r.problems.length === 0) {
              tally.failed++;
              throw new Error(
                `${id} now passes: remove it from expected_failures.ts (${known.defect})`,
              );
            }
            if (!r.problems.some((p) => known.symptom.test(p))) {
              tally.failed++;
              throw new Error(
                `${id} fails, but not with the known symptom ${known.symptom}:\n  ${story}`,
              );
            }
            tally.expected++;
            console.log(`[sweep] ${id}: expected failure (${known.defect.split(":")[0]})`);
            return;
          }
          if (r.problems.length > 0) {
            tally.failed++;
            throw new Error(`${id}:\n  ${story}`);
          }
          tally.passed++;
        },
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, cases.length) }, worker));
  const seconds = (Date.now() - t0) / 1000;
  const caseSeconds = results.reduce((s, r) => s + r.ms, 0) / 1000;
  console.log(
    `[sweep] ${pass}: ${cases.length} cases in ${
      seconds.toFixed(0)
    } s (${jobs} at once; mean case ${
      (caseSeconds / cases.length).toFixed(1)
    } s): ${tally.passed} passed, ${tally.expected} expected failures, ${tally.failed} failed`,
  );
}
