/**
 * Provider failures as stable codes, classified once at the adapter boundary: every Docker,
 * Kafka and PostgreSQL adapter turns what its client library throws into a {@link SluiceError}
 * that names the provider, the address it tried and where that address came from (a manifest
 * setting with its `file:line:col`, an environment variable, a flag, or the default), so that
 * `INTERNAL` is left for bugs. Kafka Connect's REST adapter (`connect/rest.ts`) follows the
 * same scheme with its own `ENV_CONNECT_UNREACHABLE`, `CONNECT_REFUSED`, `UNKNOWN_OUTCOME_CONNECT`.
 *
 * | what happened                                                   | code                  | exit |
 * | --------------------------------------------------------------- | --------------------- | ---- |
 * | nothing answered: no socket, refused, unknown host, timeout     | `ENV_<P>_UNREACHABLE` | 7    |
 * | it answered and denied access (permission, authentication)      | `ENV_<P>_DENIED`      | 7    |
 * | it answered and refused the request (Docker 4xx, Kafka error)   | `<P>_REFUSED`         | 1    |
 * | a read got a server error (Docker 5xx)                          | `<P>_BAD_RESPONSE`    | 1    |
 * | a mutation's response was lost (or a 5xx): it may have happened | `UNKNOWN_OUTCOME_<P>` | 6    |
 *
 * `<P>` is `DOCKER`, `KAFKA` or `POSTGRES`. A read whose connection broke after it was sent is
 * unreachable (nothing changed); only a mutation can have an unknown outcome.
 *
 * @example
 * ```ts
 * import { providerFailure } from "./errors.ts";
 * const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:19092"), {
 *   code: "ECONNREFUSED", syscall: "connect", address: "127.0.0.1", port: 19092,
 * });
 * const e = providerFailure(refused, {
 *   provider: "kafka",
 *   address: "localhost:19092",
 *   origin: { setting: "kafka.bootstrap_host", location: { file: "sluice.yaml", line: 6, column: 19 } },
 * }, { operation: "describe", mutation: false });
 * console.log((e as { code: string }).code); // ENV_KAFKA_UNREACHABLE
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { ErrorCode, SourceLocation } from "../errors.ts";
import { redactText } from "../artifact/redact.ts";

/** The providers classified here. */
export type Provider = "docker" | "kafka" | "postgres";

/**
 * Where an address came from. A manifest setting carries its location; a DSN read from a
 * variable named in the manifest carries both the variable and the setting that names it.
 * A built-in default says why it applies (`default`); an empty origin is an address a caller
 * of the SDK passed in.
 */
export interface AddressOrigin {
  /** The manifest key path, e.g. `kafka.bootstrap_host`, `environments.prod.state.dsn_env`. */
  setting?: string;
  /** Where that setting's value is in sluice.yaml. */
  location?: SourceLocation;
  /** The environment variable holding the address, e.g. `DOCKER_HOST`, `SLUICE_STATE_DSN`. */
  variable?: string;
  /** The command-line flag giving the address, e.g. `--pg-url`. */
  flag?: string;
  /** Why the default applies, e.g. `DOCKER_HOST is not set`. */
  default?: string;
}

/** A provider endpoint as an error shows it: the address (never with credentials) and its origin. */
export interface ProviderTarget {
  /** Which provider. */
  provider: Provider;
  /** The address tried, as shown (credentials removed by the caller). */
  address: string;
  /** Where the address came from. */
  origin: AddressOrigin;
}

/** The call that failed. */
export interface ProviderCall {
  /** The port method (or step), e.g. `describe`, `createContainer`, `connect`. */
  operation: string;
  /** True when the call changes the provider (a lost response is then an unknown outcome). */
  mutation: boolean;
  /**
   * What the call was doing, in words naming its subject (e.g. `reading topics orders,
   * eligible`, `creating topic orders`): shown after the operation when given.
   */
  what?: string;
}

/**
 * How a failure is classified before it becomes a code:
 * - `unreachable`: nothing answered before the request was sent (safe for a mutation: nothing
 *   was done);
 * - `lost`: the connection broke or timed out after the request may have been sent;
 * - `denied`: the provider answered and denied access;
 * - `refused`: the provider answered and refused this request (nothing was done);
 * - `server`: the provider answered with a server error (for a mutation, it may have happened).
 */
export type FailureKind = "unreachable" | "untrusted" | "lost" | "denied" | "refused" | "server";

