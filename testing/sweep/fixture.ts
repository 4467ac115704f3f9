/**
 * One sweep case's world: a temporary directory (on `/dev/shm` where it exists: a SIGKILL
 * loses no page cache, so tmpfs keeps the same crash semantics at a fraction of the fsync
 * cost) holding a file-backed fake world and the orders starter project pointed at it, with
 * its state on the local backend or in a fresh PostgreSQL database of the suite's server.
 *
 * {@link deployStarter} brings the starter to the point a replacement starts from, in this
 * process through the SDK on the same world: the first runner created and processing, records
 * produced, the filter changed and the reviewed format-6 plan written.
 *
 * @example
 * ```ts
 * import { openCaseWorld } from "./fixture.ts";
 * // await using cw = await openCaseWorld({ backend: "local", seed: "case-1" });
 * // const d = await deployStarter(cw);
 * ```
 * @module
 */
import pg from "pg";
import { starterProject, type TestProject } from "../../harness/project.ts";
import {
  declareSinkRemoved,
  type PipelineProject,
  pipelineProject,
} from "../../harness/pipeline.ts";
import { writePlanFile } from "../../lib/plan/plan_file.ts";
import { apply, plan } from "../../lib/runtime/session.ts";
import type { RuntimeDeps } from "../../lib/runtime/deps.ts";
import { createFakeWorld, type FakeWorld } from "../fakes/fake_world.ts";
import type { WorldConfig } from "../fakes/world.ts";
import { PG_URL } from "../state/pg_env.ts";
import { committedOf, readState, readWorldFile, type StateLocation } from "./reads.ts";

/** The starter's filter, and the one the reviewed plan replaces it with. */
export const OLD_WHERE = "amount >= 100 AND paid = TRUE";
export const NEW_WHERE = "amount >= 200 AND paid = TRUE";

/** An order record of the starter's input. */
export interface Order {
  order_id: string;
  amount: number;
  paid: boolean;
  customer: string | null;
}

/** The predicates, written independently of sluice's evaluator. */
export const OLD_PREDICATE = (o: Order) => o.amount >= 100 && o.paid;
export const NEW_PREDICATE = (o: Order) => o.amount >= 200 && o.paid;

/**
 * Orders with the given amounts (every fourth unpaid).
 *
 * @example
 * ```ts
 * import { orders } from "./fixture.ts";
 * console.log(orders("a", [50, 150]).length); // 2
 * ```
 */
export function orders(prefix: string, amounts: number[]): Order[] {
  return amounts.map((amount, i) => ({
    order_id: `${prefix}-${i}`,
    amount,
    paid: i % 4 !== 3,
    customer: null,
  }));
}

/** A case's world, project and state. Dispose it to remove them. */
export interface CaseWorld extends AsyncDisposable {
  root: string;
  worldPath: string;
  /** The parent's handle on the world (same file, same clock and IDs as the children). */
  world: FakeWorld;
  project: TestProject;
  /** The pipeline project, when the case world was opened with `pipeline`. */
  pipeline: PipelineProject | null;
  backend: "local" | "postgres";
  /** Environment for every child process (the PostgreSQL DSN variable). */
  env: Record<string, string>;
  state: StateLocation;
  applicationId: string;
  /** The ports, clock and IDs of the world, for in-process SDK calls. */
  deps: RuntimeDeps;
  /** Every order produced so far, by key. */
  produced: Map<string, Order>;
  produce(records: Order[]): void;
}

/** Options of {@link openCaseWorld}. */
export interface CaseWorldOptions {
  backend: "local" | "postgres";
  seed: string;
  /** Keep the directory and database (for a failing case under investigation). */
  keep?: boolean;
  /** How the simulated processes behave in world time (startup, close, session timeout). */
  config?: Partial<WorldConfig>;
  /** The pipeline project (the starter with connectors on the world's Connect cluster). */
  pipeline?: boolean;
}

let dsnCounter = 0;

async function pgAdmin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

async function tempRoot(): Promise<string> {
  let parent: string | undefined;
  try {
    if (Deno.statSync("/dev/shm").isDirectory) parent = "/dev/shm";
  } catch {
    parent = undefined;
  }
  return await Deno.makeTempDir({ prefix: "sluice-sweep-", dir: parent });
}

