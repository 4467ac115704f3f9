/**
 * A separate OS process for the lock-race, stale-lock and crash tests of the state layer.
 *
 * `deno run -A testing/state/state_worker.ts <mode> <config-json> [arg-json]`
 * - `race <config> {"actor","startAt","holdMs"}`: acquire at startAt, hold, release; prints JSON.
 * - `die <config> {"actor"}`: acquire, print, then SIGKILL itself while holding the lock.
 * - `transition <config> {"transition", "lockId", ...}`: one state transition, deterministic
 *   (fixed clock, the lock UUID from `lockId`), for crash injection: the test arms one fault
 *   site with `SLUICE_FAULT_POINT` + `SLUICE_TEST_ONLY_ALLOW_FAULTS=1` (lib/fault/site.ts).
 *   Prints `{"done":true,"crossed":[...]}` with every site crossing, in order.
 * - `recover <config> {"scenario", ...}`: a fresh process continues a crash scenario
 *   (`crash_scenarios.ts`) from what the crash left; prints `{"recovered":true}`.
 * @module
 */
import { SluiceError } from "../../lib/errors.ts";
import { guardFaultSwitch, onCrossing } from "../../lib/fault/site.ts";
import { openStateStore, type StateStoreConfig } from "../../lib/state/open.ts";
import { STATE_SITES } from "../../lib/protocol/state_sites.ts";
import { recover, scenarioName, SCENARIOS } from "./crash_scenarios.ts";

/** The fixed clock of a transition worker. */
export const WORKER_TIME = "2026-11-29T10:30:00.000Z";

const [mode, configText, argText] = Deno.args;
const config = JSON.parse(configText) as StateStoreConfig;
const arg = JSON.parse(argText ?? "{}");
guardFaultSwitch(new Set(STATE_SITES.map((s) => s.name)));
const crossed: string[] = [];
onCrossing((c) => crossed.push(`${c.site.name}:${c.side}`));
const store = openStateStore(config, {
  clock: () => new Date(WORKER_TIME),
  uuid: () => arg.lockId ?? crypto.randomUUID(),
});

function emit(value: unknown): void {
  console.log(JSON.stringify(value));
}

async function transition(): Promise<void> {
  if (arg.transition === "init") {
    await store.init();
    return;
  }
  if (arg.transition === "break") {
    await store.breakStaleLock(arg.staleLockId);
    return;
  }
  await store.acquireLock({ actor: "worker" });
  const snap = await store.load();
  switch (arg.transition) {
    case "lock":
      break;
    case "begin":
      await store.beginOperation(snap, arg.intent, [arg.action]);
      break;
    case "checkpoint":
      await store.recordCheckpoint(snap, arg.checkpoint);
      break;
    case "interrupt":
      await store.recordInterruption(snap, arg.incident);
      break;
    case "resume":
      await store.resumeOperation(snap, arg.record);
      break;
    case "finalize":
      await store.finalizeCompletedRunner(snap);
      break;
    case "decide":
      await store.recordDecision(snap, arg.decision);
      break;
    case "abandon":
      await store.abandonOperation(snap, arg.abandon);
      break;
    case "audit":
      await store.recordAudit(snap, arg.event);
      break;
    case "commit_ownership":
      await store.commitOwnership(
        snap,
        arg.ownership,
        snap.control ? { operationId: snap.control.opened.operation_id } : {},
      );
      break;
    default:
      throw new Error(`unknown transition ${arg.transition}`);
  }
  await store.releaseLock();
}

try {
  if (mode === "race") {
    while (Date.now() < arg.startAt) await new Promise((r) => setTimeout(r, 2));
    try {
      const owner = await store.acquireLock({ actor: arg.actor });
      emit({ won: true, lock_id: owner.lock_id, pid: Deno.pid });
      await new Promise((r) => setTimeout(r, arg.holdMs));
      await store.releaseLock();
    } catch (e) {
      if (!(e instanceof SluiceError)) throw e;
      emit({ won: false, code: e.code, message: e.message, holder: e.evidence?.holder ?? null });
    }
  } else if (mode === "die") {
    const owner = await store.acquireLock({ actor: arg.actor });
    emit({ lock_id: owner.lock_id, pid: Deno.pid });
    Deno.kill(Deno.pid, "SIGKILL");
  } else if (mode === "transition") {
    await transition();
    emit({ done: true, crossed });
  } else if (mode === "recover") {
    const sc = SCENARIOS.find((x) => scenarioName(x) === arg.scenario);
    if (!sc) throw new Error(`unknown scenario ${arg.scenario}`);
    await recover(config, sc, arg);
    emit({ recovered: true });
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
} finally {
  await store.close().catch(() => {});
}
