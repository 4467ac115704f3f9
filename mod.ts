/**
 * sluice: deploy Kafka Streams SQL jobs as Docker containers and replace their filter predicate
 * without losing the application ID, the state volume or committed offsets.
 *
 * Open a project with {@link openProject} and call the journeys on it — `plan` (with its
 * review), `apply`, `observe`, `status`, `runnerStatus`, `resume`, `diff` — each returning a
 * typed result and printing nothing; progress arrives as typed events. Failures are
 * {@link SluiceError}s with a stable {@link ErrorCode}. Plans travel as sealed files
 * ({@link writePlanFile}, {@link readPlanFile}).
 *
 * @example
 * ```ts
 * import { openProject, writePlanFile } from "./mod.ts";
 *
 * await using project = await openProject({
 *   dir: "./orders",
 *   onProgress: (e) => console.log(`${e.kind}: ${e.message}`),
 * });
 * const { plan, review } = await project.plan();
 * if (plan.blockers.length > 0) throw new Error(plan.blockers[0].message);
 * console.log(review.summary);
 * await writePlanFile("replace.plan.json", plan);
 * const outcome = await project.apply({ plan: "replace.plan.json" });
 * if (outcome.kind === "replacement" && outcome.result.committed !== true) {
 *   console.log(outcome.result.commands.resume);
 * }
 * ```
 * @module
 */
export { SLUICE_VERSION } from "./lib/version.ts";
export { ERROR_CODES, EXIT, exitCodeFor, SluiceError } from "./lib/errors.ts";
export type { ErrorCode, ExitStatus, SourceLocation } from "./lib/errors.ts";

// the front door: a project handle and its journeys
export { openProject } from "./lib/sdk/project.ts";
export type {
  AbandonRequest,
  AcknowledgeDriftRequest,
  ApplyOutcome,
  OpenProjectOptions,
  OperationRef,
  ProjectApplyOptions,
  ProjectDiffOptions,
  ProjectPlanOptions,
  RestartRequest,
  ResumeOptions,
  RetentionRequest,
  SkipRecordOptions,
  SluiceProject,
} from "./lib/sdk/project.ts";
export type {
  KafkaPrincipalOverride,
  KafkaSecurityOverride,
  SettingsOverride,
} from "./lib/project/settings_override.ts";
export type { AbandonResult } from "./lib/runtime/abandon.ts";
export type { RestartResult } from "./lib/runtime/restart.ts";
export type { SkipRecordResult } from "./lib/runtime/skip_record.ts";
export type { AcknowledgeDriftResult } from "./lib/runtime/acknowledge_drift.ts";
export type {
  MovedPartition,
  OffsetsMovedWhileStopped,
  StartedOutsideSluice,
} from "./lib/validation/drift.ts";
export type {
  DayTwoEvent,
  DriftAcknowledged,
  RecordSkipped,
  RunnerRestarted,
  StoppedContainer,
} from "./lib/state/history.ts";
export type { RetentionResult } from "./lib/runtime/replacement/retention.ts";
export type { OperatorDecision } from "./lib/state/journal.ts";
export type { OperationAbandoned } from "./lib/state/history.ts";
export type { AbandonInput } from "./lib/state/store.ts";
export type { Clock, RuntimeDeps, UuidSource } from "./lib/runtime/deps.ts";
export { EVENT_SCHEMA_VERSION, progressLabel } from "./lib/runtime/progress.ts";
export type {
  ActionEvent,
  AdoptedEvent,
  BlockedEvent,
  CheckpointEvent,
  CommittedEvent,
  ConnectorEvent,
  CreatedEvent,
  DecisionEvent,
  EventStamp,
  IntentEvent,
  InterruptedEvent,
  Journey,
  Logger,
  OffsetsMovedEvent,
  ProgressBase,
  ProgressEvent,
  ProgressEventBody,
  ProgressListener,
  ReadyEvent,
  ResumeAuthorizedEvent,
  StartedEvent,
  WaitEvent,
} from "./lib/runtime/progress.ts";

// starting a project, the runner image, plan files, state stores named explicitly
export { initProject } from "./lib/project/starter.ts";
export type { InitOptions, InitResult } from "./lib/project/starter.ts";
export { buildRunnerImage } from "./lib/providers/runner_image.ts";
export { sluiceVersion } from "./lib/version_report.ts";
export type { VersionReport } from "./lib/version_report.ts";
export type { RunnerImageOptions, RunnerImageResult } from "./lib/providers/runner_image.ts";
export { readPlanFile, writePlanFile } from "./lib/plan/plan_file.ts";
export { resolveStateStore } from "./lib/runtime/state_store.ts";
export type { ProjectStoreRef } from "./lib/runtime/state_store.ts";
export type { StateStoreConfig } from "./lib/state/open.ts";
export type { AddressOrigin } from "./lib/providers/errors.ts";
export { initStateStore, rotateSealKeyOf, showStateStore } from "./lib/state/view.ts";
export type { SealKeyRotation, StateView } from "./lib/state/view.ts";

