/**
 * Disruptions beyond a worker's own death (the declared list in probes/catalogue.ts), each on a
 * fresh starter project, each ending completed or precisely blocked with the same invariants as
 * the fault matrix, read by independent witnesses:
 *
 * - two applies of the same reviewed plan racing for the lock (both backends): exactly one
 *   proceeds, the other exits 5 and leaves nothing in the state;
 * - the PostgreSQL session of the worker terminated once the old runner has exited;
 * - a private PostgreSQL server (harness/postgres.ts) restarted — a crash restart — once the old
 *   runner has exited; the machine's server is never touched;
 * - the broker restarted while the driver waits for the candidate;
 * - the candidate killed (SIGKILL) once it says STARTING, before it is ready;
 * - a private Docker daemon (harness/dockerd.ts, own socket, data root, exec root and bridge,
 *   images copied in) restarted while the driver waits for the candidate; the case runs in a
 *   child process whose `DOCKER_HOST` is that daemon, so the machine's daemon is never touched;
 *   and restarted the instant the candidate runs (`dockerd-restart-starting`), while its JVM
 *   has no TERM handler yet.
 *
 *   deno run -A probes/disruption.ts [--only name,...] [--backend local|postgres] [--allow-dirty]
 * @module
 */
import pg from "pg";
import { sharedEnv, startEnv, writeEnvFile } from "../harness/env.ts";
import type { Env, EnvDescriptor } from "../harness/env.ts";
import { dockerCli } from "../harness/docker.ts";
import {
  loadImages,
  type PrivateDocker,
  restartBroker,
  restartDaemon,
  sh,
  startPrivateDocker,
  startPrivateEnv,
  stopPrivateDocker,
} from "../harness/dockerd.ts";
import { BASE_IMAGE, KAFKA_IMAGE } from "../harness/images.ts";
import { clearStartTraces } from "../harness/stale_task.ts";
import { startPrivatePostgres } from "../harness/postgres.ts";
import { runnerImageId } from "../harness/project.ts";
import { type FaultJourney, runFaultJourney } from "../harness/faults.ts";
import { runWorker } from "../harness/worker.ts";
import { containersOf, kafkaTools, type WitnessContainer } from "../harness/witness.ts";
import type { CaseEvidence, HistoryEntry } from "./evidence.ts";
import { DISRUPTIONS, type DisruptionSpec, selectedCaseIds } from "./catalogue.ts";
import {
  caseEvidence,
  type CaseMeta,
  cleanupFailed,
  failedCase,
  flag,
  jobs,
  NEW_PREDICATE,
  now,
  observeRunner,
  OLD_PREDICATE,
  orders,
  runProbe,
  selectionFlags,
  waitFor,
} from "./common.ts";
import { interrupted, prepareCase, type Prepared, sample, verifyCompletion } from "./invariants.ts";

function event(
  history: HistoryEntry[],
  process: string,
  type: HistoryEntry["type"],
  f: string,
  value: unknown,
) {
  history.push({ process, type, f, value, time: now() });
}

/** The file a case's replacement writes its OpenLineage events to (every apply and resume). */
function lineageOf(p: Prepared): string {
  return `${p.fx.project.dir}/lineage.jsonl`;
}

function meta(spec: DisruptionSpec, runId: string, params: Record<string, unknown> = {}): CaseMeta {
  return {
    id: `${spec.name}:${spec.backend}`,
    kind: "disruption",
    run_id: runId,
    boundary: null,
    side: null,
    backend: spec.backend,
    params: { description: spec.description, ...params },
  };
}

