/**
 * Checks of external application declarations against compiled models: every column a
 * declared downstream application reads must still be in the model's output with the same
 * type. A dropped or retyped column is a warning (an error under `--strict`). External
 * declarations are metadata only: nothing is observed or mutated.
 *
 * @example
 * ```ts
 * import { loadProject } from "./load.ts";
 * import { checkExternals } from "./externals.ts";
 * const project = await loadProject(".");
 * for (const w of checkExternals(project)) console.warn(w.message);
 * ```
 * @module
 */
import type { SluiceError } from "../errors.ts";
import { diagnostic } from "../expr/diagnostic.ts";
import type { Project } from "./load.ts";

/**
 * Findings for external declarations: `PROJECT_EXTERNAL_COLUMN_MISSING` (the model's output
 * no longer has the column) and `PROJECT_EXTERNAL_COLUMN_TYPE_CHANGED`.
 * @example
 * ```ts
 * const warnings = checkExternals(await loadProject("."));
 * ```
 */
export function checkExternals(project: Project): SluiceError[] {
  const findings: SluiceError[] = [];
  const source = project.manifest.source;
  for (const ext of project.manifest.externals) {
    const model = project.models.find((m) => m.name === ext.consumes);
    if (!model) continue; // reported as MANIFEST_UNKNOWN_MODEL when the manifest was read
    for (const column of ext.columns) {
      const output = model.outputSchema.find((f) => f.name === column.name);
      const evidence = {
        external: ext.name,
        model: model.name,
        column: column.name,
        expected_type: column.type,
        actual_type: output?.type ?? null,
      };
      if (!output) {
        findings.push(diagnostic(
          source,
          "PROJECT_EXTERNAL_COLUMN_MISSING",
          `external application '${ext.name}' reads column '${column.name}' (${column.type}), which model '${model.name}' no longer outputs; outputs: ${
            model.outputSchema.map((f) => f.name).join(", ")
          }`,
          column.span,
          evidence,
        ));
      } else if (output.type !== column.type) {
        findings.push(diagnostic(
          source,
          "PROJECT_EXTERNAL_COLUMN_TYPE_CHANGED",
          `external application '${ext.name}' reads column '${column.name}' as ${column.type}, but model '${model.name}' outputs it as ${output.type}`,
          column.span,
          evidence,
        ));
      }
    }
  }
  return findings;
}
