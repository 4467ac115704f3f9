/**
 * What the evidence must contain, derived from the code: the case list of every probe (the
 * fault matrix from the fault inventory, the rejections from the rejection catalogue, the
 * disruptions from their declared list, the random kills from their count and chains) and, for
 * every case kind, the checks a case must hold with the kind each must have and the values pinned
 * by the code (the armed site, the blocker code, the exit status, ...). `deno task verify` checks
 * every evidence file against this; the probes generate their cases from it.
 *
 * Only data and pure functions live here (no harness, no services), so the verifier can import it.
 *
 * @example
 * ```ts
 * import { expectedCaseIds } from "./catalogue.ts";
 * console.log(expectedCaseIds("rejections").length);
 * ```
 * @module
 */
import {
  faultInventory,
  type InventoryEntry,
  type Journey,
  type OperatorDecision,
  operatorDecision,
  PRE_OPERATOR_FAULT as PRE_OPERATOR,
  PRE_RESUME_FAULT as PRE_RESUME,
  resumeOnlySites,
} from "../lib/protocol/inventory.ts";
import { type DayTwoCommand, dayTwoSites } from "../lib/protocol/day_two.ts";
import {
  DESTROY_DATA_TABLE,
  destroyConnectorRow,
  destroyDataRow,
} from "../lib/protocol/destroy.ts";
import { JOURNEY_DESCRIPTORS } from "../lib/protocol/journeys.ts";
import type { Assertion, AssertionKind, CaseEvidence, CaseKind } from "./evidence.ts";
import { stoppedSample } from "./evidence.ts";

/** The state backends every case list covers. */
export const BACKENDS = ["local", "postgres"] as const;
/** A state backend. */
export type Backend = typeof BACKENDS[number];
/** The sides of a fault site. */
export const SIDES = ["before", "after"] as const;

/** The fault inventory recorded in every evidence file. */
export interface FaultInventory {
  count: number;
  sites: Array<{ name: string; kind: string }>;
}

/** The fault inventory as the code declares it (name and kind of every site, in order). */
export function inventory(): FaultInventory {
  const b = faultInventory();
  return { count: b.length, sites: b.map((x) => ({ name: x.site.name, kind: x.site.kind })) };
}

/**
 * Sites crossed only by `state resume`: the apply first dies at {@link PRE_RESUME_FAULT}, the
 * first resume worker carries the case's fault.
 */
export const RESUME_ONLY: ReadonlySet<string> = resumeOnlySites();
/** Where the apply dies when the case's own fault fires only during a resume. */
export const PRE_RESUME_FAULT = PRE_RESUME;
/**
 * Where the apply dies before an operator case's decision (a stopped operation: the old runner
 * closed and removed, no candidate yet).
 */
export const PRE_OPERATOR_FAULT = PRE_OPERATOR;
/** Which operator command an operator case arms (see `operatorDecision` in the inventory). */
export { type OperatorDecision, operatorDecision };

/**
 * How much of each probe's case list a run covers. `full` is every case (`deno task probes
 * -- --tier full`); `suite` is what the test suite (`./run test`, CI) runs to stay inside its
 * time budget, each of its case lists a declared part of the full one:
 *
 * - fault matrix: per journey and state backend, one point ({@link SUITE_MATRIX}); every other
 *   point is the crash sweep's (over fakes, every site in every test run) and `full`'s;
 * - rejections: each one once, the backends taken in turn ({@link suiteRejections}): what a
 *   rejection detects is read from the real providers, and the state backend only stores the
 *   refusal, which the fakes' blocker tests show on both backends; `full` runs each on both;
 * - disruptions: all but those marked `fullOnly` (with its reason);
 * - random kills: the first {@link RANDOM_KILLS}`.suitePerChain` of each chain (one per backend).
 */
export const TIERS = ["suite", "full"] as const;
/** A tier of {@link TIERS}. */
export type Tier = typeof TIERS[number];

/**
 * The journeys the real fault matrix drives: every crossing of the journey registry
 * (`lib/protocol/journeys.ts`, its descriptors' `crossings[].by`, in registry order), each armed
 * at the sites it crosses first — a journey's cases are its points in {@link SUITE_MATRIX}
 * and its harness in `fault_matrix.ts` ({@link matrixArms}):
 * `replacement` (`apply --plan` of a reviewed replacement, continued by `state resume`),
 * `resume` (the apply dies at {@link PRE_RESUME_FAULT}, the first resume is armed), `create`
 * (a fresh starter: `plan --out` — armed for the store's `init` writes — then `apply --plan`,
 * continued by the same `apply --plan` again), `operator` (the apply dies at
 * {@link PRE_OPERATOR_FAULT}; the operator's decision — `state accept-retention-loss` after
 * records were deleted below the committed offsets, or `state abandon` — is armed, then the
 * same decision again in a fresh process, and `state resume` after an acceptance) and
 * `connector` (`apply --plan` of a plan with a connector change, continued by the same
 * `apply --plan` again), `removal` (`apply --plan` of a declared runner removal,
 * `lifecycle.runner_removals`, continued by the same `apply --plan` again) and `day_two`
 * (`sluice skip-record` on a runner stopped by a record it cannot decode, or `sluice restart`
 * on one stopped by `docker stop` — {@link dayTwoCommand} — continued by the same command
 * again). The break of a dead worker's local lock (`lock.local.break`, first journey `resume`)
 * is armed in `state runner-status --break-stale-lock`, the command that crosses it: the apply
 * dies at {@link PRE_RESUME_FAULT} holding its lock, the armed runner-status dies at the
 * break, and the same runner-status again (breaking what is still stale) and `state resume`
 * finish the replacement.
 */
export const MATRIX_JOURNEYS: readonly Journey[] = [
  ...new Set(JOURNEY_DESCRIPTORS.flatMap((j) => j.crossings.map((c) => c.by))),
];

