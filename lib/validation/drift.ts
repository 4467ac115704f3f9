/**
 * Drift: a change made to an owned runner outside sluice, found by comparing what Docker reports
 * with what sluice recorded. What `plan` (`BLOCKED_RUNNER_DRIFT`) and `status` (`drift`) report
 * instead of accepting it as a no-op.
 *
 * **A runner started again outside sluice.** Docker keeps a container's `FinishedAt` (its last
 * stop) while it runs again. sluice starts a generation's container only inside the operation
 * that creates it (before that operation commits: a create's or a candidate's start, and their
 * restarts before RUNNING), or through `sluice restart`/`skip-record`, which records the stop it
 * restarts (`runner_restarted`: the container's ID and `FinishedAt`). So a running container
 * whose last stop came after its generation was committed (the `ownership_committed` or
 * `runner_completed` event of the operation its labels name) and that no `runner_restarted` event
 * names was started by someone else (`docker start`, `docker restart`). Both times are read from
 * the same host's clock in practice (the daemon's and sluice's); a generation whose commit is not
 * in the history is not judged.
 *
 * Offsets moved while a runner was stopped are knowable only where the runner says where it
 * stopped (a decode failure names its record): `restart` and `skip-record` refuse them
 * (`BLOCKED_OFFSETS_MOVED`), and a runner started by hand over them is reported here.
 *
 * @example
 * ```ts
 * import { runnerDrift } from "./drift.ts";
 * import type { ContainerEvidence } from "./observation.ts";
 * import type { HistoryEvent } from "../state/history.ts";
 * const drifted = (c: ContainerEvidence, h: HistoryEvent[]) => runnerDrift(c, h) !== null;
 * ```
 * @module
 */
import type { HistoryEvent } from "../state/history.ts";
import type { ContainerEvidence } from "./observation.ts";

/** A change to an owned runner made outside sluice. */
export interface RunnerDrift {
  /** What changed. */
  kind: "started_outside_sluice";
  /** The container's name. */
  container: string;
  /** Its exact ID. */
  container_id: string;
  /** When it stopped (Docker's FinishedAt), after its generation was committed. */
  stopped_at: string;
  /** When it was started again (Docker's StartedAt). */
  started_at: string;
  /** When sluice committed its generation (the history's event). */
  committed_at: string;
  /** One line a person can act on. */
  summary: string;
}

const ZERO_TIME = /^0001-01-01T/;

/**
 * The drift of an owned runner's container, or null (see the module documentation).
 *
 * @example
 * ```ts
 * import { runnerDrift } from "./drift.ts";
 * import type { ContainerEvidence } from "./observation.ts";
 * declare const c: ContainerEvidence;
 * console.log(runnerDrift(c, [])?.summary ?? "no drift");
 * ```
 */
export function runnerDrift(
  c: ContainerEvidence,
  events: readonly HistoryEvent[],
): RunnerDrift | null {
  if (!c.running || c.finishedAt === "" || ZERO_TIME.test(c.finishedAt)) return null;
  const op = c.labels.operationId;
  if (!op) return null;
  const committed = events.filter((e): e is Extract<
    HistoryEvent,
    { kind: "ownership_committed" | "runner_completed" }
  > => (e.kind === "ownership_committed" || e.kind === "runner_completed") && e.operation_id === op)
    .at(-1);
  if (!committed) return null;
  const stoppedAt = Date.parse(c.finishedAt);
  if (!(stoppedAt > Date.parse(committed.recorded_at))) return null;
  const recorded = events.some((e) =>
    e.kind === "runner_restarted" && e.container.id === c.id &&
    e.container.finished_at === c.finishedAt
  );
  if (recorded) return null;
  return {
    kind: "started_outside_sluice",
    container: c.name,
    container_id: c.id,
    stopped_at: c.finishedAt,
    started_at: c.startedAt,
    committed_at: committed.recorded_at,
    summary:
      `started again outside sluice: ${c.name} stopped at ${c.finishedAt} and was started at ${c.startedAt} with no restart recorded (docker start?)`,
  };
}
