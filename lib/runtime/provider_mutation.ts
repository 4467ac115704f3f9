/**
 * The one way a journey changes a provider (Docker, Kafka, Connect): the lock re-verified first,
 * then the call at its fault site. Every journey — the replacement's table, create, runner
 * removal, connectors, the day-two commands — mutates through it, so a journey that lost its lock
 * stops before its next provider call instead of at its next state write (spec: the lock is
 * verified before every provider mutation). A lost lock throws `STATE_LOCK_LOST` from the store;
 * nothing of the call happens.
 *
 * @example
 * ```ts
 * import { providerMutation } from "./provider_mutation.ts";
 * // await providerMutation(ctx.store, createSite("start_container"), () => ctx.docker.startContainer(id));
 * ```
 * @module
 */
import { atSite, type FaultSite } from "../fault/site.ts";

/** What holds the lock a journey runs under (a state store). */
export interface LockHolder {
  verifyLock(): Promise<void>;
}

/**
 * Verify the lock, then make the provider call — at its fault site when it has one (the
 * replacement's table crosses its sites inside the step it runs).
 */
export async function providerMutation<T>(
  lock: LockHolder,
  site: FaultSite | null,
  call: () => Promise<T>,
): Promise<T> {
  await lock.verifyLock();
  return site === null ? await call() : await atSite(site, call);
}
