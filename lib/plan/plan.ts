/**
 * The plan: pure data computed from desired (compiled project) × ownership state ×
 * observation. Reading and writing plan files is `plan_file.ts`; executing them is
 * `lib/runtime`. Nothing here performs I/O.
 *
 * Formats (spec, "Reviewed and durable evidence"): format 6 is the reviewed plan of a sole
 * typed predicate replacement in an online full-project plan; every other plan is format 5.
 * The format alone never bypasses a blocker.
 *
 * @example
 * ```ts
 * import { planProject } from "./plan.ts";
 * // const plan = planProject({ compiled, project, state, observation, topics, now, sourceSha256 });
 * // plan.blockers.length === 0 && plan.actions.length === 0  → nothing to do
 * ```
 * @module
 */
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { artifactSha256, validateArtifact } from "../artifact/artifact.ts";
import { classifyChange } from "./change_policy.ts";
import { canonicalSha256 } from "../artifact/canonical.ts";
import type { CompileResult } from "../project/compile.ts";
import type { Project } from "../project/load.ts";
import { projectTopics } from "../project/topics.ts";
import type { OwnershipDocument, RetainedRunner } from "../state/ownership.ts";
import type { HistoryEvent } from "../state/history.ts";
import { driftNextStep, runnerDrift } from "../validation/drift.ts";
import type { RunnerAction, StoreIdentity } from "../state/journal.ts";
import { parseMountedPlan } from "../protocol/mounted_plan.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";
import type { ProjectObservation, RunnerObservation } from "../validation/observation.ts";
import {
  evidenceJson,
  type ProviderIdentities,
  type ReviewedEvidence,
} from "../validation/reviewed_evidence.ts";
import { verifyOwnedRunner } from "../validation/runner_checks.ts";
import { SluiceError } from "../errors.ts";
import type { ImpactChange, LiveConsumers, PlanImpact } from "./impact.ts";
import { planImpact } from "./impact.ts";
import { instancesBlockers, setPlacement, type UnreachableInstance } from "./instances.ts";
import { ownedSetBlockers } from "./owned_set.ts";
import type { InstancePlacement } from "../project/placement.ts";
import type { PreviewSummary } from "./preview_summary.ts";
import type { ConnectorAction, ConnectorPlanInput, PlanConnectors } from "./connectors.ts";
import { planConnectors } from "./connectors.ts";
import {
  type DestroyAction,
  planDestroy,
  planRunnerRemovals,
  type RemoveRunnerAction,
} from "./removals.ts";
import { REMOVAL_OPERATION_KIND } from "../protocol/removal.ts";
import { planMixes } from "../protocol/journeys.ts";
import {
  checkRunnerPermissions,
  type RunnerAclObservation,
  type RunnerPermissions,
} from "../validation/runner_permissions.ts";
import type { RunnerCredentialsBinding } from "./runner_credentials.ts";

/** A planned provider mutation. */
export type PlannedAction =
  | {
    type: "create_topic";
    topic: string;
    partitions: number;
    role: "source" | "output" | "dead_letter";
  }
  | {
    type: "create_runner";
    model: string;
    application_id: string;
    artifact_sha256: string;
    /**
     * A model declared again after a runner removal kept its volume and group: the create
     * adopts exactly the kept volume instance (`volume_kept` false: it was deleted by hand, a new
     * one is made) and keeps the group's committed offsets (none left: positioned at
     * `initial_offsets`). Absent for a model never removed.
     */
    resume?: RunnerResume;
    /**
     * A set (`instances: N > 1`): each instance's endpoint as the project's placement gives it,
     * bound by the plan's hash, so apply creates each instance exactly there (and, for a removed
     * set declared again, how each resumes its kept volume; `resume` is then instance 0's).
     * Absent for a model of one instance.
     */
    instances?: SetInstance[];
  }
  | RunnerAction
  | RemoveRunnerAction
  | DestroyAction
  | ConnectorAction;

export type { ProviderIdentities };

/** One instance of a set a `create_runner` creates: where, and how it resumes (declared again). */
export interface SetInstance extends InstancePlacement {
  /** A removed set declared again: this instance's kept volume (absent: a new set). */
  resume?: RunnerResume;
}

/** How a model declared again resumes from what its removal kept (a `create_runner`'s `resume`). */
export interface RunnerResume {
  /** The removal operation that kept them. */
  removed_by: string;
  /** The kept volume's instance UUID. */
  volume_instance: string;
  /** Whether the kept volume still exists (observed; assumed by an offline plan). */
  volume_kept: boolean;
}

