/**
 * The journeys the lock and unknown-outcome tests run on a case world (both state backends' real
 * code over the fakes): create, the reviewed replacement, runner removal and the connector
 * journey, each prepared up to its apply, which is run with a given state store.
 *
 * @example
 * ```ts
 * import { prepareJourney } from "./journeys.ts";
 * // const run = await prepareJourney(cw, "create"); await run(store);
 * ```
 * @module
 */
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import { readPlanFile } from "../../lib/plan/plan_file.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { apply, plan } from "../../lib/runtime/session.ts";
import type { StateStore } from "../../lib/state/store.ts";
import {
  type CaseWorld,
  deployStarter,
  prepareConnector,
  prepareRemoval,
} from "../sweep/fixture.ts";

/** The journey's own provider mutations so far (runner processes and test controls excluded). */
export function providerMutations(cw: CaseWorld): number {
  return cw.world.control.mutations().filter((m) =>
    m.by === "docker" || m.by === "kafka" || m.by === "connect"
  ).length;
}

export type Journey =
  | "create"
  | "replace"
  | "remove_runner"
  | "create_connector"
  | "update_connector";

/** Set up the journey's world and return how to apply its plan with a given store. */
export async function prepareJourney(cw: CaseWorld, journey: Journey) {
  const deps = cw.deps;
  if (journey === "create") {
    const dir = cw.project.dir;
    const r = await plan({ dir, ...deps });
    return (store: StateStore) =>
      apply({ dir, plan: r.plan, planSha256: r.sha256, ...deps, store });
  }
  if (journey === "replace") {
    const d = await deployStarter(cw);
    return async (store: StateStore) => {
      const r = await executeReviewed({
        dir: cw.project.dir,
        planPath: d.planPath,
        ...deps,
        closeTimeoutMs: 60_000,
        readyTimeoutMs: 120_000,
        store,
      });
      // a replacement reports in its result: a lost lock is thrown the same way the others do
      // the replacement reports rather than throws: a lost lock is an unknown outcome (committed
      // null, the store's reason), turned here into the error the other journeys throw
      if (r.committed === null && r.outcome === "unknown" && /lock was lost/.test(r.reason ?? "")) {
        throw new SluiceError("STATE_LOCK_LOST", r.reason ?? "");
      }
      assert.equal(r.committed, true, JSON.stringify(r));
      return r;
    };
  }
  const change = journey === "remove_runner"
    ? await prepareRemoval(cw)
    : await prepareConnector(cw, journey === "create_connector" ? "create" : "update");
  const dir = journey === "remove_runner" ? cw.project.dir : cw.pipeline!.dir;
  const { plan: p, sha256 } = await readPlanFile(change.planPath);
  return (store: StateStore) => apply({ dir, plan: p, planSha256: sha256, ...deps, store });
}

export const JOURNEYS: Journey[] = [
  "create",
  "replace",
  "remove_runner",
  "create_connector",
  "update_connector",
];
