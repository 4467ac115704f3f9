/**
 * The invariants of a predicate replacement, each read by an independent witness
 * (harness/witness.ts) and recorded as a typed assertion (probes/evidence.ts): the deployed case
 * and its "before" view, samples taken while no worker runs, and the completion checks —
 * recovery by a fresh process, serial 1 → 2, audit, one candidate of the operation, identity,
 * volume instance, one group member, topic IDs, committed offsets (never backwards, equal to the
 * clean-close vector while stopped), exact output by the predicate in force, OpenLineage events,
 * and a no-op plan afterwards. Where sluice's own view is read too, both are recorded and must
 * agree.
 *
 * @example
 * ```ts
 * import { predicateIndex } from "./invariants.ts";
 * console.log(predicateIndex({ partition: 0, offset: 5n }, [{ "0": "3" }])); // 1
 * ```
 * @module
 */
import type { EnvDescriptor } from "../harness/env.ts";
import { type FaultJourney, LOCAL_BREAK_SITE } from "../harness/faults.ts";
import type { WorkerResult } from "../harness/worker.ts";
import { containersMounting, containersOf, kafkaTools, volumeOf } from "../harness/witness.ts";
import { loadRunEventValidator, type RunEventValidator } from "../lib/lineage/validate.ts";
import {
  type CaseFixture,
  type CaseState,
  cleanupFailed,
  cli,
  NEW_PREDICATE_SQL,
  newCase,
  now,
  observeRunner,
  OLD_PREDICATE,
  type Order,
  orders,
} from "./common.ts";
import { lockOperationSite } from "../lib/protocol/state_sites.ts";
import { Recorder, type Sample, stoppedSample } from "./evidence.ts";

/** partition → committed offset (decimal). */
export type Vec = Record<string, string>;

let validator: Promise<RunEventValidator> | undefined;
/** The OpenLineage validator (official schemas), loaded once. */
export function conforms(): Promise<RunEventValidator> {
  validator ??= loadRunEventValidator();
  return validator;
}

/** A deployed case ready for its operation (shared by every case of a random-kill chain). */
export interface Deployed {
  env: EnvDescriptor;
  fx: CaseFixture;
  planPath: string;
  /** The broker container Kafka's tools run in (a case may replace the broker). */
  broker: string;
  /** What the witnesses saw before the operation. */
  before: {
    groups: string[];
    offsets: Vec;
    serial: number | null;
    topicIds: Record<string, string>;
  };
  /** The exact ID of the owned running runner before the operation. */
  oldContainerId: string;
}

/** A single-operation case: the deployment and the case's own recorder. */
export interface Prepared extends Deployed, CaseState {}

/** A fresh recorder, samples and history for one case. */
export async function caseState(fx: CaseFixture): Promise<CaseState> {
  return { fx, rec: new Recorder(await conforms()), samples: [], outcome: null, history: [] };
}

/** This case's groups among everything on the shared broker. */
function ownGroups(fx: CaseFixture, groups: string[]): string[] {
  return groups.filter((g) => g.includes(fx.project.name)).sort();
}

/** The running owned runner (exactly one), by the Docker API. */
async function theRunner(fx: CaseFixture): Promise<string> {
  const running = (await containersOf(fx.applicationId)).filter((c) => c.running);
  if (running.length !== 1) throw new Error(`expected one running runner, found ${running.length}`);
  return running[0].id;
}

/** What the witnesses see of a deployed case now (the "before" view of the next operation). */
export async function witnessBefore(
  fx: CaseFixture,
  broker: string,
): Promise<Deployed["before"]> {
  const k = await kafkaTools(broker, {
    listGroups: true,
    offsets: { group: fx.applicationId, topic: fx.project.inputTopic },
    topics: [fx.project.inputTopic, fx.project.outputTopic],
  });
  if (k.errors.length > 0) throw new Error(`Kafka tools: ${k.errors.join("; ")}`);
  const st = await fx.state();
  return {
    groups: ownGroups(fx, k.groups ?? []),
    offsets: k.offsets ?? {},
    serial: st.ownership?.serial ?? null,
    topicIds: k.topic_ids ?? {},
  };
}

/**
 * Deploy a fresh starter, produce, await the old output, plan the filter change and take the
 * witnesses' "before" view. Setup checks are recorded apart (not evidence).
 */
