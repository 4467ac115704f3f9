/**
 * A plan file carries review and evidence, not authority: before an apply of a generic plan
 * (format 5) does anything, every action it holds is derived again from the freshly compiled
 * project, and any difference is refused (`PLAN_ACTION_MISMATCH`, naming the action and the
 * field). Whoever can write a plan file — and re-seal it — cannot make apply create a runner the
 * project does not compile to, a topic it does not declare, a connector configuration it does
 * not hold, or remove a runner or connector it does not declare removed. (A reviewed replacement,
 * format 6, is checked the same way by its coordinator: its desired artifact must be the
 * compiled project's.)
 *
 * @example
 * ```ts
 * import { verifyPlanBindsProject } from "./bind.ts";
 * // verifyPlanBindsProject(plan, { project, compiled, connectors }); // throws PLAN_ACTION_MISMATCH
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { canonicalJson, sha256Hex } from "../artifact/canonical.ts";
import type { CompileResult } from "../project/compile.ts";
import type { CompiledConnector } from "../project/compile_connectors.ts";
import type { Project } from "../project/load.ts";
import { projectTopics } from "../project/topics.ts";
import type { Plan, PlannedAction } from "./plan.ts";
import { setPlacement, setsOpen } from "./instances.ts";

/** What the project says, freshly compiled. */
export interface ProjectTruth {
  project: Project;
  compiled: CompileResult;
  /** The compiled connectors (only read when the plan holds connector actions). */
  connectors: () => CompiledConnector[];
}

function mismatch(i: number | null, what: string, field: string, detail: string): SluiceError {
  const where = i === null ? what : `action ${i + 1} (${what})`;
  return new SluiceError(
    "PLAN_ACTION_MISMATCH",
    `${where}: ${field} ${detail}. A plan file carries review, not authority: apply does only what the project says — plan again ('sluice plan --out FILE')`,
    { evidence: { action_index: i, action: what, field } },
  );
}

/** The first top-level field where two artifacts differ (what a forgery changed). */
function differingField(a: unknown, b: unknown): string {
  const x = (a ?? {}) as Record<string, unknown>;
  const y = (b ?? {}) as Record<string, unknown>;
  for (const k of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort()) {
    if (canonicalJson(x[k] ?? null) !== canonicalJson(y[k] ?? null)) return k;
  }
  return "(none)";
}

function describe(a: PlannedAction): string {
  if (a.type === "destroy") return `destroy of ${a.runners.length} runner(s)`;
  return `${a.type} ${"topic" in a ? a.topic : "model" in a ? a.model : a.connector}`;
}

/**
 * Throw `PLAN_ACTION_MISMATCH` unless every action and artifact of a format-5 plan is what the
 * freshly compiled project derives (see the module docs). Pure: reads nothing but its input.
 *
 * @example
 * ```ts
 * import { verifyPlanBindsProject } from "./bind.ts";
 * // verifyPlanBindsProject(plan, truth);
 * ```
 */
