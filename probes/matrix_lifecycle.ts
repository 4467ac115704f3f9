/**
 * The runner-removal and day-two journeys of the real fault matrix (probes/fault_matrix.ts arms
 * each site in the journey that first crosses it; `matrixJourney` in catalogue.ts says which).
 *
 * - **removal**: a deployed starter with a second model ({@link SPARE_MODEL}) processes records
 *   until its group committed every one; the starter's model is then dropped from `models:` and
 *   declared in `lifecycle.runner_removals`, `plan --out` binds the removal to its exact
 *   container, and `apply --plan` is armed at the case's site and killed there by SIGKILL; then,
 *   each a fresh process, `state show` and the same `apply --plan` again (breaking a dead
 *   worker's stale lock by its ID) until it exits 0 or names a precise blocker. Invariants, read
 *   by the Docker API, the broker's own tools and the state read directly: no container of the
 *   model is left; its state volume is kept with its instance (label and file); the group's
 *   committed offsets are those of the clean close at every look (after each death and after
 *   recovery); the topics are kept with their IDs; the group has no member; ownership releases
 *   the runner and keeps its volume (`retained`) and topics; the spare model's runner is the
 *   same one, running; serial + 1 exactly once; no pending control; a no-op plan. The case is
 *   {@link runTakeDownCase} with the removal's parameters ({@link REMOVAL_CASE}); the destroy's
 *   (`matrix_destroy.ts`) is the same case with its own.
 * - **day_two**: a deployed starter whose runner is stopped from outside sluice — by a record it
 *   cannot decode, produced to a known partition at a known offset (exit 13), for the skip's own
 *   sites, else by `docker stop` (TERM, exit 143) — then `sluice skip-record MODEL --partition P
 *   --offset O` (or `sluice restart MODEL`) armed at the case's site, continued by the same
 *   command again in fresh processes. Invariants: the same container (same generation) runs
 *   again; exactly one `runner_restarted` event names its stop; a skip is recorded once with
 *   the record's coordinates, named by the restart, and moved exactly that partition by exactly
 *   one (every look at the committed offsets saw the stop's or the skip's); a restart moved no
 *   offset; the serial is unchanged; records produced afterwards give exact output (the bad
 *   record never); no pending control; a no-op plan.
 *
 * @example
 * ```ts
 * import { SPARE_MODEL } from "./matrix_lifecycle.ts";
 * console.log(SPARE_MODEL);
 * ```
 * @module
 */
import type { EnvDescriptor } from "../harness/env.ts";
import { docker, removeLabelled } from "../harness/docker.ts";
import { runApplyAgainJourney } from "../harness/faults.ts";
import { offsetRange, produce, withAdmin } from "../harness/kafka.ts";
import { containersOf, kafkaTools, volumeOf } from "../harness/witness.ts";
import { connectRead } from "../harness/connect.ts";
import {
  type DayTwoCommand,
  dayTwoCommand,
  groupKeptAtDeath,
  REMOVAL_SERIAL_BEFORE,
} from "./catalogue.ts";
import {
  caseEvidence,
  type CaseFixture,
  type CaseState,
  cleanupFailed,
  cli,
  newCase,
  OLD_PREDICATE,
  orders,
  waitFor,
} from "./common.ts";
import type { CaseEvidence } from "./evidence.ts";
import { caseState, type Vec } from "./invariants.ts";
import {
  deleteConnectors,
  type MatrixCase,
  matrixCaseMeta,
  pipelineConnectorsOf,
  recordCommon,
  recordJourney,
  recordStarterOutput,
  stateOrNull,
  withPipelineConnectors,
} from "./matrix_journeys.ts";

/** The model a removal case keeps running while the starter's model is removed. */
export const SPARE_MODEL = "spare_orders";
/** The starter's model: removed, restarted or skipped past. */
export const MODEL = "eligible_orders";
/** The reason the probe's operator gives for a day-two command (recorded in the audit). */
export const DAY_TWO_REASON = "fault matrix: bring the stopped runner back";
/** The partition the record the runner cannot decode is produced to. */
const BAD_PARTITION = 1;
const PARTITIONS = [0, 1, 2];

/** The state witness of a case's backend. */
export function stateWitnessOf(fx: CaseFixture) {
  return fx.backend === "local" ? "state-files" as const : "state-rows" as const;
}

