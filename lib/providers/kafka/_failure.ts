/**
 * How `@platformatic/kafka`'s errors read as provider failures (`../errors.ts`): its errors
 * nest (`MultipleErrors` of retries, each with `errors` and a `cause`), carry a library code
 * (`PLT_KFK_NETWORK`, `PLT_KFK_TIMEOUT`, `PLT_KFK_PROTOCOL`, `PLT_KFK_AUTHENTICATION`) and, for
 * a broker's answer, Kafka's own error name (`apiId`, e.g. `TOPIC_ALREADY_EXISTS`).
 * @module
 */
import { errorChain, type Failure, tlsFailure, transportFailure } from "../errors.ts";
import type { KafkaPort } from "./port.ts";

/** The Kafka port's mutations; every other method is a read. */
export const KAFKA_MUTATIONS: ReadonlySet<keyof KafkaPort & string> = new Set([
  "createTopic",
  "setGroupOffsets",
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

/**
 * The failure a `@platformatic/kafka` error stands for, or null when it is none of the
 * library's: authentication and authorization errors are `denied`, a network error on a
 * connection that was open (or a request timeout) is `lost`, a broker's error answer is
 * `refused` with Kafka's error names.
 *
 * @example
 * ```ts
 * import { kafkaFailure } from "./_failure.ts";
 * const answer = { code: "PLT_KFK_PROTOCOL", apiId: "TOPIC_ALREADY_EXISTS", message: "exists" };
 * console.log(kafkaFailure(answer)); // { kind: "refused", detail: "TOPIC_ALREADY_EXISTS: exists" }
 * ```
 */
export function kafkaFailure(error: unknown): Failure | null {
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
    default:
      return undefined;
  }
}
