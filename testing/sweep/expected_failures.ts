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

/** Both sides of each site, on one backend. */
const sides = (backend: "local" | "postgres", ...sites: string[]) =>
  sites.flatMap((s) => [`${s}:before:${backend}`, `${s}:after:${backend}`]);

/** Every known failure. */
export const EXPECTED_FAILURES: readonly ExpectedFailure[] = [
  {
    defect:
      "create journey, no continuation: a kill after the create intent is recorded and before " +
      "ownership is committed leaves a pending `create` operation; `apply --plan` of the same " +
      "plan again refuses with BLOCKED_OPERATION_PENDING (exit 4, not in docs/runbook.md), " +
      "`state runner-status`/`state resume` only take a reviewed replacement, so no public " +
      "command finishes or abandons it (issue 12 item 3; topics, volume, offsets or a running " +
      "container may already exist)",
    fixer: "ways12",
    symptom: /BLOCKED_OPERATION_PENDING/,
    cases: [
      "journal.create_intent:after:local",
      ...sides(
        "local",
        "kafka.create_topic",
        "docker.create_volume",
        "kafka.position_offsets",
        "docker.create_runner",
        "docker.start_runner",
        "state.local.commit_ownership.history.temp",
        "state.local.commit_ownership.history.rename",
        "state.local.commit_ownership.history.dirsync",
        "state.local.commit_ownership.ownership.temp",
      ),
      "state.commit_ownership:before:local",
      "state.local.commit_ownership.ownership.rename:before:local",
      "journal.create_intent:after:postgres",
      ...sides(
        "postgres",
        "kafka.create_topic",
        "docker.create_volume",
        "kafka.position_offsets",
        "docker.create_runner",
        "docker.start_runner",
      ),
      "state.commit_ownership:before:postgres",
      "state.postgres.commit_ownership.commit:before:postgres",
    ],
  },
  {
    defect:
      "create journey, completed but unacknowledged: a kill after the local ownership file is " +
      "written (before control is cleared, or before the process reports) leaves ownership at " +
      "serial 1 with the create's control still pending; `apply --plan` again answers " +
      "PLAN_STALE_STATE (exit 3, 'plan again') instead of verifying the completed create as a " +
      "no-op (issue 12 item 3)",
    fixer: "ways12",
    symptom: /PLAN_STALE_STATE/,
    cases: [
      "state.commit_ownership:after:local",
      "state.local.commit_ownership.ownership.rename:after:local",
      ...sides(
        "local",
        "state.local.commit_ownership.ownership.dirsync",
        "state.local.commit_ownership.control.unlink",
        "state.local.commit_ownership.control.dirsync",
      ),
    ],
  },
  {
    defect: "stranded local finalize, receipt only: a kill after the runner_completed receipt is " +
      "renamed into history.json and before ownership.json is replaced leaves the receipt, the " +
      "prior ownership (serial 1) and the pending control; `state resume` answers " +
      "BLOCKED_OPERATION_FROZEN (exit 4, not in docs/runbook.md) every time and every later " +
      "apply is BLOCKED_OPERATION_PENDING, although the spec says a fresh process completes an " +
      "interrupted local clear (issue 12, first bullet and item 3)",
    fixer: "ways12",
    symptom: /BLOCKED_OPERATION_FROZEN/,
    cases: [
      "state.local.finalize.history.rename:after:local",
      ...sides(
        "local",
        "state.local.finalize.history.dirsync",
        "state.local.finalize.ownership.temp",
      ),
      "state.local.finalize.ownership.rename:before:local",
    ],
  },
  {
    defect: "stranded local finalize, ownership written: a kill after ownership.json is replaced " +
      "(serial 2) and before control.json is unlinked leaves the pending control beside the " +
      "result ownership; `state resume` with the original plan answers PLAN_STALE_STATE (exit 3) " +
      "before it reaches the retried clear, so no public command finishes it (issue 12, first " +
      "bullet)",
    fixer: "ways12",
    symptom: /PLAN_STALE_STATE/,
    cases: [
      "state.local.finalize.ownership.rename:after:local",
      ...sides("local", "state.local.finalize.ownership.dirsync"),
      "state.local.finalize.control.unlink:before:local",
    ],
  },
  {
    defect:
      "create journey, completed but unacknowledged on PostgreSQL: a kill after the commit that " +
      "wrote ownership and cleared control atomically leaves a completed create; `apply --plan` " +
      "of the same plan again answers PLAN_STALE_STATE (exit 3, 'plan again') instead of " +
      "verifying it as a no-op (issue 12 item 3: 'a repeated apply --plan of an already " +
      "completed create is a verified no-op')",
    fixer: "ways12",
    symptom: /PLAN_STALE_STATE/,
    cases: [
      "state.commit_ownership:after:postgres",
      "state.postgres.commit_ownership.commit:after:postgres",
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
