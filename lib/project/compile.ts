/**
 * The compiler: a loaded project → one RunnerArtifact per model (docs/artifact-format.md),
 * each with its canonical JSON bytes and sha256. Pure and deterministic: the artifact holds
 * no path, time or host detail, so the same project gives the same bytes everywhere.
 *
 * @example
 * ```ts
 * import { loadProject } from "./load.ts";
 * import { compile } from "./compile.ts";
 * const result = compile(await loadProject("."));
 * for (const a of result.artifacts) console.log(a.model, a.sha256);
 * ```
 * @module
 */
import type { SluiceError } from "../errors.ts";
import { applicationId } from "../artifact/application_id.ts";
import { ARTIFACT_FORMAT, ARTIFACT_VERSION } from "../artifact/artifact.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { canonicalJson, sha256Hex } from "../artifact/canonical.ts";
import { checkExternals } from "./externals.ts";
import type { Project, ProjectModel } from "./load.ts";

/** One compiled model. */
export interface CompiledArtifact {
  model: string;
  artifact: RunnerArtifact;
  /** The canonical JSON bytes (as text): what is written and hashed. */
  canonical: string;
  /** sha256 hex of `canonical`: the artifact checksum. */
  sha256: string;
}

/** The result of compiling a project for one environment. */
export interface CompileResult {
  project: string;
  environment: string | null;
  /** One artifact per model, in manifest order. */
  artifacts: CompiledArtifact[];
  /** External-declaration findings (warnings; errors under `--strict`). */
  warnings: SluiceError[];
}

/**
 * Compile every model of a loaded project.
 *
 * @example
 * ```ts
 * const { artifacts, warnings } = compile(await loadProject("."));
 * for (const a of artifacts) console.log(a.model, a.artifact.application_id, a.sha256);
 * ```
 */
export function compile(project: Project): CompileResult {
  return {
    project: project.manifest.project,
    environment: project.manifest.environment,
    artifacts: project.models.map((m) => compileModel(project, m)),
    warnings: checkExternals(project),
  };
}

/** Compile one model into its artifact. */
export function compileModel(project: Project, model: ProjectModel): CompiledArtifact {
  const m = project.manifest;
  const artifact: RunnerArtifact = {
    format: ARTIFACT_FORMAT,
    version: ARTIFACT_VERSION,
    project: m.project,
    environment: m.environment,
    model: model.name,
    application_id: applicationId(m.project, m.environment, model.name),
    input: { topic: model.source.topic },
    output: { topic: model.decl.outputTopic },
    schema: model.source.schema.map((f) => ({ name: f.name, type: f.type, nullable: f.nullable })),
    projection: model.projection.map((p) => ({ source: p.source, name: p.name })),
    predicate: model.predicate,
    image: m.image,
    network: m.network,
    initial_offsets: m.initialOffsets,
    ownership: { managed_by: "sluice", project: m.project, environment: m.environment },
    // only when the model opts in: a model without on_invalid keeps its artifact bytes
    ...(model.decl.deadLetter
      ? { on_invalid: { policy: "dead_letter" as const, topic: model.decl.deadLetter.topic } }
      : {}),
  };
  const canonical = canonicalJson(artifact);
  return { model: model.name, artifact, canonical, sha256: sha256Hex(canonical) };
}
