/**
 * The create and connector journeys of the real fault matrix (probes/fault_matrix.ts arms each
 * site in the journey that first crosses it; `matrixJourney` in catalogue.ts says which).
 *
 * - **create**: a fresh starter project with nothing deployed; `plan --out` (armed itself for
 *   the store's `init` writes) and `apply --plan` armed at the case's site, killed there by
 *   SIGKILL; then, each a fresh process, `state show` and the same `apply --plan` again
 *   (breaking a dead worker's stale lock by its ID) until it exits 0 or names a precise
 *   blocker. Invariants: exactly one running container for the application ID, of this
 *   operation, mounting the created volume (label = instance file = ownership's record); the
 *   group's committed offsets at the initial positions at every look (never a reset); each
 *   topic created once (the ID seen after a death is the one after recovery and in ownership);
 *   ownership serial 1; no pending control; produced records → exact output; the same
 *   `apply --plan` again is a verified no-op; a no-op plan.
 * - **connector**: a deployed starter on the environment's Connect worker and a plan with a
 *   connector change (the create of both pipeline connectors, a reviewed update of the sink's
 *   config, or the declared removal of the sink; `connectorChange` in catalogue.ts), its
 *   `apply --plan` armed at the site, continued by the same `apply --plan` again. Invariants:
 *   each declared connector exists exactly once with the owned config (Connect's REST API read
 *   directly), or the removed one is gone while its topics and the runner stay; ownership
 *   records exactly the declared connectors; serial + 1 exactly once; no pending control; a
 *   no-op plan.
 *
 * @example
 * ```ts
 * import { expectedConnectorConfigs } from "./matrix_journeys.ts";
 * console.log(Object.keys(expectedConnectorConfigs({
 *   project: "p", inputTopic: "in", outputTopic: "out", dataDir: "/data", sinkExtra: {},
 * })));
 * ```
 * @module
 */
import type { EnvDescriptor } from "../harness/env.ts";
import { type FaultJourney, runApplyAgainJourney, runOperatorJourney } from "../harness/faults.ts";
import { offsetRange, withAdmin } from "../harness/kafka.ts";
import {
  connectorsSection,
  declareSinkRemoved,
  pipelineConnectorNames,
  pipelineFiles,
} from "../harness/pipeline.ts";
import { connectRead } from "../harness/connect.ts";
import { containersMounting, containersOf, kafkaTools, volumeOf } from "../harness/witness.ts";
import type { StateWitness } from "../harness/witness.ts";
import type { WorkerResult } from "../harness/worker.ts";
import {
  armsPlan,
  type ConnectorChange,
  connectorChange,
  operatorDecision,
  PRE_OPERATOR_FAULT,
} from "./catalogue.ts";
import {
  caseEvidence,
  type CaseFixture,
  type CaseState,
  cli,
  NEW_PREDICATE,
  newCase,
  OLD_PREDICATE,
  type Order,
  orders,
} from "./common.ts";
import type { CaseEvidence } from "./evidence.ts";
import {
  caseState,
  interrupted,
  prepareCase,
  type Prepared,
  recordKilledAtSite,
  recordPreKill,
  recordStaleLocksBroken,
  sample,
  type Vec,
  verifyCompletion,
} from "./invariants.ts";

/** One matrix case. */
export interface MatrixCase {
  boundary: string;
  side: "before" | "after";
  backend: "local" | "postgres";
}

/** The initial positions of the starter's new input topic (three partitions, from 0). */
export const INITIAL_POSITIONS: Record<string, string> = { "0": "0", "1": "0", "2": "0" };

/** The sink's extra config key an update case sets (a reviewed config update). */
export const SINK_UPDATE = { key: "consumer.override.max.poll.records", value: "100" };

/** The state read directly, or null when there is none (yet). */
export async function stateOrNull(fx: CaseFixture): Promise<StateWitness | null> {
  try {
    return await fx.state();
  } catch {
    return null;
  }
}

function workerOutcome(w: WorkerResult | undefined, killed: WorkerResult[], f: string) {
  return {
    process: w?.process ?? null,
    command: w?.args.find((a) => a === f || a === "plan") ?? null,
    exit: w?.code ?? null,
    signal: w?.signal ?? null,
    timed_out: w?.timedOut ?? false,
    pid: w?.pid ?? null,
    killed_pids: killed.map((k) => k.pid),
  };
}