/**
 * Whether the real matrix arms `e`: its first journey has its cases in the matrix (its points in
 * {@link SUITE_MATRIX}, so `fault_matrix.ts` drives it). A journey registered without them
 * leaves its sites unarmed, never armed in another journey's harness, and fails
 * `catalogue_test.ts`.
 */
export function matrixArms(e: InventoryEntry): boolean {
  return SUITE_MATRIX.some((r) => r.journey === e.journeys[0]);
}

/** The day-two command a site is armed in. */
export type { DayTwoCommand };

/**
 * The day-two command a `day_two` site is armed in: `skip-record` for the rows only a skip
 * crosses (its record and offset move: a runner stopped by a record it cannot decode), `restart`
 * for every other (the restart's rows, the audit's state writes; a runner stopped by
 * `docker stop`) — the crash sweep's split (testing/sweep/day_two.ts).
 */
export function dayTwoCommand(site: string): DayTwoCommand {
  const crosses = (c: DayTwoCommand) => dayTwoSites(c).some((s) => s.name === site);
  return crosses("skip-record") && !crosses("restart") ? "skip-record" : "restart";
}

/** The ownership serial before a removal case's removal (its create of both models). */
export const REMOVAL_SERIAL_BEFORE = 1;
/** The ownership serial before a destroy case's destroy (its create of the starter). */
export const DESTROY_SERIAL_BEFORE = 1;

/** The ownership serial before a destroy case whose project owns connectors (starter, then both). */
export const DESTROY_CONNECTORS_SERIAL_BEFORE = 2;

/**
 * How a destroy case takes the starter down, by the site it arms: a site of the data rows
 * (`DESTROY_DATA_TABLE`: only a destroy that deletes data crosses them) is armed in
 * `plan --destroy --delete-data`; the connector row's site (only a destroy of a project that owns
 * connectors crosses it) in `plan --destroy` of the starter deployed with the pipeline's two
 * connectors; every other destroy site in `plan --destroy` of the starter alone, which keeps the
 * data.
 */
export type DestroyVariant = "keep-data" | "delete-data" | "connectors";

/** The destroy a destroy site is armed in (see {@link DestroyVariant}). */
export function destroyVariant(site: string): DestroyVariant {
  if (site === destroyConnectorRow().site?.name) return "connectors";
  return DESTROY_DATA_TABLE.some((r) => r.site?.name === site) ? "delete-data" : "keep-data";
}

/**
 * Whether a delete-data destroy killed at `site:side` died with the group still there: only
 * before the group's deletion (the first data row) does the group keep its offsets at the death.
 */
export function groupKeptAtDeath(site: string, side: "before" | "after"): boolean {
  return site === destroyDataRow("delete_group").site?.name && side === "before";
}

/** The journey the real matrix arms a site in (its first journey; null: not armed). */
export function matrixJourney(site: string): Journey | null {
  const e = faultInventory().find((x) => x.site.name === site);
  return e && matrixArms(e) ? e.journeys[0] : null;
}

/** The sites whose first process is `plan --out` on a fresh project (the store's creation). */
export function armsPlan(site: string): boolean {
  return /^state\.(local|postgres)\.init\./.test(site);
}

/**
 * The connector change a connector case applies, by site: the create of both pipeline
 * connectors (on a deployed starter, serial 1 → 2), a reviewed config update of the sink, or
 * the declared removal of the sink (on a deployed pipeline, serial 2 → 3).
 */
export type ConnectorChange = "create" | "update" | "delete";

/** The change a connector site is armed in (see {@link ConnectorChange}). */
export function connectorChange(site: string): ConnectorChange {
  return site === "connect.update_connector_config"
    ? "update"
    : site === "connect.delete_connector"
    ? "delete"
    : "create";
}

/** The ownership serial before a connector case's change (the code's view). */
export function connectorSerialBefore(change: ConnectorChange): number {
  return change === "create" ? 1 : 2;
}

/** One case of the real matrix: a fault point on a backend. */
export interface MatrixPoint {
  point: string;
  backend: Backend;
}

/** The points of {@link SUITE_MATRIX}, each with what it shows. */
const SUITE_POINTS: ReadonlyArray<{ backend: Backend; point: string; shows: string }> = [
  {
    backend: "local",
    point: "docker.remove_old:after",
    shows:
      "the old runner's real clean close holds the group's offsets while nothing runs; resume creates the candidate, which starts at exactly the close vector (EOS output, every record once)",
  },
  {
    backend: "postgres",
    point: "docker.create_candidate:after",
    shows:
      "a lost create response: the real daemon's candidate is adopted by its generation labels and mounted plan, never created twice",
  },
  {
    backend: "local",
    point: "journal.interruption:after",
    shows:
      "a resume killed after recording the interruption, the real old runner TERMed or not: the next resume continues the same operation",
  },
  {
    backend: "postgres",
    point: "journal.resume:after",
    shows:
      "a resume killed after its authorization committed in PostgreSQL: the next resume reuses it and completes against the real runner",
  },
  {
    backend: "local",
    point: "kafka.position_offsets:after",
    shows:
      "the new group's committed offsets positioned on the real broker, no runner yet: the create continues without positioning again",
  },
  {
    backend: "postgres",
    point: "docker.create_runner:after",
    shows:
      "a created, never started runner on the real daemon: the create adopts it and the runner starts from the positioned offsets",
  },
  {
    backend: "local",
    point: "kafka.move_offsets_to_retained:after",
    shows:
      "an acceptance killed after moving the real group's offsets past records DeleteRecords removed: the decision finishes once, the replacement completes",
  },
  {
    backend: "postgres",
    point: "journal.abandon:before",
    shows:
      "an abandonment killed before its write: containers, volume, offsets, members and topic IDs as the dead apply left them",
  },
  {
    backend: "local",
    point: "connect.create_connector:after",
    shows:
      "a connector created on the real Connect worker, its response lost: the same apply adopts it, never a second one",
  },
  {
    backend: "postgres",
    point: "connect.update_connector_config:after",
    shows:
      "a reviewed config update applied on the real worker, its response lost: the same apply commits exactly that config",
  },
  {
    backend: "local",
    point: "docker.term_removed_runner:after",
    shows:
      "TERM sent to the real runner being removed, the apply dead: its clean close keeps the offsets and the volume, the same apply removes it",
  },
  {
    backend: "postgres",
    point: "docker.remove_removed_runner:before",
    shows:
      "a removal killed with the runner closed but present: the same apply removes exactly that container, the volume kept",
  },
  {
    backend: "local",
    point: "docker.term_destroyed_runner:after",
    shows:
      "a destroy killed right after TERM reached the last real runner: its clean close keeps the offsets and the volume, the same apply removes it and the project plans a create from them",
  },
  {
    backend: "postgres",
    point: "state.commit_destroy:before",
    shows:
      "a destroy killed with the real container already removed and its commit not written: the same apply commits once, the volume, offsets and topics kept",
  },
  {
    backend: "local",
    point: "kafka.skip_record_offset:after",
    shows:
      "a skip killed after moving the real group past the poison record: exactly one partition moved by exactly one, the runner restarted once",
  },
  {
    backend: "postgres",
    point: "docker.start_stopped:after",
    shows:
      "a restart killed after starting the real stopped runner: the same generation runs, no offset moved, audited once",
  },
];

