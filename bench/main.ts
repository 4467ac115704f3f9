/**
 * `deno task bench`: runs the benchmarks one after the other against one environment
 * (a broker on its own Docker network, harness/env.ts), each in its own process, then removes
 * the environment. Each benchmark prints its table and writes `bench/results/<name>.json`.
 *
 *   deno task bench [--only=replacement_pause,close_empty,compile_scaling,observe_scaling,runner_throughput,runner_start,poison_record,preview,connect_image]
 *   deno task bench -- --pairs=8         extra flags are passed to every benchmark
 *
 * With `SLUICE_ENV_FILE` set it attaches to that environment and leaves it running.
 * @module
 */
import { startEnv, writeEnvFile } from "../harness/env.ts";
import type { Env } from "../harness/env.ts";
import { buildRunnerImage } from "../tests/runner_fixture.ts";
import { flags, ROOT } from "./_common.ts";

const ALL = [
  "replacement_pause",
  "close_empty",
  "compile_scaling",
  "observe_scaling",
  "runner_throughput",
  "preview",
  "runner_start",
  "poison_record",
  "connect_image",
];
const f = flags(Deno.args);
const only = f.get("only", ALL.join(",")).split(",");
const passThrough = Deno.args.filter((a) => !a.startsWith("--only"));

const t0 = Date.now();
// build (or find) the runner image first, so no benchmark times a Maven build
await buildRunnerImage();
let env: Env | null = null;
let envFile = Deno.env.get("SLUICE_ENV_FILE") ?? "";
let tmpDir: string | null = null;
if (!envFile) {
  env = await startEnv();
  tmpDir = await Deno.makeTempDir({ prefix: "sluice-bench-env-" });
  envFile = `${tmpDir}/env.json`;
  await writeEnvFile(envFile, env);
}
const results: Array<{ name: string; code: number; seconds: number }> = [];
try {
  for (const name of ALL.filter((n) => only.includes(n))) {
    console.log(`\n=== ${name} ===`);
    const s = Date.now();
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${ROOT}bench/${name}.ts`, ...passThrough],
      env: { SLUICE_ENV_FILE: envFile },
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
    const { code } = await child.status;
    results.push({ name, code, seconds: (Date.now() - s) / 1000 });
  }
} finally {
  if (env) await env.teardown();
  if (tmpDir) await Deno.remove(tmpDir, { recursive: true });
}
console.log(
  `\n${
    results.map((r) =>
      `${r.name}: ${r.code === 0 ? "ok" : `FAILED (${r.code})`} ${r.seconds.toFixed(0)} s`
    )
      .join("; ")
  }; total ${((Date.now() - t0) / 1000).toFixed(0)} s`,
);
if (results.some((r) => r.code !== 0)) Deno.exit(1);
