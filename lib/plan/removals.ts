/**
 * Planning explicit runner removals (`lifecycle.runner_removals`, docs/project-format.md "Taking
 * a job down"): the owned runners × the declared removals × a fresh observation of each owned
 * runner's exact generation. Pure: nothing here performs I/O.
 *
 * - **remove**: only for a model declared in `lifecycle.runner_removals`, whose runner this
 *   project owns, planned online: the `remove_runner` action binds the exact owned generation
 *   observed (container ID and name, generation, mounted plan checksum, artifact checksum,
 *   application ID, volume name and instance) and lists what it keeps (the volume, the consumer
 *   group and its committed offsets, the topics). The observed runner must be exactly the owned
 *   one and running (the same checks as any owned runner: {@link verifyOwnedRunner}); anything
 *   else blocks with that check's code, and a blocked plan mutates nothing.
 * - **already released**: a declared removal of a model this project does not own: nothing to do.
 * - an owned model that is no longer declared and has no removal is `BLOCKED_RUNNER_REMOVAL`:
 *   removal is never inferred from absence.
 *
 * @example
 * ```ts
 * import { planRunnerRemovals } from "./removals.ts";
 * // const { actions, blockers } = planRunnerRemovals({ owned, removals, declared, observation });
 * ```
 * @module
 */
import type { OwnedRunner, OwnedTopic, RetainedRunner } from "../state/ownership.ts";
import type { RunnerRemovalDecl } from "../project/removals.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";
import type { ProjectObservation } from "../validation/observation.ts";
import { verifyOwnedRunner } from "../validation/runner_checks.ts";

/** The exact generation a removal stops and removes (bound at plan time). */
export interface RemovedGeneration {
  /** The container's exact ID. */
  id: string;
  /** Its name (the first generation's, or a replacement's). */
  name: string;
  /** Its generation label. */
  generation: string;
  /** The sha256 of its mounted plan file. */
  plan_sha256: string;
}

/** A planned removal of one owned runner: stop it, remove its container, release it. */
export interface RemoveRunnerAction {
  /** The action's type. */
  type: "remove_runner";
  /** The model whose runner is removed (declared in `lifecycle.runner_removals`). */
  model: string;
  /** Its application ID (also its consumer group, kept). */
  application_id: string;
  /** The owned artifact checksum (the generation's label must carry it). */
  artifact_sha256: string;
  /** The exact generation observed when the plan was made. */
  container: RemovedGeneration;
  /** What the generation runs on (read from its mounted plan): how apply observes it again. */
  runner: {
    input_topic: string;
    output_topic: string;
    /** The dead-letter topic (`on_invalid: dead_letter`); absent when the model stops. */
    dead_letter_topic?: string;
    image: string;
    network: string;
  };
  /** The owned state volume (kept). */
  volume: { name: string; instance_id: string };
  /** What the removal keeps: nothing of it is deleted. */
  keeps: {
    /** The state volume, by name. */
    volume: string;
    /** The consumer group (the application ID) with its committed offsets. */
    consumer_group: string;
    /** The committed offsets observed when the plan was made (lower bounds: it runs until stopped). */
    committed: Array<{ topic: string; partition: number; offset: string }>;
    /** The input, output and dead-letter topics (and their records). */
    topics: string[];
  };
}

/** What {@link planRunnerRemovals} reads. */
export interface RunnerRemovalInput {
  /** The owned runners. */
  owned: OwnedRunner[];
  /** The owned topics (a removed runner's topics are checked as any owned runner's). */
  ownedTopics: OwnedTopic[];
  /** The declared removals (a destroy: every owned model). */
  removals: readonly Pick<RunnerRemovalDecl, "model">[];
  /** The models the project declares (compiled). */
  declared: ReadonlySet<string>;
  /** Null offline. */
  observation: ProjectObservation | null;
}

/** What a removal keeps, said once wherever a removal is reviewed. */
export const RUNNER_REMOVAL_NOTE =
  "Removing a runner stops it (TERM, clean close) and removes its container only: its state volume, its consumer group with its committed offsets, and its topics with their records stay. Declaring the model again resumes from those offsets. docs/runbook.md says how to delete them and what is lost.";

