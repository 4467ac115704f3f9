/**
 * The real fault matrix's destroy cases (`plan --destroy`, `lib/protocol/destroy.ts`): the
 * removal's case of the matrix (`runTakeDownCase`, `matrix_lifecycle.ts`) with the destroy's
 * parameters, by the armed site ({@link destroyVariant}): {@link DESTROY_CASE}, which keeps the
 * data; for a site of the data rows {@link DESTROY_DATA_CASE} (`plan --destroy --delete-data`: the
 * volume, the group and the owned topics deleted; afterwards the project plans a create from
 * nothing); for the connector row's site {@link DESTROY_CONNECTORS_CASE} (the starter deployed
 * with the pipeline's two connectors, which the destroy deletes first). The starter deployed
 * alone on the real daemon and broker, records processed and committed, then
 * `sluice plan --destroy --out FILE` — the last model taken down — and `apply --plan FILE` killed at the case's fault point and continued by the same
 * `apply --plan` in fresh processes. Required (`destroyCompletion` in catalogue.ts): no container
 * of the model left, its volume kept with its instance, the group's committed offsets those of
 * the clean close at every look, the topics kept with their IDs, no group member, ownership
 * without runners (the volume retained, the topics still owned), serial + 1 exactly once, no
 * pending control, a destroy planned again is a no-op, and the project planned again is a create
 * resuming from the kept volume and offsets.
 *
 * @example
 * ```ts
 * import { runDestroyCase } from "./matrix_destroy.ts";
 * // const evidence = await runDestroyCase(env, image, { boundary, side, backend }, runId);
 * ```
 * @module
 */
import type { EnvDescriptor } from "../harness/env.ts";
import { pipelineConnectorNames } from "../harness/pipeline.ts";
import {
  DESTROY_CONNECTORS_SERIAL_BEFORE,
  DESTROY_SERIAL_BEFORE,
  destroyVariant,
} from "./catalogue.ts";
import { type CaseState, cli } from "./common.ts";
import type { CaseEvidence } from "./evidence.ts";
import { type MatrixCase, recordCommon } from "./matrix_journeys.ts";
import { runTakeDownCase, type TakeDownCase } from "./matrix_lifecycle.ts";

/** An action of the plan made after a destroy, as far as the cases read it. */
interface NextAction {
  type: string;
  topic?: string;
  name?: string;
  resume?: { volume_instance: string };
}

/**
 * After a destroy: the same destroy planned again is a no-op (recorded), then the unchanged
 * project planned again; returns that plan's exit status and actions, for the case to check.
 */
async function planAgainAfterDestroy(
  cs: CaseState,
  st: Parameters<TakeDownCase["after"]>[1],
  destroyArgs: string[],
): Promise<{ code: number | null; actions: NextAction[] }> {
  const { fx } = cs;
  await recordCommon(cs, fx, st, { args: destroyArgs, name: "a destroy planned again is a no-op" });
  const replan = ["plan", "--project", fx.project.dir];
  const next = await cli(fx.history, "cli-recreate", "plan", replan, fx.workerEnv);
  const actions = (next.json?.data as { plan?: { actions: NextAction[] } })?.plan?.actions ?? [];
  return { code: next.code, actions };
}

/**
 * The destroy's matrix case: the starter alone, taken down by `plan --destroy`; afterwards a
 * destroy planned again is a no-op and the project planned again creates its runner on the kept
 * volume instance.
 *
 * @example
 * ```ts
 * import { DESTROY_CASE } from "./matrix_destroy.ts";
 * console.log(DESTROY_CASE.plan.args); // ["--destroy"]
 * ```
 */
export const DESTROY_CASE: TakeDownCase = {
  journey: "destroy",
  spare: false,
  plan: { args: ["--destroy"], file: "destroy.plan.json" },
  planned: {
    check: "setup.destroy_plan",
    name: "the destroy plan takes down exactly the starter's running runner, by its container ID",
    expected: (bound) => [["destroy", [bound]]],
    binds: (a) => a.runners?.map((r) => r.container.id) ?? null,
  },
  words: {
    gone: {
      check: "destroy.container_gone",
      name: "no container carries the model's application ID (the bound one removed)",
    },
    noMember: "the group has no member",
    ownership: {
      check: "ownership.destroyed",
      name:
        "ownership owns no runner, keeps the volume instance and the group (retained) and still owns the topics",
    },
  },
  serialBefore: DESTROY_SERIAL_BEFORE,
  after: async (cs, st) => {
    const { fx } = cs;
    // a destroy after the destroy changes nothing; the project planned again a create resuming
    // from what was kept
    const next = await planAgainAfterDestroy(cs, st, ["--destroy"]);
    cs.rec.record({
      check: "destroy.plan_recreates",
      name: "the project planned again creates its runner on the kept volume instance",
      kind: "equal",
      witness: "sluice",
      expected: { exit: 0, actions: [["create_runner", fx.volumeInstance]] },
      actual: {
        exit: next.code,
        actions: next.actions.map((a) => [a.type, a.resume?.volume_instance ?? null]),
      },
    });
  },
};

