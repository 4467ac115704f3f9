/**
 * What a create operation does to ownership, written once: its result is the state it started
 * from plus exactly its creations, one serial later ({@link createdOwnership}); undoing exactly
 * those creations gives back the state it started from ({@link priorOwnership}, for a pending
 * operation whose local commit wrote the result before its clear) or the plan's protected state
 * ({@link completedBy}, for a repeated apply of a committed plan). Anything else changed
 * ownership under the operation.
 *
 * @example
 * ```ts
 * import { priorOwnership } from "./create_ownership.ts";
 * // const p = priorOwnership(store, snap, ids); "changed" in p ? p.changed.code : p.prior.serial
 * ```
 * @module
 */
import type { Plan } from "../plan/plan.ts";
import {
  emptyOwnership,
  type OwnershipDocument,
  type RetainedRunner,
  stateChecksum,
  withRetained,
} from "../state/ownership.ts";
import type { StateSnapshot, StateStore } from "../state/store.ts";
import { type Blocker, blocker } from "../validation/blocker.ts";
import {
  artifactOf,
  type CreateIdentities,
  retainedOf,
  type RunnerIdentity,
} from "./create_identities.ts";

/** `doc` without the named creations, one serial earlier, the released kept records back. */
function withoutCreations(
  doc: OwnershipDocument,
  topics: readonly string[],
  models: readonly string[],
  released: readonly RetainedRunner[],
): OwnershipDocument {
  return withRetained(
    {
      ...doc,
      serial: doc.serial - 1,
      topics: doc.topics.filter((t) => !topics.includes(t.name)),
      runners: doc.runners.filter((r) => !models.includes(r.model)),
    },
    [...(doc.retained ?? []), ...released],
  );
}

/**
 * The ownership a pending create started from, or the blocker when ownership is neither that
 * state nor that state plus exactly the recorded creations. A local commit writes history, then
 * ownership, then the clear: killed after the ownership, the state is already the result, and
 * undoing exactly the recorded creations must give back the intent's original state.
 *
 * @example
 * ```ts
 * import { priorOwnership } from "./create_ownership.ts";
 * // priorOwnership(ctx.store, snap, identitiesOf(snap.control!.opened.intent))
 * ```
 */
export function priorOwnership(
  store: Pick<StateStore, "project" | "environment">,
  snap: StateSnapshot,
  ids: CreateIdentities,
): { prior: OwnershipDocument } | { changed: Blocker } {
  const original = snap.control!.opened.intent.original_state_checksum;
  const current = snap.ownership?.document ?? emptyOwnership(store.project, store.environment);
  if (stateChecksum(current) === original) return { prior: current };
  const undone = withoutCreations(
    current,
    ids.topics.map((t) => t.name),
    ids.runners.map((r) => r.model),
    // a set's instances share one retained record: instance 0's identity carries it once
    ids.runners.flatMap((r) => r.resumed && (r.instance ?? 0) === 0 ? [r.resumed.retained] : []),
  );
  if (stateChecksum(undone) === original) return { prior: undone };
  return {
    changed: blocker(
      "BLOCKED_STATE_CHANGED",
      `ownership changed while create operation ${
        snap.control!.opened.operation_id
      } was pending: it is neither its original state nor that state plus its creations`,
      { evidence: { original, current: stateChecksum(current) } },
    ),
  };
}

/** What a create made of one runner, as ownership records it. */
export interface CreatedRunner {
  /** The recorded identities of the runner. */
  identity: RunnerIdentity;
  /** Its application ID (the artifact's). */
  application_id: string;
  /** The sha256 of the artifact it runs. */
  artifact_sha256: string;
}

/**
 * The result of a create: `prior` plus exactly its topics (with their IDs) and runners, one
 * serial later, the kept records of resumed models released.
 *
 * @example
 * ```ts
 * import { createdOwnership } from "./create_ownership.ts";
 * // const next = createdOwnership(prior, [{ name: "t", topic_id: "id" }], runners);
 * ```
 */
export function createdOwnership(
  prior: OwnershipDocument,
  topics: ReadonlyArray<{ name: string; topic_id: string }>,
  runners: readonly CreatedRunner[],
): OwnershipDocument {
  const next: OwnershipDocument = structuredClone(prior);
  next.serial = prior.serial + 1;
  for (const t of topics) next.topics.push({ name: t.name, topic_id: t.topic_id });
  for (const r of runners) {
    // a set is one record: instance 0's container and volume, and every instance in order
    if ((r.identity.instance ?? 0) > 0) continue;
    const set = runners.filter((x) =>
      x.identity.model === r.identity.model && x.identity.instance !== undefined
    ).sort((x, y) => x.identity.instance! - y.identity.instance!);
    next.runners.push({
      model: r.identity.model,
      application_id: r.application_id,
      artifact_sha256: r.artifact_sha256,
      volume: { name: r.identity.volume, instance_id: r.identity.volume_instance },
      container_name: r.identity.container,
      ...(set.length > 0
        ? {
          instances: set.map((x) => ({
            instance: x.identity.instance!,
            endpoint: x.identity.endpoint ?? null,
            container_name: x.identity.container,
            volume: { name: x.identity.volume, instance_id: x.identity.volume_instance },
          })),
        }
        : {}),
    });
  }
  next.topics.sort((x, y) => x.name.localeCompare(y.name));
  next.runners.sort((x, y) => x.model.localeCompare(y.model));
  const resumed = runners.filter((r) => r.identity.resumed).map((r) => r.identity.model);
  return withRetained(next, (next.retained ?? []).filter((r) => !resumed.includes(r.model)));
}

/**
 * The operation that already committed exactly this plan, if the current state is the plan's
 * protected state plus exactly its creations (one serial later, nothing after it); else null.
 *
 * @example
 * ```ts
 * import { completedBy } from "./create_ownership.ts";
 * // const operationId = completedBy(plan, snap);
 * ```
 */
export function completedBy(plan: Plan, snap: StateSnapshot): string | null {
  const own = snap.ownership;
  if (!own || own.document.serial !== plan.protected_state.serial + 1) return null;
  const last = snap.history.events.filter((e) =>
    e.kind === "ownership_committed" || e.kind === "runner_completed"
  ).at(-1);
  if (!last || last.kind !== "ownership_committed" || last.serial !== own.document.serial) {
    return null;
  }
  const topics = plan.actions.flatMap((a) => a.type === "create_topic" ? [a.topic] : []);
  const runners = plan.actions.flatMap((a) => a.type === "create_runner" ? [a] : []);
  for (const t of topics) if (!own.document.topics.some((x) => x.name === t)) return null;
  for (const r of runners) {
    const o = own.document.runners.find((x) => x.model === r.model);
    if (!o || o.artifact_sha256 !== r.artifact_sha256 || o.application_id !== r.application_id) {
      return null;
    }
  }
  // undo exactly those creations: the result must be the plan's protected state
  const prior = withoutCreations(
    own.document,
    topics,
    runners.map((r) => r.model),
    runners.flatMap((r) =>
      r.resume ? [retainedOf(r.model, artifactOf(plan, r.model), r.resume, r.instances)] : []
    ),
  );
  const expected = plan.protected_state.checksum ??
    stateChecksum(emptyOwnership(plan.project, plan.environment));
  return stateChecksum(prior) === expected ? last.operation_id : null;
}
