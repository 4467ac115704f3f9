/**
 * The state store logic, written once above a {@link StatePrimitive}: envelope versions,
 * validation, compare-and-set, receipts and checksums. Both backends are this class over
 * their own primitive.
 *
 * @example
 * ```ts
 * import { StateEngine } from "./engine.ts";
 * import { LocalPrimitive } from "./local/local_primitive.ts";
 * const dir = await Deno.makeTempDir();
 * const store = new StateEngine(new LocalPrimitive(dir, "orders", null), "orders", null);
 * await store.init();
 * ```
 * @module
 */
import type { SealKey } from "./seal_key.ts";
import { hostname } from "node:os";
import { type ErrorCode, SluiceError } from "../errors.ts";
import { canonicalJson } from "./_canonical.ts";
import { decodeBody, encodeBody } from "./_stored.ts";
import { verifyScopeIntegrity } from "./integrity.ts";
import {
  appendedRows,
  appendEvents,
  commitOfOperation,
  type CompletionReceipt,
  type DayTwoEvent,
  emptyHistory,
  type HistoryDocument,
  type HistoryEvent,
  openHistory,
  type OperationAbandoned,
  verifyHistoryRows,
} from "./history.ts";
import {
  type Checkpoint,
  type ControlDocument,
  type ControlV3,
  type ControlV45,
  type Incident,
  lastCheckpoint,
  openControl,
  type OpenedControl,
  type OperationIntent,
  type OperatorDecision,
  RESUME_LIMIT,
  type ResumeAuthorization,
  type ResumeRecord,
  type RunnerAction,
  seal,
  type StoreIdentity,
  validateCheckpointSequence,
} from "./journal.ts";
import {
  emptyOwnership,
  type OwnershipDocument,
  stateChecksum,
  validateOwnership,
} from "./ownership.ts";
import type { DocName, DocWrite, LockOwner, LockStatus, StatePrimitive } from "./primitive.ts";
import type { StateTransition } from "../protocol/state_sites.ts";
import { admitsDayTwo } from "../protocol/journeys.ts";
import type { ReceiptCompletion } from "./completion.ts";
import { RUNNER_COMPLETION } from "./runner_completion.ts";
import type {
  AbandonInput,
  AcquireLockOptions,
  CompletedReceiptLookup,
  FinalizeResult,
  IntegrityReport,
  InterruptionInput,
  StateSnapshot,
  StateStore,
  TerminalPending,
} from "./store.ts";

const HEX64 = /^[0-9a-f]{64}$/;

function blocked(code: ErrorCode, message: string, evidence?: Record<string, unknown>): never {
  throw new SluiceError(code, message, evidence ? { evidence } : {});
}

type Change = [DocName, unknown | null];

/** Options of the engine (an injected clock and UUID source for tests and sweeps). */
export interface EngineOptions {
  clock?: () => Date;
  /** The source of lock UUIDs (default `crypto.randomUUID`). */
  uuid?: () => string;
}

/**
 * The StateStore implementation shared by every backend.
 *
 * @example
 * ```ts
 * import { StateEngine } from "./engine.ts";
 * import { LocalPrimitive } from "./local/local_primitive.ts";
 * const store = new StateEngine(
 *   new LocalPrimitive(await Deno.makeTempDir(), "orders", "prod"), "orders", "prod",
 *   { clock: () => new Date("2026-01-01T00:00:00Z") },
 * );
 * ```
 */
export class StateEngine implements StateStore {
  readonly project: string;
  readonly environment: string | null;
  #p: StatePrimitive;
  #lock: LockOwner | null = null;
  #clock: () => Date;
  #uuid: () => string;

  constructor(
    primitive: StatePrimitive,
    project: string,
    environment: string | null,
    options: EngineOptions = {},
  ) {
    if (environment === "") {
      throw new SluiceError("USAGE_ENVIRONMENT", "environment must be a name or null, not empty");
    }
    this.#p = primitive;
    this.project = project;
    this.environment = environment;
    this.#clock = options.clock ?? (() => new Date());
    this.#uuid = options.uuid ?? (() => crypto.randomUUID());
  }

