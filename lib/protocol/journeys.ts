/**
 * The registry of journeys: every journey's {@link JourneyDescriptor}, in inventory order. What
 * needs to know the journeys reads them here and names none of them: the planner's mixing
 * rules ({@link planMixes}), the fault inventory (`inventory.ts`: each site with the commands
 * that cross it), the crash sweep's cases (`testing/sweep/cases.ts`), the state store's
 * admission of a day-two event beside a pending operation ({@link admitsDayTwo}), and the
 * router of `apply` (`lib/runtime/journeys.ts`), whose entries are keyed by each descriptor's
 * operation kind. Adding a journey is its table module with its descriptor, one entry here, and
 * its runtime module with its router entry.
 *
 * @example
 * ```ts
 * import { JOURNEY_DESCRIPTORS, journeyOfAction } from "./journeys.ts";
 * console.log(JOURNEY_DESCRIPTORS.map((j) => j.name).join(", "));
 * console.log(journeyOfAction("remove_runner")?.kind); // runner_removal
 * ```
 * @module
 */
import type { ErrorCode } from "../errors.ts";
import type {
  JourneyAction,
  JourneyDescriptor,
  PendingControl,
  RunnerBinding,
} from "./descriptor.ts";
import { REPLACEMENT_JOURNEY } from "./replacement.ts";
import { CREATE_JOURNEY } from "./create.ts";
import { OPERATOR_JOURNEY } from "./operator.ts";
import { CONNECTOR_JOURNEY } from "./connector.ts";
import { DAY_TWO_JOURNEY } from "./day_two.ts";
import { REMOVAL_JOURNEY } from "./removal.ts";
import { DESTROY_JOURNEY } from "./destroy.ts";

/** The registry, in the order the inventory lists their sites (the sweep's order too). */
const REGISTRY = [
  REPLACEMENT_JOURNEY,
  CREATE_JOURNEY,
  OPERATOR_JOURNEY,
  CONNECTOR_JOURNEY,
  DAY_TWO_JOURNEY,
  REMOVAL_JOURNEY,
  DESTROY_JOURNEY,
] as const;

/** The crossings a descriptor declares. */
type CrossingOf<D> = D extends JourneyDescriptor<string, infer By> ? By : never;

/**
 * A public command that crosses fault sites, as the inventory and the crash sweep name it: a
 * journey's own, or another command crossing its sites (`resume`: `state resume` of a
 * replacement).
 */
export type Journey = CrossingOf<(typeof REGISTRY)[number]>;

/**
 * Every journey, in inventory order.
 *
 * @example
 * ```ts
 * import { JOURNEY_DESCRIPTORS } from "./journeys.ts";
 * console.log(JOURNEY_DESCRIPTORS.flatMap((j) => j.crossings.map((c) => c.by)));
 * ```
 */
export const JOURNEY_DESCRIPTORS: readonly JourneyDescriptor<string, Journey>[] = REGISTRY;

/**
 * The journey a plan action belongs to (undefined: no journey carries out that type).
 *
 * @example
 * ```ts
 * import { journeyOfAction } from "./journeys.ts";
 * console.log(journeyOfAction("create_topic")?.name); // create
 * ```
 */
export function journeyOfAction(type: string): JourneyDescriptor<string, Journey> | undefined {
  return JOURNEY_DESCRIPTORS.find((j) => j.actions.includes(type));
}

/**
 * The journey whose intent records an operation kind (undefined: none).
 *
 * @example
 * ```ts
 * import { journeyOfKind } from "./journeys.ts";
 * console.log(journeyOfKind("connector_change")?.name); // connector
 * ```
 */
export function journeyOfKind(kind: string): JourneyDescriptor<string, Journey> | undefined {
  return JOURNEY_DESCRIPTORS.find((j) => j.kind !== null && j.kind === kind);
}

/** A mixing rule a plan breaks: the blocker the planner adds. */
export interface PlanMix {
  code: ErrorCode;
  message: string;
  evidence: Record<string, unknown>;
}

/**
 * The mixing rules a plan's actions break, in registry order and each journey's rule order:
 * for each journey with actions in the plan, each of its `alone` rules whose refused actions are
 * there too.
 *
 * @example
 * ```ts
 * import { planMixes } from "./journeys.ts";
 * planMixes([{ type: "remove_runner", model: "a" }, { type: "create_topic" }]);
 * // [{ code: "BLOCKED_REMOVAL_MIXED", message: "a runner removal (a) is applied on its own, …" }]
 * ```
 */
export function planMixes(actions: readonly JourneyAction[]): PlanMix[] {
  const out: PlanMix[] = [];
  const journeyOf = (a: JourneyAction) => journeyOfAction(a.type)?.name;
  for (const j of JOURNEY_DESCRIPTORS) {
    const own = actions.filter((a) => journeyOf(a) === j.name);
    if (own.length === 0) continue;
    // the journeys its other rules name: a `rest` rule leaves them to those rules
    const named = new Set(j.alone.flatMap((r) => (r.against === "rest" ? [] : r.against)));
    for (const rule of j.alone) {
      const refused = (a: JourneyAction) => {
        const of = journeyOf(a);
        if (of === j.name) return rule.ownOnce === true && a !== own[0];
        return rule.against === "rest"
          ? of === undefined || !named.has(of)
          : of !== undefined && rule.against.includes(of);
      };
      const others = actions.filter(refused);
      if (others.length === 0) continue;
      const involved = actions.filter((a) => journeyOf(a) === j.name || refused(a));
      const mix = { own, others, involved };
      out.push({
        code: rule.code,
        message: rule.message(mix),
        evidence: rule.evidence?.(mix) ?? {},
      });
    }
  }
  return out;
}

/**
 * Whether a pending operation lets a day-two command record an event about the runner of
 * `applicationId`: only when its journey admits it (a runner removal, for a runner it takes
 * down); any other pending operation refuses every day-two event.
 *
 * @example
 * ```ts
 * import { admitsDayTwo } from "./journeys.ts";
 * admitsDayTwo({ kind: "create", intent: { details: {} } }, "app"); // false
 * ```
 */
export function admitsDayTwo(control: PendingControl, applicationId: string): boolean {
  return dayTwoBinding(control, applicationId) !== null;
}

/**
 * The runner of `applicationId` as a pending operation binds it when its journey admits a
 * day-two command about it (its model and exact container: a runner removal's or a destroy's
 * runner); null when the operation's journey admits none.
 *
 * @example
 * ```ts
 * import { dayTwoBinding } from "./journeys.ts";
 * dayTwoBinding({ kind: "create", intent: { details: {} } }, "app"); // null
 * ```
 */
export function dayTwoBinding(
  control: PendingControl,
  applicationId: string,
): RunnerBinding | null {
  return journeyOfKind(control.kind)?.dayTwoBinding?.(control, applicationId) ?? null;
}
