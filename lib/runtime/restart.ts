/**
 * `sluice restart MODEL --reason TEXT`: bring back a runner someone else stopped (`docker stop`,
 * exit 143; `docker kill`, 137; a fatal error, 15) by starting the same owned generation again,
 * recorded in the audit. `sluice skip-record` ends with the same path after moving past a record
 * the runner cannot decode.
 *
 * Under the deployment lock, with no pending operation — but for a runner removal of this model
 * whose bound runner stopped without a clean close (killed, crashed): the removal cannot use that
 * stop, and the same generation brought back is what it stops with TERM when its plan file is
 * applied again. A model declared removed (`lifecycle.runner_removals`) is named by its owned
 * runner; its target is read from the plan its container mounts.
 *
 * 1. the stopped container is exactly the owned generation: the planner's own check of an owned
 *    runner (`verifyOwnedRunner`: labels, mounted plan bytes against the plan label and the owned
 *    artifact, pinned image and network, fixed execution options, environment, the same volume
 *    instance, the same cluster and topic IDs, at most one group member, resumable offsets),
 *    only not requiring it to run;
 * 2. its stop can be restarted: an exit the same generation would repeat (10, 11: its mounted
 *    plan is refused; `BLOCKED_RESTART_WOULD_FAIL`) or a record it cannot decode (13: `BLOCKED_POISON_RECORD`,
 *    the way out is `skip-record`) is refused;
 * 3. the consumer group is Empty: after a kill (137, or an OOM kill) the dead member stays until
 *    the broker's session timeout (and a runner that failed may not have left either), so sluice
 *    waits for it to leave (bounded, `groupTimeoutMs`, default 120 s); after a clean close (143,
 *    0) a member is someone else consuming with the group (`BLOCKED_GROUP_ACTIVE`);
 * 4. the committed offsets have not moved since the stop where that is knowable: a decode stop
 *    names its record, and the group's committed offset of that partition must be exactly that
 *    record's offset — or, after a recorded skip, exactly one past it (`BLOCKED_OFFSETS_MOVED`).
 *    After any other stop the drift rule decides (lib/validation/drift.ts): after a clean close
 *    (143) the group must hold the runner's close vector, after a kill nothing below where the
 *    run started; moved offsets are refused unless `sluice acknowledge-drift` accepted them
 *    (a forward move after a kill is not knowable). The audit records the offsets found;
 * 5. the audit event `runner_restarted` is recorded (who, why, the container and its exact stop,
 *    exit code, the group's state, the committed offsets), THEN the container is started, and
 *    sluice waits until the runner reports RUNNING for this start.
 *
 * A stop is named by the container's ID and Docker's `FinishedAt` (Docker changes it at every
 * stop and keeps it while the container runs again). So the command is idempotent: an event for
 * this stop and a running container is done; an event and a still-stopped container is only the
 * start; a killed command is finished by running it again.
 *
 * @example
 * ```ts
 * import { restart } from "./restart.ts";
 * // const r = await restart({ dir: "./orders", model: "eligible_orders", reason: "stopped by the host's maintenance" });
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { dockerTimeSet } from "../providers/docker/port.ts";
import { atSite } from "../fault/site.ts";
import { dayTwoSite } from "../protocol/day_two.ts";
import { admitsDayTwo, dayTwoBinding } from "../protocol/journeys.ts";
import { DESTROY_OPERATION_KIND } from "../protocol/destroy.ts";
import type {
  HistoryEvent,
  RecordSkipped,
  RunnerRestarted,
  StoppedContainer,
} from "../state/history.ts";
import type { OwnedRunner } from "../state/ownership.ts";
import type { StateSnapshot } from "../state/store.ts";
import { type Blocker, blocker, blockerError } from "../validation/blocker.ts";
import { isCleanCloseExit } from "../artifact/runner_exits.ts";
import type { ContainerEvidence, RunnerObservation } from "../validation/observation.ts";
import { driftNextStep, runnerDrifts } from "../validation/drift.ts";
import { verifyOwnedRunner } from "../validation/runner_checks.ts";
import { notACleanClose, runnerStopOf, type RunnerStopReport } from "../validation/runner_stop.ts";
import { targetOf } from "./create.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { removalTargets } from "./removal.ts";
import { isoNow } from "./deps.ts";
import { OperationEvents, type OperationEventsOptions } from "./progress.ts";
import { RUNNER_PATHS } from "./labels.ts";
import { observeRunner } from "./observer.ts";
import { requireConfirmedEnv } from "./replacement/operation.ts";
import { openSession, type Session, type SessionOptions } from "./session.ts";
import { providerMutation } from "./provider_mutation.ts";

/** What a day-two command names and decides with (shared by restart and skip-record). */
export interface DayTwoRequest extends SessionOptions {
  /** The model (or its application ID). */
  model: string;
  /** Why (required; recorded in the audit with who and when). */
  reason: string;
  /** The environment name, repeated, where the manifest declares environments. */
  confirmEnv?: string;
  /** First remove this stale local lock left by a dead process (see `state show`). */
  breakStaleLock?: string;
  /** How long to wait for a killed runner's member to leave the group (default 120 s). */
  groupTimeoutMs?: number;
  /** How long the runner may take to report RUNNING after the start (default 120 s). */
  readyTimeoutMs?: number;
  /**
   * `restart` of a set (a model of several instances): the instance to start again (default:
   * the lowest-index stopped one). Other day-two commands act on a single runner only.
   */
  instance?: number;
}