/** A computed plan (immutable value). */
export interface Plan {
  /** 5 for a plan of creates and no-ops, 6 for a reviewed predicate replacement. */
  format: 5 | 6;
  /** The project name. */
  project: string;
  /** The environment, or null. */
  environment: string | null;
  /** Whether Docker and Kafka were observed (online) or only the state (offline). */
  mode: "online" | "offline";
  /**
   * `full`: every model of the project; `selected`: only `selected` (`plan --select`), which
   * never carries a replacement (`BLOCKED_SELECTED_REPLACEMENT`).
   */
  scope: "full" | "selected";
  /** The selected models (sorted), or null for a full plan. */
  selected: string[] | null;
  /** When the plan was made (RFC 3339). */
  created_at: string;
  /** sha256 over the manifest and every SQL model's bytes. */
  source_sha256: string;
  /** The ownership state the plan was computed from (the protected state). */
  protected_state: { checksum: string | null; serial: number };
  /** The state store the plan was computed against (apply refuses another). */
  store: StoreIdentity;
  /**
   * Desired artifacts (full preimages) by model.
   * @internal the plan's sealed content, read by apply; read what it does in the plan's review
   */
  artifacts: Array<{ model: string; sha256: string; artifact: RunnerArtifact }>;
  /**
   * What applying the plan does, in order.
   * @internal the plan's sealed content, read by apply; read what it does in the plan's review
   */
  actions: PlannedAction[];
  /** Why applying is refused; a plan with blockers is never applied. */
  blockers: Blocker[];
  /**
   * Format 6 only: the typed replacement and its own checksum over its complete content.
   * @internal the plan's sealed content, read by apply; read what it does in the plan's review
   */
  typed_action: { action: RunnerAction; sha256: string } | null;
  /**
   * Who reads what this plan changes: external declarations, downstream models, live consumer
   * groups (online). Sealed with the plan, so a reviewed plan records what its reviewer was
   * shown. Display-only: never drives apply. Null only in plans written before it existed.
   * @internal the plan's sealed content, read by apply; read what it does in the plan's review
   */
  impact: PlanImpact | null;
  /**
   * The live preview's summary when one was run (`plan --preview`); display-only.
   * @internal the plan's sealed content, read by apply; read what it does in the plan's review
   */
  preview: PreviewSummary[] | null;
  /**
   * The project's connectors: the desired artifacts (bound by the connector actions) and what
   * the plan does with each declared, removed or owned connector (display-only). Null when the
   * project declares and owns none (and in plans written before connectors existed, which may
   * lack the field).
   * @internal the plan's sealed content, read by apply; read what it does in the plan's review
   */
  connectors?: PlanConnectors | null;
  /**
   * The keyed seal under the state store's plan-sealing key (`key_seal.ts`), set when the plan
   * is sealed; apply refuses a plan file without this store's keyed seal. Absent in plans the
   * planner has not sealed yet and in plans written before keyed seals existed.
   * @internal the plan's sealed content, read by apply; read what it does in the plan's review
   */
  key_seal?: KeySeal | null;
  /**
   * Under `kafka.security`: the runner principal's permissions for the runners this plan
   * creates or replaces, as the broker's ACLs show them (missing ones are blockers, excess ones
   * warnings in the review). Absent for a project without security, and when no runner is.
   * @internal the plan's sealed content, read by apply; read what it does in the plan's review
   */
  runner_permissions?: RunnerPermissions;
  /**
   * Under `kafka.security`, in an unblocked plan that starts a runner: the keyed hash of the
   * runner principal's client file (`runner_credentials.ts`), which apply compares with the
   * current credentials. Absent otherwise (the plan is then unchanged).
   * @internal the plan's sealed content, read by apply; read what it does in the plan's review
   */
  runner_client_binding?: RunnerCredentialsBinding;
}

/** A plan's keyed seal: the key's ID and the HMAC-SHA256 of the plan under it. */
export interface KeySeal {
  /** The ID of the state store's key that sealed the plan. */
  key_id: string;
  /** HMAC-SHA256 (lower-case hex) of the plan's canonical JSON without `key_seal`. */
  hmac_sha256: string;
}