// Kafka Connect connectors: the port a project handle can be given, and the shapes of their
// plan, review, apply, observation, status and ownership
export type {
  ConfigSubmission,
  ConnectClusterInfo,
  ConnectorConfig,
  ConnectorInfo,
  ConnectorPlugin,
  ConnectorStatus,
  ConnectPort,
  ConnectState,
} from "./lib/providers/connect/port.ts";
export type {
  ConnectorAction,
  ConnectorPlanItem,
  CreateConnectorAction,
  PlanConnectors,
  ReleaseConnectorAction,
  RemoveConnectorAction,
  UpdateConnectorAction,
} from "./lib/plan/connectors.ts";
export type { ConfigChange, ConnectorArtifact } from "./lib/artifact/connector.ts";
export type { ConnectorObservation } from "./lib/validation/connector_observation.ts";
export type { ConnectorApplyResult, ConnectorOutcome } from "./lib/runtime/connectors.ts";
export type { ConnectorsObservation } from "./lib/validation/connector_observation.ts";
export type { ConnectorReview } from "./lib/review/review.ts";
export type { ConnectorStatusRow } from "./lib/runtime/status.ts";
export type { ConnectClusterIdentity, OwnedConnector } from "./lib/state/ownership.ts";

// taking a runner down (lifecycle.runner_removals)
export type { RemovedGeneration, RemoveRunnerAction } from "./lib/plan/removals.ts";
export type { RunnerResume } from "./lib/plan/plan.ts";
export type { RetainedRunner } from "./lib/state/ownership.ts";
export type { RemovalResult, RemovedRunner } from "./lib/runtime/removal.ts";

// rendering what the journeys return
export { renderReviewText } from "./lib/review/render_text.ts";
export { renderReviewMarkdown } from "./lib/review/render_markdown.ts";
export { redactForDisplay, redactText } from "./lib/artifact/redact.ts";
export type { RedactTextOptions } from "./lib/artifact/redact.ts";

// the start-up check of an entry point: a stray test-only fault switch is refused
export { guardInventorySwitch } from "./lib/protocol/inventory.ts";

