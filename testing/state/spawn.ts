/**
 * Run `state_worker.ts` as a separate OS process (test support).
 * @module
 */
import { fileURLToPath } from "node:url";

const WORKER = fileURLToPath(new URL("./state_worker.ts", import.meta.url));

/** The outcome of a worker process. */
export interface WorkerResult {
  code: number;
  signal: Deno.Signal | null;
  lines: Record<string, unknown>[];
  stderr: string;
}

/** Spawn the worker and wait for it. */
export async function runWorker(
  mode: string,
  config: unknown,
  arg: unknown = {},
  env: Record<string, string> = {},
): Promise<WorkerResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", WORKER, mode, JSON.stringify(config), JSON.stringify(arg)],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  return {
    code: out.code,
    signal: out.signal,
    lines: text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)),
    stderr: new TextDecoder().decode(out.stderr),
  };
}
