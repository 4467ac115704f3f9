/**
 * Names sluice gives to Docker objects and the labels it writes on them. Labels are written
 * atomically by `docker create`, so a container's generation identity survives a lost create
 * response (spec: "The candidate's labels bind the operation UUID, action index and immutable
 * evidence fingerprint").
 * @module
 */

/** Label keys. */
export const LABEL = {
  managedBy: "sluice.managed-by",
  project: "sluice.project",
  /** Empty string for a single-environment project (never an invented "default"). */
  environment: "sluice.environment",
  model: "sluice.model",
  applicationId: "sluice.application-id",
  artifactSha256: "sluice.artifact-sha256",
  /** sha256 of the mounted plan file's bytes: "the running plan label". */
  planSha256: "sluice.plan-sha256",
  generation: "sluice.generation",
  operationId: "sluice.operation-id",
  actionIndex: "sluice.action-index",
  evidenceFingerprint: "sluice.evidence-fingerprint",
  /** The state volume's generated instance UUID (also written in the volume's instance file). */
  volumeInstance: "sluice.volume-instance",
  role: "sluice.role",
  /**
   * The instance index of a member of a set (`instances: N`), on instances 1 to N-1 only:
   * instance 0 carries no such label (its absence reads as 0), so a single runner's labels stay
   * as they were.
   */
  instance: "sluice.instance",
} as const;

/** Paths inside the runner container (docs/artifact-format.md). */
export const RUNNER_PATHS = {
  plan: "/etc/sluice/plan.json",
  volume: "/var/lib/sluice",
  instanceFile: "/var/lib/sluice/instance-id",
  statusFile: "/var/lib/sluice/status.json",
} as const;

/** Environment variables sluice sets on a runner container; nothing else is added. */
export const RUNNER_ENV = {
  planSha256: "SLUICE_PLAN_SHA256",
  generation: "SLUICE_GENERATION",
} as const;

/** Fixed execution options every runner container is created with. */
export const RUNNER_EXECUTION = {
  memoryBytes: 768 * 1024 * 1024,
  restartPolicy: "no",
  /** Above the runner's 20 s close bound (docs/runner.md). */
  stopTimeoutSeconds: 30,
} as const;

/**
 * The state volume of an application (of its instance 0: a single runner's).
 *
 * @example
 * ```ts
 * import { volumeName } from "./labels.ts";
 * volumeName("sluice-orders-m"); // "sluice-orders-m-state"
 * ```
 */
export function volumeName(applicationId: string): string {
  return instanceVolumeName(applicationId, 0);
}

/**
 * The state volume of an application's instance `instance`: instance 0's is the single runner's
 * (`<application ID>-state`), instance `i ≥ 1` has `<application ID>-state-<i>`. (Two required
 * arguments, so that no `ids.map(…)` passes an array index for an instance.)
 *
 * @example
 * ```ts
 * import { instanceVolumeName } from "./labels.ts";
 * instanceVolumeName("sluice-orders-m", 2); // "sluice-orders-m-state-2"
 * ```
 */
export function instanceVolumeName(applicationId: string, instance: number): string {
  return `${applicationId}-state${instance === 0 ? "" : `-${instanceOf(instance)}`}`;
}

/**
 * The name of the first container of an application (of its instance 0), created by `apply`.
 *
 * @example
 * ```ts
 * import { initialContainerName } from "./labels.ts";
 * initialContainerName("sluice-orders-m"); // "sluice-orders-m"
 * ```
 */
export function initialContainerName(applicationId: string): string {
  return instanceContainerName(applicationId, 0);
}

/**
 * The name of the first container of an application's instance: the application ID for instance
 * 0, `<application ID>.<i>` for instance `i ≥ 1` (an application ID has no `.`, so no other
 * application's names can take it).
 *
 * @example
 * ```ts
 * import { instanceContainerName } from "./labels.ts";
 * instanceContainerName("sluice-orders-m", 1); // "sluice-orders-m.1"
 * ```
 */
export function instanceContainerName(applicationId: string, instance: number): string {
  return `${applicationId}${instanceSuffix(instance)}`;
}

/**
 * The unique name of a replacement candidate: derived from the operation, action and instance,
 * so a lost create response can be resolved by looking this exact name up.
 *
 * @example
 * ```ts
 * import { candidateContainerName } from "./labels.ts";
 * candidateContainerName("sluice-orders-m", "op", 3); // "sluice-orders-m.op-op.a3"
 * candidateContainerName("sluice-orders-m", "op", 3, 2); // "sluice-orders-m.2.op-op.a3"
 * ```
 */
export function candidateContainerName(
  applicationId: string,
  operationId: string,
  actionIndex: number,
  instance = 0,
): string {
  return `${applicationId}${instanceSuffix(instance)}.op-${operationId}.a${actionIndex}`;
}

/** The instance index, checked (a programming error otherwise). */
function instanceOf(instance: number): number {
  if (!Number.isSafeInteger(instance) || instance < 0) {
    throw new RangeError(`an instance index is a non-negative integer, not ${instance}`);
  }
  return instance;
}

function instanceSuffix(instance: number): string {
  return instanceOf(instance) === 0 ? "" : `.${instance}`;
}

/**
 * The instance label a container of instance `instance` carries: none for instance 0.
 *
 * @example
 * ```ts
 * import { instanceLabels } from "./labels.ts";
 * instanceLabels(0); // {}
 * instanceLabels(2); // { "sluice.instance": "2" }
 * ```
 */
export function instanceLabels(instance: number): Record<string, string> {
  return instanceOf(instance) === 0 ? {} : { [LABEL.instance]: String(instance) };
}

/**
 * The instance index a container's labels say (0 without the label), or null when the label is
 * not a canonical index ≥ 1 (`"0"`, `"01"`, `"-1"`, `"x"`: never written by sluice).
 *
 * @example
 * ```ts
 * import { instanceOfLabels } from "./labels.ts";
 * instanceOfLabels({}); // 0
 * instanceOfLabels({ "sluice.instance": "2" }); // 2
 * instanceOfLabels({ "sluice.instance": "02" }); // null
 * ```
 */
export function instanceOfLabels(labels: Readonly<Record<string, string>>): number | null {
  const value = labels[LABEL.instance];
  if (value === undefined) return 0;
  return /^[1-9][0-9]{0,8}$/.test(value) ? Number(value) : null;
}

/** The generation label value for a container created by an operation's action. */
export function generationOf(operationId: string, actionIndex: number): string {
  return `${operationId}/${actionIndex}`;
}
