/**
 * Fault injection through real process death. {@link runFaultJourney} runs the installed CLI
 * (`bin/sluice apply --plan FILE`) in a separate OS process with one fault point armed, checks
 * that the process died by SIGKILL at that point, and then — each step a fresh process —
 * learns the operation ID and any stale lock from `state show`, diagnoses with
 * `state runner-status` and continues with `state resume` (breaking a stale local lock
 * explicitly, by its lock ID) until the operation completes or a precise blocker is reported.
 *
 * Faults that only fire during a resume (the inventory's resume-only sites) need an
 * interrupted operation first: the apply dies at {@link PRE_RESUME_FAULT}, the first resume
 * worker carries the fault, and the next resume continues. A fault at `journal.intent:before`
 * leaves no operation: the plan is still current, so the same plan file is applied again.
 *
 * {@link runApplyAgainJourney} (create, connector, runner removal; a day-two command) continues
 * with the same command again; {@link runOperatorJourney} kills the apply at {@link PRE_OPERATOR_FAULT} and arms the
 * operator's decision (`state accept-retention-loss`, `state abandon`), continued by the same
 * decision again and, after an acceptance, by `state resume`.
 *
 * Every command is recorded in a Jepsen-style history: an `invoke` entry when it starts and
 * one `ok` / `fail` / `info` entry when it ends (`info` for a process death or an unknown
 * outcome, whose effect is indeterminate).
 *
 * @example
 * ```ts
 * import { runFaultJourney } from "./faults.ts";
 * // const j = await runFaultJourney({ projectDir, planPath, boundary: "docker.remove_old", side: "after" });
 * // j.outcome === "completed"
 * ```
 * @module
 */
import {
  type OperatorDecision,
  PRE_OPERATOR_FAULT,
  PRE_RESUME_FAULT,
  resumeOnlySites,
} from "../lib/protocol/inventory.ts";
import type { StateView } from "../mod.ts";
import { docker } from "./docker.ts";
import { runWorker } from "./worker.ts";
import type { WorkerResult } from "./worker.ts";

/** One entry of a Jepsen-style history. */
export interface HistoryEntry {
  process: string;
  type: "invoke" | "ok" | "fail" | "info";
  f: string;
  value: unknown;
  time: string;
}

/** The break of a dead worker's local lock (`state runner-status --break-stale-lock` crosses it). */
export const LOCAL_BREAK_SITE = "lock.local.break";

/** Sites crossed only by `state resume` (from the fault inventory). */
export const RESUME_ONLY: ReadonlySet<string> = resumeOnlySites();

export { PRE_OPERATOR_FAULT, PRE_RESUME_FAULT };

/** What one journey did. */
export interface FaultJourney {
  fault: string | null;
  /** The armed fault point fired and the worker died by SIGKILL there. */
  faultFired: boolean;
  operationId: string | null;
  outcome: "completed" | "blocked" | "failed";
  blockers: Array<{ code: string; message: string }>;
  /** Lock IDs of stale locks broken explicitly with --break-stale-lock. */
  brokenLocks: string[];
  /** Every worker process, in order. */
  workers: WorkerResult[];
  /** `state show` views taken while no worker was running. */
  shows: Array<StateShowView | null>;
  /** `state runner-status` reports. */
  statuses: unknown[];
  history: HistoryEntry[];
}

/** Options of {@link runFaultJourney}. */
export interface FaultJourneyOptions {
  projectDir: string;
  planPath: string;
  /** The fault point; null for a disruption run (no fault armed, see `duringFirst`). */
  boundary: string | null;
  side: "before" | "after" | null;
  /** Runs while the first apply worker runs (a disruption: restart a broker, drop a session). */
  duringFirst?: (journey: FaultJourney) => Promise<void>;
  /** Environment for every worker (the PostgreSQL DSN variable). */
  env?: Record<string, string>;
  /** Called once while the killed worker is dead, before anything is resumed. */
  whileDead?: (journey: FaultJourney) => Promise<void>;
  /** Called after every worker death (e.g. to sample committed offsets). */
  afterDeath?: (journey: FaultJourney, view: StateShowView | null) => Promise<void>;
  /** Upper bound on resume attempts (default 6). */
  maxResumes?: number;
  /** Kill the first apply worker with SIGKILL this long after its start (a seeded random kill). */
  killFirstAfterMs?: number;
  /** Pass `--openlineage FILE` to every apply and resume worker. */
  openlineage?: string;
  /**
   * After a harness kill (`killFirstAfterMs`) with no pending operation: the ID of this plan's
   * operation if it was already finalized, or null when none was recorded (the plan is then
   * applied again). Default: the operation label of the project's running candidate.
   */
  finalizedOperation?: () => Promise<string | null>;
}

