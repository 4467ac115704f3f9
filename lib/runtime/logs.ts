/**
 * `sluice logs MODEL` ({@link modelLogs}): the log lines of a model's current generation,
 * whatever its container is named (after a replacement it is the candidate's name, not
 * `sluice-<app>`). The container is found by its application-ID label, never by name: the one
 * labelled with the owned artifact, else the only one. Read-only.
 *
 * @example
 * ```ts
 * import { modelLogs } from "./logs.ts";
 * // online: reads the runner container's log from Docker
 * async function lastLines(dir: string, model: string): Promise<void> {
 *   const r = await modelLogs({ dir }, model, { tail: 50, onLine: (l) => console.log(l.line) });
 *   console.log(r.container, r.end);
 * }
 * console.log(typeof lastLines);
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { ContainerInfo, LogLine } from "../providers/docker/port.ts";
import { LABEL } from "./labels.ts";
import { openSession, type SessionOptions } from "./session.ts";

/** What {@link modelLogs} reads and where each line goes. */
export interface LogsOptions {
  /** Keep printing new lines until the container stops or `signal` aborts. */
  follow?: boolean;
  /** Only lines written at or after this RFC 3339 time (see {@link parseSince}). */
  since?: string;
  /** Only the last N lines. */
  tail?: number;
  /** Ends a followed read. */
  signal?: AbortSignal;
  /** Each line, as it is read. */
  onLine: (line: LogLine) => void;
}

/** Whose lines were read and how the read ended. */
export interface LogsResult {
  /** The model. */
  model: string;
  /** Its application ID (the label the container was found by). */
  application_id: string;
  /** The container's name. */
  container: string;
  /** The container's exact ID. */
  container_id: string;
  /** Its generation label (`<operation>/<action>`, or the create's), or null. */
  generation: string | null;
  /** `done` (every line so far), `stopped` (followed until it stopped), `aborted`, `absent` (removed meanwhile). */
  end: "done" | "stopped" | "aborted" | "absent";
}

/**
 * Read the current generation's log lines of one model (by model name or application ID).
 *
 * @example
 * ```ts
 * import { modelLogs } from "./logs.ts";
 * // online: follows the runner container's log in Docker until it stops or `signal` aborts
 * async function follow(dir: string, model: string, signal: AbortSignal): Promise<void> {
 *   await modelLogs({ dir }, model, { follow: true, signal, onLine: (l) => console.log(l.line) });
 * }
 * console.log(typeof follow);
 * ```
 */
export async function modelLogs(
  options: SessionOptions,
  model: string,
  logs: LogsOptions,
): Promise<LogsResult> {
  await using s = await openSession(options);
  const compiled = s.compiled.artifacts.find((a) =>
    a.model === model || a.artifact.application_id === model
  );
  if (!compiled) {
    throw new SluiceError(
      "PROJECT_MODEL_NOT_FOUND",
      `no model '${model}' in the project (models: ${
        s.compiled.artifacts.map((a) => a.model).join(", ") || "none"
      })`,
    );
  }
  const appId = compiled.artifact.application_id;
  const snap = await s.store.load();
  const owned = snap.ownership?.document.runners.find((r) => r.model === compiled.model) ?? null;
  const containers = await s.docker.listContainers(LABEL.applicationId, appId);
  const c = currentContainer(containers, owned?.artifact_sha256 ?? null);
  if (!c) {
    if (containers.length === 0) {
      throw new SluiceError(
        "BLOCKED_RUNNER_MISSING",
        `model ${compiled.model} has no container (application ID ${appId}); 'sluice plan' shows what apply would create`,
        { evidence: { model: compiled.model, application_id: appId } },
      );
    }
    throw new SluiceError(
      "BLOCKED_FOREIGN_GENERATION",
      `${containers.length} containers carry application ID ${appId} and none is the owned generation: ${
        containers.map((x) => x.name).join(", ")
      }; read one with 'docker logs NAME'`,
      { evidence: { model: compiled.model, containers: containers.map((x) => x.name) } },
    );
  }
  const end = await s.docker.containerLogs(
    c.id,
    { follow: logs.follow, since: logs.since, tail: logs.tail, signal: logs.signal },
    logs.onLine,
  );
  return {
    model: compiled.model,
    application_id: appId,
    container: c.name,
    container_id: c.id,
    generation: c.labels[LABEL.generation] ?? null,
    end,
  };
}

/** The owned generation's container, else the only one; null when neither exists. */
function currentContainer(
  containers: ContainerInfo[],
  ownedArtifact: string | null,
): ContainerInfo | null {
  const owned = containers.filter((c) =>
    ownedArtifact !== null && c.labels[LABEL.artifactSha256] === ownedArtifact
  );
  if (owned.length === 1) return owned[0];
  return containers.length === 1 ? containers[0] : null;
}

/**
 * `--since`: a duration before `now` (`90s`, `10m`, `2h`, `1d`) or an RFC 3339 time, as the
 * RFC 3339 time the Docker port takes.
 *
 * @example
 * ```ts
 * import { parseSince } from "./logs.ts";
 * parseSince("10m", Date.parse("2026-01-01T00:10:00Z")); // "2026-01-01T00:00:00.000Z"
 * ```
 */
export function parseSince(text: string, now: number): string {
  const m = /^(\d+)(s|m|h|d)$/.exec(text.trim());
  if (m) {
    const unit =
      { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "s" | "m" | "h" | "d"];
    return new Date(now - Number(m[1]) * unit).toISOString();
  }
  const t = Date.parse(text);
  if (/^\d{4}-\d\d-\d\dT/.test(text) && !Number.isNaN(t)) return new Date(t).toISOString();
  throw new SluiceError(
    "USAGE_SINCE",
    `--since takes a duration (90s, 10m, 2h, 1d) or an RFC 3339 time, found '${text}'`,
  );
}
