/**
 * The real fault matrix's destroy cases (`plan --destroy`, `lib/protocol/destroy.ts`): the
 * starter deployed alone on the real daemon and broker, records processed and committed, then
 * `sluice plan --destroy --out FILE` — the last model taken down — and `apply --plan FILE`
 * killed at the case's fault point and continued by the same `apply --plan` in fresh
 * processes. Required (`destroyCompletion` in catalogue.ts): no container of the model left,
 * its volume kept with its instance, the group's committed offsets those of the clean close at
 * every look, the topics kept with their IDs, no group member, ownership without runners (the
 * volume retained, the topics still owned), serial + 1 exactly once, no pending control, a
 * destroy planned again is a no-op, and the project planned again is a create resuming from
 * the kept volume and offsets.
 *
 * @example
 * ```ts
 * import { runDestroyCase } from "./matrix_destroy.ts";
 * // const evidence = await runDestroyCase(env, image, { boundary, side, backend }, runId);
 * ```
 * @module
 */
import type { EnvDescriptor } from "../harness/env.ts";
import { runApplyAgainJourney } from "../harness/faults.ts";
import { containersOf, kafkaTools, volumeOf } from "../harness/witness.ts";
import { DESTROY_SERIAL_BEFORE } from "./catalogue.ts";
import { caseEvidence, cli, newCase } from "./common.ts";
import type { CaseEvidence } from "./evidence.ts";
import { caseState, type Vec } from "./invariants.ts";
import { type MatrixCase, matrixCaseMeta, recordJourney, stateOrNull } from "./matrix_journeys.ts";
import { committed, stateWitnessOf, warmUp } from "./matrix_lifecycle.ts";

/**
 * One destroy case (see module docs).
 *
 * @example
 * ```ts
 * import { runDestroyCase } from "./matrix_destroy.ts";
 * // await runDestroyCase(env, image, c, runId);
 * ```
 */
