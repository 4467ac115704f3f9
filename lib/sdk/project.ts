/**
 * The SDK's front door: {@link openProject} gives a {@link SluiceProject}, a handle on one
 * project directory (and environment) with every journey the `sluice` command has — validate,
 * compile, plan (with its review), apply (a reviewed replacement or a create), observe, status,
 * logs, runner-status, resume, diff and the state store's view. Dispose it with `await using`.
 *
 * The handle reads the project from disk at each call, as it is then (a plan and the apply of
 * its file each see the files of their own time; apply verifies the plan against them), with
 * the typed `settings` override given in code layered over the environment's values. The
 * Docker, Kafka and state-store ports it is given are used as they are and never closed by it;
 * those it is not given are the real adapters, created on first use from the manifest (the
 * Kafka client for `kafka.bootstrap_host`, the store `state:` declares) and closed when the
 * handle is disposed. Before each online call the handle compares what its ports were made
 * from with the project as it is then (`lib/sdk/ports.ts`): a port it made for settings that
 * changed is made again, a given one is refused (`USAGE_STALE_PORTS`); no call acts through a
 * client for an old broker, daemon or store. Calls on one handle run one at a time, in order.
 *
 * @example
 * ```ts
 * import { openProject } from "./project.ts";
 * await using project = await openProject({
 *   dir: "./orders",
 *   onProgress: (e) => console.log(e.kind, e.message),
 * });
 * // offline: from the state alone; the default (online) also observes Docker and Kafka
 * const { plan, review } = await project.plan({ offline: true });
 * console.log(review.summary, plan.blockers.length);
 * ```
 * @module
 */
import { resolve } from "node:path";
import { SluiceError } from "../errors.ts";
import { guardInventorySwitch } from "../protocol/inventory.ts";
import type { SettingsOverride } from "../project/settings_override.ts";
import {
  type CompileOutput,
  compileProject,
  validateProject,
  type ValidateResult,
} from "../project/environments.ts";
import {
  checkPlanReviewOptions,
  diff,
  planReview,
  type PlanReviewResult,
} from "../review/journey.ts";
import type { Review } from "../review/review.ts";
import { readPlanFile } from "../plan/plan_file.ts";
import type { RuntimeDeps } from "../runtime/deps.ts";
import { type ProgressListener, SILENT_LOGGER } from "../runtime/progress.ts";
import { executeReviewed } from "../runtime/replacement/execute.ts";
import {
  operationStatus,
  type OperationStatusReport,
  resumeOperation,
} from "../runtime/pending_operation.ts";
import { acceptRetentionLoss, type RetentionResult } from "../runtime/replacement/retention.ts";
import { abandon, type AbandonResult } from "../runtime/abandon.ts";
import { restart, type RestartResult } from "../runtime/restart.ts";
import { acknowledgeDrift, type AcknowledgeDriftResult } from "../runtime/acknowledge_drift.ts";
import { skipRecord, type SkipRecordResult } from "../runtime/skip_record.ts";
import { apply, observe, type SessionOptions } from "../runtime/session.ts";
import { type ProjectStatus, projectStatus } from "../runtime/status.ts";
import { type LogsResult, modelLogs } from "../runtime/logs.ts";
import { checkExtraLabels } from "../runtime/operation_labels.ts";
import type { LogLine } from "../providers/docker/port.ts";
import type { StoreIdentity } from "../state/journal.ts";
import { inspectState, type StateView } from "../state/view.ts";
import { HandlePorts } from "./ports.ts";
import { type ProjectObservation, sdkObservation } from "./observation.ts";
import {
  type ApplyOutcome,
  replacementResult,
  type ResumeOutcome,
  resumeOutcome,
} from "./results.ts";

/**
 * Where the project is, which environment, and what the journeys use from outside: the
 * Docker, Kafka and state-store ports, the clock, the UUID source and the logger (each absent
 * one is the real thing), plus a progress callback.
 */
