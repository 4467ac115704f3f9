/**
 * `sluice runtime build [--check]`: build the fixed runner image (`buildRunnerImage`) and print
 * its immutable image ID (`sha256:...`). The build is skipped when an image built from the same
 * inputs exists, so running it twice gives the same ID.
 *
 * @example
 * ```sh
 * sluice runtime build            # sha256:3f1c...
 * sluice -o json runtime build    # {"ok":true,"command":"runtime build","data":{"image":"sha256:..."},...}
 * sluice runtime build --check    # exit 7 with ENV_RUNNER_IMAGE_MISSING when it must be built
 * ```
 * @module
 */
import type { Command } from "npm:commander@15.1.0";
import { buildRunnerImage } from "../../mod.ts";
import { outputFormat, printResult } from "../output.ts";

/** Adds `runtime build` to the program. */
export function register(program: Command): void {
  const runtime = program.command("runtime").description("the fixed runner image");
  runtime
    .command("build")
    .description("build the runner image (skipped when up to date) and print its image ID")
    .option("--check", "only check that the up-to-date image exists")
    .action(async (opts: { check?: boolean }, cmd: Command) => {
      const result = await buildRunnerImage({ check: opts.check === true });
      // the CLI's JSON as before SDK 0.2.0 renamed the field (`checked_only`): `checkedOnly`
      printResult(
        outputFormat(cmd),
        "runtime build",
        { image: result.image, checkedOnly: result.checked_only },
        () => result.image,
      );
    });
}