export async function prepareCase(
  env: EnvDescriptor,
  image: string,
  backend: "local" | "postgres",
  options: Parameters<typeof newCase>[3] = {},
): Promise<Prepared> {
  const fx = await newCase(env, image, backend, options);
  try {
    const cs = await caseState(fx);
    const before = orders("a", [50, 150, 250, 120, 300, 90, 210, 180]);
    await fx.produce(before);
    const expectOld = before.filter((o) => OLD_PREDICATE(o.value)).length;
    const warm = await fx.step("await old output", { n: expectOld }, () => fx.output(expectOld));
    cs.rec.recordSetup({
      check: "setup.old_output",
      name: "the old runner processed the first records",
      kind: "equal",
      witness: "topic-read",
      expected: expectOld,
      actual: warm.length,
    });
    const d = await planReplacement(env, fx, NEW_PREDICATE_SQL, "replace.plan.json", cs);
    return { ...d, ...cs };
  } catch (e) {
    await fx.cleanup().catch(cleanupFailed);
    throw e;
  }
}

/** `sluice plan --out planPath` in a fresh process, recorded in the fixture's history. */
export function writePlan(fx: CaseFixture, planPath: string) {
  return cli(fx.history, "cli-plan", "plan", [
    "plan",
    "--project",
    fx.project.dir,
    "--out",
    planPath,
  ], fx.workerEnv);
}

/** Change the predicate, write the reviewed plan (`sluice plan --out`), witness "before". */
export async function planReplacement(
  env: EnvDescriptor,
  fx: CaseFixture,
  predicateSql: string,
  planName: string,
  cs: CaseState,
): Promise<Deployed> {
  const broker = env.brokerContainerId;
  const witnessed = await fx.step("witness before", null, () => witnessBefore(fx, broker));
  cs.rec.recordSetup({
    check: "setup.offsets_before",
    name: "every input partition has a committed offset before the operation",
    kind: "count",
    witness: "kafka-tools",
    expected: { min: 3, max: 3 },
    actual: Object.keys(witnessed.offsets),
  });
  await fx.project.setPredicate(predicateSql);
  const planPath = `${fx.project.dir}/${planName}`;
  const planned = await writePlan(fx, planPath);
  const planData = planned.json?.data as { plan?: { format: number; actions: unknown[] } } | null;
  cs.rec.recordSetup({
    check: "setup.reviewed_plan",
    name: "the reviewed plan is format 6 with one action",
    kind: "equal",
    witness: "sluice",
    expected: { exit: 0, format: 6, actions: 1 },
    actual: {
      exit: planned.code,
      format: planData?.plan?.format ?? null,
      actions: planData?.plan?.actions.length ?? null,
    },
  });
  return {
    env,
    fx,
    planPath,
    broker,
    before: witnessed,
    oldContainerId: await theRunner(fx),
  };
}

/**
 * Sample the stage (state read directly), which containers run (Docker API) and the committed
 * offsets (Kafka's tools) while no worker runs. `awaitStopped`: first wait (bounded) until the
 * old runner has exited, for deaths after TERM was requested.
 */
export async function sample(
  d: Deployed,
  cs: CaseState,
  after: string,
  awaitStopped = false,
): Promise<Sample> {
  const { fx } = d;
  let containers = await containersOf(fx.applicationId);
  for (let i = 0; awaitStopped && i < 120; i++) {
    if (!containers.some((c) => c.id === d.oldContainerId && c.running)) break;
    await new Promise((r) => setTimeout(r, 500));
    containers = await containersOf(fx.applicationId);
  }
  const st = await fx.state();
  const k = await kafkaTools(d.broker, {
    offsets: { group: fx.applicationId, topic: fx.project.inputTopic },
  });
  const s: Sample = {
    after,
    stage: st.control?.last_checkpoint ?? null,
    old_running: containers.some((c) => c.id === d.oldContainerId && c.running),
    candidate_running: containers.some((c) => c.id !== d.oldContainerId && c.running),
    offsets: k.offsets ?? {},
    time: now(),
  };
  cs.samples.push(s);
  return s;
}

/**
 * Which predicate processed the record at `pos`: the number of clean closes (in order) whose
 * offset for its partition is at or below the record's offset.
 */
export function predicateIndex(
  pos: { partition: number; offset: bigint },
  closes: Vec[],
): number {
  return closes.filter((c) => {
    const at = c[String(pos.partition)];
    return at !== undefined && pos.offset >= BigInt(at);
  }).length;
}

/** What {@link verifyCompletion} needs from a journey. */
export type JourneyLike = Pick<FaultJourney, "operationId" | "outcome" | "blockers" | "workers">;

