/**
 * The invariants a sweep case must keep, checked on independent reads (the world document and
 * the stored state documents, parsed directly: `reads.ts`). Each check returns a problem
 * string when it does not hold; a case passes with no problems.
 *
 * For a replacement (and its resume): the armed site fired (SIGKILL with its marker, never a
 * timeout); the operation finished, or is precisely blocked with a code the runbook documents;
 * one generation (the old runner or this operation's one candidate, never both running, never a
 * second candidate created); the same application ID and volume instance (never re-created); the
 * group's committed offsets never backwards and never positioned by sluice; ownership serial +1
 * exactly once with exactly one completion receipt (none while pending); exact output by the
 * clean-close vector. For a create: one running runner, each topic, the volume and the offsets
 * created exactly once, serial 1, no pending operation, exact output.
 *
 * @example
 * ```ts
 * import { checkReplacement } from "./invariants.ts";
 * // const problems = await checkReplacement(cw, deployed, journeyRun);
 * ```
 * @module
 */
import type { MutationRecord, World } from "../fakes/world.ts";
import {
  type CaseWorld,
  type ConnectorChange,
  type Deployed,
  NEW_PREDICATE,
  OLD_PREDICATE,
  type Order,
  orders,
  type RemovalChange,
} from "./fixture.ts";
import type { JourneyRun } from "./operator.ts";
import {
  checkpointNames,
  cleanCloseVector,
  committedOf,
  containersOf,
  historyEvents,
  readState,
  readWorldFile,
  type StoredState,
  unseal,
  volumeOf,
} from "./reads.ts";

const RUNBOOK = new URL("../../docs/runbook.md", import.meta.url);
let runbookText: string | null = null;

/** The blocker codes the runbook documents (a row of its blockers table names the code). */
export function runbookCodes(): Set<string> {
  runbookText ??= Deno.readTextFileSync(RUNBOOK);
  return new Set([...runbookText.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));
}

/** Checks common to every journey: the fault fired once, cleanly, in a writing command. */
export function checkFault(j: JourneyRun): string[] {
  const p: string[] = [];
  if (!j.fired) {
    p.push(`the armed site ${j.fault} was never crossed: no process died there`);
  }
  for (const s of j.steps) {
    if (s.timedOut) p.push(`${s.command} timed out (a timeout is never a fired fault)`);
    if (s.signal !== null && !s.killedAtFault) {
      p.push(`${s.command} died by ${s.signal} without the marker of its armed point ${s.armed}`);
    }
    if (s.command === "state show" && s.signal !== null) {
      p.push(`the read-only state show crossed ${s.fired}`);
    }
  }
  return p;
}

/** Completed, or blocked with a documented code. */
export function checkOutcome(j: JourneyRun): string[] {
  if (j.outcome === "completed") return [];
  const codes = j.codes.map((c) => c.code);
  const said = j.codes.map((c) => `${c.code}: ${c.message.split("\n")[0]}`).join("; ");
  if (j.outcome === "blocked") {
    const known = runbookCodes();
    const undocumented = codes.filter((c) => !known.has(c));
    if (codes.length > 0 && undocumented.length === 0) return [];
    return [`blocked with a code the runbook does not document: ${said}`];
  }
  return [`stranded: the recovery ended ${j.outcome} (${said || "no error"})`];
}

function monotonic(chain: Array<Record<string, bigint>>): string[] {
  const p: string[] = [];
  for (let i = 1; i < chain.length; i++) {
    for (const [part, off] of Object.entries(chain[i - 1])) {
      const next = chain[i][part];
      if (next === undefined) p.push(`partition ${part} lost its committed offset (sample ${i})`);
      else if (next < off) {
        p.push(`partition ${part} moved backwards ${off} → ${next} (sample ${i})`);
      }
    }
  }
  return p;
}

function since(w: World, seq: number, by: Array<MutationRecord["by"]>): MutationRecord[] {
  return w.log.filter((m) => m.seq > seq && by.includes(m.by));
}

/** The output topic's records as [key, value] (each parsed). */
function outputOf(w: World, topic: string): Array<[string, unknown]> {
  const t = w.kafka.topics[topic];
  if (!t) return [];
  return t.partitions.flatMap((part) =>
    part.records.map((r) =>
      [r.key ?? "", r.value === null ? null : JSON.parse(r.value)] as [
        string,
        unknown,
      ]
    )
  );
}