/**
 * The removal actions and blockers of a full plan (see the module documentation).
 *
 * @example
 * ```ts
 * import { planRunnerRemovals } from "./removals.ts";
 * planRunnerRemovals({ owned: [], ownedTopics: [], removals: [], declared: new Set(), observation: null });
 * ```
 */
export function planRunnerRemovals(
  input: RunnerRemovalInput,
): { actions: RemoveRunnerAction[]; blockers: Blocker[] } {
  const actions: RemoveRunnerAction[] = [];
  const blockers: Blocker[] = [];
  for (const owned of input.owned) {
    if (input.declared.has(owned.model)) continue;
    const model = owned.model;
    // each blocker names the runner's application ID: the model is no longer in the project
    const held = (...bs: Blocker[]) =>
      blockers.push(
        ...bs.map((x) => ({
          ...x,
          evidence: { application_id: owned.application_id, ...x.evidence },
        })),
      );
    if (!input.removals.some((r) => r.model === model)) {
      held(blocker(
        "BLOCKED_RUNNER_REMOVAL",
        `model ${model} is owned but no longer declared: sluice never takes a runner down because it vanished from the project. Declare the model again, or declare its removal (lifecycle.runner_removals: [{ model: ${model} }])`,
        { model },
      ));
      continue;
    }
    if (input.observation === null) {
      held(blocker(
        "BLOCKED_OFFLINE_REMOVAL",
        `model ${model} is declared removed; a removal is planned online (it binds the exact running generation): plan again without --offline`,
        { model },
      ));
      continue;
    }
    const obs = input.observation.runners.find((r) => r.applicationId === owned.application_id);
    if (!obs) {
      held(blocker(
        "BLOCKED_RUNNER_MISSING",
        `no container carries application ID ${owned.application_id} of model ${model} (or its mounted plan cannot be read): sluice removes only the exact owned generation`,
        { model },
      ));
      continue;
    }
    const checked = verifyOwnedRunner(obs, owned, input.ownedTopics);
    if (checked.blockers.length > 0 || !checked.container) {
      held(...checked.blockers);
      continue;
    }
    const c = checked.container;
    actions.push({
      type: "remove_runner",
      model,
      application_id: owned.application_id,
      artifact_sha256: owned.artifact_sha256,
      container: {
        id: c.id,
        name: c.name,
        generation: c.labels.generation ?? "",
        plan_sha256: c.labels.planSha256 ?? "",
      },
      runner: {
        input_topic: obs.target.inputTopic,
        output_topic: obs.target.outputTopic,
        ...(obs.target.deadLetterTopic ? { dead_letter_topic: obs.target.deadLetterTopic } : {}),
        image: obs.target.image,
        network: obs.target.network,
      },
      volume: { name: owned.volume.name, instance_id: owned.volume.instance_id },
      keeps: {
        volume: owned.volume.name,
        consumer_group: owned.application_id,
        committed: Object.entries(obs.kafka.committed)
          .map(([p, offset]) => ({ topic: obs.target.inputTopic, partition: Number(p), offset }))
          .sort((a, b) => a.partition - b.partition),
        topics: [
          obs.target.inputTopic,
          obs.target.outputTopic,
          ...(obs.target.deadLetterTopic ? [obs.target.deadLetterTopic] : []),
        ],
      },
    });
  }
  return { actions, blockers };
}

/**
 * The plan of `sluice plan --destroy`: every owned runner taken down, each bound exactly as a
 * runner removal binds it ({@link RemoveRunnerAction}), applied by the destroy journey
 * (`lib/protocol/destroy.ts`) as one operation.
 */
export interface DestroyAction {
  /** The action's type. */
  type: "destroy";
  /** Every owned runner, in ownership order, bound as a removal binds it (the last one too). */
  runners: RemoveRunnerAction[];
  /** What the destroy keeps: nothing data-bearing is deleted. */
  keeps: {
    /** The owned topics (with their records); they stay owned. */
    topics: string[];
    /** The state volumes of the runners it takes down and of those removed before. */
    volumes: string[];
    /** The consumer groups (application IDs) with their committed offsets. */
    consumer_groups: string[];
  };
}