/** What {@link restart} did. */
export interface RestartResult {
  /** The model. */
  model: string;
  /** Its application ID (the consumer group). */
  application_id: string;
  /** The container's name (after a replacement `sluice-<app>.op-<uuid>.a0`). */
  container: string;
  /** The container's exact ID. */
  container_id: string;
  /** Its generation label. */
  generation: string | null;
  /** The stop it was brought back from (exit code, its kind, whether it was a kill). */
  stop: {
    exit_code: number;
    kind: string | null;
    killed: boolean;
    runner_reason: string | null;
    finished_at: string;
    summary: string;
  };
  /** The `runner_restarted` audit event. */
  event_id: string;
  /** False when an earlier run had recorded it already (this run finished the start). */
  recorded_now: boolean;
  /** False when the container was already running again (an earlier run started it). */
  started_now: boolean;
  /** Whether sluice waited for a killed runner's member to leave the group. */
  waited_for_group: boolean;
  /** Committed offset per input partition at the start (decimal strings). */
  committed: Record<string, string>;
  /** The `record_skipped` event this restart follows, or null. */
  after_skip: string | null;
  /** A set's instance: its index and endpoint, and the instances still stopped after it. */
  instance?: { index: number; endpoint: string | null; still_stopped: number[] };
}

/** The owned runner of a model, observed under the lock and checked as the planner checks it. */
export interface ObservedRunner {
  model: string;
  owned: OwnedRunner;
  obs: RunnerObservation;
  container: ContainerEvidence;
  /**
   * A set's instance (`restart` only): its index and endpoint, the session's ports with that
   * endpoint's daemon, how many of the other instances run (their members belong in the group,
   * and their processing moves the group's offsets) and which others are stopped.
   */
  set?: {
    instance: number;
    endpoint: string | null;
    at: Session;
    othersRunning: number[];
    othersStopped: number[];
  };
}

/**
 * Exit kinds the same generation repeats at every start: its mounted plan is immutable, and the
 * owned check just verified those bytes. (An identity-gate or missing-offsets exit, 12 or 14, is
 * not here: the owned check verifies the cluster, the topic IDs and the committed offsets as they
 * are now, so when it passes, what stopped the runner has been fixed.)
 */
const REPEATS: ReadonlySet<string> = new Set(["plan", "plan_checksum"]);

/**
 * Start the stopped owned generation of a model again (see the module documentation).
 *
 * @example
 * ```ts
 * import { restart } from "./restart.ts";
 * // await restart({ dir: ".", model: "eligible_orders", reason: "docker stop by mistake" });
 * ```
 */
export async function restart(options: DayTwoRequest): Promise<RestartResult> {
  requireReason(options.reason, "restart");
  await using p = await openSession(options);
  return await underLock(p, options, async (snap) => {
    const found = await observeOwned(p, snap, options.model, { instance: options.instance });
    return await restartObserved(found.set?.at ?? p, snap, found, options);
  });
}

/** The reason every day-two command records (USAGE_REASON when empty). */
export function requireReason(reason: string | undefined, command: string): void {
  if (typeof reason !== "string" || reason.trim() === "") {
    throw new SluiceError("USAGE_REASON", `${command} needs --reason TEXT (kept in the audit)`);
  }
}

/** Run `fn` under the deployment lock (after the environment check and an explicit break). */
export async function underLock<T>(
  p: Session,
  options: Pick<DayTwoRequest, "confirmEnv" | "breakStaleLock">,
  fn: (snap: StateSnapshot) => Promise<T>,
): Promise<T> {
  requireConfirmedEnv(p, options.confirmEnv ?? null);
  if (options.breakStaleLock) await p.store.breakStaleLock(options.breakStaleLock);
  await p.store.acquireLock({ actor: p.actor });
  try {
    return await fn(await p.store.load());
  } finally {
    await p.store.releaseLock();
  }
}

/**
 * Observe a model's owned runner and check it exactly as the planner checks an owned runner,
 * without requiring it to run. Throws the blockers found.
 */
