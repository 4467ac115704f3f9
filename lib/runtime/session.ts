/**
 * A session over a project directory: the project loaded and compiled, its state store and the
 * Docker and Kafka ports, the clock, UUID source, logger and actor — what every journey works
 * with. {@link openSession} opens it (the ports it is not given are the real adapters) and
 * disposing it closes what it opened (`await using`). {@link observe}, {@link plan} and
 * {@link apply} are the journeys over one session; each returns a typed result and prints
 * nothing. The SDK's project handle (`lib/sdk/project.ts`) calls them with its shared ports.
 *
 * @example
 * ```ts
 * import { apply, plan } from "./session.ts";
 * const p = await plan({ dir: "./orders", offline: true });
 * // a create is applied from an online plan (it observes Docker and Kafka first)
 * async function create(dir: string): Promise<void> {
 *   const online = await plan({ dir });
 *   if (online.plan.blockers.length === 0) {
 *     await apply({ dir, plan: online.plan, planSha256: online.sha256 });
 *   }
 * }
 * console.log(p.plan.format, typeof create);
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { compile } from "../project/compile.ts";
import type { CompileResult } from "../project/compile.ts";
import { loadProject } from "../project/load.ts";
import type { Project } from "../project/load.ts";
import { projectTopics } from "../project/topics.ts";
import { openStateStore } from "../state/open.ts";
import type { StateSnapshot, StateStore } from "../state/store.ts";
import type { DockerPort } from "../providers/docker/port.ts";
import { projectKafka } from "../providers/real.ts";
import { projectDocker } from "../providers/docker/endpoint.ts";
import { type DockerAt, endpointPorts } from "./endpoint_ports.ts";
import { ENDPOINT_READ_BOUND_MS } from "./endpoint_status.ts";
import { projectSets } from "./instances_status.ts";
import { setsOpen, type UnreachableInstance } from "../plan/instances.ts";
import { connectClientOptions } from "../providers/connect/security.ts";
import { NO_CONNECT_SECURITY } from "../project/connect_security.ts";
import {
  type RunnerPrincipal,
  runnerPrincipal,
  withRunnerPrincipal,
} from "../providers/docker/runner_client_file.ts";
import type { SettingsOverride } from "../project/settings_override.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import type { PendingOperation, Plan } from "../plan/plan.ts";
import { isNoop, planProject } from "../plan/plan.ts";
import { sealPlan } from "../plan/plan_file.ts";
import { verifyPlanBindsProject } from "../plan/bind.ts";
import { verifyPlanAuthority } from "../plan/key_seal.ts";
import {
  bindRunnerCredentials,
  checkRunnerCredentials,
  credentialsChangedLine,
  type RunnerCredentialsCheck,
  startsRunner,
} from "../plan/runner_credentials.ts";
import { compileConnectors } from "../project/compile_connectors.ts";
import { projectSourceSha256 } from "../plan/source_hash.ts";
import { applyPlan } from "./journeys.ts";
import { targetOf } from "./create.ts";
import type { ApplyResult, RuntimeContext } from "./apply_context.ts";
import { observeRunners } from "./observer.ts";
import type { ProjectObservation, RunnerObservation } from "../validation/observation.ts";
import {
  type Clock,
  isoNow,
  RANDOM_UUIDS,
  type RuntimeDeps,
  SYSTEM_CLOCK,
  type UuidSource,
} from "./deps.ts";
import { type Logger, type ProgressListener, SILENT_LOGGER } from "./progress.ts";
import { projectStoreConfig } from "./state_store.ts";
import { observeConsumers } from "./consumer_observer.ts";
import type { ConnectPort } from "../providers/connect/port.ts";
import { restConnect } from "../providers/connect/rest.ts";
import type { ConnectorsObservation } from "../validation/connector_observation.ts";
import { connectorSetup } from "./connector_setup.ts";
import { observeConnectors } from "./connector_observer.ts";
import {
  keptSetObservations,
  ownedSetObservations,
  removalTargets,
  setRemovalObservations,
} from "./removal.ts";
import type { RunnerRemovalDecl } from "../project/removals.ts";
import { commitOfPlan } from "../state/history.ts";
import { observeRunnerAcls, recheckRunnerAcls } from "./runner_acls.ts";

/**
 * Where the project is and which environment to use; the ports, clock, UUID source and logger
 * default to the real ones ({@link RuntimeDeps}).
 */
