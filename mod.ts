/**
 * sluice: deploy Kafka Streams SQL jobs as Docker containers and replace their filter
 * predicate without losing the application ID, the state volume or committed offsets.
 *
 * @example
 * ```ts
 * import { SLUICE_VERSION } from "./mod.ts";
 * console.log(SLUICE_VERSION);
 * ```
 * @module
 */
export { SLUICE_VERSION } from "./lib/version.ts";
export { EXIT, exitCodeFor, SluiceError } from "./lib/errors.ts";
export type { SourceLocation } from "./lib/errors.ts";

// Project model and compiler (lib/project, lib/expr, lib/artifact). Example:
//   const project = await loadProject(".", { environment: null });
//   const { artifacts, warnings } = compile(project);
//   for (const a of artifacts) console.log(a.model, a.sha256);
export { loadProject, readProject } from "./lib/project/load.ts";
export type { LoadOptions, Project, ProjectModel } from "./lib/project/load.ts";
export { compile, compileModel } from "./lib/project/compile.ts";
export type { CompiledArtifact, CompileResult } from "./lib/project/compile.ts";
export { parseManifest } from "./lib/project/manifest.ts";
export type {
  ExternalDecl,
  KafkaAddresses,
  Manifest,
  ModelDecl,
  SourceDecl,
  StateBackendConfig,
} from "./lib/project/manifest.ts";
export { checkModelSql, checkPredicateSql } from "./lib/project/model.ts";
export type { CheckedModel, ProjectionColumn } from "./lib/project/model.ts";
export { checkExternals } from "./lib/project/externals.ts";
export { initProject, starterFiles } from "./lib/project/starter.ts";
export type { InitOptions, InitResult } from "./lib/project/starter.ts";
export type { Expr, LiteralExpr } from "./lib/expr/ast.ts";
export type { ColumnType, SchemaField, Value } from "./lib/expr/schema.ts";
export { evaluate } from "./lib/expr/evaluate.ts";
export type { Truth } from "./lib/expr/evaluate.ts";
export { decodeRecord } from "./lib/expr/decode.ts";
export type { DecodeErrorCode, DecodeResult } from "./lib/expr/decode.ts";
export {
  artifactCanonicalJson,
  artifactSha256,
  validateArtifact,
} from "./lib/artifact/artifact.ts";
export type { RunnerArtifact } from "./lib/artifact/artifact.ts";
export {
  canonicalJson,
  canonicalSha256,
  parseCanonicalJson,
  sha256Hex,
} from "./lib/artifact/canonical.ts";
export { redactForDisplay } from "./lib/artifact/redact.ts";
export { applicationId } from "./lib/artifact/application_id.ts";

// Deployment state (lib/state): ownership, the pending operation journal, history and the
// deployment lock, behind one StateStore contract with local-files and PostgreSQL backends.
// Example:
//   const store = openStateStore({ backend: "local", dir: ".sluice/state", project: "orders",
//     environment: null });
//   await store.init();
//   await store.acquireLock({ actor: "ci" });
//   const snap = await store.load();
//   console.log(snap.revision, snap.ownership?.checksum, snap.control?.opened.status);
//   await store.close();
export { openStateStore } from "./lib/state/open.ts";
export type { StateStoreConfig } from "./lib/state/open.ts";
export type {
  AcquireLockOptions,
  CompletedReceiptLookup,
  FinalizeResult,
  InterruptionInput,
  StateSnapshot,
  StateStore,
  TerminalPending,
} from "./lib/state/store.ts";
export { CHECKPOINT_ORDER, RESUME_LIMIT } from "./lib/state/journal.ts";
export type {
  Checkpoint,
  CheckpointName,
  Incident,
  OperationIntent,
  PartitionOffset,
  ResumeAuthorization,
  ResumeRecord,
  RunnerAction,
  StoreIdentity,
} from "./lib/state/journal.ts";
export { emptyOwnership, stateChecksum } from "./lib/state/ownership.ts";
export type {
  OwnedRunner,
  OwnedTopic,
  OwnedVolume,
  OwnershipDocument,
} from "./lib/state/ownership.ts";
export type { CompletionReceipt, HistoryEvent } from "./lib/state/history.ts";
export type { LockOwner, LockStatus, StatePrimitive } from "./lib/state/primitive.ts";

