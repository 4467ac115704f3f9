/**
 * Private: a separate OS process used by the lock-race, stale-lock and crash tests.
 *
 * `deno run -A lib/state/_state_worker.ts <mode> <config-json> [arg-json]`
 * - `race <config> {"actor","startAt","holdMs"}`: acquire at startAt, hold, release; prints JSON.
 * - `die <config> {"actor"}`: acquire, print, then SIGKILL itself while holding the lock.
 * - `transition <config> {"scenario", ...}`: one state transition, for crash injection
 *   (`SLUICE_STATE_CRASH_AT`/`SLUICE_STATE_CRASH_SIDE` kill it mid-way).
 * @module
 */
import { SluiceError } from "../errors.ts";
import { checkpointChain, replaceAction, runnerIntent } from "./_fixtures.ts";
import { openStateStore, type StateStoreConfig } from "./open.ts";

const [mode, configText, argText] = Deno.args;
const config = JSON.parse(configText) as StateStoreConfig;
const arg = JSON.parse(argText ?? "{}");
const store = openStateStore(config);

function emit(value: unknown): void {
  console.log(JSON.stringify(value));
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
    await store.acquireLock({ actor: "worker" });
    let snap = await store.load();
    switch (arg.scenario) {
      case "drive": {
        const own = snap.ownership!.document;
        snap = await store.beginOperation(
          snap,
          runnerIntent(own, { operationId: arg.operationId }),
          [
            replaceAction(own),
          ],
        );
        for (const cp of checkpointChain()) snap = await store.recordCheckpoint(snap, cp);
        break;
      }
      case "interrupt":
        await store.recordInterruption(snap, arg.incident);
        break;
      case "resume":
        await store.resumeOperation(snap, arg.record);
        break;
      case "finalize":
        await store.finalizeCompletedRunner(snap);
        break;
      case "commit":
        await store.commitOwnership(snap, arg.ownership, {
          operationId: snap.control!.opened.operation_id,
        });
        break;
      default:
        throw new Error(`unknown scenario ${arg.scenario}`);
    }
    await store.releaseLock();
    emit({ done: true });
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
} finally {
  await store.close().catch(() => {});
}