/** The input position of each produced key. */
function inputPositions(
  w: World,
  topic: string,
): Map<string, { partition: number; offset: bigint }> {
  const out = new Map<string, { partition: number; offset: bigint }>();
  w.kafka.topics[topic]?.partitions.forEach((part, i) => {
    for (const r of part.records) {
      if (r.key !== null) out.set(r.key, { partition: i, offset: BigInt(r.offset) });
    }
  });
  return out;
}

function project(o: Order) {
  return { order_id: o.order_id, amount: o.amount, paid: o.paid };
}

/** Input records retention deleted while the operation was stopped (key → position). */
export type Deleted = Map<string, { partition: number; offset: bigint }>;

/**
 * Delete every partition of the input topic up to its latest offset (retention overtaking a
 * stopped operation), returning the deleted records' positions, read before the deletion.
 *
 * @example
 * ```ts
 * import { expireInput } from "./invariants.ts";
 * // const deleted = expireInput(cw);
 * ```
 */
export function expireInput(cw: CaseWorld): Deleted {
  const w = readWorldFile(cw.worldPath);
  const deleted = inputPositions(w, cw.project.inputTopic);
  w.kafka.topics[cw.project.inputTopic].partitions.forEach((part, i) => {
    cw.world.control.deleteRecords(cw.project.inputTopic, i, BigInt(part.latest));
  });
  return deleted;
}

/**
 * Exact output: each record once, filtered by the predicate in force when it was processed;
 * a deleted record that no runner processed (not old) is expected nowhere.
 */
function checkOutput(
  cw: CaseWorld,
  w: World,
  byOld: (key: string, pos: { partition: number; offset: bigint } | undefined) => boolean,
  deleted: Deleted = new Map(),
): string[] {
  const positions = new Map([...deleted, ...inputPositions(w, cw.project.inputTopic)]);
  const expected = [...cw.produced.values()]
    .filter((o) => !deleted.has(o.order_id) || byOld(o.order_id, positions.get(o.order_id)))
    .filter((o) =>
      byOld(o.order_id, positions.get(o.order_id)) ? OLD_PREDICATE(o) : NEW_PREDICATE(o)
    )
    .map((o) => JSON.stringify([o.order_id, project(o)])).sort();
  const got = outputOf(w, cw.project.outputTopic).map((x) => JSON.stringify(x)).sort();
  if (JSON.stringify(expected) === JSON.stringify(got)) return [];
  const missing = expected.filter((x) => !got.includes(x));
  const extra = got.filter((x, i) => !expected.includes(x) || got.indexOf(x) !== i);
  return [
    `output differs from the records passing the predicate in force: missing ${missing.length} ${
      missing.slice(0, 3).join(" ")
    }, unexpected or duplicated ${extra.length} ${extra.slice(0, 3).join(" ")}`,
  ];
}

function serialOf(s: StoredState): number | null {
  return (s.ownership?.serial as number | undefined) ?? null;
}

/** Let the simulated runners catch up (a read of the world through the fake moves it to now). */
function settle(cw: CaseWorld): World {
  cw.world.control.snapshot();
  return readWorldFile(cw.worldPath);
}

/**
 * The invariants of a replacement case (and of a resume case).
 *
 * @example
 * ```ts
 * import { checkReplacement } from "./invariants.ts";
 * // (await checkReplacement(cw, deployed, j)).length === 0
 * ```
 */