/**
 * The destroy's matrix case for a site only a destroy that deletes data crosses: the starter
 * alone, taken down by `plan --destroy --delete-data`, which deletes both of its topics (the
 * matrix's starter creates and owns both); afterwards a destroy planned again is a no-op and the
 * project planned again creates those topics and its runner from nothing (no volume to resume
 * from).
 *
 * @example
 * ```ts
 * import { DESTROY_DATA_CASE } from "./matrix_destroy.ts";
 * console.log(DESTROY_DATA_CASE.plan.args); // ["--destroy", "--delete-data"]
 * ```
 */
export const DESTROY_DATA_CASE: TakeDownCase = {
  ...DESTROY_CASE,
  plan: { args: ["--destroy", "--delete-data"], file: "destroy-data.plan.json" },
  deletesData: true,
  after: async (cs, st, before) => {
    const next = await planAgainAfterDestroy(cs, st, ["--destroy", "--delete-data"]);
    // the topics by name (their order is the project's), then every other action in order
    const topics = next.actions.filter((a) => a.type === "create_topic")
      .map((a) => a.topic ?? null).sort();
    cs.rec.record({
      check: "destroy.plan_creates_fresh",
      name:
        "the project planned again creates every topic the destroy deleted and its runner from nothing (no volume to resume)",
      kind: "equal",
      witness: "sluice",
      expected: {
        exit: 0,
        topics: before.ownership?.topics.map((t) => t.name).sort() ?? null,
        others: [["create_runner", null]],
      },
      actual: {
        exit: next.code,
        topics,
        others: next.actions.filter((a) => a.type !== "create_topic")
          .map((a) => [a.type, a.resume ?? null]),
      },
    });
  },
};

/**
 * The destroy's matrix case for the connector row's site: the starter deployed with the
 * pipeline's source and sink connectors (harness/pipeline.ts), taken down by `plan --destroy`,
 * which deletes both connectors first; afterwards a destroy planned again is a no-op and the
 * project planned again creates its runner on the kept volume instance and both connectors again.
 *
 * @example
 * ```ts
 * import { DESTROY_CONNECTORS_CASE } from "./matrix_destroy.ts";
 * console.log(DESTROY_CONNECTORS_CASE.serialBefore); // 2
 * ```
 */
export const DESTROY_CONNECTORS_CASE: TakeDownCase = {
  ...DESTROY_CASE,
  connectors: true,
  serialBefore: DESTROY_CONNECTORS_SERIAL_BEFORE,
  after: async (cs, st) => {
    const { fx } = cs;
    const next = await planAgainAfterDestroy(cs, st, ["--destroy"]);
    cs.rec.record({
      check: "destroy.plan_recreates",
      name:
        "the project planned again creates its runner on the kept volume instance and both connectors again",
      kind: "equal",
      witness: "sluice",
      expected: {
        exit: 0,
        actions: [
          ["create_runner", fx.volumeInstance],
          ["create_connector", pipelineConnectorNames(fx.project.name).source],
          ["create_connector", pipelineConnectorNames(fx.project.name).sink],
        ],
      },
      actual: {
        exit: next.code,
        actions: next.actions.map((a) =>
          a.type === "create_connector"
            ? [a.type, a.name ?? null]
            : [a.type, a.resume?.volume_instance ?? null]
        ),
      },
    });
  },
};

/**
 * One destroy case (see module docs): the one that deletes data for a site of the data rows,
 * the one that keeps it for every other.
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
  const variant = destroyVariant(c.boundary);
  const j = variant === "delete-data"
    ? DESTROY_DATA_CASE
    : variant === "connectors"
    ? DESTROY_CONNECTORS_CASE
    : DESTROY_CASE;
  return runTakeDownCase(env, image, c, runId, j);
}
