/**
 * The replacement driver: the spec's boundary table as data ({@link BOUNDARY_TABLE}) and one
 * transition function ({@link decide}) that, from the last durable checkpoint and a fresh
 * observation, permits at most one next step. {@link drive} runs the loop: observe, decide,
 * cross one boundary (journal write or provider mutation, through the boundary helper), and
 * observe again, until the action is recorded completed, blocked, or a bounded wait expires.
 *
 * Rules it enforces (spec, "Execution and interruption boundaries"):
 * - every checkpoint is durably recorded before the next boundary is crossed;
 * - clean close = fresh exited status, raw exit 0 or 143 (kept as is), no OOM, an inactive
 *   group, resumable offsets at or above the reviewed lower bounds;
 * - before the candidate first starts, committed offsets equal the clean-close vector; after
 *   it starts they may only advance; retention may not overtake them;
 * - a lost remove response is resolved by exact absence after a durable clean close; a lost
 *   create response by the uniquely named candidate's exact generation labels and inputs;
 * - no force-kill, ever; a timeout leaves things as they are.
 *
 * @example
 * ```ts
 * import { decide } from "./driver.ts";
 * // const step = decide({ stage: "old_closed", ... });  // → { kind: "remove", containerId }
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import type {
  Checkpoint,
  CheckpointName,
  PartitionOffset,
  RunnerAction,
} from "../state/journal.ts";
import type { StateSnapshot, StateStore } from "../state/store.ts";
import type { ContainerSpec, DockerPort } from "../providers/docker/port.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import { crossBoundary, defineBoundary } from "./boundary.ts";
import type { Blocker } from "./checks.ts";
import { blockerError, verifyGeneration } from "./checks.ts";
import type { ContainerEvidence, RunnerObservation } from "./observer.ts";
import { observeRunner } from "./observer.ts";
import {
  candidateContainerName,
  generationOf,
  LABEL,
  RUNNER_ENV,
  RUNNER_EXECUTION,
  RUNNER_PATHS,
  volumeName,
} from "./labels.ts";
import { buildMountedPlan, mountedPlanBytes } from "./mounted_plan.ts";
import { writeMountedPlanFile } from "./apply.ts";

/** The last durable point of an action: its intent only, or its last checkpoint. */
export type Stage = "intent" | CheckpointName;

/** One row of the boundary table (spec, "Execution and interruption boundaries"). */
export interface BoundaryRow {
  durable: Stage | "old absent after old_closed" | "candidate present" | "candidate ready";
  requires: string;
  next: string;
}

/** The spec's boundary table, as data (rendered by `state runner-status` and the runbook). */
export const BOUNDARY_TABLE: readonly BoundaryRow[] = [
  {
    durable: "intent",
    requires: "exact prior runner, valid progress, matching protected state",
    next: "record action_started",
  },
  {
    durable: "action_started",
    requires: "same prior generation and unchanged identities",
    next: "request TERM, then wait within the configured close bound",
  },
  {
    durable: "action_started",
    requires:
      "fresh old-plan closed status, raw exit 0 or 143, no forced/OOM failure, inactive group, resumable monotonic offsets",
    next: "record old_closed with its final progress",
  },
  {
    durable: "old_closed",
    requires: "same stopped old container, volume and inactive progress",
    next: "remove that exact stopped container without force or volume removal",
  },
  {
    durable: "old absent after old_closed",
    requires: "exact absence and retained volume/progress",
    next: "record old_removed",
  },
  {
    durable: "old_removed",
    requires: "old and candidate absent, retained volume, inactive resumable progress",
    next: "create one stopped candidate with this operation's generation labels",
  },
  {
    durable: "candidate present",
    requires: "exact desired mounted plan, generation, image, network and volume; never started",
    next: "record replacement_created with its container ID",
  },
  {
    durable: "replacement_created",
    requires: "exact stopped candidate and progress at least as recent as clean close",
    next: "start that candidate without any offset initialization",
  },
  {
    durable: "candidate ready",
    requires:
      "fresh desired-plan running status, one group member, unchanged identities and monotonic progress",
    next: "record action completed, commit desired ownership state, finalize operation",
  },
];