export async function observeOwned(
  p: Session,
  snap: StateSnapshot,
  model: string,
  sets: SetChoice | null = null,
): Promise<ObservedRunner> {
  const own = snap.ownership?.document ?? null;
  const compiled = p.compiled.artifacts.find((a) =>
    a.model === model || a.artifact.application_id === model
  );
  // a model taken down on purpose (`lifecycle.runner_removals`) is no longer compiled: its
  // owned runner is named by the model or its application ID, its target read from the plan its
  // container mounts — the generation the removal binds
  const removed = compiled
    ? null
    : (own?.runners ?? []).find((r) =>
      (r.model === model || r.application_id === model) &&
      p.project.manifest.runnerRemovals.some((x) => x.model === r.model)
    ) ?? null;
  if (!compiled && !removed) {
    throw new SluiceError(
      "PROJECT_MODEL_NOT_FOUND",
      `no model '${model}' in the project (models: ${
        p.compiled.artifacts.map((a) => a.model).join(", ") || "none"
      })`,
    );
  }
  const name = compiled?.model ?? removed!.model;
  const owned = own?.runners.find((r) => r.model === name) ?? null;
  const c = snap.control?.opened ?? null;
  // beside a pending operation, only a runner its journey admits (the registry's rule, the one
  // the state store applies to the audit event: a removal's own runner)
  const admitted = c !== null && owned !== null && admitsDayTwo(c, owned.application_id);
  if (c && !admitted) {
    throw blockerError([blocker(
      "BLOCKED_OPERATION_PENDING",
      `operation ${c.operation_id} (${c.kind}) is pending: 'sluice state show' names it; finish it ('sluice state resume', or 'sluice apply --plan FILE' for a create) or 'sluice state abandon' it first`,
      { model: name, evidence: { operation_id: c.operation_id, kind: c.kind } },
    )]);
  }
  if (!own || !owned) {
    throw blockerError([blocker(
      "BLOCKED_RUNNER_NOT_OWNED",
      `sluice does not run model ${name} yet: 'sluice plan' and 'sluice apply' create it`,
      { model: name },
    )]);
  }
  if (owned.instances && (!sets || c || !compiled)) {
    // a set's instances are on their own endpoints: restart and skip-record act on one, and not
    // beside a pending operation (a removal of a set binds every instance)
    throw blockerError([blocker(
      "BLOCKED_INSTANCES_UNSUPPORTED",
      c
        ? `model ${name} runs as a set of ${owned.instances.length} instances and operation ${c.operation_id} (${c.kind}) is pending: a set's instance is restarted only with nothing pending`
        : !sets
        ? `model ${name} runs as a set of ${owned.instances.length} instances: acknowledge-drift acts on a single runner only (the drift rule does not apply to a set; restart and skip-record act on a set's instance)`
        : `model ${name} runs as a set of ${owned.instances.length} instances and is declared removed: a removed set's day-two commands are not built`,
      { model: name, evidence: { instances: owned.instances.length } },
    )]);
  }
  if (owned.instances && compiled) {
    return await observeSetInstance(p, snap, name, owned, compiled.artifact, sets!);
  }
  const target = compiled
    ? targetOf(compiled.artifact)
    : (await removalTargets(p.docker, own, p.project.manifest.runnerRemovals, new Set()))
      .find((t) => t.applicationId === owned.application_id) ?? null;
  if (!target) {
    throw blockerError([blocker(
      "BLOCKED_RUNNER_MISSING",
      `model ${name} is declared removed and no container carrying its application ID ${owned.application_id} mounts a readable plan: there is nothing to bring back`,
      { model: name, evidence: { application_id: owned.application_id } },
    )]);
  }
  const obs = await observeRunner(p, target);
  const { blockers, container } = verifyOwnedRunner(obs, owned, own.topics, { expect: "any" });
  if (blockers.length > 0 || !container) throw blockerError(blockers);
  // the runner of a pending removal: brought back only from a stop the removal cannot use, of
  // the container the removal binds (its intent's binding)
  const binding = c && admitted ? dayTwoBinding(c, owned.application_id) : null;
  if (c && binding) {
    // a destroy takes its runners down the removal's way (lib/protocol/destroy.ts)
    const what = c.kind === DESTROY_OPERATION_KIND ? "destroy" : "removal";
    const why = binding.container_id !== container.id
      ? `it binds container ${binding.container_id.slice(0, 12)}, not ${container.id.slice(0, 12)}`
      : !container.running && notACleanClose(container).length === 0
      ? `${container.name} closed cleanly (exit ${container.exitCode}): the ${what} can use that close`
      : null;
    if (why) {
      throw blockerError([blocker(
        "BLOCKED_OPERATION_PENDING",
        `${
          what === "removal" ? "runner removal" : what
        } ${c.operation_id} of ${name} is pending and ${why}; continue it with its plan file ('sluice apply --plan FILE') or 'sluice state abandon --operation-id ${c.operation_id} --reason TEXT'`,
        { model: name, evidence: { operation_id: c.operation_id, kind: c.kind } },
      )]);
    }
  }
  return { model: name, owned, obs, container };
}