/** What {@link planDestroy} reads. */
export interface DestroyInput {
  /** The owned runners, topics and what earlier removals kept. */
  owned: OwnedRunner[];
  ownedTopics: OwnedTopic[];
  retained: RetainedRunner[];
  /** The owned connectors' exact names (a destroy does not take them down yet). */
  ownedConnectors: string[];
  /** Whether the data-bearing resources were asked to be deleted (`--delete-data`). */
  deleteData: boolean;
  /** Null offline. */
  observation: ProjectObservation | null;
}

/** What a destroy keeps, said once wherever a destroy is reviewed. */
export const DESTROY_NOTE =
  "A destroy takes down every runner this project owns in the environment (TERM, clean close, its container removed) and keeps every data-bearing resource: each runner's state volume, its consumer group with its committed offsets, and the owned topics with their records. Planning the project again afterwards is a create that resumes from them. docs/runbook.md says how to delete them by hand and what is lost.";

/**
 * The destroy plan's action and blockers: the owned runners × a fresh observation of each
 * one's exact generation, the same checks and bindings as a declared removal's
 * ({@link planRunnerRemovals}, with every owned model removed and none declared). No action
 * when nothing runs (a destroy after a destroy changes nothing). A destroy never deletes data:
 * `deleteData` is refused (`BLOCKED_DESTROY_DATA_DELETION`), and owned connectors are not yet
 * taken down by it (`BLOCKED_DESTROY_CONNECTORS`).
 *
 * @example
 * ```ts
 * import { planDestroy } from "./removals.ts";
 * planDestroy({ owned: [], ownedTopics: [], retained: [], ownedConnectors: [], deleteData: false, observation: null });
 * // { actions: [], blockers: [] }
 * ```
 */
export function planDestroy(
  input: DestroyInput,
): { actions: DestroyAction[]; blockers: Blocker[] } {
  const blockers: Blocker[] = [];
  const kept = {
    topics: input.ownedTopics.map((t) => t.name),
    volumes: [
      ...input.owned.map((r) => r.volume.name),
      ...input.retained.map((r) => r.volume.name),
    ],
    consumer_groups: [
      ...input.owned.map((r) => r.application_id),
      ...input.retained.map((r) => r.application_id),
    ],
  };
  if (input.deleteData) {
    blockers.push(blocker(
      "BLOCKED_DESTROY_DATA_DELETION",
      `a destroy does not delete data-bearing resources yet: ${
        [
          kept.topics.length > 0 ? `topics ${kept.topics.join(", ")}` : "",
          kept.volumes.length > 0 ? `state volumes ${kept.volumes.join(", ")}` : "",
          kept.consumer_groups.length > 0
            ? `consumer groups (with their offsets) ${kept.consumer_groups.join(", ")}`
            : "",
        ].filter((x) => x !== "").join("; ") || "nothing is owned"
      } would stay. Plan the destroy without --delete-data, then delete them by hand (docs/runbook.md, "Destroy")`,
      { evidence: { keeps: kept } },
    ));
  }
  if (input.ownedConnectors.length > 0) {
    blockers.push(blocker(
      "BLOCKED_DESTROY_CONNECTORS",
      `this project owns connector${input.ownedConnectors.length === 1 ? "" : "s"} ${
        input.ownedConnectors.join(", ")
      }, which a destroy does not take down yet: declare their removal (lifecycle.connector_removals), plan and apply it, then plan the destroy`,
      { evidence: { connectors: input.ownedConnectors } },
    ));
  }
  if (input.observation === null && input.owned.length > 0) {
    blockers.push(blocker(
      "BLOCKED_OFFLINE_REMOVAL",
      `a destroy takes down ${input.owned.length} runner${
        input.owned.length === 1 ? "" : "s"
      } and is planned online (it binds each exact running generation): plan again without --offline`,
      { evidence: { runners: input.owned.map((r) => r.model) } },
    ));
    return { actions: [], blockers };
  }
  const removals = planRunnerRemovals({
    owned: input.owned,
    ownedTopics: input.ownedTopics,
    removals: input.owned.map((r) => ({ model: r.model })),
    declared: new Set(),
    observation: input.observation,
  });
  blockers.push(...removals.blockers);
  const actions: DestroyAction[] = input.owned.length === 0
    ? []
    : [{ type: "destroy", runners: removals.actions, keeps: kept }];
  return { actions, blockers };
}
