/**
 * The `sluice` CLI run in this process: {@link runCli} with the ports, clock and variables a
 * test injects, what it prints captured instead of shown. Where a child process is wanted (a
 * fault site that kills it, a fake world in a file) use `ways/fake_project.ts`'s `cli` instead.
 *
 * @example
 * ```ts
 * import { runInProcess } from "./in_process_cli.ts";
 * const r = await runInProcess(["-o", "json", "plan", "--project", "/tmp/p", "--offline"], {
 *   clock: { now: () => 0 },
 * });
 * console.log(r.code, JSON.parse(r.stdout).ok);
 * ```
 * @module
 */
import { runCli } from "../cli/main.ts";
import type { RuntimeDeps } from "../lib/runtime/deps.ts";

/** One in-process CLI run. */
export interface InProcessRun {
  /** The exit status `runCli` returned. */
  code: number;
  /** What went to `console.log`, one line a call. */
  stdout: string;
  /** What went to `console.error` and `console.warn`, one line a call. */
  stderr: string;
}

/**
 * Run `sluice args...` in this process with `deps`, capturing its console output. The console
 * is restored however the run ends, so a failing run does not swallow the test runner's output.
 *
 * @example
 * ```ts
 * import { runInProcess } from "./in_process_cli.ts";
 * const dir = "/tmp/some-project";
 * const r = await runInProcess(["-o", "json", "state", "show", "--project", dir], {});
 * console.log(r.code, r.stderr);
 * ```
 */
export async function runInProcess(args: string[], deps: RuntimeDeps): Promise<InProcessRun> {
  const out: string[] = [];
  const err: string[] = [];
  const { log, error, warn } = console;
  console.log = (...xs: unknown[]) => out.push(xs.map(String).join(" "));
  console.error = (...xs: unknown[]) => err.push(xs.map(String).join(" "));
  console.warn = console.error;
  try {
    const code = await runCli(args, deps);
    return { code, stdout: out.join("\n"), stderr: err.join("\n") };
  } finally {
    console.log = log;
    console.error = error;
    console.warn = warn;
  }
}
