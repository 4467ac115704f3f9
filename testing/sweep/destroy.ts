/**
 * The crash sweep's destroy cases (`plan --destroy`, `lib/protocol/destroy.ts`): the starter
 * deployed with a second model, records processed, then the reviewed destroy plan written — in
 * this process, through the SDK, on the case's world ({@link prepareDestroy}); the journey run
 * by `apply --plan` with that file, killed at the case's site and continued; then its invariants
 * ({@link checkDestroy}): both runners taken down once each, exactly their containers, every
 * volume, group offset and topic kept, ownership without runners and with both kept, one serial
 * increment, and the unchanged project planned again is a create that resumes from what was
 * kept. A case at one of the data rows' sites (`--delete-data`) plans the destroy deleting data
 * over an external input topic ({@link prepareDestroy} `deleteData`): then every group, volume and
 * owned topic is deleted exactly once, the input topic sluice did not create stays, ownership
 * keeps nothing, and the project planned again is a create from nothing.
 *
 * @example
 * ```ts
 * import { checkDestroy, prepareDestroy } from "./destroy.ts";
 * // const ch = await prepareDestroy(cw); … const problems = await checkDestroy(cw, run, ch);
 * ```
 * @module
 */
import { writePlanFile } from "../../lib/plan/plan_file.ts";
import { DESTROY_CONNECTOR_TABLE, DESTROY_DATA_TABLE } from "../../lib/protocol/destroy.ts";
import { apply, plan } from "../../lib/runtime/session.ts";
import type { MutationRecord, World } from "../fakes/world.ts";
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
  /** Whether the destroy deletes data (`--delete-data`; the input topic is then external). */
  deleteData: boolean;
  /** The input topic sluice did not create (deleting data), never deleted; null otherwise. */
  externalTopic: string | null;
  /** The connectors the destroy deletes (the pipeline's; none on the starter). */
  connectors: string[];
  /** The unchanged project's next plan, by action type, and its blocker count. */
  nextPlan(): Promise<{ types: string[]; resumes: number; blockers: number }>;
}

/**
 * Whether a case at `site` plans the destroy deleting data: the data rows' sites are crossed
 * only then.
 *
 * @example
 * ```ts
 * import { deletesDataAt } from "./destroy.ts";
 * console.log(deletesDataAt("kafka.delete_destroyed_topic")); // true
 * ```
 */
export function deletesDataAt(site: string): boolean {
  return DESTROY_DATA_TABLE.some((r) => r.site?.name === site);
}

/**
 * Whether a case at `site` needs a project that owns connectors (the pipeline): the connector
 * row's site is crossed only then.
 *
 * @example
 * ```ts
 * import { destroysConnectorsAt } from "./destroy.ts";
 * console.log(destroysConnectorsAt("connect.delete_destroyed_connector")); // true
 * ```
 */
