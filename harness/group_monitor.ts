/**
 * An independent group monitor: while a journey runs, it reads one consumer group's members over
 * and over with the harness's own Kafka admin client (not `lib/providers/kafka`, not the observer)
 * and tells, for every reading, how many runner generations were members at once. The clean cut
 * says never two: the old generation has left the group before any candidate joins.
 *
 * A member's generation comes from its client ID alone (`sluice-<operation>-<action>-StreamThread-
 * <n>-consumer`, the runner's `ClientId`); a member whose client ID has no generation counts as
 * one more of its own, so a foreign consumer is never hidden.
 *
 * It samples: it can prove that no reading saw two generations and that it saw each generation it
 * names, not that no overlap shorter than its interval ever happened.
 *
 * @example
 * ```ts
 * import { generationOfMember } from "./group_monitor.ts";
 * generationOfMember("sluice-6f1c3a2e-0b7d-4c55-9a10-2f7e8d9c0b11-3-StreamThread-1-consumer");
 * // → "6f1c3a2e-0b7d-4c55-9a10-2f7e8d9c0b11/3"
 * ```
 * @module
 */
import { Admin } from "npm:@platformatic/kafka@2.12.1";

const MEMBER =
  /^sluice-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-(\d+)-StreamThread-\d+-consumer$/;

/**
 * The generation (`<operation>/<action>`) of a runner's main consumer, by its client ID; null
 * for any other client ID.
 */
export function generationOfMember(clientId: string): string | null {
  const m = MEMBER.exec(clientId);
  return m ? `${m[1]}/${m[2]}` : null;
}

/** The distinct generations among one reading's members (an unknown member is one of its own). */
export function generationsOf(clientIds: readonly string[]): string[] {
  return [...new Set(clientIds.map((c) => generationOfMember(c) ?? `unknown:${c}`))].sort();
}

/** What a monitor saw between its start and its stop. */
export interface GroupMonitorReport {
  /** How many runner generations each successful reading saw, in reading order. */
  counts: number[];
  /** Every generation any reading saw (sorted). */
  generations: string[];
  /** The readings that saw more than one generation: when, and which. */
  overlaps: Array<{ at: string; generations: string[] }>;
  /** Readings that failed (the broker did not answer); they count for nothing. */
  errors: number;
}

/** A running monitor. */
export interface GroupMonitor {
  /** Stop reading and report (the reading under way finishes first); again: the same report. */
  stop(): Promise<GroupMonitorReport>;
}

/** Fold one reading's client IDs into a report (exported for its unit test). */
export function addReading(report: GroupMonitorReport, at: string, clientIds: string[]): void {
  const gens = generationsOf(clientIds);
  report.counts.push(gens.length);
  report.generations = [...new Set([...report.generations, ...gens])].sort();
  if (gens.length > 1) report.overlaps.push({ at, generations: gens });
}

/**
 * Start reading `group`'s members on the broker at `bootstrap`, one DescribeGroups every
 * `intervalMs` (a missing group reads as no member).
 */
export function startGroupMonitor(
  bootstrap: string,
  group: string,
  intervalMs = 200,
): GroupMonitor {
  const admin = new Admin({ clientId: "sluice-group-monitor", bootstrapBrokers: [bootstrap] });
  const report: GroupMonitorReport = { counts: [], generations: [], overlaps: [], errors: 0 };
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      try {
        const groups = await admin.describeGroups({ groups: [group] });
        const members = [...(groups.get(group)?.members.values() ?? [])].map((m) => m.clientId);
        addReading(report, new Date().toISOString(), members);
      } catch (e) {
        if (/GROUP_ID_NOT_FOUND|group.*not.*found/i.test(String(e))) {
          addReading(report, new Date().toISOString(), []);
        } else report.errors++;
      }
      if (!stopping) await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  let stopped: Promise<GroupMonitorReport> | null = null;
  return {
    stop() {
      stopped ??= (async () => {
        stopping = true;
        await loop;
        await admin.close().catch(() => {});
        return report;
      })();
      return stopped;
    },
  };
}