/**
 * The armed worker's outcome, and the completion by the same command (`f`: `apply` by default)
 * in a fresh process (common to the journeys continued by the same command again).
 */
export function recordJourney(cs: CaseState, j: FaultJourney, point: string, f = "apply") {
  const armed = j.workers.find((w) => w.fault === point);
  recordKilledAtSite(cs.rec, armed, point);
  const killed = j.workers.filter((w) => w.signal !== null);
  const completedBy = [...j.workers].reverse().find((w) => w.code === 0 && w.args.includes(f)) ??
    j.workers.at(-1);
  cs.outcome = j.outcome;
  cs.rec.record({
    check: "recovery.completed",
    name: `the same ${f}, run again in a fresh process, completed the operation`,
    kind: "exit-status",
    witness: "process",
    expected: { exit: 0 },
    actual: { ...workerOutcome(completedBy, killed, f), outcome: j.outcome, blockers: j.blockers },
  });
  if (killed.length > 0) {
    cs.rec.record({
      check: "lock.stale_broken_explicitly",
      name: "a killed worker's stale lock was broken explicitly, by its lock ID (if one was left)",
      kind: "count",
      witness: "sluice",
      expected: { max: killed.length },
      actual: j.brokenLocks,
    });
  }
}

/**
 * `output.exact` of records all processed under the starter's predicate: the output topic holds
 * one record per produced record passing {@link OLD_PREDICATE}, each once (read from the topic).
 */
export async function recordStarterOutput(
  cs: CaseState,
  produced: Array<{ key: string; value: Order }>,
  name: string,
) {
  const expected = produced.filter((o) => OLD_PREDICATE(o.value)).map((o) => ({
    key: o.key,
    value: { order_id: o.value.order_id, amount: o.value.amount, paid: o.value.paid },
  }));
  const got = await cs.fx.step(
    "await output",
    { n: expected.length },
    () => cs.fx.output(expected.length),
  );
  cs.rec.record({
    check: "output.exact",
    name,
    kind: "set-equal",
    witness: "topic-read",
    expected,
    actual: got,
  });
}

/**
 * No pending control, every sealed entry intact, and a no-op plan afterwards (`noop`: the plan's
 * extra arguments and the check's words, for a journey whose no-op is another plan's, such as
 * `plan --destroy`).
 */
export async function recordCommon(
  cs: CaseState,
  fx: CaseFixture,
  st: StateWitness | null,
  noop: { args: readonly string[]; name: string } = { args: [], name: "a no-op plan afterwards" },
) {
  const stateWitness = fx.backend === "local" ? "state-files" : "state-rows";
  cs.rec.record({
    check: "state.control_cleared",
    name: "no pending control is left",
    kind: "absent",
    witness: stateWitness,
    expected: ["control"],
    actual: st?.documents ?? ["(no state)"],
  });
  cs.rec.record({
    check: "state.sealed_entries",
    name: "every sealed entry hashes to its checksum",
    kind: "equal",
    witness: stateWitness,
    expected: [],
    actual: st?.bad_seals ?? ["(no state)"],
  });
  const planned = await cli(fx.history, "cli-noop", "plan", [
    "plan",
    "--project",
    fx.project.dir,
    ...noop.args,
  ], fx.workerEnv);
  cs.rec.record({
    check: "plan.noop",
    name: noop.name,
    kind: "equal",
    witness: "sluice",
    expected: { exit: 0, noop: true },
    actual: {
      exit: planned.code,
      noop: (planned.json?.data as { noop?: boolean } | null)?.noop ?? null,
    },
  });
}

/** A matrix case's identity, its params after `site` (the journey's own). */
export function matrixCaseMeta(c: MatrixCase, runId: string, params: Record<string, unknown>) {
  const point = `${c.boundary}:${c.side}`;
  return {
    id: `${point}:${c.backend}`,
    kind: "matrix" as const,
    run_id: runId,
    boundary: c.boundary,
    side: c.side,
    backend: c.backend,
    params: { site: point, ...params },
  };
}

