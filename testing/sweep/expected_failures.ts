/**
 * The crash sweep's known failures, in one place: each entry is a product defect the sweep
 * found — a state a kill leaves that no public command finishes and no documented blocker
 * names — with the cases that show it and the symptom they must still show. A listed case that
 * passes, or fails another way, fails the sweep: the list only shrinks as fixes land. Never
 * weaken an invariant instead of listing a case here.
 *
 * @example
 * ```ts
 * import { expectedFailure } from "./expected_failures.ts";
 * console.log(expectedFailure("docker.remove_old:after:local")); // undefined: it must pass
 * ```
 * @module
 */

/** A known defect and the cases that show it. */
export interface ExpectedFailure {
  /** What is wrong, in the operator's terms: what the kill leaves and what the recovery says. */
  defect: string;
  /** Who is fixing it, when known. */
  fixer: string | null;
  /** One of the case's problems must match (so a new, different failure is never hidden). */
  symptom: RegExp;
  /** Case IDs: `<site>:<side>:<backend>`. */
  cases: readonly string[];
}

/**
 * Every known failure. The crash pass has none: the create continuation (`apply --plan` again
 * continues or verifies a killed create), the local finalize completed by `state resume`, the
 * operator's decisions and the connector journey all finish or block precisely in every case;
 * `lock.postgres.break` is no site (docs/decisions.md D13). The lock-loss pass (issue 26 item 2)
 * found three defects, listed with the suite tier's cases that show them (and, for the mounted
 * plan's write, every case of the full tier; the full tier shows the other two at more sites).
 */
export const EXPECTED_FAILURES: readonly ExpectedFailure[] = [
  {
    defect:
      "a format-5 apply that loses its lock mid-operation answers a bare STATE_LOCK_LOST: `apply --plan` of a create, connector change or runner removal whose lock is taken over after its intent was recorded ends with exit 5 STATE_LOCK_LOST naming no operation, though its operation is pending (the reviewed replacement answers `committed: null` with the operation ID). The way out works (`apply --plan` again continues it once the lock is free); the answer hides what is pending. lib/runtime/journeys.ts `applyPlan` rethrows the store's error as it is; it should name the pending or just-begun operation and its commands (`pendingCommands`), as `writeIntent` does for a lost intent",
    fixer: null,
    symptom: /apply --plan answered exit 5 STATE_LOCK_LOST, naming no operation/,
    cases: [
      "lock_lost/journal.create_intent:after:local",
      "lock_lost/kafka.create_topic:before:local",
      "lock_lost/docker.create_runner:after:local",
      "lock_lost/docker.write_volume_instance:before:local",
      "lock_lost/connect.create_connector:after:local",
      "lock_lost/connect.update_connector_config:before:local",
      "lock_lost/journal.removal_intent:after:local",
      "lock_lost/docker.term_removed_runner:before:local",
      "lock_lost/state.local.commit_ownership.history.temp:after:local",
      "lock_lost/state.local.commit_ownership.history.rename:before:local",
      "lock_lost/state.local.commit_ownership.history.dirsync:after:local",
      "lock_lost/state.local.commit_ownership.ownership.temp:before:local",
      "lock_lost/state.local.commit_ownership.ownership.rename:after:local",
      "lock_lost/state.local.commit_ownership.ownership.dirsync:before:local",
      "lock_lost/docker.create_volume:after:postgres",
      "lock_lost/kafka.position_offsets:before:postgres",
      "lock_lost/docker.start_runner:after:postgres",
      "lock_lost/state.commit_ownership:before:postgres",
      "lock_lost/state.commit_connectors:before:postgres",
      "lock_lost/connect.delete_connector:after:postgres",
      "lock_lost/docker.remove_removed_runner:after:postgres",
      "lock_lost/state.commit_removal:before:postgres",
    ],
  },
  {
    defect:
      "a lock lost at the mounted plan's write is followed by the candidate's create: lib/runtime/replacement/drive.ts `act` verifies the lock (`providerMutation` around the whole step), then writes the mounted plan file (`runtime.mounted_plan.write`, a persistence point) and reads the image, then creates the candidate without verifying again — one provider mutation after the loss. The create journey writes its mounted plan before its `providerMutation` and is not affected. Fix: verify the lock after the plan file is written, right before `createCandidate` (e.g. write the file before `providerMutation`, as create.ts does)",
    fixer: "the owner of lib/runtime/replacement/drive.ts",
    symptom: /the process mutated docker\.createContainer/,
    cases: [
      "lock_lost/runtime.mounted_plan.write:before:local",
      "lock_lost/runtime.mounted_plan.write:after:local",
      "lock_lost/runtime.mounted_plan.write:before:postgres",
      "lock_lost/runtime.mounted_plan.write:after:postgres",
    ],
  },
  {
    defect:
      "on PostgreSQL a command whose lock-holding session was terminated (the lock taken over) can answer INTERNAL (exit 1) 'terminating connection due to administrator command' instead of STATE_LOCK_LOST, and the sweep's recovery stops there: the server's FATAL message arrives as the answer to the next query, which lib/state/postgres/pg_primitive.ts maps to STATE_LOCK_LOST only on its commit and verification paths (`#conn` sees the session dead only once the client's error event ran), not on its reads",
    fixer: "the owner of lib/state/postgres/pg_primitive.ts",
    symptom: /INTERNAL: terminating connection due to administrator command/,
    cases: [
      "lock_lost/journal.interruption:after:postgres",
      "lock_lost/state.postgres.decide.commit:after:postgres",
    ],
  },
];

/**
 * The known failure a case belongs to, if any.
 *
 * @example
 * ```ts
 * import { expectedFailure } from "./expected_failures.ts";
 * console.log(expectedFailure("journal.intent:before:local")?.defect);
 * ```
 */
export function expectedFailure(id: string): ExpectedFailure | undefined {
  return EXPECTED_FAILURES.find((f) => f.cases.includes(id));
}