// OpenLineage for a predicate replacement (lib/lineage): one run per operation (run ID = the
// operation UUID). Delivery never throws and never decides the commit. Example:
//   const sink = lineageSink("lineage.jsonl"); // or an http(s):// endpoint (POST, 5 s timeout)
//   const r = await emitRunEvent(sink, "START", { operationId, project: "orders",
//     environment: null, applicationId, bootstrap: "kafka:9092", inputTopic: "orders",
//     outputTopic: "big_orders" });
//   if (r.warning) console.error(`warning: ${r.warning}`);
export {
  buildRunEvent,
  jobNamespace,
  kafkaNamespace,
  OPENLINEAGE_SPEC_VERSION,
  RUN_EVENT_SCHEMA_URL,
  SLUICE_PRODUCER,
} from "./lib/lineage/events.ts";
export type {
  LineageContext,
  LineageEventType,
  LineageFacet,
  RunEvent,
  RunEventOptions,
} from "./lib/lineage/events.ts";
export { emit, emitRunEvent, lineageSink } from "./lib/lineage/emit.ts";
export type { EmitResult, LineageSink, SinkOptions } from "./lib/lineage/emit.ts";
export { LineageSchemaMissing, loadRunEventValidator } from "./lib/lineage/validate.ts";
export type { RunEventValidator, ValidationResult } from "./lib/lineage/validate.ts";

// The user journeys (lib/runtime): observe, plan and apply a project; execute, inspect and
// resume a reviewed predicate replacement. Each returns a typed result and prints nothing.
// Example:
//   const p = await plan({ dir: "./orders" });
//   await writePlanFile("replace.plan.json", p.plan);       // review it, then:
//   const r = await executeReviewed({ dir: "./orders", planPath: "replace.plan.json" });
//   if (r.committed !== true) console.log(r.commands.status, r.commands.resume);
export { apply, observe, openProject, plan } from "./lib/runtime/session.ts";
export type {
  ApplyOptions,
  OpenedProject,
  PlanOptions,
  PlanResult,
  ProjectOptions,
} from "./lib/runtime/session.ts";
export type { ApplyResult } from "./lib/runtime/apply.ts";
export {
  executeReviewed,
  executeReviewed as applyReviewed,
} from "./lib/runtime/replacement/execute.ts";
export { resumeReviewed as resume } from "./lib/runtime/replacement/resume.ts";
export { runnerStatus } from "./lib/runtime/replacement/runner_status.ts";
export type { OperationOptions, ReviewedOptions } from "./lib/runtime/replacement/operation.ts";
export type { ReplacementResult, RunnerStatusReport } from "./lib/runtime/replacement/result.ts";
export type { Clock, RuntimeDeps, UuidSource } from "./lib/runtime/deps.ts";
export { observeRunner, observeRunners } from "./lib/runtime/observer.ts";
export type { ProjectObservation, RunnerObservation } from "./lib/validation/observation.ts";
export { decide } from "./lib/runtime/replacement/decide.ts";
export type { Step } from "./lib/runtime/replacement/decide.ts";
export { REPLACEMENT_TABLE } from "./lib/protocol/replacement.ts";
export type { ReplacementRow, Stage } from "./lib/protocol/replacement.ts";
export { CREATE_TABLE } from "./lib/protocol/create.ts";
export type { CreateRow } from "./lib/protocol/create.ts";
export { faultInventory } from "./lib/fault/inventory.ts";
export type { InventoryEntry } from "./lib/fault/inventory.ts";
export type { Blocker } from "./lib/validation/blocker.ts";
export { isNoop, planProject } from "./lib/plan/plan.ts";
export type { Plan, PlannedAction } from "./lib/plan/plan.ts";
export { readPlanFile, verifyPlanCurrent, writePlanFile } from "./lib/plan/plan_file.ts";

