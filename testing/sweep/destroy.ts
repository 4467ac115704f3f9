/**
 * The crash sweep's destroy cases (`plan --destroy`, `lib/protocol/destroy.ts`): the starter
 * deployed with a second model, records processed, then the reviewed destroy plan written — in
 * this process, through the SDK, on the case's world ({@link prepareDestroy}); the journey run
 * by `apply --plan` with that file, killed at the case's site and continued; then its invariants
 * ({@link checkDestroy}): both runners taken down once each, exactly their containers, every
 * volume, group offset and topic kept, ownership without runners and with both kept, one serial
 * increment, and the unchanged project planned again is a create that resumes from what was
 * kept.
 *
 * @example
 * ```ts
 * import { checkDestroy, prepareDestroy } from "./destroy.ts";
 * // const ch = await prepareDestroy(cw); … const problems = await checkDestroy(cw, run, ch);
 * ```
 * @module
 */
import { writePlanFile } from "../../lib/plan/plan_file.ts";
import { apply, plan } from "../../lib/runtime/session.ts";
import type { MutationRecord } from "../fakes/world.ts";
import { type CaseWorld, orders, SPARE_MODEL } from "./fixture.ts";
import { checkFault, checkOutcome } from "./invariants.ts";
import type { JourneyRun } from "./operator.ts";
import { committedOf, containersOf, readState, readWorldFile, volumeOf } from "./reads.ts";

/** One runner the destroy takes down, as the setup deployed it. */
export interface DestroyedRunner {
  applicationId: string;
  containerId: string;
  volumeInstance: string;
  inputTopic: string;
  /** The group's committed offsets when the plan was written (lower bounds of the kept ones). */
  committedAtPlan: Record<string, bigint>;
}

/** What a destroy case was set up with. */
export interface DestroyChange {
  /** The reviewed destroy plan. */
  planPath: string;
  runners: DestroyedRunner[];
  topics: string[];
  setupLogSeq: number;
  setupSerial: number;
  /** The unchanged project's next plan, by action type, and its blocker count. */
  nextPlan(): Promise<{ types: string[]; resumes: number; blockers: number }>;
}

/**
 * Deploy the starter with {@link SPARE_MODEL} beside it, process records, and write the reviewed
 * destroy plan (both runners, data kept).
 *
 * @example
 * ```ts
 * import { prepareDestroy } from "./destroy.ts";
 * // const ch = await prepareDestroy(cw);
 * ```
 */
export async function prepareDestroy(cw: CaseWorld): Promise<DestroyChange> {
  const p = cw.project;
  await p.editManifest((t) =>
    t.replace(
      "models:\n",
      `models:\n  ${SPARE_MODEL}:\n    sql: models/eligible_orders.sql\n    output:\n      topic: spare_${p.outputTopic}\n`,
    )
  );
  const created = await plan({ dir: p.dir, ...cw.deps });
  if (created.plan.blockers.length > 0) {
    throw new Error(`setup: the create plan is blocked: ${JSON.stringify(created.plan.blockers)}`);
  }
  const c = await apply({ dir: p.dir, plan: created.plan, planSha256: created.sha256, ...cw.deps });
  if (c.runners.length !== 2) {
    throw new Error(`setup: expected two runners, got ${c.runners.length}`);
  }
  cw.produce(orders("a", [50, 150, 250, 120, 300, 90, 210, 180]));
  cw.world.control.snapshot();
  const destroy = await plan({ dir: p.dir, ...cw.deps, destroy: { deleteData: false } });
  const action = destroy.plan.actions[0];
  if (
    destroy.plan.blockers.length > 0 || destroy.plan.actions.length !== 1 ||
    action.type !== "destroy" || action.runners.length !== 2
  ) {
    throw new Error(
      `setup: expected one destroy of two runners, got ${
        JSON.stringify(destroy.plan.actions.map((a) => a.type))
      } with ${JSON.stringify(destroy.plan.blockers)}`,
    );
  }
  const planPath = `${p.dir}/destroy.plan.json`;
  await writePlanFile(planPath, destroy.plan);
  const w = readWorldFile(cw.worldPath);
  const state = await readState(cw.state);
  return {
    planPath,
    runners: c.runners.map((r) => ({
      applicationId: r.application_id,
      containerId: r.container_id,
      volumeInstance: r.volume_instance,
      inputTopic: p.inputTopic,
      committedAtPlan: committedOf(w, r.application_id, p.inputTopic),
    })),
    topics: action.keeps.topics,
    setupLogSeq: w.log.at(-1)?.seq ?? 0,
    setupSerial: (state.ownership?.serial as number | undefined) ?? 0,
    async nextPlan() {
      const r = await plan({ dir: p.dir, ...cw.deps });
      return {
        types: r.plan.actions.map((a) => a.type),
        resumes: r.plan.actions.filter((a) => a.type === "create_runner" && a.resume).length,
        blockers: r.plan.blockers.length,
      };
    },
  };
}