// the typed results
export type { CompileOutput, ValidateResult } from "./lib/project/environments.ts";
export type { PlanReviewResult } from "./lib/review/journey.ts";
export type { PlanResult } from "./lib/runtime/session.ts";
export type { Review } from "./lib/review/review.ts";
export type { KeySeal, Plan } from "./lib/plan/plan.ts";
export type { SealKey } from "./lib/state/seal_key.ts";
export type { ApplyResult } from "./lib/runtime/apply_context.ts";
export type { ReplacementResult, RunnerStatusReport } from "./lib/runtime/replacement/result.ts";
export type {
  JourneyStatusReport,
  OperationStatusReport,
  ResumeOutcome,
} from "./lib/runtime/pending_operation.ts";
export type { ProjectObservation } from "./lib/validation/observation.ts";
export type { ModelStatus, ProjectStatus } from "./lib/runtime/status.ts";
export { runnerStopOf } from "./lib/validation/runner_stop.ts";
export type { RunnerStopReport } from "./lib/validation/runner_stop.ts";
export type { RunnerDrift } from "./lib/validation/drift.ts";
export type { LogsOptions, LogsResult } from "./lib/runtime/logs.ts";
export { parseSince } from "./lib/runtime/logs.ts";
export type { LogLine, LogReadOptions } from "./lib/providers/docker/port.ts";
export type { RunnerStop, RunnerStopRecord } from "./lib/artifact/runner_exits.ts";
export type { Blocker } from "./lib/validation/blocker.ts";
export { ARTIFACT_FORMAT, ARTIFACT_VERSION } from "./lib/artifact/artifact.ts";
export { CHECKPOINT_NAMES } from "./lib/protocol/replacement.ts";
export type { Checkpoint } from "./lib/state/journal.ts";
export type { CheckpointName } from "./lib/protocol/replacement.ts";
export type { CompletionReceipt } from "./lib/state/history.ts";
export type { DockerPort } from "./lib/providers/docker/port.ts";
export type { EnvironmentSummary } from "./lib/project/environments.ts";
export type { GitLimits } from "./lib/providers/git/git.ts";
export type { KafkaPort } from "./lib/providers/kafka/port.ts";
export type { LockStatus } from "./lib/state/primitive.ts";
export type { ModelReview } from "./lib/review/review.ts";
export type { PlanImpact } from "./lib/plan/impact.ts";
export type { PlannedAction } from "./lib/plan/plan.ts";
export type { PreviewLimits } from "./lib/review/preview.ts";
export type { PreviewModel } from "./lib/review/preview.ts";
export type { PreviewSummary } from "./lib/plan/preview_summary.ts";
export type { RunnerAction } from "./lib/state/journal.ts";
export type { DeadLetterPolicy, RunnerArtifact } from "./lib/artifact/artifact.ts";
export type { RunnerObservation } from "./lib/validation/observation.ts";
export type { Stage } from "./lib/protocol/replacement.ts";
export type { StateStore } from "./lib/state/store.ts";
export type { StepKind } from "./lib/protocol/replacement.ts";
export type { StoreIdentity } from "./lib/state/journal.ts";
export type { AcquireLockOptions } from "./lib/state/store.ts";
export type { ChangeKind } from "./lib/review/review.ts";
export type { CompiledModelSummary } from "./lib/project/environments.ts";
export type { CompletedReceiptLookup } from "./lib/state/store.ts";
export type { ContainerEvidence } from "./lib/validation/observation.ts";
export type { ContainerInfo } from "./lib/providers/docker/port.ts";
export type { ContainerSpec } from "./lib/providers/docker/port.ts";
export type { ControlDocument } from "./lib/state/journal.ts";
export type { Expr } from "./lib/expr/ast.ts";
export type { FinalizeResult } from "./lib/state/store.ts";
export type { GroupInfo } from "./lib/providers/kafka/port.ts";
export type { GroupListing } from "./lib/providers/kafka/port.ts";
export type { AclBinding, AclResourceType } from "./lib/providers/kafka/port.ts";
export type {
  ExcessPermission,
  MissingPermission,
  RunnerAclObservation,
  RunnerPermissions,
  RunnerRequirement,
} from "./lib/validation/runner_permissions.ts";
export type { ImageInfo } from "./lib/providers/docker/port.ts";
export type { Incident } from "./lib/state/journal.ts";
export type { IntegrityReport } from "./lib/state/store.ts";
export type { InterruptionInput } from "./lib/state/store.ts";
export type { Json } from "./lib/state/_canonical.ts";
export type { KafkaEvidence } from "./lib/validation/observation.ts";
export type { LockOwner } from "./lib/state/primitive.ts";
export type { ModelImpact } from "./lib/plan/impact.ts";
export type { OperationIntent } from "./lib/state/journal.ts";
export type { OwnershipDocument } from "./lib/state/ownership.ts";
export { OWNERSHIP_VERSION } from "./lib/state/ownership.ts";
export type { PartitionOffset } from "./lib/state/journal.ts";
export type { PartitionRange } from "./lib/providers/kafka/port.ts";
export type { PartitionSlice } from "./lib/providers/kafka/port.ts";
export type { PredicateSide } from "./lib/review/review.ts";
export type { PreviewExample } from "./lib/review/preview.ts";
export type { ReadLimits } from "./lib/providers/kafka/port.ts";
export type { RecordRead } from "./lib/providers/kafka/port.ts";
export type { ResumeAuthorization } from "./lib/state/journal.ts";
export type { ResumeRecord } from "./lib/state/journal.ts";
export type { MountedIdentity } from "./lib/protocol/mounted_plan.ts";
export type { RunnerTarget } from "./lib/validation/observation.ts";
export type { SchemaField } from "./lib/expr/schema.ts";
export type { StateSnapshot } from "./lib/state/store.ts";
export type { TerminalPending } from "./lib/state/store.ts";
export type { TopicInfo } from "./lib/providers/kafka/port.ts";
export type { VolumeEvidence } from "./lib/validation/observation.ts";
export type { VolumeDiscard, VolumeInfo } from "./lib/providers/docker/port.ts";
export type { AndExpr } from "./lib/expr/ast.ts";
export type { BetweenExpr } from "./lib/expr/ast.ts";
export type { ColumnExpr } from "./lib/expr/ast.ts";
export type { ColumnType } from "./lib/expr/schema.ts";
export type { CompareExpr } from "./lib/expr/ast.ts";
export type { ControlV3 } from "./lib/state/journal.ts";
export type { ControlV45 } from "./lib/state/journal.ts";
export type { DeclaredConsumer } from "./lib/plan/impact.ts";
export type { GroupMember } from "./lib/providers/kafka/port.ts";
export type { HistoryDocument } from "./lib/state/history.ts";
export type { HistoryEvent } from "./lib/state/history.ts";
export type { OwnershipCommitted } from "./lib/state/history.ts";
export type { ImpactChange } from "./lib/plan/impact.ts";
export type { InExpr } from "./lib/expr/ast.ts";
export type { IsNullExpr } from "./lib/expr/ast.ts";
export type { LiteralExpr } from "./lib/expr/ast.ts";
export type { LiveConsumer } from "./lib/plan/impact.ts";
export type { NotExpr } from "./lib/expr/ast.ts";
export type { OpenedControl } from "./lib/state/journal.ts";
export type { OrExpr } from "./lib/expr/ast.ts";
export type { OwnedRunner } from "./lib/state/ownership.ts";
export type { OwnedTopic } from "./lib/state/ownership.ts";
export type { SampledRecord } from "./lib/providers/kafka/port.ts";
export type { CompareOp } from "./lib/expr/ast.ts";
export type { LiveGroup } from "./lib/plan/impact.ts";
export type { OwnedVolume } from "./lib/state/ownership.ts";
export type { SealedEntry } from "./lib/state/journal.ts";
