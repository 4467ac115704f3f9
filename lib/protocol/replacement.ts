/**
 * The predicate replacement's boundary table, as data: the program the driver runs. Each row
 * is one line of the spec's "Durable boundary" table (spec, "Execution and interruption
 * boundaries"): the durable stage it starts from, the guard that must hold on a fresh
 * observation (a named function in `lib/runtime/replacement/guards.ts`), the one step it
 * permits — a provider action or a journal checkpoint — the fault site that step crosses, and
 * the blocker codes its guard can give.
 *
 * Everything that needs the order of the boundaries derives it from {@link REPLACEMENT_TABLE}:
 * the journal's checkpoint order and sequence validation ({@link CHECKPOINT_ORDER}), the
 * engine's finalization check, `decide` (a lookup of the rows of the durable stage), the
 * `state runner-status` display and the fault inventory. This module is pure data and imports
 * nothing above `lib/fault`, so `lib/state` and `lib/runtime` may both read it.
 *
 * @example
 * ```ts
 * import { CHECKPOINT_ORDER, REPLACEMENT_TABLE, rowsAt } from "./replacement.ts";
 * console.log(CHECKPOINT_ORDER.join(" → "));
 * for (const row of rowsAt("old_closed")) console.log(row.id, row.step, row.site.name);
 * console.log(REPLACEMENT_TABLE.length);
 * ```
 * @module
 */
import type { FaultSite } from "../fault/site.ts";
import { siteMaker } from "./table.ts";
import type { OperationJourney } from "./descriptor.ts";

const site = siteMaker(import.meta.url);

/** The fault sites of the replacement's provider actions and journal checkpoints. */
export const REPLACEMENT_SITES: Readonly<
  Record<
    | "actionStarted"
    | "term"
    | "oldClosed"
    | "remove"
    | "oldRemoved"
    | "create"
    | "replacementCreated"
    | "start"
    | "actionCompleted",
    FaultSite
  >
> = {
  actionStarted: site("journal.action_started", "journal", "record action_started"),
  term: site("docker.signal_term", "provider", "request TERM of the old runner"),
  oldClosed: site("journal.old_closed", "journal", "record old_closed with the final progress"),
  remove: site("docker.remove_old", "provider", "remove the exact stopped old container"),
  oldRemoved: site("journal.old_removed", "journal", "record old_removed"),
  create: site("docker.create_candidate", "provider", "create the stopped candidate"),
  replacementCreated: site(
    "journal.replacement_created",
    "journal",
    "record replacement_created with the candidate's container ID",
  ),
  start: site(
    "docker.start_candidate",
    "provider",
    "start (or, under resume, restart) the candidate",
  ),
  actionCompleted: site("journal.action_completed", "journal", "record action_completed"),
};

/**
 * The coordinator's own writes around the table: the intent before the first row, the
 * interruption and resume authorization of `state resume`, and the finalization of the last row.
 */
export const OPERATION_WRITES: Readonly<
  Record<"intent" | "interruption" | "resume" | "finalize", FaultSite>
> = {
  intent: site("journal.intent", "journal", "record the operation's intent and typed action"),
  interruption: site(
    "journal.interruption",
    "journal",
    "record the interruption of the operation (state resume under a new lock)",
  ),
  resume: site("journal.resume", "journal", "authorize the resume (resume_history)"),
  finalize: site(
    "state.finalize",
    "state",
    "commit desired ownership, write the completion receipt, clear control",
  ),
};

/**
 * The content-addressed mounted plan file a runner container mounts (written before the
 * container that mounts it is created, by both journeys).
 */
export const MOUNTED_PLAN_WRITE: FaultSite = site(
  "runtime.mounted_plan.write",
  "state",
  "write the content-addressed mounted plan file (temp file, fsync, rename)",
);

/** The kinds of step a row may permit (at most one per decision). */
export type StepKind = "record" | "term" | "remove" | "create" | "start" | "complete";

/** A row of the spec's table, verbatim (the operator reads these in `state runner-status`). */
export interface SpecRow {
  durable: string;
  requires: string;
  next: string;
}

