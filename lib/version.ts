/**
 * sluice's own version, printed by `sluice --version` and recorded in evidence files.
 *
 * @example
 * ```ts
 * import { SLUICE_VERSION } from "./version.ts";
 * console.log(SLUICE_VERSION); // 0.1.0
 * ```
 */
export const SLUICE_VERSION = "0.1.0";
