/**
 * How `@platformatic/kafka`'s errors read as provider failures (`../errors.ts`): its errors
 * nest (`MultipleErrors` of retries, each with `errors` and a `cause`), carry a library code
 * (`PLT_KFK_NETWORK`, `PLT_KFK_TIMEOUT`, `PLT_KFK_PROTOCOL`, `PLT_KFK_AUTHENTICATION`) and, for
 * a broker's answer, Kafka's own error name (`apiId`, e.g. `TOPIC_ALREADY_EXISTS`).
 *
 * One failure the library keeps out of the chain it throws: under TLS 1.3 a broker that does not
 * accept the client certificate (mutual TLS) verifies it after the client's Finished, so the
 * client's handshake completes and the broker's alert (`certificate_unknown`) arrives on the
 * open connection. Node's TLS raises it on the socket (`ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN`);
 * the library emits it on the connection (`NetworkError` "Connection error", the alert as its
 * cause) and fails the request in flight with a bare "Connection closed". A broker that really
 * went away sends no alert, so {@link watchConnectionErrors} keeps what the connections raised
 * and {@link kafkaFailure} reads the alert from there: a TLS failure naming the client
 * certificate, not an unreachable broker.
 * @module
 */
import type { EventEmitter } from "node:events";
import { errorChain, type Failure, tlsFailure, transportFailure } from "../errors.ts";
import type { KafkaPort } from "./port.ts";

/** The Kafka port's mutations; every other method is a read. */
export const KAFKA_MUTATIONS: ReadonlySet<keyof KafkaPort & string> = new Set([
  "createTopic",
  "setGroupOffsets",
  "deleteGroup",
  "deleteTopic",
]);

interface PlatformaticError {
  code?: unknown;
  message?: unknown;
  apiId?: unknown;
  serverErrorMessage?: unknown;
  cause?: unknown;
  errors?: unknown;
}

const DENIED = /^(SASL_AUTHENTICATION_FAILED|[A-Z_]*AUTHORIZATION_FAILED)$/;

/** A TLS alert the peer sent about the certificate this side presented (RFC 8446 §6.2). */
const CERTIFICATE_ALERT =
  /_ALERT_(BAD_CERTIFICATE|UNSUPPORTED_CERTIFICATE|CERTIFICATE_REVOKED|CERTIFICATE_EXPIRED|CERTIFICATE_UNKNOWN|UNKNOWN_CA|CERTIFICATE_REQUIRED)$/;

/** How long a connection's error may explain a request's failure (the client's retries). */
const CONNECTION_ERROR_WINDOW_MS = 120_000;

/** The errors a client's connections raised on their own, kept for {@link kafkaFailure}. */
export interface ConnectionErrors {
  /** Keep the errors of `client`'s connections (an `@platformatic/kafka` client). */
  watch(client: EventEmitter): void;
  /** The errors raised lately, oldest first; each is given once. */
  take(): unknown[];
}

/**
 * Keep what a client's connections raise outside any request (the library only drops the
 * connection from its pool): the `error` of every connection the client opens, the last few,
 * for the time its retries take.
 *
 * @example
 * ```ts
 * import { EventEmitter } from "node:events";
 * import { watchConnectionErrors } from "./_failure.ts";
 * const client = new EventEmitter();
 * const errors = watchConnectionErrors();
 * errors.watch(client);
 * const connection = new EventEmitter();
 * client.emit("client:broker:connect", { connection });
 * connection.emit("error", new Error("Connection error"));
 * console.log(errors.take().length); // 1
 * ```
 */
export function watchConnectionErrors(now: () => number = Date.now): ConnectionErrors {
  let kept: Array<{ at: number; error: unknown }> = [];
  return {
    watch(client) {
      client.on("client:broker:connect", (event: { connection?: EventEmitter }) => {
        event?.connection?.on("error", (error: unknown) => {
          kept = [...kept.slice(-7), { at: now(), error }];
        });
      });
    },
    take() {
      const since = now() - CONNECTION_ERROR_WINDOW_MS;
      const out = kept.filter((k) => k.at >= since).map((k) => k.error);
      kept = [];
      return out;
    },
  };
}

/**
 * The broker's refusal of the client certificate among a connection's errors: a certificate
 * alert it sent (the alert is the broker's own word; nothing else sends one), or null.
 */
function refusedCertificate(connectionErrors: readonly unknown[]): Failure | null {
  for (const e of connectionErrors) {
    const alert = errorChain(e).find((x) => {
      const code = (x as { code?: unknown }).code;
      return typeof code === "string" && CERTIFICATE_ALERT.test(code);
    }) as { code: string; message?: unknown } | undefined;
    if (alert) {
      return {
        kind: "untrusted",
        detail: `the broker refused the client certificate with a TLS alert (${
          String(alert.message ?? alert.code)
        }, ${alert.code}): it does not trust its issuer, or the certificate is expired or revoked`,
      };
    }
  }
  return null;
}

