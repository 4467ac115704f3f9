/**
 * The crash scenarios of the state layer, shared by `lib/state/crash_test.ts` (which prepares
 * state, kills a worker at each site and checks the stored bytes) and `state_worker.ts` (which
 * runs a scenario's transition, and in a fresh process its continuation after a crash).
 * @module
 */
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import { openStateStore, type StateStoreConfig } from "../../lib/state/open.ts";
import {
  emptyOwnership,
  type OwnershipDocument,
  stateChecksum,
} from "../../lib/state/ownership.ts";
import type { StateTransition } from "../../lib/protocol/state_sites.ts";
import type { OperatorDecision } from "../../lib/state/journal.ts";
import type { StateSnapshot, StateStore } from "../../lib/state/store.ts";
import {
  checkpointChain,
  ownedRunner,
  replaceAction,
  resumeRecord,
  runnerIntent,
} from "./fixtures.ts";
import { runWorker } from "./spawn.ts";

/** The project of every scenario (environment null). */
export const PROJECT = "orders";

/** A fresh incident record. */
export const incident = () => ({
  incident_id: crypto.randomUUID(),
  actor: "t",
  recorded_at: "2026-11-29T10:04:00.000Z",
  reason: "worker died",
});

/** A day-two audit event (a restart of a stopped runner), deterministic for reference runs. */
export const restartEvent = () => ({
  kind: "runner_restarted" as const,
  event_id: "5e5e5e5e-0000-4000-8000-000000000001",
  actor: "t",
  recorded_at: "2026-11-29T10:05:00.000Z",
  reason: "stopped by the host's maintenance",
  model: "eligible_orders",
  application_id: "sluice-orders-eligible_orders",
  container: {
    id: "c".repeat(64),
    name: "sluice-orders-eligible_orders",
    generation: "g1",
    operation_id: null,
    artifact_sha256: "a".repeat(64),
    plan_sha256: "b".repeat(64),
    image_id: `sha256:${"d".repeat(64)}`,
    volume_instance: "0badc0de-0000-4000-8000-0000000000ff",
    exit_code: 143,
    oom_killed: false,
    exit_kind: "closed",
    runner_reason: "SIGTERM",
    started_at: "2026-11-29T09:00:00.000Z",
    finished_at: "2026-11-29T10:00:00.000Z",
  },
  group_state: "Empty",
  waited_for_group: false,
  committed: { "0": "3" },
  after_skip: null,
});

/** The worker's lock UUID (deterministic, so reference and crash runs write the same bytes). */
export const WORKER_LOCK = "0badc0de-0000-4000-8000-000000000001";

/** Prepare state in-process, under a lock released before the worker runs. */
async function prepared(
  config: StateStoreConfig,
  fn: (store: StateStore, snap: StateSnapshot) => Promise<Record<string, unknown>>,
  options: { lockId?: string } = {},
): Promise<Record<string, unknown>> {
  const store = openStateStore(config, options.lockId ? { uuid: () => options.lockId! } : {});
  try {
    await store.init();
    await store.acquireLock({ actor: "setup" });
    const arg = await fn(store, await store.load());
    await store.releaseLock();
    return arg;
  } finally {
    await store.close();
  }
}

async function seedRunner(store: StateStore, snap: StateSnapshot) {
  const own = ownedRunner(PROJECT, null);
  return { own, snap: await store.commitOwnership(snap, own) };
}

/** One transition run by the worker, with its preparation and its continuation. */
export interface Scenario {
  transition: StateTransition | "lock" | "break";
  /** What distinguishes it from another scenario of the same transition. */
  variant?: string;
  prepare(config: StateStoreConfig): Promise<Record<string, unknown>>;
  /**
   * From whatever a crash left (read under a fresh lock, integrity verified), continue with
   * public store operations to the transition's completed state and check it.
   */
  finish(store: StateStore, snap: StateSnapshot, arg: Record<string, unknown>): Promise<void>;
}

const count = (snap: StateSnapshot, kind: string) =>
  snap.history.events.filter((e) => e.kind === kind).length;