/**
 * The parts of `state show`'s JSON the journey reads: the SDK's own view type, so a field the
 * CLI renames breaks this file's type check instead of a probe at run time.
 */
export type StateShowView = Pick<StateView, "lock" | "ownership" | "pending_operation" | "history">;

/** A journey before its first worker. */
function newJourney(fault: string | null): FaultJourney {
  return {
    fault,
    faultFired: false,
    operationId: null,
    outcome: "failed",
    blockers: [],
    brokenLocks: [],
    workers: [],
    shows: [],
    statuses: [],
    history: [],
  };
}

/**
 * A journey's workers: `call` runs one command of the installed CLI in a fresh process (armed
 * or not) and records it in the journey's history — `invoke`, then `ok`, `fail`, or `info` for
 * a death or an unknown outcome; `show` runs `state show` and learns the pending operation.
 */
function journeyWorkers(
  j: FaultJourney,
  projectDir: string,
  env: Record<string, string> | undefined,
  options: { extraArgs?: (f: string) => string[]; killFirstAfterMs?: number } = {},
) {
  let n = 0;
  const call = async (f: string, args: string[], armed: string | null) => {
    const proc = `worker-${++n}`;
    j.history.push({
      process: proc,
      type: "invoke",
      f,
      value: { args, fault: armed },
      time: new Date().toISOString(),
    });
    const r = await runWorker(["-o", "json", ...args, ...(options.extraArgs?.(f) ?? [])], {
      fault: armed,
      env,
      killAfterMs: n === 1 ? options.killFirstAfterMs : undefined,
    });
    r.process = proc;
    j.workers.push(r);
    const died = r.signal !== null;
    const unknown = r.code === 6;
    j.history.push({
      process: proc,
      type: r.code === 0 ? "ok" : died || unknown ? "info" : "fail",
      f,
      value: {
        exit: r.code,
        signal: r.signal,
        fired: r.fired,
        pid: r.pid,
        killed_by: r.killedBy,
        timed_out: r.timedOut,
        data: summarize(r.json?.data),
        errors: r.json?.errors?.map((e) => ({ code: e.code, message: e.message })) ?? [],
        stderr_tail: r.json ? undefined : r.stderr.slice(-600),
      },
      time: r.endedAt,
    });
    return r;
  };
  const show = async (): Promise<StateShowView | null> => {
    const r = await call("state-show", ["state", "show", "--project", projectDir], null);
    const v = r.code === 0 ? (r.json?.data as StateShowView) : null;
    j.shows.push(v);
    if (v?.pending_operation) j.operationId = v.pending_operation.operation_id;
    return v;
  };
  return { call, show };
}