/**
 * A fresh world and starter project for one case (nothing deployed yet).
 *
 * @example
 * ```ts
 * import { openCaseWorld } from "./fixture.ts";
 * // await using cw = await openCaseWorld({ backend: "postgres", seed: "x" });
 * ```
 */
export async function openCaseWorld(o: CaseWorldOptions): Promise<CaseWorld> {
  const root = await tempRoot();
  const worldPath = `${root}/world.json`;
  const world = createFakeWorld({ seed: o.seed, path: worldPath, config: o.config });
  const env: Record<string, string> = {};
  let database: string | null = null;
  let dsnVar: string | undefined;
  if (o.backend === "postgres") {
    database = `sluice_sweep_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
    await pgAdmin(`CREATE DATABASE ${database}`);
    const u = new URL(PG_URL);
    u.pathname = `/${database}`;
    dsnVar = `SLUICE_SWEEP_DSN_${Deno.pid}_${++dsnCounter}`;
    env[dsnVar] = u.toString();
    // the in-process SDK reads the DSN from this process's environment, as the CLI does
    Deno.env.set(dsnVar, u.toString());
  }
  const pipeline = o.pipeline
    ? await pipelineProject({
      image: world.env.runnerImage,
      connect: {
        restHost: world.env.connect!.restHost,
        restInternal: world.env.connect!.restInternal,
        dataDirContainer: "/data",
        dataDirHost: null,
      },
      bootstrapHost: world.env.bootstrapHost,
      bootstrapInternal: world.env.bootstrapInternal,
      network: world.env.network,
      stateDsnEnv: dsnVar,
    })
    : null;
  const project = pipeline ?? await starterProject({
    runId: "sweep",
    bootstrapHost: world.env.bootstrapHost,
    bootstrapInternal: world.env.bootstrapInternal,
    network: world.env.network,
    clusterId: world.env.clusterId,
    pgUrl: "",
    brokerContainerId: "",
    labels: {},
    connect: null,
  }, { image: world.env.runnerImage, stateDsnEnv: dsnVar, parentDir: root });
  const state: StateLocation = o.backend === "local"
    ? { backend: "local", dir: `${project.dir}/.sluice/state`, project: project.name }
    : { backend: "postgres", url: env[dsnVar!], project: project.name };
  const kafka = world.kafka(world.env.bootstrapHost);
  const produced = new Map<string, Order>();
  return {
    root,
    worldPath,
    world,
    project,
    pipeline,
    backend: o.backend,
    env,
    state,
    applicationId: `sluice-${project.name}-eligible_orders`,
    deps: {
      docker: world.docker,
      kafka,
      connect: (cluster) => world.connect(cluster.restHost),
      clock: world.clock,
      uuids: world.ids,
    },
    produced,
    produce(records) {
      world.control.produce(
        project.inputTopic,
        records.map((r) => ({ key: r.order_id, value: JSON.stringify(r) })),
      );
      for (const r of records) produced.set(r.order_id, r);
    },
    async [Symbol.asyncDispose]() {
      await kafka.close();
      if (dsnVar) Deno.env.delete(dsnVar);
      if (o.keep) return;
      if (database) {
        await pgAdmin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
      }
      await Deno.remove(root, { recursive: true }).catch(() => {});
      if (pipeline) await Deno.remove(pipeline.dir, { recursive: true }).catch(() => {});
    },
  };
}

/** What a deployed starter looked like before the replacement. */
export interface Deployed {
  /** The reviewed format-6 plan file (the new filter). */
  planPath: string;
  oldContainerId: string;
  volumeInstance: string;
  /** The last mutation-log sequence number of the setup. */
  setupLogSeq: number;
}

/**
 * Create the starter's runner, process records, change the filter and write the reviewed plan —
 * in this process, through the SDK, on the case's world.
 *
 * @example
 * ```ts
 * import { deployStarter, openCaseWorld } from "./fixture.ts";
 * // const d = await deployStarter(await openCaseWorld({ backend: "local", seed: "s" }));
 * ```
 */
export async function deployStarter(cw: CaseWorld): Promise<Deployed> {
  const created = await plan({ dir: cw.project.dir, ...cw.deps });
  if (created.plan.blockers.length > 0) {
    throw new Error(`setup: the create plan is blocked: ${JSON.stringify(created.plan.blockers)}`);
  }
  const c = await apply({
    dir: cw.project.dir,
    plan: created.plan,
    planSha256: created.sha256,
    ...cw.deps,
  });
  const runner = c.runners[0];
  cw.produce(orders("a", [50, 150, 250, 120, 300, 90, 210, 180]));
  await cw.project.setPredicate(NEW_WHERE);
  const reviewed = await plan({ dir: cw.project.dir, ...cw.deps });
  if (reviewed.plan.format !== 6 || reviewed.plan.blockers.length > 0) {
    throw new Error(
      `setup: expected a reviewed format-6 plan, got format ${reviewed.plan.format} with ${
        JSON.stringify(reviewed.plan.blockers)
      }`,
    );
  }
  const planPath = `${cw.project.dir}/replace.plan.json`;
  await writePlanFile(planPath, reviewed.plan);
  return {
    planPath,
    oldContainerId: runner.container_id,
    volumeInstance: runner.volume_instance,
    setupLogSeq: cw.world.control.mutations().at(-1)?.seq ?? 0,
  };
}

/** What a connector case's plan does to the pipeline's connectors. */
export type ConnectorScenario = "create" | "update" | "remove";

/**
 * The scenario that crosses a connector-journey site: a removal for the delete, an update for
 * the config write and the commit, else the creation of both connectors.
 *
 * @example
 * ```ts
 * import { connectorScenario } from "./fixture.ts";
 * console.log(connectorScenario("connect.delete_connector")); // remove
 * ```
 */
export function connectorScenario(site: string): ConnectorScenario {
  if (site === "connect.delete_connector") return "remove";
  if (site === "connect.update_connector_config" || site === "state.commit_connectors") {
    return "update";
  }
  return "create";
}

/**
 * Deploy the pipeline (for `create`, its runtime first without connectors), make the
 * scenario's connector change in the manifest and write its reviewed plan — in this process,
 * through the SDK, on the case's world.
 *
 * @example
 * ```ts
 * import { openCaseWorld, prepareConnector } from "./fixture.ts";
 * // const ch = await prepareConnector(await openCaseWorld({ ..., pipeline: true }), "update");
 * ```
 */
export async function prepareConnector(
  cw: CaseWorld,
  scenario: ConnectorScenario,
): Promise<ConnectorChange> {
  const p = cw.pipeline;
  if (!p) throw new Error("setup: a connector case needs the pipeline project");
  const manifest = `${p.dir}/sluice.yaml`;
  const full = await Deno.readTextFile(manifest);
  const marker = "\n# Kafka Connect:";
  if (scenario === "create") await p.editManifest((t) => t.slice(0, t.indexOf(marker)) + "\n");
  const deploy = async () => {
    const r = await plan({ dir: p.dir, ...cw.deps });
    if (r.plan.blockers.length > 0) {
      throw new Error(`setup: the plan is blocked: ${JSON.stringify(r.plan.blockers)}`);
    }
    return r;
  };
  const first = await deploy();
  await apply({ dir: p.dir, plan: first.plan, planSha256: first.sha256, ...cw.deps });
  if (scenario === "create") await p.editManifest(() => full);
  if (scenario === "update") {
    await p.editManifest((t) => t.replace(`${p.name}-eligible.jsonl`, `${p.name}-v2.jsonl`));
  }
  if (scenario === "remove") await p.editManifest(declareSinkRemoved(p));
  const change = await deploy();
  if (change.plan.actions.length === 0) throw new Error(`setup: ${scenario} planned nothing`);
  const planPath = `${p.dir}/change.plan.json`;
  await writePlanFile(planPath, change.plan);
  const state = await readState(cw.state);
  const both = [p.sourceConnector, p.sinkConnector];
  return {
    planPath,
    expected: {
      create: both.map((c) => `createConnector ${c}`),
      update: [`updateConnectorConfig ${p.sinkConnector}`],
      remove: [`deleteConnector ${p.sinkConnector}`],
    }[scenario],
    held: scenario === "remove" ? [p.sourceConnector] : both,
    setupLogSeq: cw.world.control.mutations().at(-1)?.seq ?? 0,
    setupSerial: (state.ownership?.serial as number | undefined) ?? 0,
    async nextPlan() {
      const r = await plan({ dir: p.dir, ...cw.deps });
      return { actions: r.plan.actions.length, blockers: r.plan.blockers.length };
    },
  };
}

/** A removal case's prepared change: the plan and what the setup left. */
export interface RemovalChange {
  /** The reviewed removal plan (`remove_runner` of the case's model only). */
  planPath: string;
  /** The bound container (the case's model's first generation). */
  containerId: string;
  volumeInstance: string;
  /** The model that stays running. */
  spareApplicationId: string;
  /** The group's committed offsets when the plan was written (lower bounds of the kept ones). */
  committedAtPlan: Record<string, bigint>;
  setupLogSeq: number;
  setupSerial: number;
  /** The next plan's action and blocker counts (a no-op after the removal). */
  nextPlan(): Promise<{ actions: number; blockers: number }>;
}

/** The spare model of a removal case (it keeps running while the starter's model is removed). */
export const SPARE_MODEL = "spare_orders";

/**
 * Deploy the starter with a second model ({@link SPARE_MODEL}, same SQL), process records, then
 * drop the starter's model from `models:`, declare its removal (`lifecycle.runner_removals`) and
 * write the reviewed removal plan — in this process, through the SDK, on the case's world.
 *
 * @example
 * ```ts
 * import { openCaseWorld, prepareRemoval } from "./fixture.ts";
 * // const ch = await prepareRemoval(await openCaseWorld({ backend: "local", seed: "s" }));
 * ```
 */
export async function prepareRemoval(cw: CaseWorld): Promise<RemovalChange> {
  const p = cw.project;
  await p.editManifest((t) =>
    t.replace(
      "models:\n",
      `models:\n  ${SPARE_MODEL}:\n    sql: models/eligible_orders.sql\n    output:\n      topic: spare_${p.outputTopic}\n`,
    )
  );
  const created = await plan({ dir: p.dir, ...cw.deps });
  if (created.plan.blockers.length > 0) {
    throw new Error(`setup: the create plan is blocked: ${JSON.stringify(created.plan.blockers)}`);
  }
  const c = await apply({
    dir: p.dir,
    plan: created.plan,
    planSha256: created.sha256,
    ...cw.deps,
  });
  const runner = c.runners.find((r) => r.application_id === cw.applicationId);
  const spare = c.runners.find((r) => r.application_id !== cw.applicationId);
  if (!runner || !spare) throw new Error(`setup: expected two runners, got ${c.runners.length}`);
  cw.produce(orders("a", [50, 150, 250, 120, 300, 90, 210, 180]));
  await p.editManifest((t) =>
    t.replace(/^ {2}eligible_orders:\n {4}sql: .*\n {4}output:\n {6}topic: .*\n/m, "")
      .replace(/consumes: eligible_orders$/m, `consumes: ${SPARE_MODEL}`) +
    "lifecycle:\n  runner_removals:\n    - model: eligible_orders\n"
  );
  cw.world.control.snapshot();
  const removal = await plan({ dir: p.dir, ...cw.deps });
  if (
    removal.plan.blockers.length > 0 || removal.plan.actions.length !== 1 ||
    removal.plan.actions[0].type !== "remove_runner"
  ) {
    throw new Error(
      `setup: expected one remove_runner, got ${
        JSON.stringify(removal.plan.actions.map((a) => a.type))
      } with ${JSON.stringify(removal.plan.blockers)}`,
    );
  }
  const planPath = `${p.dir}/remove.plan.json`;
  await writePlanFile(planPath, removal.plan);
  const state = await readState(cw.state);
  return {
    planPath,
    containerId: runner.container_id,
    volumeInstance: runner.volume_instance,
    spareApplicationId: spare.application_id,
    committedAtPlan: committedOf(
      readWorldFile(cw.worldPath),
      cw.applicationId,
      p.inputTopic,
    ),
    setupLogSeq: cw.world.control.mutations().at(-1)?.seq ?? 0,
    setupSerial: (state.ownership?.serial as number | undefined) ?? 0,
    async nextPlan() {
      const r = await plan({ dir: p.dir, ...cw.deps });
      return { actions: r.plan.actions.length, blockers: r.plan.blockers.length };
    },
  };
}

/** What a connector case changes (testing/sweep/sweep.ts prepares it). */
export interface ConnectorChange {
  planPath: string;
  /** The Connect mutations the plan makes, each exactly once (`<op> <connector>`). */
  expected: string[];
  /** The connectors held (and owned) after the change. */
  held: string[];
  /** The last mutation-log sequence number of the setup, and its ownership serial. */
  setupLogSeq: number;
  setupSerial: number;
  /** The next plan after completion: no action, no blocker (SDK, in the parent). */
  nextPlan(): Promise<{ actions: number; blockers: number }>;
}
