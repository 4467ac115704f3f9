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
import {
  type ConnectorPlanInput,
  planConnectors,
  type ReleaseConnectorAction,
  type RemoveConnectorAction,
} from "./connectors.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";
import type {
  ContainerEvidence,
  ProjectObservation,
  RunnerObservation,
} from "../validation/observation.ts";
import { verifyOwnedRunner } from "../validation/runner_checks.ts";
import { verifyOwnedSet } from "./owned_set.ts";

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

/** One instance of a set a removal stops and removes, bound at plan time on its endpoint. */
export interface RemovedInstance {
  instance: number;
  /** The `docker.endpoints` name it runs on; null for the environment's one daemon. */
  endpoint: string | null;
  /** Its exact generation. */
  container: RemovedGeneration;
  /** Its own state volume (kept). */
  volume: { name: string; instance_id: string };
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
  /**
   * A set (an owned runner with `instances`): each instance's exact generation on its endpoint,
   * and its volume (kept), in index order; instance 0's are `container` and `volume` above.
   * Absent for a single runner.
   */
  instances?: RemovedInstance[];
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
  /**
   * A set's instances, each observed on its endpoint (by application ID, in index order; null:
   * its endpoint did not answer; empty: instance 0's runner or its mounted plan is gone, so
   * nothing says what the set runs). Absent offline or without an owned set.
   */
  sets?: ReadonlyMap<string, readonly (RunnerObservation | null)[]>;
  /** Whether the set journeys are open (`setsOpen`); closed, a set's removal is blocked. */
  setsOpen?: boolean;
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
    if (owned.instances) {
      const set = setRemoval(owned, input);
      if ("blockers" in set) held(...set.blockers);
      else actions.push(set.action);
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
    actions.push(removalOf(owned, obs, checked.container));
  }
  return { actions, blockers };
}

/** The exact generation of an observed container, as a removal binds it. */
function generationOf(c: ContainerEvidence): RemovedGeneration {
  return {
    id: c.id,
    name: c.name,
    generation: c.labels.generation ?? "",
    plan_sha256: c.labels.planSha256 ?? "",
  };
}

/** The removal of `owned`, its (instance 0's) container `c` observed in `obs`. */
function removalOf(
  owned: OwnedRunner,
  obs: RunnerObservation,
  c: ContainerEvidence,
): RemoveRunnerAction {
  return {
    type: "remove_runner",
    model: owned.model,
    application_id: owned.application_id,
    artifact_sha256: owned.artifact_sha256,
    container: generationOf(c),
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
  };
}

/**
 * The removal of an owned set: each instance observed on its endpoint and checked as an owned
 * runner is (its exact generation and volume; the group may hold the set's N members), every
 * instance bound. Blocked while the set journeys are closed, and for an instance whose endpoint
 * did not answer or whose runner is not as owned.
 */
function setRemoval(
  owned: OwnedRunner,
  input: RunnerRemovalInput,
): { action: RemoveRunnerAction } | { blockers: Blocker[] } {
  const instances = owned.instances!;
  const model = owned.model;
  if (!input.setsOpen) {
    return {
      blockers: [blocker(
        "BLOCKED_INSTANCES_UNSUPPORTED",
        `model ${model} is owned as a set of ${instances.length} instances, and taking a set down is not offered yet`,
        { model, evidence: { instances: instances.length } },
      )],
    };
  }
  const verified = verifyOwnedSet(
    owned,
    input.sets?.get(owned.application_id),
    input.ownedTopics,
    "a set is taken down only with every instance's exact generation bound",
  );
  if ("blockers" in verified) return verified;
  const bound = verified.bound;
  return {
    action: {
      ...removalOf(owned, bound[0].obs, bound[0].c),
      instances: instances.map((i, n) => ({
        instance: i.instance,
        endpoint: i.endpoint,
        container: generationOf(bound[n].c),
        volume: { name: i.volume.name, instance_id: i.volume.instance_id },
      })),
    },
  };
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
  /**
   * Every owned Kafka Connect connector, bound as a declared connector removal binds it (the
   * owned cluster identity and fingerprint; already absent: its record released), deleted first
   * (the destroy's connector row). Absent when the project owns none.
   */
  connectors?: DestroyConnectorAction[];
  /**
   * What the destroy deletes (`--delete-data`, the destroy's data rows): only what this
   * project's plans created and its state records. Absent without `--delete-data`: nothing is
   * deleted.
   */
  deletes?: DestroyDeletes;
  /** What the destroy keeps (with `--delete-data`: only what the project does not own). */
  keeps: {
    /** Topics with their records: the owned ones, or (deleting data) those not owned. */
    topics: string[];
    /** The state volumes of the runners it takes down and of those removed before. */
    volumes: string[];
    /** The consumer groups (application IDs) with their committed offsets. */
    consumer_groups: string[];
  };
}

