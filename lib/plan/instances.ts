/**
 * A model declared with `instances: N > 1` (docs/project-format.md, "Instances"): the project
 * format, validation and placement read it, but no journey runs a set of instances yet (issue
 * 31). Its plan is therefore blocked at that model with `BLOCKED_INSTANCES_UNSUPPORTED`, its
 * placement in the evidence, so apply never runs one runner where the project says several and
 * nothing is done. `instances: 1` (and its absence) plans exactly as before.
 *
 * A plan that needs a daemon that does not answer says so too, naming it
 * (`BLOCKED_ENDPOINT_UNREACHABLE`, one per endpoint, with the instances placed there): a set is
 * never planned on what sluice could not read.
 *
 * @example
 * ```ts
 * import { instancesBlockers } from "./instances.ts";
 * const b = instancesBlockers("m", 2, { endpoints: ["east", "west"], rule: "spread" });
 * console.log(b.map((x) => x.code)); // [ "BLOCKED_INSTANCES_UNSUPPORTED" ]
 * ```
 * @module
 */
import { placeInstances, type Placement } from "../project/placement.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";

/** An instance of a set whose placed endpoint did not answer when the plan read it. */
export interface UnreachableInstance {
  instance: number;
  endpoint: string | null;
  /** The endpoint's error: its stable code and message. */
  problem: { code: string; message: string };
}

/**
 * The blockers of a model of `instances` instances under `placement` (none for one instance):
 * that sets are not run yet, and each endpoint of `unreachable` that did not answer.
 */
export function instancesBlockers(
  model: string,
  instances: number,
  placement: Placement,
  unreachable: readonly UnreachableInstance[] = [],
): Blocker[] {
  if (instances === 1) return [];
  const placed = placeInstances(instances, placement) ?? [];
  const where = placed.map((p) => `${p.instance} on ${p.endpoint ?? "the one daemon"}`);
  const byEndpoint = new Map<string | null, UnreachableInstance[]>();
  for (const u of unreachable) byEndpoint.set(u.endpoint, [...byEndpoint.get(u.endpoint) ?? [], u]);
  const missing = [...byEndpoint].map(([endpoint, us]) => {
    const name = endpoint ?? "the one daemon";
    const which = us.map((u) => u.instance);
    return blocker(
      "BLOCKED_ENDPOINT_UNREACHABLE",
      `model ${model}: instance${which.length === 1 ? "" : "s"} ${which.join(", ")} ` +
        `placed on ${name}, whose daemon does not answer (${us[0].problem.code}: ` +
        `${us[0].problem.message}); a set is never planned on a daemon sluice cannot read: ` +
        `bring it back${endpoint === null ? "" : ` (or correct docker.endpoints.${endpoint})`} ` +
        "and plan again",
      { model, evidence: { endpoint, instances: which, code: us[0].problem.code } },
    );
  });
  return [
    blocker(
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
    ),
    ...missing,
  ];
}
