/**
 * The transition function of a create: a walk of the create table (`lib/protocol/create.ts`) in
 * its order. From fresh readings (`create_reading.ts`) each row's guard (keyed by its step) says
 * whether the row is already behind (skip), is the one step to take, is a bounded wait, or is
 * blocked; the topic rows (`per: "topic"`) are asked for each topic to create and the runner rows
 * (`per: "runner"`) for each runner, in intent order, before the rows after them.
 * {@link decideCreate} is what the continuation (`create.ts`, through `journey_driver.ts`) runs
 * and {@link createNext} is what `state runner-status` reports: one function, so the report names
 * the row the continuation takes. The order lives only in the table: a guard knows its own row's
 * condition, never which row comes next.
 *
 * A row counts as behind only when what it made carries this operation's recorded identities
 * (`details.identities`): the volume its instance label, file and operation label; the container
 * its name, operation, generation, artifact and mounted plan; the group exactly the recorded
 * positions; a topic the planned partitions (Kafka assigns topic IDs and a topic carries no
 * labels: a planned topic, absent when the intent was recorded under the lock, found with the
 * planned partition count is the one whose create response was lost). A look-alike not bound to
 * this operation blocks (`BLOCKED_UNOWNED_RUNTIME`, `BLOCKED_UNOWNED_TOPIC`); it is never adopted.
 * A row passed on what an earlier run made says so once per run (its `adopted`, `ready` event:
 * the decision's {@link CreateNote}s).
 *
 * @example
 * ```ts
 * import { decideCreate } from "./create_next.ts";
 * // const d = decideCreate(await readCreate(ctx, plan, snap, ids));
 * // d.kind → "create_topic" | "create_volume" | … | "commit" | "wait" | "blocked"
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { Plan } from "../plan/plan.ts";
import {
  CREATE_TABLE,
  type CreateRow,
  createRow,
  type CreateStepKind,
} from "../protocol/create.ts";
import type { StateSnapshot } from "../state/store.ts";
import { type Blocker, blocker, blockerError } from "../validation/blocker.ts";
import { checkGeneration } from "../validation/runner_checks.ts";
import { notACleanClose, outsideStopOf } from "../validation/runner_stop.ts";
import { notTheSetReady } from "../validation/group_member.ts";
import type { RuntimeContext } from "./apply_context.ts";
import { identitiesOf, subjectOf } from "./create_identities.ts";
import {
  type CreateReadings,
  type CreateRunnerReading,
  missingImageOrNetwork,
  readCreate,
  type TopicReading,
} from "./create_reading.ts";
import type { BlockedDecision, WaitDecision } from "./journey_driver.ts";
import { LABEL } from "./labels.ts";
import { blockedAt, nextAt, type NextStep } from "./next_step.ts";
import { walkTable } from "./table_walk.ts";
import type { ProgressEventBody } from "./progress.ts";

/** What this run did that a fresh read cannot tell apart (never trusted across processes). */
export interface CreateMemory {
  /** The rows this run crossed or passed, by {@link noteKey}. */
  readonly done: ReadonlySet<string>;
  /** The rows this run crossed itself (created, not adopted), by {@link noteKey}. */
  readonly created: ReadonlySet<string>;
  /** The container of each runner (by {@link subjectOf}) this run created or adopted. */
  readonly containers: ReadonlyMap<string, string>;
}

/**
 * The key of a row for one subject (a topic's name, a runner's model) in {@link CreateMemory}.
 *
 * @example
 * ```ts
 * import { noteKey } from "./create_next.ts";
 * console.log(noteKey("create_volume", "orders")); // create_volume:orders
 * ```
 */
export function noteKey(step: CreateStepKind, subject: string): string {
  return `${step}:${subject}`;
}

/**
 * A row passed on what is already there: the run remembers it (`key`), says it once (`event`,
 * null: nothing to say) and keeps what it found (a topic's ID, a container's ID, a runner ready).
 */
