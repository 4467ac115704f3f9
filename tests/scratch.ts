/**
 * A user's place outside the checkout, for the tests that import the SDK (`mod.ts`) or its
 * environments (`testing.ts`) the way a user does: a scratch directory no Deno or npm
 * configuration applies to, and `deno` run there with no `--config`.
 * @module
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;
/** A script run, killed if it outlives this (a journey takes a minute or two). */
const SCRIPT_LIMIT_MS = 10 * 60_000;

/** A scratch directory no Deno or npm configuration applies to (none in it or above it). */
export async function scratchDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "sluice-import-" });
  assert.ok(!dir.startsWith(ROOT), `${dir} is inside the checkout`);
  for (let d = dir;; d = dirname(d)) {
    for (const name of ["deno.json", "deno.jsonc", "package.json"]) {
      const found = await Deno.stat(join(d, name)).then(() => true, () => false);
      assert.ok(!found, `${join(d, name)} would configure the scratch directory`);
    }
    if (dirname(d) === d) break;
  }
  return dir;
}

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  all: string;
}

/** `deno <args>` in `cwd`, as a user runs it: no --config, killed past the limit. */
export async function deno(args: string[], cwd: string): Promise<Ran> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(SCRIPT_LIMIT_MS),
  }).output();
  const dec = new TextDecoder();
  const r = { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  return { ...r, all: `exit ${r.code}\n${r.stdout}\n${r.stderr}` };
}