function caseMeta(c: MatrixCase, runId: string, journey: "create" | "connector") {
  return matrixCaseMeta(c, runId, {
    journey,
    ...(journey === "create"
      ? { arms: armsPlan(c.boundary) ? "plan" : "apply" }
      : { change: connectorChange(c.boundary) }),
  });
}

/** One create case (see module docs). */
export function runCreateCase(
  env: EnvDescriptor,
  image: string,
  c: MatrixCase,
  runId: string,
): Promise<CaseEvidence> {
  const point = `${c.boundary}:${c.side}`;
  return caseEvidence(
    caseMeta(c, runId, "create"),
    async () => {
      const fx = await newCase(env, image, c.backend, { deploy: false });
      return await caseState(fx);
    },
    async (cs) => {
      const { fx } = cs;
      const planPath = `${fx.project.dir}/create.plan.json`;
      const armPlan = armsPlan(c.boundary);
      if (!armPlan) {
        const planned = await cli(fx.history, "cli-plan", "plan", [
          "plan",
          "--project",
          fx.project.dir,
          "--out",
          planPath,
        ], fx.workerEnv);
        const plan = (planned.json?.data as { plan?: { actions: Array<{ type: string }> } })
          ?.plan;
        cs.rec.recordSetup({
          check: "setup.create_plan",
          name: "the create plan creates the two topics and the runner",
          kind: "equal",
          witness: "sluice",
          expected: { exit: 0, actions: ["create_topic", "create_topic", "create_runner"] },
          actual: { exit: planned.code, actions: plan?.actions.map((a) => a.type) ?? null },
        });
      }
      const before = await stateOrNull(fx);
      const topics = [fx.project.inputTopic, fx.project.outputTopic];
      const atDeaths: Array<
        { topic_ids: Record<string, string>; offsets: Record<string, string> }
      > = [];
      const j = await runApplyAgainJourney({
        projectDir: fx.project.dir,
        planPath,
        fault: point,
        armPlan,
        env: fx.workerEnv,
        afterDeath: async () => {
          const k = await kafkaTools(env.brokerContainerId, {
            topics,
            offsets: { group: fx.applicationId, topic: fx.project.inputTopic },
          });
          atDeaths.push({ topic_ids: k.topic_ids ?? {}, offsets: k.offsets ?? {} });
        },
      });
      cs.history.push(...j.history);
      recordJourney(cs, j, point);

      const st = await stateOrNull(fx);
      const stateWitness = fx.backend === "local" ? "state-files" : "state-rows";
      cs.rec.record({
        check: "generation.serial",
        name: "ownership serial 1: the first commit of a fresh project, exactly once",
        kind: "equal",
        witness: stateWitness,
        expected: { before: null, after: 1 },
        actual: { before: before?.ownership?.serial ?? null, after: st?.ownership?.serial ?? null },
      });
      const containers = await containersOf(fx.applicationId);
      const opId = j.operationId ??
        (containers.length === 1 ? containers[0].labels.operation : null);
      cs.rec.record({
        check: "generation.single_runner",
        name: "exactly one container for the application ID: running, of this operation",
        kind: "equal",
        witness: "docker-api",
        expected: [{ state: "running", operation: opId }],
        actual: containers.map((x) => ({ state: x.state, operation: x.labels.operation })),
      });
      const volumeName = `${fx.applicationId}-state`;
      const volume = await volumeOf(volumeName);
      const owned = st?.ownership?.runners.find((r) => r.application_id === fx.applicationId);
      cs.rec.record({
        check: "volume.instance_created",
        name: "the created volume: its label and instance file are the instance ownership records",
        kind: "equal",
        witness: `docker-api+host-fs+${stateWitness}`,
        expected: { label: owned?.volume_instance ?? null, file: owned?.volume_instance ?? null },
        actual: { label: volume.label, file: volume.file },
      });
      const running = containers.find((x) => x.running);
      const mounting = await containersMounting(volumeName);
      cs.rec.record({
        check: "volume.only_runner_mounts",
        name: "only the running runner mounts the state volume (no helper container left)",
        kind: "set-equal",
        witness: "docker-api",
        expected: running ? [{ id: running.id, role: null }] : [],
        actual: mounting.map((x) => ({ id: x.id, role: x.role })),
      });
      const k = await kafkaTools(env.brokerContainerId, {
        topics,
        offsets: { group: fx.applicationId, topic: fx.project.inputTopic },
        members: { group: fx.applicationId },
      });
      const looks = [...atDeaths.map((d) => d.offsets), k.offsets ?? {}];
      cs.rec.record({
        check: "offsets.initial_positions",
        name:
          "the group's committed offsets, after every death and after recovery, are absent or exactly the initial positions (never reset), and set after recovery",
        kind: "equal",
        witness: "kafka-tools",
        expected: looks.map((o, i) =>
          i === looks.length - 1 || Object.keys(o).length > 0 ? INITIAL_POSITIONS : {}
        ),
        actual: looks,
      });
      const ownedIds = Object.fromEntries(
        (st?.ownership?.topics ?? []).map((t) => [t.name, t.topic_id]),
      );
      const seenIds = Object.assign({}, ...atDeaths.map((d) => d.topic_ids));
      cs.rec.record({
        check: "kafka.topics_created_once",
        name:
          "each topic was created once: the ID seen after a death and the one ownership records are the topic's ID after recovery",
        kind: "equal",
        witness: `kafka-tools+${stateWitness}`,
        expected: { ...ownedIds, ...seenIds },
        actual: k.topic_ids ?? {},
      });
      cs.rec.record({
        check: "kafka.one_member",
        name: "exactly one member in the application's group",
        kind: "count",
        witness: "kafka-tools",
        expected: { min: 1, max: 1 },
        actual: (k.members ?? []).map((m) => m.client_id),
      });
      // a repeated apply of the completed create is a verified no-op
      const again = await cli(fx.history, "cli-apply-again", "apply", [
        "apply",
        "--project",
        fx.project.dir,
        "--plan",
        planPath,
      ], fx.workerEnv);
      const ad = again.json?.data as { noop?: boolean; already_applied?: boolean } | null;
      cs.rec.record({
        check: "apply.repeat_noop",
        name: "the same apply --plan once more is a verified no-op",
        kind: "equal",
        witness: "sluice",
        expected: { exit: 0, noop: true, already_applied: true },
        actual: { exit: again.code, noop: ad?.noop ?? null, already_applied: ad?.already_applied },
      });
      // produced records → exact output by the starter's predicate
      const produced = orders("c", [50, 150, 250, 120, 300, 90, 210, 180]);
      await fx.produce(produced);
      await recordStarterOutput(
        cs,
        produced,
        "output = one record per produced record passing the predicate",
      );
      await recordCommon(cs, fx, await stateOrNull(fx));
    },
  );
}

