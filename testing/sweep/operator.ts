/**
 * A sweep case's journey and its recovery, each step the real CLI in a fresh process over the
 * case's fake world ({@link fakeCli}), as an operator would run them. What differs between
 * journeys is data, the {@link JourneyScript} each journey's harness (`HARNESSES` in sweep.ts)
 * passes; a journey with none is `apply --plan`, continued by the same `apply --plan` again:
 *
 * - `create`: `plan --out` and `apply --plan` of the create plan;
 * - `replacement`: `apply --plan` of the reviewed plan;
 * - `resume`: `apply --plan` dies at {@link PRE_RESUME_FAULT} first (a site only `state resume`
 *   crosses needs an interrupted operation), then the recovery carries the fault;
 * - `operator`: `apply --plan` dies at {@link PRE_OPERATOR_FAULT} first (the old runner closed,
 *   no candidate yet: a stopped operation), then the operator's decision carries the fault —
 *   `state accept-retention-loss` after retention removed the unprocessed input (the case's
 *   `whileDead`), or `state abandon` ({@link operatorDecision} says which a site needs); the
 *   recovery runs the same decision again while it is still owed, then resumes an accepted
 *   operation;
 * - `connector`: `apply --plan` of a plan with connector changes; the recovery is the same
 *   `apply --plan` again.
 * - `removal`: `apply --plan` of a plan with a runner removal (`lifecycle.runner_removals`); the
 *   recovery is the same `apply --plan` again.
 *
 * The armed site stays armed on every process until one dies there, so the site fires exactly
 * once, in the first command that crosses it. In the lock-loss pass (`c.pass`) the first command
 * that crosses it loses its lock there instead of dying (testing/sweep/lock_loss.ts); the
 * recovery is the same. After a death the recovery is the public one, in
 * fresh processes: `state show` (the pending operation, a stale lock), then for a pending
 * replacement `state runner-status` and `state resume` (a stale local lock broken explicitly
 * with `--break-stale-lock <lock ID>` from `state show`); for a create, or a replacement that
 * never recorded its intent, `apply --plan` again. It stops at completion (exit 0), a blocker
 * (exit 4), any other failure, or after a bounded number of rounds.
 *
 * @example
 * ```ts
 * import { runJourney } from "./operator.ts";
 * // const j = await runJourney(cw, { site: "docker.remove_old", side: "after", ... }, deployed);
 * // j.fired && j.outcome === "completed"
 * ```
 * @module
 */
import { REPLACEMENT_SITES } from "../../lib/protocol/replacement.ts";
import {
  type OperatorDecision,
  operatorDecision,
  PRE_OPERATOR_FAULT,
} from "../../lib/protocol/inventory.ts";
import { fakeCli, type FakeCliResult } from "../fake_cli.ts";
import type { SweepCase, SweepPass } from "./cases.ts";
import type { CaseWorld, Deployed } from "./fixture.ts";
import { type LockLoss, lockLossCli } from "./lock_loss.ts";
import { committedOf, readWorldFile } from "./reads.ts";

/** Where the apply dies when the case's own fault fires only during a resume. */
export const PRE_RESUME_FAULT = `${REPLACEMENT_SITES.actionStarted.name}:after`;

/** Where the apply dies before an operator's decision, and which decision crosses a site. */
export { type OperatorDecision, operatorDecision, PRE_OPERATOR_FAULT };

/** The reason an operator gives (recorded in the audit). */
export const OPERATOR_REASON = "sweep: the operator decides";

/**
 * How the sweep runs one journey's processes, as its harness declares it (the default, `{}`:
 * `apply --plan` of the case's plan, continued by the same `apply --plan` again — a pending
 * predicate replacement by `state runner-status` and `state resume`, whichever the journey).
 */