// Every boundary a replacement crosses, declared once (the fault-injection inventory).
export const B = {
  started: defineBoundary("journal.action_started", "journal", "record action_started"),
  term: defineBoundary("docker.signal_term", "provider", "request TERM of the old runner"),
  closed: defineBoundary("journal.old_closed", "journal", "record old_closed with final progress"),
  remove: defineBoundary("docker.remove_old", "provider", "remove the exact stopped old container"),
  removed: defineBoundary("journal.old_removed", "journal", "record old_removed"),
  create: defineBoundary("docker.create_candidate", "provider", "create the stopped candidate"),
  created: defineBoundary("journal.replacement_created", "journal", "record replacement_created"),
  start: defineBoundary("docker.start_candidate", "provider", "start the candidate"),
  completed: defineBoundary("journal.action_completed", "journal", "record action_completed"),
} as const;

/** The next step the evidence authorizes (at most one). */
export type Step =
  | { kind: "record"; checkpoint: Checkpoint }
  | { kind: "term"; containerId: string }
  | { kind: "remove"; containerId: string }
  | { kind: "create" }
  | { kind: "start"; containerId: string }
  | { kind: "wait"; reason: string }
  | { kind: "complete" }
  | { kind: "blocked"; blockers: Blocker[] };

/** What the reviewed action fixes about the candidate (derived, never observed). */
export interface CandidateExpectation {
  name: string;
  generation: string;
  operationId: string;
  actionIndex: number;
  /** sha256 of the typed action: the candidate's evidence-fingerprint label. */
  fingerprint: string;
  desiredArtifact: RunnerArtifact;
  desiredArtifactSha256: string;
  /** The exact bytes the candidate mounts and their sha256 (its plan label). */
  planBytes: Uint8Array;
  planSha256: string;
}

/** Input of {@link decide}. */
export interface DecideInput {
  stage: Stage;
  checkpoints: Checkpoint[];
  action: RunnerAction;
  candidate: CandidateExpectation;
  obs: RunnerObservation;
  /** In-memory facts of this invocation (never trusted across processes). */
  memory: { termRequested: boolean; startRequested: boolean };
  /** True under an explicit `state resume` (a started-then-closed candidate may restart). */
  resuming: boolean;
}

interface Evidence {
  old_container_id: string;
  old_plan_sha256: string | null;
  volume: { name: string; instance_id: string };
  identities: {
    cluster_id: string;
    input_topic_id: string;
    output_topic_id: string;
    docker_daemon_id: string;
    image_id: string;
    network_id: string;
  };
  offsets_lower_bounds: PartitionOffset[];
}

/** The reviewed evidence of a typed action (validated shape). */
export function actionEvidence(action: RunnerAction): Evidence {
  const e = action.evidence as unknown as Evidence;
  if (
    typeof e?.old_container_id !== "string" || typeof e?.volume?.instance_id !== "string" ||
    typeof e?.identities?.cluster_id !== "string" || !Array.isArray(e?.offsets_lower_bounds)
  ) {
    throw new SluiceError("PLAN_INVALID", "the typed action lacks its reviewed evidence");
  }
  return e;
}

function blk(code: string, message: string, evidence?: Record<string, unknown>): Blocker {
  return { code, model: null, message, evidence: evidence ?? {} };
}

/** Build the candidate expectation from the reviewed action. */
export function expectCandidate(
  action: RunnerAction,
  operationId: string,
  actionIndex: number,
  fingerprint: string,
  bootstrapInternal: string,
): CandidateExpectation {
  const e = actionEvidence(action);
  const desired = (action.evidence as Record<string, unknown>)
    .desired_artifact as unknown as RunnerArtifact;
  const mounted = buildMountedPlan(desired, bootstrapInternal, {
    cluster_id: e.identities.cluster_id,
    input_topic_id: e.identities.input_topic_id,
    output_topic_id: e.identities.output_topic_id,
  });
  const { bytes, sha256 } = mountedPlanBytes(mounted);
  return {
    name: candidateContainerName(action.application_id, operationId, actionIndex),
    generation: generationOf(operationId, actionIndex),
    operationId,
    actionIndex,
    fingerprint,
    desiredArtifact: desired,
    desiredArtifactSha256: action.desired_artifact_sha256,
    planBytes: bytes,
    planSha256: sha256,
  };
}

