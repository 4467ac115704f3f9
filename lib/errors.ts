/**
 * Errors with stable codes. Every failure sluice reports is a {@link SluiceError}: a stable
 * `SCREAMING_SNAKE` code grouped by area, a message that says what and where, and optional
 * evidence. Exit statuses are mapped from the code's area in one place ({@link exitCodeFor}).
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
  file: string;
  line: number;
  column: number;
}

/** A failure with a stable code, a precise message and optional evidence. */
export class SluiceError extends Error {
  /** Stable code, e.g. `PLAN_STALE`, `BLOCKED_FOREIGN_GENERATION`, `STATE_LOCK_LOST`. */
  readonly code: string;
  /** Structured evidence (observed vs expected values), serialisable to JSON. */
  readonly evidence?: Record<string, unknown>;
  /** Where in a project file the problem is, when it comes from one. */
  readonly location?: SourceLocation;

  constructor(
    code: string,
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
 * The mapping is by code prefix so that a new code in an existing area needs no change here.
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

const PREFIX_EXIT: Array<[string, number]> = [
  ["USAGE_", EXIT.USAGE],
  ["PROJECT_", EXIT.INVALID],
  ["SQL_", EXIT.INVALID],
  ["TYPE_", EXIT.INVALID],
  ["MANIFEST_", EXIT.INVALID],
  ["PLAN_", EXIT.INVALID],
  ["ARTIFACT_", EXIT.INVALID],
  ["STATE_CORRUPT", EXIT.INVALID],
  ["GIT_TIMEOUT", EXIT.ERROR],
  ["GIT_", EXIT.INVALID],
  ["BLOCKED_", EXIT.BLOCKED],
  ["STATE_LOCK", EXIT.CONFLICT],
  ["STATE_CONFLICT", EXIT.CONFLICT],
  ["CONNECT_CONFLICT", EXIT.CONFLICT],
  ["UNKNOWN_OUTCOME", EXIT.UNKNOWN_OUTCOME],
  ["ENV_", EXIT.ENVIRONMENT],
];

/** The documented exit status for an error (1 for anything that is not a SluiceError). */
export function exitCodeFor(error: unknown): number {
  if (!(error instanceof SluiceError)) return EXIT.ERROR;
  for (const [prefix, code] of PREFIX_EXIT) {
    if (error.code.startsWith(prefix)) return code;
  }
  return EXIT.ERROR;
}
