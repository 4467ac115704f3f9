/**
 * `sluice runtime build [--check]`: build the fixed runner image with `runner/build.sh` and print
 * its immutable image ID (`sha256:...`). The build is skipped when an image built from the same
 * inputs exists (label `sluice.inputs`), so running it twice gives the same ID.
 *
 * @example
 * ```sh
 * sluice runtime build            # sha256:3f1c...
 * sluice -o json runtime build    # {"ok":true,"command":"runtime build","data":{"image":"sha256:..."},...}
 * sluice runtime build --check    # exit 7 with ENV_RUNNER_IMAGE_MISSING when it must be built
 * ```
 * @module
 */
import type { Command } from "commander";
import { SluiceError } from "../../lib/errors.ts";
import { outputFormat } from "../main.ts";
import { printResult } from "../output.ts";

/** What `runtime build` reports. */
export interface RuntimeBuildResult {
  /** The runner image's immutable ID, `sha256:<64 hex>`. */
  image: string;
  /** True when only checked (`--check`), not built. */
  checkedOnly: boolean;
}

const BUILD_SCRIPT = new URL("../../runner/build.sh", import.meta.url).pathname;

/**
 * Run runner/build.sh (or `--check`) and return the image ID. Fails with
 * `ENV_RUNNER_IMAGE_MISSING` (check mode) or `ENV_RUNNER_BUILD_FAILED`.
 */
export async function buildRunnerImage(check = false): Promise<RuntimeBuildResult> {
  const out = await new Deno.Command("bash", {
    args: check ? [BUILD_SCRIPT, "--check"] : [BUILD_SCRIPT],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  const stdout = dec.decode(out.stdout).trim();
  const stderr = dec.decode(out.stderr).trim();
  if (out.code !== 0) {
    if (check) {
      throw new SluiceError("ENV_RUNNER_IMAGE_MISSING", stdout || stderr || "runner image missing");
    }
    throw new SluiceError(
      "ENV_RUNNER_BUILD_FAILED",
      `runner/build.sh exited with ${out.code}: ${
        (stdout + "\n" + stderr).trim().split("\n").slice(-15).join("\n")
      }`,
    );
  }
  if (!/^sha256:[0-9a-f]{64}$/.test(stdout)) {
    throw new SluiceError(
      "ENV_RUNNER_BUILD_FAILED",
      `runner/build.sh printed '${stdout}' instead of an image ID`,
    );
  }
  return { image: stdout, checkedOnly: check };
}

/** Adds `runtime build` to the program. */
export function register(program: Command): void {
  const runtime = program.command("runtime").description("the fixed runner image");
  runtime
    .command("build")
    .description("build the runner image (skipped when up to date) and print its image ID")
    .option("--check", "only check that the up-to-date image exists")
    .action(async (opts: { check?: boolean }, cmd: Command) => {
      const result = await buildRunnerImage(opts.check === true);
      printResult(
        outputFormat(cmd),
        "runtime build",
        result,
        (d) => (d as RuntimeBuildResult).image,
      );
    });
}
