/**
 * The fault inventory: every fault site of sluice, composed from the journey registry
 * (`journeys.ts`): each journey's crossings — the public commands that cross its table's sites,
 * the state layer's writes of the transitions they make, and the lock operations — then the
 * check that every site the state layer declares is composed. Nothing is registered by importing
 * a module: a site is in the inventory because a journey's table lists it.
 *
 * Each entry names the commands that cross the site (the registry's crossings, in registry
 * order), so a harness knows which command to arm: `replacement` (`apply --plan` of a reviewed
 * plan), `resume` (`state resume` only), `create` (`apply --plan` of a create plan), `operator`
 * (`state accept-retention-loss`, `state abandon`), `connector` and `removal` (`apply --plan` of
 * such a plan, continued by the same `apply --plan` again), `day_two` (`restart` and
 * `skip-record` on a stopped runner, finished by the same command again). `deno task probes
 * --list` prints {@link formatInventory}; entry points refuse a fault switch naming anything
 * else ({@link guardInventorySwitch}).
 *
 * @example
 * ```ts
 * import { faultInventory } from "./inventory.ts";
 * for (const e of faultInventory()) console.log(e.site.name, e.journeys.join(","), e.location);
 * ```
 * @module
 */
import { type FaultSite, guardFaultSwitch, siteLocation } from "../fault/site.ts";
import { REPLACEMENT_SITES } from "./replacement.ts";
import { OPERATOR_SITES } from "./operator.ts";
import { type Journey, JOURNEY_DESCRIPTORS } from "./journeys.ts";
import {
  LOCAL_WRITE_ORDER,
  localWriteSites,
  lockOperationSite,
  pgCommitSite,
  STATE_SITES,
  STATE_TRANSITIONS,
  type StateTransition,
} from "./state_sites.ts";

export type { Journey } from "./journeys.ts";

/** One site of the inventory. */
export interface InventoryEntry {
  site: FaultSite;
  /** The journeys that cross it, the one to arm first. */
  journeys: readonly Journey[];
  /** Where it is declared, relative to the repository root. */
  location: string;
}

/** The state layer's sites of one transition: each local write's steps, then the commit. */
function transitionSites(t: StateTransition): FaultSite[] {
  return [
    ...LOCAL_WRITE_ORDER[t].flatMap((w) => Object.values(localWriteSites(t, w.file, w.kind))),
    pgCommitSite(t),
  ];
}

/** Every crossing of the registry, in registry order. */
function crossings() {
  return JOURNEY_DESCRIPTORS.flatMap((j) => j.crossings);
}

/**
 * The state layer's sites (lib/protocol/state_sites.ts), each with the crossings that cross it:
 * a transition's writes with those that make it (the first one listed arms it), the lock's
 * acquire and release with those that lock, the break of a stale local lock with the one that
 * breaks it (PostgreSQL's lock ends with the session, so no command breaks one: decisions D13).
 */
function stateSites(): Array<[FaultSite, readonly Journey[]]> {
  const out: Array<[FaultSite, readonly Journey[]]> = [];
  const all = crossings();
  for (const t of STATE_TRANSITIONS) {
    const by = all.filter((c) => c.transitions.includes(t)).map((c) => c.by);
    for (const s of transitionSites(t)) out.push([s, by]);
  }
  const locking = all.filter((c) => c.locks).map((c) => c.by);
  for (const backend of ["local", "postgres"] as const) {
    out.push([lockOperationSite(backend, "acquire"), locking]);
    out.push([lockOperationSite(backend, "release"), locking]);
  }
  out.push([
    lockOperationSite("local", "break"),
    all.filter((c) => c.breaksStaleLock).map((c) => c.by),
  ]);
  return out;
}

/**
 * Every fault site, in registry order (each crossing's own sites: replacement, its resume-only
 * writes, create, operator, connector, day two, removal), then the state layer's.
 *
 * @example
 * ```ts
 * import { faultInventory } from "./inventory.ts";
 * console.log(faultInventory().length);
 * ```
 */