export interface CreateNote {
  key: string;
  event: (ProgressEventBody & { boundary: string }) | null;
  found?:
    | { kind: "topic"; name: string; id: string }
    | { kind: "container"; subject: string; id: string }
    | { kind: "ready"; subject: string };
}

/** What every decision carries: the rows it passed on what was already there. */
interface Noted {
  notes: CreateNote[];
}

/** A step to take: the row that authorized it, and what it is about. */
export type CreateGo =
  & Noted
  & (
    | { kind: "create_topic"; row: CreateRow; topic: TopicReading; detail: string }
    | {
      kind:
        | "create_volume"
        | "position_offsets"
        | "write_mounted_plan"
        | "create_container"
        | "write_volume_instance"
        | "start_container";
      row: CreateRow;
      runner: CreateRunnerReading;
      detail: string;
      /** A start again: the exit code of the run that exited before RUNNING (null: first). */
      exitedBefore: number | null;
    }
    | {
      kind: "commit";
      row: CreateRow;
      /** The commit is recorded already: only the operation's clear remains. */
      recorded: boolean;
      detail: string;
    }
  );

/** The bounded wait on the row that waits: a started runner's RUNNING report. */
export interface CreateWait extends WaitDecision, Noted {
  row: CreateRow;
  runner: CreateRunnerReading;
  detail: string;
}

/** The blockers a row gave (`row` null: none). */
export interface CreateBlocked extends BlockedDecision, Noted {
  row: CreateRow | null;
}

/** What {@link decideCreate} decides. */
export type CreateDecision = CreateGo | CreateWait | CreateBlocked;

type Verdict =
  | { kind: "skip"; note?: CreateNote }
  | { kind: "go"; detail: string; exitedBefore?: number; note?: CreateNote }
  | {
    kind: "wait";
    detail: string;
    timedOut: (boundMs: number) => string;
    note?: CreateNote;
  }
  | { kind: "blocked"; blockers: Blocker[]; note?: CreateNote };

interface View {
  readings: CreateReadings;
  memory: CreateMemory;
  /** The topic a topic row is asked about. */
  topic: TopicReading | null;
  /** The runner a runner row is asked about. */
  runner: CreateRunnerReading | null;
}

const SKIP: Verdict = { kind: "skip" };

function topicOf(v: View): TopicReading {
  if (!v.topic) throw new Error("a topic row was asked without a topic");
  return v.topic;
}

function runnerOf(v: View): CreateRunnerReading {
  if (!v.runner) throw new Error("a runner row was asked without a runner");
  return v.runner;
}

/** Something carries the runner's application ID that this operation did not create. */
function unowned(v: View, what: string, evidence: Record<string, unknown>): Verdict {
  return {
    kind: "blocked",
    blockers: [blocker(
      "BLOCKED_UNOWNED_RUNTIME",
      `application ID ${
        runnerOf(v).artifact.application_id
      }: ${what}; sluice adopts only what operation ${v.readings.operationId} created`,
      { evidence },
    )],
  };
}

function about(r: CreateRunnerReading): string {
  const i = r.identity.instance;
  return `model ${r.identity.model}${
    i === undefined ? "" : ` instance ${i}`
  } (${r.artifact.application_id})`;
}

/**
 * Why a set's instances are not ready as one group yet (null: they are, or `r` is a single
 * runner or not the set's last instance): every instance of the set read (`notTheSetReady`, the
 * one rule `status` applies too). The table runs each runner's rows in turn, so an instance is
 * created, started and RUNNING before the next is created; the set is ready once its last one
 * is, with the group's N members holding every input partition (one generation throughout:
 * one predicate, however the partitions move between its members meanwhile).
 */