/** What a destroy that deletes data deletes, in the order of its data rows. */
export interface DestroyDeletes {
  /** The consumer groups (application IDs), with their committed offsets. */
  consumer_groups: string[];
  /**
   * The state volumes, each with what sluice wrote on it (its labels must still say so), and
   * for a set's instance the endpoint its volume is on (absent: the environment's one daemon).
   */
  volumes: Array<
    { name: string; application_id: string; instance_id: string; endpoint?: string | null }
  >;
  /** The owned topics, each by the ID its create recorded, with their records. */
  topics: Array<{ name: string; topic_id: string }>;
}

/** A connector a destroy takes down: deleted, or (already absent) its record released. */
export type DestroyConnectorAction = RemoveConnectorAction | ReleaseConnectorAction;

/** What {@link planDestroy} reads. */
export interface DestroyInput {
  /** The owned runners, topics and what earlier removals kept. */
  owned: OwnedRunner[];
  ownedTopics: OwnedTopic[];
  retained: RetainedRunner[];
  /**
   * The project's connectors: the owned ones with a fresh observation (null: none owned or
   * declared). The destroy plans each owned one's removal, whether declared or not.
   */
  connectors: Pick<ConnectorPlanInput, "owned" | "observation"> | null;
  /** Whether the data-bearing resources were asked to be deleted (`--delete-data`). */
  deleteData: boolean;
  /** Null offline. */
  observation: ProjectObservation | null;
  /** Each owned set's instances observed on their endpoints (see {@link RunnerRemovalInput}). */
  sets?: RunnerRemovalInput["sets"];
  /** Whether the set journeys are open (see {@link RunnerRemovalInput}). */
  setsOpen?: boolean;
}

/** What a destroy keeps, said once wherever a destroy is reviewed. */
export const DESTROY_NOTE =
  "A destroy takes down every runner this project owns in the environment (TERM, clean close, its container removed) and keeps every data-bearing resource: each runner's state volume, its consumer group with its committed offsets, and the owned topics with their records. Planning the project again afterwards is a create that resumes from them. docs/runbook.md says how to delete them by hand and what is lost.";

/** What a destroy that deletes data deletes, said once wherever one is reviewed. */
export const DESTROY_DELETE_NOTE =
  "This destroy takes down every runner this project owns in the environment (TERM, clean close, its container removed) and then DELETES the data this project created: the consumer groups with their committed offsets, the state volumes, and the owned topics with their records. They are lost for every reader; planning the project again afterwards is a create from nothing. A topic the project does not own (an external source) is never deleted. docs/runbook.md, section 9.";

/**
 * The review's lines of a destroy action: what it deletes (with `--delete-data`) and what it
 * keeps, each list named, so that the choice is visible where the plan is reviewed.
 *
 * @example
 * ```ts
 * import { destroyDataLines } from "./removals.ts";
 * destroyDataLines({ type: "destroy", runners: [], keeps: { topics: ["orders"], volumes: [], consumer_groups: [] } });
 * // ["KEPT by this destroy (nothing data-bearing is deleted): topics orders; …"]
 * ```
 */
export function destroyDataLines(action: DestroyAction): string[] {
  const list = (xs: string[]) => xs.join(", ") || "(none)";
  const k = action.keeps;
  const d = action.deletes;
  const cs = action.connectors ?? [];
  const connectors = cs.length === 0 ? [] : [
    `CONNECTORS taken down first by this destroy (each only while it is still the one sluice created; the connector object only): ${
      cs.map((c) =>
        `${c.name} on ${c.cluster} (${
          c.type === "remove_connector" ? "deleted" : "already absent: released"
        })`
      ).join(", ")
    }.`,
  ];
  if (!d) {
    return [
      ...connectors,
      `KEPT by this destroy (nothing data-bearing is deleted): topics ${
        list(k.topics)
      }; state volumes ${list(k.volumes)}; consumer groups with their offsets ${
        list(k.consumer_groups)
      }.`,
    ];
  }
  return [
    ...connectors,
    `DELETED by this destroy (--delete-data): consumer groups with their offsets ${
      list(d.consumer_groups)
    }; state volumes ${list(d.volumes.map((v) => v.name))}; topics with their records ${
      list(d.topics.map((t) => `${t.name} (id ${t.topic_id})`))
    }.`,
    `KEPT by this destroy (not this project's to delete): topics ${list(k.topics)}.`,
  ];
}

