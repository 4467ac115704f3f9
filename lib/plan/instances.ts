/**
 * A model declared with `instances: N > 1` (docs/project-format.md, "Instances"): the project
 * format, validation and placement read it, and the create, removal and destroy journeys run a
 * set, but no journey replaces one yet (issue 31). Its plan is therefore blocked at that model with
 * `BLOCKED_INSTANCES_UNSUPPORTED`, its placement in the evidence, so apply never runs one runner
 * where the project says several and nothing is done — unless sets are open to create
 * ({@link setsOpen}, tests only), when a new set's plan creates each instance where
 * {@link setPlacement} places it (and an owned set's plan is read by `./owned_set.ts`).
 * `instances: 1` (and its absence) plans exactly as before.
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
 * each endpoint of `unreachable` that did not answer, and, unless the plan may create this set
 * (`creatable`: {@link setsOpen}, and nothing of the model is owned or kept), that sets are
 * not run yet.
 */
export function instancesBlockers(
  model: string,
  instances: number,
  placement: Placement,
  unreachable: readonly UnreachableInstance[] = [],
  creatable = false,
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
  if (creatable) return missing;
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

/** The environment variable that opens the set journeys to plans and applies (tests only). */
export const SETS_GATE = "SLUICE_TEST_ONLY_SETS";

/**
 * Whether the set journeys are open (issue 31): a plan may create a set, or take an owned one
 * down (a declared removal, a destroy), and apply may carry it out — only where
 * `SLUICE_TEST_ONLY_SETS=1` is set, until a set can also be replaced and its day-two commands
 * run. The create, removal and destroy journeys run a set (each instance its own rows on its
 * endpoint), but a job whose predicate cannot be replaced is not what sluice offers, so no plan
 * offers a set to a user yet. The one rule, read by the planner and by apply's check that a plan
 * does what the project says.
 *
 * @example
 * ```ts
 * import { setsOpen } from "./instances.ts";
 * console.log(setsOpen({ get: () => undefined })); // false
 * ```
 */
export function setsOpen(
  env: { get(name: string): string | undefined } = Deno.env,
): boolean {
  try {
    return env.get(SETS_GATE) === "1";
  } catch {
    // no environment permission: closed
    return false;
  }
}

/**
 * The placement a plan's create of a set records (each instance's endpoint), null for a model
 * of one instance: what the create's identities are made from and what apply checks against the
 * project.
 *
 * @example
 * ```ts
 * import { setPlacement } from "./instances.ts";
 * setPlacement(2, { endpoints: ["east", "west"], rule: "spread" });
 * // [{ instance: 0, endpoint: "east" }, { instance: 1, endpoint: "west" }]
 * ```
 */
export function setPlacement(
  instances: number,
  placement: Placement,
): Array<{ instance: number; endpoint: string | null }> | null {
  if (instances === 1) return null;
  return (placeInstances(instances, placement) ?? []).map((p) => ({
    instance: p.instance,
    endpoint: p.endpoint,
  }));
}
