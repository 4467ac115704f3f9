/**
 * Hand-built readings of a runner removal, for the pure decisions over the removal's and the
 * destroy's tables (`decideRemoval`, `decideDestroy`): only the fields their guards read are
 * filled, and the casts say so.
 *
 * @example
 * ```ts
 * import { removeAction, runnerContainer, runnerReading } from "./removal_readings.ts";
 * const a = removeAction("orders");
 * console.log(runnerReading(a, runnerContainer(a, "running"), 1).seen.kind);
 * ```
 * @module
 */
import type { RemoveRunnerAction } from "../lib/plan/removals.ts";
import type { ContainerEvidence, RunnerObservation } from "../lib/validation/observation.ts";
import { type RunnerReading, seen } from "../lib/runtime/removal_reading.ts";

const STARTED = "2026-12-01T00:00:00.000Z";

/** The removal action of `model`'s runner (generation `g1`, plan `p1`). */
export function removeAction(model: string): RemoveRunnerAction {
  return {
    type: "remove_runner",
    model,
    application_id: `app-${model}`,
    artifact_sha256: `art-${model}`,
    container: {
      id: `id-${model}`.padEnd(64, "0"),
      name: `c-${model}`,
      generation: "g1",
      plan_sha256: "p1",
    },
  } as unknown as RemoveRunnerAction;
}

/** The bound container of `a`, running, closed cleanly (143) or killed (137). */
export function runnerContainer(
  a: RemoveRunnerAction,
  state: "running" | "clean" | "killed",
): ContainerEvidence {
  return {
    id: a.container.id,
    name: a.container.name,
    status: state === "running" ? "running" : "exited",
    running: state === "running",
    exitCode: state === "running" ? 0 : state === "clean" ? 143 : 137,
    oomKilled: false,
    dockerError: "",
    startedAt: STARTED,
    labels: { generation: "g1", planSha256: "p1", artifactSha256: a.artifact_sha256 },
    runnerStatus: state === "running" ? { state: "RUNNING" } : {
      state: state === "clean" ? "CLOSED" : "RUNNING",
      generation: "g1",
      plan_sha256: "p1",
      started_at: STARTED,
    },
  } as unknown as ContainerEvidence;
}

/** What a removal reads of `a`: its container (or none) and a group of `members` members. */
export function runnerReading(
  a: RemoveRunnerAction,
  c: ContainerEvidence | null,
  members = 0,
): RunnerReading {
  const obs = {
    containers: c ? [c] : [],
    kafka: { group: { state: members > 0 ? "Stable" : "Empty", members: Array(members).fill({}) } },
  } as unknown as RunnerObservation;
  return { action: a, obs, seen: seen(a, obs) };
}