export interface OpenProjectOptions extends RuntimeDeps {
  /** Project directory (default "."). */
  dir?: string;
  /**
   * Environment, required for every online call when the manifest declares environments.
   * Without one, `validate` checks every declared environment.
   */
  environment?: string | null;
  /**
   * Configuration in code: a typed override of the environment's settings (Kafka addresses and
   * security, Docker endpoint, network, image, state), layered over `sluice.yaml`'s values for
   * the chosen environment and bound into every plan as they are (docs/project-format.md,
   * "Configuration in code"). Its problems carry the manifest's codes, named by key path
   * (`settings.kafka.bootstrap_host`); a secret is only ever named by its variable.
   */
  settings?: SettingsOverride;
  /** Who acts, recorded in intents, locks and audit (default `$USER@host`). */
  actor?: string;
  /** Progress events of apply and resume: each boundary crossed, each action, each wait. */
  onProgress?: ProgressListener;
  /**
   * Labels added to every container and volume sluice creates (e.g. a test run's label). They are
   * recorded in the intent of the operation that starts with them, and every continuation of
   * that operation (`state resume`, `apply --plan` again, from this handle, another one or the
   * CLI) creates with the recorded labels: a continuing handle's own labels are ignored (the
   * recorded ones win; an operation started without them continues without them). Keys in
   * sluice's own namespace (`sluice.*`) are refused: `openProject` rejects with
   * `USAGE_EXTRA_LABELS` (exit 2) and nothing runs.
   */
  extraLabels?: Record<string, string>;
}

/**
 * A project handle (see the module documentation). Dispose it to close what it opened.
 *
 * Every call takes its options inline (camelCase, as JavaScript parameters are): a call's
 * options are read by that call only. Two fields recur: `confirmEnv`, the environment's name
 * repeated where the manifest declares environments, and `breakStaleLock`, a stale lock left by
 * a dead process to remove first (its ID is in the state view).
 */
