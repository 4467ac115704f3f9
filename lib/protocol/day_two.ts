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
import { siteMaker } from "./table.ts";
import type { JourneyDescriptor } from "./descriptor.ts";

const site = siteMaker(import.meta.url);

/** The sites of the day-two commands. */
export const DAY_TWO_SITES: Readonly<
  Record<"skipRecord" | "advanceOffset" | "restartRecord" | "startStopped", FaultSite>
> = {
  skipRecord: site(
    "journal.record_skipped",
    "journal",
    "record the skip of a record the runner cannot decode (its coordinates, the failure, who and why)",
  ),
  advanceOffset: site(
    "kafka.skip_record_offset",
    "provider",
    "commit the failing record's offset + 1 for that one partition of the stopped runner's group",
  ),
  restartRecord: site(
    "journal.runner_restarted",
    "journal",
    "record the restart of a stopped runner (who, why, the exact container and stop, the group, the offsets)",
  ),
  startStopped: site(
    "docker.start_stopped",
    "provider",
    "start the stopped owned runner container again (the same generation, mounted plan and volume)",
  ),
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
 * The day-two sites, in the order a skip-record then its restart cross them (a restart alone
 * crosses the last two).
 *
 * @example
 * ```ts
 * import { dayTwoSites } from "./day_two.ts";
 * console.log(dayTwoSites().length); // 4
 * ```
 */
export function dayTwoSites(): FaultSite[] {
  return [
    DAY_TWO_SITES.skipRecord,
    DAY_TWO_SITES.advanceOffset,
    DAY_TWO_SITES.restartRecord,
    DAY_TWO_SITES.startStopped,
  ];
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
    sites: dayTwoSites,
    transitions: ["audit"],
    locks: false,
  }],
  alone: [],
};