/** Which instance of a set a day-two command acts on (`restart`, `skip-record`). */
export interface SetChoice {
  /** The instance named (`restart --instance N`). */
  instance?: number;
  /** The record a `skip-record` names: the lowest-index instance stopped at it is chosen. */
  decodeAt?: { partition: number; offset: string };
}

/**
 * One instance of an owned set, observed on its endpoint and checked as an owned runner is (the
 * group may hold the set's N members): the one `choice` names, else the lowest-index one stopped
 * at the record a skip names, else the lowest-index stopped one — or, with none stopped, one
 * whose current stop an earlier run recorded restarting (the same command again finishes it),
 * else instance 0 (which `restartObserved` names running).
 */
async function observeSetInstance(
  p: Session,
  snap: StateSnapshot,
  model: string,
  owned: OwnedRunner,
  artifact: RunnerArtifact,
  choice: SetChoice,
): Promise<ObservedRunner> {
  const instance = choice.instance;
  const instances = owned.instances!;
  if (instance !== undefined && !instances.some((i) => i.instance === instance)) {
    throw new SluiceError(
      "USAGE_INSTANCE",
      `model ${model} runs as a set of ${instances.length} instances (0 to ${
        instances.length - 1
      }): there is no instance ${instance}`,
    );
  }
  const read: Array<{ at: Session; obs: RunnerObservation; c: ContainerEvidence | null }> = [];
  for (const i of instances) {
    const at: Session = { ...p, docker: await p.dockerAt(i.endpoint) };
    const obs = await observeRunner(at, { ...targetOf(artifact), instance: i.instance });
    read.push({ at, obs, c: obs.containers[0] ?? null });
  }
  const stopped = instances.filter((_, n) => read[n].c !== null && !read[n].c!.running)
    .map((i) => i.instance);
  const recorded = instances.find((_, n) =>
    read[n].c?.running && eventsOfStop(snap.history.events, read[n].c!).restarted !== null
  )?.instance;
  const at = choice.decodeAt;
  const stoppedAt = at
    ? instances.find((_, n) => {
      const rec = read[n].c && !read[n].c!.running ? runnerStopOf(read[n].c!) : null;
      const r = rec?.kind === "decode" ? rec.runner?.record ?? null : null;
      return r !== null && r.partition === at.partition && String(r.offset) === at.offset;
    })?.instance
    : undefined;
  const chosen = instance ?? stoppedAt ?? stopped[0] ?? recorded ?? 0;
  const n = instances.findIndex((i) => i.instance === chosen);
  const inst = instances[n];
  const mine = { ...owned, container_name: inst.container_name, volume: inst.volume };
  const { blockers, container } = verifyOwnedRunner(
    read[n].obs,
    mine,
    snap.ownership!.document.topics,
    { expect: "any", members: instances.length },
  );
  if (blockers.length > 0 || !container) {
    throw blockerError(
      blockers.map((b) => ({ ...b, message: `instance ${chosen}: ${b.message}` })),
    );
  }
  return {
    model,
    owned: mine,
    obs: read[n].obs,
    container,
    set: {
      instance: chosen,
      endpoint: inst.endpoint,
      at: read[n].at,
      othersRunning: instances.filter((_, m) => m !== n && read[m].c?.running)
        .map((i) => i.instance),
      othersStopped: stopped.filter((x) => x !== chosen),
    },
  };
}

/** The audit events naming this container's current stop (its ID and FinishedAt). */
export function eventsOfStop(
  events: readonly HistoryEvent[],
  c: Pick<ContainerEvidence, "id" | "finishedAt">,
): { restarted: RunnerRestarted | null; skipped: RecordSkipped | null } {
  const mine = (e: { container: StoppedContainer }) =>
    e.container.id === c.id && e.container.finished_at === c.finishedAt;
  return {
    restarted:
      events.filter((e): e is RunnerRestarted => e.kind === "runner_restarted" && mine(e)).at(-1) ??
        null,
    skipped: events.filter((e): e is RecordSkipped => e.kind === "record_skipped" && mine(e))
      .at(-1) ?? null,
  };
}