/** Run the whole journey for one fault point. */
export async function runFaultJourney(o: FaultJourneyOptions): Promise<FaultJourney> {
  const fault = o.boundary !== null ? `${o.boundary}:${o.side}` : null;
  const j = newJourney(fault);
  const { call, show } = journeyWorkers(j, o.projectDir, o.env, {
    // the replacement's lineage goes to the file the case checks
    extraArgs: (f) =>
      o.openlineage && (f === "apply" || f === "resume") ? ["--openlineage", o.openlineage] : [],
    killFirstAfterMs: o.killFirstAfterMs,
  });
  const staleLock = staleLockOf;
  const afterDeath = async () => {
    const v = await show();
    await o.afterDeath?.(j, v);
    return v;
  };

  const applyArgs = ["apply", "--project", o.projectDir, "--plan", o.planPath];
  const resumeOnly = o.boundary !== null && RESUME_ONLY.has(o.boundary);
  // the deployed generation's operation: a death that leaves it the running one, with nothing
  // pending, recorded no operation of this plan
  const deployedOperation = await candidateOperation(o.projectDir);
  const firstCall = call("apply", applyArgs, resumeOnly ? PRE_RESUME_FAULT : fault);
  if (o.duringFirst) await o.duringFirst(j);
  const first = await firstCall;
  if (first.code === 0) {
    // completed in one go: with a fault armed, the point was never reached
    j.outcome = "completed";
    j.operationId = operationIdOf(first);
    return j;
  }
  if (first.timedOut) {
    // a harness timeout is a failed run, never a fired fault
    j.outcome = "failed";
    j.blockers = [{ code: "HARNESS_TIMEOUT", message: "the first worker outlived its timeout" }];
    return j;
  }
  if (fault !== null && first.signal !== "SIGKILL") {
    // the armed point was never reached and the worker ended another way
    j.outcome = first.code === 4 ? "blocked" : "failed";
    j.blockers = first.json?.errors?.map((e) => ({ code: e.code, message: e.message })) ?? [];
    return j;
  }
  if (!resumeOnly && fault !== null) j.faultFired = first.killedAtFault;
  j.operationId = operationIdOf(first);
  let view = await afterDeath();
  await o.whileDead?.(j);

  let finalized: string | null = null;
  if (!view?.pending_operation && first.killedBy === "harness" && !operationIdOf(first)) {
    finalized = await (o.finalizedOperation ?? (() => candidateOperation(o.projectDir)))();
  }
  const noOperationYet = !view?.pending_operation && (
    (o.boundary === "journal.intent" && o.side === "before") ||
    // a death before the intent was durable (the lock's acquisition, the state layer's `begin`
    // writes): nothing is pending and the deployed generation still runs
    (first.killedBy !== "harness" && !operationIdOf(first) && deployedOperation !== null &&
      await candidateOperation(o.projectDir) === deployedOperation) ||
    // a death at a random time before the intent: nothing names an operation of this plan
    (first.killedBy === "harness" && !operationIdOf(first) && finalized === null)
  );
  if (noOperationYet) {
    // no operation was recorded: the plan is still current, apply it again (no fault)
    const lock = staleLock(view);
    if (lock.length) {
      // `apply` takes no --break-stale-lock: break the dead worker's lock explicitly through
      // `state runner-status`, naming a fresh operation ID. It breaks the named stale lock
      // first, then refuses the unknown operation (exit 4, BLOCKED_NO_PENDING_OPERATION): the
      // break is read back from the state, not from the exit status
      await call("runner-status", [
        "state",
        "runner-status",
        "--project",
        o.projectDir,
        "--plan",
        o.planPath,
        "--operation-id",
        crypto.randomUUID(),
        "--break-stale-lock",
        lock[0],
      ], null);
      if (!staleLock(await show()).includes(lock[0])) j.brokenLocks.push(lock[0]);
    }
    const again = await call("apply", applyArgs, null);
    view = await show();
    j.operationId ??= operationIdOf(again);
    j.outcome = again.code === 0 ? "completed" : again.code === 4 ? "blocked" : "failed";
    j.blockers = again.json?.errors?.map((e) => ({ code: e.code, message: e.message })) ?? [];
    return j;
  }
  if (!view?.pending_operation) {
    // finalized before the death: no pending control names the operation any more. Its ID is
    // the generation label Docker wrote atomically on the candidate; completion is then
    // verified from the receipt through the public commands
    j.operationId ??= operationIdOf(first) ?? finalized ?? await candidateOperation(o.projectDir);
  }
  if (!j.operationId) {
    j.outcome = "failed";
    j.blockers = [{ code: "HARNESS_NO_OPERATION", message: "no operation ID could be learned" }];
    return j;
  }

  return await resumeToEnd(j, { call, show, afterDeath }, {
    projectDir: o.projectDir,
    planPath: o.planPath,
    lock: staleLock(view),
    armed: resumeOnly ? fault : null,
    maxResumes: o.maxResumes,
  });
}

