/**
 * What a journey is, as data: its {@link JourneyDescriptor}. Each table module declares its
 * journey's descriptor beside its rows (`REMOVAL_JOURNEY` in `removal.ts`, …) and the registry
 * (`journeys.ts`) lists them; the planner's mixing rules, the fault inventory, the crash sweep's
 * cases and the state store's day-two admission read the registry, never a journey by name.
 *
 * @example
 * ```ts
 * import type { JourneyDescriptor } from "./descriptor.ts";
 * const ANNOTATE: JourneyDescriptor<"annotate"> = {
 *   name: "annotate",
 *   kind: "annotation",
 *   actions: ["annotate_runner"],
 *   crossings: [{
 *     by: "annotate",
 *     command: "sluice apply --plan FILE",
 *     sites: () => [],
 *     transitions: ["begin", "commit_ownership"],
 *     locks: true,
 *   }],
 *   alone: [],
 * };
 * console.log(ANNOTATE.actions);
 * ```
 * @module
 */
import type { ErrorCode } from "../errors.ts";
import type { FaultSite } from "../fault/site.ts";
import type { StateTransition } from "./state_sites.ts";

/** What the registry reads of a plan's action: its type and what names it in a message. */
export interface JourneyAction {
  readonly type: string;
  /** The model it concerns (runner actions). */
  readonly model?: string;
  /** The exact name on the Connect cluster (connector actions). */
  readonly name?: string;
}

/** The actions one mixing rule looks at, each list in plan order. */
export interface Mix {
  /** The actions of the journey that declares the rule. */
  readonly own: readonly JourneyAction[];
  /** The actions that may not share its plan (a second one of its own too, for `ownOnce`). */
  readonly others: readonly JourneyAction[];
  /** Both, in plan order. */
  readonly involved: readonly JourneyAction[];
}

/**
 * One reason a journey's actions are applied without some others: a plan that holds both gets
 * the rule's blocker.
 */
export interface MixRule {
  /** The blocker's code. */
  readonly code: ErrorCode;
  /**
   * The journeys whose actions it refuses beside its own; `rest`: every journey's (a journey
   * added later included) but its own and those another rule of the same descriptor names.
   */
  readonly against: readonly string[] | "rest";
  /** Whether a second action of its own journey is refused too (at most one per plan). */
  readonly ownOnce?: boolean;
  /** The blocker's message. */
  readonly message: (mix: Mix) => string;
  /** The blocker's evidence (none: empty). */
  readonly evidence?: (mix: Mix) => Record<string, unknown>;
}

/**
 * One public command that crosses a journey's sites, and the state layer's writes and lock
 * operations it crosses: the fault inventory lists each site with the crossings that cross it.
 */
export interface Crossing<By extends string = string> {
  /** How the inventory and the crash sweep name it (the sweep arms this command at the site). */
  readonly by: By;
  /** The public command. */
  readonly command: string;
  /** Its own sites, in the order it crosses them. */
  readonly sites: () => readonly FaultSite[];
  /** The state transitions whose writes it crosses. */
  readonly transitions: readonly StateTransition[];
  /** Whether it takes and releases the deployment lock. */
  readonly locks: boolean;
  /** Whether it is the command that breaks a stale local lock left by a killed worker. */
  readonly breaksStaleLock?: boolean;
}

/** What a pending operation's intent binds of one runner it takes down: its model and exact container. */
export interface RunnerBinding {
  /** The model. */
  model: string;
  /** Its application ID. */
  application_id: string;
  /** The exact container the operation stops and removes. */
  container_id: string;
}

/** What a pending operation's control shows the registry: its kind and its intent's details. */
export interface PendingControl {
  readonly kind: string;
  readonly intent: { readonly details: { readonly [key: string]: unknown } };
}

/** One journey, as data. */
export interface JourneyDescriptor<Name extends string = string, By extends string = Name> {
  /** Its name. */
  readonly name: Name;
  /**
   * The operation kind its intent records in the journal; null when it opens no operation of
   * its own (a day-two command, an operator's decision about another's).
   */
  readonly kind: string | null;
  /** The plan action types it carries out (a plan action belongs to exactly one journey). */
  readonly actions: readonly string[];
  /** The public commands that cross its sites, in inventory order. */
  readonly crossings: readonly Crossing<By>[];
  /** Why its actions are applied alone (none: it mixes with any other journey's). */
  readonly alone: readonly MixRule[];
  /**
   * The runner of `applicationId` as its pending operation binds it, when a day-two command may
   * act on that runner (and record its event) while the operation is pending; null, or absent:
   * never — a pending operation refuses every day-two event.
   */
  readonly dayTwoBinding?: (
    control: PendingControl,
    applicationId: string,
  ) => RunnerBinding | null;
}

/** A journey that opens an operation of its own (its intent records `kind`). */
export type OperationJourney<Name extends string = string, By extends string = Name> =
  & JourneyDescriptor<Name, By>
  & { readonly kind: string };
