/**
 * The SDK's user journeys over a project directory: {@link observe}, {@link plan} and
 * {@link apply}. Each opens what it needs (project, state store, Docker and Kafka adapters),
 * returns a typed result, prints nothing, and closes what it opened.
 *
 * @example
 * ```ts
 * import { apply, plan } from "./session.ts";
 * const p = await plan({ dir: "./orders" });
 * if (p.plan.blockers.length === 0) await apply({ dir: "./orders", plan: p.plan, planSha256: p.sha256 });
 * ```
 * @module
 */
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { SluiceError } from "../errors.ts";
import { compile } from "../project/compile.ts";
import type { CompileResult } from "../project/compile.ts";
import { loadProject } from "../project/load.ts";
import type { Project } from "../project/load.ts";
import { openStateStore } from "../state/open.ts";
import type { StateStore } from "../state/store.ts";
import { dockerodePort } from "../providers/docker/dockerode.ts";
import type { DockerPort } from "../providers/docker/port.ts";
import { platformaticKafka } from "../providers/kafka/platformatic.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import type { Plan } from "../plan/plan.ts";
import { planProject } from "../plan/plan.ts";
import { sealPlan } from "../plan/plan_file.ts";
import { projectSourceSha256 } from "../plan/source_hash.ts";
import { applyPlan, targetOf } from "./apply.ts";
import type { ApplyResult } from "./apply.ts";
import { observeRunners } from "./observer.ts";
import type { ProjectObservation } from "../validation/observation.ts";
import {
  type Clock,
  isoNow,
  RANDOM_UUIDS,
  type RuntimeDeps,
  SYSTEM_CLOCK,
  type UuidSource,
} from "./deps.ts";
import { observeConsumers } from "../review/consumers.ts";
import type { ConnectPort } from "../providers/connect/port.ts";
import { restConnect } from "../providers/connect/rest.ts";
import type { ConnectorsObservation } from "../validation/connector_observation.ts";
import { connectorSetup } from "./connector_setup.ts";
import { observeConnectors } from "./connector_observer.ts";

/**
 * Where the project is and which environment to use; the ports, clock and UUID source default
 * to the real ones ({@link RuntimeDeps}).
 */
export interface ProjectOptions extends RuntimeDeps {
  /** Project directory (default "."). */
  dir?: string;
  /** Environment (required when the manifest declares environments). */
  environment?: string | null;
  /** Who acts (default `$USER@host`). */
  actor?: string;
  /** Progress callback: one call per step. */
  progress?: (step: string, detail: string) => void;
  /** Labels added to every container and volume created (e.g. a test run's label). */
  extraLabels?: Record<string, string>;
}

/** An opened project with its adapters; close it when done. */
export interface OpenedProject {
  project: Project;
  compiled: CompileResult;
  store: StateStore;
  docker: DockerPort;
  kafka: KafkaPort;
  /** The Connect port of a declared cluster alias (created on first use). */
  connect: (cluster: string) => ConnectPort;
  sourceSha256: string;
  plansDir: string;
  actor: string;
  clock: Clock;
  uuids: UuidSource;
  close(): Promise<void>;
}

/** Default actor name: user@host. */
export function defaultActor(): string {
  return `${Deno.env.get("USER") ?? "unknown"}@${hostname()}`;
}