function setNotReady(v: View, r: CreateRunnerReading): string | null {
  if (r.identity.instance === undefined) return null;
  const set = v.readings.runners.filter((x) =>
    x.identity.model === r.identity.model && x.identity.instance !== undefined
  ).sort((x, y) => x.identity.instance! - y.identity.instance!);
  if (r.identity.instance !== set.length - 1) return null;
  const statuses = set.map((x) =>
    x.obs.containers.length === 1 ? x.obs.containers[0].runnerStatus : null
  );
  const input = r.obs.kafka.input;
  return notTheSetReady(
    r.obs.kafka.group.members,
    statuses,
    r.identity.generation,
    input ? { name: input.name, partitions: input.partitions } : null,
  );
}

/** The group's committed offsets are exactly the recorded initial positions. */
function atRecordedPositions(r: CreateRunnerReading): boolean {
  const committed = r.obs.kafka.committed;
  return Object.keys(committed).length === r.identity.offsets.length &&
    r.identity.offsets.every((o) => committed[String(o.partition)] === o.offset);
}

/** The row of `key` passed on a `resource` this operation made in an earlier run: adopted. */
function adoption(
  key: string,
  resource: "topic" | "volume" | "container",
  name: string,
  message: string,
  found?: CreateNote["found"],
): CreateNote {
  const boundary = resource === "topic"
    ? "create_topic"
    : resource === "volume"
    ? "create_volume"
    : "create_container";
  return {
    key,
    event: { kind: "adopted", boundary, resource, name, message },
    ...(found ? { found } : {}),
  };
}