/** A journey's worker runners (see `journeyWorkers`). */
type Workers = Pick<ReturnType<typeof journeyWorkers>, "call" | "show"> & {
  /** `state show` after a death, then the caller's sampling. */
  afterDeath: () => Promise<StateShowView | null>;
};

/** The stale lock to break, if the view reports one (as a list: none or one lock ID). */
function staleLockOf(v: StateShowView | null): string[] {
  return v?.lock.held && v.lock.stale && v.lock.holder ? [v.lock.holder.lock_id] : [];
}

/**
 * Continue the journey's pending operation (`j.operationId`) with the public commands, each a
 * fresh process: `state runner-status` (breaking a stale lock explicitly, by its ID), then
 * `state resume` until it completes (exit 0), reports a precise blocker (exit 4), fails
 * otherwise, or `maxResumes` attempts are spent. `armed`: the fault the first resume carries.
 */
async function resumeToEnd(
  j: FaultJourney,
  w: Workers,
  o: {
    projectDir: string;
    planPath: string;
    lock: string[];
    armed: string | null;
    maxResumes?: number;
  },
): Promise<FaultJourney> {
  const { call, show, afterDeath } = w;
  const staleLock = staleLockOf;
  const opArgs = (cmd: "runner-status" | "resume", breakLock: string[]) => [
    "state",
    cmd,
    "--project",
    o.projectDir,
    "--plan",
    o.planPath,
    "--operation-id",
    j.operationId!,
    ...(breakLock.length ? ["--break-stale-lock", breakLock[0]] : []),
  ];
  let lock = o.lock;
  let armed = o.armed;
  // the break of the dead worker's lock is crossed by `state runner-status --break-stale-lock`:
  // that process carries a break's fault, and the same command again (breaking what is still
  // stale) continues
  const breakArmed = armed !== null && armed.startsWith(`${LOCAL_BREAK_SITE}:`) && lock.length > 0
    ? armed
    : null;
  if (breakArmed) armed = null;
  let status = await call("runner-status", opArgs("runner-status", lock), breakArmed);
  if (breakArmed && status.signal === "SIGKILL") {
    j.faultFired = status.killedAtFault;
    const still = staleLock(await afterDeath());
    // killed after its unlink: the dead worker's lock was broken, explicitly by its ID
    if (!still.includes(lock[0])) j.brokenLocks.push(lock[0]);
    lock = still;
    status = await call("runner-status", opArgs("runner-status", lock), null);
  }
  if (status.code === 0) {
    j.statuses.push(status.json?.data);
    if (lock.length) j.brokenLocks.push(lock[0]);
    lock = [];
  }

  // an unknown outcome (6) may be a worker that is still finishing its last call: retry
  for (let attempt = 0; attempt < (o.maxResumes ?? 6); attempt++) {
    const r = await call("resume", opArgs("resume", lock), armed);
    if (lock.length && r.code !== 5) j.brokenLocks.push(lock[0]);
    lock = [];
    if (r.timedOut) {
      j.outcome = "failed";
      j.blockers = [{ code: "HARNESS_TIMEOUT", message: `${r.process} outlived its timeout` }];
      return j;
    }
    if (armed) {
      if (r.signal === "SIGKILL") j.faultFired = r.killedAtFault;
      armed = null;
    }
    if (r.code === 0) {
      j.outcome = "completed";
      const s = await call("runner-status", opArgs("runner-status", []), null);
      if (s.code === 0) j.statuses.push(s.json?.data);
      return j;
    }
    if (r.code === 4) {
      j.outcome = "blocked";
      j.blockers = r.json?.errors?.map((e) => ({ code: e.code, message: e.message })) ?? [];
      return j;
    }
    // a death, an unknown outcome (6), a timeout (4 without blockers is not possible: 4 is
    // returned above) or a held lock (5): look again, then retry
    const v = r.signal ? await afterDeath() : await show();
    lock = staleLock(v);
    if (r.code !== 137 && r.code !== 6 && r.code !== 5 && r.code !== 1) {
      j.outcome = "failed";
      j.blockers = r.json?.errors?.map((e) => ({ code: e.code, message: e.message })) ?? [];
      return j;
    }
  }
  j.outcome = "failed";
  j.blockers = [{ code: "HARNESS_RESUME_LIMIT", message: "the operation did not complete" }];
  return j;
}