export interface SessionOptions extends RuntimeDeps {
  /** Project directory (default "."). */
  dir?: string;
  /** Environment (required when the manifest declares environments). */
  environment?: string | null;
  /**
   * A typed override of the environment's settings, layered over the manifest's
   * (`lib/project/settings_override.ts`): every load of the project in the journey applies it.
   */
  settings?: SettingsOverride;
  /** Who acts (default `$USER@host`). */
  actor?: string;
  /** Progress events: each boundary crossed, each resource created, each poll of a wait. */
  onProgress?: ProgressListener;
  /** Labels added to every container and volume created (e.g. a test run's label). */
  extraLabels?: Record<string, string>;
}

/** An opened project with its ports; dispose it (`await using`) to close what it opened. */
export interface Session extends AsyncDisposable {
  project: Project;
  compiled: CompileResult;
  store: StateStore;
  docker: DockerPort;
  /**
   * The Docker port of a `docker.endpoints` daemon by name, opened once when first asked for
   * (null: `docker`); its runners start as the runner principal too (`lib/runtime/endpoint_ports.ts`).
   */
  dockerAt: DockerAt;
  /**
   * The same daemons for reads that must not wait long (a plan or `status` reading a set's
   * instances, `status` each endpoint's daemon): each call bounded (`ENDPOINT_READ_BOUND_MS`).
   */
  readAt: DockerAt;
  kafka: KafkaPort;
  /** The runner principal the session's runners start as (its client file, read once). */
  runner: RunnerPrincipal;
  /** The Connect port of a declared cluster alias (created on first use). */
  connect: (cluster: string) => ConnectPort;
  sourceSha256: string;
  plansDir: string;
  actor: string;
  clock: Clock;
  uuids: UuidSource;
  logger: Logger;
}

/** Default actor name: user@host. */
export function defaultActor(): string {
  return `${Deno.env.get("USER") ?? "unknown"}@${hostname()}`;
}

/**
 * The project as its files are now: loaded for `environment`, compiled, and its source hash —
 * what a session opens with, and what a reviewed replacement reads again before each transition.
 *
 * @example
 * ```ts
 * import { loadCompiledProject } from "./session.ts";
 * // const { compiled, sourceSha256 } = await loadCompiledProject("./orders", null);
 * ```
 */
export async function loadCompiledProject(
  dir: string,
  environment: string | null,
  settings?: SettingsOverride,
): Promise<{ project: Project; compiled: CompileResult; sourceSha256: string }> {
  const project = await loadProject(dir, { environment, settings });
  return { project, compiled: compile(project), sourceSha256: projectSourceSha256(project) };
}