/** What the planner reads. */
export interface PlanInput {
  project: Project;
  compiled: CompileResult;
  state: {
    ownership: OwnershipDocument | null;
    checksum: string | null;
    identity: StoreIdentity;
    /** The history's events (drift of an owned runner is judged against them); absent: none. */
    history?: readonly HistoryEvent[];
  };
  /** Null for `plan --offline`. */
  observation: ProjectObservation | null;
  /** Online only: every desired topic that exists, with its Kafka-form ID. */
  topics: Map<string, { id: string; partitions: number }> | null;
  now: string;
  sourceSha256: string;
  /** Plan only these models (`plan --select`); null or absent for the full project. */
  select?: string[] | null;
  /** Online: live consumer groups per output topic (read-only); null when not read. */
  consumers?: LiveConsumers | null;
  /** Why `consumers` is null online (e.g. the Kafka port cannot list groups). */
  consumersUnobserved?: string;
  /**
   * The operation pending in the state store, if any: the plan is then blocked by
   * `BLOCKED_OPERATION_PENDING` naming it and the commands that finish or abandon it (a plan
   * never says "no changes" while an operation is pending), and containers labelled with its
   * operation ID are named as that operation's, not as foreign generations.
   */
  pending?: PendingOperation | null;
  /**
   * The connectors to plan (desired, removals, owned, observation); null or absent when the
   * project declares, removes and owns none. A plan of selected models never plans connectors.
   */
  connectors?: ConnectorPlanInput | null;
  /**
   * Under `kafka.security`: the runner principal and the ACLs read for it (`lib/runtime/
   * runner_acls.ts`); absent for a project without security (the plan is then unchanged).
   */
  runnerAcls?: RunnerAclObservation | null;
  /**
   * `plan --destroy`: plan the removal of everything this project owns in the environment
   * instead of the project's changes (`deleteData`: `--delete-data`, refused today). Absent or
   * null: the project's plan.
   */
  destroy?: { deleteData: boolean } | null;
  /**
   * The instances of each set (by application ID) whose placed endpoint did not answer when the
   * plan read it (`lib/runtime/instances_status.ts`); absent offline or without a set.
   */
  unreachableInstances?: ReadonlyMap<string, readonly UnreachableInstance[]>;
  /**
   * Whether the set journeys are open ({@link setsOpen}): a new set may be planned for creation,
   * an owned one for removal or destroy; absent: no.
   * @internal issue 31: open only to tests until a set can be replaced
   */
  sets?: boolean;
  /**
   * Each owned set's instances observed on their endpoints (by application ID, in index order;
   * null: its endpoint did not answer), for a removal or destroy that binds them; absent offline.
   */
  setObservations?: ReadonlyMap<string, readonly (RunnerObservation | null)[]>;
}

/** The pending operation as the planner shows it. */
export interface PendingOperation {
  operation_id: string;
  kind: string;
  status: string;
  /** The last durable checkpoint (null: intent only). */
  last_boundary: string | null;
  /** sha256 of the plan file the operation started from (give that same file to continue). */
  plan_sha256: string | null;
}

/**
 * The commands that finish or end a pending operation, by kind: every operation is diagnosed
 * with `state runner-status` and its plan file; a replacement is continued with `state resume`
 * and its original reviewed plan file, any other by applying the same plan file again (which
 * `state resume` with that file and the operation ID does too); either may be abandoned by an
 * explicit, audited decision.
 *
 * @example
 * ```ts
 * import { pendingCommands } from "./plan.ts";
 * console.log(pendingCommands({ operation_id: "op", kind: "create", status: "in_progress",
 *   last_boundary: null, plan_sha256: null }).continue);
 * ```
 */
export function pendingCommands(p: PendingOperation): {
  status: string | null;
  continue: string;
  abandon: string;
} {
  const file = `PLAN_FILE (the plan file with sha256 ${p.plan_sha256 ?? "unknown"})`;
  return p.kind === "runner_update"
    ? {
      status: `sluice state runner-status --plan ${file} --operation-id ${p.operation_id}`,
      continue: `sluice state resume --plan ${file} --operation-id ${p.operation_id}`,
      abandon: `sluice state abandon --operation-id ${p.operation_id} --reason TEXT`,
    }
    : {
      status: `sluice state runner-status --plan ${file} --operation-id ${p.operation_id}`,
      continue: `sluice apply --plan ${file}`,
      abandon: `sluice state abandon --operation-id ${p.operation_id} --reason TEXT`,
    };
}

/** The blocker a pending operation gives every plan. */
function pendingBlocker(p: PendingOperation): Blocker {
  const cmds = pendingCommands(p);
  return blocker(
    "BLOCKED_OPERATION_PENDING",
    `operation ${p.operation_id} (${p.kind}, ${p.status}, last boundary ${
      p.last_boundary ?? "intent"
    }) is pending; nothing else may change until it is finished (${cmds.continue}) or abandoned (${cmds.abandon})`,
    { evidence: { ...p, commands: cmds } },
  );
}