/** The committed vector of the observation, as the journal records it. */
export function committedVector(obs: RunnerObservation): PartitionOffset[] {
  return obs.kafka.ranges.map((r) => ({
    topic: obs.target.inputTopic,
    partition: r.partition,
    offset: obs.kafka.committed[String(r.partition)] ?? "-1",
  }));
}

/** Invariants that hold at every stage: provider identities, volume, inventory, progress. */
function commonChecks(
  input: DecideInput,
  e: Evidence,
): { blockers: Blocker[]; old: ContainerEvidence | null; cand: ContainerEvidence | null } {
  const { obs, candidate } = input;
  const out: Blocker[] = [];
  const k = obs.kafka;
  if (k.clusterId !== e.identities.cluster_id) {
    out.push(
      blk(
        "BLOCKED_CLUSTER_CHANGED",
        `the broker reports cluster ${k.clusterId}, not the reviewed ${e.identities.cluster_id}`,
      ),
    );
  }
  for (
    const [role, t, id] of [
      ["input", k.input, e.identities.input_topic_id],
      ["output", k.output, e.identities.output_topic_id],
    ] as const
  ) {
    if (!t) out.push(blk("BLOCKED_TOPIC_MISSING", `the ${role} topic no longer exists`));
    else if (t.id !== id) {
      out.push(
        blk(
          "BLOCKED_TOPIC_REPLACED",
          `the ${role} topic ${t.name} has ID ${t.id}, not the reviewed ${id}`,
          {
            observed: t.id,
            reviewed: id,
          },
        ),
      );
    }
  }
  if (obs.daemonId !== e.identities.docker_daemon_id) {
    out.push(
      blk(
        "BLOCKED_DOCKER_DAEMON_CHANGED",
        `Docker daemon ${obs.daemonId} is not the reviewed ${e.identities.docker_daemon_id}`,
      ),
    );
  }
  if (!obs.image || obs.image.id !== e.identities.image_id) {
    out.push(
      blk("BLOCKED_WRONG_IMAGE", `runner image ${e.identities.image_id} is absent or changed`),
    );
  }
  if (obs.networkId !== e.identities.network_id) {
    out.push(
      blk(
        "BLOCKED_WRONG_NETWORK",
        `network ${obs.target.network} has ID ${obs.networkId}, not the reviewed ${e.identities.network_id}`,
      ),
    );
  }
  const v = obs.volume;
  if (!v.exists) {
    out.push(
      blk("BLOCKED_VOLUME_MISSING", `state volume ${v.name} does not exist; it is never recreated`),
    );
  } else if (v.instanceLabel !== e.volume.instance_id || v.instanceFile !== e.volume.instance_id) {
    out.push(
      blk(
        "BLOCKED_VOLUME_INSTANCE_CHANGED",
        `state volume ${v.name} is not the reviewed instance ${e.volume.instance_id}`,
        {
          label: v.instanceLabel,
          file: v.instanceFile,
          reviewed: e.volume.instance_id,
        },
      ),
    );
  }
  let old: ContainerEvidence | null = null;
  let cand: ContainerEvidence | null = null;
  for (const c of obs.containers) {
    if (c.id === e.old_container_id) old = c;
    else if (isOurCandidate(c, candidate)) cand = c;
    else {
      out.push(blk(
        "BLOCKED_FOREIGN_GENERATION",
        `container ${
          c.id.slice(0, 12)
        } (${c.name}) carries application ID ${obs.applicationId} but is neither the reviewed old runner nor this operation's candidate`,
        {
          container: c.id,
          name: c.name,
          generation: c.labels.generation,
          operation: c.labels.operationId,
        },
      ));
    }
  }
  if (k.group.members.length > 1) {
    out.push(
      blk(
        "BLOCKED_EXTRA_GROUP_MEMBERS",
        `consumer group ${obs.applicationId} has ${k.group.members.length} members`,
        {
          members: k.group.members,
        },
      ),
    );
  }
  for (const r of k.ranges) {
    const c = k.committed[String(r.partition)];
    const lower = e.offsets_lower_bounds.find((x) => x.partition === r.partition)?.offset;
    if (c === undefined) {
      out.push(
        blk(
          "BLOCKED_OFFSETS_MISSING",
          `no committed offset for ${obs.target.inputTopic}-${r.partition}`,
        ),
      );
    } else if (BigInt(c) < BigInt(r.earliest)) {
      out.push(
        blk(
          "BLOCKED_RETENTION_LOSS",
          `committed offset ${c} of ${obs.target.inputTopic}-${r.partition} fell below the earliest retained ${r.earliest}`,
          {
            partition: r.partition,
            committed: c,
            earliest: r.earliest,
          },
        ),
      );
    } else if (lower !== undefined && BigInt(c) < BigInt(lower)) {
      // reviewed offsets are lower bounds: fresh reads never replace them
      out.push(
        blk(
          "BLOCKED_OFFSET_REGRESSION",
          `committed offset ${c} of ${obs.target.inputTopic}-${r.partition} is below the reviewed lower bound ${lower}`,
          {
            partition: r.partition,
            committed: c,
            lowerBound: lower,
          },
        ),
      );
    }
  }
  return { blockers: out, old, cand };
}