export interface SluiceProject extends AsyncDisposable {
  /** The absolute project directory. */
  readonly dir: string;
  /** The environment, or null. */
  readonly environment: string | null;
  /** Check the manifest and every model, offline (every environment when none was chosen). */
  validate(options?: { strict?: boolean }): Promise<ValidateResult>;
  /** Compile every model and write its artifact and checksum (default `.sluice/artifacts`). */
  compile(options?: { strict?: boolean; out?: string }): Promise<CompileOutput>;
  /** Compute the plan and its review. Writes and mutates nothing. */
  plan(options?: {
    /** Plan from state alone, without contacting Docker or Kafka. */
    offline?: boolean;
    /** Plan only these models: creates and no-ops, never a replacement. */
    select?: string[] | null;
    /**
     * Preview each changed filter on the last records of its input (read-only, online only):
     * `true` for the defaults, a record count, or bounds (records per model, default 1,000;
     * key+value bytes read per model, default 16 MiB; time per model, default 15 s).
     */
    preview?: boolean | number | { records?: number; maxBytes?: number; timeoutMs?: number };
    /** Also compare with the project at this Git revision (the plan is then offline). */
    base?: string;
    /** The file the plan will be written to, recorded in the review. */
    file?: string | null;
    /**
     * Plan the removal of everything the project owns in the environment (`plan --destroy`):
     * every owned runner taken down, the last one too; what is kept (state volumes, consumer
     * groups with their offsets, topics) is listed in the review. `true`, or
     * `{ deleteData: true }` (`--delete-data`: refused today, `BLOCKED_DESTROY_DATA_DELETION`).
     */
    destroy?: boolean | { deleteData?: boolean };
  }): Promise<PlanReviewResult>;
  /** Apply a plan file (or a fresh online plan). */
  apply(options?: {
    /**
     * A plan file written by `writePlanFile`: a reviewed predicate replacement (plan kind
     * `"replacement"`, format 6) is carried out boundary by boundary, any other plan (kind
     * `"change"`, format 5) by the create journey. Without one, a fresh online plan is applied
     * (never a replacement: those are applied from their file).
     */
    plan?: string;
    /** OpenLineage target of a replacement: an http(s) URL or a file (JSON lines). */
    openlineage?: string;
    /** First remove this stale lock left by a dead process (its ID is in the state view). */
    breakStaleLock?: string;
    /** How long a runner may take to report RUNNING (default 120 s). */
    readyTimeoutMs?: number;
    /** How long the old runner of a replacement may take to close (default 60 s). */
    closeTimeoutMs?: number;
    /**
     * Cancels this apply at its next durable boundary or inside a bounded wait: it throws
     * `CANCELLED` (exit 8) and leaves its operation pending, continued as after any
     * interruption (docs/events.md).
     */
    signal?: AbortSignal;
  }): Promise<ApplyOutcome>;
  /** Observe every runner model, read-only. */
  observe(): Promise<ProjectObservation>;
  /** Verify the state store, then report each model's health and lag. */
  status(): Promise<ProjectStatus>;
  /**
   * Read the log lines of a model's current generation, whatever its container is named; with
   * `follow`, until it stops or `signal` aborts. Read-only.
   */
  logs(model: string, options: {
    /** Keep reading new lines until the container stops or `signal` aborts. */
    follow?: boolean;
    /** Only lines written at or after this RFC 3339 time (`parseSince` reads `10m`, `2h`, ...). */
    since?: string;
    /** Only the last N lines. */
    tail?: number;
    /** Ends a followed read. */
    signal?: AbortSignal;
    /** Each line, as it is read. */
    onLine: (line: LogLine) => void;
  }): Promise<LogsResult>;
  /**
   * Read-only diagnosis of a pending operation of any journey: the next proven step of its
   * table. Grants nothing.
   */
  runnerStatus(operation: {
    /**
     * The plan file the operation was started from: a reviewed replacement's (format 6), or the
     * plan of a create, runner removal or connector change.
     */
    plan: string;
    /** The operation's UUID (in the state view's pending operation, or an apply's result). */
    operationId: string;
    breakStaleLock?: string;
  }): Promise<OperationStatusReport>;
  /**
   * Continue the same operation, of any journey, from its last durable boundary under a new
   * lock: a replacement by its coordinator, any other by its own journey.
   */
  resume(operation: {
    /** The plan file the operation was started from (as for {@link SluiceProject.runnerStatus}). */
    plan: string;
    /** The operation's UUID. */
    operationId: string;
    breakStaleLock?: string;
    confirmEnv?: string;
    /** OpenLineage target for the final outcome. */
    openlineage?: string;
    /** How long the candidate may take to report RUNNING (default 120 s). */
    readyTimeoutMs?: number;
    /** How long the old runner may take to close (default 60 s). */
    closeTimeoutMs?: number;
    /**
     * Cancels this resume at its next durable boundary or inside a bounded wait: it throws
     * `CANCELLED` (exit 8) and the operation stays pending (docs/events.md).
     */
    signal?: AbortSignal;
  }): Promise<ResumeOutcome>;
  /**
   * Record an operator's audited decision that a pending operation can never continue, and free
   * the project. Stops, removes, creates and starts nothing; moves no offset.
   */
  abandon(request: {
    /** The pending operation's UUID. */
    operationId: string;
    /** Why it can never continue (required; recorded in the audit with who and when). */
    reason: string;
    confirmEnv?: string;
    breakStaleLock?: string;
  }): Promise<AbandonResult>;
  /**
   * Record an operator's audited acceptance of a retention loss under a stopped replacement,
   * then move only those positions to the earliest retained; `resume` can then continue.
   */
  acceptRetentionLoss(request: {
    /** The replacement's plan file (format 6). */
    plan: string;
    /** The operation's UUID. */
    operationId: string;
    /** Why the loss is accepted (required; recorded in the audit with who and when). */
    reason: string;
    confirmEnv?: string;
    breakStaleLock?: string;
  }): Promise<RetentionResult>;
  /**
   * Start a runner someone else stopped (`docker stop`, `docker kill`) again: the same owned
   * generation, after checking it is exactly that one, its group Empty (a killed runner's member
   * waited out) and its offsets not moved; the restart is recorded in the audit first. Running
   * it again after a kill finishes it.
   */
  restart(request: {
    /** The model (or its application ID). */
    model: string;
    /** Why (required; recorded in the audit with who and when). */
    reason: string;
    confirmEnv?: string;
    breakStaleLock?: string;
    /** How long to wait for a killed runner's member to leave the group (default 120 s). */
    groupTimeoutMs?: number;
    /** How long the runner may take to report RUNNING after the start (default 120 s). */
    readyTimeoutMs?: number;
    /**
     * A set's instance to start again (default: the lowest-index stopped one); it is checked on
     * its own endpoint, and the set's other running instances may stay in the group.
     */
    instance?: number;
  }): Promise<RestartResult>;
  /**
   * Skip the record a runner stopped at because it cannot decode it (exit 13): only that record,
   * named by partition and offset, only while the group is Empty and its committed offset is
   * still at it; recorded in the audit first, then that one partition's offset + 1, then the
   * runner started again as `restart` does (with `restart`'s request fields). Running it again
   * after a kill finishes it.
   */
  skipRecord(
    request: Omit<Parameters<SluiceProject["restart"]>[0], "instance"> & {
      /** The failing record's partition (as `status` names it). */
      partition: number;
      /** The failing record's offset, decimal (as `status` names it). */
      offset: string;
    },
  ): Promise<SkipRecordResult>;
  /**
   * Accept, on the record, the drift `plan` and `status` report for a model's runner (started
   * outside sluice, or offsets moved while it was stopped): exactly what was found is recorded in
   * the audit (`drift_acknowledged`) and no longer reported; nothing else changes.
   */
  acknowledgeDrift(request: {
    /** The model (or its application ID). */
    model: string;
    /** Why the drift is accepted (required; recorded in the audit with who and when). */
    reason: string;
    confirmEnv?: string;
    breakStaleLock?: string;
  }): Promise<AcknowledgeDriftResult>;
  /** Compare the project at a Git revision with another or the working tree, offline. */
  diff(options: {
    /** The base revision (commit, branch, tag, `HEAD~1`, ...). */
    base: string;
    /** The head revision; the working tree when absent. */
    head?: string | null;
    /** Bounds of every Git call (per call: default 10 s and 16 MiB of output). */
    git?: { timeoutMs: number; maxBytes: number };
  }): Promise<Review>;
  /** The state store's view: ownership, the pending operation, history and the lock. */
  state(): Promise<StateView>;
  /** Create the project's state store (idempotent). */
  initState(): Promise<StoreIdentity>;
  /** Close what the handle opened (the same as disposing it). */
  close(): Promise<void>;
}