/** Two applies of one reviewed plan at the same time. */
function raceCase(env: EnvDescriptor, image: string, spec: DisruptionSpec, runId: string) {
  return caseEvidence(meta(spec, runId), () => prepareCase(env, image, spec.backend), async (p) => {
    const lineageFile = lineageOf(p);
    const args = [
      "-o",
      "json",
      "apply",
      "--project",
      p.fx.project.dir,
      "--plan",
      p.planPath,
      "--openlineage",
      lineageFile,
    ];
    event(p.history, "apply-A", "invoke", "apply", { args });
    event(p.history, "apply-B", "invoke", "apply", { args });
    const [x, y] = await Promise.all([
      runWorker(args, { env: p.fx.workerEnv }),
      runWorker(args, { env: p.fx.workerEnv }),
    ]);
    x.process = "apply-A";
    y.process = "apply-B";
    for (const r of [x, y]) {
      p.history.push({
        process: r.process!,
        type: r.code === 0 ? "ok" : "fail",
        f: "apply",
        value: {
          exit: r.code,
          signal: r.signal,
          pid: r.pid,
          operation_id: (r.json?.data as { operation_id?: string } | null)?.operation_id ?? null,
          errors: r.json?.errors?.map((e) => ({ code: e.code, message: e.message })) ?? [],
        },
        time: r.endedAt,
      });
    }
    p.rec.record({
      check: "race.exit_statuses",
      name: "one apply completes (0), the other finds the lock held (5)",
      kind: "equal",
      witness: "process",
      expected: [0, 5],
      actual: [x.code, y.code].sort(),
    });
    const winner = x.code === 0 ? x : y;
    const loser = x.code === 0 ? y : x;
    p.rec.record({
      check: "race.loser_reports_lock",
      name: "the loser reports the held lock",
      kind: "present",
      witness: "sluice",
      expected: ["STATE_LOCK_HELD"],
      actual: loser.json?.errors?.map((e) => e.code) ?? [],
    });
    const opId = (winner.json?.data as { operation_id?: string } | null)?.operation_id ?? null;
    // nothing of the loser in the state: one completion receipt, one operation
    const st = await p.fx.state();
    p.rec.record({
      check: "race.single_operation",
      name: "the history holds exactly the winner's operation, no incident",
      kind: "equal",
      witness: p.fx.backend === "local" ? "state-files" : "state-rows",
      expected: { runner_completed: [opId], incident: 0 },
      actual: {
        runner_completed: st.history.filter((e) => e.kind === "runner_completed").map((e) =>
          e.operation_id
        ),
        incident: st.history.filter((e) => e.kind === "incident").length,
      },
    });
    await verifyCompletion(p, p, {
      operationId: opId,
      outcome: winner.code === 0 ? "completed" : "failed",
      blockers: [],
      workers: [winner],
    }, {
      interrupted: false,
      predicates: [OLD_PREDICATE, NEW_PREDICATE],
      afterPrefix: "b",
      lineageFile,
    });
  });
}

/**
 * Run a disruption while the first apply runs, then continue through the public commands. With
 * `killAt`, the first apply is killed at that fault point and the disruption runs while no worker
 * does (before the first `state resume`).
 */
async function disrupted(
  p: Prepared,
  disrupt: (j: FaultJourney) => Promise<void>,
  killAt?: { boundary: string; side: "before" | "after" },
): Promise<FaultJourney> {
  const lineageFile = lineageOf(p);
  let deaths = 0;
  const j = await runFaultJourney({
    projectDir: p.fx.project.dir,
    planPath: p.planPath,
    boundary: killAt?.boundary ?? null,
    side: killAt?.side ?? null,
    env: p.fx.workerEnv,
    maxResumes: 8,
    openlineage: lineageFile,
    ...(killAt ? { whileDead: disrupt } : { duringFirst: disrupt }),
    afterDeath: async (jj) => {
      deaths++;
      const last = jj.workers.at(-1);
      await sample(p, p, last?.process ?? `stop-${deaths}`);
    },
  });
  p.history.push(...j.history);
  return j;
}

async function completion(p: Prepared, j: FaultJourney) {
  await verifyCompletion(p, p, j, {
    interrupted: interrupted(j),
    predicates: [OLD_PREDICATE, NEW_PREDICATE],
    afterPrefix: "b",
    lineageFile: lineageOf(p),
  });
}

function applied(p: Prepared, effects: unknown[], name: string) {
  p.rec.record({
    check: "disruption.applied",
    name,
    kind: "count",
    witness: "process",
    expected: { min: 1 },
    actual: effects,
  });
}