/** Codes every stage can give: provider identities, volume, inventory, members, progress. */
export const EVERY_STAGE_BLOCKERS = [
  "BLOCKED_CLUSTER_CHANGED",
  "BLOCKED_TOPIC_MISSING",
  "BLOCKED_TOPIC_REPLACED",
  "BLOCKED_DOCKER_DAEMON_CHANGED",
  "BLOCKED_WRONG_IMAGE",
  "BLOCKED_WRONG_NETWORK",
  "BLOCKED_FOREIGN_GENERATION",
  "BLOCKED_VOLUME_MISSING",
  "BLOCKED_VOLUME_INSTANCE_CHANGED",
  "BLOCKED_EXTRA_GROUP_MEMBERS",
  "BLOCKED_OFFSETS_MISSING",
  "BLOCKED_RETENTION_LOSS",
  "BLOCKED_OFFSET_REGRESSION",
] as const;

/** Codes a container's generation check can give (the old runner's, or the candidate's). */
const GENERATION = [
  "BLOCKED_FOREIGN_GENERATION",
  "BLOCKED_WRONG_MOUNTED_PLAN",
  "BLOCKED_WRONG_IMAGE",
  "BLOCKED_WRONG_NETWORK",
  "BLOCKED_EXECUTION_DRIFT",
  "BLOCKED_ENVIRONMENT_DRIFT",
] as const;

/**
 * Codes of the clean-close rule (`notACleanClose` in lib/validation/runner_stop.ts): "a fresh
 * closed status, complete non-OOM/error-free process evidence" — for a replacement's old runner,
 * a runner removal and a restarted candidate alike.
 */
export const CLEAN_CLOSE_BLOCKERS = [
  "BLOCKED_UNKNOWN_EXIT",
  "BLOCKED_UNCLEAN_EXIT",
  "BLOCKED_OOM",
  "BLOCKED_CLOSE_STATUS_MISSING",
  "BLOCKED_CLOSE_STATUS_FOREIGN",
  "BLOCKED_STALE_STATUS",
] as const;

/** Codes of "no runner runs and nothing moved": the clean-close vector, an inactive group. */
const STOPPED = ["BLOCKED_OFFSET_JUMP_WHILE_STOPPED", "BLOCKED_GROUP_ACTIVE"] as const;

/** Codes of "the recorded candidate, exactly as desired, and nothing else". */
const RECORDED_CANDIDATE = [
  "BLOCKED_FOREIGN_GENERATION",
  "BLOCKED_CANDIDATE_MISSING",
  ...GENERATION,
] as const;

const S = REPLACEMENT_SITES;