/** Each row's condition on fresh readings (its place in the order is the table's). */
const GUARDS: { readonly [S in CreateStepKind]: (v: View) => Verdict } = {
  // continued, the intent is recorded: ownership must be its original state (or that plus
  // exactly its creations, a local commit killed before its clear)
  intent: ({ readings }) =>
    readings.changedOwnership ? { kind: "blocked", blockers: [readings.changedOwnership] } : SKIP,
  create_topic: (v) => {
    const t = topicOf(v);
    const key = noteKey("create_topic", t.name);
    if (v.memory.done.has(key)) return SKIP;
    if (!t.seen) return { kind: "go", detail: `topic ${t.name} is absent` };
    if (t.seen.partitions !== t.partitions) {
      return {
        kind: "blocked",
        blockers: [blocker(
          "BLOCKED_UNOWNED_TOPIC",
          `topic ${t.name} has ${t.seen.partitions} partitions, not the ${t.partitions} this operation creates; sluice never adopts it`,
          { evidence: { topic: t.name, partitions: t.seen.partitions, planned: t.partitions } },
        )],
      };
    }
    // the one whose create response was lost (runbook: create journey)
    return {
      kind: "skip",
      note: adoption(
        key,
        "topic",
        t.name,
        `${t.name} adopted (created by this operation, id ${t.seen.id})`,
        { kind: "topic", name: t.name, id: t.seen.id },
      ),
    };
  },
  create_volume: (v) => {
    const r = runnerOf(v);
    const id = r.identity;
    const missing = missingImageOrNetwork(r.artifact, r.image, r.networkId);
    if (missing) return { kind: "blocked", blockers: [missing] };
    const key = noteKey("create_volume", subjectOf(id));
    let note: CreateNote | undefined;
    if (!v.memory.done.has(key)) {
      const vol = r.obs.volume;
      if (!vol.exists) return { kind: "go", detail: `${about(r)}: its state volume is absent` };
      const ours = vol.instanceLabel === id.volume_instance &&
        // this operation's volume, or the one a removal kept for this model declared again
        (vol.labels[LABEL.operationId] === v.readings.operationId ||
          id.resumed?.volume_kept === true) &&
        // the file is written through the runner's own mount after its create; before that (or
        // with no container mounting the volume) only the label can be read (docs/decisions.md D11)
        (vol.instanceFile === id.volume_instance || vol.instanceFile === null);
      if (!ours) {
        return unowned(v, `volume ${id.volume} is not the instance this operation created`, {
          volume: id.volume,
          label: vol.instanceLabel,
          file: vol.instanceFile,
          operation: vol.labels[LABEL.operationId] ?? null,
          expected: id.volume_instance,
        });
      }
      note = adoption(
        key,
        "volume",
        id.volume,
        `${id.volume} adopted (instance ${id.volume_instance}, ${
          id.resumed ? `kept by removal ${id.resumed.retained.removed_by}` : "this operation's"
        })`,
      );
    }
    // nothing but this operation's container (name, generation, operation) carries the ID
    const foreign = r.obs.containers.filter((c) =>
      c.name !== id.container || c.labels.operationId !== v.readings.operationId ||
      c.labels.generation !== id.generation
    );
    if (foreign.length > 0) {
      return {
        ...unowned(v, "a container carries it that this operation did not create", {
          containers: foreign.map((c) => ({
            id: c.id,
            name: c.name,
            generation: c.labels.generation,
          })),
        }),
        note,
      };
    }
    return { kind: "skip", note };
  },
  position_offsets: (v) => {
    const r = runnerOf(v);
    const id = r.identity;
    const key = noteKey("position_offsets", subjectOf(id));
    if (v.memory.done.has(key)) return SKIP;
    // a set has one group: instance 0's row positions it (the others' members may have joined)
    if ((id.instance ?? 0) > 0) return SKIP;
    const mine = r.obs.containers[0] ?? null;
    // the table positions the group before it creates the runner: a runner of this operation
    // that has started proves it done (its group may hold the member of a runner killed from
    // outside until the session timeout expires it: not a foreign member to refuse)
    if (mine?.everStarted) return { kind: "skip", note: { key, event: null } };
    const committed = r.obs.kafka.committed;
    if (r.obs.kafka.group.members.length > 0) {
      return unowned(
        v,
        "its consumer group has members while this operation's runner is not running",
        {
          members: r.obs.kafka.group.members,
        },
      );
    }
    if (Object.keys(committed).length === 0) {
      const recorded = new Map(id.offsets.map((o) => [o.partition, o.offset]));
      const short = r.obs.kafka.ranges.filter((x) =>
        BigInt(recorded.get(x.partition) ?? "0") < BigInt(x.earliest)
      );
      if (short.length > 0 || r.obs.kafka.ranges.length !== recorded.size) {
        return {
          kind: "blocked",
          blockers: [blocker(
            "BLOCKED_RETENTION_LOSS",
            `the recorded initial positions of ${r.artifact.application_id} are no longer retained; abandon the operation and plan again`,
            { evidence: { recorded: id.offsets, ranges: r.obs.kafka.ranges } },
          )],
        };
      }
      return { kind: "go", detail: `${about(r)}: its group has no committed offsets yet` };
    }
    if (!atRecordedPositions(r)) {
      return unowned(v, "its committed offsets are not the positions this operation recorded", {
        committed,
        recorded: id.offsets,
      });
    }
    return { kind: "skip", note: { key, event: null } };
  },
  write_mounted_plan: (v) => {
    const r = runnerOf(v);
    const key = noteKey("write_mounted_plan", subjectOf(r.identity));
    if (v.memory.done.has(key)) return SKIP;
    if (r.missingTopic !== null || !r.mounted) {
      return {
        kind: "blocked",
        blockers: [blocker("BLOCKED_TOPIC_MISSING", `topic ${r.missingTopic} does not exist`)],
      };
    }
    switch (r.mounted.file) {
      case "present":
        return { kind: "skip", note: { key, event: null } };
      case "corrupt":
        return {
          kind: "blocked",
          blockers: [blocker(
            "STATE_CORRUPT_MOUNTED_PLAN",
            `${r.mounted.path} does not hash to its name`,
          )],
        };
      case "absent":
        return { kind: "go", detail: `${about(r)}: its mounted plan file is not written yet` };
    }
  },
  create_container: (v) => {
    const r = runnerOf(v);
    const id = r.identity;
    const key = noteKey("create_container", subjectOf(id));
    if (v.memory.done.has(key)) return SKIP;
    const mine = r.obs.containers[0] ?? null;
    if (!mine) return { kind: "go", detail: `${about(r)}: no container yet` };
    const problems = checkGeneration(mine, r.artifactSha256, r.artifact.model);
    if (problems.length > 0 || mine.labels.planSha256 !== r.mounted?.sha256) {
      return unowned(
        v,
        `container ${mine.id.slice(0, 12)} is not the generation this operation creates`,
        { container: mine.id, problems: problems.map((b) => b.code) },
      );
    }
    return {
      kind: "skip",
      note: adoption(
        key,
        "container",
        id.container,
        `${id.container} adopted (${mine.id.slice(0, 12)})`,
        { kind: "container", subject: subjectOf(id), id: mine.id },
      ),
    };
  },
  write_volume_instance: (v) => {
    const r = runnerOf(v);
    const id = r.identity;
    const key = noteKey("write_volume_instance", subjectOf(id));
    if (v.memory.done.has(key)) return SKIP;
    const written = `${
      about(r)
    }: ${id.container} was created; its volume's instance file is written through its mount`;
    // a container this run created: the file is written through its mount (no helper container
    // is ever created, docs/decisions.md D11)
    if (v.memory.created.has(noteKey("create_container", subjectOf(id)))) {
      return { kind: "go", detail: written };
    }
    // a continuation finds it written (ours), absent (killed before the write), or something
    // else (not ours)
    const mine = r.obs.containers[0];
    const file = r.obs.volume.instanceFile;
    if (file === null) {
      if (mine?.everStarted) {
        return unowned(
          v,
          `volume ${id.volume} has no instance file although its runner has started`,
          {
            volume: id.volume,
            container: mine.id,
          },
        );
      }
      return { kind: "go", detail: written };
    }
    if (file !== id.volume_instance) {
      return unowned(
        v,
        `volume ${id.volume} holds instance ${file}, not the recorded ${id.volume_instance}`,
        { volume: id.volume, file, expected: id.volume_instance },
      );
    }
    return { kind: "skip", note: { key, event: null } };
  },
  // never started; or exited before RUNNING with its positions untouched (nothing of it was
  // committed: the same first start again); or was stopped from outside (a kill: a Docker
  // daemon's shutdown, a docker kill — not its own failure) or closed cleanly (its own CLOSED
  // status after a TERM from outside: a daemon's stop, a docker stop), whatever its positions:
  // it continues from its committed offsets and its open transaction is aborted (read_committed
  // never sees it), as any Kafka Streams instance killed and started again. A runner that
  // processed and then exited of its own accord (a final status of its own, or an OOM kill) is
  // not this journey's to restart
  start_container: (v) => {
    const r = runnerOf(v);
    const key = noteKey("start_container", subjectOf(r.identity));
    if (v.memory.done.has(key)) return SKIP;
    const c = r.obs.containers[0];
    if (!c) throw new Error("create row start_container: asked before its container exists");
    if (!c.everStarted && !c.running) {
      return { kind: "go", detail: `${about(r)}: ${c.name} was created and never started` };
    }
    if (c.running) return { kind: "skip", note: { key, event: null } };
    const neverRunning = (c.runnerStatus?.running_at ?? null) === null;
    const outside = outsideStopOf(c);
    const closed = notACleanClose(c).length === 0;
    if (outside === null && !closed && (!neverRunning || !atRecordedPositions(r))) {
      return {
        kind: "blocked",
        blockers: [blocker(
          "BLOCKED_RUNNER_EXITED",
          `runner ${c.name} exited with code ${c.exitCode}${
            c.oomKilled ? " (OOM-killed)" : ""
          } after it processed records; abandon the operation ('sluice state abandon')`,
          { evidence: { exitCode: c.exitCode, oomKilled: c.oomKilled } },
        )],
      };
    }
    return {
      kind: "go",
      detail: `${about(r)}: ${c.name} is ${c.status} (exit ${c.exitCode}${
        c.runnerStatus?.reason ? ` ${c.runnerStatus.reason}` : ""
      }); ${
        outside !== null
          ? `it was stopped from outside (${outside.how}): started again from its committed positions`
          : closed
          ? "it closed cleanly (its own CLOSED status, a TERM from outside): started again from its committed positions"
          : "it exited before RUNNING with its positions untouched: started again"
      }`,
      exitedBefore: c.exitCode,
    };
  },
  // read-only: the container's state and the status file on its volume
  await_ready: (v) => {
    const r = runnerOf(v);
    const id = r.identity;
    const key = noteKey("await_ready", subjectOf(id));
    if (v.memory.done.has(key)) return SKIP;
    const c = r.obs.containers[0];
    if (!c) {
      return {
        kind: "blocked",
        blockers: [blocker(
          "BLOCKED_RUNNER_MISSING",
          `container ${v.memory.containers.get(subjectOf(id)) ?? id.container} disappeared`,
        )],
      };
    }
    if (!c.running && c.status === "exited") {
      return {
        kind: "blocked",
        blockers: [blocker(
          "BLOCKED_RUNNER_EXITED",
          `runner ${c.name} exited with code ${c.exitCode}${
            c.oomKilled ? " (OOM-killed)" : ""
          } before RUNNING`,
          { evidence: { exitCode: c.exitCode, oomKilled: c.oomKilled } },
        )],
      };
    }
    const s = c.runnerStatus;
    const running = s?.state === "RUNNING" && s.generation === id.generation &&
      s.plan_sha256 === r.mounted?.sha256;
    // a set is ready as one group: N members of its generation holding every input partition
    const notYet = running ? setNotReady(v, r) : null;
    if (running && notYet !== null) {
      return {
        kind: "wait",
        detail: `${about(r)}: ${c.name} is RUNNING; the set is not ready: ${notYet}`,
        timedOut: (bound) =>
          `the set of ${id.application_id} was not ready within ${
            bound / 1000
          }s (${notYet}); it was left as it is`,
      };
    }
    if (running) {
      return {
        kind: "skip",
        note: {
          key,
          event: {
            kind: "ready",
            boundary: "await_ready",
            container: id.container,
            message: `${id.container} is RUNNING`,
          },
          found: { kind: "ready", subject: subjectOf(id) },
        },
      };
    }
    return {
      kind: "wait",
      detail: `${about(r)}: ${c.name} has not reported RUNNING yet`,
      timedOut: (bound) =>
        `runner ${c.name} did not report RUNNING within ${bound / 1000}s; it was left as it is`,
    };
  },
  commit: ({ readings }) => ({
    kind: "go",
    detail: readings.committed
      ? "the commit is recorded; only clearing the operation remains"
      : "every runner reports RUNNING; commit ownership",
  }),
};