/** A classified failure with a one-line reason (the client's words, or a plainer one). */
export interface Failure {
  /** What happened (decides the code). */
  kind: FailureKind;
  /** Why, in one line (the client's words, or a plainer one). */
  detail: string;
}

const NAMES: Record<Provider, string> = {
  docker: "Docker",
  kafka: "Kafka",
  postgres: "PostgreSQL",
};

/** The stable codes of each provider's failures (written out, so each code is findable). */
const CODES = {
  docker: {
    unreachable: "ENV_DOCKER_UNREACHABLE",
    untrusted: "ENV_DOCKER_TLS",
    denied: "ENV_DOCKER_DENIED",
    refused: "DOCKER_REFUSED",
    bad: "DOCKER_BAD_RESPONSE",
    unknown: "UNKNOWN_OUTCOME_DOCKER",
  },
  kafka: {
    unreachable: "ENV_KAFKA_UNREACHABLE",
    untrusted: "ENV_KAFKA_TLS",
    denied: "ENV_KAFKA_DENIED",
    refused: "KAFKA_REFUSED",
    bad: "KAFKA_BAD_RESPONSE",
    unknown: "UNKNOWN_OUTCOME_KAFKA",
  },
  postgres: {
    unreachable: "ENV_POSTGRES_UNREACHABLE",
    untrusted: "ENV_POSTGRES_TLS",
    denied: "ENV_POSTGRES_DENIED",
    refused: "POSTGRES_REFUSED",
    bad: "POSTGRES_BAD_RESPONSE",
    unknown: "UNKNOWN_OUTCOME_POSTGRES",
  },
} as const satisfies Record<Provider, Record<string, ErrorCode>>;

const START: Record<Provider, string> = {
  docker: "start the Docker daemon",
  kafka: "start the broker",
  postgres: "start PostgreSQL",
};

/**
 * Where an address came from, in words.
 *
 * @example
 * ```ts
 * import { describeOrigin } from "./errors.ts";
 * describeOrigin({ variable: "SLUICE_STATE_DSN", setting: "state.dsn_env",
 *   location: { file: "sluice.yaml", line: 21, column: 12 } });
 * // "$SLUICE_STATE_DSN, named by state.dsn_env at sluice.yaml:21:12"
 * ```
 */
export function describeOrigin(origin: AddressOrigin): string {
  const at = origin.location
    ? ` at ${origin.location.file}:${origin.location.line}:${origin.location.column}`
    : "";
  if (origin.variable && origin.setting) {
    return `$${origin.variable}, named by ${origin.setting}${at}`;
  }
  if (origin.variable) return `$${origin.variable}`;
  if (origin.setting) return `${origin.setting}${at}`;
  if (origin.flag) return origin.flag;
  return origin.default ? `the default: ${origin.default}` : "given by the caller";
}

/** What to correct when the address is wrong. */
function correct(origin: AddressOrigin): string {
  if (origin.variable) return `$${origin.variable}`;
  if (origin.setting) return origin.setting;
  if (origin.flag) return origin.flag;
  return "the address";
}

/** A Node.js system error (`ECONNREFUSED`, `ENOENT` on a socket path, `ENOTFOUND`, ...). */
interface SystemError {
  code: string;
  syscall?: string;
  address?: string;
  port?: number;
  message: string;
}

/**
 * The errors of a chain: the error, its `cause`, the `errors` of an aggregate, recursively.
 *
 * @example
 * ```ts
 * import { errorChain } from "./errors.ts";
 * const e = new AggregateError([new Error("a")], "all", { cause: new Error("b") });
 * console.log(errorChain(e).length); // 3
 * ```
 */
export function errorChain(error: unknown): object[] {
  const out: object[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const e = queue.shift();
    if (e === null || typeof e !== "object" || out.includes(e)) continue;
    out.push(e);
    const x = e as { cause?: unknown; errors?: unknown };
    if (x.cause !== undefined) queue.push(x.cause);
    if (Array.isArray(x.errors)) queue.push(...x.errors);
  }
  return out;
}

/** Node.js's TLS and OpenSSL error codes: a certificate not trusted, expired, for another name. */
const TLS_CODES =
  /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED_CERT)/;