// The rows, in the order of the spec's table. A durable stage may have several rows: the fresh
// observation selects one (e.g. old runner present → remove it; absent → its removal was
// acknowledged by absence). Literal types are kept so the names below derive from this value.
const ROWS = [
  {
    id: "record_action_started",
    stage: "intent",
    spec: {
      durable: "Intent only",
      requires: "Exact prior runner, valid progress, matching protected state",
      next: "Record action started",
    },
    guard: "priorRunnerRunning",
    step: "record",
    checkpoint: "action_started",
    site: S.actionStarted,
    blockers: ["BLOCKED_RUNNER_MISSING", ...GENERATION, "BLOCKED_RUNNER_NOT_RUNNING"],
  },
  {
    id: "request_term",
    stage: "action_started",
    spec: {
      durable: "Started",
      requires: "Same prior generation and unchanged identities",
      next: "Request TERM, then wait within the configured close bound",
    },
    guard: "oldStillRunning",
    step: "term",
    site: S.term,
    wait: "close",
    blockers: ["BLOCKED_OLD_VANISHED", ...GENERATION],
  },
  {
    id: "record_old_closed",
    stage: "action_started",
    spec: {
      durable: "Started, close observed",
      requires:
        "Fresh old-plan closed status, raw exit 0 or 143, no forced/OOM failure, inactive group, resumable monotonic offsets",
      next: "Record old_closed with its final progress",
    },
    guard: "oldClosedCleanly",
    step: "record",
    checkpoint: "old_closed",
    site: S.oldClosed,
    wait: "close",
    blockers: [
      "BLOCKED_OLD_VANISHED",
      ...GENERATION,
      ...CLEAN_CLOSE_BLOCKERS,
    ],
  },
  {
    id: "remove_old",
    stage: "old_closed",
    spec: {
      durable: "old_closed",
      requires: "Same stopped old container, volume and inactive progress",
      next: "Remove that exact stopped container without force or volume removal",
    },
    guard: "oldStoppedAsClosed",
    step: "remove",
    site: S.remove,
    blockers: [
      ...STOPPED,
      "BLOCKED_FOREIGN_GENERATION",
      "BLOCKED_OLD_RESTARTED",
      "BLOCKED_STALE_STATUS",
    ],
  },
  {
    id: "record_old_removed",
    stage: "old_closed",
    spec: {
      durable: "Old absent after old_closed",
      requires: "Exact absence and retained volume/progress",
      next: "Record old_removed",
    },
    guard: "oldAbsent",
    step: "record",
    checkpoint: "old_removed",
    site: S.oldRemoved,
    blockers: [...STOPPED, "BLOCKED_FOREIGN_GENERATION"],
  },
  {
    id: "create_candidate",
    stage: "old_removed",
    spec: {
      durable: "old_removed",
      requires: "Old and candidate absent, retained volume, inactive resumable progress",
      next: "Create one stopped candidate with this operation's generation labels",
    },
    guard: "noCandidateYet",
    step: "create",
    site: S.create,
    preparation: MOUNTED_PLAN_WRITE,
    blockers: [...STOPPED, "BLOCKED_FOREIGN_GENERATION"],
  },
  {
    id: "record_replacement_created",
    stage: "old_removed",
    spec: {
      durable: "Candidate present",
      requires: "Exact desired mounted plan, generation, image, network and volume; never started",
      next: "Record replacement_created with its container ID",
    },
    guard: "candidatePresentNeverStarted",
    step: "record",
    checkpoint: "replacement_created",
    site: S.replacementCreated,
    blockers: [...STOPPED, ...GENERATION, "BLOCKED_CANDIDATE_STARTED_EARLY"],
  },
  {
    id: "start_candidate",
    stage: "replacement_created",
    spec: {
      durable: "replacement_created",
      requires: "Exact stopped candidate and progress at least as recent as clean close",
      next: "Start that candidate without any offset initialization",
    },
    guard: "recordedCandidateStopped",
    step: "start",
    site: S.start,
    wait: "ready",
    blockers: [...RECORDED_CANDIDATE, ...STOPPED, "BLOCKED_CANDIDATE_START_REFUSED"],
  },
  {
    id: "record_action_completed",
    stage: "replacement_created",
    spec: {
      durable: "Candidate ready",
      requires:
        "Fresh desired-plan running status, one group member, unchanged identities and monotonic progress",
      next: "Record action completed",
    },
    guard: "candidateReady",
    step: "record",
    checkpoint: "action_completed",
    site: S.actionCompleted,
    wait: "ready",
    blockers: [...RECORDED_CANDIDATE, "BLOCKED_OFFSET_REGRESSION"],
  },
  {
    id: "restart_failed_candidate",
    stage: "replacement_created",
    spec: {
      durable: "Candidate failed before processing anything",
      requires:
        "Explicit resume; the candidate never reached RUNNING, exited with a documented start-up failure (exit 15, KAFKA_UNREACHABLE, KAFKA_ADMIN_FAILED, KAFKA_AUTHENTICATION_FAILED or KAFKA_AUTHORIZATION_FAILED), or its close after a TERM timed out (exit 15 CLOSE_TIMEOUT); or it was stopped from outside before it wrote a final status of its own: by a signal (137 not OOM, or 143) before its own first status (none, or another generation's), or killed (137, not OOM: a Docker daemon's shutdown, a docker kill) while its own status said STARTING, RUNNING or CLOSING; no OOM, committed positions still equal the clean-close vector (nothing of it committed), inactive group",
      next:
        "Start that candidate again once the cause is fixed (the evidence is recorded with the resume authorization); never fresh initial positions",
    },
    guard: "failedBeforeProcessingUnderResume",
    step: "start",
    site: S.start,
    wait: "ready",
    blockers: [
      ...RECORDED_CANDIDATE,
      ...STOPPED,
      "BLOCKED_CANDIDATE_STARTUP_FAILED",
      "BLOCKED_CANDIDATE_START_REFUSED",
    ],
  },
  {
    id: "restart_candidate",
    stage: "replacement_created",
    spec: {
      durable: "Candidate started, then closed",
      requires:
        "Explicit resume, fresh clean-close evidence (exit 0 or 143, no OOM), inactive group, retained valid progress; or, besides it, killed from outside (137, not OOM) while its own status said STARTING, RUNNING or CLOSING after it committed (positions past the clean close): Kafka's exactly-once continues it from its committed offsets, its open transaction aborted",
      next: "Restart that candidate; it never receives fresh initial positions",
    },
    guard: "closedCandidateUnderResume",
    step: "start",
    site: S.start,
    wait: "ready",
    blockers: [
      ...RECORDED_CANDIDATE,
      "BLOCKED_OFFSET_REGRESSION",
      "BLOCKED_CANDIDATE_FAILED",
      "BLOCKED_CANDIDATE_CLOSED",
      "BLOCKED_CANDIDATE_KILLED",
      "BLOCKED_CANDIDATE_START_REFUSED",
      ...CLEAN_CLOSE_BLOCKERS,
    ],
  },
  {
    id: "finalize",
    stage: "action_completed",
    spec: {
      durable: "Action completed",
      requires: "The complete successful checkpoint chain and the exact ready candidate",
      next: "Commit desired ownership state, finalize operation",
    },
    guard: "completedWithSuccess",
    step: "complete",
    site: OPERATION_WRITES.finalize,
    blockers: ["BLOCKED_ACTION_FAILED"],
  },
] as const;