/** The group's committed offsets, by the broker's own tools. */
export async function committed(fx: CaseFixture): Promise<Vec> {
  const k = await kafkaTools(fx.env.brokerContainerId, {
    offsets: { group: fx.applicationId, topic: fx.project.inputTopic },
  });
  return k.offsets ?? {};
}

/** Wait until the group committed every input record (the log-end offsets). */
async function caughtUp(fx: CaseFixture): Promise<{ ends: Vec; committed: Vec }> {
  let ends: Vec = {};
  let seen: Vec = {};
  await waitFor(
    "the group to commit every input record",
    async () => {
      const r = await offsetRange(fx.env.bootstrapHost, fx.project.inputTopic, PARTITIONS);
      ends = Object.fromEntries(r.map((x) => [String(x.partition), String(x.latest)]));
      seen = await committed(fx);
      return JSON.stringify(seen) === JSON.stringify(ends);
    },
    180_000,
    1000,
  );
  return { ends, committed: seen };
}

/** Produce the first records and wait for their output and their commit. */
export async function warmUp(cs: CaseState): Promise<Vec> {
  const { fx } = cs;
  const first = orders("a", [50, 150, 250, 120, 300, 90, 210, 180]);
  await fx.produce(first);
  const n = first.filter((o) => OLD_PREDICATE(o.value)).length;
  const warm = await fx.step("await output", { n }, () => fx.output(n));
  cs.rec.recordSetup({
    check: "setup.old_output",
    name: "the runner processed the first records",
    kind: "equal",
    witness: "topic-read",
    expected: n,
    actual: warm.length,
  });
  const c = await fx.step("await commit", null, () => caughtUp(fx));
  cs.rec.recordSetup({
    check: "setup.caught_up",
    name: "the group committed every input record (the log-end offsets)",
    kind: "equal",
    witness: "kafka-tools+kafka-admin",
    expected: c.ends,
    actual: c.committed,
  });
  return c.committed;
}

/** A planned action as the case reads it from `plan -o json`: its type and what it binds. */
export interface PlannedTakeDown {
  type: string;
  /** A removal's bound container. */
  container?: { id: string };
  /** A destroy's bound runners. */
  runners?: Array<{ container: { id: string } }>;
}

/**
 * What one journey that takes a runner down the removal's way gives the matrix's one case of
 * that shape ({@link runTakeDownCase}): the runner removal's ({@link REMOVAL_CASE}) and the
 * destroy's (`matrix_destroy.ts`). The rest — the warm-up, the plan bound to the running
 * container, the journey killed and continued, the container gone, the volume, offsets, topics
 * and group kept, the serial, the control cleared — is the case's, the same for both.
 */
export interface TakeDownCase {
  /** The matrix journey (the case's `journey` param). */
  readonly journey: "removal" | "destroy";
  /** Whether a second model ({@link SPARE_MODEL}) runs beside the one taken down, untouched. */
  readonly spare: boolean;
  /** After the warm-up: what declares the take-down in the project (none: the plan's flag). */
  readonly declare?: (fx: CaseFixture) => Promise<void>;
  /** The plan: its extra arguments and its file's name in the project. */
  readonly plan: { readonly args: readonly string[]; readonly file: string };
  /** The setup check that the plan binds exactly the running container. */
  readonly planned: {
    readonly check: string;
    readonly name: string;
    /** The expected actions, of the running container's ID. */
    readonly expected: (bound: string | null) => unknown[];
    /** What an action binds, as the expected actions say it. */
    readonly binds: (a: PlannedTakeDown) => unknown;
  };
  /** The checks whose IDs and words are the journey's. */
  readonly words: {
    readonly gone: { readonly check: string; readonly name: string };
    readonly noMember: string;
    readonly ownership: { readonly check: string; readonly name: string };
  };
  /**
   * Whether the project also owns the pipeline's two Connect connectors (harness/pipeline.ts),
   * deployed with the starter before the take-down: the take-down deletes them as well, and the
   * case checks that the worker no longer has them and that ownership records none.
   */
  readonly connectors?: boolean;
  /**
   * Whether the take-down deletes the data (`--delete-data`): the volume, the group and the owned
   * topics are then checked deleted (the other topic kept) instead of kept.
   */
  readonly deletesData?: boolean;
  /** The ownership serial before the take-down. */
  readonly serialBefore: number;
  /**
   * The checks after the common ones: the plans made afterwards (`st` the state after, `before`
   * the state read before the take-down).
   */
  readonly after: (
    cs: CaseState,
    st: StateWitnessOf,
    before: Awaited<ReturnType<CaseFixture["state"]>>,
  ) => Promise<void>;
}