/** The journey that first crosses a fault point's site (the inventory's first journey). */
function firstJourney(point: string): Journey {
  const site = point.slice(0, point.lastIndexOf(":"));
  const e = faultInventory().find((x) => x.site.name === site);
  if (!e) throw new Error(`SUITE_MATRIX names ${point}, whose site is not in the fault inventory`);
  return e.journeys[0];
}

/**
 * The real matrix's `suite` tier: per journey and state backend, one fault point — a death there
 * leaves a state only the real services can show what follows from (the real runner's clean
 * close and exactly-once output, the group's membership and committed offsets, the daemon's
 * containers and labels, the Connect worker's connectors), recovered by the public commands in
 * fresh processes with every check of the case's kind. What a death at every other point of the
 * inventory leaves is proven over fakes of Docker, Kafka and Connect with the real state stores
 * by the crash sweep (testing/sweep: every site in every test run, every site × side × backend
 * in its full tier), and by this matrix's `full` tier. Each row names what it shows; its journey
 * is the one the inventory arms first at its site.
 */
export const SUITE_MATRIX: ReadonlyArray<
  { journey: Journey; backend: Backend; point: string; shows: string }
> = SUITE_POINTS.map((r) => ({ journey: firstJourney(r.point), ...r }));

/**
 * The real matrix's cases of a tier, in inventory order, local backend first. `full`: every
 * armed site × before/after × the backends it exists on. `suite`: the points of
 * {@link SUITE_MATRIX}, in the same order.
 */
export function matrixPoints(tier: Tier = "full"): MatrixPoint[] {
  const entries = faultInventory().filter(matrixArms);
  const suite = new Set(SUITE_MATRIX.map((r) => `${r.point}:${r.backend}`));
  const out: MatrixPoint[] = [];
  for (const backend of BACKENDS) {
    for (const e of entries) {
      if (e.site.backends && !e.site.backends.includes(backend)) continue;
      for (const side of SIDES) {
        const point = `${e.site.name}:${side}`;
        if (tier === "suite" && !suite.has(`${point}:${backend}`)) continue;
        out.push({ point, backend });
      }
    }
  }
  return out;
}

/**
 * The window of fault points at which a death leaves the runner stopped (the old one closed,
 * the candidate not started): from the TERM request to the candidate's start. A matrix case
 * armed inside it must take at least one sample while stopped. Named by site; a name missing
 * from the inventory is an error of the catalogue, reported by {@link stopsRunner}.
 */
export const STOPPED_WINDOW = {
  from: "docker.signal_term:after",
  to: "docker.start_candidate:before",
} as const;

/** The ordered fault points of the inventory (`site:before`, `site:after`, ...). */
export function faultPoints(): string[] {
  return inventory().sites.flatMap((b) => SIDES.map((s) => `${b.name}:${s}`));
}

/** Whether a death at `point` leaves the runner stopped (see {@link STOPPED_WINDOW}). */
export function stopsRunner(point: string): boolean {
  const points = faultPoints();
  const from = points.indexOf(STOPPED_WINDOW.from);
  const to = points.indexOf(STOPPED_WINDOW.to);
  if (from < 0 || to < 0 || to < from) {
    throw new Error(
      `catalogue: the stopped window ${STOPPED_WINDOW.from} … ${STOPPED_WINDOW.to} is not in the fault inventory`,
    );
  }
  const i = points.indexOf(point);
  return i >= from && i <= to;
}

/** One rejection of the catalogue: a tampering, the command it blocks and the exact code. */
export interface RejectionSpec {
  name: string;
  /** The code the command must report, with exit status {@link rejectionExit}. */
  code: string;
  /**
   * The exit status the command must end with (lib/errors.ts ERROR_CODES gives each code's);
   * absent: 4, blocked.
   */
  exit?: number;
  /** Kill the apply worker here first, tamper while it is dead, then resume (else preflight). */
  stopAt: string | null;
  /**
   * Deployed on a secured broker: its starter pointed at the SASL_SSL listener with
   * `kafka.security` (sluice's SCRAM admin principal, a runner principal of the case's own with
   * exactly the ACLs its job needs, the listeners' CA in a file of the project's own), one
   * broker shared by the secured cases of a probe run (their projects, principals, variables
   * and topics apart).
   */
  secure?: boolean;
  /** What the tampering does, in words. */
  description: string;
}