/**
 * The spec's checkpoint names, in the order the table records them. The table below is the
 * source of the order ({@link CHECKPOINT_ORDER}); this list only gives the names a public type
 * of their own, and the compiler holds the two equal (`_TableRecordsEveryName`).
 *
 * @example
 * ```ts
 * import { CHECKPOINT_NAMES } from "./replacement.ts";
 * console.log(CHECKPOINT_NAMES.join(" → ")); // action_started → old_closed → ...
 * ```
 */
export const CHECKPOINT_NAMES = [
  "action_started",
  "old_closed",
  "old_removed",
  "replacement_created",
  "action_completed",
] as const;

/** A checkpoint name (one of {@link CHECKPOINT_NAMES}). */
export type CheckpointName = (typeof CHECKPOINT_NAMES)[number];

/** The names the table's rows record: exactly {@link CheckpointName}, or this fails to compile. */
type TableCheckpoint = Extract<(typeof ROWS)[number], { checkpoint: string }>["checkpoint"];
type _TableRecordsEveryName = [CheckpointName] extends [TableCheckpoint]
  ? [TableCheckpoint] extends [CheckpointName] ? true : never
  : never;
const _tableRecordsEveryName: _TableRecordsEveryName = true;
void _tableRecordsEveryName;

/** The last durable point of an action: its intent only, or its last checkpoint. */
export type Stage = "intent" | CheckpointName;

/** The name of a guard; `lib/runtime/replacement/guards.ts` implements each one. */
export type GuardName = (typeof ROWS)[number]["guard"];

/** One row of the table. */
export interface ReplacementRow {
  /** Stable row ID (shown by `state runner-status`). */
  readonly id: string;
  /** The durable stage the row starts from. */
  readonly stage: Stage;
  /** The spec's row, verbatim. */
  readonly spec: SpecRow;
  /** The required observation, as a named guard. */
  readonly guard: GuardName;
  /** The one step the row permits. */
  readonly step: StepKind;
  /** The checkpoint a `record` row writes. */
  readonly checkpoint?: CheckpointName;
  /** The fault site the step crosses. */
  readonly site: FaultSite;
  /** A durable write the step makes before its action (the candidate's mounted plan file). */
  readonly preparation?: FaultSite;
  /** Which bounded wait applies while the guard waits (close: TERM → exit; ready: start → RUNNING). */
  readonly wait?: "close" | "ready";
  /** The codes the guard may give (besides {@link EVERY_STAGE_BLOCKERS}). */
  readonly blockers: readonly string[];
}