/** A container is this operation's candidate only by its exact generation labels. */
function isOurCandidate(c: ContainerEvidence, x: CandidateExpectation): boolean {
  return c.labels.operationId === x.operationId && c.labels.actionIndex === String(x.actionIndex) &&
    c.labels.generation === x.generation && c.labels.evidenceFingerprint === x.fingerprint;
}

/** The candidate's exact desired inputs (never started is checked by the caller). */
function candidateInputs(c: ContainerEvidence, x: CandidateExpectation): Blocker[] {
  const out = verifyGeneration(c, {
    artifact_sha256: x.desiredArtifactSha256,
    application_id: x.desiredArtifact.application_id,
  }, x.desiredArtifact.model);
  if (c.name !== x.name) {
    out.push(
      blk(
        "BLOCKED_FOREIGN_GENERATION",
        `candidate ${c.id.slice(0, 12)} is named ${c.name}, not ${x.name}`,
      ),
    );
  }
  if (c.labels.planSha256 !== x.planSha256 || c.plan.sha256 !== x.planSha256) {
    out.push(
      blk(
        "BLOCKED_WRONG_MOUNTED_PLAN",
        `candidate ${
          c.id.slice(0, 12)
        } mounts plan ${c.plan.sha256}, not the desired ${x.planSha256}`,
      ),
    );
  }
  return out;
}

function vectorsEqual(a: PartitionOffset[], b: PartitionOffset[]): boolean {
  const key = (v: PartitionOffset[]) =>
    JSON.stringify(
      [...v].sort((x, y) => x.partition - y.partition).map((p) => [p.partition, p.offset]),
    );
  return key(a) === key(b);
}

function cleanClose(input: DecideInput): PartitionOffset[] {
  const cp = input.checkpoints.find((c) => c.name === "old_closed");
  if (!cp || cp.name !== "old_closed") throw new Error("old_closed checkpoint missing");
  return cp.offsets;
}

function stoppedProgressEqualsCleanClose(input: DecideInput): Blocker[] {
  const now = committedVector(input.obs);
  const clean = cleanClose(input);
  if (!vectorsEqual(now, clean)) {
    return [blk(
      "BLOCKED_OFFSET_JUMP_WHILE_STOPPED",
      "committed offsets moved while no runner was running; that cannot come from the stopped runner",
      { cleanClose: clean, observed: now },
    )];
  }
  if (input.obs.kafka.group.members.length > 0) {
    return [
      blk(
        "BLOCKED_GROUP_ACTIVE",
        `consumer group ${input.obs.applicationId} has members while no runner runs`,
        {
          members: input.obs.kafka.group.members,
        },
      ),
    ];
  }
  return [];
}

function progressAtLeastCleanClose(input: DecideInput): Blocker[] {
  const clean = cleanClose(input);
  const now = committedVector(input.obs);
  for (const c of clean) {
    const o = now.find((x) => x.partition === c.partition);
    if (!o || BigInt(o.offset) < BigInt(c.offset)) {
      return [
        blk(
          "BLOCKED_OFFSET_REGRESSION",
          `committed offset of partition ${c.partition} is ${
            o?.offset ?? "absent"
          }, below the clean-close ${c.offset}`,
        ),
      ];
    }
  }
  return [];
}

function at(input: DecideInput): string {
  return new Date(input.obs.observedAt).toISOString();
}

/**
 * The transition function: from the durable stage and a fresh observation, the one next step
 * the evidence authorizes — or a wait, completion, or the blockers that forbid any step.
 */