export async function checkReplacement(
  cw: CaseWorld,
  d: Deployed,
  j: JourneyRun,
  before: Record<string, bigint>,
  /** An accepted retention loss: the records it deleted (their offsets may be moved once). */
  deleted?: Deleted,
): Promise<string[]> {
  const p = [...checkFault(j), ...checkOutcome(j)];
  const app = cw.applicationId;
  const opId = j.operationId;
  const candidateName = opId ? `${app}.op-${opId}.a0` : null;
  if (j.outcome === "completed") cw.produce(orders("c", [150, 250, 199, 200, 500, 90, 201, 230]));
  const w = settle(cw);
  const state = await readState(cw.state);

  // one generation
  const containers = containersOf(w, app);
  const strangers = containers.filter((c) => c.id !== d.oldContainerId && c.name !== candidateName);
  if (strangers.length > 0) {
    p.push(
      `containers of another generation carry the application ID: ${strangers.map((c) => c.name)}`,
    );
  }
  const running = containers.filter((c) => c.state.running);
  if (running.length > 1) p.push(`${running.length} containers of ${app} run at once`);
  const mutations = since(w, d.setupLogSeq, ["docker", "kafka"]);
  const creates = mutations.filter((m) => m.op === "createContainer");
  if (creates.length > 1 || creates.some((m) => m.key !== candidateName)) {
    p.push(`containers created: ${creates.map((m) => m.key).join(", ")} (one candidate at most)`);
  }
  const forbidden = mutations.filter((m) =>
    ["createVolume", "removeVolume", "setGroupOffsets", "createTopic", "deleteTopic"].includes(m.op)
  );
  // an accepted retention loss moves the group's positions once, to the earliest retained
  const moves = deleted ? forbidden.filter((m) => m.op === "setGroupOffsets") : [];
  if (moves.length > 1) p.push(`the accepted positions were moved ${moves.length} times`);
  if (forbidden.length > moves.length) {
    p.push(
      `a replacement made ${
        forbidden.filter((m) => !moves.includes(m)).map((m) => `${m.op}(${m.key})`).join(", ")
      }`,
    );
  }
  if (deleted && j.outcome === "completed" && moves.length !== 1) {
    p.push("a retention loss was accepted and resumed, but the positions were never moved");
  }
  const removed = mutations.filter((m) => m.op === "removeContainer");
  if (removed.some((m) => m.key !== d.oldContainerId) || removed.length > 1) {
    p.push(`containers removed: ${removed.map((m) => m.key).join(", ")} (the old one, once)`);
  }

  // same application ID and volume instance
  const vol = volumeOf(w, `${app}-state`);
  if (!vol) p.push("the state volume is gone");
  else if (vol.label !== d.volumeInstance || vol.file !== d.volumeInstance) {
    p.push(`volume instance ${vol.label}/${vol.file}, not ${d.volumeInstance}`);
  }
  const ownedRunner = (state.ownership?.runners as Array<Record<string, unknown>> | undefined)?.[0];
  if (
    ownedRunner?.application_id !== app ||
    (ownedRunner?.volume as { instance_id?: string } | undefined)?.instance_id !== d.volumeInstance
  ) {
    p.push(`ownership names ${JSON.stringify(ownedRunner)}, not ${app} on ${d.volumeInstance}`);
  }

  // offsets never backwards
  const final = committedOf(w, app, cw.project.inputTopic);
  p.push(...monotonic([before, ...j.samples.map((s) => s.offsets), final]));

  // serial +1 exactly once, one receipt, control cleared when completed
  const events = historyEvents(state);
  const receipts = events.filter((e) => e.kind === "runner_completed");
  const serial = serialOf(state);
  const pendingId = (state.control?.operation_id as string | undefined) ?? null;
  if (j.outcome === "completed") {
    if (serial !== 2) p.push(`ownership serial ${serial}, not 2 (1 + exactly one increment)`);
    if (state.control !== null) p.push(`control still pending (${pendingId}) after completion`);
    if (receipts.length !== 1 || receipts[0].operation_id !== opId) {
      p.push(`${receipts.length} completion receipts, expected exactly one for ${opId}`);
    } else if (receipts[0].result_serial !== 2 || receipts[0].prior_serial !== 1) {
      p.push(`receipt serials ${receipts[0].prior_serial} → ${receipts[0].result_serial}`);
    }
    if (cw.backend === "local" && state.lockFile) p.push("lock.json left after completion");
    const only = running[0];
    if (!only || only.name !== candidateName || containers.length !== 1) {
      p.push(
        `after completion: ${
          containers.map((c) => `${c.name}(${c.state.status})`)
        }, expected only the running ${candidateName}`,
      );
    } else if (only.labels["sluice.generation"] !== `${opId}/0`) {
      p.push(`the candidate's generation label is ${only.labels["sluice.generation"]}`);
    }
    const receiptControl = receipts[0]
      ? unseal<Record<string, unknown>>(receipts[0].terminal_control)
      : null;
    const close = cleanCloseVector(receiptControl);
    if (!close) p.push("the receipt's terminal control has no old_closed offsets");
    else {
      p.push(
        ...checkOutput(
          cw,
          w,
          (_k, pos) => pos !== undefined && pos.offset < (close[String(pos.partition)] ?? 0n),
          deleted,
        ),
      );
      const total = Object.values(final).reduce((a, b) => a + b, 0n);
      if (total !== BigInt(cw.produced.size)) {
        p.push(`committed offsets account for ${total} records, ${cw.produced.size} were produced`);
      }
    }
  } else {
    if (receipts.length > 0) {
      p.push(
        `a completion receipt is archived but the operation is not finished (serial ${serial}, control ${
          pendingId ?? "cleared"
        }, checkpoints ${checkpointNames(state.control).join(",")})`,
      );
    } else if (serial !== 1) p.push(`ownership serial ${serial} changed without a receipt`);
  }
  return p;
}

