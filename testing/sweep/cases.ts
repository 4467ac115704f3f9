/**
 * The crash sweep's cases, enumerated from the fault inventory at run time: every site ×
 * before/after × state backend (a site declared for one backend runs only there), each with
 * the journey that crosses it first (the inventory's first journey for the site).
 *
 * @example
 * ```ts
 * import { caseId, sweepCases } from "./cases.ts";
 * const cases = sweepCases();
 * console.log(cases.length, caseId(cases[0]));
 * ```
 * @module
 */
import { faultInventory, type Journey } from "../../lib/protocol/inventory.ts";
import type { FaultSide, SiteBackend } from "../../lib/fault/site.ts";
import { stateOnlyPoints } from "../../lib/protocol/state_sites.ts";

/** One case of the sweep. */
export interface SweepCase {
  site: string;
  side: FaultSide;
  backend: SiteBackend;
  journey: Journey;
}

/**
 * How much of the sweep a run takes. `full`: every site × before/after × the backends it exists
 * on. `suite` (what `./run test` and CI run, to stay inside CI's time budget): one case per site,
 * the side alternating site by site and a site on both backends taking them in turn, so every
 * site is crossed in every test run and each side and backend across the sites; and each state
 * only a death inside the state layer leaves (`stateOnlyPoints` in lib/protocol/state_sites.ts: a local
 * write with one file in place and the next not yet written, the store's creation, a dead lock
 * holder), on the side and backend that leaves it.
 */
export type SweepTier = "suite" | "full";

/** Which cases to run: `only` is a comma-separated list of `site`, `site:side` or case IDs. */
export interface CaseFilter {
  only?: string;
  backend?: string;
  /** The tier (default `full`). */
  tier?: SweepTier;
}

/**
 * The stable ID of a case: `<site>:<side>:<backend>`.
 *
 * @example
 * ```ts
 * import { caseId } from "./cases.ts";
 * console.log(caseId({ site: "docker.remove_old", side: "after", backend: "local", journey: "replacement" }));
 * ```
 */
export function caseId(c: SweepCase): string {
  return `${c.site}:${c.side}:${c.backend}`;
}

/**
 * Every case of the inventory (optionally filtered), in inventory order, local backend first.
 *
 * @example
 * ```ts
 * import { sweepCases } from "./cases.ts";
 * console.log(sweepCases({ only: "docker.remove_old" }).length); // 4
 * ```
 */
export function sweepCases(filter: CaseFilter = {}): SweepCase[] {
  const wanted = filter.only ? filter.only.split(",").map((s) => s.trim()).filter(Boolean) : null;
  const out: SweepCase[] = [];
  const inventory = faultInventory();
  const stateOnly = new Set(stateOnlyPoints().map((p) => `${p.site}:${p.side}:${p.backend}`));
  for (const backend of ["local", "postgres"] as const) {
    if (filter.backend && filter.backend !== backend) continue;
    for (const [i, e] of inventory.entries()) {
      const backends = e.site.backends ?? ["local", "postgres"];
      if (!backends.includes(backend)) continue;
      for (const side of ["before", "after"] as const) {
        if (
          filter.tier === "suite" &&
          (side !== (i % 2 === 0 ? "before" : "after") ||
            backend !== backends[Math.floor(i / 2) % backends.length]) &&
          !stateOnly.has(`${e.site.name}:${side}:${backend}`)
        ) continue;
        const c: SweepCase = { site: e.site.name, side, backend, journey: e.journeys[0] };
        const keys = [c.site, `${c.site}:${side}`, caseId(c)];
        if (wanted && !wanted.some((w) => keys.includes(w))) continue;
        out.push(c);
      }
    }
  }
  return out;
}
