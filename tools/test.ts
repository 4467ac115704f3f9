/**
 * The whole test suite: every Deno test file, the runner's JUnit tests and the probes' `suite`
 * tier, against one shared real environment (network, broker, Connect worker; PostgreSQL). It
 * ends by printing each stage's wall time and then one line `N passed, N failed` computed from
 * the JUnit reports and evidence files of the run, and exits non-zero on any failure —
 * including a suite that crashed before reporting.
 *
 *   deno task test                 # everything
 *   deno task test --unit          # only the files that declare no service
 *   deno task test tests/x_test.ts # selected files (with the environment when one needs it)
 *   deno task test --no-probes     # every file and the JUnit tests, not the probes
 *   deno task test --list          # what each file declares it needs
 *
 * Stages (`SLUICE_TEST_JOBS`, default 2, sets how many files run at once):
 *
 * 1. **typecheck** — one `deno check` of every selected file; the files then run `--no-check`.
 * 2. **unit** — the files that declare no service (`tools/test_files.ts`), each in its own
 *    process, with no Docker daemon, PostgreSQL or environment reachable, so an undeclared need
 *    fails; the shared environment starts meanwhile.
 * 3. **services** — the files that declare a service, and the runner's JUnit tests, each in its
 *    own process, two at a time against the one environment; a file that declares
 *    `test-exclusive` runs alone.
 * 4. **probes** — the `suite` tier (`probes/all.ts`), its evidence written under
 *    `.cache/test-results/verification` and verified there (the committed full-tier evidence in
 *    `verification/` is never overwritten).
 *
 * Each file's output goes to `.cache/test-results/logs/`; a failing file's log is printed.
 * The files run longest first, by the durations of `tools/test_durations.json` (measured; a
 * file missing from it is estimated from its size). Every run writes what it measured to
 * `.cache/test-results/durations.json`; copy that over the table when the suite changes shape.
 *
 * @module
 */
import { startEnv, writeEnvFile } from "../harness/env.ts";
import type { Env } from "../harness/env.ts";
import { PROBES, runProbes, runVerify } from "../probes/all.ts";
import { gitState } from "../probes/provenance.ts";
import { evidenceCheckFailures, plantPassword } from "../testing/evidence_checks.ts";
import { type Declaration, declaredNeeds } from "./test_files.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const RESULTS = `${ROOT}.cache/test-results`;
const DURATIONS = `${ROOT}tools/test_durations.json`;

/** Counts from one suite's reports. */
export interface Tally {
  suite: string;
  passed: number;
  failed: number;
  skipped: number;
  /** Names of failed tests, for the final report. */
  failures: string[];
}

function emptyTally(suite: string): Tally {
  return { suite, passed: 0, failed: 0, skipped: 0, failures: [] };
}

function add(into: Tally, t: Tally): void {
  into.passed += t.passed;
  into.failed += t.failed;
  into.skipped += t.skipped;
  into.failures.push(...t.failures);
}

/**
 * What a unit-stage process sees instead of the services: a Docker socket and a PostgreSQL
 * server that do not exist and no environment, so a file that uses one without declaring it
 * fails instead of passing by luck (`sharedEnv` names the declaration it lacks).
 */
export const UNIT_STAGE_ENV: Readonly<Record<string, string>> = {
  SLUICE_TEST_STAGE: "unit",
  DOCKER_HOST: "unix:///nonexistent/unit-tests-declare-no-docker.sock",
  SLUICE_PG_URL: "postgres://unit-tests-declare-no-postgres@127.0.0.1:9/none",
  SLUICE_ENV_FILE: "",
};

function parseArgs(args: string[]) {
  const unit = args.includes("--unit");
  const list = args.includes("--list");
  const probes = !args.includes("--no-probes");
  const files = args.filter((a) => !a.startsWith("--"));
  return { unit, list, probes, files };
}

async function walk(dir: string, out: string[]): Promise<void> {
  for await (const e of Deno.readDir(dir)) {
    if (e.name.startsWith(".") || e.name === "node_modules" || e.name === "target") continue;
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) await walk(p, out);
    else if (e.isFile && /_test\.ts$/.test(e.name)) out.push(p);
  }
}

