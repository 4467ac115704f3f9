/**
 * The project source hash a plan is sealed with: sha256 over the canonical JSON of the
 * manifest's text, every SQL model's text, by file name, and the settings override given in code
 * (`openProject({ settings })`) when there is one. Any edit to sluice.yaml or a model, and any
 * other override (or none instead of one), makes an earlier plan stale (`PLAN_STALE_SOURCE`).
 *
 * @example
 * ```ts
 * import { projectSourceSha256 } from "./source_hash.ts";
 * // projectSourceSha256(await loadProject("."))
 * ```
 * @module
 */
import { canonicalSha256 } from "../artifact/canonical.ts";
import type { Project } from "../project/load.ts";

/** sha256 of the manifest and SQL sources of a loaded project. */
export function projectSourceSha256(project: Project): string {
  const models: Record<string, string> = {};
  for (const m of project.models) models[m.sqlFile] = m.sqlText;
  return canonicalSha256({
    environment: project.manifest.environment,
    manifest: project.manifest.source.text,
    models,
    // bound only when given: a project without one hashes as it always did
    ...(project.manifest.override ? { settings: project.manifest.override.canonical } : {}),
  });
}
