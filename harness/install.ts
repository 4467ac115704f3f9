/**
 * sluice installed the way docs/cli.md ("Install") tells a user: `deno install --global` from
 * this checkout into a temporary root, then run by name from `PATH` — for the tests of the
 * installed command.
 *
 * @example
 * ```ts
 * import { installSluice } from "./install.ts";
 * // await using installed = await installSluice();
 * // const r = await installed.run(["version"], "/tmp");
 * ```
 * @module
 */

const ROOT = new URL("..", import.meta.url).pathname;
const DENO_BIN = `${ROOT}tools/deno/node_modules/.bin`;

/** The permissions docs/cli.md documents for the installed command. */
export const INSTALL_PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-net",
  "--allow-run",
  "--allow-sys",
];

/** One run of a command: exit status and output. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** An installed sluice, removed on dispose. */
export interface Installed extends AsyncDisposable {
  /** The install root (`bin/sluice` is the shim). */
  root: string;
  /** The `PATH` that finds the installed `sluice` (and Deno) first. */
  path: string;
  /** Run `cmd` (default the installed `sluice`) in `cwd`, with `PATH` and `env`. */
  run(args: string[], cwd: string, env?: Record<string, string>, cmd?: string): Promise<Ran>;
}

/** `deno install --global` this checkout's CLI into a fresh root (throws if it fails). */
export async function installSluice(): Promise<Installed> {
  const root = await Deno.makeTempDir({ prefix: "sluice-install-" });
  const path = `${root}/bin:${DENO_BIN}:/usr/local/bin:/usr/bin:/bin`;
  const run = async (
    args: string[],
    cwd: string,
    env: Record<string, string> = {},
    cmd = "sluice",
  ): Promise<Ran> => {
    const out = await new Deno.Command(cmd, {
      args,
      cwd,
      env: { ...env, PATH: path },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  };
  const install = await run(
    [
      "install",
      "--global",
      "--root",
      root,
      "--config",
      `${ROOT}deno.json`,
      "--name",
      "sluice",
      ...INSTALL_PERMISSIONS,
      `${ROOT}cli/main.ts`,
    ],
    root,
    {},
    "deno",
  );
  if (install.code !== 0) {
    await Deno.remove(root, { recursive: true }).catch(() => {});
    throw new Error(`deno install failed (exit ${install.code}): ${install.stderr}`);
  }
  return {
    root,
    path,
    run,
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }).catch(() => {}),
  };
}