async function allTestFiles(): Promise<string[]> {
  const all: string[] = [];
  for (const dir of ["lib", "cli", "harness", "tests", "probes", "tools", "testing"]) {
    try {
      await walk(`${ROOT}${dir}`, all);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  return all.sort();
}

/** Parse JUnit XML (Deno's and Surefire's) into counts. */
export function tallyJunit(suite: string, xml: string): Tally {
  const t = emptyTally(suite);
  const re = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const m of xml.matchAll(re)) {
    const attrs = m[1];
    const body = m[3] ?? "";
    const name = /\bname="([^"]*)"/.exec(attrs)?.[1] ?? "?";
    const cls = /\bclassname="([^"]*)"/.exec(attrs)?.[1] ?? "";
    if (/<(failure|error)\b/.test(body)) {
      t.failed++;
      t.failures.push(`${cls ? cls + " > " : ""}${unescapeXml(name)}`);
    } else if (/<skipped\b/.test(body)) t.skipped++;
    else t.passed++;
  }
  return t;
}

function unescapeXml(s: string): string {
  return s.replaceAll("&quot;", '"').replaceAll("&apos;", "'").replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">").replaceAll("&amp;", "&");
}

/** A command's exit status, its output written to `log`. */
async function runLogged(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  log: string,
): Promise<number> {
  const file = await Deno.open(log, { write: true, create: true, truncate: true });
  try {
    const child = new Deno.Command(cmd, {
      args,
      cwd: ROOT,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    // both streams into the one log, in arrival order
    const pump = async (s: ReadableStream<Uint8Array>) => {
      for await (const chunk of s) await file.write(chunk);
    };
    await Promise.all([pump(child.stdout), pump(child.stderr)]);
    return (await child.status).code;
  } finally {
    file.close();
  }
}

/** The last `lines` lines of a log, for a failure's report. */
async function tail(log: string, lines = 300): Promise<string> {
  const text = await Deno.readTextFile(log).catch(() => "");
  const all = text.split("\n");
  return (all.length > lines ? [`… (${all.length - lines} lines above in ${log})`] : [])
    .concat(all.slice(-lines)).join("\n");
}

function rel(path: string): string {
  return path.startsWith(ROOT) ? path.slice(ROOT.length) : path;
}

function slug(path: string): string {
  return rel(path).replace(/[^A-Za-z0-9_.-]+/g, "_");
}

/** One unit of work of a stage: a test file, or the runner's JUnit suite. */
interface Job {
  name: string;
  /** Estimated seconds, for longest-first order. */
  estimate: number;
  /** Why it must run alone (null: it shares the environment). */
  exclusive: string | null;
  run(): Promise<Tally>;
}

/** Run `jobs` in `lanes` parallel lanes, longest first; exclusive jobs alone, after the rest. */
async function pool(jobs: Job[], lanes: number, onDone: (j: Job, t: Tally, s: number) => void) {
  const byEstimate = (a: Job, b: Job) => b.estimate - a.estimate;
  const shared = jobs.filter((j) => !j.exclusive).sort(byEstimate);
  const alone = jobs.filter((j) => j.exclusive).sort(byEstimate);
  const tallies: Tally[] = [];
  const one = async (j: Job) => {
    const t0 = Date.now();
    let t: Tally;
    try {
      t = await j.run();
    } catch (e) {
      t = emptyTally(j.name);
      t.failed++;
      t.failures.push(`${j.name}: the runner failed: ${e instanceof Error ? e.message : e}`);
    }
    const s = (Date.now() - t0) / 1000;
    tallies.push(t);
    onDone(j, t, s);
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(lanes, shared.length)) }, async () => {
      while (next < shared.length) await one(shared[next++]);
    }),
  );
  for (const j of alone) await one(j);
  return tallies;
}

/** A Deno test file run in its own process with its own JUnit report. */
function denoJob(
  file: string,
  decl: Declaration,
  estimate: number,
  env: () => Record<string, string>,
): Job {
  const name = rel(file);
  return {
    name,
    estimate,
    exclusive: decl.exclusive,
    async run() {
      const junit = `${RESULTS}/junit/${slug(file)}.xml`;
      const log = `${RESULTS}/logs/${slug(file)}.log`;
      await Deno.remove(junit).catch(() => {});
      const code = await runLogged(
        Deno.execPath(),
        [
          "test",
          "-A",
          "--no-check",
          `--junit-path=${junit}`,
          file,
        ],
        { NO_COLOR: "1", ...env() },
        log,
      );
      let tally: Tally;
      try {
        tally = tallyJunit(name, await Deno.readTextFile(junit));
      } catch {
        tally = emptyTally(name);
      }
      if (code !== 0 && tally.failed === 0) {
        // a crash or an uncaught error before any test reported: never let that count as green
        tally.failed++;
        tally.failures.push(`${name}: deno test exited ${code} without a failing test case`);
      }
      if (tally.failed > 0) console.log(`[test] ---- ${name} (log) ----\n${await tail(log)}`);
      return tally;
    },
  };
}

