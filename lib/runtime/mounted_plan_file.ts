/**
 * The host file a runner container bind-mounts as its plan: content-addressed (`<sha256>.json`
 * under the project's `.sluice/runtime/plans/`), written atomically and read-only, never
 * overwritten. Writing it is a persistence point, so it crosses the `runtime.mounted_plan.write`
 * fault site (both journeys write it before creating the container that mounts it).
 *
 * @example
 * ```ts
 * import { writeMountedPlanFile } from "./mounted_plan_file.ts";
 * import { sha256Hex } from "../artifact/canonical.ts";
 * const bytes = new TextEncoder().encode("{}");
 * console.log(await writeMountedPlanFile(await Deno.makeTempDir(), bytes, sha256Hex(bytes)));
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { atomicReplace } from "../fs/atomic_write.ts";
import { sha256Hex } from "../artifact/canonical.ts";
import { atSite } from "../fault/site.ts";
import { MOUNTED_PLAN_WRITE } from "../protocol/replacement.ts";

/**
 * The host path of the mounted plan file whose bytes hash to `sha256`, under `dir`.
 *
 * @example
 * ```ts
 * import { mountedPlanPath } from "./mounted_plan_file.ts";
 * console.log(mountedPlanPath("/p", "ab")); // /p/ab.json
 * ```
 */
export function mountedPlanPath(dir: string, sha256: string): string {
  return `${dir}/${sha256}.json`;
}

/**
 * Whether the mounted plan file of `sha256` is written under `dir` (read-only): present (its
 * bytes hash to its name), absent, or corrupt (they do not: `STATE_CORRUPT_MOUNTED_PLAN` when it
 * is written).
 *
 * @example
 * ```ts
 * import { mountedPlanFileState } from "./mounted_plan_file.ts";
 * console.log(await mountedPlanFileState(await Deno.makeTempDir(), "ab")); // absent
 * ```
 */
export async function mountedPlanFileState(
  dir: string,
  sha256: string,
): Promise<"present" | "absent" | "corrupt"> {
  try {
    const existing = await Deno.readFile(mountedPlanPath(dir, sha256));
    return sha256Hex(existing) === sha256 ? "present" : "corrupt";
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "absent";
    throw error;
  }
}

/**
 * Write a mounted plan file content-addressed under `dir`; an existing file must match its
 * name (`STATE_CORRUPT_MOUNTED_PLAN` otherwise) and is not written again. Returns its path.
 *
 * @example
 * ```ts
 * import { writeMountedPlanFile } from "./mounted_plan_file.ts";
 * // const path = await writeMountedPlanFile(plansDir, bytes, sha256);
 * ```
 */
export async function writeMountedPlanFile(
  dir: string,
  bytes: Uint8Array,
  sha256: string,
): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  const path = mountedPlanPath(dir, sha256);
  try {
    const existing = await Deno.readFile(path);
    if (sha256Hex(existing) !== sha256) {
      throw new SluiceError("STATE_CORRUPT_MOUNTED_PLAN", `${path} does not hash to its name`);
    }
    return path;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  await atSite(MOUNTED_PLAN_WRITE, () => atomicReplace(path, bytes, { mode: 0o444 }));
  return path;
}