export function destroysConnectorsAt(site: string): boolean {
  return DESTROY_CONNECTOR_TABLE.some((r) => r.site?.name === site);
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
export async function prepareDestroy(
  cw: CaseWorld,
  options: { deleteData?: boolean } = {},
): Promise<DestroyChange> {
  const p = cw.project;
  const deleteData = options.deleteData ?? false;
  await p.editManifest((t) =>
    t.replace(
      "models:\n",
      `models:\n  ${SPARE_MODEL}:\n    sql: models/eligible_orders.sql\n    output:\n      topic: spare_${p.outputTopic}\n`,
    )
  );
  if (deleteData) {
    // the input topic is not sluice's: created outside it, declared external
    await p.editManifest((t) =>
      t.replace(/kind: managed\n\s*partitions: 3\n/, "kind: external\n")
        .replace(/( {4}output:\n {6}topic: .*\n)/g, "$1      partitions: 3\n")
    );
    const kafka = cw.world.kafka();
    await kafka.createTopic(p.inputTopic, 3);
    await kafka.close();
  }
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
  const destroy = await plan({ dir: p.dir, ...cw.deps, destroy: { deleteData } });
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
    topics: deleteData ? (action.deletes?.topics ?? []).map((t) => t.name) : action.keeps.topics,
    connectors: (action.connectors ?? []).map((x) => x.name),
    deleteData,
    externalTopic: deleteData ? p.inputTopic : null,
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
  p.push(...checkConnectorsDeleted(j, ch, w, state));
  if (ch.deleteData) return [...p, ...(await checkDeleted(j, ch, w, made, state))];
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
  // the pipeline's connectors, taken down by the destroy, are created again
  const again = new Set([
    "create_runner",
    ...(ch.connectors.length > 0 ? ["create_connector"] : []),
  ]);
  if (
    next.blockers > 0 || next.resumes !== ch.runners.length ||
    next.types.some((t) => !again.has(t))
  ) {
    p.push(
      `the next plan is ${
        JSON.stringify(next)
      }, not a create resuming ${ch.runners.length} runners`,
    );
  }
  return p;
}

/**
 * The connectors' invariants: the destroy deletes only the connectors it binds, each at most
 * once; once completed, none is left on the cluster or in ownership.
 */
function checkConnectorsDeleted(
  j: JourneyRun,
  ch: DestroyChange,
  w: World,
  state: Awaited<ReturnType<typeof readState>>,
): string[] {
  const p: string[] = [];
  const made = w.log.filter((m: MutationRecord) => m.seq > ch.setupLogSeq && m.by === "connect");
  const bound = new Set(ch.connectors);
  for (const m of made) {
    if (m.op !== "deleteConnector" || !bound.has(m.key)) {
      p.push(`a destroy made ${m.op}(${m.key}) on Connect`);
    }
  }
  for (const c of ch.connectors) {
    const n = made.filter((m) => m.op === "deleteConnector" && m.key === c).length;
    if (n > 1) p.push(`connector ${c} deleted ${n} times`);
  }
  if (j.outcome !== "completed") return p;
  for (const c of ch.connectors) {
    if (w.connect?.connectors[c]) p.push(`connector ${c} is left after the destroy`);
  }
  const owned = (state.ownership?.connectors as unknown[] | undefined) ?? [];
  if (owned.length > 0) p.push(`${owned.length} connectors still owned after the destroy`);
  return p;
}

/** The invariants of a destroy that deletes data (see the module documentation). */
async function checkDeleted(
  j: JourneyRun,
  ch: DestroyChange,
  w: World,
  made: MutationRecord[],
  state: Awaited<ReturnType<typeof readState>>,
): Promise<string[]> {
  const p: string[] = [];
  const deletions = new Set(["deleteGroup", "removeOwnedVolume", "deleteTopic"]);
  const other = made.filter((m) =>
    !["signalTerm", "removeContainer"].includes(m.op) && !deletions.has(m.op)
  );
  if (other.length > 0) {
    p.push(`a destroy mutated ${other.map((m) => `${m.op}(${m.key})`).join(", ")}`);
  }
  const mine = new Set([
    ...ch.runners.flatMap((r) => [r.containerId, r.applicationId, `${r.applicationId}-state`]),
    ...ch.topics,
  ]);
  const strays = made.filter((m) => !mine.has(m.key));
  if (strays.length > 0) p.push(`a destroy touched ${strays.map((m) => m.key).join(", ")}`);
  if (ch.externalTopic && !w.kafka.topics[ch.externalTopic]) {
    p.push(`the external input topic ${ch.externalTopic} was deleted`);
  }
  for (const [op, key] of made.filter((m) => deletions.has(m.op)).map((m) => [m.op, m.key])) {
    const n = made.filter((m) => m.op === op && m.key === key).length;
    if (n > 1) p.push(`${op}(${key}) made ${n} times`);
  }
  if (j.outcome !== "completed") return p;
  for (const r of ch.runners) {
    if (containersOf(w, r.applicationId).length > 0) p.push(`${r.applicationId}: containers left`);
    if (volumeOf(w, `${r.applicationId}-state`)) p.push(`${r.applicationId}: volume left`);
    if (w.kafka.groups[r.applicationId]) p.push(`${r.applicationId}: group left`);
  }
  for (const t of ch.topics) if (w.kafka.topics[t]) p.push(`topic ${t} is left`);
  const o = state.ownership as Record<string, unknown[] | undefined> | null;
  for (const k of ["runners", "retained", "topics"]) {
    if ((o?.[k] ?? []).length > 0) p.push(`ownership still records ${k}`);
  }
  if ((state.ownership?.serial as number | undefined) !== ch.setupSerial + 1) {
    p.push(`ownership serial ${state.ownership?.serial}, not ${ch.setupSerial + 1}`);
  }
  if (state.control !== null) p.push("control still pending after the destroy");
  const next = await ch.nextPlan();
  if (next.blockers > 0 || next.resumes !== 0 || !next.types.includes("create_runner")) {
    p.push(`the next plan is ${JSON.stringify(next)}, not a create from nothing`);
  }
  return p;
}
