/**
 * Loading a project: read `sluice.yaml`, apply the chosen environment, read and check every
 * SQL model against its source. Nothing outside the project directory is contacted.
 *
 * @example
 * ```ts
 * import { loadProject } from "./load.ts";
 * const project = await loadProject("examples/orders");
 * console.log(project.manifest.project, project.models.map((m) => m.name));
 * ```
 * @module
 */
import { isAbsolute, normalize, resolve, sep } from "node:path";
import { SluiceError } from "../errors.ts";
import { diagnostic, SourceFile } from "../expr/diagnostic.ts";
import type { SchemaField } from "../expr/schema.ts";
import { combineErrors, readManifest } from "./manifest.ts";
import type { Manifest, ModelDecl, SourceDecl } from "./manifest.ts";
import { checkModelSql } from "./model.ts";
import { diskFiles, type ProjectFiles } from "./files.ts";
import type { SettingsOverride } from "./settings_override.ts";

export type { ProjectFiles } from "./files.ts";
import type { CheckedModel } from "./model.ts";

/** The manifest file name. */
export const MANIFEST_FILE = "sluice.yaml";

/** A model with its SQL checked against its source. */
export interface ProjectModel extends CheckedModel {
  name: string;
  decl: ModelDecl;
  /** The SQL file as named in diagnostics. */
  sqlFile: string;
  sqlText: string;
  /** The declared source named in FROM. */
  source: SourceDecl;
  /** Output partitions (the manifest's, or the managed source's). */
  outputPartitions: number;
}

/** A loaded, valid project for one environment. */
export interface Project {
  /** Absolute project directory. */
  dir: string;
  manifest: Manifest;
  models: ProjectModel[];
}

/** Options of {@link loadProject}. */
export interface LoadOptions {
  /** The environment to load (required when the manifest declares environments). */
  environment?: string | null;
  /**
   * Where the project's files come from (default: the directory on disk). The Git base/head
   * comparison reads them from a revision's objects instead.
   */
  files?: ProjectFiles;
  /**
   * A typed override of the environment's settings (configuration in code), layered over the
   * manifest's values for the chosen environment (`lib/project/settings_override.ts`).
   */
  settings?: SettingsOverride;
}

/**
 * Load and validate a project. Throws the single error found, or `PROJECT_INVALID` with
 * `evidence.diagnostics` when there are several; `PROJECT_NOT_FOUND` without `sluice.yaml`.
 * @example
 * ```ts
 * const project = await loadProject("examples/orders", { environment: null });
 * console.log(project.models.map((m) => m.name));
 * ```
 */
export async function loadProject(dir = ".", options: LoadOptions = {}): Promise<Project> {
  const result = await readProject(dir, options);
  if (result.project) return result.project;
  throw combineErrors(result.errors, "PROJECT_INVALID");
}

/** Like {@link loadProject} but returns every error instead of throwing. */
export async function readProject(
  dir = ".",
  options: LoadOptions = {},
): Promise<{ project: Project | null; errors: SluiceError[] }> {
  const files = options.files ?? diskFiles(dir);
  const manifestPath = files.name(MANIFEST_FILE);
  let text: string | null;
  try {
    text = await files.read(MANIFEST_FILE);
  } catch (e) {
    // a refused input (a link, a FIFO, too large): its code, never its content
    if (e instanceof SluiceError) return { project: null, errors: [e] };
    throw e;
  }
  if (text === null) {
    return {
      project: null,
      errors: [
        new SluiceError(
          "PROJECT_NOT_FOUND",
          `${manifestPath} not found: ${
            files.noProject ?? "not a sluice project (create one with 'sluice init')"
          }`,
          { evidence: { path: manifestPath } },
        ),
      ],
    };
  }
  const { manifest, errors } = readManifest(text, manifestPath, options);
  if (!manifest) return { project: null, errors };
  const schemas = new Map<string, readonly SchemaField[]>(
    manifest.sources.map((s) => [s.name, s.schema]),
  );
  const models: ProjectModel[] = [];
  for (const decl of manifest.models) {
    const relative = normalize(decl.sql);
    if (isAbsolute(relative) || relative.startsWith("..")) {
      errors.push(
        diagnostic(
          manifest.source,
          "MANIFEST_INVALID_VALUE",
          `models.${decl.name}.sql must stay inside the project directory, found '${decl.sql}'`,
          decl.sqlSpan,
        ),
      );
      continue;
    }
    const sqlFile = files.name(relative);
    let sqlText: string | null;
    try {
      sqlText = await files.read(relative.split(sep).join("/"));
    } catch (e) {
      if (e instanceof SluiceError) { // e.g. a symlink read from a Git revision
        errors.push(e);
        continue;
      }
      sqlText = null;
    }
    if (sqlText === null) {
      errors.push(
        diagnostic(
          manifest.source,
          "PROJECT_MODEL_NOT_FOUND",
          `model '${decl.name}': SQL file ${sqlFile} cannot be read`,
          decl.sqlSpan,
          { path: sqlFile },
        ),
      );
      continue;
    }
    let checked: CheckedModel;
    try {
      checked = checkModelSql(new SourceFile(sqlFile, sqlText), schemas);
    } catch (e) {
      if (e instanceof SluiceError) {
        errors.push(e);
        continue;
      }
      throw e;
    }
    const source = manifest.sources.find((s) => s.name === checked.from)!;
    const outputPartitions = decl.outputPartitions ?? source.partitions;
    if (outputPartitions === null) {
      errors.push(
        diagnostic(
          manifest.source,
          "MANIFEST_MISSING_KEY",
          `models.${decl.name}.output is missing 'partitions' (required when the source '${source.name}' is external)`,
          decl.outputSpan,
          { key: "partitions" },
        ),
      );
      continue;
    }
    models.push({
      ...checked,
      name: decl.name,
      decl,
      sqlFile,
      sqlText,
      source,
      outputPartitions,
    });
  }
  if (errors.length > 0) return { project: null, errors };
  return { project: { dir: resolve(dir), manifest, models }, errors: [] };
}