/**
 * The invariants of a create case.
 *
 * @example
 * ```ts
 * import { checkCreate } from "./invariants.ts";
 * // (await checkCreate(cw, j)).length === 0
 * ```
 */
export async function checkCreate(cw: CaseWorld, j: JourneyRun): Promise<string[]> {
  const p = [...checkFault(j), ...checkOutcome(j)];
  const app = cw.applicationId;
  if (j.outcome === "completed") cw.produce(orders("c", [50, 150, 250, 120, 300]));
  const w = settle(cw);
  const state = await readState(cw.state);
  const mutations = since(w, 0, ["docker", "kafka"]);
  const count = (op: string, key?: string) =>
    mutations.filter((m) => m.op === op && (key === undefined || m.key === key)).length;
  for (const topic of [cw.project.inputTopic, cw.project.outputTopic]) {
    if (count("createTopic", topic) > 1) {
      p.push(`topic ${topic} created ${count("createTopic", topic)} times`);
    }
  }
  if (count("createVolume") > 1) {
    p.push(`the state volume was created ${count("createVolume")} times`);
  }
  if (count("setGroupOffsets") > 1) {
    p.push(`the group's offsets were positioned ${count("setGroupOffsets")} times (a reset)`);
  }
  if (count("createContainer") > 1) {
    p.push(`${count("createContainer")} runner containers were created`);
  }
  if (count("removeContainer") + count("removeVolume") + count("deleteTopic") > 0) {
    p.push("a create removed something");
  }
  if (j.outcome !== "completed") return p;

  const containers = containersOf(w, app);
  if (containers.length !== 1 || !containers[0].state.running || containers[0].name !== app) {
    p.push(
      `containers of ${app}: ${
        containers.map((c) => `${c.name}(${c.state.status})`)
      }, expected one running`,
    );
  }
  for (const topic of [cw.project.inputTopic, cw.project.outputTopic]) {
    if (!w.kafka.topics[topic]) p.push(`topic ${topic} is missing`);
  }
  const serial = serialOf(state);
  if (serial !== 1) p.push(`ownership serial ${serial}, not 1`);
  if (state.control !== null) p.push("control still pending after the create completed");
  const commits = historyEvents(state).filter((e) => e.kind === "ownership_committed");
  if (commits.length !== 1 || commits[0].serial !== 1) {
    p.push(
      `history has ${commits.length} ownership commits (${
        commits.map((c) => c.serial)
      }), expected serial 1 once`,
    );
  }
  const vol = volumeOf(w, `${app}-state`);
  const owned = (state.ownership?.runners as Array<{ volume: { instance_id: string } }> | undefined)
    ?.[0];
  if (!vol || !vol.label || vol.label !== vol.file || vol.label !== owned?.volume.instance_id) {
    p.push(
      `volume instance label ${vol?.label} / file ${vol?.file} / ownership ${owned?.volume.instance_id}`,
    );
  }
  if (cw.backend === "local" && state.lockFile) p.push("lock.json left after completion");
  p.push(...checkOutput(cw, w, () => true));
  return p;
}

/**
 * The invariants of an abandonment case: the operator's decision changes nothing outside the
 * state — no Docker or Kafka mutation after the stopped apply died (`deathSeq`), the offsets as
 * the death left them, nothing running — and is recorded exactly once: control cleared, one
 * `operation_abandoned` event for the operation, ownership serial unchanged, no receipt.
 *
 * @example
 * ```ts
 * import { checkAbandon } from "./invariants.ts";
 * // (await checkAbandon(cw, j, deathSeq)).length === 0
 * ```
 */