export function decide(input: DecideInput): Step {
  const e = actionEvidence(input.action);
  const { blockers, old, cand } = commonChecks(input, e);
  if (blockers.length > 0) return { kind: "blocked", blockers };
  const idx = input.candidate.actionIndex;
  const x = input.candidate;
  switch (input.stage) {
    case "intent": {
      if (!old) {
        return {
          kind: "blocked",
          blockers: [
            blk(
              "BLOCKED_RUNNER_MISSING",
              `the reviewed runner ${e.old_container_id.slice(0, 12)} is absent`,
            ),
          ],
        };
      }
      if (cand) {
        return {
          kind: "blocked",
          blockers: [
            blk("BLOCKED_FOREIGN_GENERATION", "a candidate exists before the action started"),
          ],
        };
      }
      const gen = verifyGeneration(old, {
        artifact_sha256: input.action.prior_artifact_sha256,
        application_id: input.action.application_id,
      }, input.action.model);
      if (gen.length > 0) return { kind: "blocked", blockers: gen };
      if (!old.running) {
        return {
          kind: "blocked",
          blockers: [
            blk(
              "BLOCKED_RUNNER_NOT_RUNNING",
              `the reviewed runner is ${old.status} (exit ${old.exitCode})`,
            ),
          ],
        };
      }
      return {
        kind: "record",
        checkpoint: { name: "action_started", action_index: idx, recorded_at: at(input) },
      };
    }
    case "action_started": {
      if (cand) {
        return {
          kind: "blocked",
          blockers: [
            blk("BLOCKED_FOREIGN_GENERATION", "a candidate exists before the old runner closed"),
          ],
        };
      }
      if (!old) {
        return {
          kind: "blocked",
          blockers: [
            blk(
              "BLOCKED_OLD_VANISHED",
              "the old runner disappeared before a clean close was recorded; its absence proves nothing",
            ),
          ],
        };
      }
      const gen = verifyGeneration(old, {
        artifact_sha256: input.action.prior_artifact_sha256,
        application_id: input.action.application_id,
      }, input.action.model);
      if (gen.length > 0) return { kind: "blocked", blockers: gen };
      if (old.running) {
        return input.memory.termRequested
          ? { kind: "wait", reason: "old runner closing" }
          : { kind: "term", containerId: old.id };
      }
      return closeEvidence(input, old, idx);
    }
    case "old_closed": {
      const p = stoppedProgressEqualsCleanClose(input);
      if (p.length > 0) return { kind: "blocked", blockers: p };
      if (cand) {
        return {
          kind: "blocked",
          blockers: [
            blk(
              "BLOCKED_FOREIGN_GENERATION",
              "a candidate exists before the old runner was removed",
            ),
          ],
        };
      }
      if (!old) {
        // a lost remove response: exact absence after the durable clean close
        return {
          kind: "record",
          checkpoint: { name: "old_removed", action_index: idx, recorded_at: at(input) },
        };
      }
      if (old.running || old.status !== "exited") {
        return {
          kind: "blocked",
          blockers: [
            blk(
              "BLOCKED_OLD_RESTARTED",
              `the old runner is ${old.status} after its clean close was recorded`,
            ),
          ],
        };
      }
      const cp = input.checkpoints.find((c) => c.name === "old_closed");
      if (cp?.name === "old_closed" && cp.exit_code !== old.exitCode) {
        return {
          kind: "blocked",
          blockers: [
            blk(
              "BLOCKED_STALE_STATUS",
              `the old runner's exit code is now ${old.exitCode}, not the recorded ${cp.exit_code}`,
            ),
          ],
        };
      }
      return { kind: "remove", containerId: old.id };
    }
    case "old_removed": {
      const p = stoppedProgressEqualsCleanClose(input);
      if (p.length > 0) return { kind: "blocked", blockers: p };
      if (old) {
        return {
          kind: "blocked",
          blockers: [blk("BLOCKED_FOREIGN_GENERATION", "the removed old runner is present again")],
        };
      }
      if (!cand) return { kind: "create" };
      // a lost create response: adopt only this operation's exact, never-started candidate
      const inputs = candidateInputs(cand, x);
      if (inputs.length > 0) return { kind: "blocked", blockers: inputs };
      if (cand.everStarted) {
        return {
          kind: "blocked",
          blockers: [
            blk(
              "BLOCKED_CANDIDATE_STARTED_EARLY",
              "the candidate was started before replacement_created was recorded",
            ),
          ],
        };
      }
      return {
        kind: "record",
        checkpoint: {
          name: "replacement_created",
          action_index: idx,
          recorded_at: at(input),
          container_id: cand.id,
        },
      };
    }
    case "replacement_created": {
      const cp = input.checkpoints.find((c) => c.name === "replacement_created");
      const recordedId = cp?.name === "replacement_created" ? cp.container_id : "";
      if (old) {
        return {
          kind: "blocked",
          blockers: [blk("BLOCKED_FOREIGN_GENERATION", "the removed old runner is present again")],
        };
      }
      if (!cand || cand.id !== recordedId) {
        return {
          kind: "blocked",
          blockers: [
            blk(
              "BLOCKED_CANDIDATE_MISSING",
              `the recorded candidate ${recordedId.slice(0, 12)} is absent`,
            ),
          ],
        };
      }
      const inputs = candidateInputs(cand, x);
      if (inputs.length > 0) return { kind: "blocked", blockers: inputs };
      if (!cand.everStarted) {
        const p = stoppedProgressEqualsCleanClose(input);
        if (p.length > 0) return { kind: "blocked", blockers: p };
        return input.memory.startRequested
          ? { kind: "wait", reason: "candidate starting" }
          : { kind: "start", containerId: cand.id };
      }
      const p = progressAtLeastCleanClose(input);
      if (p.length > 0) return { kind: "blocked", blockers: p };
      if (cand.running) {
        const s = cand.runnerStatus;
        const ready = s?.state === "RUNNING" && s.generation === x.generation &&
          s.plan_sha256 === x.planSha256 &&
          input.obs.kafka.group.members.length === 1;
        if (!ready) {
          return { kind: "wait", reason: "candidate not yet RUNNING with one group member" };
        }
        return {
          kind: "record",
          checkpoint: {
            name: "action_completed",
            action_index: idx,
            recorded_at: at(input),
            outcome: "success",
            detail: null,
          },
        };
      }
      // started, then closed: restart only under explicit resume, with fresh clean-close evidence
      if (![0, 143].includes(cand.exitCode) || cand.oomKilled) {
        return {
          kind: "blocked",
          blockers: [
            blk(
              "BLOCKED_CANDIDATE_FAILED",
              `the candidate exited with code ${cand.exitCode}${
                cand.oomKilled ? " (OOM-killed)" : ""
              }`,
              {
                exitCode: cand.exitCode,
                oomKilled: cand.oomKilled,
              },
            ),
          ],
        };
      }
      if (!input.resuming) {
        return {
          kind: "blocked",
          blockers: [
            blk(
              "BLOCKED_CANDIDATE_CLOSED",
              "the candidate started and closed; only an explicit 'state resume' may restart it",
            ),
          ],
        };
      }
      if (input.obs.kafka.group.members.length > 0) {
        return { kind: "wait", reason: "group still active after the candidate closed" };
      }
      return input.memory.startRequested
        ? { kind: "wait", reason: "candidate restarting" }
        : { kind: "start", containerId: cand.id };
    }
    case "action_completed": {
      const cp = input.checkpoints.find((c) => c.name === "action_completed");
      if (cp?.name === "action_completed" && cp.outcome !== "success") {
        return {
          kind: "blocked",
          blockers: [
            blk(
              "BLOCKED_ACTION_FAILED",
              `the action is recorded completed with failure: ${cp.detail ?? ""}`,
            ),
          ],
        };
      }
      return { kind: "complete" };
    }
  }
}