export function runDestroyCase(
  env: EnvDescriptor,
  image: string,
  c: MatrixCase,
  runId: string,
): Promise<CaseEvidence> {
  const point = `${c.boundary}:${c.side}`;
  return caseEvidence(
    matrixCaseMeta(c, runId, { journey: "destroy" }),
    async () => await caseState(await newCase(env, image, c.backend)),
    async (cs) => {
      const { fx } = cs;
      const app = fx.applicationId;
      const stateWitness = stateWitnessOf(fx);
      await warmUp(cs);
      const planPath = `${fx.project.dir}/destroy.plan.json`;
      const planned = await cli(fx.history, "cli-plan", "plan", [
        "plan",
        "--project",
        fx.project.dir,
        "--destroy",
        "--out",
        planPath,
      ], fx.workerEnv);
      const actions = (planned.json?.data as {
        plan?: { actions: Array<{ type: string; runners?: Array<{ container: { id: string } }> }> };
      })?.plan?.actions ?? null;
      const bound = (await containersOf(app)).find((x) => x.running)?.id ?? null;
      cs.rec.recordSetup({
        check: "setup.destroy_plan",
        name:
          "the destroy plan takes down exactly the starter's running runner, by its container ID",
        kind: "equal",
        witness: "sluice+docker-api",
        expected: { exit: 0, actions: [["destroy", [bound]]] },
        actual: {
          exit: planned.code,
          actions: actions?.map((a) => [a.type, a.runners?.map((r) => r.container.id) ?? null]) ??
            null,
        },
      });
      const topics = [fx.project.inputTopic, fx.project.outputTopic];
      const volumeName = `${app}-state`;
      const kBefore = await kafkaTools(env.brokerContainerId, {
        offsets: { group: app, topic: fx.project.inputTopic },
        topics,
      });
      const stBefore = await fx.state();
      const atDeaths: Vec[] = [];
      const j = await runApplyAgainJourney({
        projectDir: fx.project.dir,
        planPath,
        fault: point,
        env: fx.workerEnv,
        afterDeath: async () => {
          atDeaths.push(await committed(fx));
        },
      });
      cs.history.push(...j.history);
      recordJourney(cs, j, point);

      const st = await stateOrNull(fx);
      cs.rec.record({
        check: "destroy.container_gone",
        name: "no container carries the model's application ID (the bound one removed)",
        kind: "count",
        witness: "docker-api",
        expected: { max: 0 },
        actual: (await containersOf(app)).map((x) => ({ id: x.id, state: x.state })),
      });
      const volumeAfter = await volumeOf(volumeName);
      cs.rec.record({
        check: "volume.instance_kept",
        name: "the state volume is kept, its label and instance file the bound instance",
        kind: "unchanged",
        witness: "docker-api+host-fs",
        expected: { exists: true, label: fx.volumeInstance, file: fx.volumeInstance },
        actual: { exists: volumeAfter.exists, label: volumeAfter.label, file: volumeAfter.file },
      });
      const kAfter = await kafkaTools(env.brokerContainerId, {
        offsets: { group: app, topic: fx.project.inputTopic },
        members: { group: app },
        topics,
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
      cs.rec.record({
        check: "kafka.no_member",
        name: "the group has no member",
        kind: "count",
        witness: "kafka-tools",
        expected: { max: 0 },
        actual: (kAfter.members ?? []).map((m) => m.client_id),
      });
      cs.rec.record({
        check: "ownership.destroyed",
        name:
          "ownership owns no runner, keeps the volume instance and the group (retained) and still owns the topics",
        kind: "equal",
        witness: stateWitness,
        expected: {
          runners: [],
          retained: [{ application_id: app, volume_instance: fx.volumeInstance }],
          topics: stBefore.ownership?.topics.map((t) => t.name).sort() ?? null,
        },
        actual: {
          runners: st?.ownership?.runners.map((r) => r.application_id) ?? null,
          retained: st?.ownership?.retained ?? null,
          topics: st?.ownership?.topics.map((t) => t.name).sort() ?? null,
        },
      });
      cs.rec.record({
        check: "generation.serial",
        name: "the ownership serial incremented exactly once",
        kind: "equal",
        witness: stateWitness,
        expected: { before: DESTROY_SERIAL_BEFORE, after: DESTROY_SERIAL_BEFORE + 1 },
        actual: {
          before: stBefore.ownership?.serial ?? null,
          after: st?.ownership?.serial ?? null,
        },
      });
      cs.rec.record({
        check: "state.control_cleared",
        name: "no pending control is left",
        kind: "absent",
        witness: stateWitness,
        expected: ["control"],
        actual: st?.documents ?? ["(no state)"],
      });
      // a destroy after the destroy changes nothing
      const again = await cli(fx.history, "cli-noop", "plan", [
        "plan",
        "--project",
        fx.project.dir,
        "--destroy",
      ], fx.workerEnv);
      cs.rec.record({
        check: "plan.noop",
        name: "a destroy planned again is a no-op",
        kind: "equal",
        witness: "sluice",
        expected: { exit: 0, noop: true },
        actual: {
          exit: again.code,
          noop: (again.json?.data as { noop?: boolean } | null)?.noop ?? null,
        },
      });
      // the unchanged project planned again: a create resuming from what was kept
      const next = await cli(fx.history, "cli-recreate", "plan", [
        "plan",
        "--project",
        fx.project.dir,
      ], fx.workerEnv);
      const nextActions = (next.json?.data as {
        plan?: { actions: Array<{ type: string; resume?: { volume_instance: string } }> };
      })?.plan?.actions ?? [];
      cs.rec.record({
        check: "destroy.plan_recreates",
        name: "the project planned again creates its runner on the kept volume instance",
        kind: "equal",
        witness: "sluice",
        expected: { exit: 0, actions: [["create_runner", fx.volumeInstance]] },
        actual: {
          exit: next.code,
          actions: nextActions.map((a) => [a.type, a.resume?.volume_instance ?? null]),
        },
      });
    },
    async (cs) => {
      await cs.fx.cleanup();
    },
  );
}
