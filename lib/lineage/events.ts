/**
 * OpenLineage RunEvents for one predicate replacement.
 *
 * One replacement operation is one OpenLineage run: its run ID is the operation UUID, its job is
 * the Kafka Streams application (`sluice://<project>[/<env>]`, named by the application ID), its
 * input and output datasets are the model's Kafka topics (`kafka://<host:port>`, named by the
 * topic). START is built once the operation's intent is acknowledged, COMPLETE once finalization
 * is verified, FAIL for a runtime failure or an unknown commit. Building an event decides nothing:
 * it only describes what the coordinator already knows.
 *
 * @example
 * ```ts
 * const ev = buildRunEvent("START", {
 *   operationId: crypto.randomUUID(),
 *   project: "orders",
 *   environment: null,
 *   applicationId: "sluice-orders-big_orders",
 *   bootstrap: "kafka:9092",
 *   inputTopic: "orders",
 *   outputTopic: "big_orders",
 * });
 * console.log(JSON.stringify(ev));
 * ```
 * @module
 */
import { SLUICE_VERSION } from "../version.ts";
import { redactText } from "../artifact/redact.ts";

/** The OpenLineage spec version whose RunEvent definition these events follow. */
export const OPENLINEAGE_SPEC_VERSION = "2-0-2";
/** `schemaURL` of every RunEvent built here (the spec's required JSON pointer). */
export const RUN_EVENT_SCHEMA_URL =
  `https://openlineage.io/spec/${OPENLINEAGE_SPEC_VERSION}/OpenLineage.json#/$defs/RunEvent`;
/** `producer` of every event and facet built here. */
export const SLUICE_PRODUCER = `https://github.com/sluice/sluice/tree/${SLUICE_VERSION}`;
/** `_schemaURL` of the custom `sluice` run facet (its schema is kept beside this file). */
export const SLUICE_FACET_SCHEMA_URL =
  `${SLUICE_PRODUCER}/lib/lineage/schema/SluiceRunFacet.json#/$defs/SluiceRunFacet`;
/** `_schemaURL` of the standard errorMessage run facet attached to FAIL events. */
export const ERROR_MESSAGE_FACET_SCHEMA_URL =
  "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet";

/** The run states sluice emits. */
export type LineageEventType = "START" | "COMPLETE" | "FAIL";

/** What the coordinator knows about the operation, enough to describe it as a run. */
export interface LineageContext {
  /** The operation UUID (becomes `run.runId`). */
  operationId: string;
  project: string;
  environment: string | null;
  /** The Kafka Streams application ID (becomes `job.name`). */
  applicationId: string;
  /** Kafka bootstrap servers as configured (`host:port[,host:port...]`); the first names the namespace. */
  bootstrap: string;
  inputTopic: string;
  outputTopic: string;
  /** The model name, recorded in the sluice facet when given. */
  model?: string | null;
  /** sha256 of the artifact the runtime ran before (the reviewed prior). */
  priorArtifactSha256?: string | null;
  /** sha256 of the artifact the operation installs. */
  desiredArtifactSha256?: string | null;
  /** sha256 of the reviewed plan file. */
  planSha256?: string | null;
}

/** Extra details of one event. */
export interface RunEventOptions {
  /** Defaults to now. */
  eventTime?: Date;
  /** For FAIL: what happened (becomes the standard errorMessage run facet). */
  failure?: {
    message: string;
    /** blocked | timeout | unknown | error — recorded in the sluice facet. */
    outcome?: string | null;
  } | null;
}

/** A facet as OpenLineage requires: `_producer` and `_schemaURL`, then its own fields. */
export interface LineageFacet {
  _producer: string;
  _schemaURL: string;
  [key: string]: unknown;
}

/** An OpenLineage dataset reference. */
export interface LineageDataset {
  namespace: string;
  name: string;
}

/** The RunEvent shape built here (a subset of the spec's RunEvent). */
export interface RunEvent {
  eventType: LineageEventType;
  eventTime: string;
  run: { runId: string; facets?: Record<string, LineageFacet> };
  job: { namespace: string; name: string };
  inputs: LineageDataset[];
  outputs: LineageDataset[];
  producer: string;
  schemaURL: string;
}

/** `sluice://<project>[/<env>]`. */
export function jobNamespace(project: string, environment: string | null): string {
  return `sluice://${project}${environment ? `/${environment}` : ""}`;
}

/** `kafka://<host:port>` of the first bootstrap server (OpenLineage's Kafka naming). */
export function kafkaNamespace(bootstrap: string): string {
  const first = bootstrap.split(",").map((s) => s.trim()).find((s) => s.length > 0);
  if (!first) throw new Error("lineage: empty Kafka bootstrap server list");
  return `kafka://${first.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "")}`;
}

/** Build one RunEvent for the operation. Pure: it reads only its arguments (and the clock). */
export function buildRunEvent(
  eventType: LineageEventType,
  ctx: LineageContext,
  options: RunEventOptions = {},
): RunEvent {
  const kafka = kafkaNamespace(ctx.bootstrap);
  const sluice: LineageFacet = {
    _producer: SLUICE_PRODUCER,
    _schemaURL: SLUICE_FACET_SCHEMA_URL,
    operation: "predicate_replacement",
    operationId: ctx.operationId,
    project: ctx.project,
    environment: ctx.environment,
    applicationId: ctx.applicationId,
  };
  if (ctx.model != null) sluice.model = ctx.model;
  if (ctx.priorArtifactSha256 != null) sluice.priorArtifactSha256 = ctx.priorArtifactSha256;
  if (ctx.desiredArtifactSha256 != null) sluice.desiredArtifactSha256 = ctx.desiredArtifactSha256;
  if (ctx.planSha256 != null) sluice.planSha256 = ctx.planSha256;
  const facets: Record<string, LineageFacet> = { sluice };
  if (eventType === "FAIL") {
    const failure = options.failure ?? { message: "predicate replacement failed" };
    if (failure.outcome != null) sluice.outcome = failure.outcome;
    facets.errorMessage = {
      _producer: SLUICE_PRODUCER,
      _schemaURL: ERROR_MESSAGE_FACET_SCHEMA_URL,
      // an error message may quote a connection string: never carry its credentials
      message: redactText(failure.message),
      programmingLanguage: "TypeScript",
    };
  }
  return {
    eventType,
    eventTime: (options.eventTime ?? new Date()).toISOString(),
    run: { runId: ctx.operationId, facets },
    job: { namespace: jobNamespace(ctx.project, ctx.environment), name: ctx.applicationId },
    inputs: [{ namespace: kafka, name: ctx.inputTopic }],
    outputs: [{ namespace: kafka, name: ctx.outputTopic }],
    producer: SLUICE_PRODUCER,
    schemaURL: RUN_EVENT_SCHEMA_URL,
  };
}