/** The operation ID label of the project's running candidate (`sluice.operation-id`). */
async function candidateOperation(projectDir: string): Promise<string | null> {
  const manifest = await Deno.readTextFile(`${projectDir}/sluice.yaml`);
  const project = /^project: (\S+)$/m.exec(manifest)?.[1];
  if (!project) return null;
  const filters = JSON.stringify({ label: [`sluice.project=${project}`], status: ["running"] });
  const list = await docker().listContainers({ filters });
  const ids = [...new Set(list.map((c) => c.Labels["sluice.operation-id"]).filter(Boolean))];
  return ids.length === 1 ? ids[0] : null;
}

function operationIdOf(r: WorkerResult): string | null {
  const d = r.json?.data as { operation_id?: string } | null | undefined;
  if (d?.operation_id) return d.operation_id;
  const e = r.json?.errors?.[0]?.evidence as { result?: { operation_id?: string } } | undefined;
  return e?.result?.operation_id ?? null;
}

/** Keep a history entry small: drop observations and receipts, keep outcomes. */
function summarize(data: unknown): unknown {
  if (!data || typeof data !== "object") return data ?? null;
  const d = data as Record<string, unknown>;
  const keep = [
    "operation_id",
    "committed",
    "outcome",
    "last_boundary",
    "blockers",
    "serial",
    "state",
    "next",
    "incidents",
    "resumes",
    "lock",
    "pending_operation",
    "noop",
    "sha256",
  ];
  const out: Record<string, unknown> = {};
  for (const k of keep) if (k in d) out[k] = d[k];
  if (Array.isArray(d.checkpoints)) {
    out.checkpoints = (d.checkpoints as Array<{ name: string }>).map((c) => c.name);
  }
  if (d.ownership && typeof d.ownership === "object") {
    out.serial = (d.ownership as { serial: number }).serial;
  }
  return out;
}

/** Options of {@link runApplyAgainJourney}. */
export interface ApplyAgainOptions {
  projectDir: string;
  /** The plan file: written by the first `plan --out` when `armPlan`, else already written. */
  planPath: string;
  /** The fault point `site:side`. */
  fault: string;
  /**
   * Arm `plan --out` (the first command on a fresh project, which creates the store) instead
   * of the apply; the plan is then written again unarmed before the apply.
   */
  armPlan?: boolean;
  /** Environment for every worker (the PostgreSQL DSN variable, secrets). */
  env?: Record<string, string>;
  /** Called after every worker death, before anything is run again. */
  afterDeath?: (journey: FaultJourney, view: StateShowView | null) => Promise<void>;
  /** Upper bound on repeated applies (default 6). */
  maxApplies?: number;
  /**
   * The armed command and its repetition, instead of `apply --plan` (a day-two command:
   * `restart MODEL`, `skip-record MODEL ...`); `--break-stale-lock ID` is appended when a dead
   * worker's lock is stale.
   */
  command?: { f: string; args: string[] };
}

/**
 * The create, connector and runner-removal journeys — and the day-two commands (`command`): the
 * armed process (`apply --plan`, `plan --out` for the store's creation, or the day-two
 * command) dies by SIGKILL at its site; then, each step a fresh process, `state show`
 * learns the pending operation and any stale lock, and the same command runs again —
 * breaking a dead worker's stale lock explicitly, by its lock ID (`--break-stale-lock`) — until
 * it exits 0 or reports a precise blocker (exit 4).
 */