  #now(): string {
    return this.#clock().toISOString();
  }

  async init(): Promise<StoreIdentity> {
    return await this.#p.init();
  }

  sealKey(): Promise<SealKey> {
    return this.#p.sealKey();
  }

  async rotateSealKey(): Promise<SealKey> {
    await this.identity(); // an uninitialized store has no key to rotate
    return await this.#p.rotateSealKey();
  }

  async identity(): Promise<StoreIdentity> {
    const id = await this.#p.identity();
    if (id === null) {
      throw new SluiceError(
        "STATE_NOT_INITIALIZED",
        "the state store is not initialized (run `sluice state init`)",
      );
    }
    return id;
  }

  async acquireLock(options: AcquireLockOptions): Promise<LockOwner> {
    if (this.#lock) {
      throw new SluiceError("STATE_LOCK_HELD", "this store already holds the lock", {
        evidence: { holder: this.#lock },
      });
    }
    await this.identity();
    const owner: LockOwner = {
      lock_id: this.#uuid(),
      project: this.project,
      environment: this.environment,
      actor: options.actor,
      host: hostname(),
      pid: Deno.pid,
      acquired_at: this.#now(),
    };
    const deadline = Date.now() + (options.timeoutMs ?? 0);
    let wait = 50;
    for (;;) {
      try {
        await this.#p.acquireLock(owner);
        this.#lock = owner;
        return owner;
      } catch (e) {
        // retried only for "lock held", with backoff, under a deadline
        if (!(e instanceof SluiceError) || e.code !== "STATE_LOCK_HELD" || Date.now() >= deadline) {
          throw e;
        }
        await new Promise((r) => setTimeout(r, Math.min(wait, Math.max(1, deadline - Date.now()))));
        wait = Math.min(wait * 2, 1000);
      }
    }
  }

  async verifyLock(): Promise<void> {
    if (!this.#lock) {
      throw new SluiceError("STATE_LOCK_LOST", "the deployment lock is not held by this process");
    }
    await this.#p.verifyLock(this.#lock.lock_id);
  }

  async releaseLock(): Promise<void> {
    if (!this.#lock) return;
    const id = this.#lock.lock_id;
    this.#lock = null;
    await this.#p.releaseLock(id);
  }

  inspectLock(): Promise<LockStatus> {
    return this.#p.inspectLock();
  }

  breakStaleLock(lockId: string): Promise<void> {
    return this.#p.breakStaleLock(lockId);
  }

  async close(): Promise<void> {
    try {
      await this.releaseLock();
    } finally {
      await this.#p.close();
    }
  }

  // ---- reading -------------------------------------------------------------------------

  async verifyIntegrity(): Promise<IntegrityReport> {
    try {
      if ((await this.#p.identity()) === null) {
        return { ok: true, identity: null, revision: null, problem: null, pending: null };
      }
      const snap = await this.load();
      const c = snap.control?.opened ?? null;
      return {
        ok: true,
        identity: snap.identity,
        revision: snap.revision,
        problem: null,
        pending: c
          ? {
            operation_id: c.operation_id,
            kind: c.kind,
            status: c.status,
            last_checkpoint: c.checkpoints.at(-1)?.name ?? null,
          }
          : null,
      };
    } catch (e) {
      if (e instanceof SluiceError && e.code === "STATE_NOT_INITIALIZED") {
        // a schema awaiting its migrations: the next init migrates and seals it
        return { ok: true, identity: null, revision: null, problem: null, pending: null };
      }
      if (e instanceof SluiceError && e.code.startsWith("STATE_CORRUPT")) {
        return {
          ok: false,
          identity: null,
          revision: null,
          problem: { code: e.code, message: e.message, evidence: e.evidence ?? {} },
          pending: null,
        };
      }
      throw e;
    }
  }

  async load(): Promise<StateSnapshot> {
    const identity = await this.identity();
    const bodies = await this.#p.read();
    const where = identity.address;
    const at = (name: DocName) => this.#p.locate(name);
    let ownership: StateSnapshot["ownership"] = null;
    if (bodies.ownership !== null) {
      const d = decodeBody<OwnershipDocument>("ownership", bodies.ownership, at("ownership"));
      validateOwnership(d.document);
      this.#checkScope("ownership", d.document.project, d.document.environment);
      ownership = { document: d.document, checksum: d.checksum, revision: d.revision };
    }
    let control: StateSnapshot["control"] = null;
    if (bodies.control !== null) {
      const d = decodeBody<ControlDocument>("control", bodies.control, at("control"));
      const opened = openControl(d.document);
      this.#checkScope("control", opened.intent.project, opened.intent.environment);
      control = { opened, checksum: d.checksum, revision: d.revision };
    }
    let history: StateSnapshot["history"] = {
      document: emptyHistory(this.project, this.environment),
      events: [],
      revision: 0,
    };
    if (bodies.history !== null) {
      const d = decodeBody<HistoryDocument>("history", bodies.history, at("history"));
      const events = openHistory(d.document);
      this.#checkScope("history", d.document.project, d.document.environment);
      history = { document: d.document, events, revision: d.revision };
    }
    if (bodies.historyRows) {
      // PostgreSQL keeps one row per event: exactly the document's events, or corruption
      verifyHistoryRows(history.document.events, bodies.historyRows, at("history"));
      history.committed_at = bodies.historyRows.map((r) => r.committed_at);
    }
    const sha = (name: DocName) =>
      bodies[name] === null ? null : decodeBody(name, bodies[name]!, at(name)).bodySha256;
    const snap: StateSnapshot = {
      identity,
      project: this.project,
      environment: this.environment,
      lock_id: this.#lock?.lock_id ?? null,
      revision: `ownership:${ownership?.revision ?? 0}/control:${
        control?.revision ?? 0
      }/history:${history.revision}`,
      ownership,
      control,
      history,
      bodies: { ownership: sha("ownership"), control: sha("control"), history: sha("history") },
    };
    verifyScopeIntegrity({
      identity,
      project: this.project,
      environment: this.environment,
      ownership,
      control: control?.opened ?? null,
      events: history.events,
      atomic: this.#p.atomicWrites,
      where,
    });
    if (
      this.#p.atomicWrites && control &&
      findAbandonment(history.events, control.opened.operation_id)
    ) {
      // PostgreSQL commits the abandonment and the clear together
      throw new SluiceError(
        "STATE_CORRUPT_STATE",
        `operation ${control.opened.operation_id} is recorded abandoned but its control is still active`,
      );
    }
    if (
      this.#p.atomicWrites && control && findReceipt(history.events, control.opened.operation_id)
    ) {
      // PostgreSQL commits receipt and clear together: a receipt beside active control is invalid
      throw new SluiceError(
        "STATE_CORRUPT_STATE",
        `operation ${control.opened.operation_id} has a completion receipt but its control is still active`,
      );
    }
    return snap;
  }

  #checkScope(name: string, project: string, environment: string | null): void {
    if (project !== this.project || environment !== this.environment) {
      throw new SluiceError(
        "STATE_CORRUPT_SCOPE",
        `${name} belongs to project ${project} environment ${environment}, not ${this.project} ${this.environment}`,
      );
    }
  }

  #requireLock(snapshot: StateSnapshot): LockOwner {
    if (!this.#lock) {
      throw new SluiceError("STATE_LOCK_REQUIRED", "this transition requires the deployment lock");
    }
    if (snapshot.lock_id !== this.#lock.lock_id) {
      throw new SluiceError(
        "STATE_LOCK_REQUIRED",
        "the snapshot was not read under the currently held lock; load it again",
        { evidence: { snapshot_lock: snapshot.lock_id, held_lock: this.#lock.lock_id } },
      );
    }
    return this.#lock;
  }

  async #write(
    transition: StateTransition,
    snapshot: StateSnapshot,
    changes: Change[],
  ): Promise<StateSnapshot> {
    const lock = this.#requireLock(snapshot);
    const writes: DocWrite[] = changes.map(([name, doc]) => {
      const rev = name === "ownership"
        ? snapshot.ownership?.revision ?? 0
        : name === "control"
        ? snapshot.control?.revision ?? 0
        : snapshot.history.revision;
      return {
        name,
        body: doc === null ? null : encodeBody(doc, rev + 1),
        expectedSha256: snapshot.bodies[name],
        expectedRevision: rev,
        ...(name === "history" && doc !== null
          ? {
            appended: appendedRows(
              doc as HistoryDocument,
              snapshot.history.document.events.length,
            ),
          }
          : {}),
      };
    });
    await this.#p.commit(writes, lock.lock_id, transition);
    return await this.load();
  }

  #currentChecksum(snapshot: StateSnapshot): string {
    return snapshot.ownership?.checksum ??
      stateChecksum(emptyOwnership(this.project, this.environment));
  }

  #control(snapshot: StateSnapshot): OpenedControl {
    if (!snapshot.control) {
      blocked("BLOCKED_NO_PENDING_OPERATION", "there is no pending operation");
    }
    return snapshot.control.opened;
  }

  #runnerControl(snapshot: StateSnapshot): OpenedControl {
    const c = this.#control(snapshot);
    if (c.kind !== "runner_update") {
      blocked(
        "BLOCKED_NOT_RUNNER_UPDATE",
        `pending operation ${c.operation_id} is a ${c.kind}, not a runner_update`,
      );
    }
    return c;
  }

  /**
   * Incidents and operator decisions in control that history does not hold yet (local: control
   * is written first; the next history write archives them).
   */
  #unarchivedIncidents(snapshot: StateSnapshot, control: OpenedControl): HistoryEvent[] {
    const archived = new Set(
      snapshot.history.events.filter((e) => e.kind === "incident").map((e) =>
        (e as Incident).incident_id
      ),
    );
    const decided = new Set(
      snapshot.history.events.flatMap((e) => e.kind === "operator_decision" ? [e.decision_id] : []),
    );
    return [
      ...control.incidents.filter((i) => !archived.has(i.incident_id)).map((i) => ({
        kind: "incident" as const,
        ...i,
      })),
      ...control.decisions.filter((d) => !decided.has(d.decision_id)).map((d) => ({
        kind: "operator_decision" as const,
        ...d,
      })),
    ];
  }

  // ---- transitions ---------------------------------------------------------------------

  async commitOwnership(
    snapshot: StateSnapshot,
    ownership: OwnershipDocument,
    options: { operationId?: string; recordedAt?: string } = {},
  ): Promise<StateSnapshot> {
    this.#requireLock(snapshot);
    validateOwnership(ownership, "BLOCKED_INVALID_OWNERSHIP");
    if (ownership.project !== this.project || ownership.environment !== this.environment) {
      blocked("BLOCKED_INVALID_OWNERSHIP", "ownership project/environment differ from the store");
    }
    const control = snapshot.control?.opened ?? null;
    if (control) {
      if (control.kind === "runner_update") {
        blocked(
          "BLOCKED_OPERATION_PENDING",
          `runner update ${control.operation_id} is pending; it is finalized by finalizeCompletedRunner`,
        );
      }
      if (options.operationId !== control.operation_id) {
        blocked(
          "BLOCKED_OPERATION_PENDING",
          `operation ${control.operation_id} is pending; commit it by its operation ID`,
          { pending: control.operation_id, given: options.operationId ?? null },
        );
      }
    } else if (options.operationId !== undefined) {
      blocked("BLOCKED_NO_PENDING_OPERATION", `operation ${options.operationId} is not pending`);
    }
    const desired = stateChecksum(ownership);
    // local: history, ownership and clear are separate files; a retry finishes what is missing
    const archived = control
      ? commitOfOperation(snapshot.history.events, control.operation_id)
      : null;
    if (archived) {
      if (archived.state_checksum !== desired) {
        blocked(
          "BLOCKED_COMMIT_MISMATCH",
          `operation ${
            control!.operation_id
          } already archived a commit of ${archived.state_checksum}, not ${desired}`,
        );
      }
      if (snapshot.ownership?.checksum === desired) {
        return await this.#write("commit_ownership", snapshot, [["control", null]]);
      }
    }
    const prior = snapshot.ownership?.document.serial ?? 0;
    if (ownership.serial !== prior + 1) {
      blocked(
        "BLOCKED_SERIAL",
        `ownership serial must be ${prior + 1} (current ${prior}), got ${ownership.serial}`,
      );
    }
    const changes: Change[] = [];
    if (!archived) {
      const events: HistoryEvent[] = control ? this.#unarchivedIncidents(snapshot, control) : [];
      // the plan file the operation applied is named in the same write as its commit, so a
      // later apply of that file names the operation (PLAN_ALREADY_APPLIED), never a stale state
      const plan = control?.intent.reviewed_plan_sha256 ?? null;
      events.push({
        kind: "ownership_committed",
        operation_id: control?.operation_id ?? null,
        recorded_at: options.recordedAt ?? this.#now(),
        serial: ownership.serial,
        state_checksum: desired,
        ...(plan ? { plan_sha256: plan } : {}),
      });
      changes.push(["history", appendEvents(snapshot.history.document, events)]);
    }
    changes.push(["ownership", ownership]);
    if (control) changes.push(["control", null]);
    return await this.#write("commit_ownership", snapshot, changes);
  }

  async beginOperation(
    snapshot: StateSnapshot,
    intent: OperationIntent,
    actions: RunnerAction[] = [],
  ): Promise<StateSnapshot> {
    const lock = this.#requireLock(snapshot);
    if (snapshot.control) {
      blocked(
        "BLOCKED_OPERATION_PENDING",
        `operation ${snapshot.control.opened.operation_id} (${snapshot.control.opened.kind}) is pending; resume or recover it first`,
        { pending: snapshot.control.opened.operation_id },
      );
    }
    if (typeof intent.operation_id !== "string" || intent.operation_id === "") {
      blocked("BLOCKED_INVALID_INTENT", "intent needs an operation_id");
    }
    if (intent.project !== this.project || intent.environment !== this.environment) {
      blocked("BLOCKED_INVALID_INTENT", "intent project/environment differ from the store");
    }
    if (findReceipt(snapshot.history.events, intent.operation_id)) {
      blocked("BLOCKED_INVALID_INTENT", `operation ${intent.operation_id} already completed`);
    }
    const current = this.#currentChecksum(snapshot);
    if (intent.original_state_checksum !== current) {
      blocked(
        "BLOCKED_STATE_CHANGED",
        `protected state changed: intent expects ${intent.original_state_checksum}, state is ${current}`,
        { expected: intent.original_state_checksum, actual: current },
      );
    }
    let control: ControlDocument;
    if (intent.kind === "runner_update") {
      if (actions.length !== 1) {
        blocked("BLOCKED_INVALID_INTENT", "a runner update holds exactly one replacement action");
      }
      const a = actions[0];
      const runner = snapshot.ownership?.document.runners.find((r) => r.model === a.model);
      if (a.type !== "replace_runner_predicate" || !runner) {
        blocked("BLOCKED_INVALID_INTENT", `action must replace an owned runner (${a.model})`);
      }
      if (
        a.prior_artifact_sha256 !== runner.artifact_sha256 ||
        a.application_id !== runner.application_id || !HEX64.test(a.desired_artifact_sha256) ||
        a.desired_artifact_sha256 === a.prior_artifact_sha256
      ) {
        blocked(
          "BLOCKED_INVALID_INTENT",
          `action for ${a.model} does not match owned runner (prior ${runner.artifact_sha256}, application ${runner.application_id})`,
        );
      }
      const v4: ControlV45 = {
        format: "sluice.control",
        version: 4,
        operation_id: intent.operation_id,
        kind: "runner_update",
        status: "in_progress",
        holder_lock_id: lock.lock_id,
        intent: seal(intent),
        actions: actions.map((x) => seal(x)),
        checkpoints: [],
        incidents: [],
      };
      control = v4;
    } else {
      if (actions.length !== 0) {
        blocked("BLOCKED_INVALID_INTENT", `${intent.kind} takes no typed runner actions`);
      }
      const v3: ControlV3 = {
        format: "sluice.control",
        version: 3,
        operation_id: intent.operation_id,
        kind: intent.kind,
        status: "in_progress",
        intent,
        incidents: [],
      };
      control = v3;
    }
    return await this.#write("begin", snapshot, [["control", control]]);
  }

  async recordCheckpoint(snapshot: StateSnapshot, checkpoint: Checkpoint): Promise<StateSnapshot> {
    const lock = this.#requireLock(snapshot);
    const c = this.#runnerControl(snapshot);
    const doc = c.document as ControlV45;
    this.#refuseFrozen(snapshot, c);
    if (c.status === "interrupted") {
      blocked(
        "BLOCKED_OPERATION_INTERRUPTED",
        `operation ${c.operation_id} is interrupted; an explicit resume must authorize it first`,
      );
    }
    if (doc.holder_lock_id !== lock.lock_id) {
      blocked(
        "BLOCKED_INTERRUPTION_REQUIRED",
        `operation ${c.operation_id} was left in progress by lock ${doc.holder_lock_id}; record its interruption first`,
      );
    }
    if (!Number.isSafeInteger(checkpoint.action_index) || !c.actions[checkpoint.action_index]) {
      blocked("BLOCKED_CHECKPOINT_ORDER", `no action ${checkpoint.action_index}`);
    }
    validateCheckpointSequence([...c.checkpoints, checkpoint], "BLOCKED_CHECKPOINT_ORDER");
    const next: ControlV45 = { ...doc, checkpoints: [...doc.checkpoints, seal(checkpoint)] };
    return await this.#write("checkpoint", snapshot, [["control", next]]);
  }

  async recordInterruption(
    snapshot: StateSnapshot,
    input: InterruptionInput,
  ): Promise<StateSnapshot> {
    this.#requireLock(snapshot);
    const c = this.#control(snapshot);
    this.#refuseFrozen(snapshot, c);
    if (c.incidents.some((i) => i.incident_id === input.incident_id)) {
      blocked("BLOCKED_DUPLICATE_INCIDENT", `incident ${input.incident_id} is already recorded`);
    }
    if (c.status === "interrupted") {
      blocked(
        "BLOCKED_ALREADY_INTERRUPTED",
        `operation ${c.operation_id} already has a recorded interruption`,
      );
    }
    const last = lastCheckpoint(c);
    const incident: Incident = {
      incident_id: input.incident_id,
      operation_id: c.operation_id,
      actor: input.actor,
      recorded_at: input.recorded_at,
      last_checkpoint: last?.name ?? null,
      checkpoint_count: c.checkpoints.length,
      reason: input.reason,
    };
    let next: ControlDocument;
    if (c.version === 3) {
      const d = c.document as ControlV3;
      next = { ...d, status: "interrupted", incidents: [...d.incidents, incident] };
    } else {
      const d = c.document as ControlV45;
      next = { ...d, status: "interrupted", incidents: [...d.incidents, seal(incident)] };
    }
    // control first: a lost history write is caught up by the next history write
    const events = [...this.#unarchivedIncidents(snapshot, c), { kind: "incident", ...incident }];
    return await this.#write("interrupt", snapshot, [
      ["control", next],
      ["history", appendEvents(snapshot.history.document, events as HistoryEvent[])],
    ]);
  }

  #refuseFrozen(snapshot: StateSnapshot, c: OpenedControl): void {
    if (findReceipt(snapshot.history.events, c.operation_id)) {
      blocked(
        "BLOCKED_OPERATION_FROZEN",
        `operation ${c.operation_id} has a runner_completed receipt; its terminal control is frozen`,
      );
    }
    if (findAbandonment(snapshot.history.events, c.operation_id)) {
      blocked(
        "BLOCKED_OPERATION_ABANDONED",
        `operation ${c.operation_id} was abandoned; only the clear of its control remains ('sluice state abandon' again)`,
      );
    }
  }

  async recordDecision(
    snapshot: StateSnapshot,
    decision: OperatorDecision,
  ): Promise<StateSnapshot> {
    this.#requireLock(snapshot);
    const c = this.#runnerControl(snapshot);
    this.#refuseFrozen(snapshot, c);
    if (c.checkpoints.some((x) => x.name === "action_completed")) {
      blocked(
        "BLOCKED_OPERATION_TERMINAL",
        `operation ${c.operation_id} is recorded completed; a decision cannot change it`,
      );
    }
    if (decision.operation_id !== c.operation_id) {
      blocked(
        "BLOCKED_INVALID_DECISION",
        `the decision names operation ${decision.operation_id}, not the pending ${c.operation_id}`,
      );
    }
    if (typeof decision.decision_id !== "string" || decision.decision_id === "") {
      blocked("BLOCKED_INVALID_DECISION", "a decision needs a decision_id");
    }
    if (c.decisions.some((d) => d.decision_id === decision.decision_id)) {
      blocked("BLOCKED_INVALID_DECISION", `decision ${decision.decision_id} is already recorded`);
    }
    if (typeof decision.reason !== "string" || decision.reason.trim() === "") {
      blocked("BLOCKED_INVALID_DECISION", "a decision needs the operator's reason");
    }
    const dec = /^[0-9]+$/;
    if (
      decision.decision !== "accept_retention_loss" || decision.partitions.length === 0 ||
      decision.partitions.some((x) =>
        !dec.test(x.from) || !dec.test(x.to) || BigInt(x.from) >= BigInt(x.to) ||
        String(BigInt(x.to) - BigInt(x.from)) !== x.lost
      )
    ) {
      blocked(
        "BLOCKED_INVALID_DECISION",
        "a retention-loss acceptance names each partition's lost range [from, to) with from < to",
      );
    }
    const last = lastCheckpoint(c);
    if ((last?.name ?? null) !== decision.last_checkpoint) {
      blocked(
        "BLOCKED_INVALID_DECISION",
        `the decision was made at ${decision.last_checkpoint ?? "intent"}, the operation is at ${
          last?.name ?? "intent"
        }`,
      );
    }
    const d = c.document as ControlV45;
    const next: ControlV45 = { ...d, decisions: [...(d.decisions ?? []), seal(decision)] };
    const events = [
      ...this.#unarchivedIncidents(snapshot, c),
      { kind: "operator_decision" as const, ...decision },
    ];
    return await this.#write("decide", snapshot, [
      ["control", next],
      ["history", appendEvents(snapshot.history.document, events)],
    ]);
  }

  async abandonOperation(
    snapshot: StateSnapshot,
    input: AbandonInput,
  ): Promise<StateSnapshot> {
    this.#requireLock(snapshot);
    const c = this.#control(snapshot);
    if (c.operation_id !== input.operation_id) {
      blocked(
        "BLOCKED_NO_PENDING_OPERATION",
        `operation ${input.operation_id} is not pending (pending: ${c.operation_id})`,
      );
    }
    if (findReceipt(snapshot.history.events, c.operation_id)) {
      blocked(
        "BLOCKED_OPERATION_FROZEN",
        `operation ${c.operation_id} has a completion receipt: it completed, and 'sluice state resume' finishes it; it cannot be abandoned`,
      );
    }
    if (findAbandonment(snapshot.history.events, c.operation_id)) {
      // local: the abandonment was archived, the clear was not: finish only the clear
      return await this.#write("abandon", snapshot, [["control", null]]);
    }
    if (typeof input.reason !== "string" || input.reason.trim() === "") {
      blocked("BLOCKED_INVALID_DECISION", "abandoning an operation needs the operator's reason");
    }
    const event: OperationAbandoned = {
      kind: "operation_abandoned",
      operation_id: c.operation_id,
      operation_kind: c.kind,
      actor: input.actor,
      recorded_at: input.recorded_at,
      reason: input.reason,
      evidence: input.evidence,
      intent: c.intent,
      terminal_control: c.document,
    };
    return await this.#write("abandon", snapshot, [
      [
        "history",
        appendEvents(snapshot.history.document, [
          ...this.#unarchivedIncidents(snapshot, c),
          event,
        ]),
      ],
      ["control", null],
    ]);
  }

  async recordAudit(snapshot: StateSnapshot, event: DayTwoEvent): Promise<StateSnapshot> {
    this.#requireLock(snapshot);
    // while an operation is pending, a day-two event is recorded only where the operation's
    // journey admits it (the registry's: a removal's own runner, brought back after a kill so
    // that the removal can stop it cleanly)
    const c = snapshot.control?.opened ?? null;
    if (c && !admitsDayTwo(c, event.application_id)) {
      blocked(
        "BLOCKED_OPERATION_PENDING",
        `operation ${c.operation_id} (${c.kind}) is pending: finish it first ('sluice state show' names it)`,
        { operation_id: c.operation_id },
      );
    }
    if (
      event.kind !== "runner_restarted" && event.kind !== "record_skipped" &&
      event.kind !== "drift_acknowledged"
    ) {
      blocked(
        "BLOCKED_INVALID_DECISION",
        `${(event as { kind: string }).kind} is not a day-two audit event`,
      );
    }
    if (typeof event.event_id !== "string" || event.event_id === "") {
      blocked("BLOCKED_INVALID_DECISION", "a day-two audit event needs an event_id");
    }
    if (typeof event.reason !== "string" || event.reason.trim() === "") {
      blocked("BLOCKED_INVALID_DECISION", "a day-two audit event needs the operator's reason");
    }
    if (
      snapshot.history.events.some((e) =>
        (e.kind === "runner_restarted" || e.kind === "record_skipped" ||
          e.kind === "drift_acknowledged") &&
        e.event_id === event.event_id
      )
    ) {
      blocked("BLOCKED_DUPLICATE_EVENT", `audit event ${event.event_id} is already recorded`);
    }
    return await this.#write("audit", snapshot, [
      ["history", appendEvents(snapshot.history.document, [event])],
    ]);
  }

  #authorization(
    snapshot: StateSnapshot,
    c: OpenedControl,
    record: ResumeRecord,
  ): ResumeAuthorization {
    const last = lastCheckpoint(c);
    return {
      authorization_id: record.authorization_id,
      operation_id: c.operation_id,
      actor: record.actor,
      authorized_at: record.authorized_at,
      store: snapshot.identity,
      original_state_checksum: c.intent.original_state_checksum,
      progress: { checkpoint_count: c.checkpoints.length, last_checkpoint: last?.name ?? null },
      interrupted_control_sha256: snapshot.control!.checksum,
      recovery: record.recovery,
    };
  }

  /** Archived authorizations of the pending operation that its control does not hold yet. */
  #orphanAuthorizations(snapshot: StateSnapshot, c: OpenedControl): ResumeAuthorization[] {
    const known = new Set(c.resume_history.map((r) => r.authorization_id));
    return snapshot.history.events.filter((
      e,
    ): e is { kind: "resume_authorized" } & ResumeAuthorization =>
      e.kind === "resume_authorized" && e.operation_id === c.operation_id &&
      !known.has(e.authorization_id)
    ).map(({ kind: _kind, ...rest }) => rest);
  }

  /** Checks shared by resume and its pending-authorization lookup. */
  #resumable(snapshot: StateSnapshot): OpenedControl {
    const c = this.#runnerControl(snapshot);
    this.#refuseFrozen(snapshot, c);
    const done = c.checkpoints.find((x) => x.name === "action_completed");
    if (done) {
      blocked(
        "BLOCKED_OPERATION_TERMINAL",
        `operation ${c.operation_id} completed with ${
          done.name === "action_completed" ? done.outcome : ""
        }; it requires finalization or recovery, not resume`,
      );
    }
    if (c.status !== "interrupted") {
      blocked(
        "BLOCKED_INTERRUPTION_REQUIRED",
        `operation ${c.operation_id} is in progress; record its interruption under a new lock first`,
      );
    }
    if (c.intent.reviewed_plan_sha256 === null || !HEX64.test(c.intent.reviewed_plan_sha256)) {
      blocked(
        "BLOCKED_NOT_REVIEWED",
        `operation ${c.operation_id} has no reviewed-plan checksum; it cannot be resumed`,
      );
    }
    const current = this.#currentChecksum(snapshot);
    if (current !== c.intent.original_state_checksum) {
      blocked(
        "BLOCKED_STATE_CHANGED",
        `protected state changed since the intent: expected ${c.intent.original_state_checksum}, found ${current}`,
        { expected: c.intent.original_state_checksum, actual: current },
      );
    }
    return c;
  }

  async resumeOperation(snapshot: StateSnapshot, record: ResumeRecord): Promise<StateSnapshot> {
    this.#requireLock(snapshot);
    const c = this.#resumable(snapshot);
    if (typeof record.authorization_id !== "string" || record.authorization_id === "") {
      blocked("BLOCKED_INVALID_AUTHORIZATION", "resume record needs an authorization_id");
    }
    if (c.resume_history.some((r) => r.authorization_id === record.authorization_id)) {
      blocked(
        "BLOCKED_INVALID_AUTHORIZATION",
        `authorization ${record.authorization_id} was already applied`,
      );
    }
    if (c.resume_history.length >= RESUME_LIMIT) {
      blocked(
        "BLOCKED_RESUME_LIMIT",
        `operation ${c.operation_id} already has ${RESUME_LIMIT} resume authorizations`,
        { limit: RESUME_LIMIT },
      );
    }
    const entry = this.#authorization(snapshot, c, record);
    const orphans = this.#orphanAuthorizations(snapshot, c);
    let archived = false;
    if (orphans.length > 1) {
      blocked("BLOCKED_RESUME_CONFLICT", `${orphans.length} competing archived authorizations`);
    }
    if (orphans.length === 1) {
      // a prewritten authorization permits only an exact retry of that record
      if (canonicalJson(orphans[0]) !== canonicalJson(entry)) {
        blocked(
          "BLOCKED_RESUME_CONFLICT",
          `archived authorization ${
            orphans[0].authorization_id
          } is pending; only an exact retry of it may proceed`,
          { pending: orphans[0].authorization_id, given: record.authorization_id },
        );
      }
      archived = true;
    }
    const d = c.document as ControlV45;
    const next: ControlV45 = {
      ...d,
      version: 5,
      status: "in_progress",
      holder_lock_id: snapshot.lock_id!,
      resume_history: [...(d.resume_history ?? []), seal(entry)],
    };
    const changes: Change[] = [];
    const events = this.#unarchivedIncidents(snapshot, c);
    if (!archived) events.push({ kind: "resume_authorized", ...entry });
    // local: the authorization is archived before control changes
    if (events.length > 0) {
      changes.push(["history", appendEvents(snapshot.history.document, events)]);
    }
    changes.push(["control", next]);
    return await this.#write("resume", snapshot, changes);
  }

  async pendingResumeAuthorization(snapshot: StateSnapshot): Promise<ResumeAuthorization | null> {
    this.#requireLock(snapshot);
    const fresh = await this.load();
    assertSameSnapshot(snapshot, fresh);
    // verifies the current runner journal before it answers, null included (a control left in
    // progress is BLOCKED_INTERRUPTION_REQUIRED): absence of a record is not permission to resume
    const c = this.#runnerControl(fresh);
    const orphans = this.#orphanAuthorizations(fresh, c);
    if (orphans.length > 1) {
      blocked("BLOCKED_RESUME_CONFLICT", `${orphans.length} competing archived authorizations`);
    }
    this.#resumable(fresh);
    if (orphans.length === 0) return null;
    const o = orphans[0];
    if (o.interrupted_control_sha256 !== fresh.control!.checksum) {
      blocked(
        "BLOCKED_RESUME_CONFLICT",
        `archived authorization ${o.authorization_id} was for control ${o.interrupted_control_sha256}, current is ${
          fresh.control!.checksum
        }`,
      );
    }
    if (this.#p.atomicWrites) {
      throw new SluiceError(
        "STATE_CORRUPT_HISTORY",
        `authorization ${o.authorization_id} is archived without its control transition`,
      );
    }
    return o;
  }

  async finalizeCompletedRunner(
    snapshot: StateSnapshot,
    options: { recordedAt?: string } = {},
  ): Promise<FinalizeResult> {
    // (async: a refusal of the lock or of the operation is a rejected promise, as before)
    const lock = this.#requireLock(snapshot);
    const c = this.#runnerControl(snapshot);
    return await this.#finalizeWithReceipt(snapshot, lock, c, RUNNER_COMPLETION, options);
  }

  /**
   * The receipt protocol of an operation that completes by an archived receipt, written once:
   * under the lock `lock`, the journey's `completion` checks the pending operation `c` and
   * computes its result; the receipt, the result ownership and the clear of control are one
   * write group. A retry after a partial local write finishes exactly what is missing, checked
   * against the archived receipt (its terminal control frozen, the state its prior or result).
   */
  async #finalizeWithReceipt(
    snapshot: StateSnapshot,
    lock: LockOwner,
    c: OpenedControl,
    completion: ReceiptCompletion,
    options: { recordedAt?: string },
  ): Promise<FinalizeResult> {
    completion.complete(c);
    const receipt = findReceipt(snapshot.history.events, c.operation_id);
    const current = snapshot.ownership;
    if (!current) blocked("BLOCKED_STATE_CHANGED", "ownership state is missing");
    const doc = c.document as ControlV45;
    if (!receipt) {
      if (c.status === "in_progress" && doc.holder_lock_id !== lock.lock_id) {
        blocked(
          "BLOCKED_INTERRUPTION_REQUIRED",
          `operation ${c.operation_id} was left in progress by lock ${doc.holder_lock_id}; record its interruption first`,
        );
      }
      if (current.checksum !== c.intent.original_state_checksum) {
        blocked(
          "BLOCKED_STATE_CHANGED",
          `protected state changed: expected ${c.intent.original_state_checksum}, found ${current.checksum}`,
          { expected: c.intent.original_state_checksum, actual: current.checksum },
        );
      }
      const result = completion.result(current.document, c);
      const newReceipt = completion.receipt({
        control: c,
        prior: current,
        result,
        recordedAt: options.recordedAt ?? this.#now(),
      });
      const events = [...this.#unarchivedIncidents(snapshot, c), newReceipt];
      // local order: receipt, then ownership, then clear (PostgreSQL: one transaction)
      const snap = await this.#write("finalize", snapshot, [
        ["history", appendEvents(snapshot.history.document, events)],
        ["ownership", result],
        ["control", null],
      ]);
      return {
        snapshot: snap,
        receipt: newReceipt,
        completed_at: completedAt(snap, newReceipt),
        retried_clear: false,
      };
    }
    // a receipt exists: the terminal control is frozen and must match it exactly
    if (canonicalJson(receipt.terminal_control) !== canonicalJson(c.document)) {
      blocked(
        "BLOCKED_RECEIPT_MISMATCH",
        `operation ${c.operation_id}: pending control differs from the archived terminal control`,
      );
    }
    if (current.checksum === receipt.prior_state_checksum) {
      const result = completion.result(current.document, c);
      if (stateChecksum(result) !== receipt.result_state_checksum) {
        blocked("BLOCKED_RECEIPT_MISMATCH", "recomputed result differs from the receipt");
      }
      const snap = await this.#write("finalize", snapshot, [["ownership", result], [
        "control",
        null,
      ]]);
      return {
        snapshot: snap,
        receipt,
        completed_at: completedAt(snap, receipt),
        retried_clear: false,
      };
    }
    if (current.checksum === receipt.result_state_checksum) {
      completion.reconstruct(current.document, c, receipt);
      const snap = await this.#write("finalize", snapshot, [["control", null]]);
      return {
        snapshot: snap,
        receipt,
        completed_at: completedAt(snap, receipt),
        retried_clear: true,
      };
    }
    blocked(
      "BLOCKED_STATE_CHANGED",
      `ownership ${current.checksum} is neither the receipt's prior nor its result state`,
      {
        actual: current.checksum,
        prior: receipt.prior_state_checksum,
        result: receipt.result_state_checksum,
      },
    );
  }

  async completedReceipt(operationId: string): Promise<CompletedReceiptLookup | null> {
    if (!this.#lock) {
      throw new SluiceError("STATE_LOCK_REQUIRED", "the receipt lookup requires the lock");
    }
    const snap = await this.load();
    const receipt = findReceipt(snap.history.events, operationId);
    if (!receipt) {
      const commit = commitOfOperation(snap.history.events, operationId);
      if (!commit) return null;
      // an ownership commit is how a create, connector change or runner removal completes (a
      // runner update is refused one: it completes by its receipt); only history that names the
      // operation a replacement makes this commit orphan state history, which is corruption
      const replacement = replacementEvidence(snap, operationId);
      if (replacement) {
        throw new SluiceError(
          "STATE_CORRUPT_HISTORY",
          `operation ${operationId} has state history but no operation receipt: ${replacement} names it a runner replacement, whose completion is its runner_completed receipt`,
          { evidence: { operation_id: operationId, serial: commit.serial, replacement } },
        );
      }
      const c = snap.control?.opened;
      const kind = c && c.operation_id === operationId
        ? `${c.kind} operation`
        : "operation (a create, connector change or runner removal)";
      blocked(
        "BLOCKED_NOT_A_REPLACEMENT",
        `operation ${operationId} is a completed ${kind} recorded by its ownership commit (serial ${commit.serial}), not a runner replacement: it has no replacement receipt, and there is nothing to resume or report`,
        { operation_id: operationId, serial: commit.serial },
      );
    }
    const c = snap.control?.opened ?? null;
    if (c && c.operation_id === operationId) {
      if (canonicalJson(receipt.terminal_control) !== canonicalJson(c.document)) {
        blocked("BLOCKED_RECEIPT_MISMATCH", "pending control differs from the receipt");
      }
    }
    const own = snap.ownership;
    if (!own || own.checksum !== receipt.result_state_checksum) {
      blocked(
        "BLOCKED_RECEIPT_SUPERSEDED",
        `current ownership ${
          own?.checksum ?? "absent"
        } is not the receipt's result ${receipt.result_state_checksum}`,
      );
    }
    RUNNER_COMPLETION.reconstruct(own.document, openControl(receipt.terminal_control), receipt);
    return {
      receipt,
      completed_at: completedAt(snap, receipt),
      control_cleared: !(c && c.operation_id === operationId),
    };
  }

  async validateTerminalPending(snapshot: StateSnapshot): Promise<TerminalPending> {
    this.#requireLock(snapshot);
    const fresh = await this.load();
    assertSameSnapshot(snapshot, fresh);
    const c = this.#runnerControl(fresh);
    const last = lastCheckpoint(c);
    if (last?.name !== "action_completed") {
      blocked(
        "BLOCKED_NOT_TERMINAL",
        `operation ${c.operation_id} is not terminal (last boundary ${last?.name ?? "intent"})`,
      );
    }
    return {
      operation_id: c.operation_id,
      outcome: last.outcome,
      receipt_archived: findReceipt(fresh.history.events, c.operation_id) !== null,
    };
  }
}

