/**
 * The runner credentials a plan binds: under `kafka.security`, a plan whose actions start a
 * runner (a create, a predicate replacement) records a keyed hash of the runner principal's
 * client file (`lib/providers/kafka/security.ts` `runnerClientFile`): HMAC-SHA256 under the
 * state store's plan-sealing key (`lib/state/seal_key.ts`), the key that seals the plan
 * (`key_seal.ts`). Not a plain sha256: a plan file travels (a pull request, a CI artifact), and
 * a plain hash of a file holding a weak password lets anyone who reads the plan try passwords
 * offline; the keyed hash can only be recomputed by someone who can read the store's key.
 *
 * Apply compares it with the credentials it would start runners with now
 * ({@link checkRunnerCredentials}): an operation started from a plan refuses a difference with
 * `PLAN_KAFKA_CREDENTIALS_CHANGED` (exit 3) before anything is written — plan again; an operation
 * already pending goes on with the current credentials (a rotation during an operation is a way
 * out, never a dead end), and the change is reported to be recorded.
 *
 * A plan under PLAINTEXT, a plan that starts no runner and a blocked plan bind nothing (the field
 * is absent, the plan's bytes unchanged).
 *
 * @example
 * ```ts
 * import { bindRunnerCredentials, checkRunnerCredentials } from "./runner_credentials.ts";
 * import { newSealKey } from "../state/seal_key.ts";
 * const key = newSealKey(new Date().toISOString());
 * const file = new TextEncoder().encode("{}");
 * const bound = bindRunnerCredentials(file, key);
 * console.log(checkRunnerCredentials(bound, file, key, false)?.changed); // false
 * ```
 * @module
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { SluiceError } from "../errors.ts";
import type { SealKey } from "../state/seal_key.ts";

/** A plan's binding of the runner principal's credentials (never the credentials). */
export interface RunnerCredentialsBinding {
  /** The ID of the state store's key the hash is keyed with. */
  key_id: string;
  /** HMAC-SHA256 (lower-case hex) of the runner's Kafka client file under that key. */
  hmac_sha256: string;
}

/** What {@link checkRunnerCredentials} found (said only when there was something to compare). */
export interface RunnerCredentialsCheck {
  /** True when the current credentials are not the ones the plan bound. */
  changed: boolean;
  /**
   * The evidence of a change, hashes and key only: the plan's binding and the current file's
   * hash under the same key (null when the plan's key is not the store's: then it cannot be
   * compared, and counts as changed).
   */
  evidence: RunnerCredentialsEvidence;
}

/** The evidence of changed runner credentials: hashes and the key's ID only. */
export interface RunnerCredentialsEvidence {
  /** The state store key the plan's hash is keyed with. */
  key_id: string;
  /** The plan's keyed hash. */
  plan_hmac_sha256: string;
  /** The current credentials' keyed hash (null when the plan's key is no longer the store's). */
  current_hmac_sha256: string | null;
}

/** Whether a plan's actions start a runner (and so bind the runner's credentials). */
export function startsRunner(actions: readonly { type: string }[]): boolean {
  return actions.some((a) => a.type === "create_runner" || a.type === "replace_runner_predicate");
}

/** The keyed hash of a runner client file under `key`. */
export function bindRunnerCredentials(file: Uint8Array, key: SealKey): RunnerCredentialsBinding {
  return {
    key_id: key.key_id,
    hmac_sha256: createHmac("sha256", key.secret).update(file).digest("hex"),
  };
}

function equalHex(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return /^[0-9a-f]{64}$/.test(a) && x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Compare a plan's binding with the runner client file apply would write now (`current`: null
 * under PLAINTEXT). Null when the plan binds nothing. A difference refuses to start an operation
 * (`pending` false) with `PLAN_KAFKA_CREDENTIALS_CHANGED`, exit 3; for an operation already
 * pending (`pending` true) it is returned as changed, for the caller to say and record.
 */
export function checkRunnerCredentials(
  bound: RunnerCredentialsBinding | null | undefined,
  current: Uint8Array | null,
  key: SealKey,
  pending: boolean,
  where = "the plan file",
): RunnerCredentialsCheck | null {
  if (!bound) return null;
  const now = current === null ? null : bindRunnerCredentials(current, key);
  const comparable = now !== null && bound.key_id === key.key_id;
  const changed = !comparable || !equalHex(bound.hmac_sha256, now.hmac_sha256);
  const evidence = {
    key_id: bound.key_id,
    plan_hmac_sha256: bound.hmac_sha256,
    current_hmac_sha256: comparable ? now.hmac_sha256 : null,
  };
  if (changed && !pending) {
    throw new SluiceError(
      "PLAN_KAFKA_CREDENTIALS_CHANGED",
      `${where} was made with other runner credentials than kafka.security.runner gives now (a password, certificate, key or CA was changed since the plan); nothing was done — plan again with 'sluice plan --out FILE'`,
      { evidence },
    );
  }
  return { changed, evidence };
}

/** The progress/log line of a pending operation that goes on with changed credentials. */
export function credentialsChangedLine(operationId: string | null): string {
  return `the runner's Kafka credentials (kafka.security.runner) changed since the plan; ${
    operationId ? `operation ${operationId}` : "the pending operation"
  } continues with the current ones (runners are started with them)`;
}
