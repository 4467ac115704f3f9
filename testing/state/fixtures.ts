/**
 * Private test fixtures shared by the contract suite and the crash worker.
 * @module
 */
import { sha256Hex } from "../../lib/state/_canonical.ts";
import type {
  Checkpoint,
  OperationIntent,
  ResumeRecord,
  RunnerAction,
} from "../../lib/state/journal.ts";
import {
  emptyOwnership,
  type OwnedConnector,
  type OwnershipDocument,
  stateChecksum,
} from "../../lib/state/ownership.ts";

/** A deterministic fake sha256 from a label. */
export const hex = (label: string): string => sha256Hex(label);

/** Ownership with one runner (serial 1). */
export function ownedRunner(project: string, environment: string | null): OwnershipDocument {
  return {
    ...emptyOwnership(project, environment),
    serial: 1,
    topics: [{ name: "raw_orders", topic_id: "AAAAAAAAAAAAAAAAAAAAAA" }, {
      name: "eligible_orders",
      topic_id: "BBBBBBBBBBBBBBBBBBBBBB",
    }],
    runners: [{
      model: "eligible_orders",
      application_id: `sluice-${project}-eligible_orders`,
      artifact_sha256: hex("artifact-v1"),
      volume: { name: `sluice-${project}-eligible_orders`, instance_id: crypto.randomUUID() },
      container_name: `sluice-${project}-eligible_orders`,
    }],
  };
}

/** One owned connector record (a sink with one secret key). */
export function ownedConnector(
  project: string,
  environment: string | null,
  connector = "orders_out",
): OwnedConnector {
  return {
    connector,
    name: environment === null
      ? `sluice-${project}-${connector}`
      : `sluice-${project}-${environment}-${connector}`,
    cluster: "main",
    cluster_identity: { kafka_cluster_id: "CCCCCCCCCCCCCCCCCCCCCC", endpoint_digest: hex("ep") },
    kind: "sink",
    artifact_sha256: hex(`connector-${connector}`),
    config_fingerprint: hex(`fingerprint-${connector}`),
    secret_keys: ["sftp.password"],
    secret_key_id: "0123456789abcdef",
  };
}

/** The typed replacement action for {@link ownedRunner}. */
export function replaceAction(own: OwnershipDocument): RunnerAction {
  const r = own.runners[0];
  return {
    type: "replace_runner_predicate",
    model: r.model,
    application_id: r.application_id,
    prior_artifact_sha256: r.artifact_sha256,
    desired_artifact_sha256: hex("artifact-v2"),
    evidence: {
      old_container_id: "c0ffee",
      volume_instance_id: r.volume.instance_id,
      token: "not-a-secret: typed evidence keeps full integrity",
      offsets_lower_bound: [{ topic: "raw_orders", partition: 0, offset: "5" }],
    },
  };
}

/** A runner_update intent over `own`. */
export function runnerIntent(
  own: OwnershipDocument,
  options: { reviewed?: boolean; operationId?: string } = {},
): OperationIntent {
  return {
    operation_id: options.operationId ?? crypto.randomUUID(),
    kind: "runner_update",
    project: own.project,
    environment: own.environment,
    actor: "tester",
    created_at: "2026-11-29T10:00:00.000Z",
    original_state_checksum: stateChecksum(own),
    reviewed_plan_sha256: options.reviewed === false ? null : hex("plan-format-6"),
    details: { plan_format: 6 },
  };
}

/** The full successful checkpoint chain, in order. */
export function checkpointChain(): Checkpoint[] {
  const at = "2026-11-29T10:00:01.000Z";
  return [
    { name: "action_started", action_index: 0, recorded_at: at },
    {
      name: "old_closed",
      action_index: 0,
      recorded_at: at,
      offsets: [{ topic: "raw_orders", partition: 0, offset: "5" }],
      exit_code: 143,
    },
    { name: "old_removed", action_index: 0, recorded_at: at },
    { name: "replacement_created", action_index: 0, recorded_at: at, container_id: "cafe01" },
    {
      name: "action_completed",
      action_index: 0,
      recorded_at: at,
      outcome: "success",
      detail: null,
    },
  ];
}

/** A resume record. */
export function resumeRecord(id: string = crypto.randomUUID()): ResumeRecord {
  return {
    authorization_id: id,
    actor: "operator",
    authorized_at: "2026-11-29T10:05:00.000Z",
    recovery: { next_boundary: "replacement_created", observed: { candidate: "cafe01" } },
  };
}