/** The decision a row's verdict is; a verdict its row does not declare is a programming error. */
function decisionOf(
  row: CreateRow,
  v: Exclude<Verdict, { kind: "skip" }>,
  view: View,
  notes: CreateNote[],
): CreateDecision {
  const broken = (what: string) => new Error(`create row ${row.step}: its guard ${what}`);
  switch (v.kind) {
    case "blocked": {
      const undeclared = v.blockers.filter((b) => !row.blockers.includes(b.code));
      if (undeclared.length > 0) {
        throw broken(`gave undeclared blockers ${undeclared.map((b) => b.code).join(", ")}`);
      }
      return { kind: "blocked", row, blockers: v.blockers, notes };
    }
    case "wait": {
      // a row that waits crosses no site (read-only)
      if (row.site !== null) throw broken("waits, but the row crosses a site");
      const runner = runnerOf(view);
      return {
        kind: "wait",
        subject: subjectOf(runner.identity),
        timeoutCode: "UNKNOWN_OUTCOME_NOT_READY",
        row,
        runner,
        detail: v.detail,
        timedOut: v.timedOut,
        notes,
      };
    }
    case "go":
      if (row.site === null) throw broken("authorized a step, but the row crosses no site");
      switch (row.step) {
        case "create_topic":
          return { kind: row.step, row, topic: topicOf(view), detail: v.detail, notes };
        case "commit":
          return {
            kind: "commit",
            row,
            recorded: view.readings.committed,
            detail: v.detail,
            notes,
          };
        case "intent":
        case "await_ready":
          throw broken("authorized a step the continuation never takes");
        default:
          return {
            kind: row.step,
            row,
            runner: runnerOf(view),
            detail: v.detail,
            exitedBefore: v.exitedBefore ?? null,
            notes,
          };
      }
  }
}