/** The exit status a rejection's command must end with (4, blocked, unless it says). */
export function rejectionExit(spec: Pick<RejectionSpec, "exit">): number {
  return spec.exit ?? 4;
}

/** The rejection catalogue; each runs on both state backends in `full`. */
export const REJECTIONS: readonly RejectionSpec[] = [
  {
    name: "wrong-mounted-plan",
    code: "BLOCKED_WRONG_MOUNTED_PLAN",
    stopAt: null,
    description: "a newline appended to the old runner's mounted plan file",
  },
  {
    name: "foreign-generation",
    code: "BLOCKED_FOREIGN_GENERATION",
    stopAt: null,
    description: "a second container labelled with the application ID",
  },
  {
    name: "changed-volume-instance",
    code: "BLOCKED_VOLUME_INSTANCE_CHANGED",
    stopAt: null,
    description: "the state volume's instance file rewritten with another UUID",
  },
  {
    name: "replaced-topic",
    code: "BLOCKED_TOPIC_REPLACED",
    stopAt: null,
    description: "the input topic deleted and recreated (same name, new topic ID)",
  },
  {
    name: "wrong-network",
    code: "BLOCKED_WRONG_NETWORK",
    stopAt: null,
    description: "the old runner attached to a second network",
  },
  {
    name: "wrong-image",
    code: "BLOCKED_WRONG_IMAGE",
    stopAt: "docker.create_candidate:after",
    description:
      "the created, never started candidate recreated from another image (same name, labels, mounts)",
  },
  {
    name: "wrong-image-under-running-runner",
    code: "BLOCKED_FOREIGN_GENERATION",
    stopAt: null,
    description:
      "the running runner recreated from another image (same name, labels, mounts, volume): a new container ID",
  },
  {
    name: "wrong-cluster",
    code: "BLOCKED_CLUSTER_CHANGED",
    stopAt: null,
    description:
      "the broker under the running runner replaced by another Kafka cluster at the same address",
  },
  {
    name: "unclean-exit-sigkill-old-runner",
    code: "BLOCKED_UNCLEAN_EXIT",
    stopAt: "journal.action_started:after",
    description: "the old runner killed by SIGKILL while the apply worker is dead",
  },
  {
    name: "retention-loss-while-stopped",
    code: "BLOCKED_RETENTION_LOSS",
    stopAt: "journal.old_closed:after",
    description: "records past the clean-close offsets deleted while stopped",
  },
  {
    name: "offset-jump-while-stopped",
    code: "BLOCKED_OFFSET_JUMP_WHILE_STOPPED",
    stopAt: "journal.old_closed:after",
    description: "the group's committed offsets moved to the end while stopped",
  },
  {
    name: "extra-group-member",
    code: "BLOCKED_EXTRA_GROUP_MEMBERS",
    stopAt: null,
    description: "a second instance of the runner joins the application's group",
  },
  {
    name: "oom-then-term",
    code: "BLOCKED_OOM",
    stopAt: "journal.action_started:after",
    description: "the old runner OOM-killed inside its cgroup, then TERMed",
  },
  {
    name: "runner-acl-removed",
    code: "BLOCKED_RUNNER_PERMISSION",
    stopAt: null,
    secure: true,
    description:
      "the runner principal's ACL allowing WRITE on the output topic deleted after the plan",
  },
  {
    name: "admin-password-wrong",
    code: "ENV_KAFKA_DENIED",
    exit: 7,
    stopAt: null,
    secure: true,
    description: "the admin principal's password variable changed to a wrong one after the plan",
  },
  {
    name: "unknown-ca",
    code: "ENV_KAFKA_TLS",
    exit: 7,
    stopAt: null,
    secure: true,
    description: "the project's CA file replaced by another CA's certificate after the plan",
  },
  {
    name: "runner-credentials-rotated",
    code: "PLAN_KAFKA_CREDENTIALS_CHANGED",
    exit: 3,
    stopAt: null,
    secure: true,
    description: "the runner principal's password variable changed after the plan",
  },
];

/**
 * The rejections of the `suite` tier: each once, the n-th on `BACKENDS[n % 2]`.
 *
 * @example
 * ```ts
 * import { suiteRejections } from "./catalogue.ts";
 * console.log(suiteRejections()[0]); // wrong-mounted-plan:local
 * ```
 */
export function suiteRejections(): string[] {
  return REJECTIONS.map((r, n) => `${r.name}:${BACKENDS[n % BACKENDS.length]}`);
}

/** A declared disruption. */
export interface DisruptionSpec {
  name: string;
  backend: Backend;
  description: string;
  /**
   * Why the case runs in the `full` tier only: a known failure the suite cannot carry (CI must
   * stay green to land anything); absent, the case is in the suite too.
   */
  fullOnly?: string;
}

/** The declared disruptions. */
export const DISRUPTIONS: readonly DisruptionSpec[] = [
  {
    name: "lock-race",
    backend: "local",
    description: "two applies of one plan at once",
    fullOnly:
      "the local lock is a file on the real file system whichever providers run: two real OS processes racing for it, and a holder killed by SIGKILL, are lib/state/lock_race_test.ts's cases in every test run; the suite keeps the race on PostgreSQL, whose advisory lock is the real server's",
  },
  { name: "lock-race", backend: "postgres", description: "two applies of one plan at once" },
  {
    name: "pg-connection-dropped",
    backend: "postgres",
    description: "the worker's PostgreSQL session terminated once the old runner exited",
  },
  {
    name: "pg-server-restart",
    backend: "postgres",
    description: "a private PostgreSQL server restarted once the old runner exited",
  },
  {
    name: "broker-restart",
    backend: "local",
    description: "the broker restarted while the driver waits for the candidate",
  },
  {
    name: "dockerd-restart",
    backend: "local",
    description: "a private Docker daemon restarted while the driver waits for the candidate",
  },
  {
    name: "dockerd-restart-starting",
    backend: "local",
    description:
      "a private Docker daemon restarted the instant the candidate runs (its JVM has no TERM handler yet)",
  },
  {
    name: "candidate-killed",
    backend: "postgres",
    description: "the candidate killed (SIGKILL) once it says STARTING, before it is ready",
  },
  {
    name: "candidate-killed-running",
    backend: "local",
    description:
      "the candidate killed (SIGKILL) while RUNNING after it committed, the apply dead before it recorded the candidate ready",
  },
];