/** Load, compile and open a project's state store and ports. */
export async function openSession(options: SessionOptions = {}): Promise<Session> {
  const dir = resolve(options.dir ?? ".");
  const { project, compiled, sourceSha256 } = await loadCompiledProject(
    dir,
    options.environment ?? null,
    options.settings,
  );
  const clock = options.clock ?? SYSTEM_CLOCK;
  const logger = options.logger ?? SILENT_LOGGER;
  // the store stamps its records with the same clock as the journeys
  const store = options.store ??
    openStateStore(projectStoreConfig(project), { clock: () => new Date(clock.now()) });
  try {
    await store.init();
  } catch (error) {
    if (!options.store) await store.close();
    throw error;
  }
  // runners start as the runner principal (kafka.security.runner): its client file goes in first
  const runner = runnerPrincipal(project.manifest, options.env ? { get: options.env } : undefined);
  const docker = withRunnerPrincipal(
    options.docker ?? await projectDocker(project.manifest),
    project.manifest,
    undefined,
    runner,
  );
  const kafka = options.kafka ??
    await projectKafka(project.manifest);
  const m = project.manifest;
  const dockerAt = endpointPorts(m, () => Promise.resolve(docker), {
    dockerEndpoint: options.dockerEndpoint,
    wrap: (port) => withRunnerPrincipal(port, m, undefined, runner),
  });
  const readAt = endpointPorts(m, () => Promise.resolve(docker), {
    dockerEndpoint: options.dockerEndpoint,
    callBoundMs: ENDPOINT_READ_BOUND_MS,
  });
  const connectPorts = new Map<string, ConnectPort>();
  const connect = (alias: string): ConnectPort => {
    const decl = m.connect.find((c) => c.alias === alias);
    if (!decl) {
      throw new SluiceError(
        "MANIFEST_UNKNOWN_CONNECT_CLUSTER",
        `Connect cluster '${alias}' is not declared under 'connect:'`,
        { evidence: { cluster: alias } },
      );
    }
    if (!connectPorts.has(alias)) {
      connectPorts.set(
        alias,
        options.connect?.({ alias, restHost: decl.restHost }) ??
          restConnect(
            decl.restHost,
            connectClientOptions(decl.security ?? NO_CONNECT_SECURITY, alias),
          ),
      );
    }
    return connectPorts.get(alias)!;
  };
  return {
    project,
    compiled,
    store,
    docker,
    dockerAt,
    readAt,
    kafka,
    runner,
    connect,
    sourceSha256,
    plansDir: join(dir, ".sluice", "runtime", "plans"),
    actor: options.actor ?? defaultActor(),
    clock,
    uuids: options.uuids ?? RANDOM_UUIDS,
    logger,
    async [Symbol.asyncDispose]() {
      // what the caller passed in, the caller closes
      if (!options.store) await store.close();
      if (!options.kafka) await kafka.close();
    },
  };
}

/**
 * Observe every runner model of a project, and its declared, removed and owned connectors by
 * exact reads (read-only).
 */
export async function observe(options: SessionOptions = {}): Promise<ProjectObservation> {
  await using s = await openSession(options);
  return await observeSession(s);
}

/** {@link observe} on a session already open (`status` reads more through the same ports). */
export async function observeSession(s: Session): Promise<ProjectObservation> {
  const obs = await observeRunners(s, s.compiled.artifacts.map((a) => targetOf(a.artifact)));
  const connectors = await observeProjectConnectors(
    s,
    (await s.store.load()).ownership?.document ?? null,
  );
  return connectors ? { ...obs, connectors } : obs;
}

/** The project's connectors observed (null when it declares, removes and owns none). */
async function observeProjectConnectors(
  s: Session,
  ownership: Parameters<typeof connectorSetup>[1],
): Promise<ConnectorsObservation | null> {
  const setup = connectorSetup(s.project.manifest, ownership);
  if (!setup) return null;
  return await observeConnectors(
    { connect: s.connect, hashKey: setup.hashKey, clock: s.clock },
    setup.targets,
  );
}

/** Options of {@link plan}. */
export interface PlanOptions extends SessionOptions {
  /** Plan from state alone, without contacting Docker or Kafka. */
  offline?: boolean;
  /** Plan only these models (`plan --select`): creates and no-ops, never a replacement. */
  select?: string[] | null;
  /**
   * Plan the removal of everything the project owns in the environment (`plan --destroy`)
   * instead of its changes; `deleteData` (`--delete-data`) is refused today
   * (`BLOCKED_DESTROY_DATA_DELETION`). Absent or null: the project's plan.
   */
  destroy?: { deleteData: boolean } | null;
}

/** A computed plan with its sealed bytes (ready to write with `writePlanFile`). */
export interface PlanResult {
  /** The plan (format 5, or 6 for a reviewed predicate replacement). */
  plan: Plan;
  /** The sealed bytes of the plan file. */
  bytes: Uint8Array;
  /** The sha256 of those bytes: what `apply` verifies. */
  sha256: string;
  /**
   * The observation the plan was computed from (null offline).
   * @internal the evidence the plan was computed from; its shape is not part of the versioned SDK
   */
  observation: ProjectObservation | null;
  /** True when applying the plan would do nothing: no action, no blocker. */
  noop: boolean;
  /**
   * The connector observation the plan was computed from (null offline or without any).
   * @internal the evidence the plan was computed from; its shape is not part of the versioned SDK
   */
  connectors?: ConnectorsObservation | null;
}

