/**
 * Disruptions beyond worker death, each on a fresh starter project, each written to
 * `verification/disruption.json` with the same invariants as the fault matrix:
 *
 * - two applies of the same reviewed plan racing for the lock (both backends): exactly one
 *   proceeds, the other exits 5 and mutates nothing;
 * - the broker restarted mid-operation (`docker restart` of the environment's broker while the
 *   driver waits for the candidate): completion, or a precise report and a resume that
 *   completes, with nothing lost;
 * - the PostgreSQL connection of the worker dropped mid-operation (`pg_terminate_backend` as
 *   soon as the old runner has exited): the worker stops mutating, a fresh process resumes.
 *
 * The Docker daemon restart is not run here: scripts/dockerd-ctl.sh restarts the daemon of the
 * whole machine, which kills the shared broker (and every other suite's containers).
 *
 *   deno run -A probes/disruption.ts [--only race,broker,pg]
 * @module
 */
import pg from "pg";
import { sharedEnv } from "../harness/env.ts";
import type { EnvDescriptor } from "../harness/env.ts";
import { docker, dockerCli } from "../harness/docker.ts";
import { runnerImageId } from "../harness/project.ts";
import { runFaultJourney } from "../harness/faults.ts";
import type { FaultJourney, HistoryEntry, StateShowView } from "../harness/faults.ts";
import { runWorker } from "../harness/worker.ts";
import { openStateStore } from "../lib/state/open.ts";
import {
  type CaseEvidence,
  environmentVersions,
  type Evidence,
  flag,
  inventory,
  now,
  orders,
  summarize,
  writeEvidence,
} from "./common.ts";
import {
  caseEvidence,
  prepareCase,
  type Prepared,
  type Sample,
  sample,
  verifyCompletion,
} from "./fault_matrix.ts";

async function waitFor(what: string, test: () => Promise<boolean>, timeoutMs = 120_000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await test()) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function containersOf(appId: string) {
  const filters = JSON.stringify({ label: [`sluice.application-id=${appId}`] });
  return await docker().listContainers({ all: true, filters });
}

function event(
  history: HistoryEntry[],
  process: string,
  type: HistoryEntry["type"],
  f: string,
  value: unknown,
) {
  history.push({ process, type, f, value, time: now() });
}

/** Two applies of one reviewed plan at the same time. */
function raceCase(env: EnvDescriptor, image: string, backend: "local" | "postgres") {
  return caseEvidence(
    `lock-race:${backend}`,
    { boundary: null, side: null, backend },
    () => prepareCase(env, image, backend),
    async (p) => {
      const history: HistoryEntry[] = [];
      const args = ["-o", "json", "apply", "--project", p.fx.project.dir, "--plan", p.planPath];
      event(history, "apply-A", "invoke", "apply", { args });
      event(history, "apply-B", "invoke", "apply", { args });
      const [x, y] = await Promise.all([
        runWorker(args, { env: p.fx.workerEnv }),
        runWorker(args, { env: p.fx.workerEnv }),
      ]);
      for (const [name, r] of [["apply-A", x], ["apply-B", y]] as const) {
        history.push({
          process: name,
          type: r.code === 0 ? "ok" : "fail",
          f: "apply",
          value: {
            exit: r.code,
            operation_id: (r.json?.data as { operation_id?: string } | null)?.operation_id ?? null,
            errors: r.json?.errors?.map((e) => ({ code: e.code, message: e.message })) ?? [],
          },
          time: r.endedAt,
        });
      }
      p.a.check("exit statuses of the two applies", [0, 5], [x.code, y.code].sort());
      const winner = x.code === 0 ? x : y;
      const loser = x.code === 0 ? y : x;
      p.a.holds(
        "the loser reports the held lock",
        "STATE_LOCK*",
        loser.json?.errors?.map((e) => e.code) ?? [],
        (loser.json?.errors ?? []).some((e) => e.code.startsWith("STATE_LOCK")),
      );
      const opId = (winner.json?.data as { operation_id?: string } | null)?.operation_id ?? null;
      // nothing of the loser in the state: one completion receipt, one ownership commit
      const store = openStateStore(
        backend === "local"
          ? {
            backend: "local",
            dir: `${p.fx.project.dir}/.sluice/state`,
            project: p.fx.project.name,
            environment: null,
          }
          : { backend: "postgres", url: p.fx.dsn!, project: p.fx.project.name, environment: null },
      );
      try {
        const snap = await store.load();
        const kinds = snap.history.events.map((e) => e.kind);
        p.a.check(
          "the history holds exactly one operation (the winner's), no incident",
          { runner_completed: 1, incident: 0, operations: [opId] },
          {
            runner_completed: kinds.filter((k) => k === "runner_completed").length,
            incident: kinds.filter((k) => k === "incident").length,
            operations: [
              ...new Set(
                snap.history.events
                  .filter((e) => e.kind !== "ownership_committed") // the creation's commit
                  .map((e) => (e as { operation_id?: string }).operation_id)
                  .filter((o) => o),
              ),
            ],
          },
        );
      } finally {
        await store.close();
      }
      const j = {
        operationId: opId,
        outcome: winner.code === 0 ? "completed" : "failed",
        blockers: [],
        history,
      };
      await verifyCompletion(p, j, [], false);
      return history;
    },
  );
}

