/**
 * One CLI worker: the installed launcher `bin/sluice` run as a separate OS process, optionally
 * with one fault point armed (`SLUICE_FAULT_POINT`). The result says how the process ended —
 * by exit code or by signal — and who ended it: the armed fault point (SIGKILL plus the
 * `SLUICE_FAULT_FIRED` line on stderr), the harness on purpose (`killAfterMs`, a seeded random
 * kill), or the harness's timeout (a failed run, never a fired fault).
 *
 * @example
 * ```ts
 * import { runWorker } from "./worker.ts";
 * const r = await runWorker(["-o", "json", "state", "show", "--project", "/tmp/p"]);
 * console.log(r.code, r.json);
 * ```
 * @module
 */

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
  /** True when the process died by SIGKILL at the armed fault point (not by a timeout). */
  killedAtFault: boolean;
  /** The process was killed because it outlived `timeoutMs`. */
  timedOut: boolean;
  /** Who ended the process by a signal: its own fault point, the harness on purpose, the timeout. */
  killedBy: "fault" | "harness" | "harness-timeout" | null;
  pid: number;
  /** The history's name for this process, when a journey names it. */
  process: string | null;
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
  /** `<boundary>:<before|after>`, armed for this process only. */
  fault?: string | null;
  /** Extra environment (e.g. the PostgreSQL DSN variable the manifest names). */
  env?: Record<string, string>;
  /** Kill the worker (SIGKILL) if it runs longer than this (default 240 s). */
  timeoutMs?: number;
  /** Called with the child's pid as soon as it is spawned. */
  onSpawn?: (pid: number) => void;
  /** Kill the worker with SIGKILL this long after it was spawned (a seeded random kill). */
  killAfterMs?: number;
}

/** Run `bin/sluice args...` to its end. */
export async function runWorker(
  args: string[],
  options: WorkerOptions = {},
): Promise<WorkerResult> {
  const env: Record<string, string> = { ...(options.env ?? {}), NO_COLOR: "1" };
  if (options.fault) {
    // the switch is honoured only with the test-only permission beside it (lib/fault/site.ts)
    env.SLUICE_FAULT_POINT = options.fault;
    env.SLUICE_TEST_ONLY_ALLOW_FAULTS = "1";
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
  let timedOut = false;
  let harnessKill = false;
  const kill = (why: "timeout" | "harness") => {
    try {
      child.kill("SIGKILL");
      if (why === "timeout") timedOut = true;
      else harnessKill = true;
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(() => kill("timeout"), options.timeoutMs ?? 240_000);
  const killer = options.killAfterMs !== undefined
    ? setTimeout(() => kill("harness"), options.killAfterMs)
    : undefined;
  let out: Deno.CommandOutput;
  try {
    out = await child.output();
  } finally {
    clearTimeout(timer);
    clearTimeout(killer);
  }
  const dec = new TextDecoder();
  const stdout = dec.decode(out.stdout);
  const stderr = dec.decode(out.stderr);
  const fired = /^SLUICE_FAULT_FIRED (\S+)$/m.exec(stderr)?.[1] ?? null;
  const signal = out.signal ?? null;
  const code = signal === "SIGKILL" ? 137 : out.code;
  // a kill racing the process's own exit: only a signal death is a kill
  const killedBy = signal === null
    ? null
    : timedOut
    ? "harness-timeout"
    : harnessKill
    ? "harness"
    : fired !== null
    ? "fault"
    : null;
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
    killedAtFault: options.fault != null && signal === "SIGKILL" && !timedOut &&
      fired !== null && (fired === options.fault || fired.startsWith(`${options.fault}@`)),
    timedOut: timedOut && signal !== null,
    killedBy,
    pid: child.pid,
    process: null,
    startedAt: new Date(started).toISOString(),
    endedAt: new Date().toISOString(),
    ms: Date.now() - started,
  };
}
