/**
 * The identities a create operation records ahead in its intent (`details.identities`): every
 * identity sluice chooses for what it will create — each runner's volume instance UUID, container
 * name and generation (written as labels atomically by Docker), and the group's initial positions
 * (decided before the intent; a new topic starts at 0; a model declared again resumes from the
 * offsets its removal kept). A continuation adopts exactly these and nothing else, so they are
 * decided once ({@link plannedIdentities}) and read back strictly ({@link identitiesOf}).
 *
 * @example
 * ```ts
 * import { identitiesOf } from "./create_identities.ts";
 * // const ids = identitiesOf(snap.control!.opened.intent); ids.runners[0].generation
 * ```
 * @module
 */
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { SluiceError } from "../errors.ts";
import type { Plan, RunnerResume, SetInstance } from "../plan/plan.ts";
import type { Json } from "../state/_canonical.ts";
import type { OperationIntent } from "../state/journal.ts";
import type { RetainedRunner } from "../state/ownership.ts";
import { targetOfArtifact } from "../validation/observation.ts";
import type { RuntimeContext } from "./apply_context.ts";
import { RANDOM_UUIDS } from "./deps.ts";
import {
  generationOf,
  initialContainerName,
  instanceContainerName,
  instanceVolumeName,
  volumeName,
} from "./labels.ts";
import { observeRunner } from "./observer.ts";

/** What a create operation records ahead for one runner. */
export interface RunnerIdentity {
  model: string;
  application_id: string;
  volume: string;
  volume_instance: string;
  container: string;
  generation: string;
  input_topic: string;
  /** The initial positions, decided before the intent (a new topic starts at 0). */
  offsets: Array<{ partition: number; offset: string }>;
  /**
   * A model declared again: the record its removal kept (released by this create) and whether
   * the kept volume is adopted. The positions are then the kept committed offsets.
   */
  resumed?: { retained: RetainedRunner; volume_kept: boolean };
  /**
   * One instance of a set (`instances: N > 1`): its index and the `docker.endpoints` name it is
   * created on (null: the environment's one daemon), as the plan's placement bound them. Absent
   * for a model of one instance (whose identity keeps its exact bytes).
   */
  instance?: number;
  endpoint?: string | null;
}

/**
 * The key of a runner identity in a run's memory and its notes: the model for a model of one
 * instance, `model#i` for instance `i` of a set (a model name has no `#`).
 *
 * @example
 * ```ts
 * import { subjectOf } from "./create_identities.ts";
 * subjectOf({ model: "m" }); // "m"
 * subjectOf({ model: "m", instance: 1 }); // "m#1"
 * ```
 */
export function subjectOf(id: Pick<RunnerIdentity, "model" | "instance">): string {
  return id.instance === undefined ? id.model : `${id.model}#${id.instance}`;
}

/** What a create operation records ahead in its intent (`details.identities`). */
export interface CreateIdentities {
  topics: Array<{ name: string; partitions: number }>;
  runners: RunnerIdentity[];
}

/**
 * The artifact the plan compiled for `model` (`PLAN_INVALID` when it has none).
 *
 * @example
 * ```ts
 * import { artifactOf } from "./create_identities.ts";
 * // artifactOf(plan, "orders").application_id
 * ```
 */
export function artifactOf(plan: Plan, model: string): RunnerArtifact {
  const a = plan.artifacts.find((x) => x.model === model);
  if (!a) throw new SluiceError("PLAN_INVALID", `the plan has no artifact for model ${model}`);
  return a.artifact;
}

/**
 * The record a removal kept for a model now declared again (as its resume binds it).
 *
 * @example
 * ```ts
 * import { retainedOf } from "./create_identities.ts";
 * // retainedOf("orders", artifact, action.resume).removed_by
 * ```
 */
export function retainedOf(
  model: string,
  artifact: RunnerArtifact,
  resume: RunnerResume,
  instances?: readonly SetInstance[],
): RetainedRunner {
  const app = artifact.application_id;
  return {
    model,
    application_id: app,
    volume: { name: volumeName(app), instance_id: resume.volume_instance },
    input_topic: artifact.input.topic,
    removed_by: resume.removed_by,
    // a removed set declared again: every instance's kept volume, where it is
    ...(instances
      ? {
        instances: instances.map((i) => ({
          instance: i.instance,
          endpoint: i.endpoint,
          volume: {
            name: instanceVolumeName(app, i.instance),
            instance_id: i.resume?.volume_instance ?? "",
          },
        })),
      }
      : {}),
  };
}

/**
 * Decide every identity of the operation `operationId` before its intent (read-only: the input
 * topic's offsets, a resumed model's kept offsets).
 *
 * @example
 * ```ts
 * import { plannedIdentities } from "./create_identities.ts";
 * // const ids = await plannedIdentities(ctx, plan, operationId);
 * ```
 */