/** Every crash scenario: one per transition (two for commit), plus lock and break. */
export const SCENARIOS: Scenario[] = [
  {
    transition: "init",
    prepare: () => Promise.resolve({}),
    async finish(store) {
      const a = await store.identity();
      assert.equal((await store.init()).store_id, a.store_id);
    },
  },
  {
    transition: "begin",
    prepare: (config) =>
      prepared(config, async (store, snap) => {
        const { own } = await seedRunner(store, snap);
        return { intent: runnerIntent(own), action: replaceAction(own) };
      }),
    async finish(store, snap, arg) {
      if (!snap.control) {
        snap = await store.beginOperation(snap, arg.intent as never, [arg.action as never]);
      }
      assert.equal(snap.control!.opened.version, 4);
      assert.equal(
        snap.control!.opened.operation_id,
        (arg.intent as { operation_id: string })
          .operation_id,
      );
      assert.equal(snap.control!.opened.checkpoints.length, 0);
    },
  },
  {
    transition: "checkpoint",
    prepare: (config) =>
      prepared(config, async (store, snap) => {
        const { own, snap: s1 } = await seedRunner(store, snap);
        const s = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
        await store.recordCheckpoint(s, checkpointChain()[0]);
        return { checkpoint: checkpointChain()[1] };
      }, { lockId: WORKER_LOCK }),
    async finish(store, snap) {
      let c = snap.control!.opened;
      if (c.checkpoints.length === 1) {
        // the worker died before its checkpoint: interrupt, resume, record it again
        snap = await store.recordInterruption(snap, incident());
        snap = await store.resumeOperation(snap, resumeRecord());
        snap = await store.recordCheckpoint(snap, checkpointChain()[1]);
        c = snap.control!.opened;
      }
      assert.deepEqual(c.checkpoints.map((x) => x.name), ["action_started", "old_closed"]);
    },
  },
  {
    transition: "interrupt",
    prepare: (config) =>
      prepared(config, async (store, snap) => {
        const { own, snap: s1 } = await seedRunner(store, snap);
        const s = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
        await store.recordCheckpoint(s, checkpointChain()[0]);
        return { incident: incident() };
      }),
    async finish(store, snap, arg) {
      const id = (arg.incident as { incident_id: string }).incident_id;
      if (snap.control!.opened.status === "in_progress") {
        snap = await store.recordInterruption(snap, arg.incident as never);
      }
      assert.equal(snap.control!.opened.incidents[0].incident_id, id);
      // the next history write archives an incident that only control holds (local)
      snap = await store.resumeOperation(snap, resumeRecord());
      assert.deepEqual(snap.history.events.map((e) => e.kind).slice(-2), [
        "incident",
        "resume_authorized",
      ]);
      assert.equal(count(snap, "incident"), 1);
    },
  },
  {
    transition: "resume",
    prepare: (config) =>
      prepared(config, async (store, snap) => {
        const { own, snap: s1 } = await seedRunner(store, snap);
        let s = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
        s = await store.recordCheckpoint(s, checkpointChain()[0]);
        await store.recordInterruption(s, incident());
        return { record: resumeRecord() };
      }),
    async finish(store, snap, arg) {
      const record = arg.record as ReturnType<typeof resumeRecord>;
      if (snap.control!.opened.version === 4) {
        const pending = await store.pendingResumeAuthorization(snap);
        if (pending) {
          // the archived authorization permits only its exact retry
          assert.equal(pending.authorization_id, record.authorization_id);
          await assert.rejects(store.resumeOperation(snap, resumeRecord()), /exact retry/);
        }
        snap = await store.resumeOperation(snap, record);
      }
      assert.equal(snap.control!.opened.version, 5);
      assert.equal(
        snap.control!.opened.resume_history[0].authorization_id,
        record.authorization_id,
      );
      assert.equal(count(snap, "resume_authorized"), 1);
      // the lookup verifies before it answers: the resumed operation is in progress again
      await assert.rejects(
        store.pendingResumeAuthorization(snap),
        (e) => e instanceof SluiceError && e.code === "BLOCKED_INTERRUPTION_REQUIRED",
      );
    },
  },
  {
    transition: "finalize",
    prepare: (config) =>
      prepared(config, async (store, snap) => {
        const { own, snap: s1 } = await seedRunner(store, snap);
        let s = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
        for (const cp of checkpointChain()) s = await store.recordCheckpoint(s, cp);
        await store.recordInterruption(s, incident());
        return { own };
      }),
    async finish(store, snap, arg) {
      const own = arg.own as OwnershipDocument;
      const opId = snap.control?.opened.operation_id;
      if (snap.control) snap = (await store.finalizeCompletedRunner(snap)).snapshot;
      // exactly one serial increment and one receipt, whatever the crash point
      assert.equal(snap.control, null);
      assert.equal(snap.ownership!.document.serial, own.serial + 1);
      assert.equal(count(snap, "runner_completed"), 1);
      const receipt = snap.history.events.find((e) => e.kind === "runner_completed")!;
      assert.ok(opId === undefined || receipt.operation_id === opId);
      assert.equal((await store.completedReceipt(receipt.operation_id!))?.control_cleared, true);
    },
  },
  {
    transition: "decide",
    prepare: (config) =>
      prepared(config, async (store, snap) => {
        const { own, snap: s1 } = await seedRunner(store, snap);
        let s = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
        for (const cp of checkpointChain().slice(0, 3)) s = await store.recordCheckpoint(s, cp);
        await store.recordInterruption(s, incident());
        return { decision: retentionDecision(s.control!.opened.operation_id) };
      }),
    async finish(store, snap, arg) {
      const decision = arg.decision as OperatorDecision;
      if (snap.control!.opened.decisions.length === 0) {
        snap = await store.recordDecision(snap, decision);
      }
      assert.deepEqual(snap.control!.opened.decisions, [decision]);
      // a history write lost after control is caught up by the next history write
      if (count(snap, "operator_decision") === 0) {
        snap = await store.resumeOperation(snap, resumeRecord());
      }
      assert.equal(count(snap, "operator_decision"), 1);
      assert.equal(snap.history.document.version, 4);
    },
  },
  {
    transition: "abandon",
    prepare: (config) =>
      prepared(config, async (store, snap) => {
        const { own, snap: s1 } = await seedRunner(store, snap);
        let s = await store.beginOperation(s1, runnerIntent(own), [replaceAction(own)]);
        s = await store.recordCheckpoint(s, checkpointChain()[0]);
        await store.recordInterruption(s, incident());
        return { own, abandon: abandonInput(s.control!.opened.operation_id) };
      }),
    async finish(store, snap, arg) {
      const own = arg.own as OwnershipDocument;
      const input = arg.abandon as ReturnType<typeof abandonInput>;
      if (snap.control) {
        // the archived abandonment freezes the control: only its clear remains
        if (count(snap, "operation_abandoned") === 1) {
          await assert.rejects(
            store.resumeOperation(snap, resumeRecord()),
            /BLOCKED_OPERATION_ABANDONED|was abandoned/,
          );
        }
        snap = await store.abandonOperation(snap, input);
      }
      assert.equal(snap.control, null);
      // ownership untouched, one audit record
      assert.equal(snap.ownership!.checksum, stateChecksum(own));
      assert.equal(count(snap, "operation_abandoned"), 1);
      const e = snap.history.events.find((x) => x.kind === "operation_abandoned")!;
      assert.ok(e.kind === "operation_abandoned" && e.operation_id === input.operation_id);
      await assert.rejects(store.abandonOperation(snap, input), /no pending operation/);
    },
  },
  {
    transition: "audit",
    prepare: (config) =>
      prepared(config, async (store, snap) => {
        const { own } = await seedRunner(store, snap);
        return { own, event: restartEvent() };
      }),
    async finish(store, snap, arg) {
      const own = arg.own as OwnershipDocument;
      const event = arg.event as ReturnType<typeof restartEvent>;
      if (count(snap, "runner_restarted") === 0) snap = await store.recordAudit(snap, event);
      // one record for one stop; ownership and control untouched
      assert.equal(count(snap, "runner_restarted"), 1);
      assert.equal(snap.history.document.version, 5);
      assert.equal(snap.control, null);
      assert.equal(snap.ownership!.checksum, stateChecksum(own));
      await assert.rejects(
        store.recordAudit(snap, event),
        /BLOCKED_DUPLICATE_EVENT|already recorded/,
      );
    },
  },
  {
    transition: "commit_ownership",
    prepare: (config) =>
      prepared(config, async (store, snap) => {
        await store.beginOperation(snap, {
          operation_id: crypto.randomUUID(),
          kind: "create",
          project: PROJECT,
          environment: null,
          actor: "t",
          created_at: "2026-11-29T09:00:00.000Z",
          original_state_checksum: stateChecksum(emptyOwnership(PROJECT, null)),
          reviewed_plan_sha256: null,
          details: {},
        });
        return { ownership: ownedRunner(PROJECT, null) };
      }),
    async finish(store, snap, arg) {
      const desired = arg.ownership as OwnershipDocument;
      if (snap.control) {
        snap = await store.commitOwnership(snap, desired, {
          operationId: snap.control.opened.operation_id,
        });
      }
      assert.equal(snap.control, null);
      assert.equal(snap.ownership!.checksum, stateChecksum(desired));
      assert.equal(count(snap, "ownership_committed"), 1);
    },
  },
  {
    transition: "commit_ownership",
    variant: "without an operation",
    prepare: (config) =>
      prepared(config, () => Promise.resolve({ ownership: ownedRunner(PROJECT, null) })),
    async finish(store, snap, arg) {
      const desired = arg.ownership as OwnershipDocument;
      if (snap.ownership === null) {
        // local: the commit was archived, never applied; its exact retry supersedes it
        snap = await store.commitOwnership(snap, desired);
      }
      assert.equal(snap.ownership!.checksum, stateChecksum(desired));
      assert.ok(count(snap, "ownership_committed") >= 1);
      const last = snap.history.events.at(-1)!;
      assert.ok(last.kind === "ownership_committed" && last.serial === 1);
    },
  },
  {
    transition: "lock",
    prepare: (config) =>
      prepared(config, (store, snap) => seedRunner(store, snap).then(() => ({}))),
    finish: () => Promise.resolve(), // the fresh process holds the lock: that is the check
  },
  {
    transition: "break",
    async prepare(config) {
      await prepared(config, (store, snap) => seedRunner(store, snap).then(() => ({})));
      const died = await runWorker("die", config, { actor: "doomed" });
      assert.equal(died.signal, "SIGKILL");
      const staleLockId = died.lines[0].lock_id as string;
      const probe = openStateStore(config);
      try {
        // PostgreSQL: wait until the server has ended the dead session
        for (let i = 0; i < 200 && config.backend === "postgres"; i++) {
          if (!(await probe.inspectLock()).held) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        const status = await probe.inspectLock();
        assert.equal(status.held, config.backend === "local", status.diagnosis);
        assert.equal(status.stale, config.backend === "local", status.diagnosis);
      } finally {
        await probe.close();
      }
      return { staleLockId };
    },
    finish: () => Promise.resolve(),
  },
];

/** A retention-loss acceptance at old_removed (deterministic: same bytes in every run). */
export function retentionDecision(operationId: string): OperatorDecision {
  return {
    decision_id: "7e57dec1-0000-4000-8000-000000000001",
    decision: "accept_retention_loss",
    operation_id: operationId,
    actor: "operator",
    recorded_at: "2026-11-29T10:05:00.000Z",
    reason: "retention overtook the stopped runner; the lost records are accepted",
    last_checkpoint: "old_removed",
    partitions: [{ topic: "raw_orders", partition: 0, from: "5", to: "9", lost: "4" }],
    evidence: { group: "Empty" },
  };
}

/** An abandonment of `operationId` (deterministic). */
export function abandonInput(operationId: string) {
  return {
    operation_id: operationId,
    actor: "operator",
    recorded_at: "2026-11-29T10:06:00.000Z",
    reason: "the state volume was removed by hand; this operation can never continue",
    evidence: { volume: "absent" },
  };
}

/** A scenario's name: its transition and variant. */
export function scenarioName(sc: Scenario): string {
  return `${sc.transition}${sc.variant ? ` ${sc.variant}` : ""}`;
}

/**
 * Continue from whatever a crash left, as a fresh process does: break the dead writer's stale
 * local lock explicitly (never silently), take the lock (PostgreSQL: once the server has ended
 * the dead session), read with every integrity check, and finish the scenario.
 */
export async function recover(
  config: StateStoreConfig,
  sc: Scenario,
  arg: Record<string, unknown>,
): Promise<void> {
  const store = openStateStore(config);
  try {
    await store.init();
    const status = await store.inspectLock();
    if (config.backend === "local" && status.held) {
      assert.equal(status.stale, true, status.diagnosis);
      await store.breakStaleLock(status.holder!.lock_id);
    }
    await store.acquireLock({ actor: "recovery", timeoutMs: 30_000 });
    const snap = await store.load(); // throws on a torn or edited byte
    await sc.finish(store, snap, arg);
    assert.equal((await store.verifyIntegrity()).ok, true);
  } finally {
    await store.close();
  }
}
