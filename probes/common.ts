/**
 * Shared pieces of the probes: the per-case fixture (a fresh starter project on the shared
 * broker, its own PostgreSQL database for the postgres backend, clean-up by label), the CLI
 * helper that records a Jepsen-style history, the case wrapper that turns a case body into
 * {@link CaseEvidence}, and {@link runProbe}, which runs a probe's cases side by side and writes
 * its evidence file with provenance (refusing a dirty tree unless `--allow-dirty`).
 *
 * @example
 * ```ts
 * import { orders } from "./common.ts";
 * console.log(orders("a", [150, 250]).length);
 * ```
 * @module
 */
import pg from "pg";
import { docker, removeContainerSurely, removeLabelled } from "../harness/docker.ts";
import type { EnvDescriptor } from "../harness/env.ts";
import type { HistoryEntry } from "../harness/faults.ts";
import { produce, readAll, withAdmin } from "../harness/kafka.ts";
import { starterProject } from "../harness/project.ts";
import type { TestProject } from "../harness/project.ts";
import { runWorker } from "../harness/worker.ts";
import { readStateFiles, readStateRows, type StateWitness } from "../harness/witness.ts";
import { apply, observe, plan } from "../lib/runtime/session.ts";
import { inventory, type ProbeName, selectionTier, type Tier } from "./catalogue.ts";
import {
  type CaseEvidence,
  caseVerdict,
  type Recorder,
  redactEvidence,
  type Sample,
  summarize,
  toJson,
} from "./evidence.ts";
import { DirtyTree, finishProvenance, type Provenance, startProvenance } from "./provenance.ts";

const ROOT = new URL("..", import.meta.url).pathname;
/** Where evidence files go (`SLUICE_VERIFICATION_DIR` overrides, e.g. for a scratch run). */
export const VERIFICATION_DIR = Deno.env.get("SLUICE_VERIFICATION_DIR") ?? `${ROOT}verification`;

/** The value after `name` on the probe's command line (`--only a,b`), if given. */
export function flag(name: string): string | undefined {
  const i = Deno.args.indexOf(name);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}

/** Whether `name` is on the probe's command line. */
export function hasFlag(name: string): boolean {
  return Deno.args.includes(name);
}

/** ISO time now. */
export function now(): string {
  return new Date().toISOString();
}

/** An order record of the starter. */
export interface Order {
  order_id: string;
  amount: number;
  paid: boolean;
  customer: string | null;
}

/** Orders with keys `<prefix>-<i>`. */
export function orders(prefix: string, amounts: number[]): Array<{ key: string; value: Order }> {
  return amounts.map((amount, i) => ({
    key: `${prefix}-${i}`,
    value: { order_id: `${prefix}-${i}`, amount, paid: i % 4 !== 3, customer: null },
  }));
}

/** The starter's predicate and the replacement's, as functions and as SQL. */
export const OLD_PREDICATE = (o: Order) => o.amount >= 100 && o.paid;
export const NEW_PREDICATE = (o: Order) => o.amount >= 200 && o.paid;
export const OLD_PREDICATE_SQL = "amount >= 100 AND paid = TRUE";
export const NEW_PREDICATE_SQL = "amount >= 200 AND paid = TRUE";

/** A fresh case: a starter project created and running, with its state backend. */
export interface CaseFixture {
  env: EnvDescriptor;
  project: TestProject;
  backend: "local" | "postgres";
  /** Environment for CLI workers (the DSN variable for postgres). */
  workerEnv: Record<string, string>;
  /** The PostgreSQL DSN of this case's own database (postgres backend); never recorded. */
  dsn: string | null;
  applicationId: string;
  volumeInstance: string;
  history: HistoryEntry[];
  /** Append a harness step to the history. */
  step<T>(f: string, value: unknown, fn: () => Promise<T>): Promise<T>;
  /** Produce orders to the input topic. */
  produce(records: Array<{ key: string; value: Order }>): Promise<void>;
  /** Everything produced so far, by key. */
  produced: Map<string, Order>;
  /** Read the output topic until `n` records (or idle), then once more to catch extras. */
  output(n: number): Promise<Array<{ key: string; value: unknown }>>;
  /**
   * Every record in the input topic (up to its end offsets), duplicates included: a produce
   * retried after a broker hiccup may have written a record twice, and each copy is processed.
   */
  inputRecords(): Promise<Array<{ key: string; partition: number; offset: bigint }>>;
  /** The state read directly (files or rows), never through lib/state. */
  state(): Promise<StateWitness>;
  cleanup(): Promise<void>;
}