export async function runApplyAgainJourney(o: ApplyAgainOptions): Promise<FaultJourney> {
  const j = newJourney(o.fault);
  const { call, show } = journeyWorkers(j, o.projectDir, o.env);
  const staleLock = (v: StateShowView | null): string | null =>
    v?.lock.held && v.lock.stale && v.lock.holder ? v.lock.holder.lock_id : null;
  const errors = (r: WorkerResult) =>
    r.json?.errors?.map((e) => ({ code: e.code, message: e.message })) ?? [];
  const planArgs = ["plan", "--project", o.projectDir, "--out", o.planPath];
  const applyArgs = o.command?.args ?? ["apply", "--project", o.projectDir, "--plan", o.planPath];
  const f = o.command?.f ?? "apply";

  const first = await call(o.armPlan ? "plan" : f, o.armPlan ? planArgs : applyArgs, o.fault);
  if (first.timedOut) {
    j.blockers = [{ code: "HARNESS_TIMEOUT", message: "the armed worker outlived its timeout" }];
    return j;
  }
  if (first.signal !== "SIGKILL") {
    // the armed point was never reached: the process ended another way
    j.outcome = first.code === 0 ? "completed" : first.code === 4 ? "blocked" : "failed";
    j.operationId = operationIdOf(first);
    j.blockers = errors(first);
    return j;
  }
  j.faultFired = first.killedAtFault;
  let view = await show();
  await o.afterDeath?.(j, view);
  let lock = staleLock(view);
  if (o.armPlan) {
    // the store's creation died: the first command again (unarmed) writes the plan
    const again = await call("plan", planArgs, null);
    if (again.code !== 0) {
      j.outcome = again.code === 4 ? "blocked" : "failed";
      j.blockers = errors(again);
      return j;
    }
    view = await show();
    lock = staleLock(view);
  }
  for (let attempt = 0; attempt < (o.maxApplies ?? 6); attempt++) {
    const r = await call(f, [...applyArgs, ...(lock ? ["--break-stale-lock", lock] : [])], null);
    if (lock && r.code !== 5) j.brokenLocks.push(lock);
    lock = null;
    j.operationId = operationIdOf(r) ?? j.operationId;
    if (r.timedOut) {
      j.blockers = [{ code: "HARNESS_TIMEOUT", message: `${r.process} outlived its timeout` }];
      return j;
    }
    if (r.code === 0) {
      j.outcome = "completed";
      return j;
    }
    if (r.code === 4) {
      j.outcome = "blocked";
      j.blockers = errors(r);
      return j;
    }
    // an unknown outcome (6) or a held lock (5): look again, then retry
    view = await show();
    lock = staleLock(view);
    if (r.code !== 6 && r.code !== 5 && r.code !== 1) {
      j.blockers = errors(r);
      return j;
    }
  }
  j.blockers = [{ code: "HARNESS_APPLY_LIMIT", message: "the operation did not complete" }];
  return j;
}

/** Options of {@link runOperatorJourney}. */
export interface OperatorJourneyOptions {
  projectDir: string;
  /** The reviewed replacement plan the apply runs (and `accept-retention-loss` names). */
  planPath: string;
  /** The case's fault point `site:side`, armed on the first decision. */
  fault: string;
  /** The operator's command the site is crossed by. */
  decision: OperatorDecision;
  /** Where the apply dies first, leaving a stopped operation ({@link PRE_OPERATOR_FAULT}). */
  preFault: string;
  /** The operator's reason (recorded in the audit). */
  reason: string;
  /** Environment for every worker (the PostgreSQL DSN variable). */
  env?: Record<string, string>;
  /** Called after every worker death, before anything is run again. */
  afterDeath?: (journey: FaultJourney, view: StateShowView | null) => Promise<void>;
  /** Called once while the apply is dead, before the decision (produce, delete records). */
  whileDead?: (journey: FaultJourney) => Promise<void>;
  /** Called once the decision answered exit 0, before any resume (read what it moved). */
  afterDecision?: (journey: FaultJourney) => Promise<void>;
  /** Upper bound on decision attempts and on resume attempts (default 6 each). */
  maxAttempts?: number;
}

