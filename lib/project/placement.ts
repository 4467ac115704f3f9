/**
 * Where a model's instances run: `instances: N` of a model over the environment's Docker
 * endpoints (`docker.endpoints`, or its one daemon) under its placement rule
 * (docs/project-format.md, "Instances"). Pure data, decided once here: validation, the plan's
 * review and, later, the journeys read the same answer.
 *
 * - `spread` (the default): instance `i` on the `i`-th endpoint in declaration order, never two
 *   instances of one model on one daemon, so N may not exceed the endpoints.
 * - `shared`: instance `i` on endpoint `i mod E`, several per daemon allowed.
 *
 * Instance `i` keeps its endpoint when N grows or shrinks around it, so a scale change moves no
 * instance that stays.
 *
 * @example
 * ```ts
 * import { placeInstances } from "./placement.ts";
 * const p = placeInstances(3, { endpoints: ["east", "west"], rule: "shared" });
 * console.log(p); // [{instance: 0, endpoint: "east"}, {instance: 1, endpoint: "west"}, {instance: 2, endpoint: "east"}]
 * ```
 * @module
 */
import type { PlacementRule } from "./docker_security.ts";

/** At most this many instances of one model (a bound on what a project can ask for). */
export const MAX_INSTANCES = 32;

/** The endpoints instances are placed on and the rule; no endpoint names: the one daemon. */
export interface Placement {
  /** `docker.endpoints`' names in declaration order; empty for the environment's one daemon. */
  endpoints: string[];
  /** `docker.placement`. */
  rule: PlacementRule;
}

/** One instance and the endpoint it runs on (null: the environment's one daemon). */
export interface InstancePlacement {
  /** 0-based; instance 0 is the model's runner as a single-instance model has it. */
  instance: number;
  /** The `docker.endpoints` name, or null for the one daemon. */
  endpoint: string | null;
}

/**
 * How many instances of one model the placement can hold: the endpoints under `spread` (one for
 * the one daemon), any number (up to {@link MAX_INSTANCES}) under `shared`.
 *
 * @example
 * ```ts
 * import { placementCapacity } from "./placement.ts";
 * console.log(placementCapacity({ endpoints: [], rule: "spread" })); // 1
 * ```
 */
export function placementCapacity(placement: Placement): number {
  return placement.rule === "shared" ? MAX_INSTANCES : Math.max(1, placement.endpoints.length);
}

/**
 * Place `instances` instances, or null when the placement cannot hold them
 * ({@link placementCapacity}).
 *
 * @example
 * ```ts
 * import { placeInstances } from "./placement.ts";
 * console.log(placeInstances(2, { endpoints: ["a", "b"], rule: "spread" })?.map((p) => p.endpoint)); // ["a", "b"]
 * console.log(placeInstances(3, { endpoints: ["a", "b"], rule: "spread" })); // null
 * ```
 */
export function placeInstances(
  instances: number,
  placement: Placement,
): InstancePlacement[] | null {
  if (!Number.isInteger(instances) || instances < 1 || instances > placementCapacity(placement)) {
    return null;
  }
  const { endpoints } = placement;
  return Array.from({ length: instances }, (_, instance) => ({
    instance,
    endpoint: endpoints.length === 0 ? null : endpoints[instance % endpoints.length],
  }));
}
