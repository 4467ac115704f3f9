/**
 * The CLI runs from any directory without `--config` (issue 30 item 1): `deno run -A
 * <checkout>/cli/main.ts` in a scratch directory with no `deno.json` in it or above it parses its
 * arguments (commander is imported as `npm:commander@<version>`, `cli/imports_test.ts`) and
 * answers `--version` and `--help` — and `init` then `validate` on the project it wrote, which
 * read files only (no Docker, Kafka or state store).
 * @module
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { SLUICE_VERSION } from "../lib/version.ts";

const MAIN = new URL("./main.ts", import.meta.url).pathname;

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/**
 * Run the checkout's CLI in `cwd` with no configuration at all. Deno would find the checkout's
 * `deno.json` beside `cli/` by itself (its import map then resolves a bare `commander`), so
 * `--no-config` makes the run prove what an installed copy or a served checkout needs: that
 * nothing the CLI reaches resolves only through that import map.
 */
async function sluice(args: string[], cwd: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", "--no-lock", MAIN, ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("cli/main.ts runs by path from a scratch directory without --config", async () => {
  const work = await Deno.makeTempDir({ prefix: "sluice-anywhere-" });
  try {
    // no configuration in the scratch directory or above it: nothing maps a bare "commander"
    for (let dir = work; dir !== dirname(dir); dir = dirname(dir)) {
      for (const name of ["deno.json", "deno.jsonc", "package.json"]) {
        assert.equal(await exists(join(dir, name)), false, `${join(dir, name)} exists`);
      }
    }
    const version = await sluice(["--version"], work);
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout.trim(), SLUICE_VERSION);

    const help = await sluice(["--help"], work);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: sluice /);
    assert.match(help.stdout, /\bapply\b/);

    const init = await sluice(["init", "orders"], work);
    assert.equal(init.code, 0, init.stderr);
    const validate = await sluice(["validate"], join(work, "orders"));
    assert.equal(validate.code, 0, validate.stderr);
    assert.match(validate.stdout, /^ok: project orders/);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});