export function faultInventory(): InventoryEntry[] {
  const entries = new Map<string, { site: FaultSite; journeys: Journey[] }>();
  const add = (site: FaultSite, journey: Journey) => {
    const e = entries.get(site.name);
    if (e && e.site !== site) {
      throw new Error(`two different fault sites are named ${site.name}`);
    }
    if (!e) entries.set(site.name, { site, journeys: [journey] });
    else if (!e.journeys.includes(journey)) e.journeys.push(journey);
  };
  for (const c of crossings()) for (const s of c.sites()) add(s, c.by);
  for (const [s, journeys] of stateSites()) for (const j of journeys) add(s, j);
  // every declared state site is composed (the state layer's own list is the check)
  const missing = STATE_SITES.filter((s) => !entries.has(s.name)).map((s) => s.name);
  if (missing.length > 0) throw new Error(`state sites not composed: ${missing.join(", ")}`);
  return [...entries.values()].map((e) => ({ ...e, location: siteLocation(e.site) }));
}

/**
 * The sites only `state resume` crosses: those whose first journey is `resume` (the
 * interruption and resume-authorization writes, the state writes of those transitions, the
 * break of a dead worker's lock). A harness arms them in a resume, after an apply died at
 * {@link PRE_RESUME_FAULT}.
 *
 * @example
 * ```ts
 * import { resumeOnlySites } from "./inventory.ts";
 * console.log(resumeOnlySites().has("journal.resume")); // true
 * ```
 */
export function resumeOnlySites(entries: InventoryEntry[] = faultInventory()): Set<string> {
  return new Set(entries.filter((e) => e.journeys[0] === "resume").map((e) => e.site.name));
}

/**
 * Where an apply must die so that its operation can only be continued by `state resume`: after
 * the action started (a death before it is continued by the same `apply --plan`).
 */
export const PRE_RESUME_FAULT = `${REPLACEMENT_SITES.actionStarted.name}:after`;

/**
 * Where an apply must die before an operator's decision: the old runner closed and removed, no
 * candidate created yet — a stopped operation that only the operator's decision (or
 * `state resume`) can continue.
 */
export const PRE_OPERATOR_FAULT = `${REPLACEMENT_SITES.create.name}:before`;

/** An operator's decision about a pending operation: the public command that makes it. */
export type OperatorDecision = "accept-retention-loss" | "abandon";

/**
 * Which of the operator's commands crosses a site: `abandon` for the abandonment's own write
 * and the state layer's `abandon` writes, `accept-retention-loss` for the decision's record,
 * its offset move and the state layer's `decide` writes; null for a site no operator command
 * crosses first.
 *
 * @example
 * ```ts
 * import { operatorDecision } from "./inventory.ts";
 * console.log(operatorDecision("journal.abandon")); // abandon
 * console.log(operatorDecision("state.postgres.decide.commit")); // accept-retention-loss
 * ```
 */
export function operatorDecision(site: string): OperatorDecision | null {
  const named = (sites: FaultSite[]) => sites.some((s) => s.name === site);
  if (named([OPERATOR_SITES.abandon, ...transitionSites("abandon")])) return "abandon";
  if (named([OPERATOR_SITES.decision, OPERATOR_SITES.moveOffsets, ...transitionSites("decide")])) {
    return "accept-retention-loss";
  }
  return null;
}

/**
 * The names of every site.
 *
 * @example
 * ```ts
 * import { faultSiteNames } from "./inventory.ts";
 * console.log(faultSiteNames().has("docker.remove_old")); // true
 * ```
 */
export function faultSiteNames(): Set<string> {
  return new Set(faultInventory().map((e) => e.site.name));
}

/**
 * The start-up check of every entry point: refuse a fault switch set without the test-only
 * permission, or naming a site outside the inventory.
 *
 * @example
 * ```ts
 * import { guardInventorySwitch } from "./inventory.ts";
 * guardInventorySwitch(); // throws USAGE_FAULT_SWITCH_NOT_ALLOWED / USAGE_FAULT_POINT
 * ```
 */
export function guardInventorySwitch(): void {
  guardFaultSwitch(faultSiteNames());
}

/**
 * The inventory as `deno task probes --list` prints it: one line per site with its kind,
 * backends, journeys and location, then the count.
 *
 * @example
 * ```ts
 * import { formatInventory } from "./inventory.ts";
 * console.log(formatInventory());
 * ```
 */
export function formatInventory(entries: InventoryEntry[] = faultInventory()): string {
  const rows = entries.map((e) => [
    e.site.name,
    e.site.kind,
    (e.site.backends ?? ["local", "postgres"]).join(","),
    e.journeys.join(","),
    e.location,
    e.site.description,
  ]);
  const head = ["site", "kind", "backends", "journeys", "location", "what"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ");
  return [line(head), ...rows.map(line), `${entries.length} fault sites`].join("\n");
}