export interface JourneyScript {
  /**
   * The journey starts on a fresh project with `plan --out` (`create`); a death that left no
   * plan file is planned again by the recovery.
   */
  readonly plans?: boolean;
  /**
   * Where the first `apply --plan` dies before the case's own fault, when the site is crossed
   * only by a later command ({@link PRE_RESUME_FAULT}, {@link PRE_OPERATOR_FAULT}).
   */
  readonly preFault?: string;
  /** The operator's decision that crosses the case's site (`operator`). */
  readonly decision?: (site: string) => OperatorDecision | null;
  /**
   * A replacement's running candidate names the operation to resume even when the state shows
   * none pending (an apply killed before its intent was recorded).
   */
  readonly resumesCandidate?: boolean;
}

/** Upper bound on recovery rounds (show → status → resume, or show → apply). */
const MAX_ROUNDS = 5;

/** One process of the journey. */
export interface Step {
  command: string;
  armed: string | null;
  code: number;
  signal: Deno.Signal | null;
  fired: string | null;
  killedAtFault: boolean;
  timedOut: boolean;
  errors: Array<{ code: string; message: string }>;
  ms: number;
}

/** A committed-offset sample taken while no process ran (after a death). */
export interface OffsetSample {
  after: string;
  offsets: Record<string, bigint>;
}

/** What the journey did and how it ended. */
export interface JourneyRun {
  fault: string;
  /** The armed site fired: a process died by SIGKILL after printing its marker. */
  fired: boolean;
  outcome: "completed" | "blocked" | "failed";
  /** The final command's error codes (blocked or failed). */
  codes: Array<{ code: string; message: string }>;
  operationId: string | null;
  steps: Step[];
  samples: OffsetSample[];
  brokenLocks: string[];
  /** The lock-loss pass: what the process that lost its lock at the site did (else null). */
  lockLoss: LockLoss | null;
}

/** One journey's process runner and its end, over a {@link JourneyRun} it fills. */
export interface JourneyRecorder {
  run: JourneyRun;
  /**
   * Run one process; it carries the case's fault until the fault fired, or `instead`. A death
   * samples the committed offsets. In the lock-loss pass the case's fault is a lock lost at the
   * site ({@link lockLossCli}), not a death; `instead` is still a death.
   */
  call(command: string, args: string[], instead?: string): Promise<FakeCliResult>;
  /**
   * Whether `r` ends the journey: exit 0 (completed), 4 (blocked) or anything but a death, an
   * unknown outcome or a held lock (failed); those three mean "look again".
   */
  finish(r: FakeCliResult): boolean;
}

/**
 * The recorder every sweep journey runs its processes through (`after`: what the journey also
 * reads from each result, once it is recorded; `pass`: what the case's fault is).
 *
 * @example
 * ```ts
 * import { journeyRecorder } from "./operator.ts";
 * // const { run, call, finish } = journeyRecorder(cw, "docker.start_stopped:before");
 * ```
 */
export function journeyRecorder(
  cw: CaseWorld,
  fault: string,
  timeoutMs?: number,
  after?: (command: string, r: FakeCliResult) => void,
  pass: SweepPass = "crash",
): JourneyRecorder {
  const run: JourneyRun = {
    fault,
    fired: false,
    outcome: "failed",
    codes: [],
    operationId: null,
    steps: [],
    samples: [],
    brokenLocks: [],
    lockLoss: null,
  };
  const call = async (
    command: string,
    args: string[],
    instead?: string,
  ): Promise<FakeCliResult> => {
    const armed = instead ?? (run.fired ? null : fault);
    let r: FakeCliResult;
    if (pass === "lock_lost" && armed !== null && armed === fault && instead === undefined) {
      const lost = await lockLossCli(cw, ["-o", "json", ...args], fault, timeoutMs);
      r = lost.result;
      if (lost.loss) {
        run.fired = true;
        run.lockLoss = lost.loss;
      }
    } else {
      r = await fakeCli(cw.worldPath, ["-o", "json", ...args], {
        fault: armed,
        env: cw.env,
        timeoutMs,
      });
    }
    const step: Step = {
      command,
      armed,
      code: r.code,
      signal: r.signal,
      fired: r.fired,
      killedAtFault: r.killedAtFault,
      timedOut: r.timedOut,
      errors: (r.json?.errors ?? []).map((e) => ({ code: e.code, message: e.message })),
      ms: r.ms,
    };
    if (!r.json && r.code !== 0 && r.signal === null) {
      step.errors.push({ code: "NO_JSON", message: r.stderr.slice(-800) });
    }
    run.steps.push(step);
    if (r.killedAtFault && armed === fault) run.fired = true;
    if (r.signal !== null) {
      run.samples.push({
        after: command,
        offsets: committedOf(readWorldFile(cw.worldPath), cw.applicationId, cw.project.inputTopic),
      });
    }
    after?.(command, r);
    return r;
  };
  const finish = (r: FakeCliResult): boolean => {
    if (r.code === 0) {
      run.outcome = "completed";
      run.codes = [];
      return true;
    }
    run.codes = (r.json?.errors ?? []).map((e) => ({ code: e.code, message: e.message }));
    if (r.code === 4) {
      run.outcome = "blocked";
      return true;
    }
    // a death, an unknown outcome or a held lock: look again; anything else is a failure
    if (r.timedOut || ![137, 5, 6].includes(r.code)) {
      run.outcome = "failed";
      if (r.timedOut) run.codes.push({ code: "SWEEP_TIMEOUT", message: `${r.args.join(" ")}` });
      if (run.codes.length === 0) {
        run.codes.push({ code: `EXIT_${r.code}`, message: r.stderr.slice(-800) });
      }
      return true;
    }
    return false;
  };
  return { run, call, finish };
}