/** The state read directly, as the matrix reads it after a journey. */
type StateWitnessOf = Awaited<ReturnType<typeof stateOrNull>>;

/**
 * The runner removal's matrix case: the starter's model dropped from `models:` and declared in
 * `lifecycle.runner_removals`, its consumers moved to the spare model, which keeps running.
 */
export const REMOVAL_CASE: TakeDownCase = {
  journey: "removal",
  spare: true,
  declare: (fx) =>
    fx.project.editManifest((t) =>
      t.replace(/^ {2}eligible_orders:\n {4}sql: .*\n {4}output:\n {6}topic: .*\n/m, "")
        .replace(/consumes: eligible_orders$/m, `consumes: ${SPARE_MODEL}`) +
      `lifecycle:\n  runner_removals:\n    - model: ${MODEL}\n`
    ),
  plan: { args: [], file: "remove.plan.json" },
  planned: {
    check: "setup.removal_plan",
    name: "the plan removes exactly the starter's running runner, by its container ID",
    expected: (bound) => [["remove_runner", bound]],
    binds: (a) => a.container?.id ?? null,
  },
  words: {
    gone: {
      check: "removal.container_gone",
      name: "no container carries the removed model's application ID (the bound one removed)",
    },
    noMember: "the removed runner's group has no member",
    ownership: {
      check: "ownership.released",
      name:
        "ownership no longer owns the runner, keeps its volume instance (retained) and still owns its topics",
    },
  },
  serialBefore: REMOVAL_SERIAL_BEFORE,
  after: async (cs, st) => await recordCommon(cs, cs.fx, st),
};

/**
 * One runner-removal case (see module docs).
 *
 * @example
 * ```ts
 * import { runRemovalCase } from "./matrix_lifecycle.ts";
 * // const evidence = await runRemovalCase(env, image, { boundary, side, backend }, runId);
 * ```
 */
export function runRemovalCase(
  env: EnvDescriptor,
  image: string,
  c: MatrixCase,
  runId: string,
): Promise<CaseEvidence> {
  return runTakeDownCase(env, image, c, runId, REMOVAL_CASE);
}

/** What {@link recordDataDeleted} compares: the reads before the take-down and after it. */
interface DataReadings {
  app: string;
  point: MatrixCase;
  volumeExists: boolean;
  /** The group's committed offsets at the clean close (before the take-down). */
  closeOffsets: Vec;
  /** The group's committed offsets read after each death. */
  atDeaths: Vec[];
  kAfter: Awaited<ReturnType<typeof kafkaTools>>;
  topicIdsBefore: Record<string, string>;
  /** The topics the project owned before (the ones a delete-data destroy deletes). */
  owned: string[];
}

/**
 * The checks of a take-down that deleted the data, each read by Kafka's tools or the Engine API:
 * the volume is gone; the group's offsets were the clean close's at a death before the group's
 * deletion and none after it (a missing group reads as no offsets); the group is no longer
 * listed; each owned topic is gone and every other topic kept with its ID.
 */
function recordDataDeleted(cs: CaseState, r: DataReadings): void {
  cs.rec.record({
    check: "volume.deleted",
    name: "the state volume is removed",
    kind: "equal",
    witness: "docker-api",
    expected: { exists: false },
    actual: { exists: r.volumeExists },
  });
  const atDeath = groupKeptAtDeath(r.point.boundary, r.point.side) ? r.closeOffsets : {};
  cs.rec.record({
    check: "offsets.close_until_deleted",
    name:
      "the group's committed offsets at each death are the clean close's before the group's deletion and none after it, and none after recovery",
    kind: "equal",
    witness: "kafka-tools",
    expected: { at_deaths: r.atDeaths.map(() => atDeath), after: {} },
    actual: { at_deaths: r.atDeaths, after: r.kAfter.offsets ?? {} },
  });
  cs.rec.record({
    check: "kafka.group_deleted",
    name: "the runner's consumer group is no longer listed",
    kind: "absent",
    witness: "kafka-tools",
    expected: [r.app],
    actual: r.kAfter.groups ?? null,
  });
  const ids = r.kAfter.topic_ids ?? {};
  cs.rec.record({
    check: "kafka.owned_topics_deleted",
    name: "each topic the project owned is deleted; every other topic is kept with its topic ID",
    kind: "equal",
    witness: "kafka-tools",
    expected: Object.fromEntries(
      Object.entries(r.topicIdsBefore).map(([t, id]) => [t, r.owned.includes(t) ? null : id]),
    ),
    actual: Object.fromEntries(Object.keys(r.topicIdsBefore).map((t) => [t, ids[t] ?? null])),
  });
}