/** The connectors of a case's project as declared (the test's own data, not sluice's). */
export function expectedConnectorConfigs(o: {
  project: string;
  inputTopic: string;
  outputTopic: string;
  dataDir: string;
  sinkExtra: Record<string, string>;
}): Record<string, Record<string, string>> {
  const { inputFile, outputFile } = pipelineFiles(o.project);
  const { source, sink } = pipelineConnectorNames(o.project);
  return {
    [source]: {
      name: source,
      "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
      file: `${o.dataDir}/${inputFile}`,
      topic: o.inputTopic,
      "tasks.max": "1",
    },
    [sink]: {
      name: sink,
      "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
      file: `${o.dataDir}/${outputFile}`,
      topics: o.outputTopic,
      "tasks.max": "1",
      "consumer.override.isolation.level": "read_committed",
      ...o.sinkExtra,
    },
  };
}

/**
 * The manifest edit that appends the pipeline's two connectors (on `connect`) to a starter case's
 * manifest, its project and topic names read from the manifest itself.
 */
export function withPipelineConnectors(
  connect: NonNullable<EnvDescriptor["connect"]>,
): (manifest: string) => string {
  return (t) =>
    `${t}\n${
      connectorsSection({
        connect,
        project: t.match(/^project: (\S+)$/m)![1],
        inputTopic: t.match(/^ {4}topic: (raw_orders_\S+)$/m)![1],
        outputTopic: t.match(/topic: (eligible_orders_\S+)$/m)![1],
      })
    }`;
}

/**
 * The pipeline's connector names for a case's project, after creating its source connector's file
 * (present and empty: nothing flows in but what the case produces).
 */