export async function checkAbandon(
  cw: CaseWorld,
  j: JourneyRun,
  deathSeq: number,
): Promise<string[]> {
  const p = [...checkFault(j), ...checkOutcome(j)];
  const app = cw.applicationId;
  const w = settle(cw);
  const state = await readState(cw.state);
  const after = since(w, deathSeq, ["docker", "kafka"]);
  if (after.length > 0) {
    p.push(`the abandonment mutated ${after.map((m) => `${m.op}(${m.key})`).join(", ")}`);
  }
  const running = containersOf(w, app).filter((c) => c.state.running);
  if (running.length > 0) p.push(`${running.map((c) => c.name)} run after the abandonment`);
  const atDeath = j.samples[0]?.offsets;
  const final = committedOf(w, app, cw.project.inputTopic);
  if (
    atDeath && JSON.stringify(Object.entries(atDeath).map(([k, v]) => [k, String(v)])) !==
      JSON.stringify(Object.entries(final).map(([k, v]) => [k, String(v)]))
  ) {
    p.push("the committed offsets moved after the stopped apply died");
  }
  const events = historyEvents(state);
  const serial = serialOf(state);
  if (serial !== 1) p.push(`ownership serial ${serial}, not 1 (an abandonment changes no owner)`);
  if (events.some((e) => e.kind === "runner_completed")) p.push("a completion receipt exists");
  const abandoned = events.filter((e) => e.kind === "operation_abandoned");
  if (j.outcome === "completed") {
    if (state.control !== null) p.push("control still pending after the abandonment");
    if (abandoned.length !== 1 || abandoned[0].operation_id !== j.operationId) {
      p.push(`${abandoned.length} abandonment events, expected one for ${j.operationId}`);
    }
  } else if (abandoned.length > 1) p.push(`${abandoned.length} abandonment events`);
  if (cw.backend === "local" && j.outcome === "completed" && state.lockFile) {
    p.push("lock.json left after the abandonment");
  }
  return p;
}

/**
 * The invariants of a connector case: each Connect mutation of the plan exactly once across
 * every process, no runtime mutation, the connectors held and owned as planned, ownership +1
 * exactly once, control cleared, the next plan a no-op.
 *
 * @example
 * ```ts
 * import { checkConnector } from "./invariants.ts";
 * // (await checkConnector(cw, j, change)).length === 0
 * ```
 */
export async function checkConnector(
  cw: CaseWorld,
  j: JourneyRun,
  ch: ConnectorChange,
): Promise<string[]> {
  const p = [...checkFault(j), ...checkOutcome(j)];
  const w = settle(cw);
  const state = await readState(cw.state);
  const runtime = since(w, ch.setupLogSeq, ["docker", "kafka"]);
  const made = since(w, ch.setupLogSeq, ["connect"]).map((m) => `${m.op} ${m.key}`);
  if (j.outcome !== "completed") {
    const twice = made.filter((m, i) => made.indexOf(m) !== i);
    if (twice.length > 0) p.push(`Connect mutations made twice: ${twice.join(", ")}`);
    return p;
  }
  if (JSON.stringify(made) !== JSON.stringify(ch.expected)) {
    p.push(`Connect mutations ${JSON.stringify(made)}, expected ${JSON.stringify(ch.expected)}`);
  }
  if (runtime.length > 0) {
    p.push(`a connector change mutated ${runtime.map((m) => `${m.op}(${m.key})`).join(", ")}`);
  }
  const held = Object.keys(w.connect?.connectors ?? {}).sort();
  if (JSON.stringify(held) !== JSON.stringify([...ch.held].sort())) {
    p.push(`connectors held ${held}, expected ${ch.held}`);
  }
  const owned = ((state.ownership?.connectors as Array<{ name: string }> | undefined) ?? [])
    .map((o) => o.name).sort();
  if (JSON.stringify(owned) !== JSON.stringify(held)) {
    p.push(`connectors owned ${owned}, held ${held}`);
  }
  const serial = serialOf(state);
  if (serial !== ch.setupSerial + 1) {
    p.push(`ownership serial ${serial}, not ${ch.setupSerial + 1} (exactly one increment)`);
  }
  if (state.control !== null) p.push("control still pending after the connector change");
  if (cw.backend === "local" && state.lockFile) p.push("lock.json left after completion");
  const next = await ch.nextPlan();
  if (next.actions > 0 || next.blockers > 0) {
    p.push(`the next plan has ${next.actions} actions and ${next.blockers} blockers, not a no-op`);
  }
  return p;
}