function closeEvidence(input: DecideInput, old: ContainerEvidence, idx: number): Step {
  const started = input.checkpoints.find((c) => c.name === "action_started");
  const out: Blocker[] = [];
  if (old.status !== "exited") {
    out.push(blk("BLOCKED_UNKNOWN_EXIT", `the old runner is ${old.status}, not exited`));
  }
  // the raw exit code is evidence as it is: 0 or 143 only, and never rewritten
  if (![0, 143].includes(old.exitCode)) {
    out.push(
      blk(
        "BLOCKED_UNCLEAN_EXIT",
        `the old runner exited with code ${old.exitCode}; only 0 or 143 is a clean close`,
        { exitCode: old.exitCode },
      ),
    );
  }
  if (old.oomKilled) {
    out.push(blk("BLOCKED_OOM", "the old runner was OOM-killed", { exitCode: old.exitCode }));
  }
  if (started && Date.parse(old.finishedAt) < Date.parse(started.recorded_at)) {
    out.push(
      blk(
        "BLOCKED_STALE_STATUS",
        `the old runner finished at ${old.finishedAt}, before the action started at ${started.recorded_at}`,
      ),
    );
  }
  const s = old.runnerStatus;
  if (s && s.state !== "CLOSED") {
    out.push(
      blk(
        "BLOCKED_UNCLEAN_EXIT",
        `the runner's status file says ${String(s.state)} (${String(s.reason ?? "")}), not CLOSED`,
        { status: s },
      ),
    );
  }
  if (out.length > 0) return { kind: "blocked", blockers: out };
  const g = input.obs.kafka.group;
  if (g.members.length > 0 || !["Empty", "Dead"].includes(g.state)) {
    return { kind: "wait", reason: `group ${g.state} with ${g.members.length} members` };
  }
  return {
    kind: "record",
    checkpoint: {
      name: "old_closed",
      action_index: idx,
      recorded_at: at(input),
      offsets: committedVector(input.obs),
      exit_code: old.exitCode,
    },
  };
}