/** True when the plan changes nothing and nothing blocks it. */
export function isNoop(plan: Plan): boolean {
  return plan.actions.length === 0 && plan.blockers.length === 0;
}

/** The checksum of a typed action over its complete content (never a redacted view). */
export function typedActionSha256(action: RunnerAction): string {
  return canonicalSha256(action);
}

/** Compute the plan. Pure: the same input gives the same plan. */
export function planProject(input: PlanInput): Plan {
  const { project, compiled, state, observation } = input;
  const online = observation !== null;
  const ownership = state.ownership;
  const ownedTopics = ownership?.topics ?? [];
  const actions: PlannedAction[] = [];
  const blockers: Blocker[] = [];
  const pending = input.pending ?? null;
  if (pending) blockers.push(pendingBlocker(pending));
  if (input.destroy) {
    if ((input.select ?? null) !== null) {
      throw new SluiceError(
        "USAGE_DESTROY_OPTIONS",
        "--destroy plans the removal of everything the project owns: it takes no --select",
      );
    }
    const d = planDestroy({
      owned: ownership?.runners ?? [],
      ownedTopics,
      retained: ownership?.retained ?? [],
      connectors: input.connectors ?? null,
      deleteData: input.destroy.deleteData,
      observation,
      sets: input.setObservations,
      setsOpen: input.sets === true,
    });
    actions.push(...d.actions);
    blockers.push(...d.blockers);
    for (const m of planMixes(actions)) {
      blockers.push(blocker(m.code, m.message, { evidence: m.evidence }));
    }
    return {
      format: 5,
      project: compiled.project,
      environment: compiled.environment,
      mode: online ? "online" : "offline",
      scope: "full",
      selected: null,
      created_at: input.now,
      source_sha256: input.sourceSha256,
      protected_state: { checksum: state.checksum, serial: ownership?.serial ?? 0 },
      store: state.identity,
      artifacts: [],
      actions,
      blockers,
      typed_action: null,
      impact: planImpact({
        project,
        changes: impactChanges(actions, blockers, new Set()),
        live: online ? input.consumers ?? null : null,
        liveUnobserved: online ? input.consumersUnobserved ?? "not read" : "offline plan",
      }),
      preview: null,
    };
  }
  const selected = selectedModels(project, input.select ?? null);
  const inScope = (model: string) => selected === null || selected.includes(model);
  const models = project.models.filter((m) => inScope(m.name));

  // ---- topics: managed sources, model outputs and dead-letter topics are sluice's; external
  // ones must exist. A selected plan creates only the topics of its models.
  const selectedTopics = selected === null ? null : new Set(
    models.flatMap((m) => [
      m.source.topic,
      m.decl.outputTopic,
      ...(m.decl.deadLetter ? [m.decl.deadLetter.topic] : []),
    ]),
  );
  const wanted = new Map<
    string,
    { partitions: number; role: "source" | "output" | "dead_letter" }
  >();
  for (const t of projectTopics(project)) {
    if (selectedTopics !== null && !selectedTopics.has(t.topic)) continue;
    if (t.role !== "external") wanted.set(t.topic, { partitions: t.partitions ?? 1, role: t.role });
  }
  for (const [topic, want] of wanted) {
    const owned = ownedTopics.find((t) => t.name === topic);
    const seen = input.topics?.get(topic);
    if (owned) {
      if (online && !seen) {
        blockers.push(
          blocker("BLOCKED_TOPIC_MISSING", `owned topic ${topic} does not exist`),
        );
      } else if (online && seen && owned.topic_id !== null && owned.topic_id !== seen.id) {
        blockers.push(
          blocker(
            "BLOCKED_TOPIC_REPLACED",
            `owned topic ${topic} has ID ${seen.id}, not ${owned.topic_id}: it was deleted and recreated`,
            { evidence: { topic, observed: seen.id, owned: owned.topic_id } },
          ),
        );
      } else if (online && seen && seen.partitions !== want.partitions) {
        blockers.push(
          blocker(
            "BLOCKED_PARTITION_CHANGE",
            `topic ${topic} has ${seen.partitions} partitions; the project declares ${want.partitions}`,
          ),
        );
      }
    } else if (online && seen) {
      blockers.push(
        blocker(
          "BLOCKED_UNOWNED_TOPIC",
          `topic ${topic} exists but is not owned by this project; sluice never adopts it`,
          { evidence: { topic, id: seen.id } },
        ),
      );
    } else {
      actions.push({ type: "create_topic", topic, partitions: want.partitions, role: want.role });
    }
  }
  if (online) {
    for (const s of project.manifest.sources) {
      if (selected !== null && !models.some((m) => m.source.name === s.name)) continue;
      if (s.kind === "external" && !input.topics?.get(s.topic)) {
        blockers.push(
          blocker(
            "BLOCKED_EXTERNAL_TOPIC_MISSING",
            `external source topic ${s.topic} does not exist; sluice never creates external resources`,
          ),
        );
      }
    }
  }

  // ---- runners
  const desiredModels = new Set(compiled.artifacts.map((a) => a.model));
  // a removed model cannot be selected: only a full plan takes a runner down (or reports an
  // owned model that is no longer declared). A pending runner removal owns the runners it takes
  // down: the pending blocker names its way out, and no check of a runner it stopped suggests
  // starting it again (`sluice restart`)
  const removals = selected === null && pending?.kind !== REMOVAL_OPERATION_KIND
    ? planRunnerRemovals({
      owned: ownership?.runners ?? [],
      ownedTopics,
      removals: project.manifest.runnerRemovals ?? [],
      declared: desiredModels,
      observation,
      sets: input.setObservations,
      setsOpen: input.sets === true,
    })
    : { actions: [], blockers: [] };
  blockers.push(...removals.blockers);
  actions.push(...removals.actions);
  for (const a of compiled.artifacts) {
    if (!inScope(a.model)) continue;
    const decl = project.models.find((m) => m.name === a.model)?.decl;
    const owned = ownership?.runners.find((r) => r.model === a.model);
    const obs = observation?.runners.find((r) => r.applicationId === a.artifact.application_id);
    const kept = ownership?.retained?.find((r) => r.application_id === a.artifact.application_id);
    const instances = decl?.instances ?? 1;
    if (owned?.instances && input.sets === true) {
      // an owned set: verified on every endpoint, a no-op when nothing changed
      blockers.push(...ownedSetBlockers({
        owned,
        sha256: a.sha256,
        instances,
        placement: project.manifest.placement,
        read: input.setObservations?.get(a.artifact.application_id),
        ownedTopics,
        online,
      }));
      continue;
    }
    const several = instancesBlockers(
      a.model,
      instances,
      project.manifest.placement,
      input.unreachableInstances?.get(a.artifact.application_id),
      // a new set, or a removed set declared again (its kept volumes resumed where they are)
      input.sets === true && !owned && (!kept || kept.instances !== undefined),
    );
    if (several.length > 0) {
      blockers.push(...several);
      continue;
    }
    const placed = setPlacement(instances, project.manifest.placement);
    if (!owned && kept) {
      // declared again: a set resumes each instance's kept volume, a single runner its own
      const resumed = kept.instances
        ? setResumeOf(
          kept,
          a.artifact,
          placed,
          input.setObservations?.get(a.artifact.application_id) ?? null,
          observation !== null,
        )
        : resumeOf(kept, a.artifact, obs ?? null);
      if ("code" in resumed) blockers.push(resumed);
      else {
        actions.push({
          type: "create_runner",
          model: a.model,
          application_id: a.artifact.application_id,
          artifact_sha256: a.sha256,
          ...(Array.isArray(resumed)
            ? { resume: resumed[0].resume!, instances: resumed }
            : { resume: resumed }),
        });
      }
      continue;
    }
    if (!owned) {
      if (
        obs && (obs.containers.length > 0 || obs.volume.exists ||
          Object.keys(obs.kafka.committed).length > 0)
      ) {
        blockers.push(
          blocker(
            "BLOCKED_UNOWNED_RUNTIME",
            `application ID ${a.artifact.application_id} already has containers, a volume or committed offsets that this project does not own`,
            {
              model: a.model,
              evidence: {
                containers: obs.containers.map((c) => c.id),
                volume: obs.volume.exists,
                committed: obs.kafka.committed,
              },
            },
          ),
        );
      } else {
        actions.push({
          type: "create_runner",
          model: a.model,
          application_id: a.artifact.application_id,
          artifact_sha256: a.sha256,
          ...(placed ? { instances: placed } : {}),
        });
      }
      continue;
    }
    if (!obs) {
      // offline: ownership alone decides; a changed artifact needs evidence only an online
      // plan collects
      if (owned.artifact_sha256 !== a.sha256) {
        blockers.push(
          blocker(
            "BLOCKED_OFFLINE_REPLACEMENT",
            `model ${a.model} changed; a replacement is planned only online (format 6 binds observed evidence)`,
            { model: a.model },
          ),
        );
      }
      continue;
    }
    const mine = pending
      ? obs.containers.filter((c) => c.labels.operationId === pending.operation_id)
      : [];
    if (pending && mine.length > 0) {
      // the pending operation's own containers are its candidate, not foreign generations
      blockers.push(blocker(
        "BLOCKED_OPERATION_PENDING",
        `model ${a.model} is being changed by pending operation ${pending.operation_id}: ${
          mine.map((c) =>
            `container ${c.id.slice(0, 12)} (${c.name}, ${c.status}${
              c.status === "exited" ? ` exit ${c.exitCode}` : ""
            }) is that operation's candidate`
          ).join("; ")
        }`,
        {
          model: a.model,
          evidence: {
            operation_id: pending.operation_id,
            containers: mine.map((c) => ({
              id: c.id,
              name: c.name,
              status: c.status,
              exit_code: c.exitCode,
              generation: c.labels.generation,
            })),
          },
        },
      ));
      continue;
    }
    const checked = verifyOwnedRunner(obs, owned, ownedTopics);
    // drift is reported beside the runner's other blockers (moved offsets of a stopped runner)
    const drift = checked.container
      ? runnerDrift(checked.container, state.history ?? [], {
        topic: obs.target.inputTopic,
        committed: obs.kafka.committed,
      })
      : null;
    blockers.push(...checked.blockers);
    if (drift) {
      blockers.push(blocker(
        "BLOCKED_RUNNER_DRIFT",
        `${a.model}: ${drift.summary}; sluice does not adopt it silently (docs/runbook.md): ${
          driftNextStep(drift, a.model)
        }`,
        { model: a.model, evidence: { drift } },
      ));
    }
    if (checked.blockers.length > 0 || drift) continue;
    if (owned.artifact_sha256 === a.sha256) continue; // no-op
    const prior = priorArtifact(obs);
    if (!prior || artifactSha256(prior) !== owned.artifact_sha256) {
      blockers.push(
        blocker(
          "BLOCKED_WRONG_MOUNTED_PLAN",
          `the running artifact of ${a.model} cannot be reconstructed to the owned checksum ${owned.artifact_sha256}`,
          { model: a.model },
        ),
      );
      continue;
    }
    const change = classifyChange(a.model, prior, a.artifact);
    if (change.blockers.length > 0) {
      blockers.push(...change.blockers);
      continue;
    }
    if (selected !== null) {
      // spec: "Selected projects ... remain blocked" for a replacement
      blockers.push(blocker(
        "BLOCKED_SELECTED_REPLACEMENT",
        `model ${a.model} changed its predicate; a replacement is planned only for the full project (a reviewed format-6 plan binds the whole project): plan again without --select`,
        { model: a.model, evidence: { selected } },
      ));
      continue;
    }
    const replacement = replacementAction(obs, owned, prior, a.artifact, a.sha256);
    if ("code" in replacement) blockers.push(replacement);
    else actions.push(replacement);
  }

  // ---- connectors (never in a plan of selected models: they are not selected)
  const connectors = input.connectors && selected === null
    ? planConnectors(input.connectors)
    : null;
  if (connectors) {
    blockers.push(...connectors.blockers);
    actions.push(...connectors.actions);
  }
  // which journeys' actions may share an apply is the registry's (lib/protocol/journeys.ts)
  for (const m of planMixes(actions)) {
    blockers.push(blocker(m.code, m.message, { evidence: m.evidence }));
  }
  // ---- the runner principal may do what its job needs, proven before a create or a replacement
  const permissions = checkRunnerPermissions(input.runnerAcls, {
    actions,
    artifacts: compiled.artifacts,
    bootstrap: project.manifest.kafka.bootstrapHost,
  });
  if (permissions) blockers.push(...permissions.blockers);
  const replacements = actions.filter((x) => x.type === "replace_runner_predicate");
  const sole = replacements.length === 1 && actions.length === 1 && blockers.length === 0 &&
      online && selected === null
    ? replacements[0] as RunnerAction
    : null;
  return {
    format: sole ? 6 : 5,
    project: compiled.project,
    environment: compiled.environment,
    mode: online ? "online" : "offline",
    scope: selected === null ? "full" : "selected",
    selected,
    created_at: input.now,
    source_sha256: input.sourceSha256,
    protected_state: { checksum: state.checksum, serial: ownership?.serial ?? 0 },
    store: state.identity,
    artifacts: compiled.artifacts.filter((x) => inScope(x.model)).map((x) => ({
      model: x.model,
      sha256: x.sha256,
      artifact: x.artifact,
    })),
    actions,
    blockers,
    typed_action: sole ? { action: sole, sha256: typedActionSha256(sole) } : null,
    impact: planImpact({
      project,
      changes: impactChanges(actions, blockers, desiredModels),
      live: online ? input.consumers ?? null : null,
      liveUnobserved: online ? input.consumersUnobserved ?? "not read" : "offline plan",
    }),
    preview: null,
    // present only when the project declares, removes or owns connectors
    ...(connectors ? { connectors: connectors.section } : {}),
    ...(permissions ? { runner_permissions: permissions.section } : {}),
  };
}

/** The models a plan changes, for its impact section: actions first, then blocked models. */
function impactChanges(
  actions: PlannedAction[],
  blockers: Blocker[],
  declared: Set<string>,
): Array<{ model: string; change: ImpactChange }> {
  const out: Array<{ model: string; change: ImpactChange }> = [];
  for (const a of actions) {
    if (a.type === "create_runner") out.push({ model: a.model, change: "create" });
    if (a.type === "remove_runner") out.push({ model: a.model, change: "remove" });
    if (a.type === "destroy") {
      for (const r of a.runners) out.push({ model: r.model, change: "remove" });
    }
    if (a.type === "replace_runner_predicate") {
      out.push({ model: a.model, change: "replace_predicate" });
    }
  }
  for (const b of blockers) {
    if (b.model === null || out.some((x) => x.model === b.model)) continue;
    out.push({ model: b.model, change: declared.has(b.model) ? "blocked" : "remove" });
  }
  return out;
}

/**
 * The resume of a model declared again after a removal kept its volume and group: nothing may
 * carry its application ID but what the removal kept (the volume instance it recorded, the
 * group without members), and it must read the input topic the kept offsets are for.
 */
function resumeOf(
  kept: RetainedRunner,
  artifact: RunnerArtifact,
  obs: RunnerObservation | null,
): RunnerResume | Blocker {
  const model = artifact.model;
  const refuse = (why: string, evidence: Record<string, unknown>) =>
    blocker(
      "BLOCKED_RETAINED_MISMATCH",
      `model ${model} is declared again after removal ${kept.removed_by} kept its volume and consumer group, but ${why}. sluice resumes only from exactly what it kept; docs/runbook.md (section 8) says how to delete what was kept to start afresh`,
      { model, evidence: { kept, ...evidence } },
    );
  if (artifact.input.topic !== kept.input_topic) {
    return refuse(
      `it now reads ${artifact.input.topic}, not ${kept.input_topic} (the kept offsets are for that topic)`,
      { input_topic: artifact.input.topic },
    );
  }
  const resume = (volumeKept: boolean): RunnerResume => ({
    removed_by: kept.removed_by,
    volume_instance: kept.volume.instance_id,
    volume_kept: volumeKept,
  });
  if (obs === null) return resume(true);
  if (obs.containers.length > 0) {
    return refuse(`containers carry its application ID ${artifact.application_id}`, {
      containers: obs.containers.map((c) => c.id),
    });
  }
  if (obs.kafka.group.members.length > 0) {
    return refuse(`its consumer group ${artifact.application_id} has members`, {
      members: obs.kafka.group.members.length,
    });
  }
  if (obs.volume.exists && obs.volume.instanceLabel !== kept.volume.instance_id) {
    return refuse(`volume ${obs.volume.name} is not the kept instance ${kept.volume.instance_id}`, {
      label: obs.volume.instanceLabel,
    });
  }
  return resume(obs.volume.exists);
}

/**
 * How a removed set declared again resumes: as the same set, each instance placed where its kept
 * volume is (a volume is local to its daemon: an instance placed elsewhere would start empty, and
 * moving one is not built), each instance's kept volume checked as a single runner's is
 * ({@link resumeOf}, on its endpoint's observation: null offline or unread, then assumed kept).
 */
function setResumeOf(
  kept: RetainedRunner,
  artifact: RunnerArtifact,
  placed: readonly InstancePlacement[] | null,
  observed: readonly (RunnerObservation | null)[] | null,
  online: boolean,
): SetInstance[] | Blocker {
  const keptAt = kept.instances!;
  const model = artifact.model;
  if (
    !placed || placed.length !== keptAt.length ||
    placed.some((p, n) => p.endpoint !== keptAt[n].endpoint)
  ) {
    return blocker(
      "BLOCKED_INSTANCES_UNSUPPORTED",
      `model ${model} was removed as a set of ${keptAt.length} instances (${
        keptAt.map((i) => `${i.instance} on ${i.endpoint ?? "the one daemon"}`).join(", ")
      }; removal ${kept.removed_by}): it is declared again only as that set, each instance where its kept volume is (moving an instance, or changing their number, is not built yet)`,
      {
        model,
        evidence: { retained: keptAt.map((i) => ({ instance: i.instance, endpoint: i.endpoint })) },
      },
    );
  }
  const out: SetInstance[] = [];
  for (const [n, p] of placed.entries()) {
    const obs = online ? observed?.[n] ?? null : null;
    const r = resumeOf({ ...kept, volume: keptAt[n].volume }, artifact, obs);
    if ("code" in r) return r;
    out.push({ instance: p.instance, endpoint: p.endpoint, resume: r });
  }
  return out;
}

/** Validate `--select` names against the project; null for a full plan. */
function selectedModels(project: Project, select: string[] | null): string[] | null {
  if (select === null) return null;
  const names = project.models.map((m) => m.name);
  const unknown = select.filter((s) => !names.includes(s));
  if (select.length === 0 || unknown.length > 0) {
    throw new SluiceError(
      "USAGE_SELECT_UNKNOWN_MODEL",
      select.length === 0
        ? "--select needs at least one model name"
        : `--select names unknown model${unknown.length === 1 ? "" : "s"} ${
          unknown.join(", ")
        }; models: ${names.join(", ")}`,
      { evidence: { unknown, models: names } },
    );
  }
  return [...new Set(select)].sort();
}

/** The running artifact reconstructed from the mounted plan's bytes. */
function priorArtifact(obs: RunnerObservation): RunnerArtifact | null {
  const text = obs.containers[0]?.plan.text;
  if (!text) return null;
  try {
    return validateArtifact(parseMountedPlan(new TextEncoder().encode(text)).artifact);
  } catch {
    return null;
  }
}

/** The typed replacement: the reviewed evidence (typed once) bound from a verified observation. */
function replacementAction(
  obs: RunnerObservation,
  owned: { artifact_sha256: string; volume: { instance_id: string } },
  prior: RunnerArtifact,
  desired: RunnerArtifact,
  desiredSha: string,
): RunnerAction | Blocker {
  const c = obs.containers[0];
  const { input, output } = obs.kafka;
  // verifyOwnedRunner found both topics; the image and network must exist to be bound
  if (!obs.image) {
    return blocker("BLOCKED_WRONG_IMAGE", `runner image ${obs.target.image} is absent`, {
      model: desired.model,
    });
  }
  if (!obs.networkId) {
    return blocker("BLOCKED_WRONG_NETWORK", `network ${obs.target.network} does not exist`, {
      model: desired.model,
    });
  }
  // the policy is the same on both sides (a policy change is BLOCKED_INVALID_POLICY_CHANGE)
  const deadLetter = desired.on_invalid ? obs.kafka.deadLetter ?? null : undefined;
  if (!input || !output || deadLetter === null) {
    return blocker(
      "BLOCKED_TOPIC_MISSING",
      "an input, output or dead-letter topic does not exist",
      { model: desired.model },
    );
  }
  const identities: ProviderIdentities = {
    cluster_id: obs.kafka.clusterId,
    input_topic_id: input.id,
    output_topic_id: output.id,
    ...(deadLetter ? { dead_letter_topic_id: deadLetter.id } : {}),
    docker_daemon_id: obs.daemonId,
    image_id: obs.image.id,
    network_id: obs.networkId,
  };
  const evidence: ReviewedEvidence = {
    old_container_id: c.id,
    old_container_name: c.name,
    old_generation: c.labels.generation,
    old_plan_sha256: c.labels.planSha256,
    // the verified instance (label, file and mount all equal the owned one)
    volume: { name: obs.volume.name, instance_id: owned.volume.instance_id },
    identities,
    // reviewed offsets are lower bounds: processing may advance while a plan is reviewed
    offsets_lower_bounds: obs.kafka.ranges.flatMap((r) => {
      const offset = obs.kafka.committed[String(r.partition)];
      return offset === undefined
        ? []
        : [{ topic: obs.target.inputTopic, partition: r.partition, offset }];
    }),
    prior_artifact: prior,
    desired_artifact: desired,
  };
  return {
    type: "replace_runner_predicate",
    model: desired.model,
    application_id: desired.application_id,
    prior_artifact_sha256: owned.artifact_sha256,
    desired_artifact_sha256: desiredSha,
    evidence: evidenceJson(evidence),
  };
}
