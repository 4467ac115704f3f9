/**
 * The day-two commands on a running project, as data: the fault sites their durable writes and
 * provider changes cross, and the blockers they can give. Each is a public command that records
 * who did what and why (a history event, with no pending operation) before the one provider
 * change it authorizes, so a kill anywhere leaves either nothing recorded, or the record made
 * with its change still to make — and the same command again finishes it (the record names the
 * container's exact stop, so it is never made twice for one stop):
 *
 * - `sluice restart MODEL`: start the stopped owned generation again (`runner_restarted`, then
 *   the start);
 * - `sluice skip-record MODEL`: past a record the runner cannot decode (`record_skipped`, then
 *   that one partition's committed offset + 1, then the restart's record and start);
 * - `sluice acknowledge-drift MODEL`: accept a drift (`drift_acknowledged`, and no provider
 *   change: its one write is the state layer's audit write, whose fault sites are the state
 *   layer's).
 *
 * @example
 * ```ts
 * import { dayTwoSites } from "./day_two.ts";
 * console.log(dayTwoSites().map((s) => s.name).join(", "));
 * ```
 * @module
 */
import type { FaultSite } from "../fault/site.ts";
import { commandSites, siteMaker, siteOf, type StepRow, tableSites } from "./table.ts";
import type { JourneyDescriptor } from "./descriptor.ts";

const site = siteMaker(import.meta.url);

/** The day-two commands that cross fault sites of their own. */
export type DayTwoCommand = "skip-record" | "restart";

/** The steps of the day-two commands that cross a site. */
export type DayTwoStep = "record_skip" | "advance_offset" | "record_restart" | "start_stopped";

/** One row of the day-two table. */
export interface DayTwoRow extends StepRow<DayTwoStep> {
  /** The commands that cross it (a skip-record goes on with its restart's rows). */
  readonly by: readonly DayTwoCommand[];
  /** What must hold (checked on fresh reads) before the step. */
  readonly requires: string;
  /** The one write or provider change of the step. */
  readonly next: string;
  readonly site: FaultSite;
}

/**
 * The day-two rows, in the order a skip-record then its restart cross them (a restart alone
 * crosses the last two): `lib/runtime/skip_record.ts` and `restart.ts` take each step's site
 * from its row.
 */
export const DAY_TWO_TABLE: readonly DayTwoRow[] = [
  {
    step: "record_skip",
    by: ["skip-record"],
    requires:
      "the owned runner is stopped on a record it cannot decode, its group is Empty and that partition's committed offset is the record's (no skip of this stop recorded yet)",
    next: "record the skip (record_skipped: the record's coordinates, the failure, who and why)",
    site: site(
      "journal.record_skipped",
      "journal",
      "record the skip of a record the runner cannot decode (its coordinates, the failure, who and why)",
    ),
  },
  {
    step: "advance_offset",
    by: ["skip-record"],
    requires: "the skip is recorded; the partition's committed offset is still the record's",
    next: "commit the record's offset + 1 for that one partition",
    site: site(
      "kafka.skip_record_offset",
      "provider",
      "commit the failing record's offset + 1 for that one partition of the stopped runner's group",
    ),
  },
  {
    step: "record_restart",
    by: ["skip-record", "restart"],
    requires:
      "the owned runner is stopped (not by an undecodable record it would stop on again), its group Empty, its offsets where it stopped (or past a recorded skip); no restart of this stop recorded yet",
    next:
      "record the restart (runner_restarted: the exact container and stop, the group, the offsets, who and why)",
    site: site(
      "journal.runner_restarted",
      "journal",
      "record the restart of a stopped runner (who, why, the exact container and stop, the group, the offsets)",
    ),
  },
  {
    step: "start_stopped",
    by: ["skip-record", "restart"],
    requires: "the restart of this stop is recorded; the container is still stopped",
    next: "start the same container (the same generation, mounted plan and volume)",
    site: site(
      "docker.start_stopped",
      "provider",
      "start the stopped owned runner container again (the same generation, mounted plan and volume)",
    ),
  },
];

/**
 * The site a day-two step crosses.
 *
 * @example
 * ```ts
 * import { dayTwoSite } from "./day_two.ts";
 * console.log(dayTwoSite("advance_offset").name); // kafka.skip_record_offset
 * ```
 */
export function dayTwoSite(step: DayTwoStep): FaultSite {
  return siteOf("day_two", DAY_TWO_TABLE, step);
}

/** The sites of the day-two commands, by the names the harnesses use (each its row's). */
export const DAY_TWO_SITES: Readonly<
  Record<"skipRecord" | "advanceOffset" | "restartRecord" | "startStopped", FaultSite>
> = {
  skipRecord: dayTwoSite("record_skip"),
  advanceOffset: dayTwoSite("advance_offset"),
  restartRecord: dayTwoSite("record_restart"),
  startStopped: dayTwoSite("start_stopped"),
};

/** The blocker codes the day-two commands can give (each has a runbook entry). */
export const DAY_TWO_BLOCKERS = [
  "BLOCKED_RUNNER_NOT_OWNED",
  "BLOCKED_RUNNER_RUNNING",
  "BLOCKED_RUNNER_NEVER_STARTED",
  "BLOCKED_RESTART_WOULD_FAIL",
  "BLOCKED_POISON_RECORD",
  "BLOCKED_OFFSETS_MOVED",
  "BLOCKED_GROUP_ACTIVE",
  "BLOCKED_OPERATION_PENDING",
  "BLOCKED_DUPLICATE_EVENT",
  "BLOCKED_NOT_DECODE_FAILURE",
  "BLOCKED_SKIP_MISMATCH",
  "BLOCKED_NO_DRIFT",
] as const;

/**
 * The day-two sites, in table order (the order a skip-record then its restart cross them), or
 * the sites one command crosses.
 *
 * @example
 * ```ts
 * import { dayTwoSites } from "./day_two.ts";
 * console.log(dayTwoSites().length, dayTwoSites("restart").length); // 4 2
 * ```
 */
export function dayTwoSites(command?: DayTwoCommand): FaultSite[] {
  return command ? commandSites(DAY_TWO_TABLE, command) : tableSites(DAY_TWO_TABLE);
}

/**
 * The day-two commands, as the registry reads them: no operation and no plan action of their
 * own; `restart` and `skip-record` cross their sites (finished by the same command again) and
 * the state layer's audit write.
 *
 * @example
 * ```ts
 * import { DAY_TWO_JOURNEY } from "./day_two.ts";
 * console.log(DAY_TWO_JOURNEY.kind); // null
 * ```
 */
export const DAY_TWO_JOURNEY: JourneyDescriptor<"day_two"> = {
  name: "day_two",
  kind: null,
  actions: [],
  crossings: [{
    by: "day_two",
    command: "sluice restart MODEL, sluice skip-record MODEL (the same command finishes it)",
    sites: () => dayTwoSites(),
    transitions: ["audit"],
    locks: false,
  }],
  alone: [],
};