/** The options (or request) of one call of {@link SluiceProject}. */
type Options<K extends Exclude<keyof SluiceProject, "dir" | "environment">> = NonNullable<
  Parameters<SluiceProject[K]>[0]
>;

/** The session options of a handle's calls: its ports are always there. */
type HandleDeps = SessionOptions & Required<Pick<SessionOptions, "docker" | "kafka" | "store">>;

/**
 * Open a project handle. Nothing is read or connected yet: each call reads the project, and the
 * ports are created on the first call that needs them. A test-only fault switch set without
 * its permission is refused here (`USAGE_FAULT_SWITCH_NOT_ALLOWED`).
 *
 * @example
 * ```ts
 * import { openProject } from "./project.ts";
 * import { readPlanFile } from "../plan/plan_file.ts";
 * import { planKind } from "./results.ts";
 * await using project = await openProject({ dir: "./orders" });
 * const { plan } = await readPlanFile("replace.plan.json");
 * if (planKind(plan) === "replacement") {
 *   // a reviewed predicate replacement: carried out boundary by boundary
 *   const outcome = await project.apply({ plan: "replace.plan.json" });
 *   if (outcome.kind === "replacement" && outcome.result.outcome !== "completed") {
 *     console.log(outcome.result.commands.resume);
 *   }
 * }
 * ```
 */