export async function plannedIdentities(
  ctx: RuntimeContext,
  plan: Plan,
  operationId: string,
): Promise<CreateIdentities> {
  const uuids = ctx.uuids ?? RANDOM_UUIDS;
  const topics = plan.actions.flatMap((a) =>
    a.type === "create_topic" ? [{ name: a.topic, partitions: a.partitions }] : []
  );
  const runners: RunnerIdentity[] = [];
  for (const a of plan.actions) {
    if (a.type !== "create_runner") continue;
    const artifact = artifactOf(plan, a.model);
    const input = artifact.input.topic;
    const planned = topics.find((t) => t.name === input);
    let offsets: Array<{ partition: number; offset: string }>;
    // a model declared again resumes from the offsets its removal kept: they are its recorded
    // positions (so nothing repositions the group); none left → initial_offsets as for a new one
    const kept = a.resume
      ? Object.entries((await observeRunner(ctx, targetOfArtifact(artifact))).kafka.committed)
        .map(([p, o]) => ({ partition: Number(p), offset: o }))
        .sort((x, y) => x.partition - y.partition)
      : [];
    if (kept.length > 0) {
      offsets = kept;
    } else if (planned) {
      offsets = [...Array(planned.partitions).keys()].map((p) => ({ partition: p, offset: "0" }));
    } else {
      const t = (await ctx.kafka.describe([input])).topics.get(input);
      if (!t) {
        throw new SluiceError("BLOCKED_TOPIC_MISSING", `input topic ${input} does not exist`);
      }
      const ranges = await ctx.kafka.offsetRanges(input, [...Array(t.partitions).keys()]);
      offsets = ranges.map((r) => ({
        partition: r.partition,
        offset: String(artifact.initial_offsets === "earliest" ? r.earliest : r.latest),
      }));
    }
    if (a.instances) {
      // a set: each instance its own volume (and instance UUID) and container on its endpoint,
      // one generation and one group (positioned once, by instance 0's row); declared again,
      // each adopts its kept volume where one is left
      const retained = a.resume ? retainedOf(a.model, artifact, a.resume, a.instances) : null;
      for (const p of a.instances) {
        runners.push({
          model: a.model,
          application_id: artifact.application_id,
          volume: instanceVolumeName(artifact.application_id, p.instance),
          volume_instance: p.resume?.volume_kept ? p.resume.volume_instance : uuids.uuid(),
          ...(retained && p.resume
            ? { resumed: { retained, volume_kept: p.resume.volume_kept } }
            : {}),
          container: instanceContainerName(artifact.application_id, p.instance),
          generation: generationOf(operationId, 0),
          input_topic: input,
          offsets,
          instance: p.instance,
          endpoint: p.endpoint,
        });
      }
      continue;
    }
    runners.push({
      model: a.model,
      application_id: artifact.application_id,
      volume: volumeName(artifact.application_id),
      volume_instance: a.resume?.volume_kept ? a.resume.volume_instance : uuids.uuid(),
      ...(a.resume
        ? {
          resumed: {
            retained: retainedOf(a.model, artifact, a.resume),
            volume_kept: a.resume.volume_kept,
          },
        }
        : {}),
      container: initialContainerName(artifact.application_id),
      generation: generationOf(operationId, 0),
      input_topic: input,
      offsets,
    });
  }
  return { topics, runners };
}

/**
 * The identities as the intent records them (plain JSON).
 *
 * @example
 * ```ts
 * import { identitiesJson } from "./create_identities.ts";
 * identitiesJson({ topics: [], runners: [] }); // { topics: [], runners: [] }
 * ```
 */
export function identitiesJson(ids: CreateIdentities): Json {
  return JSON.parse(JSON.stringify(ids)) as Json;
}

/**
 * Read the identities a create intent recorded (strictly: an older intent cannot continue,
 * `BLOCKED_CREATE_NOT_CONTINUABLE`).
 *
 * @example
 * ```ts
 * import { identitiesOf } from "./create_identities.ts";
 * // const ids = identitiesOf(snap.control!.opened.intent);
 * ```
 */
export function identitiesOf(intent: OperationIntent): CreateIdentities {
  const v = intent.details.identities as unknown;
  const bad = (why: string): never => {
    throw new SluiceError(
      "BLOCKED_CREATE_NOT_CONTINUABLE",
      `create operation ${intent.operation_id} cannot be continued: its intent ${why}; abandon it ('sluice state abandon')`,
    );
  };
  if (typeof v !== "object" || v === null) return bad("records no identities");
  const ids = v as CreateIdentities;
  if (!Array.isArray(ids.topics) || !Array.isArray(ids.runners)) return bad("is malformed");
  for (const r of ids.runners) {
    if (
      typeof r.volume_instance !== "string" || typeof r.generation !== "string" ||
      !Array.isArray(r.offsets) ||
      (r.instance !== undefined &&
        (!Number.isSafeInteger(r.instance) || r.instance < 0 ||
          (r.endpoint !== null && typeof r.endpoint !== "string")))
    ) {
      bad(`records runner ${String(r.model)} incompletely`);
    }
  }
  return ids;
}