/**
 * The operator journey: `apply --plan` dies at `preFault` (a stopped operation), then — each
 * step a fresh process — `state show` learns the pending operation and any stale lock, the
 * operator's decision (`state accept-retention-loss --plan FILE`, or `state abandon`, with a
 * reason) runs armed at the case's site and dies there by SIGKILL, and the same decision runs
 * again (breaking a dead worker's stale lock explicitly, by its lock ID) until it answers
 * exit 0 or a precise blocker. An accepted retention loss is then continued by
 * `state runner-status` and `state resume`, as an operator would (an acceptance killed after
 * its move answers exit 0 again, `already_moved`); an abandonment ends there.
 */
export async function runOperatorJourney(o: OperatorJourneyOptions): Promise<FaultJourney> {
  const j = newJourney(o.fault);
  const { call, show } = journeyWorkers(j, o.projectDir, o.env);
  const afterDeath = async () => {
    const v = await show();
    await o.afterDeath?.(j, v);
    return v;
  };
  const errors = (r: WorkerResult) =>
    r.json?.errors?.map((e) => ({ code: e.code, message: e.message })) ?? [];
  const max = o.maxAttempts ?? 6;

  const first = await call(
    "apply",
    ["apply", "--project", o.projectDir, "--plan", o.planPath],
    o.preFault,
  );
  if (first.timedOut) {
    j.blockers = [{ code: "HARNESS_TIMEOUT", message: "the apply outlived its timeout" }];
    return j;
  }
  if (first.signal !== "SIGKILL") {
    // the stopped state was never reached: the apply ended another way
    j.outcome = first.code === 0 ? "completed" : first.code === 4 ? "blocked" : "failed";
    j.operationId = operationIdOf(first);
    j.blockers = errors(first);
    return j;
  }
  let view = await afterDeath();
  await o.whileDead?.(j);
  j.operationId = view?.pending_operation?.operation_id ?? operationIdOf(first);
  if (!j.operationId) {
    j.blockers = [{
      code: "HARNESS_NO_OPERATION",
      message: "no pending operation after the apply",
    }];
    return j;
  }
  const decide = (breakLock: string[]) => [
    "state",
    o.decision,
    "--project",
    o.projectDir,
    ...(o.decision === "accept-retention-loss" ? ["--plan", o.planPath] : []),
    "--operation-id",
    j.operationId!,
    "--reason",
    o.reason,
    ...(breakLock.length ? ["--break-stale-lock", breakLock[0]] : []),
  ];
  let lock = staleLockOf(view);
  let armed: string | null = o.fault;
  let decided = false;
  for (let attempt = 0; attempt < max && !decided; attempt++) {
    const r = await call(o.decision, decide(lock), armed);
    if (lock.length && r.code !== 5) j.brokenLocks.push(lock[0]);
    lock = [];
    if (armed) {
      if (r.signal === "SIGKILL") j.faultFired = r.killedAtFault;
      armed = null;
    }
    if (r.timedOut) {
      j.blockers = [{ code: "HARNESS_TIMEOUT", message: `${r.process} outlived its timeout` }];
      return j;
    }
    if (r.code === 0) {
      decided = true;
      break;
    }
    if (r.code === 4) {
      j.outcome = "blocked";
      j.blockers = errors(r);
      return j;
    }
    // a death, an unknown outcome (6) or a held lock (5): look again, then decide again
    view = r.signal ? await afterDeath() : await show();
    lock = staleLockOf(view);
    if (r.code !== 137 && r.code !== 6 && r.code !== 5 && r.code !== 1) {
      j.blockers = errors(r);
      return j;
    }
  }
  if (!decided) {
    j.blockers = [{ code: "HARNESS_DECISION_LIMIT", message: "the decision did not complete" }];
    return j;
  }
  if (o.decision === "abandon") {
    j.outcome = "completed";
    return j;
  }
  await o.afterDecision?.(j);
  view = await show();
  return await resumeToEnd(j, { call, show, afterDeath }, {
    projectDir: o.projectDir,
    planPath: o.planPath,
    lock: staleLockOf(view),
    armed: null,
    maxResumes: max,
  });
}