export function openProject(options: OpenProjectOptions = {}): Promise<SluiceProject> {
  try {
    // a stray test-only fault switch is refused before anything runs
    guardInventorySwitch();
    // as are extra labels in sluice's namespace (they would be read as sluice's own)
    checkExtraLabels(options.extraLabels);
  } catch (error) {
    return Promise.reject(error);
  }
  return Promise.resolve(new ProjectHandle(options));
}

class ProjectHandle implements SluiceProject {
  readonly dir: string;
  readonly environment: string | null;
  #options: OpenProjectOptions;
  /** Given, or made on first use and made again when their settings change (ports.ts). */
  #ports: HandlePorts;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(options: OpenProjectOptions) {
    this.#options = options;
    this.dir = resolve(options.dir ?? ".");
    this.environment = options.environment ?? null;
    this.#ports = new HandlePorts({
      dir: this.dir,
      environment: this.environment,
      settings: options.settings,
      given: { docker: options.docker, kafka: options.kafka, store: options.store },
      clock: options.clock,
      logger: options.logger,
      env: options.env,
    });
  }

  validate(options: { strict?: boolean } = {}): Promise<ValidateResult> {
    return this.#run(() =>
      validateProject(this.dir, {
        environment: this.environment,
        strict: options.strict,
        settings: this.#options.settings,
      })
    );
  }

  compile(options: { strict?: boolean; out?: string } = {}): Promise<CompileOutput> {
    return this.#run(() =>
      compileProject(this.dir, {
        environment: this.environment,
        strict: options.strict,
        out: options.out,
        settings: this.#options.settings,
      })
    );
  }

  plan(options: Options<"plan"> = {}): Promise<PlanReviewResult> {
    return this.#run(async () => {
      const { destroy: asked, ...rest } = options;
      const destroy = asked ? { deleteData: asked !== true && asked.deleteData === true } : null;
      checkPlanReviewOptions({ ...rest, destroy });
      return await planReview({ ...(await this.#deps()), ...rest, destroy });
    });
  }

  apply(options: Options<"apply"> = {}): Promise<ApplyOutcome> {
    return this.#run(async () => {
      // the plan file is read (and verified) before anything is opened
      const file = options.plan ? await readPlanFile(options.plan) : undefined;
      const deps = await this.#deps();
      // a reviewed replacement (plan kind "replacement": `planKind`) is exactly a format-6 plan
      if (file && file.plan.format === 6) {
        // a reviewed replacement enters the coordinator before any generic mutation path
        const result = await executeReviewed({
          ...deps,
          planPath: options.plan!,
          openlineage: options.openlineage,
          breakStaleLock: options.breakStaleLock,
          readyTimeoutMs: options.readyTimeoutMs,
          closeTimeoutMs: options.closeTimeoutMs,
          signal: eitherSignal(deps.signal, options.signal),
        });
        return { kind: "replacement", result: replacementResult(result) };
      }
      const { plan: _applied, ...result } = await apply({
        ...deps,
        plan: file?.plan,
        planSha256: file?.sha256,
        breakStaleLock: options.breakStaleLock,
        readyTimeoutMs: options.readyTimeoutMs,
        signal: eitherSignal(deps.signal, options.signal),
      });
      return { kind: "change", result, plan_sha256: file?.sha256 ?? null };
    });
  }

  observe(): Promise<ProjectObservation> {
    return this.#online(async (deps) => sdkObservation(await observe(deps)));
  }

  status(): Promise<ProjectStatus> {
    return this.#online((deps) => projectStatus(deps));
  }

  logs(model: string, options: Parameters<SluiceProject["logs"]>[1]): Promise<LogsResult> {
    return this.#online((deps) => modelLogs(deps, model, options));
  }

  runnerStatus(operation: Options<"runnerStatus">): Promise<OperationStatusReport> {
    return this.#online((deps) =>
      operationStatus({
        ...deps,
        planPath: operation.plan,
        operationId: operation.operationId,
        breakStaleLock: operation.breakStaleLock,
      })
    );
  }

  resume(operation: Options<"resume">): Promise<ResumeOutcome> {
    return this.#online(async (deps) =>
      resumeOutcome(
        await resumeOperation({
          ...deps,
          planPath: operation.plan,
          operationId: operation.operationId,
          breakStaleLock: operation.breakStaleLock,
          confirmEnv: operation.confirmEnv,
          openlineage: operation.openlineage,
          readyTimeoutMs: operation.readyTimeoutMs,
          closeTimeoutMs: operation.closeTimeoutMs,
          signal: eitherSignal(deps.signal, operation.signal),
        }),
      )
    );
  }

  abandon(request: Options<"abandon">): Promise<AbandonResult> {
    return this.#online((deps) =>
      abandon({
        ...deps,
        operationId: request.operationId,
        reason: request.reason,
        confirmEnv: request.confirmEnv,
        breakStaleLock: request.breakStaleLock,
      })
    );
  }

  acceptRetentionLoss(request: Options<"acceptRetentionLoss">): Promise<RetentionResult> {
    return this.#online((deps) =>
      acceptRetentionLoss({
        ...deps,
        planPath: request.plan,
        operationId: request.operationId,
        reason: request.reason,
        confirmEnv: request.confirmEnv,
        breakStaleLock: request.breakStaleLock,
      })
    );
  }

  restart(request: Options<"restart">): Promise<RestartResult> {
    return this.#online((deps) => restart({ ...deps, ...request }));
  }

  skipRecord(request: Options<"skipRecord">): Promise<SkipRecordResult> {
    return this.#online((deps) => skipRecord({ ...deps, ...request }));
  }

  acknowledgeDrift(request: Options<"acknowledgeDrift">): Promise<AcknowledgeDriftResult> {
    return this.#online((deps) => acknowledgeDrift({ ...deps, ...request }));
  }

  diff(options: Options<"diff">): Promise<Review> {
    return this.#run(() =>
      diff({
        ...options,
        dir: this.dir,
        environment: this.environment,
        settings: this.#options.settings,
      })
    );
  }

  state(): Promise<StateView> {
    return this.#online((deps) => inspectState(deps.store));
  }

  initState(): Promise<StoreIdentity> {
    return this.#online((deps) => deps.store.init());
  }

  close(): Promise<void> {
    return this[Symbol.asyncDispose]();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // let a call in progress finish with its ports before they are closed
    await this.#queue.catch(() => {});
    await this.#ports.close();
  }

  /** Run calls one at a time, in order; refuse them once the handle is closed. */
  #run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#closed) {
      return Promise.reject(
        new SluiceError("USAGE_PROJECT_CLOSED", `the project handle of ${this.dir} is closed`),
      );
    }
    const next = this.#queue.catch(() => {}).then(fn);
    this.#queue = next;
    return next;
  }

  /** A call that needs the ports: the session options with the handle's ports. */
  #online<T>(fn: (deps: HandleDeps) => Promise<T>): Promise<T> {
    return this.#run(async () => fn(await this.#deps()));
  }

  async #deps(): Promise<HandleDeps> {
    const o = this.#options;
    return {
      dir: this.dir,
      environment: this.environment,
      settings: o.settings,
      actor: o.actor,
      onProgress: o.onProgress,
      extraLabels: o.extraLabels,
      clock: o.clock,
      uuids: o.uuids,
      env: o.env,
      signal: o.signal,
      // a given Connect port (RuntimeDeps.connect); absent, each cluster's REST adapter
      connect: o.connect,
      // a given docker.endpoints port (RuntimeDeps.dockerEndpoint); absent, each by its address
      dockerEndpoint: o.dockerEndpoint,
      logger: o.logger ?? SILENT_LOGGER,
      // the ports for the project as it is now (a stale one remade, or refused when given)
      ...(await this.#ports.current()),
    };
  }
}

/** The handle's signal and the call's: either cancels the call. */
function eitherSignal(
  handle: AbortSignal | undefined,
  call: AbortSignal | undefined,
): AbortSignal | undefined {
  return handle && call ? AbortSignal.any([handle, call]) : handle ?? call;
}