export async function pipelineConnectorsOf(
  connect: NonNullable<EnvDescriptor["connect"]>,
  project: string,
): Promise<[source: string, sink: string]> {
  await Deno.writeTextFile(`${connect.dataDirHost}/${pipelineFiles(project).inputFile}`, "");
  const { source, sink } = pipelineConnectorNames(project);
  return [source, sink];
}

/** A case's cleanup: delete these connectors on the worker, whatever is left of them. */
export async function deleteConnectors(
  connect: NonNullable<EnvDescriptor["connect"]>,
  names: readonly string[],
): Promise<void> {
  for (const n of names) {
    await fetch(`${connect.restHost}/connectors/${encodeURIComponent(n)}`, { method: "DELETE" })
      .then((r) => r.body?.cancel()).catch(() => {});
  }
}

/** One connector case (see module docs). */
export function runConnectorCase(
  env: EnvDescriptor,
  image: string,
  c: MatrixCase,
  runId: string,
): Promise<CaseEvidence> {
  const point = `${c.boundary}:${c.side}`;
  const change: ConnectorChange = connectorChange(c.boundary);
  const connect = env.connect;
  let names: string[] = [];
  return caseEvidence(
    caseMeta(c, runId, "connector"),
    async () => {
      if (!connect) throw new Error("the environment has no Connect worker");
      const fx = await newCase(env, image, c.backend, {
        // update and removal need the connectors deployed (and owned) first
        editManifest: change === "create" ? undefined : withPipelineConnectors(connect),
      });
      names = await pipelineConnectorsOf(connect, fx.project.name);
      return await caseState(fx);
    },
    async (cs) => {
      const { fx } = cs;
      const sinkExtra = change === "update" ? { [SINK_UPDATE.key]: SINK_UPDATE.value } : {};
      if (change === "create") {
        await fx.project.editManifest(withPipelineConnectors(connect!));
      } else if (change === "update") {
        await fx.project.editManifest((t) =>
          t.replace(
            "      consumer.override.isolation.level: read_committed\n",
            `      consumer.override.isolation.level: read_committed\n      ${SINK_UPDATE.key}: ${
              JSON.stringify(SINK_UPDATE.value)
            }\n`,
          )
        );
      } else {
        await fx.project.editManifest(declareSinkRemoved({ sinkConnector: names[1] }));
      }
      const planPath = `${fx.project.dir}/connector.plan.json`;
      const planned = await cli(fx.history, "cli-plan", "plan", [
        "plan",
        "--project",
        fx.project.dir,
        "--out",
        planPath,
      ], fx.workerEnv);
      const actions =
        (planned.json?.data as { plan?: { actions: Array<{ type: string; name?: string }> } })
          ?.plan?.actions ?? null;
      const want = change === "create"
        ? [["create_connector", names[0]], ["create_connector", names[1]]]
        : change === "update"
        ? [["update_connector", names[1]]]
        : [["remove_connector", names[1]]];
      cs.rec.recordSetup({
        check: "setup.connector_plan",
        name: `the plan carries exactly the connector ${change}`,
        kind: "equal",
        witness: "sluice",
        expected: { exit: 0, actions: want },
        actual: { exit: planned.code, actions: actions?.map((a) => [a.type, a.name]) ?? null },
      });
      const before = await fx.state();
      const runnerBefore = (await containersOf(fx.applicationId)).map((x) => x.id);
      const topics = [fx.project.inputTopic, fx.project.outputTopic];
      const kBefore = await kafkaTools(env.brokerContainerId, { topics });
      const j = await runApplyAgainJourney({
        projectDir: fx.project.dir,
        planPath,
        fault: point,
        env: fx.workerEnv,
      });
      cs.history.push(...j.history);
      recordJourney(cs, j, point);

      const st = await stateOrNull(fx);
      const stateWitness = fx.backend === "local" ? "state-files" : "state-rows";
      const serialBefore = before.ownership?.serial ?? null;
      cs.rec.record({
        check: "generation.serial",
        name: "the ownership serial incremented exactly once",
        kind: "equal",
        witness: stateWitness,
        expected: { before: serialBefore, after: (serialBefore ?? -1) + 1 },
        actual: { before: serialBefore, after: st?.ownership?.serial ?? null },
      });
      const configs = expectedConnectorConfigs({
        project: fx.project.name,
        inputTopic: fx.project.inputTopic,
        outputTopic: fx.project.outputTopic,
        dataDir: connect!.dataDirContainer,
        sinkExtra,
      });
      const declared = change === "delete" ? [names[0]] : names;
      const list = await connectRead(`${connect!.restHost}/connectors`);
      const present = (Array.isArray(list.body) ? list.body as string[] : [])
        .filter((n) => names.includes(n)).sort();
      if (change === "delete") {
        cs.rec.record({
          check: "connector.removed",
          name: "the removed connector object is gone (Connect REST)",
          kind: "absent",
          witness: "connect-rest",
          expected: [names[1]],
          actual: present,
        });
        const kAfter = await kafkaTools(env.brokerContainerId, { topics });
        cs.rec.record({
          check: "kafka.topics_kept",
          name: "the topics stay, with their IDs; the runner is untouched",
          kind: "equal",
          witness: "kafka-tools+docker-api",
          expected: { topic_ids: kBefore.topic_ids ?? {}, runner: runnerBefore },
          actual: {
            topic_ids: kAfter.topic_ids ?? {},
            runner: (await containersOf(fx.applicationId)).map((x) => x.id),
          },
        });
      }
      const observed: Record<string, unknown> = {};
      for (const n of declared) {
        const r = await connectRead(
          `${connect!.restHost}/connectors/${encodeURIComponent(n)}/config`,
        );
        observed[n] = r.status === 200 ? r.body : { status: r.status, body: r.body };
      }
      if (change !== "delete") {
        cs.rec.record({
          check: "connector.owned_config",
          name:
            "each declared connector exists exactly once, with the declared config (Connect REST)",
          kind: "equal",
          witness: "connect-rest",
          expected: {
            names: declared,
            configs: Object.fromEntries(declared.map((n) => [n, configs[n]])),
          },
          actual: { names: present, configs: observed },
        });
      }
      cs.rec.record({
        check: "connector.ownership_recorded",
        name: "ownership records exactly the declared connectors",
        kind: "equal",
        witness: stateWitness,
        expected: declared.map((n) => ({ name: n, kind: n.endsWith("_in") ? "source" : "sink" })),
        actual: st?.ownership?.connectors ?? null,
      });
      await recordCommon(cs, fx, st);
    },
    async (cs) => {
      if (connect) await deleteConnectors(connect, names);
      await cs.fx.cleanup();
    },
  );
}