/** The prefix of the DSN variable each postgres fixture's manifest names (one per case). */
export const DSN_VAR_PREFIX = "SLUICE_PROBE_DSN_";

/** Create a fresh project, deploy it through the SDK and wait until it processes records. */
export async function newCase(
  env: EnvDescriptor,
  image: string,
  backend: "local" | "postgres",
  options: {
    /** Deploy through the SDK (default); false leaves a fresh project with nothing deployed. */
    deploy?: boolean;
    /** Edit the manifest before anything is planned (e.g. append connectors). */
    editManifest?: (text: string) => string;
    /**
     * Run after the project is made and its manifest edited, before anything is planned (e.g.
     * point it at a secured listener: its variables in `workerEnv` and the process's
     * environment, the runner principal's ACLs granted).
     */
    beforeDeploy?: (project: TestProject, workerEnv: Record<string, string>) => Promise<void>;
  } = {},
): Promise<CaseFixture> {
  const history: HistoryEntry[] = [];
  const step = async <T>(f: string, value: unknown, fn: () => Promise<T>): Promise<T> => {
    history.push({ process: "harness", type: "invoke", f, value: toJson(value), time: now() });
    try {
      const r = await fn();
      history.push({ process: "harness", type: "ok", f, value: null, time: now() });
      return r;
    } catch (e) {
      history.push({ process: "harness", type: "fail", f, value: String(e), time: now() });
      throw e;
    }
  };
  const workerEnv: Record<string, string> = {};
  let database: string | null = null;
  const tag = crypto.randomUUID().replaceAll("-", "").slice(0, 12);
  const dsnVar = `${DSN_VAR_PREFIX}${tag.toUpperCase()}`;
  let dsn: string | null = null;
  if (backend === "postgres") {
    database = `sluice_probe_${tag}`;
    await pgAdmin(env.pgUrl, `CREATE DATABASE ${database}`);
    const u = new URL(env.pgUrl);
    u.pathname = `/${database}`;
    dsn = u.toString();
    workerEnv[dsnVar] = dsn;
    // in-process SDK calls read the variable too; one name per case keeps parallel cases apart
    Deno.env.set(dsnVar, dsn);
  }
  const project = await starterProject(env, {
    image,
    stateDsnEnv: backend === "postgres" ? dsnVar : undefined,
  });
  if (options.editManifest) await project.editManifest(options.editManifest);
  // the starter's one model (lib/project/starter.ts): its application ID before any deploy
  let appId = `sluice-${project.name}-eligible_orders`;
  const cleanup = async () => {
    // containers and volumes first, each removal retried until Docker no longer has it (the
    // daemon can refuse a force-remove: 409 while another removal runs, or a kill whose end it
    // did not see within 2 s; a runner left here would run on into the environment's
    // tear-down); what still fails is thrown after the rest is cleaned
    const failures: unknown[] = [];
    const attempt = (f: () => Promise<unknown>) => f().catch((e) => failures.push(e));
    // helper containers sluice left mounting the state volume (e.g. a worker killed mid-read)
    // carry neither label: found by the volume they mount
    const mounting = JSON.stringify({ volume: [`${appId}-state`] });
    await attempt(async () => {
      for (const c of await docker().listContainers({ all: true, filters: mounting })) {
        await removeContainerSurely(c.Id);
      }
    });
    await attempt(() => removeLabelled("sluice.project", project.name));
    await attempt(() => removeLabelled("sluice.application-id", appId));
    await withAdmin(
      env.bootstrapHost,
      (admin) => admin.deleteTopics({ topics: [project.inputTopic, project.outputTopic] }),
    ).catch(() => {});
    if (database) {
      await pgAdmin(env.pgUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(
        () => {},
      );
      Deno.env.delete(dsnVar);
    }
    await Deno.remove(project.dir, { recursive: true }).catch(() => {});
    if (failures.length > 0) {
      throw new AggregateError(failures, `the case's clean-up of ${project.name} failed`);
    }
  };
  let created: { runners: Array<{ application_id: string; volume_instance: string }> } = {
    runners: [{ application_id: appId, volume_instance: "" }],
  };
  if (options.beforeDeploy) {
    try {
      await options.beforeDeploy(project, workerEnv);
    } catch (e) {
      await cleanup();
      throw e;
    }
  }
  if (options.deploy !== false) {
    try {
      created = await step("plan+apply (SDK)", { project: project.name }, async () => {
        const pl = await plan({ dir: project.dir });
        return await apply({
          dir: project.dir,
          plan: pl.plan,
          planSha256: pl.sha256,
          extraLabels: env.labels,
        });
      });
    } catch (e) {
      await cleanup();
      throw e;
    }
  }
  // the starter's model's runner (a case may deploy a second model beside it)
  const starter = created.runners.find((r) => r.application_id === appId) ?? created.runners[0];
  const applicationId = starter.application_id;
  appId = applicationId;
  const volumeInstance = starter.volume_instance;
  const produced = new Map<string, Order>();
  const read = async () =>
    (await readAll(env.bootstrapHost, project.outputTopic, { partitions: [0, 1, 2] }))
      .map((r) => ({ key: r.key ?? "", value: JSON.parse(r.value!) }));
  return {
    env,
    project,
    backend,
    workerEnv,
    dsn,
    applicationId,
    volumeInstance,
    history,
    step,
    produced,
    async produce(records) {
      await step(
        "produce",
        { topic: project.inputTopic, keys: records.map((r) => r.key) },
        () =>
          produce(
            env.bootstrapHost,
            project.inputTopic,
            records.map((r) => ({ key: r.key, value: JSON.stringify(r.value) })),
          ),
      );
      for (const r of records) produced.set(r.key, r.value);
    },
    async output(n) {
      let got: Array<{ key: string; value: unknown }> = [];
      for (let i = 0; i < 90 && got.length < n; i++) {
        got = (await readAll(env.bootstrapHost, project.outputTopic, {
          partitions: [0, 1, 2],
          expect: n,
        })).map((r) => ({ key: r.key ?? "", value: JSON.parse(r.value!) }));
        if (got.length < n) await new Promise((r) => setTimeout(r, 500));
      }
      // a final settle read: anything beyond n is a duplicate or a wrong record
      await new Promise((r) => setTimeout(r, 1000));
      return await read();
    },
    async inputRecords() {
      const recs = await readAll(env.bootstrapHost, project.inputTopic, {
        partitions: [0, 1, 2],
        timeoutMs: 60_000,
      });
      return recs.map((r) => ({ key: r.key ?? "", partition: r.partition!, offset: r.offset! }));
    },
    state() {
      return backend === "local"
        ? readStateFiles(`${project.dir}/.sluice/state`, project.name)
        : readStateRows(dsn!, project.name);
    },
    cleanup,
  };
}

async function pgAdmin(url: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** `sluice -o json ...` in a fresh process, recorded in `history` as process `name`. */
export async function cli(
  history: HistoryEntry[],
  name: string,
  f: string,
  args: string[],
  env: Record<string, string>,
) {
  history.push({ process: name, type: "invoke", f, value: { args }, time: now() });
  const r = await runWorker(["-o", "json", ...args], { env });
  history.push({
    process: name,
    type: r.code === 0 ? "ok" : r.signal ? "info" : "fail",
    f,
    value: {
      exit: r.code,
      signal: r.signal,
      pid: r.pid,
      timed_out: r.timedOut,
      errors: r.json?.errors?.map((e) => ({ code: e.code, message: e.message })) ?? [],
    },
    time: r.endedAt,
  });
  return r;
}

/** sluice's own view of the fixture's runner (SDK observation, read-only). */
export async function observeRunner(fx: CaseFixture) {
  return (await observe({ dir: fx.project.dir })).runners[0];
}

/** What a case body works with: the fixture, the recorder and what the body adds. */
export interface CaseState {
  fx: CaseFixture;
  rec: Recorder;
  samples: Sample[];
  outcome: CaseEvidence["outcome"];
  /** Extra history (workers, nemeses), merged with the fixture's by time. */
  history: HistoryEntry[];
}

/** The identity of a case. */
export type CaseMeta = Pick<
  CaseEvidence,
  "id" | "kind" | "run_id" | "boundary" | "side" | "backend" | "params"
>;

/** The evidence of a case that could not run (its error says why). */
export function failedCase(
  meta: CaseMeta,
  error: string,
  startedAt: string = now(),
  durationMs = 0,
): CaseEvidence {
  return {
    ...meta,
    started_at: startedAt,
    duration_ms: durationMs,
    outcome: null,
    history: [{ process: "harness", type: "fail", f: "case", value: error, time: now() }],
    samples: [],
    setup: [],
    assertions: [],
    ok: false,
    error,
  };
}

/** Poll `test` (a thrown error counts as false) until it holds; throw after `timeoutMs`. */
export async function waitFor(
  what: string,
  test: () => Promise<boolean>,
  timeoutMs = 120_000,
  everyMs = 500,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await test().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * The case selection on the command line (`--tier suite|full`, `--only a,b`, `--backend b`),
 * as recorded (a `full` tier is the default and is not recorded).
 */
export function selectionFlags(): {
  only: string[] | null;
  backend: string | null;
  tier: Tier;
  selection: Record<string, string>;
} {
  const only = flag("--only");
  const backend = flag("--backend");
  const selection: Record<string, string> = {};
  const t = flag("--tier");
  if (t && t !== "full") selection.tier = t;
  const tier = selectionTier(selection);
  if (only) selection.only = only;
  if (backend) selection.backend = backend;
  return { only: only ? only.split(",") : null, backend: backend ?? null, tier, selection };
}

/**
 * Say that a case's clean-up failed (on stderr, with the cause) and go on: the case's verdict
 * is its evidence, and what the clean-up left is removed by the environment's tear-down, which
 * reports it.
 */
export function cleanupFailed(error: unknown): void {
  const causes = error instanceof AggregateError ? error.errors : [error];
  console.error(
    `[probes] clean-up failed: ${error instanceof Error ? error.message : error}; ${
      causes.map((c) => c instanceof Error ? c.message : String(c)).join("; ")
    }`,
  );
}

/** Run `prepare` then `body`, always clean up, and return the case's evidence. */
export async function caseEvidence<P extends CaseState>(
  meta: CaseMeta,
  prepare: () => Promise<P>,
  body: (p: P) => Promise<void>,
  cleanup: (p: P) => Promise<void> = (p) => p.fx.cleanup(),
): Promise<CaseEvidence> {
  const t0 = Date.now();
  const started_at = now();
  let error: string | null = null;
  let p: P | undefined;
  try {
    p = await prepare();
    await body(p);
  } catch (e) {
    error = e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e);
  } finally {
    if (p) await cleanup(p).catch(cleanupFailed);
  }
  const history = [...(p?.fx.history ?? []), ...(p?.history ?? [])];
  history.sort((x, y) => x.time.localeCompare(y.time));
  if (history.length === 0) {
    history.push({ process: "harness", type: "fail", f: "prepare", value: error, time: now() });
  }
  const setup = p?.rec.setup ?? [];
  const assertions = p?.rec.assertions ?? [];
  return {
    ...meta,
    started_at,
    duration_ms: Date.now() - t0,
    outcome: p?.outcome ?? null,
    history: toJson(history) as CaseEvidence["history"],
    samples: p?.samples ?? [],
    setup,
    assertions,
    ok: caseVerdict({ error, setup, assertions }),
    error,
  };
}

/** A probe's evidence file (see verification/schema.json). */
export interface EvidenceDoc {
  probe: ProbeName;
  schema_version: 2;
  generated_at: string;
  duration_ms: number;
  provenance: Provenance;
  fault_inventory: ReturnType<typeof inventory>;
  cases: CaseEvidence[];
  summary: ReturnType<typeof summarize>;
}

/** Write the evidence atomically (temp file + rename), redacted ({@link redactEvidence}). */
export async function writeEvidence(e: EvidenceDoc): Promise<string> {
  await Deno.mkdir(VERIFICATION_DIR, { recursive: true });
  const path = `${VERIFICATION_DIR}/${e.probe}.json`;
  const tmp = `${path}.${Deno.pid}.tmp`;
  await Deno.writeTextFile(
    tmp,
    redactEvidence(JSON.stringify(e, null, 2)) + "\n",
  );
  await Deno.rename(tmp, path);
  return path;
}

/** One case of a probe run. */
export interface ProbeCase {
  id: string;
  run: (runId: string) => Promise<CaseEvidence>;
}

/**
 * Run a probe's cases, `jobs` at a time, writing the evidence after each case (an unfinished
 * file has no end time and is not accepted by verify) and once more at the end. Returns the exit
 * status: 0 when every case passed, 1 otherwise, 2 when the run was refused.
 */
export async function runProbe(o: {
  probe: ProbeName;
  env: EnvDescriptor;
  cases: ProbeCase[];
  jobs: number;
  selection: Record<string, string>;
}): Promise<number> {
  const tag = `[${o.probe}]`;
  if (o.cases.length === 0) {
    console.log(`${tag} the selection ${JSON.stringify(o.selection)} matches no case`);
    return 2;
  }
  let provenance: Provenance;
  try {
    provenance = await startProvenance(o.env, {
      allowDirty: hasFlag("--allow-dirty"),
      selection: o.selection,
    });
  } catch (e) {
    if (e instanceof DirtyTree) {
      console.log(`${tag} refused: ${e.message}`);
      return 2;
    }
    throw e;
  }
  const t0 = Date.parse(provenance.started_at);
  const doc: EvidenceDoc = {
    probe: o.probe,
    schema_version: 2,
    generated_at: provenance.started_at,
    duration_ms: 0,
    provenance,
    fault_inventory: inventory(),
    cases: [],
    summary: summarize([]),
  };
  const results: CaseEvidence[] = new Array(o.cases.length);
  let next = 0;
  let done = 0;
  let writing = Promise.resolve("");
  const write = () => {
    doc.cases = results.filter((x) => x !== undefined);
    doc.summary = summarize(doc.cases);
    doc.duration_ms = Date.now() - t0;
    writing = writing.then(() => writeEvidence(structuredClone(doc)));
    return writing;
  };
  const worker = async () => {
    while (next < o.cases.length) {
      const i = next++;
      const r = await o.cases[i].run(provenance.run_id);
      results[i] = r;
      done++;
      const bad = r.assertions.filter((x) => !x.ok).map((x) => x.check);
      const badSetup = r.setup.filter((x) => !x.ok).map((x) => x.check);
      console.log(
        `${tag} ${done}/${o.cases.length} ${r.id}: ${r.ok ? "ok" : "FAILED"} (${
          (r.duration_ms / 1000).toFixed(1)
        }s, ${r.assertions.length} assertions)${
          [...badSetup, ...bad].length ? ` — ${[...badSetup, ...bad].join("; ")}` : ""
        }${r.error ? ` — ${r.error.split("\n")[0]}` : ""}`,
      );
      await write();
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.jobs, o.cases.length) }, worker));
  doc.provenance = finishProvenance(provenance);
  doc.cases = results.filter((x) => x !== undefined);
  doc.summary = summarize(doc.cases);
  doc.duration_ms = Date.parse(doc.provenance.ended_at!) - t0;
  await writing;
  const path = await writeEvidence(doc);
  console.log(
    `${tag} ${doc.summary.passed}/${doc.summary.cases} cases passed in ${
      (doc.duration_ms / 1000).toFixed(0)
    }s → ${path}`,
  );
  return doc.summary.failed === 0 ? 0 : 1;
}

/** How many cases run side by side: `--jobs`, else `SLUICE_PROBE_JOBS`, else `fallback`. */
export function jobs(fallback: number): number {
  return Math.max(1, Number(flag("--jobs") ?? Deno.env.get("SLUICE_PROBE_JOBS") ?? fallback));
}