function systemErrors(error: unknown): SystemError[] {
  const out: SystemError[] = [];
  for (const e of errorChain(error)) {
    const x = e as Partial<Record<keyof SystemError, unknown>>;
    // Node's errno codes; `syscall` is absent on some (a `socket hang up` is a bare ECONNRESET);
    // a TLS code (`ERR_TLS_CERT_ALTNAME_INVALID`) is no system error: `tlsFailure` reads it
    if (typeof x.code !== "string" || !/^E[A-Z_]+$/.test(x.code) || TLS_CODES.test(x.code)) {
      continue;
    }
    out.push({
      code: x.code,
      syscall: typeof x.syscall === "string" ? x.syscall : undefined,
      address: typeof x.address === "string" ? x.address : undefined,
      port: typeof x.port === "number" ? x.port : undefined,
      message: typeof x.message === "string" ? x.message : x.code,
    });
  }
  return out;
}

/** Connection-phase codes: the request was never sent. */
const NOT_CONNECTED = new Set([
  "ECONNREFUSED",
  "ENOENT",
  "ENOTDIR",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "EAI_FAIL",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "EADDRNOTAVAIL",
]);

function connecting(s: SystemError): boolean {
  return NOT_CONNECTED.has(s.code) ||
    (s.code === "ETIMEDOUT" && (s.syscall === "connect" || s.syscall === "getaddrinfo"));
}

function describeSystemError(s: SystemError): string {
  const where = s.address ? (s.port ? `${s.address}:${s.port}` : s.address) : "";
  if (s.code === "ECONNREFUSED") return `connection refused${where ? ` by ${where}` : ""}`;
  if (s.code === "ENOENT" || s.code === "ENOTDIR") return `no socket at ${s.address ?? "the path"}`;
  if (s.syscall === "getaddrinfo" || s.code === "ENOTFOUND" || s.code.startsWith("EAI_")) {
    return `the host name does not resolve (${s.message})`;
  }
  if (s.code === "ETIMEDOUT") return `connecting timed out${where ? ` (${where})` : ""}`;
  if (s.code === "EACCES" || s.code === "EPERM") {
    return `permission denied${where ? ` on ${where}` : ""}`;
  }
  return s.message;
}

/**
 * The TLS handshake failure in an error's chain (`untrusted`), or null when there is none.
 *
 * @example
 * ```ts
 * import { tlsFailure } from "./errors.ts";
 * const e = Object.assign(new Error("self-signed certificate in certificate chain"),
 *   { code: "SELF_SIGNED_CERT_IN_CHAIN" });
 * console.log(tlsFailure(e)?.kind); // "untrusted"
 * ```
 */
export function tlsFailure(error: unknown): Failure | null {
  const found = errorChain(error).find((e) => {
    const code = (e as { code?: unknown }).code;
    return typeof code === "string" && TLS_CODES.test(code);
  }) as { code: string; message?: unknown } | undefined;
  if (!found) return null;
  return { kind: "untrusted", detail: `${String(found.message ?? found.code)} (${found.code})` };
}

/**
 * Classify a transport failure from the Node.js system errors in the chain: any error on an
 * open connection makes it `lost` (the request may have been sent); a refused permission is
 * `denied`; connections that were never made are `unreachable`. Null when the chain holds no
 * system error.
 *
 * @example
 * ```ts
 * import { transportFailure } from "./errors.ts";
 * const e = Object.assign(new Error("connect ENOENT /tmp/none.sock"),
 *   { code: "ENOENT", syscall: "connect", address: "/tmp/none.sock" });
 * console.log(transportFailure(e)); // { kind: "unreachable", detail: "no socket at /tmp/none.sock" }
 * ```
 */
export function transportFailure(error: unknown): Failure | null {
  const all = systemErrors(error);
  if (all.length === 0) return null;
  const denied = all.find((s) => s.code === "EACCES" || s.code === "EPERM");
  const open = all.find((s) => !connecting(s) && s !== denied);
  if (open) return { kind: "lost", detail: describeSystemError(open) };
  if (denied) return { kind: "denied", detail: describeSystemError(denied) };
  const details = [...new Set(all.map(describeSystemError))];
  return { kind: "unreachable", detail: details.join("; ") };
}

/**
 * The error for a classified failure of one call: the stable code, a message naming the
 * provider, the address and its origin with what to do, the manifest location when the address
 * came from sluice.yaml, and the evidence (`provider`, `address`, `origin`, `operation`,
 * `reason`).
 *
 * @example
 * ```ts
 * import { failureError } from "./errors.ts";
 * const e = failureError({ kind: "refused", detail: "(HTTP code 409) name in use" },
 *   { provider: "docker", address: "unix:///var/run/docker.sock", origin: { default: "DOCKER_HOST is not set" } },
 *   { operation: "createContainer", mutation: true });
 * console.log(e.code); // DOCKER_REFUSED
 * ```
 */