/** Options of {@link verifyCompletion}. */
export interface CompletionOptions {
  /** A resume found the operation pending: an incident must be kept in the audit. */
  interrupted: boolean;
  /** The predicates in force after 0, 1, 2, ... clean closes. */
  predicates: Array<(o: Order) => boolean>;
  /** Key prefix of the records produced after completion. */
  afterPrefix: string;
  /** The OpenLineage file the workers wrote to, if they were given one. */
  lineageFile?: string;
  /**
   * An accepted retention loss: the input records the deletion removed (read before it) —
   * those at or past the clean close were never processed and are expected nowhere — and the
   * positions the operator accepted, which a look while stopped may see instead of the close.
   */
  retention?: {
    deleted: Array<{ key: string; partition: number; offset: bigint }>;
    accepted: Vec;
  };
}

function workerOutcome(w: WorkerResult | undefined, killed: WorkerResult[]) {
  return {
    process: w?.process ?? null,
    command: w?.args.find((a) => a === "apply" || a === "resume") ?? null,
    exit: w?.code ?? null,
    signal: w?.signal ?? null,
    timed_out: w?.timedOut ?? false,
    pid: w?.pid ?? null,
    killed_pids: killed.map((k) => k.pid),
  };
}

/** The completion invariants after a journey, each read by an independent witness. */
export async function verifyCompletion(
  d: Deployed,
  cs: CaseState,
  j: JourneyLike,
  o: CompletionOptions,
): Promise<void> {
  const { fx } = d;
  const rec = cs.rec;
  const killed = j.workers.filter((w) => w.signal !== null);
  const completedBy =
    [...j.workers].reverse().find((w) =>
      w.code === 0 && (w.args.includes("apply") || w.args.includes("resume"))
    ) ?? j.workers.at(-1);
  cs.outcome = j.outcome === "completed" ? "completed" : j.outcome;
  rec.record({
    check: "recovery.completed",
    name: "the operation completed through the public commands, in a fresh process",
    kind: "exit-status",
    witness: "process",
    expected: { exit: 0 },
    actual: { ...workerOutcome(completedBy, killed), outcome: j.outcome, blockers: j.blockers },
  });
  await fx.produce(orders(o.afterPrefix, [150, 250, 199, 200, 500, 90, 201, 230]));

  // the state, read directly
  const st = await fx.step("witness state", null, () => fx.state());
  const opId = j.operationId;
  const receipt = st.receipts.find((r) => r.operation_id === opId) ?? null;
  const stateWitness = fx.backend === "local" ? "state-files" : "state-rows";
  rec.record({
    check: "audit.receipt",
    name: "the operation's completion receipt is in the history",
    kind: "present",
    witness: stateWitness,
    expected: [opId],
    actual: st.receipts.map((r) => r.operation_id),
  });
  const serialBefore = d.before.serial ?? -1;
  rec.record({
    check: "generation.serial",
    name: "the ownership serial incremented exactly once",
    kind: "equal",
    witness: stateWitness,
    expected: { before: serialBefore, after: serialBefore + 1 },
    actual: { before: d.before.serial, after: st.ownership?.serial ?? null },
  });
  rec.record({
    check: "state.control_cleared",
    name: "no pending control is left",
    kind: "absent",
    witness: stateWitness,
    expected: ["control"],
    actual: st.documents,
  });
  rec.record({
    check: "state.sealed_entries",
    name: "ownership and history present, every sealed entry hashes to its checksum",
    kind: "equal",
    witness: stateWitness,
    expected: { documents: ["history", "ownership"], bad_seals: [] },
    actual: { documents: st.documents, bad_seals: st.bad_seals },
  });
  const historyIncidents = st.history.filter((e) => e.kind === "incident").map((e) =>
    e.incident_id
  );
  // the incidents recorded before the receipt: a kill after the receipt was written (inside a
  // local finalize) is recorded as an incident after it, which that receipt cannot list
  const receiptAt = st.history.findIndex((e) =>
    e.kind === "runner_completed" && e.operation_id === opId
  );
  const beforeReceipt = (receiptAt < 0 ? st.history : st.history.slice(0, receiptAt))
    .filter((e) => e.kind === "incident").map((e) => e.incident_id);
  if (o.interrupted) {
    rec.record({
      check: "audit.interruption_recorded",
      name: "the resumed interruption is recorded as an incident in the history",
      kind: "count",
      witness: stateWitness,
      expected: { min: 1 },
      actual: historyIncidents,
    });
  }
  if (o.interrupted && beforeReceipt.length > 0) {
    rec.record({
      check: "audit.incidents_kept",
      name: "the interruption is kept: the receipt's incidents are all in the history",
      kind: "subset",
      witness: stateWitness,
      expected: historyIncidents,
      actual: receipt?.incident_ids ?? [],
    });
  } else {
    rec.record({
      check: "audit.no_incident",
      name: o.interrupted
        ? "a receipt written before the interruption lists no incident"
        : "an uninterrupted operation records no incident",
      kind: "count",
      witness: stateWitness,
      expected: { max: 0 },
      actual: receipt?.incident_ids ?? ["(no receipt)"],
    });
  }
  const show = await cli(fx.history, "cli-show", "state-show", [
    "state",
    "show",
    "--project",
    fx.project.dir,
  ], fx.workerEnv);
  rec.record({
    check: "state.serial_agrees",
    name: "sluice's state show reports the serial the state holds",
    kind: "agree",
    witness: `${stateWitness} vs sluice`,
    expected: { witness: stateWitness, value: st.ownership?.serial ?? null },
    actual: {
      witness: "sluice",
      value: (show.json?.data as { ownership?: { serial?: number } } | null)?.ownership?.serial ??
        null,
    },
  });

  // Docker, through the Engine API directly
  const containers = await containersOf(fx.applicationId);
  rec.record({
    check: "generation.single_candidate",
    name: "exactly one container: the running candidate of this operation",
    kind: "equal",
    witness: "docker-api",
    expected: [{ state: "running", operation: opId, generation: `${opId}/0` }],
    actual: containers.map((c) => ({
      state: c.state,
      operation: c.labels.operation,
      generation: c.labels.generation,
    })),
  });
  rec.record({
    check: "generation.old_removed",
    name: "the old runner container is gone",
    kind: "absent",
    witness: "docker-api",
    expected: [d.oldContainerId],
    actual: containers.map((c) => c.id),
  });
  const obs = await observeRunner(fx);
  const running = containers.find((c) => c.running);
  rec.record({
    check: "identity.application_id",
    name: "the same application ID",
    kind: "equal",
    witness: "docker-api",
    expected: fx.applicationId,
    actual: running?.labels.application_id ?? null,
  });
  rec.record({
    check: "identity.agrees",
    name: "sluice's observation names the application ID the container carries",
    kind: "agree",
    witness: "docker-api vs sluice",
    expected: { witness: "docker-api", value: running?.labels.application_id ?? null },
    actual: { witness: "sluice", value: obs.applicationId },
  });
  const volumeName = `${fx.applicationId}-state`;
  const mounting = await containersMounting(volumeName);
  rec.record({
    check: "volume.only_candidate_mounts",
    name: "only the running candidate mounts the state volume (no helper container left behind)",
    kind: "set-equal",
    witness: "docker-api",
    expected: running ? [{ id: running.id, role: null }] : [],
    actual: mounting.map((c) => ({ id: c.id, role: c.role })),
  });
  const volume = await volumeOf(volumeName);
  rec.record({
    check: "volume.instance_kept",
    name: "the same volume instance (label and instance file)",
    kind: "equal",
    witness: "docker-api+host-fs",
    expected: { label: fx.volumeInstance, file: fx.volumeInstance },
    actual: { label: volume.label, file: volume.file },
  });
  rec.record({
    check: "volume.agrees",
    name: "sluice's observation reads the same volume instance",
    kind: "agree",
    witness: "docker-api+host-fs vs sluice",
    expected: { witness: "docker-api+host-fs", value: { label: volume.label, file: volume.file } },
    actual: {
      witness: "sluice",
      value: { label: obs.volume.instanceLabel, file: obs.volume.instanceFile },
    },
  });

  // exact output, by the predicate in force when each input record was processed
  const deleted = o.retention?.deleted ?? [];
  const input = [...deleted, ...await fx.inputRecords()];
  const close = receipt?.close_offsets ?? null;
  /** A record the deletion removed before any runner processed it (at or past the close). */
  const lost = (r: { key: string; partition: number; offset: bigint }) =>
    deleted.some((x) => x.key === r.key) && close !== null &&
    close[String(r.partition)] !== undefined && r.offset >= BigInt(close[String(r.partition)]);
  rec.record({
    check: "output.input_complete",
    name: "every produced record is in the input topic",
    kind: "present",
    witness: "topic-read",
    expected: [...fx.produced.keys()],
    actual: input.map((r) => r.key),
  });
  const closes = st.receipts.map((r) => r.close_offsets).filter((c): c is Vec => c !== null);
  const expected: Array<{ key: string; value: unknown }> = [];
  for (const r of input) {
    const order = fx.produced.get(r.key);
    if (!order) continue; // not ours: reported by output.exact as an extra output record
    if (lost(r)) continue; // retention removed it before it was processed: accepted as lost
    const k = predicateIndex(r, closes);
    const pass = o.predicates[Math.min(k, o.predicates.length - 1)];
    if (pass(order)) {
      expected.push({
        key: r.key,
        value: { order_id: order.order_id, amount: order.amount, paid: order.paid },
      });
    }
  }
  const got = await fx.step(
    "await final output",
    { n: expected.length },
    () => fx.output(expected.length),
  );
  rec.record({
    check: "output.exact",
    name:
      "output = one record per input record passing the predicate in force when it was processed",
    kind: "set-equal",
    witness: "topic-read",
    expected,
    actual: got,
  });

  // Kafka, through its own tools
  const k = await fx.step("witness kafka", null, () =>
    kafkaTools(d.broker, {
      listGroups: true,
      offsets: { group: fx.applicationId, topic: fx.project.inputTopic },
      members: { group: fx.applicationId },
      topics: [fx.project.inputTopic, fx.project.outputTopic],
    }));
  const after = k.offsets ?? {};
  rec.record({
    check: "offsets.monotonic",
    name: "committed offsets never move backwards (before → every sample → after)",
    kind: "monotonic",
    witness: "kafka-tools",
    expected: { order: "non-decreasing per partition" },
    actual: [d.before.offsets, ...cs.samples.map((s) => s.offsets), after],
  });
  const stopped = cs.samples.filter(stoppedSample);
  if (o.retention) {
    rec.record({
      check: "offsets.stopped_close_or_retained",
      name:
        "while stopped, committed offsets are the clean-close vector or, once accepted, the accepted earliest retained positions",
      kind: "subset",
      witness: `kafka-tools+kafka-admin+${stateWitness}`,
      expected: [receipt?.close_offsets ?? null, o.retention.accepted],
      actual: stopped.map((s) => s.offsets),
    });
  } else if (stopped.length > 0) {
    rec.record({
      check: "offsets.stopped_equal_close",
      name: "while stopped, committed offsets equal the clean-close vector",
      kind: "all-equal",
      witness: `kafka-tools+${stateWitness}`,
      expected: { value: receipt?.close_offsets ?? null },
      actual: stopped.map((s) => s.offsets),
    });
  }
  rec.record({
    check: "offsets.all_processed",
    name: "the committed offsets reached the input's end offsets (every record processed)",
    kind: "equal",
    witness: "kafka-tools",
    expected: k.log_end ?? {},
    actual: after,
  });
  rec.record({
    check: "kafka.one_member",
    name: "exactly one member in the application's group",
    kind: "count",
    witness: "kafka-tools",
    expected: { min: 1, max: 1 },
    actual: (k.members ?? []).map((m) => m.client_id),
  });
  rec.record({
    check: "kafka.members_agree",
    name: "sluice's observation counts the members Kafka's tools list",
    kind: "agree",
    witness: "kafka-tools vs sluice",
    expected: { witness: "kafka-tools", value: (k.members ?? []).length },
    actual: { witness: "sluice", value: obs.kafka.group.members.length },
  });
  rec.record({
    check: "kafka.no_new_group",
    name: "no new consumer group: the case's groups after ⊆ before (the application's own)",
    kind: "subset",
    witness: "kafka-tools",
    expected: d.before.groups,
    actual: ownGroups(fx, k.groups ?? []),
  });
  rec.record({
    check: "kafka.topic_ids",
    name: "the input and output topics keep their topic IDs",
    kind: "equal",
    witness: "kafka-tools",
    expected: d.before.topicIds,
    actual: k.topic_ids ?? {},
  });

  // OpenLineage events of the workers
  if (o.lineageFile) {
    let events: Array<{ eventType?: string; run?: { runId?: string } }> = [];
    try {
      events = (await Deno.readTextFile(o.lineageFile)).trim().split("\n").filter((l) => l)
        .map((l) => JSON.parse(l));
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    rec.record({
      check: "lineage.conformant",
      name: "every emitted OpenLineage event validates against the official schemas",
      kind: "conformant",
      witness: "lineage-file",
      expected: { schema: "OpenLineage 2-0-2 RunEvent + ErrorMessageRunFacet 1-0-1" },
      actual: { events },
    });
    rec.record({
      check: "lineage.complete",
      name: "a COMPLETE event reports the verified finalization, for this operation's run",
      kind: "present",
      witness: "lineage-file",
      expected: [{ type: "COMPLETE", run: opId }],
      actual: events.map((e) => ({ type: e.eventType ?? null, run: e.run?.runId ?? null })),
    });
  }

  // a no-op plan afterwards
  const noop = await cli(fx.history, "cli-noop", "plan", [
    "plan",
    "--project",
    fx.project.dir,
  ], fx.workerEnv);
  rec.record({
    check: "plan.noop",
    name: "a no-op plan afterwards",
    kind: "equal",
    witness: "sluice",
    expected: { exit: 0, noop: true },
    actual: {
      exit: noop.code,
      noop: (noop.json?.data as { noop?: boolean } | null)?.noop ?? null,
    },
  });
}

/** The case's own kill: the worker armed at `point` died there by SIGKILL. */
export function recordKilledAtSite(
  rec: Recorder,
  armed: WorkerResult | undefined,
  point: string,
): void {
  rec.record({
    check: "fault.killed_at_site",
    name: "the worker armed at the case's site died there by SIGKILL",
    kind: "killed-by-signal",
    witness: "process",
    expected: { signal: "SIGKILL", site: point },
    actual: {
      process: armed?.process ?? null,
      signal: armed?.signal ?? null,
      fired: armed?.fired ?? null,
      exit: armed?.code ?? null,
      timed_out: armed?.timedOut ?? false,
      killed_by: armed?.killedBy ?? null,
    },
  });
}

/**
 * The first kill of a two-stage case: the apply died by SIGKILL at `site`, where only the case's
 * own continuation (a resume, an operator's decision) can go on.
 */
export function recordPreKill(
  rec: Recorder,
  j: FaultJourney,
  site: string,
  check: string,
  name: string,
): void {
  const pre = j.workers.find((w) => w.fault === site);
  rec.record({
    check,
    name,
    kind: "killed-by-signal",
    witness: "process",
    expected: { signal: "SIGKILL", site },
    actual: {
      process: pre?.process ?? null,
      signal: pre?.signal ?? null,
      fired: pre?.fired ?? null,
      timed_out: pre?.timedOut ?? false,
    },
  });
}

/**
 * Armed points at which the killed worker holds no lock of its own: before its acquire, after its
 * release, and at the break of another worker's lock.
 */
const HOLDS_NO_LOCK: ReadonlySet<string> = new Set([
  `${lockOperationSite("local", "acquire").name}:before`,
  `${lockOperationSite("local", "release").name}:after`,
  `${LOCAL_BREAK_SITE}:before`,
  `${LOCAL_BREAK_SITE}:after`,
]);

/**
 * On the local backend, the stale lock of every worker killed while holding one was broken
 * explicitly, by its ID (a worker killed before its acquire, after its release or at the break
 * of another's lock left none of its own).
 */
export function recordStaleLocksBroken(rec: Recorder, j: FaultJourney): void {
  rec.record({
    check: "lock.stale_broken_explicitly",
    name: "the stale lock of every worker killed holding one was broken explicitly, by lock ID",
    kind: "equal",
    witness: "sluice",
    expected: j.workers.filter((w) =>
      w.signal === "SIGKILL" &&
      !(w.killedAtFault && w.fault && HOLDS_NO_LOCK.has(w.fault.replace(/@\d+$/, "")))
    ).length,
    actual: j.brokenLocks.length,
  });
}

/**
 * Whether a journey found the operation pending and resumed it (an incident must be kept) —
 * unless its receipt was already archived when it died ({@link frozenAtDeath}).
 */
export function interrupted(j: FaultJourney): boolean {
  return !frozenAtDeath(j) &&
    j.shows.some((v) =>
      (v as { pending_operation?: { status?: string } } | null)?.pending_operation?.status ===
        "in_progress"
    ) && j.workers.some((w) => w.args.includes("resume"));
}

/**
 * Whether the first look after a death found the operation's completion receipt already
 * archived beside its still-pending control (a local finalize killed after its receipt): the
 * receipt freezes the terminal control, and finishing the finalization records no new incident
 * (spec: finalization never authorizes a new incident that would change the archived control).
 */
export function frozenAtDeath(j: FaultJourney): boolean {
  // the receipt must be the pending operation's own: in a chain of replacements the last event
  // of the history is the previous operation's receipt
  return j.shows[0]?.pending_operation?.receipt_archived === true;
}
