/**
 * A model declared with `instances: N > 1` (docs/project-format.md, "Instances"): the project
 * format, validation and placement read it, but no journey runs a set of instances yet (issue
 * 31). Its plan is therefore blocked at that model with `BLOCKED_INSTANCES_UNSUPPORTED`, its
 * placement in the evidence, so apply never runs one runner where the project says several and
 * nothing is done. `instances: 1` (and its absence) plans exactly as before.
 *
 * @example
 * ```ts
 * import { instancesBlocker } from "./instances.ts";
 * const b = instancesBlocker("m", 2, { endpoints: ["east", "west"], rule: "spread" });
 * console.log(b?.code); // BLOCKED_INSTANCES_UNSUPPORTED
 * ```
 * @module
 */
import { placeInstances, type Placement } from "../project/placement.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";

/** The blocker of a model of `instances` instances under `placement`, or null for one instance. */
export function instancesBlocker(
  model: string,
  instances: number,
  placement: Placement,
): Blocker | null {
  if (instances === 1) return null;
  const placed = placeInstances(instances, placement) ?? [];
  const where = placed.map((p) => `${p.instance} on ${p.endpoint ?? "the one daemon"}`);
  return blocker(
    "BLOCKED_INSTANCES_UNSUPPORTED",
    `model ${model} declares ${instances} instances (${where.join(", ")}; placement ` +
      `${placement.rule}): running a model as several instances is not built yet, and apply never ` +
      "runs fewer runners than the project says; set instances: 1 (or remove it) to plan this model",
    {
      model,
      evidence: {
        instances,
        rule: placement.rule,
        placement: placed.map((p) => ({ instance: p.instance, endpoint: p.endpoint })),
      },
    },
  );
}