/** The reason the probe's operator gives (recorded in the audit). */
export const OPERATOR_REASON = "fault matrix: the operator decides";

/** What the witnesses see of the application outside the state (an abandonment changes none). */
async function runtimeSnapshot(p: Prepared) {
  const { fx } = p;
  const containers = await containersOf(fx.applicationId);
  const volume = await volumeOf(`${fx.applicationId}-state`);
  const k = await kafkaTools(p.broker, {
    offsets: { group: fx.applicationId, topic: fx.project.inputTopic },
    members: { group: fx.applicationId },
    topics: [fx.project.inputTopic, fx.project.outputTopic],
  });
  return {
    containers: containers.map((x) => ({
      id: x.id,
      state: x.state,
      operation: x.labels.operation,
    })),
    volume: { exists: volume.exists, label: volume.label, file: volume.file },
    offsets: k.offsets ?? {},
    members: (k.members ?? []).map((m) => m.client_id),
    topic_ids: k.topic_ids ?? {},
  };
}

/**
 * One operator case: a deployed starter and a reviewed replacement whose `apply --plan` dies at
 * {@link PRE_OPERATOR_FAULT} (the old runner closed and removed, no candidate), then the
 * operator's decision armed at the case's site, the same decision again in a fresh process,
 * and — after an accepted retention loss — `state resume` (harness/faults.ts
 * `runOperatorJourney`). For `accept-retention-loss`, records are produced while the apply is
 * dead and Kafka's DeleteRecords (the harness's own admin client) removes the input up to its
 * end on every partition holding unprocessed records: committed offsets below the log start
 * offset, the retention loss the decision accepts. Invariants in `requiredChecks`
 * (probes/catalogue.ts).
 */
