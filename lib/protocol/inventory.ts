/**
 * The fault inventory: every fault site of sluice, composed explicitly from the declarations of
 * the modules that cross them — the replacement's boundary table and the coordinator's writes
 * (`lib/protocol/replacement.ts`), the create journey's table (`lib/protocol/create.ts`), the
 * connector journey's table (`lib/protocol/connector.ts`), the runner-removal journey's table
 * (`lib/protocol/removal.ts`) and the state layer's persistence
 * points and lock operations. Nothing is registered by importing a
 * module: a site is in the inventory because a table lists it.
 *
 * Each entry names the journeys that cross the site, so a harness knows which command to arm:
 * `replacement` (`apply --plan` of a reviewed plan), `resume` (`state resume` only), `create`
 * (`apply --plan` of a create plan), `operator` (an operator's explicit decision about a pending
 * operation: `state accept-retention-loss`, `state abandon`), `connector` (`apply --plan` of a
 * plan with connector changes, continued by the same `apply --plan` again), `removal` (`apply
 * --plan` of a plan with runner removals, continued by the same `apply --plan` again), `day_two`
 * (`restart` and `skip-record` on a stopped runner, finished by the same command again). `deno task probes
 * --list` prints {@link formatInventory};
 * entry points refuse a fault switch naming anything else ({@link guardInventorySwitch}).
 *
 * @example
 * ```ts
 * import { faultInventory } from "./inventory.ts";
 * for (const e of faultInventory()) console.log(e.site.name, e.journeys.join(","), e.location);
 * ```
 * @module
 */
import { type FaultSite, guardFaultSwitch, siteLocation } from "../fault/site.ts";
import { OPERATION_WRITES, REPLACEMENT_SITES, replacementSites } from "./replacement.ts";
import { createSites } from "./create.ts";
import { OPERATOR_SITES, operatorSites } from "./operator.ts";
import { connectorSites } from "./connector.ts";
import { removalSites } from "./removal.ts";
import { dayTwoSites } from "./day_two.ts";
import {
  LOCAL_WRITE_ORDER,
  localWriteSites,
  lockOperationSite,
  pgCommitSite,
  STATE_SITES,
  STATE_TRANSITIONS,
  type StateTransition,
} from "./state_sites.ts";

/** The public command whose run crosses a site. */
export type Journey =
  | "replacement"
  | "resume"
  | "create"
  | "operator"
  | "connector"
  | "day_two"
  | "removal";

/** One site of the inventory. */
export interface InventoryEntry {
  site: FaultSite;
  /** The journeys that cross it, the one to arm first. */
  journeys: readonly Journey[];
  /** Where it is declared, relative to the repository root. */
  location: string;
}

/**
 * The journey whose apply (or resume) first crosses a state transition's writes. `init` is
 * written by the first command on a fresh project (`plan`), before any apply: it is listed
 * with the create journey, whose harness runs that first command.
 */
const TRANSITION_JOURNEYS: Readonly<Record<StateTransition, readonly Journey[]>> = {
  init: ["create"],
  commit_ownership: ["create", "connector", "removal"],
  begin: ["replacement", "create", "connector", "removal"],
  checkpoint: ["replacement"],
  interrupt: ["resume"],
  resume: ["resume"],
  finalize: ["replacement"],
  decide: ["operator"],
  abandon: ["operator"],
  audit: ["day_two"],
};

/** The state layer's sites of one transition: each local write's steps, then the commit. */
function transitionSites(t: StateTransition): FaultSite[] {
  return [
    ...LOCAL_WRITE_ORDER[t].flatMap((w) => Object.values(localWriteSites(t, w.file, w.kind))),
    pgCommitSite(t),
  ];
}

/** The state layer's sites (lib/protocol/state_sites.ts), each with the journeys that cross it. */
function stateSites(): Array<[FaultSite, readonly Journey[]]> {
  const out: Array<[FaultSite, readonly Journey[]]> = [];
  for (const t of STATE_TRANSITIONS) {
    for (const s of transitionSites(t)) out.push([s, TRANSITION_JOURNEYS[t]]);
  }
  for (const backend of ["local", "postgres"] as const) {
    const locking: Journey[] = ["replacement", "create", "connector", "removal"];
    out.push([lockOperationSite(backend, "acquire"), locking]);
    out.push([lockOperationSite(backend, "release"), locking]);
  }
  // a stale local lock is broken by the first command after a killed worker; PostgreSQL's
  // lock ends with the session, so no command breaks one (docs/decisions.md D13)
  out.push([lockOperationSite("local", "break"), ["resume"]]);
  return out;
}

/**
 * Every fault site, in journey order (replacement, its resume-only writes, create, operator,
 * connector, day two, removal, state).
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
  const resumeOnly: FaultSite[] = [OPERATION_WRITES.interruption, OPERATION_WRITES.resume];
  for (const s of replacementSites()) add(s, resumeOnly.includes(s) ? "resume" : "replacement");
  for (const s of createSites()) add(s, "create");
  for (const s of operatorSites()) add(s, "operator");
  for (const s of connectorSites()) add(s, "connector");
  for (const s of dayTwoSites()) add(s, "day_two");
  for (const s of removalSites()) add(s, "removal");
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
