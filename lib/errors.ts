/**
 * Errors with stable codes. Every failure sluice reports is a {@link SluiceError}: a stable
 * `SCREAMING_SNAKE` code grouped by area, a message that says what and where, and optional
 * evidence. Every code is declared once, with its exit status, in {@link ERROR_CODES}.
 *
 * @example
 * ```ts
 * import { SluiceError } from "./errors.ts";
 * throw new SluiceError("PROJECT_INVALID", "sluice.yaml:3:7: unknown key 'sourcez'");
 * ```
 * @module
 */

/** Where in a project file a problem is. Lines and columns are 1-based. */
export interface SourceLocation {
  /** The file, as the project names it (a path, or `REF:path` for a Git revision). */
  file: string;
  /** The line. */
  line: number;
  /** The column. */
  column: number;
}

/**
 * A failure with a stable code, a precise message and optional evidence.
 *
 * @example
 * ```ts
 * import { exitCodeFor, SluiceError } from "./errors.ts";
 * try {
 *   throw new SluiceError("BLOCKED_OOM", "the old runner was OOM-killed", {
 *     evidence: { exitCode: 137 },
 *   });
 * } catch (e) {
 *   if (e instanceof SluiceError) console.log(e.code, exitCodeFor(e), e.toJSON()); // BLOCKED_OOM 4
 * }
 * ```
 */
export class SluiceError extends Error {
  /** Stable code, e.g. `PLAN_STALE_STATE`, `BLOCKED_FOREIGN_GENERATION`, `STATE_LOCK_LOST`. */
  readonly code: ErrorCode;
  /** Structured evidence (observed vs expected values), serialisable to JSON. */
  readonly evidence?: Record<string, unknown>;
  /** Where in a project file the problem is, when it comes from one. */
  readonly location?: SourceLocation;

  /**
   * A failure with its code, its message and, optionally, evidence, location and cause.
   *
   * @param code the stable code (one of {@link ERROR_CODES})
   * @param message what is wrong and where (file:line:col when it comes from a file)
   * @param options evidence (JSON-serialisable), the location in a project file, the cause
   */
  constructor(
    code: ErrorCode,
    message: string,
    options: {
      evidence?: Record<string, unknown>;
      location?: SourceLocation;
      cause?: unknown;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SluiceError";
    this.code = code;
    this.evidence = options.evidence;
    this.location = options.location;
  }

  /** The JSON form used in the CLI's `-o json` envelope. */
  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      ...(this.location ? { location: this.location } : {}),
      ...(this.evidence ? { evidence: this.evidence } : {}),
    };
  }
}

/**
 * Documented exit statuses of the `sluice` command (see docs/cli.md).
 *
 * @example
 * ```ts
 * import { EXIT } from "./errors.ts";
 * console.log(EXIT.BLOCKED); // 4
 * ```
 */
export const EXIT = {
  OK: 0,
  /**
   * A bug (`INTERNAL`), or a provider's refusal of a request (`DOCKER_REFUSED`, `KAFKA_REFUSED`,
   * `CONNECT_REFUSED`, ...). An unreachable provider is {@link EXIT.ENVIRONMENT}.
   */
  ERROR: 1,
  /** Bad command-line usage. */
  USAGE: 2,
  /** Invalid project, SQL model, plan file or state file. */
  INVALID: 3,
  /** A change is blocked: the evidence does not authorize the next step. Nothing was mutated. */
  BLOCKED: 4,
  /** The deployment lock is held by someone else, or a compare-and-set lost a race. */
  CONFLICT: 5,
  /** The outcome is unknown (a response was lost): inspect with `state runner-status`. */
  UNKNOWN_OUTCOME: 6,
  /**
   * A required environment piece (Docker, Kafka, PostgreSQL, Kafka Connect, image, network) is
   * missing, unreachable or denies access (`ENV_*`, e.g. `ENV_KAFKA_UNREACHABLE`).
   */
  ENVIRONMENT: 7,
} as const;