export function runOperatorCase(
  env: EnvDescriptor,
  image: string,
  c: MatrixCase,
  runId: string,
): Promise<CaseEvidence> {
  const point = `${c.boundary}:${c.side}`;
  const decision = operatorDecision(c.boundary);
  return caseEvidence(
    {
      id: `${point}:${c.backend}`,
      kind: "matrix" as const,
      run_id: runId,
      boundary: c.boundary,
      side: c.side,
      backend: c.backend,
      params: { site: point, journey: "operator", decision, pre_fault: PRE_OPERATOR_FAULT },
    },
    () => prepareCase(env, image, c.backend),
    async (p) => {
      if (!decision) throw new Error(`${c.boundary} is crossed by no operator decision`);
      const { fx } = p;
      const topic = fx.project.inputTopic;
      const partitions = [0, 1, 2];
      let atDeath: Awaited<ReturnType<typeof runtimeSnapshot>> | null = null;
      let deleted: Array<{ key: string; partition: number; offset: bigint }> = [];
      let close: Vec = {};
      let accepted: Vec = {};
      let lostRanges: Array<{ partition: number; from: string; to: string }> = [];
      let afterDecision: Vec | null = null;
      const j = await runOperatorJourney({
        projectDir: fx.project.dir,
        planPath: p.planPath,
        fault: point,
        decision,
        preFault: PRE_OPERATOR_FAULT,
        reason: OPERATOR_REASON,
        env: fx.workerEnv,
        afterDeath: async (jj) => {
          const dead = jj.workers.filter((w) => w.signal !== null).at(-1);
          await sample(p, p, dead?.process ?? "death", false);
        },
        whileDead: async () => {
          await fx.produce(orders("d", [150, 250, 99, 200, 320, 130, 275, 410]));
          // the runner is stopped: its committed offsets are the clean close
          close = p.samples.at(-1)?.offsets ?? {};
          if (decision === "abandon") {
            atDeath = await runtimeSnapshot(p);
            return;
          }
          const before = await fx.inputRecords();
          const ranges = await offsetRange(env.bootstrapHost, topic, partitions);
          const past = ranges.filter((r) =>
            close[String(r.partition)] !== undefined &&
            r.latest > BigInt(close[String(r.partition)])
          );
          await withAdmin(env.bootstrapHost, (a) =>
            a.deleteRecords({
              topics: [{
                name: topic,
                partitions: past.map((r) => ({ partition: r.partition, offset: r.latest })),
              }],
            }));
          deleted = before.filter((r) =>
            past.some((x) => x.partition === r.partition && r.offset < x.latest)
          );
          const retained = await offsetRange(env.bootstrapHost, topic, partitions);
          accepted = Object.fromEntries(
            Object.entries(close).map(([k, v]) => {
              const earliest = retained.find((r) => String(r.partition) === k)?.earliest ?? -1n;
              return [k, earliest > BigInt(v) ? String(earliest) : v];
            }),
          );
          lostRanges = Object.entries(close).filter(([k, v]) => accepted[k] !== v)
            .map(([k, v]) => ({ partition: Number(k), from: v, to: accepted[k] }));
          p.rec.recordSetup({
            check: "setup.retention_loss",
            name:
              "DeleteRecords left a committed offset below the log start offset on at least one partition",
            kind: "count",
            witness: "kafka-tools+kafka-admin",
            expected: { min: 1 },
            actual: lostRanges,
          });
        },
        afterDecision: async () => {
          const k = await kafkaTools(p.broker, {
            offsets: { group: fx.applicationId, topic },
          });
          afterDecision = k.offsets ?? {};
        },
      });
      p.history.push(...j.history);
      recordKilledAtSite(p.rec, j.workers.find((w) => w.fault === point), point);
      recordPreKill(
        p.rec,
        j,
        PRE_OPERATOR_FAULT,
        "fault.pre_operator_kill",
        "the apply first died where only an operator's decision or a resume continues",
      );
      if (c.backend === "local") recordStaleLocksBroken(p.rec, j);
      const stateWitness = fx.backend === "local" ? "state-files" : "state-rows";
      if (decision === "accept-retention-loss") {
        p.rec.record({
          check: "offsets.moved_to_retained",
          name:
            "the accepted decision moved exactly the lost partitions to the earliest retained offsets, nothing else",
          kind: "equal",
          witness: "kafka-tools+kafka-admin",
          expected: accepted,
          actual: afterDecision,
        });
        await verifyCompletion(p, p, j, {
          interrupted: interrupted(j),
          predicates: [OLD_PREDICATE, NEW_PREDICATE],
          afterPrefix: "b",
          retention: { deleted, accepted },
        });
        const st = await fx.state();
        p.rec.record({
          check: "audit.decision_recorded",
          name:
            "exactly one decision for the operation, recording each lost range [clean close, earliest retained)",
          kind: "equal",
          witness: `${stateWitness}+kafka-admin`,
          expected: [{
            operation_id: j.operationId,
            decision: "accept_retention_loss",
            partitions: lostRanges,
          }],
          actual: st.decisions.map((d) => ({
            ...d,
            partitions: [...d.partitions].sort((a, b) => a.partition - b.partition),
          })),
        });
        return;
      }
      // abandon: the same command again finished it, and nothing outside the state changed
      const killedPids = j.workers.filter((w) => w.signal === "SIGKILL").map((k) => k.pid);
      const last = [...j.workers].reverse().find((w) => w.args.includes("abandon"));
      p.outcome = j.outcome;
      p.rec.record({
        check: "recovery.completed",
        name: "the same state abandon, run again in a fresh process, completed the abandonment",
        kind: "exit-status",
        witness: "process",
        expected: { exit: 0 },
        actual: {
          process: last?.process ?? null,
          command: "abandon",
          exit: last?.code ?? null,
          signal: last?.signal ?? null,
          timed_out: last?.timedOut ?? false,
          pid: last?.pid ?? null,
          killed_pids: killedPids,
          outcome: j.outcome,
          blockers: j.blockers,
        },
      });
      p.rec.record({
        check: "operator.nothing_mutated",
        name:
          "no container, volume, committed offset, group member or topic changed after the apply died",
        kind: "unchanged",
        witness: "docker-api+host-fs+kafka-tools",
        expected: atDeath,
        actual: await runtimeSnapshot(p),
      });
      const st = await fx.state();
      p.rec.record({
        check: "state.control_cleared",
        name: "no pending control is left",
        kind: "absent",
        witness: stateWitness,
        expected: ["control"],
        actual: st.documents,
      });
      p.rec.record({
        check: "audit.abandoned_once",
        name: "the abandonment of this operation is recorded exactly once",
        kind: "equal",
        witness: stateWitness,
        expected: [j.operationId],
        actual: st.history.filter((e) => e.kind === "operation_abandoned").map((e) =>
          e.operation_id
        ),
      });
      p.rec.record({
        check: "audit.no_receipt",
        name: "no completion receipt for the abandoned operation",
        kind: "absent",
        witness: stateWitness,
        expected: [j.operationId],
        actual: st.receipts.map((r) => r.operation_id),
      });
      p.rec.record({
        check: "generation.serial",
        name: "the ownership serial is unchanged (an abandonment changes no owner)",
        kind: "equal",
        witness: stateWitness,
        expected: { before: p.before.serial, after: p.before.serial },
        actual: { before: p.before.serial, after: st.ownership?.serial ?? null },
      });
      p.rec.record({
        check: "state.sealed_entries",
        name: "every sealed entry hashes to its checksum",
        kind: "equal",
        witness: stateWitness,
        expected: [],
        actual: st.bad_seals,
      });
      const planned = await cli(fx.history, "cli-plan-after", "plan", [
        "plan",
        "--project",
        fx.project.dir,
      ], fx.workerEnv);
      const noop = (planned.json?.data as { noop?: boolean } | null)?.noop;
      p.rec.record({
        check: "plan.not_noop",
        name:
          'the next plan never says "No changes": the runner the operation removed is reported (a plan or a blocker)',
        kind: "equal",
        witness: "sluice",
        expected: { noop: false },
        actual: {
          noop: noop === true ? true : planned.code === 0 || planned.code === 4 ? false : null,
        },
      });
    },
  );
}