export function failureError(
  failure: Failure,
  target: ProviderTarget,
  call: ProviderCall,
  cause?: unknown,
): SluiceError {
  const C = CODES[target.provider];
  const name = NAMES[target.provider];
  const op = call.what ? `${call.operation} (${call.what})` : call.operation;
  const at = `${name} at ${target.address} (${describeOrigin(target.origin)})`;
  const fix = target.origin.setting || target.origin.variable || target.origin.flag
    ? `correct ${correct(target.origin)}`
    : target.provider === "docker"
    ? "set DOCKER_HOST"
    : "give its address";
  let code: ErrorCode;
  let message: string;
  switch (failure.kind) {
    case "unreachable":
      code = C.unreachable;
      message = `${at} is unreachable${
        call.what ? ` while ${call.what}` : ""
      }: ${failure.detail}; ${START[target.provider]}, or ${fix} if the address is wrong`;
      break;
    case "untrusted":
      code = C.untrusted;
      message = `${at} failed the TLS handshake: ${failure.detail}; check the CA it is trusted ` +
        `with, its certificate's host names and validity, and the client certificate, or ${fix}`;
      break;
    case "denied":
      code = C.denied;
      message = `${at} denied access: ${failure.detail}; check the permissions or credentials, ` +
        `or ${fix}`;
      break;
    case "lost":
      if (call.mutation) {
        code = C.unknown;
        message = `${op} on ${at} lost its response (${failure.detail}); ` +
          "it may or may not have been applied: observe before retrying";
      } else {
        code = C.unreachable;
        message = `${at} did not answer ${op}: ${failure.detail}; ${
          START[target.provider]
        } or check its health, or ${fix} if the address is wrong`;
      }
      break;
    case "refused":
      code = C.refused;
      message = `${at} refused ${op}: ${failure.detail}`;
      break;
    case "server":
      if (call.mutation) {
        code = C.unknown;
        message = `${op} on ${at} answered a server error (${failure.detail}); ` +
          "it may or may not have been applied: observe before retrying";
      } else {
        code = C.bad;
        message = `${at} answered ${op} with a server error: ${failure.detail}`;
      }
      break;
  }
  return new SluiceError(code, message, {
    ...(target.origin.location ? { location: target.origin.location } : {}),
    evidence: {
      provider: target.provider,
      address: target.address,
      origin: { ...target.origin },
      operation: call.operation,
      ...(call.what ? { what: call.what } : {}),
      reason: failure.detail,
      ...(cause !== undefined ? { client_error: chainMessages(cause) } : {}),
    },
    cause,
  });
}

/**
 * The messages of an error chain, outermost first, each once (`Listing topics failed. ←
 * metadata failed 4 times. ← Connection closed`), credentials redacted: what the client said,
 * kept as evidence and used as the reason when nothing else classifies the failure — a client's
 * outer message alone ("Listing topics failed.") says neither what was found nor why.
 *
 * @example
 * ```ts
 * import { chainMessages } from "./errors.ts";
 * const e = new AggregateError([new Error("Connection closed")], "Listing topics failed.");
 * chainMessages(e); // "Listing topics failed. ← Connection closed"
 * ```
 */
export function chainMessages(error: unknown): string {
  const seen: string[] = [];
  for (const e of errorChain(error)) {
    const m = (e as { message?: unknown }).message;
    const text = typeof m === "string" && m.length > 0 ? m : null;
    if (text !== null && !seen.includes(text)) seen.push(text);
  }
  // a client's words may quote an address with credentials: never carry them
  return redactText(seen.length === 0 ? String(error) : seen.join(" ← "));
}

/** Errors that are our own bugs, not the provider's answer: they stay `INTERNAL`. */
function isBug(error: unknown): boolean {
  return error instanceof TypeError || error instanceof ReferenceError ||
    error instanceof RangeError || error instanceof SyntaxError;
}

/**
 * Classify what a client threw, from the shared transport rules ({@link transportFailure}) and
 * the provider's own reading of its client's errors (`specific`): denied access first, then a
 * broken connection, then one never made, then the provider's answer (refused, server error);
 * any other client error is a refusal carrying the client's message.
 * A {@link SluiceError} passes unchanged, and so does a programming error (a `TypeError` and
 * the like is a bug: it stays `INTERNAL`).
 *
 * @example
 * ```ts
 * import { providerFailure } from "./errors.ts";
 * const e = providerFailure(new Error("boom"),
 *   { provider: "kafka", address: "k:9092", origin: {} }, { operation: "describe", mutation: false });
 * console.log((e as { code?: string }).code); // KAFKA_REFUSED
 * ```
 */