/** One of the documented exit statuses ({@link EXIT}). */
export type ExitStatus = typeof EXIT[keyof typeof EXIT];

/**
 * Every stable error code sluice reports, with its exit status: the one declaration the
 * {@link ErrorCode} union, {@link exitCodeFor} and docs/cli.md's table follow. A code's prefix
 * names its area (`USAGE_`, `PROJECT_`, `BLOCKED_`, `STATE_LOCK_`, `ENV_`, ...); the few codes
 * whose status is not their area's are listed under the status they have. A new code is one
 * line here.
 *
 * @example
 * ```ts
 * import { ERROR_CODES } from "./errors.ts";
 * console.log(ERROR_CODES.PLAN_STALE_STATE); // 3
 * ```
 */
export const ERROR_CODES = {
  // 1: a bug (INTERNAL: anything that is not a SluiceError), a provider that answered wrongly or
  // refused, a Git call that took too long
  INTERNAL: EXIT.ERROR,
  CONNECT_BAD_RESPONSE: EXIT.ERROR,
  CONNECT_CONNECTOR_EXISTS: EXIT.ERROR,
  CONNECT_ENDPOINT_INVALID: EXIT.ERROR,
  CONNECT_NOT_FOUND: EXIT.ERROR,
  CONNECT_REFUSED: EXIT.ERROR,
  CONNECT_UPDATE_RECREATED: EXIT.ERROR,
  DOCKER_BAD_RESPONSE: EXIT.ERROR,
  DOCKER_REFUSED: EXIT.ERROR,
  KAFKA_BAD_RESPONSE: EXIT.ERROR,
  KAFKA_REFUSED: EXIT.ERROR,
  POSTGRES_BAD_RESPONSE: EXIT.ERROR,
  POSTGRES_REFUSED: EXIT.ERROR,
  GIT_TIMEOUT: EXIT.ERROR,
  STATE_NOT_INITIALIZED: EXIT.ERROR,

  // 2: bad command-line usage or SDK options
  USAGE_ENVIRONMENT: EXIT.USAGE,
  USAGE_FAULT_POINT: EXIT.USAGE,
  USAGE_REASON: EXIT.USAGE,
  USAGE_FAULT_SWITCH_NOT_ALLOWED: EXIT.USAGE,
  USAGE_FORMAT: EXIT.USAGE,
  USAGE_PREVIEW_OFFLINE: EXIT.USAGE,
  USAGE_PREVIEW_RECORDS: EXIT.USAGE,
  USAGE_PROJECT: EXIT.USAGE,
  USAGE_PROJECT_CLOSED: EXIT.USAGE,
  USAGE_SCHEMA: EXIT.USAGE,
  USAGE_SELECT_UNKNOWN_MODEL: EXIT.USAGE,
  USAGE_STATE: EXIT.USAGE,

  // 3: invalid project, SQL model, plan file, artifact or state file
  ARTIFACT_INVALID: EXIT.INVALID,
  ARTIFACT_INVALID_APPLICATION_ID: EXIT.INVALID,
  ARTIFACT_NOT_CANONICAL: EXIT.INVALID,
  GIT_NOT_A_REPOSITORY: EXIT.INVALID,
  GIT_OBJECT_MISSING: EXIT.INVALID,
  GIT_OUTPUT_TOO_LARGE: EXIT.INVALID,
  GIT_PARTIAL_CLONE: EXIT.INVALID,
  GIT_REF_NOT_FOUND: EXIT.INVALID,
  GIT_SUBMODULE_INPUT: EXIT.INVALID,
  GIT_SYMLINK_INPUT: EXIT.INVALID,
  MANIFEST_CONNECTOR_TOPIC_MISMATCH: EXIT.INVALID,
  MANIFEST_DUPLICATE_KEY: EXIT.INVALID,
  MANIFEST_DUPLICATE_NAME: EXIT.INVALID,
  MANIFEST_ENVIRONMENT_REQUIRED: EXIT.INVALID,
  MANIFEST_INVALID: EXIT.INVALID,
  MANIFEST_INVALID_IMAGE: EXIT.INVALID,
  MANIFEST_INVALID_NAME: EXIT.INVALID,
  MANIFEST_INVALID_SECRET_REFERENCE: EXIT.INVALID,
  MANIFEST_INVALID_TOPIC: EXIT.INVALID,
  MANIFEST_INVALID_TYPE: EXIT.INVALID,
  MANIFEST_INVALID_VALUE: EXIT.INVALID,
  MANIFEST_LITERAL_SECRET: EXIT.INVALID,
  MANIFEST_MISSING_KEY: EXIT.INVALID,
  MANIFEST_REMOVAL_COLLISION: EXIT.INVALID,
  MANIFEST_REMOVAL_UNMANAGED_NAME: EXIT.INVALID,
  MANIFEST_RESERVED_CONFIG_KEY: EXIT.INVALID,
  MANIFEST_TOPIC_CONFLICT: EXIT.INVALID,
  MANIFEST_UNKNOWN_CONNECT_CLUSTER: EXIT.INVALID,
  MANIFEST_UNKNOWN_ENVIRONMENT: EXIT.INVALID,
  MANIFEST_UNKNOWN_KEY: EXIT.INVALID,
  MANIFEST_UNKNOWN_MODEL: EXIT.INVALID,
  MANIFEST_UNKNOWN_TOPIC: EXIT.INVALID,
  MANIFEST_WRONG_TYPE: EXIT.INVALID,
  MANIFEST_YAML_SYNTAX: EXIT.INVALID,
  PLAN_INVALID: EXIT.INVALID,
  PLAN_MOUNTED_INVALID: EXIT.INVALID,
  PLAN_NOT_REVIEWED: EXIT.INVALID,
  PLAN_SELECTED_REPLACEMENT: EXIT.INVALID,
  PLAN_STALE_SOURCE: EXIT.INVALID,
  PLAN_STALE_STATE: EXIT.INVALID,
  PLAN_TAMPERED: EXIT.INVALID,
  PLAN_UNREADABLE: EXIT.INVALID,
  PLAN_WRONG_PROJECT: EXIT.INVALID,
  PLAN_WRONG_STORE: EXIT.INVALID,
  PROJECT_EXISTS: EXIT.INVALID,
  PROJECT_EXTERNAL_COLUMN_MISSING: EXIT.INVALID,
  PROJECT_EXTERNAL_COLUMN_TYPE_CHANGED: EXIT.INVALID,
  PROJECT_INVALID: EXIT.INVALID,
  PROJECT_MODEL_NOT_FOUND: EXIT.INVALID,
  PROJECT_NOT_FOUND: EXIT.INVALID,
  SQL_DUPLICATE_COLUMN: EXIT.INVALID,
  SQL_INTEGER_OUT_OF_RANGE: EXIT.INVALID,
  SQL_INVALID_NAME: EXIT.INVALID,
  SQL_INVALID_NUMBER: EXIT.INVALID,
  SQL_NUMBER_OUT_OF_RANGE: EXIT.INVALID,
  SQL_SYNTAX: EXIT.INVALID,
  SQL_UNEXPECTED_CHARACTER: EXIT.INVALID,
  SQL_UNKNOWN_SOURCE: EXIT.INVALID,
  SQL_UNSUPPORTED: EXIT.INVALID,
  SQL_UNTERMINATED_COMMENT: EXIT.INVALID,
  SQL_UNTERMINATED_STRING: EXIT.INVALID,
  STATE_CORRUPT_HISTORY: EXIT.INVALID,
  STATE_CORRUPT_JOURNAL: EXIT.INVALID,
  STATE_CORRUPT_MOUNTED_PLAN: EXIT.INVALID,
  STATE_CORRUPT_OWNERSHIP: EXIT.INVALID,
  STATE_CORRUPT_SCOPE: EXIT.INVALID,
  STATE_CORRUPT_STATE: EXIT.INVALID,
  STATE_CORRUPT_STORE: EXIT.INVALID,
  TYPE_INVALID_OPERAND: EXIT.INVALID,
  TYPE_MISMATCH: EXIT.INVALID,
  TYPE_NOT_BOOLEAN: EXIT.INVALID,
  TYPE_UNKNOWN_COLUMN: EXIT.INVALID,

  // 4: blocked: the evidence does not authorize the next step; nothing was mutated
  BLOCKED_ACTION_FAILED: EXIT.BLOCKED,
  BLOCKED_ALREADY_INTERRUPTED: EXIT.BLOCKED,
  BLOCKED_CANDIDATE_CLOSED: EXIT.BLOCKED,
  BLOCKED_CANDIDATE_FAILED: EXIT.BLOCKED,
  BLOCKED_CANDIDATE_MISSING: EXIT.BLOCKED,
  BLOCKED_CANDIDATE_NOT_READY: EXIT.BLOCKED,
  BLOCKED_CANDIDATE_STARTED_EARLY: EXIT.BLOCKED,
  BLOCKED_CHECKPOINT_ORDER: EXIT.BLOCKED,
  BLOCKED_CLUSTER_CHANGED: EXIT.BLOCKED,
  BLOCKED_COMMIT_MISMATCH: EXIT.BLOCKED,
  BLOCKED_CONFIRM_ENV: EXIT.BLOCKED,
  BLOCKED_DOCKER_DAEMON_CHANGED: EXIT.BLOCKED,
  BLOCKED_INVALID_POLICY_CHANGE: EXIT.BLOCKED,
  BLOCKED_CANDIDATE_STARTUP_FAILED: EXIT.BLOCKED,
  BLOCKED_CREATE_NOT_CONTINUABLE: EXIT.BLOCKED,
  BLOCKED_INVALID_DECISION: EXIT.BLOCKED,
  BLOCKED_NO_RETENTION_LOSS: EXIT.BLOCKED,
  BLOCKED_OPERATION_ABANDONED: EXIT.BLOCKED,
  BLOCKED_DUPLICATE_INCIDENT: EXIT.BLOCKED,
  BLOCKED_ENVIRONMENT_DRIFT: EXIT.BLOCKED,
  BLOCKED_EXECUTION_DRIFT: EXIT.BLOCKED,
  BLOCKED_EXTERNAL_TOPIC_MISSING: EXIT.BLOCKED,
  BLOCKED_EXTRA_GROUP_MEMBERS: EXIT.BLOCKED,
  BLOCKED_FOREIGN_GENERATION: EXIT.BLOCKED,
  BLOCKED_GROUP_ACTIVE: EXIT.BLOCKED,
  BLOCKED_IDENTITY_CHANGE: EXIT.BLOCKED,
  BLOCKED_IMAGE_CHANGE: EXIT.BLOCKED,
  BLOCKED_INCOMPLETE_OPERATION: EXIT.BLOCKED,
  BLOCKED_INTERRUPTION_REQUIRED: EXIT.BLOCKED,
  BLOCKED_INVALID_AUTHORIZATION: EXIT.BLOCKED,
  BLOCKED_INVALID_INTENT: EXIT.BLOCKED,
  BLOCKED_INVALID_OWNERSHIP: EXIT.BLOCKED,
  BLOCKED_MIXED_REPLACEMENT: EXIT.BLOCKED,
  BLOCKED_NETWORK_CHANGE: EXIT.BLOCKED,
  BLOCKED_NOT_A_REPLACEMENT: EXIT.BLOCKED,
  BLOCKED_NOT_REVIEWED: EXIT.BLOCKED,
  BLOCKED_NOT_RUNNER_UPDATE: EXIT.BLOCKED,
  BLOCKED_NOT_TERMINAL: EXIT.BLOCKED,
  BLOCKED_NO_PENDING_OPERATION: EXIT.BLOCKED,
  BLOCKED_OFFLINE_REPLACEMENT: EXIT.BLOCKED,
  BLOCKED_OFFSETS_MISSING: EXIT.BLOCKED,
  BLOCKED_OFFSET_JUMP_WHILE_STOPPED: EXIT.BLOCKED,
  BLOCKED_OFFSET_POLICY_CHANGE: EXIT.BLOCKED,
  BLOCKED_OFFSET_REGRESSION: EXIT.BLOCKED,
  BLOCKED_OLD_RESTARTED: EXIT.BLOCKED,
  BLOCKED_OLD_VANISHED: EXIT.BLOCKED,
  BLOCKED_OOM: EXIT.BLOCKED,
  BLOCKED_OPERATION_FROZEN: EXIT.BLOCKED,
  BLOCKED_OPERATION_INTERRUPTED: EXIT.BLOCKED,
  BLOCKED_OPERATION_PENDING: EXIT.BLOCKED,
  BLOCKED_OPERATION_TERMINAL: EXIT.BLOCKED,
  BLOCKED_PARTITION_CHANGE: EXIT.BLOCKED,
  BLOCKED_PLAN_MISMATCH: EXIT.BLOCKED,
  BLOCKED_PROJECTION_CHANGE: EXIT.BLOCKED,
  BLOCKED_PROTECTED_STATE: EXIT.BLOCKED,
  BLOCKED_RECEIPT_MISMATCH: EXIT.BLOCKED,
  BLOCKED_RECEIPT_SUPERSEDED: EXIT.BLOCKED,
  BLOCKED_RESUME_CONFLICT: EXIT.BLOCKED,
  BLOCKED_RESUME_LIMIT: EXIT.BLOCKED,
  BLOCKED_RETENTION_LOSS: EXIT.BLOCKED,
  BLOCKED_REVIEWED_PLAN: EXIT.BLOCKED,
  BLOCKED_RUNNER_EXITED: EXIT.BLOCKED,
  BLOCKED_RUNNER_MISSING: EXIT.BLOCKED,
  BLOCKED_RUNNER_NOT_RUNNING: EXIT.BLOCKED,
  BLOCKED_RUNNER_REMOVAL: EXIT.BLOCKED,
  BLOCKED_SCHEMA_CHANGE: EXIT.BLOCKED,
  BLOCKED_SECRET_CHANGED: EXIT.BLOCKED,
  BLOCKED_SELECTED_REPLACEMENT: EXIT.BLOCKED,
  BLOCKED_SERIAL: EXIT.BLOCKED,
  BLOCKED_STALE_STATUS: EXIT.BLOCKED,
  BLOCKED_STATE_CHANGED: EXIT.BLOCKED,
  BLOCKED_TOPIC_CHANGE: EXIT.BLOCKED,
  BLOCKED_TOPIC_MISSING: EXIT.BLOCKED,
  BLOCKED_TOPIC_REPLACED: EXIT.BLOCKED,
  BLOCKED_UNCLEAN_EXIT: EXIT.BLOCKED,
  BLOCKED_UNHEALTHY: EXIT.BLOCKED,
  BLOCKED_UNKNOWN_EXIT: EXIT.BLOCKED,
  BLOCKED_UNOWNED_RUNTIME: EXIT.BLOCKED,
  BLOCKED_UNOWNED_TOPIC: EXIT.BLOCKED,
  BLOCKED_VOLUME_EXISTS: EXIT.BLOCKED,
  BLOCKED_VOLUME_INSTANCE_CHANGED: EXIT.BLOCKED,
  BLOCKED_VOLUME_MISSING: EXIT.BLOCKED,
  BLOCKED_WRONG_IMAGE: EXIT.BLOCKED,
  BLOCKED_WRONG_MOUNTED_PLAN: EXIT.BLOCKED,
  BLOCKED_WRONG_NETWORK: EXIT.BLOCKED,

  // 5: the deployment lock is held elsewhere, or a compare-and-set lost a race
  CONNECT_CONFLICT: EXIT.CONFLICT,
  STATE_CONFLICT: EXIT.CONFLICT,
  STATE_LOCK_HELD: EXIT.CONFLICT,
  STATE_LOCK_LOST: EXIT.CONFLICT,
  STATE_LOCK_NOT_STALE: EXIT.CONFLICT,
  STATE_LOCK_REQUIRED: EXIT.CONFLICT,

  // 6: the outcome is unknown (a response was lost): inspect with `state runner-status`
  UNKNOWN_OUTCOME: EXIT.UNKNOWN_OUTCOME,
  UNKNOWN_OUTCOME_CONNECT: EXIT.UNKNOWN_OUTCOME,
  UNKNOWN_OUTCOME_DOCKER: EXIT.UNKNOWN_OUTCOME,
  UNKNOWN_OUTCOME_KAFKA: EXIT.UNKNOWN_OUTCOME,
  UNKNOWN_OUTCOME_POSTGRES: EXIT.UNKNOWN_OUTCOME,
  UNKNOWN_OUTCOME_NOT_READY: EXIT.UNKNOWN_OUTCOME,
  UNKNOWN_OUTCOME_STATE_WRITE: EXIT.UNKNOWN_OUTCOME,
  UNKNOWN_OUTCOME_TIMEOUT: EXIT.UNKNOWN_OUTCOME,

  // 7: a required environment piece is missing or unusable
  ENV_CONNECT_UNREACHABLE: EXIT.ENVIRONMENT,
  ENV_GIT_MISSING: EXIT.ENVIRONMENT,
  ENV_IMAGE_MISSING: EXIT.ENVIRONMENT,
  ENV_NETWORK_MISSING: EXIT.ENVIRONMENT,
  ENV_DOCKER_DENIED: EXIT.ENVIRONMENT,
  ENV_DOCKER_HOST_INVALID: EXIT.ENVIRONMENT,
  ENV_DOCKER_UNREACHABLE: EXIT.ENVIRONMENT,
  ENV_KAFKA_DENIED: EXIT.ENVIRONMENT,
  ENV_KAFKA_UNREACHABLE: EXIT.ENVIRONMENT,
  ENV_POSTGRES_DENIED: EXIT.ENVIRONMENT,
  ENV_POSTGRES_UNREACHABLE: EXIT.ENVIRONMENT,
  ENV_PREVIEW_FAILED: EXIT.ENVIRONMENT,
  ENV_PREVIEW_UNAVAILABLE: EXIT.ENVIRONMENT,
  ENV_RUNNER_BUILD_FAILED: EXIT.ENVIRONMENT,
  ENV_RUNNER_IMAGE_MISSING: EXIT.ENVIRONMENT,
  ENV_SECRET_HASH_KEY_UNSET: EXIT.ENVIRONMENT,
  ENV_SECRET_HASH_KEY_WEAK: EXIT.ENVIRONMENT,
  ENV_SECRET_UNSET: EXIT.ENVIRONMENT,
  ENV_STATE_DSN_MISSING: EXIT.ENVIRONMENT,
} as const satisfies Record<string, ExitStatus>;

/** Every stable error code: the keys of {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Whether a string is one of the stable codes (for codes read back from a file).
 *
 * @example
 * ```ts
 * import { isErrorCode } from "./errors.ts";
 * console.log(isErrorCode("PLAN_TAMPERED"), isErrorCode("NOPE")); // true false
 * ```
 */
export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/**
 * The documented exit status for an error: its code's ({@link ERROR_CODES}), or 1 for anything
 * that is not a {@link SluiceError}.
 *
 * @example
 * ```ts
 * import { exitCodeFor, SluiceError } from "./errors.ts";
 * console.log(exitCodeFor(new SluiceError("BLOCKED_OOM", "the runner was OOM-killed"))); // 4
 * console.log(exitCodeFor(new Error("bug"))); // 1
 * ```
 */
export function exitCodeFor(error: unknown): ExitStatus {
  if (!(error instanceof SluiceError)) return EXIT.ERROR;
  return isErrorCode(error.code) ? ERROR_CODES[error.code] : EXIT.ERROR;
}