/** Run a disruption while the first apply runs, then continue through the public commands. */
async function disrupted(
  p: Prepared,
  disrupt: (j: FaultJourney, history: HistoryEntry[]) => Promise<void>,
) {
  const history: HistoryEntry[] = [];
  const samples: Sample[] = [];
  const j = await runFaultJourney({
    projectDir: p.fx.project.dir,
    planPath: p.planPath,
    boundary: null,
    side: null,
    env: p.fx.workerEnv,
    maxResumes: 8,
    duringFirst: (jj) => disrupt(jj, history),
    afterDeath: async (_j, view) => {
      samples.push(await sample(p, view?.pending_operation?.last_checkpoint ?? null));
    },
  });
  const interrupted =
    j.shows.some((v) => (v as StateShowView | null)?.pending_operation?.status === "in_progress") &&
    j.workers.some((w) => w.args.includes("resume"));
  return { j, samples, history, interrupted };
}

/** The broker restarted while the driver waits for the candidate. */
function brokerCase(env: EnvDescriptor, image: string) {
  return caseEvidence(
    "broker-restart:local",
    { boundary: null, side: null, backend: "local" },
    () => prepareCase(env, image, "local"),
    async (p) => {
      const { j, samples, history, interrupted } = await disrupted(p, async (_j, h) => {
        await waitFor(
          "the candidate container",
          async () =>
            (await containersOf(p.fx.applicationId)).some((c) => c.Id !== p.oldContainerId),
        );
        event(h, "nemesis", "invoke", "docker-restart-broker", { id: env.brokerContainerId });
        const out = await new Deno.Command(dockerCli(), {
          args: ["restart", "-t", "10", env.brokerContainerId],
          stdout: "piped",
          stderr: "piped",
        }).output();
        event(h, "nemesis", out.code === 0 ? "ok" : "fail", "docker-restart-broker", {
          exit: out.code,
        });
        // records produced once the broker is back, while the operation is still in flight
        await waitFor("the broker", async () => {
          try {
            await p.fx.produce(orders("d", [150, 250, 99, 200, 320, 130]));
            return true;
          } catch {
            return false;
          }
        }, 90_000);
      });
      p.a.check("the broker restart succeeded", "ok", history.at(-1)?.type ?? null);
      await verifyCompletion(p, j, samples, interrupted);
      return [...history, ...j.history];
    },
  );
}

/** The worker's PostgreSQL session terminated as soon as the old runner has exited. */
function pgDropCase(env: EnvDescriptor, image: string) {
  return caseEvidence(
    "pg-connection-dropped:postgres",
    { boundary: null, side: null, backend: "postgres" },
    () => prepareCase(env, image, "postgres"),
    async (p) => {
      const db = new URL(p.fx.dsn!).pathname.slice(1);
      const { j, samples, history, interrupted } = await disrupted(p, async (_j, h) => {
        await waitFor(
          "the old runner to exit",
          async () =>
            (await containersOf(p.fx.applicationId)).some((c) =>
              c.Id === p.oldContainerId && c.State === "exited"
            ),
        );
        event(h, "nemesis", "invoke", "pg-terminate-backend", { database: db });
        const c = new pg.Client({ connectionString: env.pgUrl });
        await c.connect();
        try {
          const r = await c.query(
            "SELECT pid, pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            [db],
          );
          event(h, "nemesis", "ok", "pg-terminate-backend", { sessions: r.rows });
        } finally {
          await c.end();
        }
        await p.fx.produce(orders("d", [150, 250, 99, 200, 320, 130]));
      });
      const killed = history.find((e) => e.f === "pg-terminate-backend" && e.type === "ok");
      p.a.holds(
        "the worker's session was terminated",
        ">= 1 session",
        killed?.value ?? null,
        ((killed?.value as { sessions?: unknown[] } | undefined)?.sessions?.length ?? 0) >= 1,
      );
      p.a.holds(
        "the first worker did not report success after losing its session",
        "exit != 0 (lock lost: stop, report, resume later)",
        j.workers[0]?.code ?? null,
        (j.workers[0]?.code ?? 0) !== 0,
      );
      await verifyCompletion(p, j, samples, interrupted);
      return [...history, ...j.history];
    },
  );
}

if (import.meta.main) {
  const t0 = Date.now();
  const env = await sharedEnv();
  const image = await runnerImageId();
  const only = flag("--only")?.split(",");
  const want = (k: string) => !only || only.includes(k);
  const evidence: Evidence = {
    probe: "disruption",
    schema_version: 1,
    generated_at: now(),
    duration_ms: 0,
    environment: await environmentVersions(env),
    boundary_inventory: inventory(),
    cases: [],
    summary: summarize([]),
  };
  const plan: Array<() => Promise<CaseEvidence>> = [];
  if (want("race")) {
    plan.push(() => raceCase(env, image, "local"), () => raceCase(env, image, "postgres"));
  }
  if (want("pg")) plan.push(() => pgDropCase(env, image));
  if (want("broker")) plan.push(() => brokerCase(env, image));
  for (const run of plan) {
    const r = await run();
    evidence.cases.push(r);
    const bad = r.assertions.filter((x) => !x.ok).map((x) => x.name);
    console.log(
      `[disruption] ${r.id}: ${r.ok ? "ok" : "FAILED"} (${(r.duration_ms / 1000).toFixed(1)}s)${
        bad.length ? ` — ${bad.join("; ")}` : ""
      }${r.error ? ` — ${r.error.split("\n")[0]}` : ""}`,
    );
    evidence.summary = summarize(evidence.cases);
    evidence.duration_ms = Date.now() - t0;
    await writeEvidence(evidence);
  }
  console.log(`[disruption] ${evidence.summary.passed}/${evidence.summary.cases} cases passed`);
  Deno.exit(evidence.summary.failed === 0 ? 0 : 1);
}
