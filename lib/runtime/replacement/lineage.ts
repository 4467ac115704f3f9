/**
 * OpenLineage for one invocation of a reviewed replacement (run ID = the operation UUID):
 * START only after the intent is acknowledged, COMPLETE only after verified finalization, FAIL
 * for a runtime failure or an unknown commit. Delivery never decides commit: a failed delivery
 * is a warning on the result.
 *
 * @example
 * ```ts
 * import { lineageFor } from "./lineage.ts";
 * // const lineage = lineageFor(op, operationId);
 * // await lineage.emit("START");
 * // return await lineage.finish(result);
 * ```
 * @module
 */
import type { LineageContext } from "../../lineage/events.ts";
import { emitRunEvent, lineageSink } from "../../providers/lineage/emit.ts";
import type { ReviewedOperation } from "./operation.ts";
import type { ReplacementResult } from "./result.ts";

/** The lineage of one invocation. */
export interface OperationLineage {
  emit(
    type: "START" | "COMPLETE" | "FAIL",
    failure?: { message: string; outcome: string },
  ): Promise<void>;
  /** Emit COMPLETE or FAIL for the result and attach the delivery warnings to it. */
  finish(result: ReplacementResult): Promise<ReplacementResult>;
}

/**
 * The lineage of one invocation of the operation `operationId`.
 *
 * @example
 * ```ts
 * import { lineageFor } from "./lineage.ts";
 * // const l = lineageFor(op, operationId); await l.emit("START");
 * ```
 */
export function lineageFor(op: ReviewedOperation, operationId: string): OperationLineage {
  const { project: p, reviewed: r, options } = op;
  const warnings: string[] = [];
  const sink = options.openlineage ? lineageSink(options.openlineage) : null;
  const desired = op.candidate(operationId).desiredArtifact;
  const ctx: LineageContext = {
    operationId,
    project: p.store.project,
    environment: p.store.environment,
    applicationId: r.action.application_id,
    bootstrap: p.project.manifest.kafka.bootstrapHost,
    inputTopic: desired.input.topic,
    outputTopic: desired.output.topic,
    model: r.action.model,
    priorArtifactSha256: r.action.prior_artifact_sha256,
    desiredArtifactSha256: r.action.desired_artifact_sha256,
    planSha256: r.sha256,
  };
  const emit: OperationLineage["emit"] = async (type, failure) => {
    if (!sink) return;
    const res = await emitRunEvent(sink, type, ctx, {
      eventTime: new Date(p.clock.now()),
      ...(failure ? { failure } : {}),
    });
    if (res.warning) warnings.push(res.warning);
  };
  return {
    emit,
    async finish(result) {
      if (result.committed === true) await emit("COMPLETE");
      else {
        await emit("FAIL", {
          message: result.reason ??
            (result.blockers.length > 0
              ? result.blockers.map((b) => `[${b.code}] ${b.message}`).join("; ")
              : result.outcome),
          outcome: result.outcome,
        });
      }
      return { ...result, lineage_warnings: [...result.lineage_warnings, ...warnings] };
    },
  };
}