/**
 * The invariants of a runner-removal case: nothing but the bound generation was stopped and
 * removed, never twice, and nothing else mutated (no volume, topic or group offset touched); a
 * completed removal leaves no container of the model, the volume with its instance, the group's
 * committed offsets at least where the plan saw them and exactly the output the runner produced
 * up to them (each record once, none beyond), ownership one serial later without the runner but
 * with its topics, the spare model still running, no pending control, and a next plan that is a
 * no-op.
 *
 * @example
 * ```ts
 * import { checkRemoval } from "./invariants.ts";
 * // const problems = await checkRemoval(cw, journey, change);
 * ```
 */
export async function checkRemoval(
  cw: CaseWorld,
  j: JourneyRun,
  ch: RemovalChange,
): Promise<string[]> {
  const p = [...checkFault(j), ...checkOutcome(j)];
  const w = settle(cw);
  const state = await readState(cw.state);
  const app = cw.applicationId;
  const made = since(w, ch.setupLogSeq, ["docker", "kafka"]);
  const allowed = new Set(["signalTerm", "removeContainer"]);
  const other = made.filter((m) => !allowed.has(m.op));
  if (other.length > 0) {
    p.push(`a removal mutated ${other.map((m) => `${m.op}(${m.key})`).join(", ")}`);
  }
  const removes = made.filter((m) => m.op === "removeContainer");
  if (removes.length > 1) p.push(`the container was removed ${removes.length} times`);
  if (made.some((m) => m.key !== ch.containerId && m.key.includes(ch.spareApplicationId))) {
    p.push("a removal touched the spare model's runner");
  }
  const vol = volumeOf(w, `${app}-state`);
  if (!vol || vol.label !== ch.volumeInstance || vol.file !== ch.volumeInstance) {
    p.push(`the state volume is ${vol ? `instance ${vol.label}/${vol.file}` : "gone"}, not kept`);
  }
  for (const t of [cw.project.inputTopic, cw.project.outputTopic]) {
    if (!w.kafka.topics[t]) p.push(`topic ${t} is gone`);
  }
  const committed = committedOf(w, app, cw.project.inputTopic);
  for (const [part, off] of Object.entries(ch.committedAtPlan)) {
    if (committed[part] === undefined || committed[part] < off) {
      p.push(`partition ${part}: committed ${committed[part]} is behind the plan's ${off}`);
    }
  }
  // exactly the records up to the kept offsets, each once (the rest is resumed from them)
  const positions = inputPositions(w, cw.project.inputTopic);
  const processed = (key: string) => {
    const pos = positions.get(key);
    return pos !== undefined && pos.offset < (committed[String(pos.partition)] ?? 0n);
  };
  const expected = [...cw.produced.values()].filter((o) => processed(o.order_id))
    .filter(OLD_PREDICATE).map((o) => JSON.stringify([o.order_id, project(o)])).sort();
  const got = outputOf(w, cw.project.outputTopic).map((x) => JSON.stringify(x)).sort();
  if (JSON.stringify(expected) !== JSON.stringify(got)) {
    p.push(`output ${got.length} records, expected ${expected.length} up to the kept offsets`);
  }
  if (j.outcome !== "completed") return p;
  const left = containersOf(w, app);
  if (left.length > 0) p.push(`containers of ${app} left: ${left.map((c) => c.name)}`);
  if (removes.length !== 1) p.push(`the container was removed ${removes.length} times, not once`);
  const spare = containersOf(w, ch.spareApplicationId);
  if (spare.length !== 1 || !spare[0].state.running) p.push("the spare runner is not running");
  const runners = (state.ownership?.runners as Array<{ application_id: string }> | undefined) ?? [];
  if (runners.map((r) => r.application_id).join() !== ch.spareApplicationId) {
    p.push(`owned runners ${runners.map((r) => r.application_id)}, expected the spare only`);
  }
  const topics = (state.ownership?.topics as Array<{ name: string }> | undefined) ?? [];
  for (const t of [cw.project.inputTopic, cw.project.outputTopic]) {
    if (!topics.some((x) => x.name === t)) p.push(`topic ${t} is no longer owned`);
  }
  const kept = (state.ownership?.retained as
    | Array<{ application_id: string; volume: { instance_id: string } }>
    | undefined) ?? [];
  if (
    kept.length !== 1 || kept[0].application_id !== app ||
    kept[0].volume.instance_id !== ch.volumeInstance
  ) {
    p.push(`ownership keeps ${JSON.stringify(kept)}, not the removed runner's volume and group`);
  }
  const serial = serialOf(state);
  if (serial !== ch.setupSerial + 1) {
    p.push(`ownership serial ${serial}, not ${ch.setupSerial + 1} (exactly one increment)`);
  }
  if (state.control !== null) p.push("control still pending after the removal");
  if (cw.backend === "local" && state.lockFile) p.push("lock.json left after completion");
  const next = await ch.nextPlan();
  if (next.actions > 0 || next.blockers > 0) {
    p.push(`the next plan has ${next.actions} actions and ${next.blockers} blockers, not a no-op`);
  }
  return p;
}

