/**
 * The crash sweep's cases, enumerated from the fault inventory at run time — itself composed
 * from the journey registry (`lib/protocol/journeys.ts`), so a journey's sites get their cases
 * the day its descriptor is registered: every site × before/after × state backend (a site
 * declared for one backend runs only there), each with the registry's crossing that crosses it
 * first (the inventory's first journey for the site), in two
 * passes: `crash` (the process dies there by SIGKILL) and `lock_lost` (the process loses its
 * deployment lock there to another holder and goes on: testing/sweep/lock_loss.ts).
 *
 * @example
 * ```ts
 * import { caseId, sweepCases } from "./cases.ts";
 * const cases = sweepCases();
 * console.log(cases.length, caseId(cases[0]));
 * ```
 * @module
 */
import { faultInventory } from "../../lib/protocol/inventory.ts";
import type { Journey } from "../../lib/protocol/journeys.ts";
import type { FaultSide, SiteBackend } from "../../lib/fault/site.ts";
import { stateOnlyPoints } from "../../lib/protocol/state_sites.ts";

/**
 * What happens at a case's site: `crash`, the process dies (SIGKILL); `lock_lost`, the lock is
 * taken over by another holder and the process continues.
 */
export type SweepPass = "crash" | "lock_lost";

/** One case of the sweep. */
export interface SweepCase {
  site: string;
  side: FaultSide;
  backend: SiteBackend;
  journey: Journey;
  pass: SweepPass;
}

/**
 * How much of the sweep a run takes. `full`: every site × before/after × the backends it exists
 * on. `suite` (what `./run test` and CI run, to stay inside CI's time budget): one case per site,
 * the side alternating site by site and a site on both backends taking them in turn, so every
 * site is crossed in every test run and each side and backend across the sites; and each state
 * only a death inside the state layer leaves (`stateOnlyPoints` in lib/protocol/state_sites.ts: a local
 * write with one file in place and the next not yet written, the store's creation, a dead lock
 * holder), on the side and backend that leaves it. The `lock_lost` pass's suite tier is one case
 * per site too, each on the other side and backend than the crash pass's (no state-layer extra:
 * those states are a death's), so that the two passes together take both sides of every site.
 */
export type SweepTier = "suite" | "full";

/**
 * Which cases to run: `only` is a comma-separated list of `site`, `site:side`,
 * `site:side:backend` or case IDs.
 */
export interface CaseFilter {
  only?: string;
  backend?: string;
  /** The tier (default `full`). */
  tier?: SweepTier;
  /** The pass (default `crash`). */
  pass?: SweepPass;
}

/**
 * The stable ID of a case: `<site>:<side>:<backend>`, prefixed `lock_lost/` in the lock-loss
 * pass.
 *
 * @example
 * ```ts
 * import { caseId } from "./cases.ts";
 * console.log(caseId({
 *   site: "docker.remove_old", side: "after", backend: "local", journey: "replacement", pass: "crash",
 * }));
 * ```
 */
export function caseId(c: SweepCase): string {
  return `${c.pass === "lock_lost" ? "lock_lost/" : ""}${c.site}:${c.side}:${c.backend}`;
}

/**
 * Every case of the inventory in one pass (optionally filtered), in inventory order, local
 * backend first.
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
  const pass = filter.pass ?? "crash";
  // the lock-loss pass takes the other turn of each site, and no death-only state
  const turn = pass === "crash" ? 0 : 1;
  const stateOnly = pass === "crash"
    ? new Set(stateOnlyPoints().map((p) => `${p.site}:${p.side}:${p.backend}`))
    : new Set<string>();
  for (const backend of ["local", "postgres"] as const) {
    if (filter.backend && filter.backend !== backend) continue;
    for (const [i, e] of inventory.entries()) {
      const backends = e.site.backends ?? ["local", "postgres"];
      if (!backends.includes(backend)) continue;
      for (const side of ["before", "after"] as const) {
        if (
          filter.tier === "suite" &&
          (side !== ((i + turn) % 2 === 0 ? "before" : "after") ||
            backend !== backends[(Math.floor(i / 2) + turn) % backends.length]) &&
          !stateOnly.has(`${e.site.name}:${side}:${backend}`)
        ) continue;
        const c: SweepCase = { site: e.site.name, side, backend, journey: e.journeys[0], pass };
        const keys = [c.site, `${c.site}:${side}`, `${c.site}:${side}:${backend}`, caseId(c)];
        if (wanted && !wanted.some((w) => keys.includes(w))) continue;
        out.push(c);
      }
    }
  }
  return out;
}
