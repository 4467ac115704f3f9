/**
 * `deno task probes`: regenerate every evidence file from real runs. Each probe runs as its own
 * OS process against one shared environment (the one named by `SLUICE_ENV_FILE`, or one this
 * script starts and removes), then `tools/verify.ts` checks the results.
 *
 *   deno task probes                    # every probe
 *   deno task probes fault_matrix       # selected probes (file names without .ts)
 *   deno task probes --list             # print the fault inventory (every site) and exit
 *
 * Extra arguments after `--` go to every probe (e.g. `-- --jobs 2`). `--allow-dirty` is passed
 * on to the verifier too, and a selection (`--only`, `--backend`) makes it accept partial files.
 * @module
 */
import { startEnv, writeEnvFile } from "../harness/env.ts";
import type { Env } from "../harness/env.ts";
import { formatInventory, guardInventorySwitch } from "../lib/protocol/inventory.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** The probes, in the order they run. */
export const PROBES = ["fault_matrix", "disruption", "rejections", "random_kill"];

/** Options of {@link runProbes}. */
export interface RunProbesOptions {
  /** The environment descriptor (default `SLUICE_ENV_FILE`, else one started here). */
  envFile?: string;
  /** Where the evidence goes (default `SLUICE_VERIFICATION_DIR`, else `verification/`). */
  verificationDir?: string;
  /** Called as each probe ends, with its exit status and wall time. */
  onProbe?: (name: string, code: number, seconds: number) => void;
}

/** Run the selected probes; returns the number that exited non-zero. */
export async function runProbes(
  names: string[],
  extra: string[],
  options: RunProbesOptions = {},
): Promise<number> {
  let env: Env | undefined;
  let envFile = options.envFile ?? Deno.env.get("SLUICE_ENV_FILE");
  if (!envFile) {
    env = await startEnv();
    envFile = await Deno.makeTempFile({ prefix: "sluice-probe-env-", suffix: ".json" });
    await writeEnvFile(envFile, env);
  }
  const dir = options.verificationDir ?? Deno.env.get("SLUICE_VERIFICATION_DIR");
  let failed = 0;
  try {
    for (const name of names) {
      const file = `${ROOT}probes/${name}.ts`;
      try {
        await Deno.stat(file);
      } catch {
        console.log(`[probes] ${name}: not present, skipped`);
        continue;
      }
      const t0 = Date.now();
      const code = (await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", file, ...extra],
        cwd: ROOT,
        env: { SLUICE_ENV_FILE: envFile, ...(dir ? { SLUICE_VERIFICATION_DIR: dir } : {}) },
        stdout: "inherit",
        stderr: "inherit",
      }).output()).code;
      const seconds = (Date.now() - t0) / 1000;
      console.log(`[probes] ${name}: exit ${code} in ${seconds.toFixed(0)}s`);
      options.onProbe?.(name, code, seconds);
      if (code !== 0) failed++;
    }
  } finally {
    if (env) await env.teardown();
  }
  return failed;
}

/** Run `tools/verify.ts` with `flags` on `dir` (default its own); returns its exit status. */
export async function runVerify(flags: string[], dir?: string): Promise<number> {
  return (await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}tools/verify.ts`, ...flags],
    cwd: ROOT,
    env: dir ? { SLUICE_VERIFICATION_DIR: dir } : {},
    stdout: "inherit",
    stderr: "inherit",
  }).output()).code;
}

if (import.meta.main) {
  // a probe process itself never carries a fault; its workers are armed one by one
  guardInventorySwitch();
  if (Deno.args.includes("--list")) {
    console.log(formatInventory());
    Deno.exit(0);
  }
  const dash = Deno.args.indexOf("--");
  const own = dash >= 0 ? Deno.args.slice(0, dash) : Deno.args;
  const extra = dash >= 0 ? Deno.args.slice(dash + 1) : [];
  const names = own.length > 0 ? own : PROBES;
  const failed = await runProbes(names, extra);
  const verifyFlags = [
    ...(extra.includes("--allow-dirty") ? ["--allow-dirty"] : []),
    ...(extra.includes("--only") || extra.includes("--backend") ? ["--allow-partial"] : []),
  ];
  const verify = await runVerify(verifyFlags);
  Deno.exit(failed === 0 && verify === 0 ? 0 : 1);
}