/** The lock codes a process that lost its lock may answer with (exit 5). */
const LOCK_CODES = new Set(["STATE_LOCK_LOST", "STATE_LOCK_HELD", "STATE_LOCK_NOT_STALE"]);

/**
 * The invariants of the lock-loss pass, on what the process that lost its lock at the case's
 * site did ({@link JourneyRun.lockLoss}); the journey's own invariants (checked beside these) say
 * the recovery that followed finished exact. The process stops at once: no provider mutation
 * after the loss (on the `before` side of a provider site, its own call was authorized before
 * the loss and is not counted), no state document written after it (but the file a local write
 * was in the middle of: each file is replaced whole and the next one verifies the lock first).
 * Its answer is the end of its work (exit 0: all of it was done before the loss), a blocker
 * (exit 4), the lock's refusal (exit 5), or an unknown outcome (exit 6, `committed: null`) that
 * names the operation; and when an operation was pending at the loss and the command line did
 * not name it (`apply --plan`), a lost lock or an unknown outcome names that operation — the
 * operator is never left with a bare "lock lost" while an operation of theirs is pending.
 *
 * @example
 * ```ts
 * import { checkLockLoss } from "./invariants.ts";
 * // const problems = checkLockLoss(c, journeyRun);
 * ```
 */
export function checkLockLoss(
  c: { site: string; side: string },
  j: JourneyRun,
): string[] {
  const loss = j.lockLoss;
  if (!loss) return []; // checkFault says the site was never crossed
  const p: string[] = [];
  const at = `after losing its lock at ${loss.point}`;
  if (loss.after.length > 0) {
    p.push(
      `${at} the process mutated ${loss.after.map((m) => `${m.by}.${m.op}(${m.key})`).join(", ")}`,
    );
  }
  const inFlight = /^state\.local\.[a-z_]+\.(ownership|control|history)\./.exec(c.site)?.[1];
  const written = loss.changed.filter((d) => d !== inFlight);
  if (written.length > 0) p.push(`${at} the process wrote ${written.join(", ")}`);
  const step = j.steps.find((s) => s.fired === loss.point && s.signal === null);
  if (!step) return [...p, `${at}: no step of the journey records the process that lost it`];
  const codes = step.errors.map((e) => e.code);
  const said = `${step.command} answered exit ${step.code} ${codes.join(",")}`;
  if (step.code === 0) return p;
  if (step.code === 5 && !codes.every((x) => LOCK_CODES.has(x))) {
    p.push(`${at}: ${said}, not a lock code`);
  } else if (step.code === 6 && (loss.named ?? loss.given) === null) {
    p.push(`${at}: ${said}, an unknown outcome that names no operation`);
  } else if (![4, 5, 6].includes(step.code)) {
    p.push(`${at}: ${said}, neither a blocker, the lock's refusal nor an unknown outcome`);
  }
  const lostOrUnknown = step.code === 6 || codes.includes("STATE_LOCK_LOST");
  if (
    loss.pendingAtLoss !== null && loss.given !== loss.pendingAtLoss && lostOrUnknown &&
    loss.named !== loss.pendingAtLoss
  ) {
    p.push(
      `${at} (operation ${loss.pendingAtLoss} pending): ${said}, naming ${
        loss.named ?? "no operation"
      }`,
    );
  }
  return p;
}
