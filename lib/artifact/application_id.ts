/**
 * The Kafka Streams application ID of a model: `sluice-<project>[-<env>]-<model>`. It is
 * derived from project, environment and model only (never from the predicate or the
 * projection), so a predicate replacement keeps it.
 *
 * @example
 * ```ts
 * import { applicationId } from "./application_id.ts";
 * console.log(applicationId("orders", null, "eligible_orders")); // sluice-orders-eligible_orders
 * console.log(applicationId("orders", "prod", "eligible_orders")); // sluice-orders-prod-eligible_orders
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";

/** Characters Kafka accepts in a group ID that sluice also uses for container names. */
const GROUP_ID_SAFE = /^[A-Za-z0-9._-]{1,249}$/;
/** Project, environment and model names contain no `-`, so the ID splits back uniquely. */
const PART = /^[a-z][a-z0-9_]*$/;

/**
 * The application ID for a model. Throws `ARTIFACT_INVALID_APPLICATION_ID` when a part is
 * not a valid name or the result is not Kafka group-ID-safe.
 * @example
 * ```ts
 * applicationId("orders", null, "eligible_orders"); // "sluice-orders-eligible_orders"
 * ```
 */
export function applicationId(project: string, environment: string | null, model: string): string {
  for (
    const [what, part] of [["project", project], ["environment", environment], [
      "model",
      model,
    ]] as const
  ) {
    if (part !== null && !PART.test(part)) {
      throw new SluiceError(
        "ARTIFACT_INVALID_APPLICATION_ID",
        `${what} name '${part}' cannot be part of an application ID (use [a-z][a-z0-9_]*)`,
      );
    }
  }
  const id = environment === null
    ? `sluice-${project}-${model}`
    : `sluice-${project}-${environment}-${model}`;
  if (!GROUP_ID_SAFE.test(id)) {
    throw new SluiceError(
      "ARTIFACT_INVALID_APPLICATION_ID",
      `application ID '${id}' is not Kafka group-ID-safe ([A-Za-z0-9._-], at most 249 characters)`,
    );
  }
  return id;
}