/** Compute a plan for a project. Writes nothing. */
export async function plan(options: PlanOptions = {}): Promise<PlanResult> {
  await using s = await openSession(options);
  return await planSession(
    s,
    options.offline ?? false,
    options.select ?? null,
    options.destroy ?? null,
  );
}

/** Compute a plan in an opened session. */
export async function planSession(
  s: Session,
  offline: boolean,
  select: string[] | null = null,
  destroy: { deleteData: boolean } | null = null,
): Promise<PlanResult> {
  const snap = await s.store.load();
  let observation: ProjectObservation | null = null;
  let topics: Map<string, { id: string; partitions: number }> | null = null;
  let unreachable: Map<string, UnreachableInstance[]> | undefined;
  let setObservations: Map<string, Array<RunnerObservation | null>> | undefined;
  // the plan's impact section: live groups on the output topics (read-only)
  let live: Awaited<ReturnType<typeof observeConsumers>> = { consumers: null };
  if (!offline) {
    live = await observeConsumers(s.kafka, s.project.models.map((m) => m.decl.outputTopic));
    // owned runners declared removed are observed too, at the generation their container runs
    // a destroy observes every owned runner, declared or not
    const owned = snap.ownership?.document ?? null;
    // what the plan may take down: every owned runner for a destroy, else the declared removals
    const [removals, declared]: [Pick<RunnerRemovalDecl, "model">[], Set<string>] = destroy
      ? [(owned?.runners ?? []).map((r) => ({ model: r.model })), new Set()]
      : select === null
      ? [s.project.manifest.runnerRemovals, new Set(s.compiled.artifacts.map((a) => a.model))]
      : [[], new Set()];
    const removed = await removalTargets(s.docker, owned, removals, declared);
    // an owned set's instances, each on its endpoint (each call bounded)
    setObservations = new Map([
      ...await setRemovalObservations(s.readAt, s, owned, removals, declared),
      // a declared owned set (a plan of it is a verified no-op, or names what is not built)
      ...await ownedSetObservations(
        s.readAt,
        s,
        destroy || !setsOpen()
          ? []
          : (owned?.runners ?? []).filter((r) =>
            s.compiled.artifacts.some((a) => a.model === r.model)
          ),
      ),
      // a removed set declared again: each instance where its kept volume is
      ...await keptSetObservations(
        s.readAt,
        s,
        owned,
        s.compiled.artifacts.map((a) => targetOf(a.artifact)),
      ),
    ]);
    observation = await observeRunners(s, [
      ...s.compiled.artifacts.map((a) => targetOf(a.artifact)),
      ...removed,
    ]);
    const names = projectTopics(s.project).map((t) => t.topic);
    const d = await s.kafka.describe([...new Set(names)]);
    topics = new Map([...d.topics].map(([n, t]) => [n, { id: t.id, partitions: t.partitions }]));
    // each set's instances on their endpoints: a plan never acts on what it could not read (it
    // reads only the placed endpoints: an unrelated one that hangs does not hold it up)
    unreachable = new Map(
      [...await projectSets(s.project, s.readAt, { placedOnly: true })].map(([id, set]) => [
        id,
        set.rows.flatMap((r) =>
          r.problem ? [{ instance: r.instance, endpoint: r.endpoint, problem: r.problem }] : []
        ),
      ]),
    );
  }
  // connectors: desired (compiled, fingerprinted), removals, owned, observed by exact reads
  const setup = connectorSetup(s.project.manifest, snap.ownership?.document ?? null);
  const connectorObs = setup && !offline
    ? await observeConnectors(
      { connect: s.connect, hashKey: setup.hashKey, clock: s.clock },
      setup.targets,
    )
    : null;
  // under kafka.security: the runner principal's ACLs, which the planner proves sufficient
  const runnerAcls = await observeRunnerAcls(s.kafka, s.project.manifest.kafkaSecurity, offline);
  const computed = planProject({
    project: s.project,
    compiled: s.compiled,
    state: {
      ownership: snap.ownership?.document ?? null,
      checksum: snap.ownership?.checksum ?? null,
      identity: snap.identity,
      history: snap.history.events,
    },
    observation,
    topics,
    now: isoNow(s.clock),
    sourceSha256: s.sourceSha256,
    select,
    consumers: live.consumers,
    consumersUnobserved: live.unobserved,
    pending: pendingOf(snap),
    destroy,
    runnerAcls,
    unreachableInstances: unreachable,
    sets: setsOpen(),
    setObservations,
    connectors: setup
      ? {
        desired: setup.desired,
        removals: setup.removals,
        owned: setup.owned,
        observation: connectorObs,
      }
      : null,
  });
  const key = await s.store.sealKey();
  // a plan that starts a runner binds the credentials it starts with (keyed: never a plain hash)
  const file = computed.blockers.length === 0 && startsRunner(computed.actions)
    ? await s.runner.file()
    : null;
  const bound = file
    ? { ...computed, runner_client_binding: bindRunnerCredentials(file.bytes, key) }
    : computed;
  const { bytes, sha256, sealed } = sealPlan(bound, key);
  const { seal: _seal, ...keyed } = sealed;
  return {
    plan: keyed,
    bytes,
    sha256,
    observation,
    noop: isNoop(bound),
    ...(connectorObs ? { connectors: connectorObs } : {}),
  };
}