/** Load, compile and open a project's state store and adapters. */
export async function openProject(options: ProjectOptions = {}): Promise<OpenedProject> {
  const dir = resolve(options.dir ?? ".");
  const project = await loadProject(dir, { environment: options.environment ?? null });
  const compiled = compile(project);
  const m = project.manifest;
  const clock = options.clock ?? SYSTEM_CLOCK;
  // the store stamps its records with the same clock as the journeys
  const engine = { clock: () => new Date(clock.now()) };
  let store: StateStore;
  if (options.store) {
    store = options.store;
  } else if (m.state.backend === "local") {
    store = openStateStore({
      backend: "local",
      dir: resolve(dir, m.state.dir),
      project: m.project,
      environment: m.environment,
    }, engine);
  } else {
    const url = Deno.env.get(m.state.dsnEnv);
    if (!url) {
      throw new SluiceError(
        "ENV_STATE_DSN_MISSING",
        `the manifest reads the PostgreSQL DSN from $${m.state.dsnEnv}, which is not set`,
      );
    }
    store = openStateStore({
      backend: "postgres",
      url,
      project: m.project,
      environment: m.environment,
    }, engine);
  }
  await store.init();
  const docker = options.docker ?? dockerodePort();
  const kafka = options.kafka ?? platformaticKafka(m.kafka.bootstrapHost);
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
        options.connect?.({ alias, restHost: decl.restHost }) ?? restConnect(decl.restHost),
      );
    }
    return connectPorts.get(alias)!;
  };
  return {
    project,
    compiled,
    store,
    docker,
    kafka,
    connect,
    sourceSha256: projectSourceSha256(project),
    plansDir: join(dir, ".sluice", "runtime", "plans"),
    actor: options.actor ?? defaultActor(),
    clock,
    uuids: options.uuids ?? RANDOM_UUIDS,
    async close() {
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
export async function observe(options: ProjectOptions = {}): Promise<ProjectObservation> {
  const p = await openProject(options);
  try {
    const obs = await observeRunners(p, p.compiled.artifacts.map((a) => targetOf(a.artifact)));
    const connectors = await observeProjectConnectors(
      p,
      (await p.store.load()).ownership?.document ?? null,
    );
    return connectors ? { ...obs, connectors } : obs;
  } finally {
    await p.close();
  }
}

/** The project's connectors observed (null when it declares, removes and owns none). */
async function observeProjectConnectors(
  p: OpenedProject,
  ownership: Parameters<typeof connectorSetup>[1],
): Promise<ConnectorsObservation | null> {
  const setup = connectorSetup(p.project.manifest, ownership);
  if (!setup) return null;
  return await observeConnectors(
    { connect: p.connect, hashKey: setup.hashKey, clock: p.clock },
    setup.targets,
  );
}

/** Options of {@link plan}. */
export interface PlanOptions extends ProjectOptions {
  /** Plan from state alone, without contacting Docker or Kafka. */
  offline?: boolean;
  /** Plan only these models (`plan --select`): creates and no-ops, never a replacement. */
  select?: string[] | null;
}

/** A computed plan with its sealed bytes (ready to write with `writePlanFile`). */
export interface PlanResult {
  plan: Plan;
  bytes: Uint8Array;
  sha256: string;
  /** The observation the plan was computed from (null offline). */
  observation: ProjectObservation | null;
  /** The connector observation the plan was computed from (null offline or without any). */
  connectors?: ConnectorsObservation | null;
}

/** Compute a plan for a project. Writes nothing. */
export async function plan(options: PlanOptions = {}): Promise<PlanResult> {
  const p = await openProject(options);
  try {
    return await planOpened(p, options.offline ?? false, options.select ?? null);
  } finally {
    await p.close();
  }
}

/** Compute a plan for an already opened project. */
export async function planOpened(
  p: OpenedProject,
  offline: boolean,
  select: string[] | null = null,
): Promise<PlanResult> {
  const snap = await p.store.load();
  let observation: ProjectObservation | null = null;
  let topics: Map<string, { id: string; partitions: number }> | null = null;
  // the plan's impact section: live groups on the output topics (read-only)
  let live: Awaited<ReturnType<typeof observeConsumers>> = { consumers: null };
  if (!offline) {
    live = await observeConsumers(p.kafka, p.project.models.map((m) => m.decl.outputTopic));
    observation = await observeRunners(p, p.compiled.artifacts.map((a) => targetOf(a.artifact)));
    const names = [
      ...p.project.manifest.sources.map((s) => s.topic),
      ...p.project.models.map((m) => m.decl.outputTopic),
    ];
    const d = await p.kafka.describe([...new Set(names)]);
    topics = new Map([...d.topics].map(([n, t]) => [n, { id: t.id, partitions: t.partitions }]));
  }
  // connectors: desired (compiled, fingerprinted), removals, owned, observed by exact reads
  const setup = connectorSetup(p.project.manifest, snap.ownership?.document ?? null);
  const connectorObs = setup && !offline
    ? await observeConnectors(
      { connect: p.connect, hashKey: setup.hashKey, clock: p.clock },
      setup.targets,
    )
    : null;
  const computed = planProject({
    project: p.project,
    compiled: p.compiled,
    state: {
      ownership: snap.ownership?.document ?? null,
      checksum: snap.ownership?.checksum ?? null,
      identity: snap.identity,
    },
    observation,
    topics,
    now: isoNow(p.clock),
    sourceSha256: p.sourceSha256,
    select,
    consumers: live.consumers,
    consumersUnobserved: live.unobserved,
    connectors: setup
      ? {
        desired: setup.desired,
        removals: setup.removals,
        owned: setup.owned,
        observation: connectorObs,
      }
      : null,
  });
  const { bytes, sha256 } = sealPlan(computed);
  return {
    plan: computed,
    bytes,
    sha256,
    observation,
    ...(connectorObs ? { connectors: connectorObs } : {}),
  };
}

/** Options of {@link apply}. */
export interface ApplyOptions extends ProjectOptions {
  /** A reviewed plan (from `readPlanFile`); without it, apply plans online first. */
  plan?: Plan;
  planSha256?: string;
  /** How long a runner may take to report RUNNING. */
  readyTimeoutMs?: number;
  /** Remove a stale local lock left by a dead process first (explicit; never silent). */
  breakStaleLock?: string;
}

/** Apply a plan (or a fresh online plan) to a project. */
export async function apply(options: ApplyOptions = {}): Promise<ApplyResult & { plan: Plan }> {
  const p = await openProject(options);
  try {
    let planned = options.plan;
    let sha = options.planSha256;
    if (!planned) {
      const fresh = await planOpened(p, false);
      planned = fresh.plan;
      sha = fresh.sha256;
    }
    const result = await applyPlan(
      {
        docker: p.docker,
        kafka: p.kafka,
        connect: p.connect,
        store: p.store,
        actor: p.actor,
        bootstrapInternal: p.project.manifest.kafka.bootstrapInternal,
        plansDir: p.plansDir,
        sourceSha256: p.sourceSha256,
        progress: options.progress,
        readyTimeoutMs: options.readyTimeoutMs,
        extraLabels: options.extraLabels,
        breakStaleLock: options.breakStaleLock,
        clock: p.clock,
        uuids: p.uuids,
      },
      planned,
      sha ?? sealPlan(planned).sha256,
    );
    return { ...result, plan: planned };
  } finally {
    await p.close();
  }
}