interface ShowView {
  lock: { held: boolean; stale: boolean; holder: { lock_id: string } | null };
  pending_operation: { operation_id: string; kind: string } | null;
}

/**
 * Run a case's journey and its recovery (see the module documentation), as its harness's
 * `script` says.
 *
 * @example
 * ```ts
 * import { runJourney } from "./operator.ts";
 * // const j = await runJourney(cw, c, deployed, { script: { resumesCandidate: true } });
 * ```
 */
export async function runJourney(
  cw: CaseWorld,
  c: SweepCase,
  deployed: Pick<Deployed, "planPath"> | null,
  options: { timeoutMs?: number; whileDead?: () => void; script?: JourneyScript } = {},
): Promise<JourneyRun> {
  const script = options.script ?? {};
  let firstDeath = true;
  const { run, call, finish } = journeyRecorder(
    cw,
    `${c.site}:${c.side}`,
    options.timeoutMs,
    (_command, r) => {
      const data = r.json?.data as { operation_id?: string } | null | undefined;
      const evidence = r.json?.errors?.[0]?.evidence as
        | { result?: { operation_id?: string } }
        | undefined;
      // the latest answer that names an operation: an apply whose intent was never recorded
      // (its answer named an ID, `committed: null`) is followed by one that starts another
      run.operationId = data?.operation_id ?? evidence?.result?.operation_id ?? run.operationId;
      if (r.signal !== null && firstDeath) {
        firstDeath = false;
        options.whileDead?.();
      }
    },
    c.pass,
  );
  const dir = cw.project.dir;
  const planPath = deployed?.planPath ?? `${dir}/create.plan.json`;
  const planCreate = () => call("plan --out", ["plan", "--project", dir, "--out", planPath]);
  const applyPlan = (breakLock: string | null, instead?: string) =>
    call("apply --plan", [
      "apply",
      "--project",
      dir,
      "--plan",
      planPath,
      ...(breakLock ? ["--break-stale-lock", breakLock] : []),
    ], instead);
  const operationArgs = (cmd: string, id: string, breakLock: string | null) => [
    "state",
    cmd,
    "--project",
    dir,
    "--plan",
    planPath,
    "--operation-id",
    id,
    ...(breakLock ? ["--break-stale-lock", breakLock] : []),
  ];

  const decision = script.decision?.(c.site) ?? null;
  /** The operator's decision about the pending operation `id` (the documented command). */
  const decide = (id: string, breakLock: string | null) =>
    call(`state ${decision}`, [
      "state",
      decision!,
      "--project",
      dir,
      ...(decision === "accept-retention-loss" ? ["--plan", planPath] : []),
      "--operation-id",
      id,
      "--reason",
      OPERATOR_REASON,
      ...(breakLock ? ["--break-stale-lock", breakLock] : []),
    ]);

  // the journey itself
  if (script.plans) {
    const p = await planCreate();
    if (p.code !== 0 && finish(p)) return run;
    // a plan that died is planned again by the recovery (its file was never written)
    if (p.code === 0 && finish(await applyPlan(null))) return run;
  } else {
    const first = await applyPlan(null, script.preFault);
    if (finish(first)) return run;
  }
  /** The decision is still owed (it has not completed in a process of its own). */
  let owed = decision !== null;

  // the recovery, in fresh processes
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const s = await call("state show", ["state", "show", "--project", dir]);
    if (s.signal !== null) continue; // a read-only command crossed the site: a finding, shown
    if (s.code !== 0) {
      if (s.json?.errors?.[0]?.code === "STATE_NOT_INITIALIZED") {
        // what the message says: initialize the store, then look again
        const init = await call("state init", ["state", "init", "--project", dir]);
        if (init.signal === null && init.code !== 0 && finish(init)) return run;
        continue;
      }
      finish(s);
      run.outcome = "failed";
      return run;
    }
    const view = s.json!.data as ShowView;
    let stale = view.lock.held && view.lock.stale && view.lock.holder
      ? view.lock.holder.lock_id
      : null;
    const pending = view.pending_operation;
    if (pending) run.operationId = pending.operation_id;
    const candidate = candidateOperation(cw);
    const replacementId = pending?.kind === "runner_update"
      ? pending.operation_id
      : script.resumesCandidate
      ? candidate
      : null;
    let r: FakeCliResult;
    // an abandonment is owed until it answers; once its record is made, the same command
    // again answers that it was already recorded (and breaks the dead process's lock)
    const owedId = pending?.operation_id ?? (decision === "abandon" ? run.operationId : null);
    if (decision && owed && owedId) {
      r = await decide(owedId, stale);
      if (stale && r.code !== 5 && r.signal === null) run.brokenLocks.push(stale);
      if (r.code === 0) {
        owed = false;
        if (decision === "abandon") {
          finish(r);
          return run;
        }
        continue;
      }
    } else if (replacementId) {
      run.operationId = replacementId;
      const st = await call(
        "state runner-status",
        operationArgs("runner-status", replacementId, stale),
      );
      if (st.signal !== null) continue;
      if (st.code === 0 && stale) {
        run.brokenLocks.push(stale);
        stale = null;
      }
      r = await call("state resume", operationArgs("resume", replacementId, stale));
      if (stale && r.code !== 5 && r.signal === null) run.brokenLocks.push(stale);
      if (
        decision === "accept-retention-loss" && r.code === 4 &&
        r.json?.errors?.[0]?.code === "BLOCKED_RETENTION_LOSS"
      ) {
        // what the blocker asks for: the operator's decision (again, if it never completed)
        owed = true;
        continue;
      }
    } else {
      if (script.plans && !exists(planPath)) {
        const p = await planCreate();
        if (p.code !== 0) {
          if (finish(p)) return run;
          continue;
        }
      }
      r = await applyPlan(stale);
      if (stale && r.code !== 5 && r.signal === null) run.brokenLocks.push(stale);
    }
    if (finish(r)) return run;
  }
  run.outcome = "failed";
  run.codes.push({
    code: "SWEEP_NOT_CONVERGED",
    message: `no completion or blocker after ${MAX_ROUNDS} recovery rounds`,
  });
  return run;
}

/** The running candidate's operation label, as `docker inspect` shows it (an operator's way). */
function candidateOperation(cw: CaseWorld): string | null {
  const w = readWorldFile(cw.worldPath);
  const ids = new Set(
    Object.values(w.docker.containers)
      .filter((x) =>
        x.labels["sluice.application-id"] === cw.applicationId &&
        x.name.startsWith(`${cw.applicationId}.op-`)
      )
      .map((x) => x.labels["sluice.operation-id"]),
  );
  return ids.size === 1 ? [...ids][0] : null;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