const NOTHING_DONE: CreateMemory = { done: new Set(), created: new Set(), containers: new Map() };

/**
 * The one step the create table authorizes for these readings, a wait, or the blockers that
 * forbid any step (see the module documentation), with the rows it passed on what was already
 * there (`notes`). `memory` is what this run did (none: what `state runner-status` asks).
 *
 * @example
 * ```ts
 * import { decideCreate } from "./create_next.ts";
 * // decideCreate(readings).kind → "create_volume" while its volume is absent
 * ```
 */
export function decideCreate(
  readings: CreateReadings,
  memory: CreateMemory = NOTHING_DONE,
  table: readonly CreateRow[] = CREATE_TABLE,
): CreateDecision {
  const notes: CreateNote[] = [];
  const subjects = (per: CreateRow["per"]): View[] =>
    per === "operation"
      ? [{ readings, memory, topic: null, runner: null }]
      : per === "topic"
      ? readings.topics.map((topic) => ({ readings, memory, topic, runner: null }))
      : readings.runners.map((runner) => ({ readings, memory, topic: null, runner }));
  return walkTable(table, subjects, (row, view) => {
    const v = GUARDS[row.step](view);
    if (v.note && !memory.done.has(v.note.key)) notes.push(v.note);
    return v.kind === "skip" ? null : decisionOf(row, v, view, notes);
  });
}