/**
 * The destroy plan's action and blockers: the owned runners × a fresh observation of each
 * one's exact generation, the same checks and bindings as a declared removal's
 * ({@link planRunnerRemovals}, with every owned model removed and none declared). Without
 * `deleteData` it keeps every data-bearing resource; with it, the action lists what it deletes
 * ({@link DestroyDeletes}: the groups and volumes of the owned and retained runners, the owned
 * topics by their recorded IDs) and keeps only what the project does not own (the topics its
 * runners read or write that it did not create). No action when nothing is owned to take down
 * or delete (a destroy after a destroy changes nothing). An owned topic without a recorded ID
 * blocks a deletion (`BLOCKED_DESTROY_DATA_DELETION`: its identity cannot be proved). Every owned
 * connector is planned as a declared connector removal is ({@link planConnectors}: the owned
 * cluster, the owned fingerprint; absent: released; offline: `BLOCKED_OFFLINE_CONNECTOR_CHANGE`)
 * and deleted first.
 *
 * @example
 * ```ts
 * import { planDestroy } from "./removals.ts";
 * planDestroy({ owned: [], ownedTopics: [], retained: [], connectors: null, deleteData: false, observation: null });
 * // { actions: [], blockers: [] }
 * ```
 */
export function planDestroy(
  input: DestroyInput,
): { actions: DestroyAction[]; blockers: Blocker[] } {
  const blockers: Blocker[] = [];
  const everything = {
    topics: input.ownedTopics.map((t) => t.name),
    volumes: [...input.owned, ...input.retained].flatMap((r) =>
      r.instances ? r.instances.map((i) => i.volume.name) : [r.volume.name]
    ),
    consumer_groups: [
      ...input.owned.map((r) => r.application_id),
      ...input.retained.map((r) => r.application_id),
    ],
  };
  if (input.deleteData) {
    const unproven = input.ownedTopics.filter((t) => t.topic_id === null).map((t) => t.name);
    if (unproven.length > 0) {
      blockers.push(blocker(
        "BLOCKED_DESTROY_DATA_DELETION",
        `owned topic${unproven.length === 1 ? "" : "s"} ${unproven.join(", ")} ha${
          unproven.length === 1 ? "s" : "ve"
        } no recorded topic ID: sluice cannot prove ${
          unproven.length === 1 ? "it is the topic" : "they are the topics"
        } it created, and deletes only what it proves its own. Plan the destroy without --delete-data, then delete what you mean to by hand (docs/runbook.md, "Tearing an environment down")`,
        { evidence: { topics: unproven } },
      ));
    }
  }
  // the owned connectors, each as a declared removal of it plans it (never copied here)
  const owned = input.connectors?.owned ?? [];
  const cp = planConnectors({
    desired: [],
    removals: owned.map((o) => ({
      logicalName: o.connector,
      connector: o.name,
      cluster: o.cluster,
      environment: null,
      span: { start: 0, end: 0 },
    })),
    owned,
    observation: input.connectors?.observation ?? null,
  });
  blockers.push(...cp.blockers);
  const connectors = cp.actions.filter((a): a is DestroyConnectorAction =>
    a.type === "remove_connector" || a.type === "release_connector"
  );
  const withConnectors = connectors.length > 0 ? { connectors } : {};
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
    sets: input.sets,
    setsOpen: input.setsOpen,
  });
  blockers.push(...removals.blockers);
  if (!input.deleteData) {
    const actions: DestroyAction[] = input.owned.length === 0 && owned.length === 0
      ? []
      : [{ type: "destroy", runners: removals.actions, ...withConnectors, keeps: everything }];
    return { actions, blockers };
  }
  const deletes: DestroyDeletes = {
    consumer_groups: everything.consumer_groups,
    // a set's every instance's volume, each on its own daemon
    volumes: [...input.owned, ...input.retained].flatMap((r) =>
      r.instances
        ? r.instances.map((i) => ({
          name: i.volume.name,
          application_id: r.application_id,
          instance_id: i.volume.instance_id,
          endpoint: i.endpoint,
        }))
        : [{
          name: r.volume.name,
          application_id: r.application_id,
          instance_id: r.volume.instance_id,
        }]
    ),
    topics: input.ownedTopics.flatMap((t) =>
      t.topic_id === null ? [] : [{ name: t.name, topic_id: t.topic_id }]
    ),
  };
  // what the project does not own is never deleted: the topics its runners read or write that
  // no create of this project made (an external source), named so the review shows them kept
  const ownedTopics = new Set(everything.topics);
  const foreign = [
    ...new Set([
      ...removals.actions.flatMap((a) => a.keeps.topics),
      ...input.retained.map((r) => r.input_topic),
    ]),
  ].filter((t) => !ownedTopics.has(t));
  const nothing = input.owned.length === 0 && owned.length === 0 &&
    deletes.consumer_groups.length === 0 && deletes.topics.length === 0;
  const actions: DestroyAction[] = nothing ? [] : [{
    type: "destroy",
    runners: removals.actions,
    ...withConnectors,
    deletes,
    keeps: { topics: foreign, volumes: [], consumer_groups: [] },
  }];
  return { actions, blockers };
}
