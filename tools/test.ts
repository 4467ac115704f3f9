/**
 * The whole test suite: every Deno test file and the runner's JUnit tests, against one shared
 * real environment (network + broker, PostgreSQL). It ends by printing one line
 * `N passed, N failed, N skipped` computed from the JUnit reports of the runs, and exits
 * non-zero on any failure — including a suite that crashed before reporting.
 *
 *   deno task test                 # everything
 *   deno task test --unit          # only tests that need no Docker, Kafka or PostgreSQL
 *   deno task test tests/x_test.ts # selected Deno test files (still with the environment)
 *
 * @module
 */
import { startEnv, writeEnvFile } from "../harness/env.ts";
import type { Env } from "../harness/env.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const RESULTS = `${ROOT}.cache/test-results`;

/** Counts from one suite's reports. */
interface Tally {
  suite: string;
  passed: number;
  failed: number;
  skipped: number;
  /** Names of failed tests, for the final report. */
  failures: string[];
}

/** Tests whose file name says they need real services (see STYLE.md: "say in their file name"). */
const NEEDS_SERVICES = /(docker|kafka|_pg|postgres|probe|runner_|crash|race|e2e)/;

function parseArgs(args: string[]) {
  const unit = args.includes("--unit");
  const files = args.filter((a) => !a.startsWith("--"));
  return { unit, files };
}

async function walk(dir: string, out: string[]): Promise<void> {
  for await (const e of Deno.readDir(dir)) {
    if (e.name.startsWith(".") || e.name === "node_modules" || e.name === "target") continue;
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) await walk(p, out);
    else if (e.isFile && /_test\.ts$/.test(e.name)) out.push(p);
  }
}