/**
 * The runner_completed receipt archived for an operation, if any.
 *
 * @example
 * ```ts
 * import { findReceipt } from "./engine.ts";
 * findReceipt([], "op"); // null
 * ```
 */
export function findReceipt(events: HistoryEvent[], operationId: string): CompletionReceipt | null {
  const found = events.filter((e): e is CompletionReceipt =>
    e.kind === "runner_completed" && e.operation_id === operationId
  );
  if (found.length > 1) {
    throw new SluiceError("STATE_CORRUPT_HISTORY", `operation ${operationId} has two receipts`);
  }
  return found[0] ?? null;
}

/**
 * When a receipt's operation completed: the time the store committed the receipt, by its own
 * clock, where it keeps one (PostgreSQL: the durable terminal row); otherwise the receipt's
 * `recorded_at` (local files, and receipts written before PostgreSQL migration 4).
 */
function completedAt(snap: StateSnapshot, receipt: CompletionReceipt): string {
  const i = snap.history.events.findIndex((e) =>
    e.kind === "runner_completed" && e.operation_id === receipt.operation_id
  );
  return (i >= 0 ? snap.history.committed_at?.[i] : null) ?? receipt.recorded_at;
}

/**
 * The abandonment archived for an operation, if any.
 *
 * @example
 * ```ts
 * import { findAbandonment } from "./engine.ts";
 * findAbandonment([], "op"); // null
 * ```
 */