/** Everything {@link drive} needs. */
export interface DriveContext {
  docker: DockerPort;
  kafka: KafkaPort;
  store: StateStore;
  /** Throws STATE_LOCK_LOST when the lock is no longer held (checked before each mutation). */
  verifyLock: () => Promise<void>;
  plansDir: string;
  extraLabels?: Record<string, string>;
  /** Bounds of the waits (defaults: close 60 s, ready 120 s). */
  closeTimeoutMs?: number;
  readyTimeoutMs?: number;
  pollMs?: number;
  progress?: (step: string, detail: string) => void;
}

/** The outcome of one drive. */
export type DriveOutcome =
  | { kind: "completed"; snapshot: StateSnapshot; observation: RunnerObservation }
  | { kind: "blocked"; snapshot: StateSnapshot; blockers: Blocker[]; stage: Stage }
  | { kind: "timeout"; snapshot: StateSnapshot; reason: string; stage: Stage };

/** The last durable stage of action `idx` in a snapshot's control. */
export function stageOf(checkpoints: Checkpoint[], idx: number): Stage {
  const mine = checkpoints.filter((c) => c.action_index === idx);
  return mine.length === 0 ? "intent" : mine[mine.length - 1].name;
}

/**
 * Run the loop from the snapshot's durable stage until completion is recorded, a blocker is
 * found, or a bounded wait expires. Every write goes through the boundary helper.
 */