export function verifyPlanBindsProject(plan: Plan, truth: ProjectTruth): void {
  const { project, compiled } = truth;
  if (plan.format !== 5 || plan.typed_action !== null) {
    throw mismatch(
      null,
      `a format-${plan.format} plan`,
      "its format",
      plan.typed_action !== null
        ? "is 5 but it carries a typed replacement (a reviewed format-6 plan relabelled)"
        : "is not a generic plan's (5)",
    );
  }
  const compiledOf = new Map(compiled.artifacts.map((a) => [a.model, a]));
  // the artifacts the plan carries (what a created runner mounts) are the compiled project's
  for (const a of plan.artifacts) {
    const c = compiledOf.get(a.model);
    const what = `artifact of model ${a.model}`;
    if (!c) throw mismatch(null, what, "its model", "is not a model of the project");
    if (sha256Hex(canonicalJson(a.artifact)) !== a.sha256 || a.sha256 !== c.sha256) {
      throw mismatch(
        null,
        what,
        `its field '${differingField(a.artifact, c.artifact)}'`,
        "is not the compiled project's",
      );
    }
  }
  const topics = projectTopics(project).filter((t) => t.role !== "external");
  const removals = new Set(project.manifest.runnerRemovals.map((r) => r.model));
  const declaredModels = new Set(project.models.map((m) => m.name));
  let connectors: CompiledConnector[] | null = null;
  const connectorOf = (name: string) =>
    (connectors ??= truth.connectors()).find((c) => c.connector === name);
  plan.actions.forEach((a, i) => {
    const what = describe(a);
    switch (a.type) {
      case "create_topic": {
        const t = topics.find((x) => x.topic === a.topic);
        if (!t) throw mismatch(i, what, "its topic", "is not a topic the project creates");
        if (t.role !== a.role) throw mismatch(i, what, "its role", `is not '${t.role}'`);
        if (t.partitions !== a.partitions) {
          throw mismatch(i, what, "its partitions", `are not the declared ${t.partitions}`);
        }
        return;
      }
      case "create_runner": {
        const c = compiledOf.get(a.model);
        if (!c) throw mismatch(i, what, "its model", "is not a model of the project");
        if (a.application_id !== c.artifact.application_id) {
          throw mismatch(i, what, "its application ID", "is not the compiled project's");
        }
        if (a.artifact_sha256 !== c.sha256) {
          throw mismatch(i, what, "its artifact checksum", "is not the compiled project's");
        }
        if (!plan.artifacts.some((x) => x.model === a.model)) {
          throw mismatch(i, what, "its artifact", "is missing from the plan");
        }
        // a set is created exactly where the project places it, and only where sets are open
        const decl = project.models.find((m) => m.name === a.model)?.decl;
        const placed = setPlacement(decl?.instances ?? 1, project.manifest.placement);
        const where = a.instances?.map((x) => ({ instance: x.instance, endpoint: x.endpoint }));
        if (canonicalJson(where ?? null) !== canonicalJson(placed)) {
          throw mismatch(i, what, "its instances", "are not the project's placement");
        }
        if (placed !== null && !setsOpen()) {
          throw mismatch(i, what, "its instances", "create a set, which no plan offers yet");
        }
        return;
      }
      case "remove_runner":
        if (a.instances && !setsOpen()) {
          throw mismatch(i, what, "its instances", "take a set down, which no plan offers yet");
        }
        if (!removals.has(a.model) || declaredModels.has(a.model)) {
          throw mismatch(
            i,
            what,
            "its model",
            "is not declared in lifecycle.runner_removals (or is still declared under models)",
          );
        }
        return;
      case "destroy":
        // a destroy takes down what the state owns, not what the project declares: its apply
        // checks each bound runner against ownership exactly (lib/runtime/destroy.ts)
        if (a.runners.some((r) => r.instances) && !setsOpen()) {
          throw mismatch(i, what, "its runners", "take a set down, which no plan offers yet");
        }
        return;
      case "create_connector":
      case "update_connector": {
        const c = connectorOf(a.connector);
        if (!c) throw mismatch(i, what, "its connector", "is not declared by the project");
        if (a.artifact_sha256 !== c.sha256) {
          const planned = plan.connectors?.artifacts?.find((x) => x.connector === a.connector);
          throw mismatch(
            i,
            what,
            planned
              ? `its field '${differingField(planned.artifact, c.artifact)}'`
              : "its artifact",
            "is not the compiled project's",
          );
        }
        return;
      }
      case "remove_connector":
      case "release_connector": {
        const r = project.manifest.connectorRemovals.find((x) =>
          x.logicalName === a.connector && x.environment === project.manifest.environment
        );
        if (!r || r.connector !== a.name || r.cluster !== a.cluster) {
          throw mismatch(
            i,
            what,
            "its connector",
            "is not declared in lifecycle.connector_removals with that name and cluster",
          );
        }
        return;
      }
      default:
        // a typed runner update belongs to a reviewed format-6 plan and its coordinator
        throw mismatch(i, what, "its type", "is not an action of a generic (format-5) plan");
    }
  });
}