async function testFiles(unit: boolean, selected: string[]): Promise<string[]> {
  if (selected.length > 0) return selected;
  const all: string[] = [];
  for (const dir of ["lib", "cli", "harness", "tests", "probes", "tools", "testing"]) {
    try {
      await walk(`${ROOT}${dir}`, all);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  all.sort();
  return unit ? all.filter((f) => !NEEDS_SERVICES.test(f.slice(ROOT.length))) : all;
}

/** Parse JUnit XML (Deno's and Surefire's) into counts. */
export function tallyJunit(suite: string, xml: string): Tally {
  const t: Tally = { suite, passed: 0, failed: 0, skipped: 0, failures: [] };
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

async function run(cmd: string, args: string[], env: Record<string, string> = {}) {
  const child = new Deno.Command(cmd, {
    args,
    cwd: ROOT,
    env,
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  return (await child.status).code;
}

async function runDeno(files: string[], envFile: string | undefined): Promise<Tally> {
  const junit = `${RESULTS}/deno.xml`;
  await Deno.remove(junit).catch(() => {});
  const code = await run(Deno.execPath(), [
    "test",
    "-A",
    `--junit-path=${junit}`,
    ...files,
  ], envFile ? { SLUICE_ENV_FILE: envFile } : {});
  let tally: Tally;
  try {
    tally = tallyJunit("deno", await Deno.readTextFile(junit));
  } catch {
    tally = { suite: "deno", passed: 0, failed: 0, skipped: 0, failures: [] };
  }
  if (code !== 0 && tally.failed === 0) {
    // a type error or a crash before any test reported: never let that count as green
    tally.failed++;
    tally.failures.push(
      `deno test exited ${code} without a failing test case (type check or crash)`,
    );
  }
  return tally;
}

async function runMaven(): Promise<Tally | undefined> {
  const pom = `${ROOT}runner/pom.xml`;
  try {
    await Deno.stat(pom);
  } catch {
    return undefined;
  }
  const reports = `${ROOT}runner/target/surefire-reports`;
  await Deno.remove(reports, { recursive: true }).catch(() => {});
  const code = await run("mvn", ["-B", "-q", "-f", pom, "test"]);
  const tally: Tally = { suite: "runner (JUnit)", passed: 0, failed: 0, skipped: 0, failures: [] };
  try {
    for await (const e of Deno.readDir(reports)) {
      if (!/^TEST-.*\.xml$/.test(e.name)) continue;
      const t = tallyJunit("junit", await Deno.readTextFile(`${reports}/${e.name}`));
      tally.passed += t.passed;
      tally.failed += t.failed;
      tally.skipped += t.skipped;
      tally.failures.push(...t.failures);
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  if (code !== 0 && tally.failed === 0) {
    tally.failed++;
    tally.failures.push(`mvn test exited ${code} without a failing test case (compile error?)`);
  }
  return tally;
}

/**
 * The probes (probes/all.ts) on the shared environment, tallied as one test per case from the
 * evidence files they wrote (each summary is computed from its assertions), plus one failure
 * when `tools/verify.ts` rejects the evidence or a probe crashed.
 */
async function runProbes(envFile: string): Promise<Tally> {
  const tally: Tally = { suite: "probes", passed: 0, failed: 0, skipped: 0, failures: [] };
  const dir = `${ROOT}verification`;
  const started = Date.now();
  // the suite tier: a declared part of every probe's case list (probes/catalogue.ts, TIERS)
  const code = await run(Deno.execPath(), [
    "run",
    "-A",
    `${ROOT}probes/all.ts`,
    "--",
    "--tier",
    "suite",
  ], {
    SLUICE_ENV_FILE: envFile,
  });
  for await (const e of Deno.readDir(dir)) {
    if (!e.isFile || !e.name.endsWith(".json") || e.name === "schema.json") continue;
    const doc = JSON.parse(await Deno.readTextFile(`${dir}/${e.name}`)) as {
      probe: string;
      generated_at: string;
      cases: Array<{ id: string; ok: boolean }>;
    };
    if (Date.parse(doc.generated_at) < started) continue; // not regenerated by this run
    for (const c of doc.cases) {
      if (c.ok) tally.passed++;
      else {
        tally.failed++;
        tally.failures.push(`${doc.probe} > ${c.id}`);
      }
    }
  }
  if (code !== 0 && tally.failed === 0) {
    tally.failed++;
    tally.failures.push(`probes exited ${code} without a failing case (crash or verify)`);
  }
  return tally;
}

async function main(): Promise<number> {
  const { unit, files } = parseArgs(Deno.args);
  await Deno.mkdir(RESULTS, { recursive: true });
  const selected = await testFiles(unit, files);
  const tallies: Tally[] = [];

  let env: Env | undefined;
  let envFile: string | undefined;
  if (!unit) {
    const t0 = Date.now();
    env = await startEnv();
    envFile = `${RESULTS}/env.json`;
    await writeEnvFile(envFile, env);
    console.log(
      `[test] environment ${env.runId}: broker ${env.bootstrapHost} / ${env.bootstrapInternal} ` +
        `on ${env.network}, cluster ${env.clusterId} (${((Date.now() - t0) / 1000).toFixed(1)}s)`,
    );
  }
  try {
    tallies.push(await runDeno(selected, envFile));
    if (files.length === 0 && !unit) {
      const maven = await runMaven();
      if (maven) tallies.push(maven);
      if (envFile) tallies.push(await runProbes(envFile));
    }
  } finally {
    if (env) {
      const t: Tally = { suite: "teardown", passed: 0, failed: 0, skipped: 0, failures: [] };
      try {
        const removed = await env.teardown();
        console.log(
          `[test] tore down ${env.runId}: ${removed.containers} containers, ${removed.volumes} volumes, ${removed.networks} networks`,
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
        t.failures.push(`tear-down of ${env.runId} failed: ${error}`);
      }
      if (t.failed > 0) tallies.push(t);
    }
  }

  const sum = (k: "passed" | "failed" | "skipped") => tallies.reduce((a, t) => a + t[k], 0);
  for (const t of tallies) {
    console.log(`[test] ${t.suite}: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`);
    for (const f of t.failures) console.log(`[test]   FAILED ${f}`);
  }
  const failed = sum("failed");
  const passed = sum("passed");
  const skipped = sum("skipped");
  if (passed + failed === 0) {
    console.log("0 passed, 1 failed");
    console.log("[test] no test ran");
    return 1;
  }
  console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`);
  return failed > 0 ? 1 : 0;
}

if (import.meta.main) {
  Deno.exit(await main());
}