/**
 * The failure a `@platformatic/kafka` error stands for, or null when it is none of the
 * library's: authentication and authorization errors are `denied`, a network error on a
 * connection that was open (or a request timeout) is `lost` — unless one of the client's
 * `connectionErrors` ({@link watchConnectionErrors}) is the broker's alert refusing the client
 * certificate, which makes it `untrusted` — and a broker's error answer is `refused` with
 * Kafka's error names.
 *
 * @example
 * ```ts
 * import { kafkaFailure } from "./_failure.ts";
 * const answer = { code: "PLT_KFK_PROTOCOL", apiId: "TOPIC_ALREADY_EXISTS", message: "exists" };
 * console.log(kafkaFailure(answer)); // { kind: "refused", detail: "TOPIC_ALREADY_EXISTS: exists" }
 * ```
 */
export function kafkaFailure(
  error: unknown,
  connectionErrors: readonly unknown[] = [],
): Failure | null {
  const chain = errorChain(error) as PlatformaticError[];
  const text = (e: PlatformaticError) =>
    typeof e.serverErrorMessage === "string" && e.serverErrorMessage.length > 0
      ? e.serverErrorMessage
      : String(e.message ?? e.code);
  const denied = chain.find((e) =>
    e.code === "PLT_KFK_AUTHENTICATION" || (typeof e.apiId === "string" && DENIED.test(e.apiId))
  );
  if (denied) {
    return {
      kind: "denied",
      detail: typeof denied.apiId === "string" ? `${denied.apiId}: ${text(denied)}` : text(denied),
    };
  }
  // a TLS handshake that failed: the connection was never usable, whatever wrapped it
  const untrusted = tlsFailure(error);
  if (untrusted) return untrusted;
  // a connection that closed under a request, after the broker's certificate alert on it
  const network = chain.some((e) => e.code === "PLT_KFK_NETWORK");
  const refused = network ? refusedCertificate(connectionErrors) : null;
  if (refused) return refused;
  // a leaf network error whose cause is not a connection that was never made
  const broken = chain.find((e) =>
    (e.code === "PLT_KFK_NETWORK" || e.code === "PLT_KFK_TIMEOUT") && !Array.isArray(e.errors) &&
    transportFailure(e.cause)?.kind !== "unreachable"
  );
  if (broken) return { kind: "lost", detail: text(broken) };
  const answers = chain.filter((e) => e.code === "PLT_KFK_PROTOCOL");
  if (answers.length > 0) {
    const named = answers.map((e) =>
      typeof e.apiId === "string" ? `${e.apiId}: ${text(e)}` : text(e)
    );
    return { kind: "refused", detail: [...new Set(named)].join("; ") };
  }
  return null;
}

const list = (xs: unknown) =>
  Array.isArray(xs) && xs.length > 0 ? [...new Set(xs.map(String))].join(", ") : null;

/**
 * What a Kafka port call with these arguments was doing, naming its topics and groups, for the
 * provider error's message ("did not answer describe (reading topics orders)"). Undefined for a
 * call without a subject.
 *
 * @example
 * ```ts
 * import { kafkaCallSubject } from "./_failure.ts";
 * kafkaCallSubject("createTopic", ["orders", 3]); // "creating topic orders with 3 partitions"
 * ```
 */
export function kafkaCallSubject(operation: string, args: unknown[]): string | undefined {
  const [a, b] = args;
  switch (operation) {
    case "describe":
      return list(a) ? `reading topics ${list(a)}` : "reading the cluster's metadata";
    case "describeGroup":
      return `describing group ${a}`;
    case "describeGroups":
      return list(a) ? `describing groups ${list(a)}` : undefined;
    case "committedOffsets":
      return `reading group ${a}'s committed offsets on topic ${b}`;
    case "committedOffsetsOf":
      return list(a) ? `reading the committed offsets of groups ${list(a)}` : undefined;
    case "offsetRanges":
      return `reading the offset range of topic ${a}`;
    case "offsetRangesOf": {
      const topics = Array.isArray(a) ? a.map((t) => (t as { topic?: unknown }).topic) : [];
      return list(topics) ? `reading the offset ranges of topics ${list(topics)}` : undefined;
    }
    case "groupOffsets":
      return list(a)
        ? `reading the committed offsets of groups ${list(a)} on topic ${b}`
        : undefined;
    case "describeAcls":
      return `describing the ACLs of ${a}`;
    case "readRecords":
      return `reading records of topic ${a}`;
    case "createTopic":
      return `creating topic ${a} with ${b} partition${b === 1 ? "" : "s"}`;
    case "setGroupOffsets":
      return `setting group ${a}'s offsets on topic ${b}`;
    case "deleteGroup":
      return `deleting group ${a}`;
    case "deleteTopic":
      return `deleting topic ${a}`;
    default:
      return undefined;
  }
}