export async function drive(
  ctx: DriveContext,
  start: StateSnapshot,
  readCheckpoints: (s: StateSnapshot) => Checkpoint[],
  action: RunnerAction,
  candidate: CandidateExpectation,
  resuming: boolean,
): Promise<DriveOutcome> {
  let snap = start;
  const memory = { termRequested: false, startRequested: false };
  const target = {
    applicationId: action.application_id,
    inputTopic: candidate.desiredArtifact.input.topic,
    outputTopic: candidate.desiredArtifact.output.topic,
    image: candidate.desiredArtifact.image,
    network: candidate.desiredArtifact.network,
  };
  const progress = ctx.progress ?? (() => {});
  let waitingSince: number | null = null;
  let waitBound = 0;
  while (true) {
    const checkpoints = readCheckpoints(snap);
    const stage = stageOf(checkpoints, candidate.actionIndex);
    const obs = await observeRunner(ctx, target);
    const step = decide({ stage, checkpoints, action, candidate, obs, memory, resuming });
    if (step.kind !== "wait") waitingSince = null;
    switch (step.kind) {
      case "complete":
        return { kind: "completed", snapshot: snap, observation: obs };
      case "blocked":
        return { kind: "blocked", snapshot: snap, blockers: step.blockers, stage };
      case "wait": {
        if (waitingSince === null) {
          waitingSince = Date.now();
          waitBound = stage === "action_started"
            ? (ctx.closeTimeoutMs ?? 60_000)
            : (ctx.readyTimeoutMs ?? 120_000);
        }
        if (Date.now() - waitingSince > waitBound) {
          // no force-kill on timeout: leave everything as it is
          return { kind: "timeout", snapshot: snap, reason: step.reason, stage };
        }
        await new Promise((r) => setTimeout(r, ctx.pollMs ?? 100));
        continue;
      }
      case "record": {
        const b = boundaryFor(step.checkpoint.name);
        snap = await crossBoundary(b, () => ctx.store.recordCheckpoint(snap, step.checkpoint));
        progress(step.checkpoint.name, describeCheckpoint(step.checkpoint));
        continue;
      }
      case "term":
        await ctx.verifyLock();
        await crossBoundary(B.term, () => ctx.docker.signalTerm(step.containerId));
        memory.termRequested = true;
        progress("term", `TERM requested for ${step.containerId.slice(0, 12)}`);
        continue;
      case "remove":
        await ctx.verifyLock();
        await crossBoundary(B.remove, () => ctx.docker.removeContainer(step.containerId));
        progress("remove", `removed ${step.containerId.slice(0, 12)} (volume kept)`);
        continue;
      case "create": {
        await ctx.verifyLock();
        const planPath = await writeMountedPlanFile(
          ctx.plansDir,
          candidate.planBytes,
          candidate.planSha256,
        );
        const image = await ctx.docker.inspectImage(candidate.desiredArtifact.image);
        if (!image) {
          throw blockerError([blk("BLOCKED_WRONG_IMAGE", "the runner image disappeared")]);
        }
        const spec = candidateSpec(ctx, action, candidate, planPath, image.env);
        const id = await crossBoundary(B.create, () => ctx.docker.createContainer(spec));
        progress("create", `candidate ${candidate.name} created (${id.slice(0, 12)})`);
        continue;
      }
      case "start":
        await ctx.verifyLock();
        await crossBoundary(B.start, () => ctx.docker.startContainer(step.containerId));
        memory.startRequested = true;
        progress("start", `candidate ${step.containerId.slice(0, 12)} started`);
        continue;
    }
  }
}

function boundaryFor(name: CheckpointName) {
  switch (name) {
    case "action_started":
      return B.started;
    case "old_closed":
      return B.closed;
    case "old_removed":
      return B.removed;
    case "replacement_created":
      return B.created;
    case "action_completed":
      return B.completed;
  }
}

function describeCheckpoint(c: Checkpoint): string {
  switch (c.name) {
    case "old_closed":
      return `clean close recorded: exit ${c.exit_code}, offsets ${
        c.offsets.map((o) => `${o.partition}:${o.offset}`).join(", ")
      }`;
    case "replacement_created":
      return `candidate ${c.container_id.slice(0, 12)} recorded`;
    default:
      return `${c.name} recorded`;
  }
}

function candidateSpec(
  ctx: DriveContext,
  action: RunnerAction,
  x: CandidateExpectation,
  planPath: string,
  imageEnv: string[],
): ContainerSpec {
  const a = x.desiredArtifact;
  return {
    name: x.name,
    image: a.image,
    labels: {
      ...ctx.extraLabels,
      [LABEL.managedBy]: "sluice",
      [LABEL.project]: a.project,
      [LABEL.environment]: a.environment ?? "",
      [LABEL.model]: a.model,
      [LABEL.applicationId]: action.application_id,
      [LABEL.artifactSha256]: x.desiredArtifactSha256,
      [LABEL.planSha256]: x.planSha256,
      [LABEL.generation]: x.generation,
      [LABEL.operationId]: x.operationId,
      [LABEL.actionIndex]: String(x.actionIndex),
      [LABEL.evidenceFingerprint]: x.fingerprint,
    },
    env: [
      ...imageEnv,
      `${RUNNER_ENV.planSha256}=${x.planSha256}`,
      `${RUNNER_ENV.generation}=${x.generation}`,
    ],
    network: a.network,
    planHostPath: planPath,
    planContainerPath: RUNNER_PATHS.plan,
    volume: volumeName(action.application_id),
    volumeContainerPath: RUNNER_PATHS.volume,
    memoryBytes: RUNNER_EXECUTION.memoryBytes,
    stopTimeoutSeconds: RUNNER_EXECUTION.stopTimeoutSeconds,
  };
}