/**
 * The invariants of a destroy case (see the module documentation).
 *
 * @example
 * ```ts
 * import { checkDestroy } from "./destroy.ts";
 * // (await checkDestroy(cw, run, ch)).length === 0
 * ```
 */
export async function checkDestroy(
  cw: CaseWorld,
  j: JourneyRun,
  ch: DestroyChange,
): Promise<string[]> {
  const p = [...checkFault(j), ...checkOutcome(j)];
  cw.world.control.snapshot();
  const w = readWorldFile(cw.worldPath);
  const state = await readState(cw.state);
  const made = w.log.filter((m: MutationRecord) =>
    m.seq > ch.setupLogSeq && (m.by === "docker" || m.by === "kafka")
  );
  const other = made.filter((m) => m.op !== "signalTerm" && m.op !== "removeContainer");
  if (other.length > 0) {
    p.push(`a destroy mutated ${other.map((m) => `${m.op}(${m.key})`).join(", ")}`);
  }
  const bound = new Set(ch.runners.map((r) => r.containerId));
  const strays = made.filter((m) => !bound.has(m.key));
  if (strays.length > 0) p.push(`a destroy touched ${strays.map((m) => m.key).join(", ")}`);
  for (const r of ch.runners) {
    const removes = made.filter((m) => m.op === "removeContainer" && m.key === r.containerId);
    if (removes.length > 1) p.push(`${r.applicationId}: removed ${removes.length} times`);
    const vol = volumeOf(w, `${r.applicationId}-state`);
    if (!vol || vol.label !== r.volumeInstance || vol.file !== r.volumeInstance) {
      p.push(`${r.applicationId}: the state volume is ${vol ? "another instance" : "gone"}`);
    }
    const committed = committedOf(w, r.applicationId, r.inputTopic);
    for (const [part, off] of Object.entries(r.committedAtPlan)) {
      if (committed[part] === undefined || committed[part] < off) {
        p.push(`${r.applicationId} partition ${part}: committed ${committed[part]} < ${off}`);
      }
    }
    if (j.outcome !== "completed") continue;
    if (containersOf(w, r.applicationId).length > 0) p.push(`${r.applicationId}: containers left`);
    if (removes.length !== 1) {
      p.push(`${r.applicationId}: removed ${removes.length} times, not once`);
    }
  }
  for (const t of ch.topics) if (!w.kafka.topics[t]) p.push(`topic ${t} is gone`);
  if (j.outcome !== "completed") return p;
  const runners = (state.ownership?.runners as unknown[] | undefined) ?? [];
  if (runners.length > 0) p.push(`${runners.length} runners still owned after the destroy`);
  const topics = (state.ownership?.topics as Array<{ name: string }> | undefined) ?? [];
  for (const t of ch.topics) {
    if (!topics.some((x) => x.name === t)) p.push(`topic ${t} is no longer owned`);
  }
  const kept = (state.ownership?.retained as
    | Array<{ application_id: string; volume: { instance_id: string } }>
    | undefined) ?? [];
  for (const r of ch.runners) {
    const k = kept.find((x) => x.application_id === r.applicationId);
    if (!k || k.volume.instance_id !== r.volumeInstance) {
      p.push(`ownership does not keep ${r.applicationId}'s volume and group`);
    }
  }
  const serial = (state.ownership?.serial as number | undefined) ?? null;
  if (serial !== ch.setupSerial + 1) {
    p.push(`ownership serial ${serial}, not ${ch.setupSerial + 1} (exactly one increment)`);
  }
  if (state.control !== null) p.push("control still pending after the destroy");
  if (cw.backend === "local" && state.lockFile) p.push("lock.json left after completion");
  const next = await ch.nextPlan();
  if (
    next.blockers > 0 || next.resumes !== ch.runners.length ||
    next.types.some((t) => t !== "create_runner")
  ) {
    p.push(
      `the next plan is ${
        JSON.stringify(next)
      }, not a create resuming ${ch.runners.length} runners`,
    );
  }
  return p;
}
