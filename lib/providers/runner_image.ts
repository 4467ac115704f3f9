/**
 * The fixed runner image: {@link buildRunnerImage} builds it with `runner/build.sh` and returns
 * its immutable image ID (`sha256:...`), the value a manifest's `image:` takes. The build is
 * skipped when an image built from the same inputs exists (label `sluice.inputs`), so building
 * twice gives the same ID; `check: true` only checks that the up-to-date image exists.
 *
 * @example
 * ```ts
 * import { buildRunnerImage } from "./runner_image.ts";
 * const { image } = await buildRunnerImage({ check: true });
 * console.log(image); // sha256:...
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";

/** The runner image that was built or found. */
export interface RunnerImageResult {
  /** The runner image's immutable ID, `sha256:<64 hex>`. */
  image: string;
  /** True when only checked (`--check`), not built. */
  checked_only: boolean;
}

const BUILD_SCRIPT = new URL("../../runner/build.sh", import.meta.url);

/**
 * Build the runner image (or only check it, `check: true`) and return its image ID. Fails with
 * `ENV_RUNNER_IMAGE_MISSING` (check mode) or `ENV_RUNNER_BUILD_FAILED` (exit 7).
 *
 * @example
 * ```ts
 * import { buildRunnerImage } from "./runner_image.ts";
 * const built = await buildRunnerImage(); // builds unless an image of the same inputs exists
 * console.log(built.image, built.checked_only); // sha256:... false
 * ```
 */
export async function buildRunnerImage(
  options: {
    /** Only check that the up-to-date image exists; build nothing. */
    check?: boolean;
  } = {},
): Promise<RunnerImageResult> {
  const check = options.check === true;
  if (BUILD_SCRIPT.protocol !== "file:") {
    // the build needs the runner's sources and Maven on disk: an SDK imported by http:// has none
    throw new SluiceError(
      check ? "ENV_RUNNER_IMAGE_MISSING" : "ENV_RUNNER_BUILD_FAILED",
      `the runner image is built from a sluice checkout on disk (runner/build.sh); this SDK was ` +
        `imported from ${BUILD_SCRIPT.origin}: run 'sluice runtime build' in a checkout (or ` +
        `import mod.ts from one by file:// URL) and put the image ID it prints in sluice.yaml's image:`,
    );
  }
  const out = await new Deno.Command("bash", {
    args: check ? [BUILD_SCRIPT.pathname, "--check"] : [BUILD_SCRIPT.pathname],
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
  return { image: stdout, checked_only: check };
}

/** Options of {@link buildRunnerImage}. */
export type RunnerImageOptions = NonNullable<Parameters<typeof buildRunnerImage>[0]>;