// Kafka Connect connectors (lib/project/connectors.ts, lib/artifact/connector.ts,
// lib/providers/connect). Example:
//   const manifest = parseManifest(await Deno.readTextFile("sluice.yaml"), "sluice.yaml");
//   for (const c of compileConnectors(manifest)) console.log(c.artifact.name, c.sha256);
//   const connect = restConnect(manifest.connect[0].restHost);
//   console.log((await connect.clusterInfo()).kafkaClusterId, await connect.listConnectors());
export type {
  ConnectClusterDecl,
  ConnectorDecl,
  ConnectorRemovalDecl,
} from "./lib/project/connectors.ts";
export { compileConnectors } from "./lib/project/compile_connectors.ts";
export type { CompiledConnector } from "./lib/project/compile_connectors.ts";
export {
  connectorArtifactSha256,
  connectorName,
  redactObservedConfig,
  resolveConnectorConfig,
  SECRET_HASH_KEY_ENV,
  validateConnectorArtifact,
} from "./lib/artifact/connector.ts";
export type { ConnectorArtifact } from "./lib/artifact/connector.ts";
export { restConnect } from "./lib/providers/connect/rest.ts";
export { CONNECT_SITES } from "./lib/protocol/connector.ts";
// connector changes in plans and applies (lib/plan/connectors.ts, lib/runtime/connectors.ts)
export type { ConnectorAction, ConnectorPlanItem, PlanConnectors } from "./lib/plan/connectors.ts";
export type { ConnectorApplyResult, ConnectorOutcome } from "./lib/runtime/connectors.ts";
export type { ConnectorsObservation } from "./lib/validation/connector_observation.ts";
export type {
  ConfigSubmission,
  ConnectClusterInfo,
  ConnectorInfo,
  ConnectorStatus,
  ConnectPort,
} from "./lib/providers/connect/port.ts";
// Review before it happens (lib/review): a plan with its review (predicate diff as canonical
// SQL, downstream impact with live consumer groups, an optional live preview sealed as counts),
// or a Git base/head comparison; one review object, rendered as text or Markdown. Example:
//   const { plan, review } = await planReview({ dir: "./orders", preview: 1000 });
//   console.log(renderReviewMarkdown(review));                // a pull-request comment
//   const d = await diff({ dir: "./orders", base: "HEAD~1" }); // offline, from Git objects
export { diff, planReview } from "./lib/review/journey.ts";
export type { DiffOptions, PlanReviewOptions, PlanReviewResult } from "./lib/review/journey.ts";
export { reviewOfPlan } from "./lib/review/review.ts";
export type { ChangeKind, ModelReview, PredicateSide, Review } from "./lib/review/review.ts";
export { compareProjects } from "./lib/review/compare.ts";
export { renderReviewText } from "./lib/review/render_text.ts";
export { renderReviewMarkdown } from "./lib/review/render_markdown.ts";
export {
  evaluateSample,
  PREVIEW_DEFAULTS,
  previewSummary,
  previewTargets,
  sampleModel,
} from "./lib/review/preview.ts";
export type { PreviewLimits, PreviewModel, PreviewTarget } from "./lib/review/preview.ts";
export { observeConsumers } from "./lib/review/consumers.ts";
export { planImpact } from "./lib/plan/impact.ts";
export type { LiveConsumers, ModelImpact, PlanImpact } from "./lib/plan/impact.ts";
export type { PreviewSummary } from "./lib/plan/preview_summary.ts";
export { printPredicate } from "./lib/expr/print.ts";
export { openRevision } from "./lib/providers/git/git.ts";