/**
 * One case of a journey that takes a runner down the removal's way, with that journey's
 * parameters ({@link TakeDownCase}; see the module docs for the removal's).
 *
 * @example
 * ```ts
 * import { REMOVAL_CASE, runTakeDownCase } from "./matrix_lifecycle.ts";
 * // const evidence = await runTakeDownCase(env, image, c, runId, REMOVAL_CASE);
 * ```
 */
export function runTakeDownCase(
  env: EnvDescriptor,
  image: string,
  c: MatrixCase,
  runId: string,
  j: TakeDownCase,
): Promise<CaseEvidence> {
  const point = `${c.boundary}:${c.side}`;
  let spareTopic = "";
  /** The pipeline's connectors of a case whose project owns them (`j.connectors`). */
  let connectorNames: string[] = [];
  return caseEvidence(
    matrixCaseMeta(
      c,
      runId,
      j.spare ? { journey: j.journey, spare_model: SPARE_MODEL } : { journey: j.journey },
    ),
    async () => {
      if (j.connectors && !env.connect) throw new Error("the environment has no Connect worker");
      const fx = await newCase(
        env,
        image,
        c.backend,
        j.connectors ? { editManifest: withPipelineConnectors(env.connect!) } : j.spare
          ? {
            editManifest: (t) => {
              const out = t.match(/topic: (eligible_orders_\S+)$/m)![1];
              spareTopic = `spare_${out}`;
              return t.replace(
                "models:\n",
                `models:\n  ${SPARE_MODEL}:\n    sql: models/eligible_orders.sql\n    output:\n      topic: ${spareTopic}\n`,
              );
            },
          }
          : undefined,
      );
      if (j.connectors) connectorNames = await pipelineConnectorsOf(env.connect!, fx.project.name);
      return await caseState(fx);
    },
    async (cs) => {
      const { fx } = cs;
      const app = fx.applicationId;
      const spareApp = `sluice-${fx.project.name}-${SPARE_MODEL}`;
      const stateWitness = stateWitnessOf(fx);
      await warmUp(cs);
      await j.declare?.(fx);
      const planPath = `${fx.project.dir}/${j.plan.file}`;
      const planned = await cli(fx.history, "cli-plan", "plan", [
        "plan",
        "--project",
        fx.project.dir,
        ...j.plan.args,
        "--out",
        planPath,
      ], fx.workerEnv);
      const actions = (planned.json?.data as { plan?: { actions: PlannedTakeDown[] } })?.plan
        ?.actions ?? null;
      const bound = (await containersOf(app)).find((x) => x.running)?.id ?? null;
      cs.rec.recordSetup({
        check: j.planned.check,
        name: j.planned.name,
        kind: "equal",
        witness: "sluice+docker-api",
        expected: { exit: 0, actions: j.planned.expected(bound) },
        actual: {
          exit: planned.code,
          actions: actions?.map((a) => [a.type, j.planned.binds(a)]) ?? null,
        },
      });
      const topics = [fx.project.inputTopic, fx.project.outputTopic];
      const volumeName = `${app}-state`;
      const volumeBefore = await volumeOf(volumeName);
      const kBefore = await kafkaTools(env.brokerContainerId, {
        offsets: { group: app, topic: fx.project.inputTopic },
        topics,
      });
      const spareBefore = j.spare
        ? (await containersOf(spareApp)).map((x) => ({ id: x.id, running: x.running }))
        : [];
      const stBefore = await fx.state();
      const atDeaths: Vec[] = [];
      const run = await runApplyAgainJourney({
        projectDir: fx.project.dir,
        planPath,
        fault: point,
        env: fx.workerEnv,
        afterDeath: async () => {
          atDeaths.push(await committed(fx));
        },
      });
      cs.history.push(...run.history);
      recordJourney(cs, run, point);

      const st = await stateOrNull(fx);
      cs.rec.record({
        check: j.words.gone.check,
        name: j.words.gone.name,
        kind: "count",
        witness: "docker-api",
        expected: { max: 0 },
        actual: (await containersOf(app)).map((x) => ({ id: x.id, state: x.state })),
      });
      const volumeAfter = await volumeOf(volumeName);
      cs.rec.recordSetup({
        check: "setup.volume_before",
        name: `the volume carried the deployed instance before the ${j.journey}`,
        kind: "equal",
        witness: "docker-api+host-fs",
        expected: { exists: true, label: fx.volumeInstance, file: fx.volumeInstance },
        actual: { exists: volumeBefore.exists, label: volumeBefore.label, file: volumeBefore.file },
      });
      const kAfter = await kafkaTools(env.brokerContainerId, {
        offsets: { group: app, topic: fx.project.inputTopic },
        members: { group: app },
        topics,
        ...(j.deletesData ? { listGroups: true } : {}),
      });
      if (j.deletesData) {
        recordDataDeleted(cs, {
          app,
          point: c,
          volumeExists: volumeAfter.exists,
          closeOffsets: kBefore.offsets ?? {},
          atDeaths,
          kAfter,
          topicIdsBefore: kBefore.topic_ids ?? {},
          owned: stBefore.ownership?.topics.map((t) => t.name) ?? [],
        });
      } else {
        cs.rec.record({
          check: "volume.instance_kept",
          name: "the state volume is kept, its label and instance file the bound instance",
          kind: "unchanged",
          witness: "docker-api+host-fs",
          expected: { exists: true, label: fx.volumeInstance, file: fx.volumeInstance },
          actual: { exists: volumeAfter.exists, label: volumeAfter.label, file: volumeAfter.file },
        });
        cs.rec.record({
          check: "offsets.kept",
          name:
            "the group's committed offsets, after every death and after recovery, are those of the clean close (never moved)",
          kind: "all-equal",
          witness: "kafka-tools",
          expected: { value: kBefore.offsets ?? {} },
          actual: [...atDeaths, kAfter.offsets ?? {}],
        });
        cs.rec.record({
          check: "kafka.topics_kept",
          name: "both topics are kept with their topic IDs",
          kind: "unchanged",
          witness: "kafka-tools",
          expected: kBefore.topic_ids ?? {},
          actual: kAfter.topic_ids ?? {},
        });
      }
      cs.rec.record({
        check: "kafka.no_member",
        name: j.words.noMember,
        kind: "count",
        witness: "kafka-tools",
        expected: { max: 0 },
        actual: (kAfter.members ?? []).map((m) => m.client_id),
      });
      if (j.connectors) {
        const listed = await connectRead(`${env.connect!.restHost}/connectors`);
        cs.rec.record({
          check: "destroy.connectors_gone",
          name: "the Connect worker no longer has either of the project's connectors",
          kind: "absent",
          witness: "connect-rest",
          expected: connectorNames,
          actual: listed.status === 200
            ? listed.body
            : { status: listed.status, body: listed.body },
        });
      }
      cs.rec.record({
        check: j.words.ownership.check,
        name: j.words.ownership.name,
        kind: "equal",
        witness: stateWitness,
        expected: j.deletesData
          // a destroy that deleted the data records none of it (lib/protocol/destroy.ts)
          ? { runners: [], retained: [], topics: [] }
          : {
            runners: j.spare ? [spareApp] : [],
            retained: [{ application_id: app, volume_instance: fx.volumeInstance }],
            topics: stBefore.ownership?.topics.map((t) => t.name).sort() ?? null,
            ...(j.connectors ? { connectors: [] } : {}),
          },
        actual: {
          runners: st?.ownership?.runners.map((r) => r.application_id) ?? null,
          retained: st?.ownership?.retained ?? null,
          topics: st?.ownership?.topics.map((t) => t.name).sort() ?? null,
          ...(j.connectors
            ? { connectors: st?.ownership?.connectors?.map((x) => x.name) ?? null }
            : {}),
        },
      });
      if (j.spare) {
        cs.rec.record({
          check: "removal.spare_untouched",
          name: "the other model's runner is the same container, still running",
          kind: "unchanged",
          witness: "docker-api",
          expected: spareBefore,
          actual: (await containersOf(spareApp)).map((x) => ({ id: x.id, running: x.running })),
        });
      }
      cs.rec.record({
        check: "generation.serial",
        name: "the ownership serial incremented exactly once",
        kind: "equal",
        witness: stateWitness,
        expected: { before: j.serialBefore, after: j.serialBefore + 1 },
        actual: {
          before: stBefore.ownership?.serial ?? null,
          after: st?.ownership?.serial ?? null,
        },
      });
      await j.after(cs, st, stBefore);
    },
    async (cs) => {
      // left only by a case that failed before its destroy deleted them
      if (env.connect) await deleteConnectors(env.connect, connectorNames);
      await cs.fx.cleanup();
      if (!j.spare) return;
      // the spare model's runner, volume and output topic
      await removeLabelled("sluice.application-id", `sluice-${cs.fx.project.name}-${SPARE_MODEL}`)
        .catch(cleanupFailed);
      if (spareTopic) {
        await withAdmin(env.bootstrapHost, (a) => a.deleteTopics({ topics: [spareTopic] }))
          .catch(() => {});
      }
    },
  );
}

