/**
 * sluice: deploy Kafka Streams SQL jobs as Docker containers and replace their filter
 * predicate without losing the application ID, the state volume or committed offsets.
 *
 * @example
 * ```ts
 * import { SLUICE_VERSION } from "./mod.ts";
 * console.log(SLUICE_VERSION);
 * ```
 * @module
 */
export { SLUICE_VERSION } from "./lib/version.ts";
export { EXIT, exitCodeFor, SluiceError } from "./lib/errors.ts";
export type { SourceLocation } from "./lib/errors.ts";
