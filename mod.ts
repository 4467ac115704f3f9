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
 * This module is the versioned surface (`docs/sdk-import.md` lists it): a field documented
 * `@internal` is evidence or a test hook whose shape may change in any version.
 *
 * @example
 * ```ts
 * import { openProject, planKind, writePlanFile } from "./mod.ts";
 *
 * await using project = await openProject({
 *   dir: "./orders",
 *   onProgress: (e) => console.log(`${e.kind}: ${e.message}`),
 * });
 * // offline: from the state alone; the default (online) also observes Docker and Kafka
 * const { plan, review } = await project.plan({ offline: true });
 * if (plan.blockers.length > 0) throw new Error(plan.blockers[0].message);
 * console.log(review.summary);
 * await writePlanFile("reviewed.plan.json", plan);
 * if (planKind(plan) === "replacement") {
 *   // a reviewed predicate replacement is applied from its file, boundary by boundary
 *   const outcome = await project.apply({ plan: "reviewed.plan.json" });
 *   if (outcome.kind === "replacement" && outcome.result.outcome !== "completed") {
 *     console.log(outcome.result.commands.resume);
 *   }
 * }
 * ```
 * @module
 */

// the version, errors and exit statuses
export { SLUICE_VERSION } from "./lib/version.ts";
export { ERROR_CODES, EXIT, exitCodeFor, SluiceError } from "./lib/errors.ts";
export type { ErrorCode, ExitStatus, SourceLocation } from "./lib/errors.ts";

// the front door: a project handle, its options and requests
export { openProject } from "./lib/sdk/project.ts";
export type { OpenProjectOptions, SluiceProject } from "./lib/sdk/project.ts";
export { planKind } from "./lib/sdk/results.ts";
export type {
  ApplyOutcome,
  PlanKind,
  ReplacementResult,
  ResumeOutcome,
} from "./lib/sdk/results.ts";
export type { RuntimeDeps } from "./lib/runtime/deps.ts";
export type { LogsResult } from "./lib/runtime/logs.ts";
export type { LogLine } from "./lib/providers/docker/port.ts";

// progress events (their versioned schema: docs/events.md)
export { EVENT_SCHEMA_VERSION, progressLabel } from "./lib/runtime/progress.ts";
export type { Logger, ProgressEvent, ProgressListener } from "./lib/runtime/progress.ts";

// plans and their reviews
export { readPlanFile, writePlanFile } from "./lib/plan/plan_file.ts";
export type { PlanResult } from "./lib/runtime/session.ts";
export type { PlanReviewResult } from "./lib/review/journey.ts";
export type { Plan } from "./lib/plan/plan.ts";
export type { Blocker } from "./lib/validation/blocker.ts";
export type { ChangeKind, ModelReview, PredicateSide, Review } from "./lib/review/review.ts";
export type { ConnectorReview } from "./lib/review/review.ts";
export type { ModelImpact } from "./lib/plan/impact.ts";
export type { PreviewModel } from "./lib/review/preview.ts";
export type { PreviewSummary } from "./lib/plan/preview_summary.ts";
export { renderReviewMarkdown } from "./lib/review/render_markdown.ts";
export { renderReviewText } from "./lib/review/render_text.ts";

// what the journeys return
export type {
  CompileOutput,
  EnvironmentSummary,
  ValidateResult,
} from "./lib/project/environments.ts";
export type { InstancePlacement } from "./lib/project/placement.ts";
export type { ApplyResult } from "./lib/runtime/apply_context.ts";
export type { RunnerCredentialsEvidence } from "./lib/plan/runner_credentials.ts";
export type { RemovalResult, RemovedRunner } from "./lib/runtime/removal.ts";
export type { RunnerStatusReport } from "./lib/runtime/replacement/result.ts";
export type {
  JourneyStatusReport,
  OperationStatusReport,
} from "./lib/runtime/pending_operation.ts";
export { CHECKPOINT_NAMES } from "./lib/protocol/replacement.ts";
export type { CheckpointName, Stage, StepKind } from "./lib/protocol/replacement.ts";
export type { ProjectObservation } from "./lib/sdk/observation.ts";
export type { ProjectStatus } from "./lib/runtime/status.ts";
export type { EndpointStatus } from "./lib/runtime/endpoint_status.ts";
export type { InstanceStatus, UnplacedContainer } from "./lib/runtime/instances_status.ts";
export type { RunnerDrift } from "./lib/state/history.ts";
export type { RunnerStopReport } from "./lib/validation/runner_stop.ts";
export type { RunnerStop } from "./lib/artifact/runner_exits.ts";
export { runnerStopOf } from "./lib/sdk/observation.ts";
export type { AbandonResult } from "./lib/runtime/abandon.ts";
export type { RetentionResult } from "./lib/runtime/replacement/retention.ts";
export type { RestartResult } from "./lib/runtime/restart.ts";
export type { SkipRecordResult } from "./lib/runtime/skip_record.ts";
export type { AcknowledgeDriftResult } from "./lib/runtime/acknowledge_drift.ts";

// the state store, named by its configuration
export type { StateView } from "./lib/state/view.ts";
export type { StoreIdentity } from "./lib/state/journal.ts";
export type { StateStoreConfig } from "./lib/state/open.ts";
export type { AddressOrigin } from "./lib/providers/errors.ts";
export type { LockStatus } from "./lib/state/primitive.ts";
export { resolveStateStore } from "./lib/runtime/state_store.ts";
export type {
  KafkaPrincipalOverride,
  KafkaSecurityOverride,
  SettingsOverride,
} from "./lib/project/settings_override.ts";
export { initStateStore, rotateSealKeyOf, showStateStore } from "./lib/state/view.ts";

// a new project, the runner image, the versions
export { initProject } from "./lib/project/starter.ts";
export type { InitResult } from "./lib/project/starter.ts";
export { buildRunnerImage } from "./lib/providers/runner_image.ts";
export type { RunnerImageResult } from "./lib/providers/runner_image.ts";
export { sluiceVersion } from "./lib/version_report.ts";
export type { VersionReport } from "./lib/version_report.ts";

// showing results and logs without secrets
export { redactForDisplay, redactText } from "./lib/artifact/redact.ts";
export { parseSince } from "./lib/runtime/logs.ts";

// the start-up check of an entry point: a stray test-only fault switch is refused
export { guardInventorySwitch } from "./lib/protocol/inventory.ts";
