/**
 * Test support for the unit tests of the replacement journeys (drive, execute, resume,
 * runner-status, finalize) on the fakes: a deployed starter with its reviewed plan on a fake
 * world, with the real state store of either backend (local files, or a fresh PostgreSQL
 * database on the suite's server), plus the options every journey takes and a recorder of the
 * fault sites a call crosses. Everything runs in this process (no fault is armed).
 *
 * @example
 * ```ts
 * import { replacementCase } from "./replacement_case.ts";
 * // await using rc = await replacementCase("local");
 * // const r = await executeReviewed(rc.options());
 * ```
 * @module
 */
import { onCrossing } from "../../lib/fault/site.ts";
import { openStateStore } from "../../lib/state/open.ts";
import type { StateSnapshot, StateStore } from "../../lib/state/store.ts";
import { isoNow } from "../../lib/runtime/deps.ts";
import type { DriveContext } from "../../lib/runtime/replacement/drive.ts";
import { replacementEvents } from "../../lib/runtime/replacement/finalize.ts";
import type { CandidateExpectation } from "../../lib/runtime/replacement/candidate.ts";
import {
  type OperationOptions,
  reverifyReviewed,
  type ReviewedOperation,
  type ReviewedOptions,
} from "../../lib/runtime/replacement/operation.ts";
import type { WorldConfig } from "../fakes/world.ts";
import { type CaseWorld, type Deployed, deployStarter, openCaseWorld } from "../sweep/fixture.ts";
import { readState, readWorldFile, type StoredState } from "../sweep/reads.ts";
import type { World } from "../fakes/world.ts";

/** The two state backends every journey test runs on. */
export const BACKENDS = ["local", "postgres"] as const;

/** A deployed starter with its reviewed plan, ready for a replacement. */
export interface ReplacementCase extends AsyncDisposable {
  cw: CaseWorld;
  d: Deployed;
  /** The options of `executeReviewed` (bounded waits in world time). */
  options(extra?: Partial<ReviewedOptions>): ReviewedOptions;
  /** The options of `runnerStatus` / `resumeReviewed` for an operation. */
  operation(operationId: string, extra?: Partial<OperationOptions>): OperationOptions;
  /** The stored state documents, read directly. */
  state(): Promise<StoredState>;
  /** The world document, read directly. */
  world(): World;
  /** The Docker and Kafka mutations since the deployment (op and key, in order). */
  mutations(): Array<{ op: string; key: string }>;
  /** The candidate container name of an operation. */
  candidateName(operationId: string): string;
  /** The case's state store (the real one), stamping with the world clock; close it. */
  openStore(): Promise<StateStore>;
  /** Change how the simulated processes behave from now on (e.g. a slow start). */
  configure(config: Partial<WorldConfig>): void;
}

/**
 * Deploy the starter on a fresh fake world with `backend` state and write the reviewed plan.
 *
 * @example
 * ```ts
 * import { replacementCase } from "./replacement_case.ts";
 * // await using rc = await replacementCase("postgres");
 * // rc.configure({ runner_close_ms: 600_000 });
 * ```
 */
export async function replacementCase(backend: "local" | "postgres"): Promise<ReplacementCase> {
  const cw = await openCaseWorld({ backend, seed: `journey-${crypto.randomUUID()}` });
  let d: Deployed;
  try {
    d = await deployStarter(cw);
  } catch (e) {
    await cw[Symbol.asyncDispose]();
    throw e;
  }
  const base = (): ReviewedOptions => ({
    dir: cw.project.dir,
    planPath: d.planPath,
    ...cw.deps,
    closeTimeoutMs: 60_000,
    readyTimeoutMs: 120_000,
  });
  return {
    cw,
    d,
    options: (extra = {}) => ({ ...base(), ...extra }),
    operation: (operationId, extra = {}) => ({ ...base(), operationId, ...extra }),
    state: () => readState(cw.state),
    world: () => readWorldFile(cw.worldPath),
    mutations: () =>
      readWorldFile(cw.worldPath).log.filter((m) =>
        m.seq > d.setupLogSeq && (m.by === "docker" || m.by === "kafka")
      ).map((m) => ({ op: m.op, key: m.key })),
    candidateName: (operationId) => `${cw.applicationId}.op-${operationId}.a0`,
    openStore: () => openCaseStore(cw),
    configure: (config) =>
      cw.world.store.transact((w) => {
        w.config = { ...w.config, ...config };
      }),
    [Symbol.asyncDispose]: () => cw[Symbol.asyncDispose](),
  };
}