/** The pending operation of a snapshot, as the planner shows it. */
function pendingOf(snap: StateSnapshot): PendingOperation | null {
  const c = snap.control?.opened;
  if (!c) return null;
  return {
    operation_id: c.operation_id,
    kind: c.kind,
    status: c.status,
    last_boundary: c.checkpoints.at(-1)?.name ?? null,
    plan_sha256: c.intent.reviewed_plan_sha256,
  };
}

/** What {@link apply} returns: the apply's result and the plan it carried out. */
export type AppliedPlan = ApplyResult & { plan: Plan };

/** Options of {@link apply}. */
export interface ApplyOptions extends SessionOptions {
  /** A reviewed plan (from `readPlanFile`); without it, apply plans online first. */
  plan?: Plan;
  planSha256?: string;
  /** How long a runner may take to report RUNNING. */
  readyTimeoutMs?: number;
  /** Remove a stale local lock left by a dead process first (explicit; never silent). */
  breakStaleLock?: string;
  /**
   * Continue only this pending operation of the plan (`state resume`), never start one: the
   * router's {@link applyPlan} checks it is the plan's.
   */
  operationId?: string;
}

/** Apply a format-5 plan (or a fresh online plan) to a project. */
export async function apply(options: ApplyOptions = {}): Promise<AppliedPlan> {
  await using s = await openSession(options);
  return await applyInSession(s, options);
}

/**
 * {@link apply} in a session already open (`state resume` checks the environment confirmation
 * on it first).
 *
 * @example
 * ```ts
 * import { applyInSession, openSession } from "./session.ts";
 * // await using s = await openSession(options); await applyInSession(s, options);
 * ```
 */
export async function applyInSession(
  s: Session,
  options: ApplyOptions,
): Promise<AppliedPlan> {
  let planned = options.plan;
  let sha = options.planSha256;
  if (!planned) {
    const fresh = await planSession(s, false);
    planned = fresh.plan;
    sha = fresh.sha256;
  }
  sha ??= sealPlan(planned).sha256;
  const authority = options.plan ? await verifyAuthority(s, options.plan, sha) : null;
  const credentials = authority?.credentials ?? null;
  if (options.plan && planned.format === 5 && planned.source_sha256 === s.sourceSha256) {
    // a plan from outside carries review, not authority: it does only what the project says
    // (a plan of other sources is refused as stale by applyPlan, PLAN_STALE_SOURCE)
    verifyPlanBindsProject(planned, {
      project: s.project,
      compiled: s.compiled,
      connectors: () => compileConnectors(s.project.manifest),
    });
  }
  if (
    options.plan && authority?.pending === false && !authority.committed &&
    planned.blockers.length === 0
  ) {
    // an ACL removed since the plan blocks before the first mutation (runner_acls.ts)
    await recheckRunnerAcls(
      s.kafka,
      s.project.manifest.kafkaSecurity,
      planned,
      s.project.manifest.kafka.bootstrapHost,
    );
  }
  const result = await applyPlan(
    sessionContext(s, options),
    planned,
    sha,
    options.operationId,
  );
  return {
    ...result,
    plan: planned,
    ...(credentials?.changed ? { runner_client_changed: credentials.evidence } : {}),
  };
}