/**
 * The error a blocked create throws: its one blocker as a plain error with that blocker's
 * evidence (the create journey's refusals have always had this shape), or all of them.
 *
 * @example
 * ```ts
 * import { refusal } from "./create_next.ts";
 * import { blocker } from "../validation/blocker.ts";
 * console.log(refusal([blocker("BLOCKED_UNOWNED_TOPIC", "t exists")]).message); // t exists
 * ```
 */
export function refusal(blockers: Blocker[]): SluiceError {
  if (blockers.length !== 1) return blockerError(blockers);
  const [b] = blockers;
  return new SluiceError(
    b.code,
    b.message,
    Object.keys(b.evidence).length > 0 ? { evidence: b.evidence } : {},
  );
}

/**
 * A decision as `state runner-status` reports it (it authorizes nothing).
 *
 * @example
 * ```ts
 * import { reportedCreate } from "./create_next.ts";
 * // reportedCreate(decideCreate(readings)).step → "create_volume" | … | "blocked"
 * ```
 */
export function reportedCreate(d: CreateDecision): NextStep {
  return d.kind === "blocked" ? blockedAt(d.row, d.blockers) : nextAt(d.row, d.detail);
}

/**
 * The next row of the pending create in `snap`: the continuation's own decision on fresh reads
 * (an intent that records no identities cannot be continued: blocked at its row).
 *
 * @example
 * ```ts
 * import { createNext } from "./create_next.ts";
 * // (await createNext(ctx, plan, snap)).step → "create_topic" | "create_volume" | … | "commit"
 * ```
 */
export async function createNext(
  ctx: RuntimeContext,
  plan: Plan,
  snap: StateSnapshot,
): Promise<NextStep> {
  let ids;
  try {
    ids = identitiesOf(snap.control!.opened.intent);
  } catch (error) {
    if (!(error instanceof SluiceError) || error.code !== "BLOCKED_CREATE_NOT_CONTINUABLE") {
      throw error;
    }
    return blockedAt(createRow("intent"), [blocker(error.code, error.message)]);
  }
  return reportedCreate(decideCreate(await readCreate(ctx, plan, snap, ids)));
}