/**
 * A case world's state store (the real one, on its backend), stamping with the world clock;
 * the caller closes it.
 *
 * @example
 * ```ts
 * import { openCaseStore } from "./replacement_case.ts";
 * // const store = await openCaseStore(cw); try { ... } finally { await store.close(); }
 * ```
 */
export async function openCaseStore(cw: CaseWorld): Promise<StateStore> {
  const at = cw.state;
  const store = openStateStore(
    at.backend === "local"
      ? { backend: "local", dir: at.dir, project: at.project, environment: null }
      : { backend: "postgres", url: at.url, project: at.project, environment: null },
    { clock: () => new Date(cw.world.clock.now()) },
  );
  await store.init();
  return store;
}

/**
 * Run `fn` and return its result with the fault sites it crossed (`site:side`, in order).
 *
 * @example
 * ```ts
 * import { crossed } from "./replacement_case.ts";
 * // const { value, sites } = await crossed(() => executeReviewed(options));
 * ```
 */
export async function crossed<T>(fn: () => Promise<T>): Promise<{ value: T; sites: string[] }> {
  const sites: string[] = [];
  const stop = onCrossing((c) => {
    if (c.side === "before") sites.push(c.site.name);
  });
  try {
    return { value: await fn(), sites };
  } finally {
    stop();
  }
}

/**
 * A view of a state store that fails one method once, after (`lose`) or instead of (`fail`)
 * the real call: a lost acknowledgement, or a write that never reached the store.
 *
 * @example
 * ```ts
 * import { failingStore } from "./replacement_case.ts";
 * // const store = failingStore(real, "recordCheckpoint", (a) => a[1].name === "action_completed", "lose");
 * ```
 */
export function failingStore<S extends object>(
  store: S,
  method: string,
  when: (args: unknown[]) => boolean,
  effect: "lose" | "fail",
): S {
  let armed = true;
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      if (prop !== method) return v.bind(target);
      return async (...args: unknown[]) => {
        if (!armed || !when(args)) return await v.apply(target, args);
        armed = false;
        if (effect === "fail") throw new Error(`injected: ${method} never reached the store`);
        await v.apply(target, args);
        throw new Error(`injected: the acknowledgement of ${method} was lost`);
      };
    },
  });
}

/** An operation whose intent is recorded, with the context `drive` runs it in. */
export interface BegunDrive {
  operationId: string;
  /** The snapshot just after the intent. */
  snap: StateSnapshot;
  ctx: DriveContext;
  candidate: CandidateExpectation;
}

/**
 * Record the intent of a replacement for the opened operation (as `executeReviewed` does) and
 * build drive's context as `driveThenFinalize` does — the plan and project checked again before
 * each transition (`reverifyReviewed`) — with `store` in place of the operation's (a failing
 * view) and polls in world time.
 *
 * @example
 * ```ts
 * import { beginDrive } from "./replacement_case.ts";
 * // const b = await beginDrive(rc, op);
 * // const outcome = await drive(b.ctx, b.snap, op.reviewed.action, b.candidate, { resuming: false });
 * ```
 */
export async function beginDrive(
  rc: ReplacementCase,
  op: ReviewedOperation,
  store?: StateStore,
): Promise<BegunDrive> {
  const p = op.project;
  const operationId = p.uuids.uuid();
  const snap = await p.store.beginOperation(await p.store.load(), {
    operation_id: operationId,
    kind: "runner_update",
    project: p.store.project,
    environment: p.store.environment,
    actor: "tester",
    created_at: isoNow(p.clock),
    original_state_checksum: (await p.store.load()).ownership!.checksum,
    reviewed_plan_sha256: op.reviewed.sha256,
    details: { model: op.reviewed.action.model },
  }, [op.reviewed.action]);
  const ctx: DriveContext = {
    operationId,
    events: replacementEvents(op, operationId),
    docker: p.docker,
    kafka: p.kafka,
    store: store ?? p.store,
    clock: p.clock,
    verifyLock: () => p.store.verifyLock(),
    reverify: (s) => reverifyReviewed(op, s, operationId),
    plansDir: p.plansDir,
    closeTimeoutMs: rc.options().closeTimeoutMs,
    readyTimeoutMs: rc.options().readyTimeoutMs,
    // world time: a poll costs no real time, only its observation's CPU
    pollMs: 5_000,
  };
  return { operationId, snap, ctx, candidate: op.candidate(operationId) };
}