/** The stopped container as an audit event records it. */
export function stoppedContainer(c: ContainerEvidence): StoppedContainer {
  const stop = runnerStopOf(c);
  return {
    id: c.id,
    name: c.name,
    generation: c.labels.generation,
    operation_id: c.labels.operationId,
    artifact_sha256: c.labels.artifactSha256,
    plan_sha256: c.plan.sha256,
    image_id: c.imageId,
    volume_instance: c.volumeInstance,
    exit_code: c.exitCode,
    oom_killed: c.oomKilled,
    exit_kind: stop?.kind ?? null,
    runner_reason: stop?.runner?.reason ?? null,
    started_at: c.startedAt,
    finished_at: c.finishedAt,
  };
}

/** Whether a stop is a kill (SIGKILL or the OOM killer): nothing was closed, a member lingers. */
function isKill(c: ContainerEvidence): boolean {
  return c.exitCode === 137 || c.oomKilled;
}

/**
 * The restart of an observed owned runner, under the lock the caller holds (`restart`, and
 * `skip-record` after its offset move). Its run's events: `started` once the stop is known to
 * be restartable (a refusal before that sends none), `record_restart` (kind `intent`: the audit
 * event, the write-ahead record of the start) and `start_stopped` (kind `action`) as each is
 * durable, then `committed` (boundary `running`) once the runner reports RUNNING for this start.
 * A `skip-record` passes its own run (`run`): the restart's events continue it.
 */
export async function restartObserved(
  p: Session,
  snapshot: StateSnapshot,
  o: ObservedRunner,
  options: DayTwoRequest,
  run?: OperationEvents,
): Promise<RestartResult> {
  let snap = snapshot;
  const c = o.container;
  const appId = o.owned.application_id;
  const { restarted, skipped: ownSkip } = eventsOfStop(snap.history.events, c);
  const stop = runnerStopOf(c);
  // a set's instances stop at the same record (its partition moves to each in turn): the skip
  // one of them recorded is this one's too
  const skipped = ownSkip ?? (o.set ? setSkipOf(snap.history.events, appId, stop) : null);
  const result = (
    event: RunnerRestarted,
    recordedNow: boolean,
    startedNow: boolean,
  ): RestartResult => ({
    model: o.model,
    application_id: appId,
    container: c.name,
    container_id: c.id,
    generation: c.labels.generation,
    stop: {
      exit_code: event.container.exit_code,
      kind: event.container.exit_kind,
      killed: event.container.exit_code === 137 || event.container.oom_killed,
      runner_reason: event.container.runner_reason,
      finished_at: event.container.finished_at,
      summary: stop?.summary ?? `exit ${event.container.exit_code}`,
    },
    event_id: event.event_id,
    recorded_now: recordedNow,
    started_now: startedNow,
    waited_for_group: event.waited_for_group,
    committed: event.committed,
    after_skip: event.after_skip,
    ...(o.set
      ? {
        instance: {
          index: o.set.instance,
          endpoint: o.set.endpoint,
          still_stopped: o.set.othersStopped,
        },
      }
      : {}),
  });
  // the run of this restart: the skip's, or its own, started here (`continued`: an earlier run
  // recorded this stop's restart)
  const within = <T>(id: string, continued: boolean, body: (e: OperationEvents) => Promise<T>) => {
    if (run) return body(run);
    const events = dayTwoEvents(p, options, "restart", id, restartCommand(o.model));
    return events.run(() => {
      events.started(
        continued,
        continued
          ? `restart ${id} of ${c.name} continues (recorded by an earlier run)`
          : `restart of ${c.name} (${stop?.summary ?? `exit ${c.exitCode}`})`,
      );
      return body(events);
    });
  };

  if (c.running) {
    if (restarted) {
      // an earlier run recorded and started it: done (read-only from here)
      return await within(restarted.event_id, true, async (events) => {
        await waitStarted(p, c, events, options.readyTimeoutMs);
        events.committed(null, `${c.name} reports RUNNING (restart ${restarted.event_id})`, RAN);
        return result(restarted, false, false);
      });
    }
    const byHand = dockerTimeSet(c.finishedAt);
    throw blockerError([blocker(
      "BLOCKED_RUNNER_RUNNING",
      `container ${c.name} of model ${o.model} is running: there is nothing to restart${
        byHand
          ? `; it was started again outside sluice after its stop at ${c.finishedAt}, and no restart of that stop is recorded`
          : ""
      }`,
      {
        model: o.model,
        evidence: {
          container: c.name,
          started_at: c.startedAt,
          finished_at: c.finishedAt,
          started_outside_sluice: byHand,
        },
      },
    )]);
  }
  if (!c.everStarted || !stop) {
    throw blockerError([blocker(
      "BLOCKED_RUNNER_NEVER_STARTED",
      `container ${c.name} of model ${o.model} was created but never started: it is not a stopped runner; 'sluice plan' shows what the project needs`,
      { model: o.model, evidence: { container: c.name, status: c.status } },
    )]);
  }
  const committedNow = o.obs.kafka.committed;
  const eventId = restarted?.event_id ?? p.uuids.uuid();
  const problems = restartBlockers(o, stop, skipped, committedNow, snap.history.events);
  if (problems.length > 0) throw blockerError(problems);

  return await within(eventId, restarted !== null, async (events) => {
    // the group: Empty, after a kill once the dead member has left
    const { waited, group } = await waitGroupEmpty(p, o, options, events);
    // the offsets at the start, read after any wait (a dead member commits nothing)
    const committed = waited
      ? Object.fromEntries(
        [...await p.kafka.committedOffsets(appId, o.obs.target.inputTopic)].map((
          [k, v],
        ) => [String(k), v.toString()]),
      )
      : committedNow;
    if (waited) {
      const moved = restartBlockers(o, stop, skipped, committed, snap.history.events);
      if (moved.length > 0) throw blockerError(moved);
    }

    let event = restarted;
    let recordedNow = false;
    if (!event) {
      event = {
        kind: "runner_restarted",
        event_id: eventId,
        actor: p.actor,
        recorded_at: isoNow(p.clock),
        reason: options.reason,
        model: o.model,
        application_id: appId,
        container: stoppedContainer(c),
        group_state: group.state,
        waited_for_group: waited,
        committed,
        after_skip: skipped?.event_id ?? null,
        ...(o.set ? { instance: o.set.instance, endpoint: o.set.endpoint } : {}),
      };
      const e = event;
      snap = await atSite(dayTwoSite("record_restart"), () => p.store.recordAudit(snap, e));
      recordedNow = true;
      events.boundary({
        kind: "intent",
        boundary: "record_restart",
        message: `restart of ${c.name} recorded in the audit (event ${e.event_id})`,
      });
    }
    await providerMutation(
      p.store,
      dayTwoSite("start_stopped"),
      () => p.docker.startContainer(c.id),
    );
    events.boundary({
      kind: "action",
      action: "start",
      boundary: "start_stopped",
      message: `${c.name} started again (restart ${event.event_id})`,
    });
    await waitStarted(p, c, events, options.readyTimeoutMs);
    events.committed(null, `${c.name} reports RUNNING (restart ${event.event_id})`, RAN);
    return result(event, recordedNow, true);
  });
}

