/**
 * sluice's own version, and the versions this checkout pins in `scripts/versions.sh` (the one
 * place they are written: bootstrap, images, harness and `sluice version` read them there).
 *
 * @example
 * ```ts
 * import { pinnedVersions, SLUICE_VERSION } from "./version.ts";
 * console.log(SLUICE_VERSION, pinnedVersions().KAFKA_VERSION);
 * ```
 * @module
 */
// imported, not read from disk: an SDK imported by http:// URL has no checkout to read from
import VERSIONS_SH from "../scripts/versions.sh" with { type: "text" };

/**
 * sluice's own version, printed by `sluice --version` and recorded in evidence files.
 *
 * @example
 * ```ts
 * import { SLUICE_VERSION } from "./version.ts";
 * console.log(SLUICE_VERSION); // 0.2.0
 * ```
 */
export const SLUICE_VERSION = "0.2.0";

/**
 * The `NAME=value` pins of `scripts/versions.sh` (values that expand a variable, such as a
 * mirror with a default, are left out).
 *
 * @example
 * ```ts
 * import { pinnedVersions } from "./version.ts";
 * console.log(pinnedVersions().KAFKA_IMAGE); // sluice/kafka:4.1.2
 * ```
 */
export function pinnedVersions(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of VERSIONS_SH.split("\n")) {
    const m = /^([A-Z_]+)=([^$\s]+)\s*$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}