export function providerFailure(
  error: unknown,
  target: ProviderTarget,
  call: ProviderCall,
  specific?: (error: unknown) => Failure | null,
): unknown {
  if (error instanceof SluiceError || isBug(error)) return error;
  const seen = [transportFailure(error), specific?.(error) ?? null, tlsFailure(error)];
  const first = (kind: FailureKind) => seen.find((f) => f?.kind === kind);
  // a failed TLS handshake: the connection was never usable, whatever broke it after;
  // a broken connection outweighs a refused one: a mutation may then have been applied
  const failure = first("denied") ?? first("untrusted") ?? first("lost") ??
    first("unreachable") ?? seen[1] ?? {
    kind: "refused" as const,
    detail: chainMessages(error),
  };
  return failureError(failure, target, call, error);
}

/** How {@link guardPort} classifies the failures of one adapter. */
export interface PortGuard<T> {
  /** The endpoint every failure names. */
  target: ProviderTarget;
  /** The methods that change the provider; every other method is a read. */
  mutations: ReadonlySet<keyof T & string>;
  /** The provider's own reading of its client's errors (before the shared transport rules). */
  specific?: (error: unknown) => Failure | null;
  /** Awaited before every call but `close` (e.g. a bounded reachability check, made once). */
  ready?: () => Promise<void>;
  /** What a call with these arguments does, in words naming its subject (see `ProviderCall`). */
  what?: (operation: keyof T & string, args: unknown[]) => string | undefined;
  /**
   * How long one call may go unanswered (`ms`) before it fails as a lost answer (a read:
   * unreachable; a mutation: an unknown outcome), except the methods in `exempt`, which wait on
   * purpose and carry their own bound. The call itself is not cancelled: its late answer is
   * dropped.
   */
  bound?: { ms: number; exempt: ReadonlySet<keyof T & string> };
}

/**
 * Wrap every method of a port so that whatever its client throws leaves as a classified
 * {@link SluiceError}. Methods added to the port later are covered the day they are written.
 *
 * @example
 * ```ts
 * import { guardPort } from "./errors.ts";
 * const port = { read: () => Promise.reject(new Error("no")) };
 * const guarded = guardPort(port, {
 *   target: { provider: "kafka", address: "k:9092", origin: {} }, mutations: new Set(),
 * });
 * await guarded.read().catch((e) => console.log(e.code)); // KAFKA_REFUSED
 * ```
 */
export function guardPort<T extends object>(port: T, guard: PortGuard<T>): T {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(port)) {
    if (typeof value !== "function") {
      out[name] = value;
      continue;
    }
    const call: ProviderCall = {
      operation: name,
      mutation: guard.mutations.has(name as keyof T & string),
    };
    const bound = guard.bound && !guard.bound.exempt.has(name as keyof T & string)
      ? guard.bound.ms
      : null;
    out[name] = async (...args: unknown[]) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        if (guard.ready && name !== "close") await guard.ready();
        const answer = value.apply(port, args) as Promise<unknown>;
        if (bound === null) return await answer;
        return await Promise.race([
          answer,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new UnansweredCall(bound)), bound);
          }),
        ]);
      } catch (error) {
        if (error instanceof UnansweredCall) {
          const what = guard.what?.(name as keyof T & string, args);
          throw failureError(
            { kind: "lost", detail: error.message },
            guard.target,
            what ? { ...call, what } : call,
          );
        }
        const what = guard.what?.(name as keyof T & string, args);
        throw providerFailure(error, guard.target, what ? { ...call, what } : call, guard.specific);
      } finally {
        clearTimeout(timer);
      }
    };
  }
  return out as T;
}

/** A call {@link guardPort} stopped waiting for. */
class UnansweredCall extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms / 1000} s`);
  }
}

/**
 * An address with any `user:password@` removed (for display).
 *
 * @example
 * ```ts
 * import { withoutCredentials } from "./errors.ts";
 * console.log(withoutCredentials("tcp://me:secret@docker.example:2376")); // tcp://docker.example:2376
 * ```
 */
export function withoutCredentials(address: string): string {
  return address.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, "$1");
}