/** The runner's JUnit tests (Maven), as one job of the services stage. */
function mavenJob(estimate: number): Job {
  return {
    name: "runner (JUnit)",
    estimate,
    exclusive: null,
    async run() {
      const pom = `${ROOT}runner/pom.xml`;
      const reports = `${ROOT}runner/target/surefire-reports`;
      const log = `${RESULTS}/logs/runner-junit.log`;
      await Deno.remove(reports, { recursive: true }).catch(() => {});
      const code = await runLogged("mvn", ["-B", "-q", "-f", pom, "test"], {}, log);
      const tally = emptyTally("runner (JUnit)");
      try {
        for await (const e of Deno.readDir(reports)) {
          if (!/^TEST-.*\.xml$/.test(e.name)) continue;
          add(tally, tallyJunit("junit", await Deno.readTextFile(`${reports}/${e.name}`)));
        }
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      if (code !== 0 && tally.failed === 0) {
        tally.failed++;
        tally.failures.push(`mvn test exited ${code} without a failing test case (compile error?)`);
      }
      if (tally.failed > 0) {
        console.log(`[test] ---- runner (JUnit) (log) ----\n${await tail(log)}`);
      }
      return tally;
    },
  };
}

/** What of a probe case's evidence says why it failed. */
interface CaseWhy {
  error: string | null;
  setup: Array<{ check: string; ok: boolean }>;
  assertions: Array<{ check: string; ok: boolean }>;
}

/** Why a case failed, in one line: its error's first line, else its failed checks. */
export function caseWhy(c: CaseWhy): string {
  if (c.error) return c.error.split("\n")[0].slice(0, 300);
  const failed = [...c.setup, ...c.assertions].filter((a) => !a.ok).map((a) => a.check);
  if (failed.length > 0) return `failed: ${failed.join(", ")}`;
  return c.assertions.length === 0 ? "no assertion recorded" : "not ok";
}

/**
 * The probes' `suite` tier on the shared environment, tallied as one test per case from the
 * evidence files they wrote (each summary is computed from its assertions), plus one failure
 * when a probe crashed or `tools/verify.ts` rejects the evidence, plus the checks of
 * `testing/evidence_checks.ts` on that evidence (every tampering rejected; a password planted in
 * the probes' DSN in no file). The evidence goes to a
 * scratch directory: `verification/` keeps the committed full-tier run.
 */
async function probesStage(envFile: string, stages: StageTime[]): Promise<Tally> {
  const tally = emptyTally("probes");
  const dir = `${RESULTS}/verification`;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  const crashed: string[] = [];
  // the probes reach PostgreSQL through a DSN with a planted password (the server trusts):
  // no evidence file may hold it (evidenceCheckFailures below)
  const env = JSON.parse(await Deno.readTextFile(envFile)) as Env;
  const planted = plantPassword(env.pgUrl);
  const probeEnv = `${RESULTS}/env-planted.json`;
  await Deno.writeTextFile(probeEnv, JSON.stringify({ ...env, pgUrl: planted.url }));
  await runProbes(PROBES, ["--tier", "suite"], {
    envFile: probeEnv,
    verificationDir: dir,
    onProbe(name, code, seconds) {
      stages.push({
        stage: `  ${name}`,
        seconds,
        note: `exit ${code}`,
        at: Date.now() - seconds * 1000,
      });
      if (code !== 0) crashed.push(name);
    },
  });
  const verified = await runVerify([], dir);
  for await (const e of Deno.readDir(dir)) {
    if (!e.isFile || !e.name.endsWith(".json")) continue;
    const doc = JSON.parse(await Deno.readTextFile(`${dir}/${e.name}`)) as {
      probe: string;
      cases: Array<CaseWhy & { id: string; ok: boolean }>;
    };
    for (const c of doc.cases) {
      if (c.ok) tally.passed++;
      else {
        tally.failed++;
        // why, in the summary a CI log keeps (its tail): the error's first line or the checks
        tally.failures.push(`${doc.probe} > ${c.id}: ${caseWhy(c)}`);
      }
    }
  }
  await Deno.remove(probeEnv).catch(() => {});
  // the verifier against this real evidence: every tampering rejected, naming what it hid
  const checks = await evidenceCheckFailures(dir, planted.password, {
    dirty: (await gitState()).dirty,
  });
  tally.passed += checks.checked - checks.failures.length;
  tally.failed += checks.failures.length;
  tally.failures.push(...checks.failures.map((f) => `evidence check > ${f}`));
  if (tally.failed === 0) {
    for (const name of crashed) {
      tally.failed++;
      tally.failures.push(`probe ${name} exited non-zero without a failing case`);
    }
  }
  if (verified !== 0) {
    tally.failed++;
    tally.failures.push(`tools/verify.ts rejected the evidence (exit ${verified})`);
  }
  return tally;
}

/** Measured seconds per file from the committed table, or null when it is absent. */
async function knownDurations(): Promise<Record<string, number>> {
  try {
    return JSON.parse(await Deno.readTextFile(DURATIONS)) as Record<string, number>;
  } catch {
    return {};
  }
}

/** A stage's wall time, for the final report. */
interface StageTime {
  stage: string;
  seconds: number;
  note: string;
  /** When it started (ms since the epoch): the report lists stages in this order. */
  at?: number;
}

async function main(): Promise<number> {
  const { unit: unitOnly, list, probes, files: selected } = parseArgs(Deno.args);
  const lanes = Math.max(1, Number(Deno.env.get("SLUICE_TEST_JOBS") ?? "2"));
  await Deno.mkdir(`${RESULTS}/junit`, { recursive: true });
  await Deno.mkdir(`${RESULTS}/logs`, { recursive: true });
  const files = selected.length > 0
    ? selected.map((f) => f.startsWith("/") ? f : `${Deno.cwd()}/${f}`)
    : await allTestFiles();
  const cache = new Map();
  const decls = new Map<string, Declaration>();
  for (const f of files) decls.set(f, await declaredNeeds(f, cache));
  if (list) {
    for (const f of files) {
      const d = decls.get(f)!;
      const needs = d.needs.size === 0 ? "unit" : [...d.needs].sort().join(",");
      console.log(`${needs.padEnd(16)} ${d.exclusive ? "exclusive " : ""}${rel(f)}`);
    }
    return 0;
  }
  const unitFiles = files.filter((f) => decls.get(f)!.needs.size === 0);
  const serviceFiles = unitOnly ? [] : files.filter((f) => decls.get(f)!.needs.size > 0);
  const needEnv = serviceFiles.some((f) => decls.get(f)!.needs.has("env")) ||
    (selected.length === 0 && !unitOnly);
  const known = await knownDurations();
  const estimate = async (f: string) =>
    known[rel(f)] ?? (await Deno.stat(f)).size / 1000 * (decls.get(f)!.needs.size ? 10 : 1);

  const tallies: Tally[] = [];
  const stages: StageTime[] = [];
  const measured: Record<string, number> = {};
  const stage = async <T>(name: string, note: string, body: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    // the row is placed when the stage starts: rows a stage adds (each probe) follow it
    const row: StageTime = { stage: name, seconds: 0, note, at: t0 };
    stages.push(row);
    console.log(`[test] ── ${name} ──`);
    try {
      return await body();
    } finally {
      row.seconds = (Date.now() - t0) / 1000;
    }
  };
  const report = (stageName: string) => (j: Job, t: Tally, s: number) => {
    measured[j.name] = Math.round(s * 10) / 10;
    const verdict = t.failed > 0 ? "FAIL" : "ok  ";
    console.log(
      `[test] ${stageName} ${verdict} ${j.name}: ${t.passed} passed, ${t.failed} failed` +
        `${t.skipped ? `, ${t.skipped} skipped` : ""} (${s.toFixed(1)} s)`,
    );
  };

  // 1. one type check of everything that will run
  const checked = await stage("typecheck", `${files.length} files`, async () => {
    const log = `${RESULTS}/logs/typecheck.log`;
    const code = await runLogged(Deno.execPath(), ["check", ...files], { NO_COLOR: "1" }, log);
    if (code === 0) return true;
    const t = emptyTally("typecheck");
    t.failed++;
    t.failures.push(`deno check exited ${code}`);
    tallies.push(t);
    console.log(await tail(log));
    return false;
  });
  if (!checked) return finish(tallies, stages, measured);

  // the shared environment starts while the unit files run
  let env: Env | undefined;
  let envFile: string | undefined;
  const envStart = needEnv
    ? (async () => {
      const t0 = Date.now();
      const e = await startEnv();
      env = e;
      envFile = `${RESULTS}/env.json`;
      await writeEnvFile(envFile, e);
      stages.push({
        stage: "environment",
        seconds: (Date.now() - t0) / 1000,
        note: "started beside the unit stage",
        at: t0,
      });
      console.log(
        `[test] environment ${e.runId}: broker ${e.bootstrapHost} / ${e.bootstrapInternal} on ` +
          `${e.network}, cluster ${e.clusterId}`,
      );
      return e;
    })()
    : Promise.resolve(undefined);
  // a failed start is reported by the services stage, not as an unhandled rejection here
  envStart.catch(() => {});

  try {
    // 2. unit files, with no service reachable
    const unitJobs = await Promise.all(
      unitFiles.map(async (f) =>
        denoJob(f, decls.get(f)!, await estimate(f), () => ({ ...UNIT_STAGE_ENV }))
      ),
    );
    if (unitJobs.length > 0) {
      tallies.push(
        ...await stage(
          "unit",
          `${unitJobs.length} files, ${lanes} at once`,
          () => pool(unitJobs, lanes, report("unit    ")),
        ),
      );
    }

    // 3. files that declare a service, and the runner's JUnit tests
    const withMaven = selected.length === 0 && !unitOnly;
    if (serviceFiles.length > 0 || withMaven) {
      const note = `${serviceFiles.length} files${withMaven ? " + JUnit" : ""}, ${lanes} at once`;
      await stage("services", note, async () => {
        try {
          await envStart;
        } catch (e) {
          const t = emptyTally("environment");
          t.failed++;
          t.failures.push(`the environment did not start: ${e instanceof Error ? e.message : e}`);
          tallies.push(t);
          return;
        }
        const jobs = await Promise.all(serviceFiles.map(async (f) =>
          denoJob(
            f,
            decls.get(f)!,
            await estimate(f),
            (): Record<string, string> => envFile ? { SLUICE_ENV_FILE: envFile } : {},
          )
        ));
        if (withMaven) jobs.push(mavenJob(known["runner (JUnit)"] ?? 120));
        tallies.push(...await pool(jobs, lanes, report("services")));
      });
    }

    // 4. the probes' suite tier
    if (selected.length === 0 && !unitOnly && probes && envFile) {
      const f = envFile;
      tallies.push(await stage("probes", "suite tier", () => probesStage(f, stages)));
    }
  } finally {
    await envStart.catch(() => undefined);
    if (env) {
      const e = env;
      await stage("teardown", "", async () => {
        const t = emptyTally("teardown");
        try {
          const removed = await e.teardown();
          console.log(
            `[test] tore down ${e.runId}: ${removed.containers} containers, ${removed.volumes} volumes, ${removed.networks} networks`,
          );
          if (removed.strays.length > 0) {
            t.failed++;
            t.failures.push(
              `containers without the run label were left on the network: ${
                removed.strays.join(", ")
              }`,
            );
          }
        } catch (error) {
          t.failed++;
          t.failures.push(`tear-down of ${e.runId} failed: ${error}`);
        }
        if (t.failed > 0) tallies.push(t);
      });
    }
  }
  return finish(tallies, stages, measured);
}

async function finish(
  tallies: Tally[],
  stages: StageTime[],
  measured: Record<string, number>,
): Promise<number> {
  await Deno.writeTextFile(
    `${RESULTS}/durations.json`,
    JSON.stringify(measured, Object.keys(measured).sort(), 2) + "\n",
  );
  const suites = new Map<string, Tally>();
  for (const t of tallies) {
    const key = t.suite.startsWith("runner") || t.suite === "probes" || t.suite === "teardown" ||
        t.suite === "typecheck" || t.suite === "environment"
      ? t.suite
      : "deno";
    if (!suites.has(key)) suites.set(key, emptyTally(key));
    add(suites.get(key)!, t);
  }
  for (const t of suites.values()) {
    console.log(`[test] ${t.suite}: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`);
    for (const f of t.failures) console.log(`[test]   FAILED ${f}`);
  }
  const bootstrap = Deno.env.get("SLUICE_BOOTSTRAP_SECONDS");
  const rows: StageTime[] = [
    ...(bootstrap ? [{ stage: "bootstrap", seconds: Number(bootstrap), note: "" }] : []),
    // by start; a stage's own rows (each probe) stay after it
    ...stages.map((s, i) => ({ s, i })).sort((a, b) => (a.s.at ?? 0) - (b.s.at ?? 0) || a.i - b.i)
      .map((x) => x.s),
  ];
  for (const s of rows) {
    console.log(
      `[test] stage ${s.stage.padEnd(11)} ${s.seconds.toFixed(0).padStart(5)} s${
        s.note ? `  (${s.note})` : ""
      }`,
    );
  }
  const sum = (k: "passed" | "failed" | "skipped") => tallies.reduce((a, t) => a + t[k], 0);
  const failed = sum("failed");
  const passed = sum("passed");
  const skipped = sum("skipped");
  if (passed + failed === 0) {
    console.log("[test] no test ran");
    console.log("0 passed, 1 failed");
    return 1;
  }
  console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`);
  return failed > 0 ? 1 : 0;
}

if (import.meta.main) {
  Deno.exit(await main());
}
