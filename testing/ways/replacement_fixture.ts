/**
 * A running replacement target on a fake world, ready for a way-out test: the starter created
 * and running with records processed, its predicate changed and a reviewed format-6 plan file
 * written. What the way-out tests of `lib/runtime` share.
 *
 * @example
 * ```ts
 * import { reviewedReplacement } from "./replacement_fixture.ts";
 * await using r = await reviewedReplacement("example");
 * console.log(r.planPath);
 * ```
 * @module
 */
import { writePlanFile } from "../../lib/plan/plan_file.ts";
import { apply, plan } from "../../lib/runtime/session.ts";
import { openStateStore } from "../../lib/state/open.ts";
import type { StateSnapshot } from "../../lib/state/store.ts";
import { type FakeProject, fakeProject } from "./fake_project.ts";

/** A fake project with a reviewed replacement plan. */
export interface ReviewedReplacement extends FakeProject {
  planPath: string;
  applicationId: string;
  /** `--project DIR --plan FILE --operation-id ID`. */
  common(operationId: string): string[];
  /** Read the local state files (verified). */
  state(): Promise<StateSnapshot>;
  /** Committed offsets of the application's group, by partition. */
  committed(): Promise<Record<string, string>>;
  /** Provider mutations so far (sluice's own: Docker and Kafka; not the simulated runner's). */
  mutations(): number;
}

/** An order record. */
export const order = (id: string, amount: number) => ({
  key: id,
  value: JSON.stringify({ order_id: id, amount, paid: true, customer: null }),
});

/** Create and run the starter, process records, change the predicate, write the reviewed plan. */
export async function reviewedReplacement(seed: string): Promise<ReviewedReplacement> {
  const f = await fakeProject(seed);
  const { world, p, deps } = f;
  const created = await plan({ dir: p.dir, ...deps });
  const c = await apply({ dir: p.dir, plan: created.plan, planSha256: created.sha256, ...deps });
  const applicationId = c.runners[0].application_id;
  world.control.produce(p.inputTopic, [order("a1", 150), order("a2", 250), order("a3", 50)]);
  await p.setPredicate("amount >= 200 AND paid = TRUE");
  const reviewed = await plan({ dir: p.dir, ...deps });
  if (reviewed.plan.format !== 6) {
    throw new Error(`no reviewed plan: ${JSON.stringify(reviewed.plan.blockers)}`);
  }
  const planPath = `${p.dir}/replace.plan.json`;
  await writePlanFile(planPath, reviewed.plan);
  return {
    ...f,
    planPath,
    applicationId,
    common: (id) => ["--project", p.dir, "--plan", planPath, "--operation-id", id],
    async state() {
      const store = openStateStore({
        backend: "local",
        dir: `${p.dir}/.sluice/state`,
        project: p.name,
        environment: null,
      });
      try {
        return await store.load();
      } finally {
        await store.close();
      }
    },
    async committed() {
      const m = await deps.kafka.committedOffsets(applicationId, p.inputTopic);
      return Object.fromEntries([...m].map(([k, v]) => [String(k), String(v)]));
    },
    mutations: () =>
      world.control.mutations().filter((m) => m.by === "docker" || m.by === "kafka").length,
  };
}
