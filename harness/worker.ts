/**
 * One CLI worker: the installed launcher `bin/sluice` run as a separate OS process, optionally
 * with one fault site armed (`SLUICE_FAULT_POINT=<site>:<side>[@n]` together with the test-only
 * permission `SLUICE_TEST_ONLY_ALLOW_FAULTS=1`; see docs/fault-injection.md). The armed site must
 * be in the fault inventory. The result says how the process ended — by exit code or by signal —
 * and whether it died at the armed site (SIGKILL plus the `SLUICE_FAULT_FIRED` line on stderr).
 *
 * @example
 * ```ts
 * import { runWorker } from "./worker.ts";
 * const r = await runWorker(["-o", "json", "state", "show", "--project", "/tmp/p"]);
 * console.log(r.code, r.json);
 * ```
 * @module
 */
import { FAULT_ENV, parseFaultPoint } from "../lib/fault/site.ts";
import { faultSiteNames } from "../lib/fault/inventory.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** The installed launcher. */
export const SLUICE_BIN = `${ROOT}bin/sluice`;

/** How one worker process ended. */
export interface WorkerResult {
  args: string[];
  /** The armed fault point, if any. */
  fault: string | null;
  /** Exit status; 128 + signal number when killed by a signal (137 for SIGKILL). */
  code: number;
  signal: Deno.Signal | null;
  stdout: string;
  stderr: string;
  /** The `-o json` envelope, when stdout held one. */
  json: JsonEnvelope | null;
  /** The fault point named by a `SLUICE_FAULT_FIRED` line on stderr. */
  fired: string | null;
  /** True when the process died by SIGKILL at the armed fault point. */
  killedAtFault: boolean;
  startedAt: string;
  endedAt: string;
  ms: number;
}

/** The CLI's JSON envelope (docs/cli.md). */
export interface JsonEnvelope {
  ok: boolean;
  command: string;
  data: unknown;
  errors: Array<{ code: string; message: string; evidence?: unknown }>;
}

/** Options of {@link runWorker}. */
export interface WorkerOptions {
  /** `<site>:<before|after>[@n]`, armed for this process only (a site of the inventory). */
  fault?: string | null;
  /** Extra environment (e.g. the PostgreSQL DSN variable the manifest names). */
  env?: Record<string, string>;
  /** Kill the worker (SIGKILL) if it runs longer than this (default 240 s). */
  timeoutMs?: number;
  /** Called with the child's pid as soon as it is spawned. */
  onSpawn?: (pid: number) => void;
}

/** Run `bin/sluice args...` to its end. */
export async function runWorker(
  args: string[],
  options: WorkerOptions = {},
): Promise<WorkerResult> {
  const env: Record<string, string> = { ...(options.env ?? {}), NO_COLOR: "1" };
  if (options.fault) {
    const armed = parseFaultPoint(options.fault);
    if (!faultSiteNames().has(armed.site)) {
      throw new Error(`${options.fault}: ${armed.site} is not a site of the fault inventory`);
    }
    env[FAULT_ENV.point] = options.fault;
    env[FAULT_ENV.allow] = "1";
  }
  const started = Date.now();
  const child = new Deno.Command(SLUICE_BIN, {
    args,
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  options.onSpawn?.(child.pid);
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }, options.timeoutMs ?? 240_000);
  let out: Deno.CommandOutput;
  try {
    out = await child.output();
  } finally {
    clearTimeout(timer);
  }
  const dec = new TextDecoder();
  const stdout = dec.decode(out.stdout);
  const stderr = dec.decode(out.stderr);
  // the line names the crossing (`<site>:<side>@<n>`); compare it with the armed point
  const firedAt = /^SLUICE_FAULT_FIRED (\S+)$/m.exec(stderr)?.[1] ?? null;
  const fired = firedAt && options.fault ? normalize(firedAt, options.fault) : firedAt;
  const signal = out.signal ?? null;
  const code = signal === "SIGKILL" ? 137 : out.code;
  let json: JsonEnvelope | null = null;
  try {
    const t = stdout.trim();
    if (t.startsWith("{")) json = JSON.parse(t) as JsonEnvelope;
  } catch {
    json = null;
  }
  return {
    args,
    fault: options.fault ?? null,
    code,
    signal,
    stdout,
    stderr,
    json,
    fired,
    killedAtFault: options.fault != null && signal === "SIGKILL" && fired === options.fault,
    startedAt: new Date(started).toISOString(),
    endedAt: new Date().toISOString(),
    ms: Date.now() - started,
  };
}

/** `a.b:after@1` for an armed `a.b:after` (the default occurrence is the first). */
function normalize(fired: string, armed: string): string {
  return /@\d+$/.test(armed) ? fired : fired.replace(/@1$/, "");
}