/** The old runner has exited (Docker API). */
function oldExited(p: Prepared) {
  return async () =>
    (await containersOf(p.fx.applicationId)).some((c) => c.id === p.oldContainerId && !c.running);
}

/** The `SLUICE_RUNNER_STATE` lines a container printed (`docker logs`), in order. */
async function stateLines(id: string): Promise<string[]> {
  const out = await new Deno.Command(dockerCli(), {
    args: ["logs", id],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((l) => l.startsWith("SLUICE_RUNNER_STATE "));
}

/** The running candidate container (Docker API), or null. */
async function runningCandidate(p: Prepared): Promise<WitnessContainer | null> {
  return (await containersOf(p.fx.applicationId)).find((c) =>
    c.id !== p.oldContainerId && c.running
  ) ?? null;
}

/** A candidate container runs (Docker API). */
function candidateRunning(p: Prepared) {
  return async () => (await runningCandidate(p)) !== null;
}

/** A candidate container exists (Docker API). */
function candidateExists(p: Prepared) {
  return async () =>
    (await containersOf(p.fx.applicationId)).some((c) => c.id !== p.oldContainerId);
}

function firstWorkerStopped(p: Prepared, j: FaultJourney) {
  p.rec.record({
    check: "disruption.worker_stopped",
    name: "the first worker did not report success after the disruption (stop, report, resume)",
    kind: "absent",
    witness: "process",
    expected: [0],
    actual: [j.workers[0]?.code ?? null],
  });
}

/**
 * A case on a service of its own (`start`ed before the case's deploy, which `prepare` makes on
 * it; `stop`ped after the case's clean-up, or at once when the deploy fails), so that disturbing
 * the service disturbs no other case.
 */
function ownServiceCase<S>(
  caseMeta: CaseMeta,
  start: () => Promise<S>,
  stop: (service: S) => Promise<unknown>,
  prepare: (service: S) => Promise<Prepared>,
  body: (p: Prepared, service: S) => Promise<void>,
) {
  let service: S | null = null;
  return caseEvidence<Prepared>(
    caseMeta,
    async () => {
      const started = service = await start();
      try {
        return await prepare(started);
      } catch (e) {
        await stop(started);
        throw e;
      }
    },
    (p) => body(p, service!),
    async (p) => {
      await p.fx.cleanup().catch(cleanupFailed);
      if (service !== null) await stop(service);
    },
  );
}

/** The broker restarted while the driver waits for the candidate. */
function brokerCase(_env: EnvDescriptor, image: string, spec: DisruptionSpec, runId: string) {
  // a broker of its own: restarting the shared one would disturb every case beside it
  return ownServiceCase<Env>(
    meta(spec, runId),
    () => startEnv({ connect: false }),
    (env) => env.teardown(),
    (env) => prepareCase(env, image, spec.backend),
    (p, env) => brokerRestarted(p, env.brokerContainerId),
  );
}

/** The case's own broker (`broker`) restarted while the driver waits for the candidate. */
async function brokerRestarted(p: Prepared, broker: string) {
  const effects: unknown[] = [];
  const j = await disrupted(p, async () => {
    await waitFor("the candidate container", candidateExists(p), 180_000, 200);
    event(p.history, "nemesis", "invoke", "docker-restart-broker", { id: broker });
    const out = await new Deno.Command(dockerCli(), {
      args: ["restart", "-t", "10", broker],
      stdout: "piped",
      stderr: "piped",
    }).output();
    event(p.history, "nemesis", out.code === 0 ? "ok" : "fail", "docker-restart-broker", {
      exit: out.code,
    });
    if (out.code === 0) effects.push({ broker_restarted: broker.slice(0, 12) });
    // records produced once the broker is back, while the operation is still in flight
    await waitFor("the broker", async () => {
      await p.fx.produce(orders("d", [150, 250, 99, 200, 320, 130]));
      return true;
    }, 90_000);
  });
  applied(p, effects, "the broker was restarted during the replacement");
  await completion(p, j);
}

/**
 * `docker kill` the candidate `id`, the nemesis's invoke and outcome recorded in the case's
 * history with its state read back (Docker's exit, whether it runs) and what `more` adds, read
 * after the kill. `killed`: the kill succeeded and left it exited 137.
 */
async function dockerKillCandidate(
  p: Prepared,
  id: string,
  more: () => Promise<Record<string, unknown>> = () => Promise.resolve({}),
): Promise<{ killed: boolean; state: Record<string, unknown> }> {
  event(p.history, "nemesis", "invoke", "docker-kill-candidate", { id });
  const out = await new Deno.Command(dockerCli(), {
    args: ["kill", id],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const after = (await containersOf(p.fx.applicationId)).find((c) => c.id === id);
  const state = {
    exit: out.code,
    exit_code: after?.exit_code ?? null,
    running: after?.running,
    ...await more(),
  };
  event(p.history, "nemesis", out.code === 0 ? "ok" : "fail", "docker-kill-candidate", state);
  return {
    killed: out.code === 0 && after !== undefined && !after.running && after.exit_code === 137,
    state,
  };
}

/**
 * The candidate killed from outside (SIGKILL, as a Docker daemon's shutdown kills a container
 * whose TERM it ignored, or an operator's `docker kill`) once its own status says STARTING, before
 * it is ready: the apply stops on it, and `state resume` starts the same candidate again —
 * nothing of it was committed — and completes exactly.
 */
function candidateKilledCase(
  env: EnvDescriptor,
  image: string,
  spec: DisruptionSpec,
  runId: string,
) {
  return caseEvidence(
    meta(spec, runId),
    () => prepareCase(env, image, spec.backend),
    async (p) => {
      const effects: unknown[] = [];
      const j = await disrupted(p, async () => {
        await waitFor("the candidate running", candidateRunning(p), 180_000, 50);
        const running = await runningCandidate(p);
        if (!running) return; // it stopped on its own meanwhile: no kill, the effect stays unapplied
        const cand = running.id;
        // once its own status says STARTING (its stdout line, read through Docker): it has begun
        // its work with Kafka, seconds before it can be ready
        const starting = `SLUICE_RUNNER_STATE STARTING ${running.labels.generation} `;
        await waitFor(
          "the candidate's STARTING",
          async () => (await stateLines(cand)).some((l) => l.startsWith(starting)),
          180_000,
          50,
        );
        const { killed } = await dockerKillCandidate(p, cand);
        if (killed) effects.push({ candidate_killed: cand.slice(0, 12), exit_code: 137 });
        // records produced while the operation is still in flight
        await p.fx.produce(orders("d", [150, 250, 99, 200, 320, 130]));
      });
      applied(p, effects, "the candidate was killed (SIGKILL) before it was ready");
      await completion(p, j);
    },
  );
}

/**
 * The candidate killed from outside (SIGKILL) after it committed: the apply dies just before it
 * records the candidate ready (`journal.action_completed:before`), the candidate processes new
 * input and commits past the clean close, then it is killed (`docker kill`, 137, its own status
 * RUNNING). `state resume` waits for its killed group member to leave (the session timeout), starts
 * the same candidate again from its committed positions and completes exactly.
 */
function candidateKilledRunningCase(
  env: EnvDescriptor,
  image: string,
  spec: DisruptionSpec,
  runId: string,
) {
  return caseEvidence(
    meta(spec, runId),
    () => prepareCase(env, image, spec.backend),
    async (p) => {
      const effects: unknown[] = [];
      const committed = async () =>
        Object.values((await observeRunner(p.fx))?.kafka.committed ?? {}).map(BigInt);
      const j = await disrupted(p, async () => {
        const running = await runningCandidate(p);
        if (!running) return; // not running: no kill, the effect stays unapplied
        const cand = running.id;
        const atDeath = await committed();
        // records the candidate processes and commits (past the clean close, which is at most
        // the positions at the apply's death)
        await p.fx.produce(orders("d", [150, 250, 99, 200, 320, 130]));
        const sum = (xs: bigint[]) => xs.reduce((a, x) => a + x, 0n);
        await waitFor(
          "the candidate to commit the new records",
          async () => sum(await committed()) >= sum(atDeath) + 6n,
          180_000,
          200,
        );
        const moved = await kafkaTools(p.broker, {
          offsets: { group: p.fx.applicationId, topic: p.fx.project.inputTopic },
        });
        let last: string | null = null;
        const { killed, state } = await dockerKillCandidate(p, cand, async () => {
          last = (await stateLines(cand)).at(-1) ?? null;
          return {
            last_state_line: last,
            offsets_at_death: atDeath.map(String),
            offsets_at_kill: moved.offsets ?? null,
          };
        });
        if (killed && /^SLUICE_RUNNER_STATE RUNNING /.test(last ?? "")) {
          effects.push({ candidate_killed: cand.slice(0, 12), ...state });
        }
      }, { boundary: "journal.action_completed", side: "before" });
      applied(p, effects, "the candidate was killed (SIGKILL) while RUNNING, after it committed");
      await completion(p, j);
    },
  );
}

/** Terminate every session of the case's database (the worker's PostgreSQL connection). */
async function terminateSessions(adminUrl: string, db: string) {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const r = await c.query(
      "SELECT pid, pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      [db],
    );
    return r.rows as Array<{ pid: number; killed: boolean }>;
  } finally {
    await c.end();
  }
}

/** The worker's PostgreSQL session terminated as soon as the old runner has exited. */
function pgDropCase(env: EnvDescriptor, image: string, spec: DisruptionSpec, runId: string) {
  return caseEvidence(meta(spec, runId), () => prepareCase(env, image, spec.backend), async (p) => {
    const db = new URL(p.fx.dsn!).pathname.slice(1);
    const effects: unknown[] = [];
    const j = await disrupted(p, async () => {
      await waitFor("the old runner to exit", oldExited(p), 180_000, 200);
      event(p.history, "nemesis", "invoke", "pg-terminate-backend", { database: db });
      const sessions = await terminateSessions(env.pgUrl, db);
      event(p.history, "nemesis", "ok", "pg-terminate-backend", { sessions });
      effects.push(...sessions.filter((s) => s.killed).map((s) => ({ terminated_pid: s.pid })));
      await p.fx.produce(orders("d", [150, 250, 99, 200, 320, 130]));
    });
    applied(p, effects, "the worker's PostgreSQL session was terminated");
    firstWorkerStopped(p, j);
    await completion(p, j);
  });
}

/** A private PostgreSQL server crash-restarted as soon as the old runner has exited. */
function pgServerCase(env: EnvDescriptor, image: string, spec: DisruptionSpec, runId: string) {
  return ownServiceCase(
    meta(spec, runId, { restart_mode: "immediate" }),
    () => startPrivatePostgres(),
    (server) => server.stop(),
    (server) => prepareCase({ ...env, pgUrl: server.url }, image, spec.backend),
    async (p, server) => {
      const effects: unknown[] = [];
      const j = await disrupted(p, async () => {
        await waitFor("the old runner to exit", oldExited(p), 180_000, 200);
        event(p.history, "nemesis", "invoke", "pg-server-restart", {
          mode: "immediate",
          server: server.version,
        });
        const r = await server.restart("immediate");
        event(p.history, "nemesis", "ok", "pg-server-restart", r);
        effects.push({ server_restarted: "immediate", ms: r.ms });
        await p.fx.produce(orders("d", [150, 250, 99, 200, 320, 130]));
      });
      applied(
        p,
        effects,
        "the private PostgreSQL server was crash-restarted during the replacement",
      );
      firstWorkerStopped(p, j);
      await completion(p, j);
    },
  );
}

/** The Docker daemon restart, run by a child process whose DOCKER_HOST is the private daemon. */
async function dockerdChild(): Promise<void> {
  const d = JSON.parse(await Deno.readTextFile(flag("--private-dockerd")!)) as PrivateDocker;
  const out = flag("--out")!;
  const spec = DISRUPTIONS.find((x) => x.name === flag("--case"))!;
  const env = await sharedEnv();
  // the image copied into the private daemon by its ID (a copy by ID carries no tag, so
  // runner/build.sh --check cannot find it there by name)
  const image = flag("--image") ?? await runnerImageId();
  const params = JSON.parse(flag("--params") ?? "{}");
  const r = await caseEvidence(
    meta(spec, flag("--run-id")!, params),
    () => prepareCase(env, image, spec.backend),
    async (p) => {
      const effects: unknown[] = [];
      const j = await disrupted(p, async () => {
        if (spec.name === "dockerd-restart-starting") {
          // the restart at the candidate's first instants: its JVM, the container's PID 1, has
          // no TERM handler yet, so the kernel drops the daemon's TERM and the daemon kills it at
          // its stop timeout (when the restart comes a little later, the TERM is handled: the
          // case then passes another way; its evidence says which)
          await waitFor("the candidate running", candidateRunning(p), 180_000, 20);
        } else {
          await waitFor("the candidate container", candidateExists(p), 180_000, 200);
        }
        event(p.history, "nemesis", "invoke", "dockerd-restart", { daemon: d.host });
        const r = await restartDaemon(d);
        event(p.history, "nemesis", "ok", "dockerd-restart", r);
        const cand = (await containersOf(p.fx.applicationId)).find((c) =>
          c.id !== p.oldContainerId
        );
        effects.push({
          daemon_restarted: `${r.pid_before} → ${r.pid_after}`,
          ms: r.ms,
          // how the restart left the candidate (Docker's record, read on the daemon it is back
          // on) and the last state its runner printed (its status line on stdout)
          candidate: cand
            ? {
              state: cand.state,
              exit_code: cand.exit_code,
              said: (await stateLines(cand.id)).at(-1) ?? null,
            }
            : null,
        });
        // the environment comes back: the broker container is started again
        event(p.history, "nemesis", "invoke", "broker-start", { id: env.brokerContainerId });
        await restartBroker(d, env.brokerContainerId);
        event(p.history, "nemesis", "ok", "broker-start", null);
        await p.fx.produce(orders("d", [150, 250, 99, 200, 320, 130]));
      });
      applied(p, effects, "the private Docker daemon was restarted during the replacement");
      await clearRefusedStart(p, d, j);
      await completion(p, j);
    },
  );
  await Deno.writeTextFile(out, JSON.stringify(r));
}

/**
 * The runbook's way out of `BLOCKED_CANDIDATE_START_REFUSED`, taken as an operator would when
 * the restart landed while the candidate's start was in flight and every later start answers
 * "task … already exists": every trace containerd and runc kept of each never-started
 * container's start is cleared (`clearStartTraces`: the task in the new containerd's list; a
 * shim the old containerd started, with its child, which the next start reuses; runc's state;
 * containerd's bundle directory a refused start left),
 * each read again from its own source until none is left. Then `state resume` once in a fresh
 * process. Nothing is done for any other outcome.
 */
async function clearRefusedStart(
  p: Prepared,
  d: PrivateDocker,
  j: FaultJourney,
) {
  if (
    j.outcome !== "blocked" || !j.blockers.some((b) => b.code === "BLOCKED_CANDIDATE_START_REFUSED")
  ) {
    return;
  }
  const listed = await sh(dockerCli(), [
    "-H",
    d.host,
    "ps",
    "-aq",
    "--no-trunc",
    "--filter",
    "status=created",
  ]);
  const ids = listed.code === 0 ? listed.out.split("\n").filter((x) => x) : [];
  event(p.history, "operator", "invoke", "clear-start-traces", { never_started: ids });
  const cleared = [];
  for (const id of ids) cleared.push({ container: id, ...(await clearStartTraces(d, id)) });
  event(p.history, "operator", "ok", "clear-start-traces", cleared);
  const args = [
    "-o",
    "json",
    "state",
    "resume",
    "--project",
    p.fx.project.dir,
    "--plan",
    p.planPath,
    "--operation-id",
    j.operationId!,
    // the replacement's lineage goes to the file the case checks, as every resume's does
    "--openlineage",
    lineageOf(p),
  ];
  event(p.history, "operator", "invoke", "resume", { args });
  const r = await runWorker(args, { env: p.fx.workerEnv });
  r.process = "operator-resume";
  j.workers.push(r);
  j.outcome = r.code === 0 ? "completed" : r.code === 4 ? "blocked" : "failed";
  j.blockers = r.json?.errors?.map((e) => ({ code: e.code, message: e.message })) ?? [];
  event(p.history, "operator", r.code === 0 ? "ok" : "fail", "resume", {
    exit: r.code,
    errors: j.blockers,
  });
}

/** Start the private daemon, copy the images, run the case in a child, tear everything down. */
function dockerdCase(image: string, spec: DisruptionSpec, runId: string): Promise<CaseEvidence> {
  return (async () => {
    const t0 = Date.now();
    const started_at = now();
    let d: PrivateDocker | null = null;
    const dir = await Deno.makeTempDir({ prefix: "sluice-dockerd-case-" });
    try {
      d = await startPrivateDocker();
      const load = await loadImages(d, [KAFKA_IMAGE, BASE_IMAGE, image]);
      const e0 = Date.now();
      const env = await startPrivateEnv(d, "postgres://unused@127.0.0.1:1/unused");
      const envMs = Date.now() - e0;
      await writeEnvFile(`${dir}/env.json`, env);
      await Deno.writeTextFile(`${dir}/daemon.json`, JSON.stringify(d));
      const params = {
        daemon: { live_restore: d.liveRestore, bridge: d.bridge },
        setup_ms: { images: load.ms, env: envMs },
      };
      const child = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          new URL(import.meta.url).pathname,
          "--private-dockerd",
          `${dir}/daemon.json`,
          "--out",
          `${dir}/case.json`,
          "--run-id",
          runId,
          "--case",
          spec.name,
          "--image",
          image,
          "--params",
          JSON.stringify(params),
        ],
        env: { DOCKER_HOST: d.host, SLUICE_ENV_FILE: `${dir}/env.json` },
        stdout: "inherit",
        stderr: "inherit",
      }).output();
      try {
        return JSON.parse(await Deno.readTextFile(`${dir}/case.json`)) as CaseEvidence;
      } catch {
        throw new Error(`the private-daemon case process exited ${child.code} without evidence`);
      }
    } catch (e) {
      const error = e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e);
      return failedCase(meta(spec, runId), error, started_at, Date.now() - t0);
    } finally {
      if (d) await stopPrivateDocker(d).catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  })();
}

