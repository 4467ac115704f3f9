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

/** The state volume of an application. */
export function volumeName(applicationId: string): string {
  return `${applicationId}-state`;
}

/** The name of the first container of an application (created by `apply`). */
export function initialContainerName(applicationId: string): string {
  return applicationId;
}

/**
 * The unique name of a replacement candidate: derived from the operation and action, so a
 * lost create response can be resolved by looking this exact name up.
 */
export function candidateContainerName(
  applicationId: string,
  operationId: string,
  actionIndex: number,
): string {
  return `${applicationId}.op-${operationId}.a${actionIndex}`;
}

/** The generation label value for a container created by an operation's action. */
export function generationOf(operationId: string, actionIndex: number): string {
  return `${operationId}/${actionIndex}`;
}