/** The seeded random kills: how many, split into chains (one per backend), and their window. */
export const RANDOM_KILLS = {
  count: 20,
  /** How many of each chain the `suite` tier runs (its first ones). */
  suitePerChain: 1,
  chains: [{ backend: "local" as Backend, cases: 10 }, {
    backend: "postgres" as Backend,
    cases: 10,
  }],
  /**
   * Delays are drawn in [lo, hi) × the chain's baseline: the fastest uninterrupted replacement
   * it has measured (its first one, and any whose kill came too late). Below 1 so that a kill
   * lands inside the replacement even when the machine gets faster during the run.
   */
  lo: 0.02,
  hi: 0.75,
} as const;

/** mulberry32: a small seeded PRNG; `draw(seed, i)` is the i-th number in [0, 1). */
export function draw(seed: number, i: number): number {
  let a = (seed >>> 0) + Math.imul(i + 1, 0x9e3779b9);
  a |= 0;
  a = (a + 0x6d2b79f5) | 0;
  let t = Math.imul(a ^ (a >>> 15), 1 | a);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/** The delay of random kill `index` (0-based in the whole run) for a measured baseline. */
export function randomKillDelay(seed: number, index: number, baselineMs: number): number {
  const u = RANDOM_KILLS.lo + draw(seed, index) * (RANDOM_KILLS.hi - RANDOM_KILLS.lo);
  return Math.round(u * baselineMs);
}

/** The random-kill cases: chain by chain, `random-kill-<i>:<backend>`. */
export function randomKillCases(): Array<
  { id: string; index: number; backend: Backend; chain: number; position: number }
> {
  const out: Array<
    { id: string; index: number; backend: Backend; chain: number; position: number }
  > = [];
  let index = 0;
  RANDOM_KILLS.chains.forEach((c, chain) => {
    for (let position = 0; position < c.cases; position++) {
      out.push({
        id: `random-kill-${index}:${c.backend}`,
        index,
        backend: c.backend,
        chain,
        position,
      });
      index++;
    }
  });
  return out;
}

/** The probes, their evidence file names and their case kinds. */
export const PROBE_FILES = {
  "fault-matrix": "matrix",
  rejections: "rejection",
  disruption: "disruption",
  "random-kill": "random-kill",
} as const satisfies Record<string, CaseKind>;

/** A probe's evidence name. */
export type ProbeName = keyof typeof PROBE_FILES;

/** The case IDs a complete evidence file of `probe` holds at `tier`, derived from the code. */
export function expectedCaseIds(probe: ProbeName, tier: Tier = "full"): string[] {
  switch (probe) {
    case "fault-matrix":
      return matrixPoints(tier).map((m) => `${m.point}:${m.backend}`);
    case "rejections": {
      const all = BACKENDS.flatMap((be) => REJECTIONS.map((r) => `${r.name}:${be}`));
      if (tier === "full") return all;
      const suite = new Set(suiteRejections());
      return all.filter((id) => suite.has(id));
    }
    case "disruption":
      return DISRUPTIONS.filter((d) => tier === "full" || !d.fullOnly)
        .map((d) => `${d.name}:${d.backend}`);
    case "random-kill":
      return randomKillCases()
        .filter((c) => tier === "full" || c.position < RANDOM_KILLS.suitePerChain)
        .map((c) => c.id);
  }
}

/** The tier a recorded selection names (`full` when it names none). */
export function selectionTier(selection: Record<string, string>): Tier {
  const t = selection.tier ?? "full";
  if (!(TIERS as readonly string[]).includes(t)) throw new Error(`unknown tier ${t}`);
  return t as Tier;
}

/**
 * The case IDs a run with this selection (`tier`; `only`: fault points for the matrix, names
 * for the rejections and disruptions; `backend`) must hold: the tier's whole list when nothing
 * else is selected.
 */
export function selectedCaseIds(probe: ProbeName, selection: Record<string, string>): string[] {
  const only = selection.only?.split(",");
  const backend = selection.backend;
  return expectedCaseIds(probe, selectionTier(selection)).filter((id) => {
    const i = id.lastIndexOf(":");
    const head = id.slice(0, i);
    const be = id.slice(i + 1);
    if (backend && be !== backend) return false;
    if (!only) return true;
    return probe === "fault-matrix" ? only.includes(head) : only.includes(head.split(":")[0]);
  });
}

/** One required check: its ID, its kind and the values the code pins. */
export interface RequiredCheck {
  check: string;
  kind: AssertionKind;
  /** An error message when the assertion's values contradict the code; null when they agree. */
  pin?: (a: Assertion, c: CaseEvidence) => string | null;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

function pinEqual(what: string, want: unknown) {
  return (a: Assertion) =>
    JSON.stringify(a.expected) === JSON.stringify(want)
      ? null
      : `expected ${JSON.stringify(a.expected)} is not the code's ${what} ${JSON.stringify(want)}`;
}

const INDEPENDENT = /^(?!.*\bsluice\b)/;

/** The checks of a completed replacement (shared by matrix, disruption and random-kill cases). */
function completion(serialBefore: number): RequiredCheck[] {
  return [
    {
      check: "recovery.completed",
      kind: "exit-status",
      pin: (a) => {
        if (!isRecord(a.expected) || a.expected.exit !== 0) return "expected exit is not 0";
        return null;
      },
    },
    { check: "offsets.monotonic", kind: "monotonic" },
    { check: "output.exact", kind: "set-equal" },
    {
      check: "generation.single_candidate",
      kind: "equal",
      pin: oneRunningOfOperation,
    },
    {
      check: "generation.serial",
      kind: "equal",
      pin: pinEqual("serial change", { before: serialBefore, after: serialBefore + 1 }),
    },
    { check: "plan.noop", kind: "equal", pin: pinEqual("no-op plan", { exit: 0, noop: true }) },
  ];
}

/** A recovery by the same public command in a fresh process, ending with exit 0. */
const recoveredFresh: RequiredCheck = {
  check: "recovery.completed",
  kind: "exit-status",
  pin: (a) => {
    if (!isRecord(a.expected) || a.expected.exit !== 0) return "expected exit is not 0";
    return freshProcess(a);
  },
};

const noopPlan: RequiredCheck = {
  check: "plan.noop",
  kind: "equal",
  pin: pinEqual("no-op plan", { exit: 0, noop: true }),
};

const controlCleared: RequiredCheck = {
  check: "state.control_cleared",
  kind: "absent",
  pin: pinEqual("pending control", ["control"]),
};

/** The pin of a check whose expected value is exactly one running container of the operation. */
function oneRunningOfOperation(a: Assertion): string | null {
  const e = a.expected;
  if (!Array.isArray(e) || e.length !== 1 || !isRecord(e[0]) || e[0].state !== "running") {
    return "expected is not exactly one running container";
  }
  if (typeof e[0].operation !== "string" || !/^[0-9a-f-]{36}$/.test(e[0].operation)) {
    return "expected does not name the operation's UUID";
  }
  return null;
}

/**
 * The checks of a completed create (nothing was deployed before: no old runner, no offsets
 * while stopped): one running runner of the operation with the created volume, the group at
 * its initial positions, each topic created once, ownership serial 1, exact output, no-op plan.
 */
function createCompletion(): RequiredCheck[] {
  return [
    recoveredFresh,
    {
      check: "generation.single_runner",
      kind: "equal",
      pin: oneRunningOfOperation,
    },
    { check: "volume.instance_created", kind: "equal" },
    { check: "offsets.initial_positions", kind: "equal" },
    { check: "kafka.topics_created_once", kind: "equal" },
    {
      check: "generation.serial",
      kind: "equal",
      pin: pinEqual("serial change", { before: null, after: 1 }),
    },
    controlCleared,
    { check: "output.exact", kind: "set-equal" },
    noopPlan,
  ];
}

/**
 * The checks of a completed connector change: the connector exists once with the owned config
 * (or, for a removal, is gone while its topics stay), ownership records it, serial + 1 exactly
 * once, no pending control, no-op plan.
 */
function connectorCompletion(change: ConnectorChange): RequiredCheck[] {
  const before = connectorSerialBefore(change);
  return [
    recoveredFresh,
    change === "delete"
      ? {
        check: "connector.removed",
        kind: "absent",
        pin: (a) =>
          Array.isArray(a.expected) && a.expected.length === 1 ? null : "names no connector",
      }
      : { check: "connector.owned_config", kind: "equal" },
    ...(change === "delete" ? [{ check: "kafka.topics_kept", kind: "equal" as const }] : []),
    { check: "connector.ownership_recorded", kind: "equal" },
    {
      check: "generation.serial",
      kind: "equal",
      pin: pinEqual("serial change", { before, after: before + 1 }),
    },
    controlCleared,
    noopPlan,
  ];
}

/**
 * The checks of a completed runner removal: no container of the model left, its volume kept
 * with its instance, the group's committed offsets those of the clean close at every look, the
 * topics kept with their IDs, no group member, ownership released (the volume retained, the
 * topics still owned), the other model's runner untouched, serial + 1 exactly once, no pending
 * control, a no-op plan.
 */
function removalCompletion(): RequiredCheck[] {
  return [
    recoveredFresh,
    {
      check: "removal.container_gone",
      kind: "count",
      pin: pinEqual("no container left", { max: 0 }),
    },
    { check: "volume.instance_kept", kind: "unchanged" },
    { check: "offsets.kept", kind: "all-equal" },
    { check: "kafka.topics_kept", kind: "unchanged" },
    { check: "kafka.no_member", kind: "count", pin: pinEqual("no member", { max: 0 }) },
    { check: "ownership.released", kind: "equal" },
    { check: "removal.spare_untouched", kind: "unchanged" },
    {
      check: "generation.serial",
      kind: "equal",
      pin: pinEqual("serial change", {
        before: REMOVAL_SERIAL_BEFORE,
        after: REMOVAL_SERIAL_BEFORE + 1,
      }),
    },
    controlCleared,
    noopPlan,
  ];
}

/**
 * The checks of a completed destroy (`plan --destroy`, the starter's only model taken down): no
 * container of the model left, no group member, serial + 1 exactly once, no pending control, a
 * destroy planned again is a no-op; then, by {@link DestroyVariant}:
 * - keeping the data: its volume kept with its instance, the group's committed offsets those of
 *   the clean close at every look, the topics kept with their IDs, ownership without runners
 *   (the volume retained, the topics still owned), and the project planned again a create on the
 *   kept volume;
 * - with connectors too (the starter deployed with the pipeline's source and sink): as keeping
 *   the data, from serial 2, and the worker has neither connector any more (ownership none);
 * - deleting it: the volume removed, the group gone (its offsets the clean close's at a death
 *   before its deletion, none after), each owned topic deleted and any other kept with its ID,
 *   nothing owned or retained, and the project planned again a create from nothing.
 */
function destroyCompletion(variant: DestroyVariant): RequiredCheck[] {
  const before = variant === "connectors"
    ? DESTROY_CONNECTORS_SERIAL_BEFORE
    : DESTROY_SERIAL_BEFORE;
  const serial: RequiredCheck = {
    check: "generation.serial",
    kind: "equal",
    pin: pinEqual("serial change", { before, after: before + 1 }),
  };
  const common: RequiredCheck[] = [
    recoveredFresh,
    {
      check: "destroy.container_gone",
      kind: "count",
      pin: pinEqual("no container left", { max: 0 }),
    },
    { check: "kafka.no_member", kind: "count", pin: pinEqual("no member", { max: 0 }) },
    serial,
    controlCleared,
    noopPlan,
  ];
  if (variant !== "delete-data") {
    return [
      ...common,
      { check: "volume.instance_kept", kind: "unchanged" },
      { check: "offsets.kept", kind: "all-equal" },
      { check: "kafka.topics_kept", kind: "unchanged" },
      { check: "ownership.destroyed", kind: "equal" },
      { check: "destroy.plan_recreates", kind: "equal" },
      ...(variant === "connectors"
        ? [{ check: "destroy.connectors_gone", kind: "absent" as const }]
        : []),
    ];
  }
  return [
    ...common,
    { check: "volume.deleted", kind: "equal", pin: pinEqual("volume absent", { exists: false }) },
    { check: "offsets.close_until_deleted", kind: "equal" },
    { check: "kafka.group_deleted", kind: "absent" },
    { check: "kafka.owned_topics_deleted", kind: "equal" },
    {
      check: "ownership.destroyed",
      kind: "equal",
      pin: pinEqual("nothing owned or retained", { runners: [], retained: [], topics: [] }),
    },
    { check: "destroy.plan_creates_fresh", kind: "equal" },
  ];
}

/**
 * The checks of a completed day-two command: the same container and generation runs again,
 * exactly one restart recorded naming its stop, the serial unchanged, exact output afterwards,
 * no pending control, a no-op plan; a skip also recorded once with the record's coordinates
 * and exactly that partition moved by one (every look the stop's or the skip's offsets); a
 * restart moved no offset.
 */
function dayTwoCompletion(command: DayTwoCommand): RequiredCheck[] {
  return [
    recoveredFresh,
    { check: "runner.same_generation", kind: "equal" },
    { check: "audit.restart_recorded_once", kind: "equal" },
    ...(command === "skip-record"
      ? [
        { check: "audit.skip_recorded_once", kind: "equal" as const },
        { check: "offsets.skipped_exactly_one", kind: "equal" as const },
        { check: "offsets.stopped_or_skipped", kind: "subset" as const },
      ]
      : [{ check: "offsets.unchanged", kind: "all-equal" as const }]),
    {
      check: "generation.serial",
      kind: "equal",
      pin: pinEqual("serial change", { before: 1, after: 1 }),
    },
    { check: "output.exact", kind: "set-equal" },
    controlCleared,
    noopPlan,
  ];
}

/** An assertion read by witnesses that include the Docker API and Kafka, never sluice. */
function independentOfSluice(a: Assertion): string | null {
  return INDEPENDENT.test(a.witness) && a.witness.includes("docker-api") &&
      a.witness.includes("kafka")
    ? null
    : `witness ${a.witness} is not independent of sluice (Docker API + Kafka read directly)`;
}

/**
 * The checks of an operator case: the apply first died at {@link PRE_OPERATOR_FAULT}, then the
 * armed decision at the case's site; the same decision again in a fresh process finished it.
 *
 * - `accept-retention-loss`: the accepted positions are exactly the earliest retained offsets
 *   of the lost partitions (the others unchanged), the decision records exactly those ranges,
 *   every look while stopped saw the clean close or the accepted positions, and `state resume`
 *   then completed the replacement (one candidate, serial 1 → 2, offsets never backwards,
 *   exact output without the lost records, a no-op plan);
 * - `abandon`: nothing outside the state changed after the apply died (containers, volume,
 *   committed offsets, topic IDs), control is cleared, the abandonment is recorded once, no
 *   receipt, serial unchanged, and the next plan never says "No changes".
 */
function operatorCompletion(decision: OperatorDecision): RequiredCheck[] {
  const preKill: RequiredCheck = {
    check: "fault.pre_operator_kill",
    kind: "killed-by-signal",
    pin: pinEqual("pre-operator site", { signal: "SIGKILL", site: PRE_OPERATOR_FAULT }),
  };
  if (decision === "abandon") {
    return [
      preKill,
      recoveredFresh,
      { check: "operator.nothing_mutated", kind: "unchanged", pin: independentOfSluice },
      controlCleared,
      { check: "audit.abandoned_once", kind: "equal" },
      { check: "audit.no_receipt", kind: "absent" },
      {
        check: "generation.serial",
        kind: "equal",
        pin: pinEqual("serial change", { before: 1, after: 1 }),
      },
      {
        check: "plan.not_noop",
        kind: "equal",
        pin: (a) =>
          isRecord(a.expected) && a.expected.noop === false ? null : "expected is not noop: false",
      },
    ];
  }
  return [
    preKill,
    recoveredFresh,
    { check: "offsets.moved_to_retained", kind: "equal" },
    { check: "audit.decision_recorded", kind: "equal" },
    { check: "offsets.stopped_close_or_retained", kind: "subset" },
    ...completion(1).filter((r) => r.check !== "recovery.completed"),
    controlCleared,
  ];
}

function freshProcess(a: Assertion): string | null {
  const x = a.actual;
  if (!isRecord(x) || !Array.isArray(x.killed_pids) || x.killed_pids.length === 0) {
    return "actual names no killed process";
  }
  if (typeof x.pid !== "number" || x.killed_pids.includes(x.pid)) {
    return "the recovering process is not a fresh one";
  }
  return null;
}

const GENERATION = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\/\d+$/;

/**
 * The independent group monitor's checks (harness/group_monitor.ts): no reading saw two runner
 * generations at once, and the readings saw the old generation and the new one, two distinct
 * generations, read by the harness's own Kafka admin client.
 */
const GROUP_MONITOR_CHECKS: RequiredCheck[] = [
  {
    check: "group.one_generation_at_a_time",
    kind: "subset",
    pin: (a) =>
      a.witness !== "kafka-admin"
        ? `witness ${a.witness} is not the harness's Kafka admin client`
        : pinEqual("allowed generation counts", [0, 1])(a),
  },
  {
    check: "group.generations_seen",
    kind: "present",
    pin: (a) => {
      if (a.witness !== "kafka-admin") {
        return `witness ${a.witness} is not the harness's Kafka admin client`;
      }
      const e = a.expected;
      return Array.isArray(e) && e.length === 2 && e[0] !== e[1] &&
          e.every((g) => typeof g === "string" && GENERATION.test(g))
        ? null
        : `expected ${JSON.stringify(e)} is not the old and the new generation (two distinct)`;
    },
  },
];

/** The checks a case must hold, from its kind and parameters (the code's view, not the file's). */
export function requiredChecks(c: CaseEvidence): RequiredCheck[] {
  const stopped = c.samples.some(stoppedSample);
  const stoppedCheck: RequiredCheck = { check: "offsets.stopped_equal_close", kind: "all-equal" };
  switch (c.kind) {
    case "matrix": {
      const site = `${c.boundary}:${c.side}`;
      const killedAt: RequiredCheck = {
        check: "fault.killed_at_site",
        kind: "killed-by-signal",
        pin: pinEqual("armed site", { signal: "SIGKILL", site }),
      };
      const journey = matrixJourney(c.boundary ?? "");
      if (journey === "create") return [killedAt, ...createCompletion()];
      if (journey === "operator") {
        return [killedAt, ...operatorCompletion(operatorDecision(c.boundary ?? "")!)];
      }
      if (journey === "connector") {
        return [killedAt, ...connectorCompletion(connectorChange(c.boundary ?? ""))];
      }
      if (journey === "removal") return [killedAt, ...removalCompletion()];
      if (journey === "destroy") {
        return [killedAt, ...destroyCompletion(destroyVariant(c.boundary ?? ""))];
      }
      if (journey === "day_two") {
        return [killedAt, ...dayTwoCompletion(dayTwoCommand(c.boundary ?? ""))];
      }
      const out: RequiredCheck[] = [
        killedAt,
        ...completion(1).map((r) =>
          r.check === "recovery.completed"
            ? { ...r, pin: (a: Assertion, cc: CaseEvidence) => r.pin!(a, cc) ?? freshProcess(a) }
            : r
        ),
      ];
      if (stopsRunner(site) || stopped) out.push(stoppedCheck);
      return out;
    }
    case "rejection": {
      const spec = REJECTIONS.find((r) => `${r.name}:${c.backend}` === c.id);
      const code = spec?.code ?? "(not in the catalogue)";
      const out: RequiredCheck[] = [
        { check: "rejection.code", kind: "present", pin: pinEqual("blocker code", [code]) },
        {
          check: "rejection.exit_status",
          kind: "exit-status",
          pin: pinEqual("exit", { exit: spec ? rejectionExit(spec) : 4 }),
        },
        {
          check: "rejection.nothing_mutated",
          kind: "unchanged",
          pin: (a) =>
            INDEPENDENT.test(a.witness) && a.witness.includes("docker-api") &&
              /state-(files|rows)/.test(a.witness)
              ? null
              : `witness ${a.witness} is not independent of sluice (state read directly + Docker API)`,
        },
      ];
      if (spec?.stopAt) {
        out.push({
          check: "rejection.stopped_at_site",
          kind: "killed-by-signal",
          pin: pinEqual("armed site", { signal: "SIGKILL", site: spec.stopAt }),
        });
      } else {
        out.push({
          check: "rejection.no_operation",
          kind: "absent",
          pin: pinEqual("pending control", ["control"]),
        });
      }
      return out;
    }
    case "disruption": {
      const name = c.id.split(":")[0];
      const out: RequiredCheck[] = [];
      if (name === "lock-race") {
        out.push(
          {
            check: "race.exit_statuses",
            kind: "equal",
            pin: pinEqual("exit statuses", [0, 5]),
          },
          {
            check: "race.loser_reports_lock",
            kind: "present",
            pin: pinEqual("lock code", ["STATE_LOCK_HELD"]),
          },
          { check: "race.single_operation", kind: "equal" },
        );
      } else {
        out.push({
          check: "disruption.applied",
          kind: "count",
          pin: pinEqual("disruption effect count", { min: 1 }),
        });
      }
      out.push(...completion(1));
      if (stopped) out.push(stoppedCheck);
      return out;
    }
    case "random-kill": {
      // the chain's first deploy is serial 1, its uninterrupted baseline replacement 2
      const position = randomKillCases().find((k) => k.id === c.id)?.position ?? -10;
      const serialBefore = position + 2;
      const out: RequiredCheck[] = [
        {
          check: "fault.random_kill",
          kind: "killed-by-signal",
          pin: (a) => {
            const p = c.params;
            if (
              typeof p.seed !== "number" || typeof p.index !== "number" ||
              typeof p.baseline_ms !== "number"
            ) {
              return "params lack seed, index or baseline";
            }
            const delay = randomKillDelay(p.seed, p.index, p.baseline_ms);
            if (p.delay_ms !== delay) {
              return `params.delay_ms ${p.delay_ms} is not the seed's ${delay}`;
            }
            return pinEqual("random kill", {
              signal: "SIGKILL",
              killed_by: "harness",
              delay_ms: delay,
            })(a);
          },
        },
        ...GROUP_MONITOR_CHECKS,
        ...completion(serialBefore).map((r) =>
          r.check === "recovery.completed"
            ? { ...r, pin: (a: Assertion, cc: CaseEvidence) => r.pin!(a, cc) ?? freshProcess(a) }
            : r
        ),
      ];
      if (stopped) out.push(stoppedCheck);
      return out;
    }
  }
}