const RUNNERS: Record<
  string,
  (env: EnvDescriptor, image: string, spec: DisruptionSpec, runId: string) => Promise<CaseEvidence>
> = {
  "lock-race": raceCase,
  "pg-connection-dropped": pgDropCase,
  "pg-server-restart": pgServerCase,
  "broker-restart": brokerCase,
  "dockerd-restart": (_env, image, spec, runId) => dockerdCase(image, spec, runId),
  "dockerd-restart-starting": (_env, image, spec, runId) => dockerdCase(image, spec, runId),
  "candidate-killed": candidateKilledCase,
  "candidate-killed-running": candidateKilledRunningCase,
};

if (import.meta.main) {
  if (flag("--private-dockerd")) {
    await dockerdChild();
    Deno.exit(0);
  }
  const env = await sharedEnv();
  const image = await runnerImageId();
  const { selection } = selectionFlags();
  const wanted = new Set(selectedCaseIds("disruption", selection));
  const cases = DISRUPTIONS.filter((d) => wanted.has(`${d.name}:${d.backend}`)).map((spec) => ({
    id: `${spec.name}:${spec.backend}`,
    run: (runId: string) => RUNNERS[spec.name](env, image, spec, runId),
  }));
  // no case disturbs another: the broker restart has a broker of its own, the dockerd restart a
  // daemon of its own, the PostgreSQL server restart a server of its own
  Deno.exit(await runProbe({ probe: "disruption", env, jobs: jobs(2), selection, cases }));
}