/**
 * The latest `record_skipped` event of `applicationId` for the record `stop` names (a decode
 * stop): a set's skip, recorded against the instance the skip chose, covers every instance that
 * stopped at that record.
 */
function setSkipOf(
  events: readonly HistoryEvent[],
  applicationId: string,
  stop: RunnerStopReport | null,
): RecordSkipped | null {
  const rec = stop?.kind === "decode" ? stop.runner?.record ?? null : null;
  if (!rec) return null;
  return events.filter((e): e is RecordSkipped =>
    e.kind === "record_skipped" && e.application_id === applicationId &&
    e.record.topic === rec.topic && e.record.partition === rec.partition &&
    e.record.offset === String(rec.offset)
  ).at(-1) ?? null;
}

/** The `committed` boundary of a restart: the runner reported RUNNING for this start. */
const RAN = "running";

/** The command that finishes a cancelled restart of `model`. */
function restartCommand(model: string): string {
  return `sluice restart ${model} --reason TEXT`;
}

/**
 * The events of one day-two run (`restart`, `skip_record`): its operation ID is its audit
 * event's. A day-two command records no pending operation — what it recorded names the runner's
 * stop, and the same command again finishes it — so a run cancelled after a boundary names that
 * command, not `state resume` or `apply --plan`.
 */
class DayTwoEvents extends OperationEvents {
  readonly #rerun: string;
  #continued = false;

  constructor(options: OperationEventsOptions, rerun: string) {
    super(options);
    this.#rerun = rerun;
  }

  override started(continued: boolean, message: string): void {
    this.#continued = continued;
    super.started(continued, message);
  }