/** The coordinates of the record a day-two case's runner cannot decode. */
interface BadRecord {
  partition: number;
  offset: bigint;
}

/** One day-two case (see module docs). */
export function runDayTwoCase(
  env: EnvDescriptor,
  image: string,
  c: MatrixCase,
  runId: string,
): Promise<CaseEvidence> {
  const point = `${c.boundary}:${c.side}`;
  const command: DayTwoCommand = dayTwoCommand(c.boundary);
  return caseEvidence(
    matrixCaseMeta(c, runId, { journey: "day_two", command }),
    async () => await caseState(await newCase(env, image, c.backend)),
    async (cs) => {
      const { fx } = cs;
      const app = fx.applicationId;
      const stateWitness = stateWitnessOf(fx);
      const first = orders("a", [50, 150, 250, 120, 300, 90, 210, 180]);
      await warmUp(cs);
      const [runner] = (await containersOf(app)).filter((x) => x.running);
      if (!runner) throw new Error("setup: no running runner");
      let bad: BadRecord | null = null;
      if (command === "skip-record") {
        // a record the runner cannot decode (amount is a string), at a known offset
        const [r] = await offsetRange(env.bootstrapHost, fx.project.inputTopic, [BAD_PARTITION]);
        bad = { partition: BAD_PARTITION, offset: r.latest };
        await fx.step(
          "produce the bad record",
          bad,
          () =>
            produce(env.bootstrapHost, fx.project.inputTopic, [{
              key: "bad-0",
              value: JSON.stringify({
                order_id: "bad-0",
                amount: "lots",
                paid: true,
                customer: null,
              }),
              partition: BAD_PARTITION,
            }]),
        );
      } else {
        await fx.step(
          "docker stop",
          { id: runner.id },
          () =>
            docker().getContainer(runner.id).stop({ t: 30 }).catch((e) => {
              if (!String(e).includes("304")) throw e;
            }),
        );
      }
      await waitFor(
        "the runner to stop",
        async () => !(await containersOf(app)).some((x) => x.running),
        180_000,
        1000,
      );
      const stopped = (await containersOf(app)).find((x) => x.id === runner.id);
      const exit = command === "skip-record" ? 13 : 143;
      cs.rec.recordSetup({
        check: "setup.runner_stopped",
        name: command === "skip-record"
          ? "the runner stopped on the record it cannot decode (exit 13)"
          : "the runner stopped by docker stop (TERM, exit 143)",
        kind: "equal",
        witness: "docker-api",
        expected: { running: false, exit_code: exit },
        actual: { running: stopped?.running ?? null, exit_code: stopped?.exit_code ?? null },
      });
      const before = await committed(fx);
      if (bad) {
        // the operator reads the coordinates from `sluice status`, as the runbook says
        const status = await cli(fx.history, "cli-status", "status", [
          "status",
          "--project",
          fx.project.dir,
        ], fx.workerEnv);
        const row = (status.json?.data as {
          models?: Array<
            { stop?: { runner?: { record?: { partition: number; offset: number } } } }
          >;
        } | null)?.models?.[0];
        const rec = row?.stop?.runner?.record ?? null;
        cs.rec.recordSetup({
          check: "setup.bad_record",
          name:
            "status names the record produced at the known offset, where the group's commit stopped",
          kind: "equal",
          witness: "sluice+kafka-tools",
          expected: {
            status: { partition: bad.partition, offset: Number(bad.offset) },
            committed: String(bad.offset),
          },
          actual: {
            status: rec ? { partition: rec.partition, offset: rec.offset } : null,
            committed: before[String(bad.partition)] ?? null,
          },
        });
      }
      const stBefore = await fx.state();
      const args = [
        command,
        MODEL,
        "--project",
        fx.project.dir,
        ...(bad ? ["--partition", String(bad.partition), "--offset", String(bad.offset)] : []),
        "--reason",
        DAY_TWO_REASON,
      ];
      const atDeaths: Vec[] = [];
      const j = await runApplyAgainJourney({
        projectDir: fx.project.dir,
        planPath: "",
        fault: point,
        env: fx.workerEnv,
        command: { f: command, args },
        afterDeath: async () => {
          atDeaths.push(await committed(fx));
        },
      });
      cs.history.push(...j.history);
      recordJourney(cs, j, point, command);
      const after = await committed(fx);
      const skipped: Vec = Object.fromEntries(
        Object.entries(before).map(([k, v]) => [
          k,
          bad && Number(k) === bad.partition ? String(bad.offset + 1n) : v,
        ]),
      );
      if (bad) {
        cs.rec.record({
          check: "offsets.skipped_exactly_one",
          name:
            "exactly the bad record's partition moved, by exactly one (from the record's offset to the next)",
          kind: "equal",
          witness: "kafka-tools",
          expected: skipped,
          actual: after,
        });
        cs.rec.record({
          check: "offsets.stopped_or_skipped",
          name:
            "every look at the committed offsets (after each death, after recovery) saw the stop's or the skip's",
          kind: "subset",
          witness: "kafka-tools",
          expected: [before, skipped],
          actual: [...atDeaths, after],
        });
      } else {
        cs.rec.record({
          check: "offsets.unchanged",
          name:
            "a restart moved no committed offset: after every death and after recovery, those of the stop",
          kind: "all-equal",
          witness: "kafka-tools",
          expected: { value: before },
          actual: [...atDeaths, after],
        });
      }
      const st = await stateOrNull(fx);
      const events = st?.day_two ?? [];
      const skips = events.filter((e) => e.kind === "record_skipped");
      if (bad) {
        cs.rec.record({
          check: "audit.skip_recorded_once",
          name: "the skip is recorded exactly once, with the bad record's coordinates",
          kind: "equal",
          witness: stateWitness,
          expected: [{ partition: bad.partition, offset: String(bad.offset) }],
          actual: skips.map((e) => e.record),
        });
      }
      cs.rec.record({
        check: "audit.restart_recorded_once",
        name: bad
          ? "exactly one restart is recorded, naming the stopped container, its stop and the skip"
          : "exactly one restart is recorded, naming the stopped container and its stop",
        kind: "equal",
        witness: stateWitness,
        expected: [{
          container: { id: runner.id, exit_code: exit },
          after_skip: bad ? (skips.length === 1 ? skips[0].event_id : "(the one skip)") : null,
        }],
        actual: events.filter((e) => e.kind === "runner_restarted").map((e) => ({
          container: e.container,
          after_skip: e.after_skip,
        })),
      });
      const containers = await containersOf(app);
      cs.rec.record({
        check: "runner.same_generation",
        name: "the same container, of the same generation, runs again (no other container)",
        kind: "equal",
        witness: "docker-api",
        expected: [{ id: runner.id, generation: runner.labels.generation, running: true }],
        actual: containers.map((x) => ({
          id: x.id,
          generation: x.labels.generation,
          running: x.running,
        })),
      });
      cs.rec.record({
        check: "generation.serial",
        name: "the ownership serial is unchanged (a day-two command changes no owner)",
        kind: "equal",
        witness: stateWitness,
        expected: { before: 1, after: 1 },
        actual: {
          before: stBefore.ownership?.serial ?? null,
          after: st?.ownership?.serial ?? null,
        },
      });
      // records produced afterwards: exact output of everything but the bad record
      const later = orders("c", [120, 40, 260, 330, 75, 190]);
      await fx.produce(later);
      await recordStarterOutput(
        cs,
        [...first, ...later],
        "output = one record per produced record passing the predicate, each once; the bad record never",
      );
      await recordCommon(cs, fx, await stateOrNull(fx));
    },
  );
}