/** What a caller adds to a session's ports to run a journey in it. */
export type JourneyOptions = Pick<
  RuntimeContext,
  "onProgress" | "signal" | "readyTimeoutMs" | "extraLabels" | "breakStaleLock"
>;

/**
 * The runtime context of a journey run in session `s`: its ports (the endpoints' too), store,
 * clock and identities, with the caller's progress listener, cancel signal, ready bound, labels
 * and stale-lock break. The one place a session becomes a journey's context.
 *
 * @example
 * ```ts
 * import { openSession, sessionContext } from "./session.ts";
 * // await using s = await openSession(options); const ctx = sessionContext(s, options);
 * ```
 */
export function sessionContext(s: Session, o: JourneyOptions): RuntimeContext {
  return {
    docker: s.docker,
    // a set's instances are created, read and continued on their endpoints
    dockerAt: s.dockerAt,
    kafka: s.kafka,
    connect: s.connect,
    store: s.store,
    actor: s.actor,
    bootstrapInternal: s.project.manifest.kafka.bootstrapInternal,
    plansDir: s.plansDir,
    sourceSha256: s.sourceSha256,
    onProgress: o.onProgress,
    signal: o.signal,
    readyTimeoutMs: o.readyTimeoutMs,
    extraLabels: o.extraLabels,
    breakStaleLock: o.breakStaleLock,
    clock: s.clock,
    uuids: s.uuids,
  };
}

/**
 * A plan from outside acts only under this store's keyed seal (`key_seal.ts`), and with the
 * runner credentials it bound (`runner_credentials.ts`): a change refuses to start an operation
 * (`PLAN_KAFKA_CREDENTIALS_CHANGED`), before anything is written; the operation pending from this
 * plan goes on with the current ones, the change said (a warning) and returned as evidence.
 */
async function verifyAuthority(
  s: Session,
  plan: Plan,
  sha256: string,
): Promise<{ pending: boolean; committed: boolean; credentials: RunnerCredentialsCheck | null }> {
  const snap = await s.store.load();
  const pending = snap.control?.opened.intent.reviewed_plan_sha256 ?? null;
  const key = await s.store.sealKey();
  verifyPlanAuthority(plan, sha256, pending, key);
  // a plan an operation already committed starts nothing: applied again it is the verified
  // no-op (or its precise refusal) the router answers, whatever the credentials or ACLs are now
  const committed = commitOfPlan(snap.history.events, sha256) !== null;
  return {
    pending: pending === sha256,
    committed,
    credentials: committed
      ? null
      : await checkSessionCredentials(s, plan, pending === sha256, key, snap),
  };
}

/**
 * Compare the runner credentials `plan` bound with the session's (`runner_credentials.ts`):
 * refused when `pending` is false; otherwise a change is warned about, naming the operation.
 *
 * @example
 * ```ts
 * import { checkSessionCredentials } from "./session.ts";
 * // const check = await checkSessionCredentials(s, plan, true); // check?.changed
 * ```
 */
export async function checkSessionCredentials(
  s: Session,
  plan: Plan,
  pending: boolean,
  key?: Awaited<ReturnType<StateStore["sealKey"]>>,
  snap?: StateSnapshot,
): Promise<RunnerCredentialsCheck | null> {
  if (!plan.runner_client_binding) return null;
  const file = await s.runner.file();
  const check = checkRunnerCredentials(
    plan.runner_client_binding,
    file?.bytes ?? null,
    key ?? await s.store.sealKey(),
    pending,
  );
  if (check?.changed) {
    const operation = (snap ?? await s.store.load()).control?.opened.operation_id ?? null;
    s.logger.warn(credentialsChangedLine(operation));
  }
  return check;
}