/** The table (every row, in order). */
export const REPLACEMENT_TABLE: readonly ReplacementRow[] = ROWS;

/**
 * The checkpoints in the order the table records them: the journal validates sequences against
 * it and the engine finalizes only the complete chain.
 */
export const CHECKPOINT_ORDER: readonly CheckpointName[] = REPLACEMENT_TABLE.flatMap((r) =>
  r.checkpoint ? [r.checkpoint] : []
);

/** Every durable stage, in order. */
export const STAGES: readonly Stage[] = ["intent", ...CHECKPOINT_ORDER];

/**
 * The rows that may apply at a durable stage, in table order.
 *
 * @example
 * ```ts
 * import { rowsAt } from "./replacement.ts";
 * console.log(rowsAt("old_removed").map((r) => r.step)); // ["create", "record"]
 * ```
 */
export function rowsAt(stage: Stage): readonly ReplacementRow[] {
  return REPLACEMENT_TABLE.filter((r) => r.stage === stage);
}

/**
 * The fault sites of a replacement, in the order a replacement crosses them: the intent, every
 * row's sites, the finalization, then the writes only `state resume` makes.
 *
 * @example
 * ```ts
 * import { replacementSites } from "./replacement.ts";
 * console.log(replacementSites().map((s) => s.name).join(", "));
 * ```
 */
export function replacementSites(): FaultSite[] {
  const out: FaultSite[] = [OPERATION_WRITES.intent];
  for (const r of REPLACEMENT_TABLE) {
    for (const s of [r.preparation, r.site]) if (s && !out.includes(s)) out.push(s);
  }
  out.push(OPERATION_WRITES.interruption, OPERATION_WRITES.resume);
  return out;
}

/** The writes only `state resume` makes: the interruption and the resume authorization. */
const RESUME_WRITES: readonly FaultSite[] = [
  OPERATION_WRITES.interruption,
  OPERATION_WRITES.resume,
];

/**
 * The predicate replacement, as the registry reads it: `apply --plan` of a reviewed format-6
 * plan crosses its table's sites, `state resume` its interruption and resume writes (and breaks
 * a killed worker's stale local lock). A replacement is the only mutation of its apply (spec:
 * the first replacement apply carries no other provider mutation, so that its recovery stays
 * independent of any other change): connector changes get their own code.
 *
 * @example
 * ```ts
 * import { REPLACEMENT_JOURNEY } from "./replacement.ts";
 * console.log(REPLACEMENT_JOURNEY.crossings.map((c) => c.by)); // ["replacement", "resume"]
 * ```
 */
export const REPLACEMENT_JOURNEY: OperationJourney<"replacement", "replacement" | "resume"> = {
  name: "replacement",
  kind: "runner_update",
  actions: ["replace_runner_predicate"],
  crossings: [
    {
      by: "replacement",
      command: "sluice apply --plan FILE (a reviewed format-6 plan)",
      sites: () => replacementSites().filter((s) => !RESUME_WRITES.includes(s)),
      transitions: ["begin", "checkpoint", "finalize"],
      locks: true,
    },
    {
      by: "resume",
      command: "sluice state resume",
      sites: () => RESUME_WRITES,
      transitions: ["interrupt", "resume"],
      locks: false,
      // PostgreSQL's lock ends with the session: only a local lock is broken (decisions D13)
      breaksStaleLock: true,
    },
  ],
  alone: [
    {
      code: "BLOCKED_MIXED_REPLACEMENT",
      against: "rest",
      ownOnce: true,
      message: ({ involved }) =>
        `a predicate replacement must be the only mutation of an apply; this plan has ${involved.length} actions (${
          involved.map((x) => x.type).join(", ")
        })`,
    },
    {
      code: "BLOCKED_CONNECTOR_WITH_REPLACEMENT",
      against: ["connector"],
      message: ({ others }) =>
        `a predicate replacement and connector changes (${
          others.map((x) => `${x.type} ${x.name}`).join(", ")
        }) cannot be applied together: a replacement is the only mutation of its apply. Apply the connector changes first (keep the old predicate for that plan), then plan the replacement`,
      evidence: ({ others }) => ({ connectors: others.map((x) => x.name) }),
    },
  ],
};