  override cancelled(): SluiceError {
    const last = this.lastBoundary;
    // nothing recorded by this run or an earlier one: the base's "nothing was done"
    if (last === null && !this.#continued) return super.cancelled();
    const { journey, operation_id } = (super.cancelled().evidence ?? {}) as {
      journey?: string;
      operation_id?: string;
    };
    return new SluiceError(
      "CANCELLED",
      `${journey} ${operation_id} cancelled after ${
        last ?? "what an earlier run recorded"
      }: what it recorded stays and no operation is pending; finish it with the same command again ('${this.#rerun}')`,
      {
        evidence: {
          journey,
          operation_id,
          last_boundary: last,
          commands: { continue: this.#rerun },
        },
      },
    );
  }
}

/** The events of one day-two run ({@link DayTwoEvents}). */
export function dayTwoEvents(
  p: Session,
  options: Pick<DayTwoRequest, "onProgress" | "signal">,
  journey: "restart" | "skip_record",
  eventId: string,
  rerun: string,
): OperationEvents {
  return new DayTwoEvents({
    journey,
    operationId: eventId,
    listener: options.onProgress,
    clock: p.clock,
    signal: options.signal,
  }, rerun);
}

/**
 * The group of a stopped runner, Empty: at once after a clean close (143, 0: the runner left the
 * group); after any other stop (a kill leaves its member until the broker's session timeout, a
 * runner that failed may not have left) wait, bounded, for the one member to leave. A member
 * that stays, or any member after a clean close, is `BLOCKED_GROUP_ACTIVE`. The run's
 * cancellation ends the wait at once (nothing is started while it waits).
 */
export async function waitGroupEmpty(
  p: Session,
  o: ObservedRunner,
  options: Pick<DayTwoRequest, "groupTimeoutMs">,
  events: OperationEvents,
): Promise<{ waited: boolean; group: { state: string; members: unknown[] } }> {
  const c = o.container;
  // a set's other running instances are members of the group: only this runner's must be gone
  const allowed = o.set?.othersRunning.length ?? 0;
  let group: { state: string; members: unknown[] } = o.obs.kafka.group;
  if (group.members.length <= allowed) return { waited: false, group };
  if (isCleanCloseExit(c.exitCode)) {
    throw blockerError([groupActive(o, group.members.length, c, false)]);
  }
  const bound = options.groupTimeoutMs ?? 120_000;
  const started = p.clock.now();
  const message = `${c.name} ${
    isKill(c)
      ? `was killed (exit ${c.exitCode}${c.oomKilled ? ", OOM" : ""})`
      : `exited ${c.exitCode}`
  }: waiting for its member to leave group ${o.owned.application_id} (the broker's session timeout)`;
  while (group.members.length > allowed) {
    const waitedMs = p.clock.now() - started;
    if (waitedMs > bound) {
      throw blockerError([groupActive(o, group.members.length, c, true, bound)]);
    }
    events.emit({ kind: "wait", waited_ms: waitedMs, bound_ms: bound, message });
    await events.sleep(1_000);
    const g = await events.wait(p.kafka.describeGroup(o.owned.application_id));
    group = { state: g.state, members: g.members };
  }
  return { waited: true, group };
}

function groupActive(
  o: ObservedRunner,
  members: number,
  c: ContainerEvidence,
  waited: boolean,
  boundMs = 0,
): Blocker {
  return blocker(
    "BLOCKED_GROUP_ACTIVE",
    waited
      ? `group ${o.owned.application_id} still has ${members} member(s) ${
        boundMs / 1000
      }s after ${c.name} stopped (exit ${c.exitCode}); run the same command again once 'sluice status' shows the group Empty`
      : `group ${o.owned.application_id} has ${members} member(s) while its runner ${c.name} is stopped (exit ${c.exitCode}): something else consumes with the runner's group; stop it, then run this command again`,
    { model: o.model, evidence: { group: o.owned.application_id, members, waited } },
  );
}

/**
 * The rules on the stop and the offsets (read-only): an exit the same generation repeats; a
 * decode stop whose record has not been skipped; committed offsets moved since the stop — for a
 * decode stop against its record, for any other stop the drift rule (`runnerDrifts`: the
 * runner's close or start vector) unless acknowledged.
 */
export function restartBlockers(
  o: ObservedRunner,
  stop: RunnerStopReport,
  skipped: RecordSkipped | null,
  committed: Record<string, string>,
  events: readonly HistoryEvent[] = [],
): Blocker[] {
  const c = o.container;
  const model = o.model;
  if (stop.kind === "decode") {
    const rec = stop.runner?.record ?? null;
    if (!rec) {
      return [blocker(
        "BLOCKED_POISON_RECORD",
        `${c.name} stopped on a record it cannot decode (exit 13) but its status file does not name the record: read 'sluice logs ${model}'; a restart would stop at it again`,
        { model, evidence: { container: c.name, stop } },
      )];
    }
    const at = committed[String(rec.partition)] ?? null;
    if (skipped) {
      // the skip moved exactly this partition by exactly one
      const expected = (BigInt(rec.offset) + 1n).toString();
      return at === expected
        ? []
        : [offsetsMoved(o, rec.topic, rec.partition, expected, at, skipped)];
    }
    if (at !== String(rec.offset)) {
      return [offsetsMoved(o, rec.topic, rec.partition, String(rec.offset), at)];
    }
    return [blocker(
      "BLOCKED_POISON_RECORD",
      `${c.name} stopped at ${rec.topic}-${rec.partition}@${rec.offset}: ${stop.summary}; every start stops at that record again. To move past it: 'sluice skip-record ${model} --partition ${rec.partition} --offset ${rec.offset} --reason TEXT' (recorded in the audit)`,
      {
        model,
        evidence: {
          container: c.name,
          topic: rec.topic,
          partition: rec.partition,
          offset: rec.offset,
          reason: stop.runner?.reason ?? null,
        },
      },
    )];
  }
  // a set's offsets are the group's, moved by every instance that ran after this one stopped:
  // no vector of this instance says where they should be (the audit records them)
  const drifted = o.set ? undefined : runnerDrifts(c, events, {
    topic: o.obs.target.inputTopic,
    committed,
  }).unacknowledged.find((d) => d.kind === "offsets_moved_while_stopped");
  if (drifted) {
    return [blocker(
      "BLOCKED_OFFSETS_MOVED",
      `${model}: ${drifted.summary}; sluice does not start a runner on offsets moved outside it: ${
        driftNextStep(drifted, model)
      }`,
      { model, evidence: { drift: drifted } },
    )];
  }
  if (stop.kind !== null && REPEATS.has(stop.kind)) {
    return [blocker(
      "BLOCKED_RESTART_WOULD_FAIL",
      `${c.name} stopped with ${stop.summary}; starting the same generation fails the same way: fix what it names (docs/runner.md), then 'sluice restart ${model}'`,
      { model, evidence: { container: c.name, stop } },
    )];
  }
  return [];
}

function offsetsMoved(
  o: ObservedRunner,
  topic: string,
  partition: number,
  expected: string,
  found: string | null,
  skipped: RecordSkipped | null = null,
): Blocker {
  return blocker(
    "BLOCKED_OFFSETS_MOVED",
    `the committed offset of ${topic}-${partition} in group ${o.owned.application_id} is ${
      found ?? "absent"
    }, not ${expected}${
      skipped
        ? ` (one past the record skipped by ${skipped.event_id})`
        : " (the record the runner stopped at)"
    }: it was moved outside sluice while ${o.container.name} was stopped; put it back (kafka-consumer-groups --reset-offsets --to-offset ${expected}) or find out who moved it`,
    { model: o.model, evidence: { topic, partition, expected, found } },
  );
}

/**
 * Wait until the runner reports RUNNING for this start: its status file names the generation
 * and plan, and was started at or after the container's current StartedAt (a kill leaves the
 * previous run's RUNNING in the file). A runner that exits fails with its exit code. Each poll
 * is a `wait` event; the run's cancellation ends the wait at once (the container was started:
 * the same command again waits for it).
 */
async function waitStarted(
  p: Session,
  c: ContainerEvidence,
  events: OperationEvents,
  timeoutMs = 120_000,
): Promise<void> {
  const started = p.clock.now();
  while (true) {
    const info = await events.wait(p.docker.inspectContainer(c.id));
    if (!info) {
      throw new SluiceError("BLOCKED_RUNNER_MISSING", `container ${c.name} disappeared`);
    }
    if (!info.state.running && info.state.status === "exited") {
      throw new SluiceError(
        "BLOCKED_RUNNER_EXITED",
        `runner ${c.name} exited with code ${info.state.exitCode}${
          info.state.oomKilled ? " (OOM-killed)" : ""
        } after the restart, before RUNNING: 'sluice status' and 'sluice logs' say why`,
        { evidence: { exitCode: info.state.exitCode, oomKilled: info.state.oomKilled } },
      );
    }
    const bytes = await events.wait(p.docker.readContainerFile(c.id, RUNNER_PATHS.statusFile));
    if (bytes) {
      try {
        const s = JSON.parse(new TextDecoder().decode(bytes));
        if (
          s.state === "RUNNING" && s.generation === c.labels.generation &&
          s.plan_sha256 === c.labels.planSha256 && typeof s.started_at === "string" &&
          Date.parse(s.started_at) >= Math.floor(Date.parse(info.state.startedAt))
        ) return;
      } catch {
        // replaced atomically; an unreadable file is read again
      }
    }
    const waited = p.clock.now() - started;
    if (waited > timeoutMs) {
      throw new SluiceError(
        "UNKNOWN_OUTCOME_NOT_READY",
        `runner ${c.name} did not report RUNNING within ${
          timeoutMs / 1000
        }s of its restart; it was left as it is ('sluice status', 'sluice logs')`,
      );
    }
    events.emit({
      kind: "wait",
      waited_ms: waited,
      bound_ms: timeoutMs,
      message: `waiting for ${c.name} to report RUNNING`,
    });
    await events.sleep(250);
  }
}