export function findAbandonment(
  events: HistoryEvent[],
  operationId: string,
): OperationAbandoned | null {
  return events.find((e): e is OperationAbandoned =>
    e.kind === "operation_abandoned" && e.operation_id === operationId
  ) ?? null;
}

/**
 * What in the state names `operationId` a runner replacement — an archived resume authorization
 * or operator's decision (both only a runner update receives), an abandonment of a runner update,
 * or its pending runner-update control — or null.
 */
function replacementEvidence(snap: StateSnapshot, operationId: string): string | null {
  const c = snap.control?.opened;
  if (c && c.operation_id === operationId && c.kind === "runner_update") {
    return "its pending runner_update control";
  }
  for (const [i, e] of snap.history.events.entries()) {
    if (!("operation_id" in e) || e.operation_id !== operationId) continue;
    if (e.kind === "resume_authorized" || e.kind === "operator_decision") {
      return `history.events[${i}] (${e.kind})`;
    }
    if (e.kind === "operation_abandoned" && e.operation_kind === "runner_update") {
      return `history.events[${i}] (operation_abandoned of a runner_update)`;
    }
  }
  return null;
}

function assertSameSnapshot(a: StateSnapshot, b: StateSnapshot): void {
  for (const name of ["ownership", "control", "history"] as const) {
    if (a.bodies[name] !== b.bodies[name]) {
      throw new SluiceError(
        "STATE_CONFLICT",
        `state ${name} changed since the snapshot (${a.revision} → ${b.revision})`,
        { evidence: { expected: a.revision, actual: b.revision } },
      );
    }
  }
}
