/**
 * The real {@link ConnectPort} on Kafka Connect's REST API (`fetch`, no client library). The
 * adapter crosses no fault site itself: the connector journey (`lib/runtime/connectors.ts`)
 * crosses the rows of its table (`lib/protocol/connector.ts`, `CONNECT_SITES`) around each
 * mutation, as the Docker and Kafka journeys do, so fakes and the real adapter are killed at
 * the same points.
 *
 * A 409 that means "not now" (a rebalance, stale configuration, no known leader) is retried a
 * bounded number of times, and so is a read answered 500 because a rebalance is expected; a 409
 * for an existing name is not. A lost response or a server error
 * on a mutation is an unknown outcome, never guessed: observe the named connector.
 *
 * @example
 * ```ts
 * import { restConnect } from "./rest.ts";
 * const connect = restConnect("http://127.0.0.1:8083");
 * const info = await connect.clusterInfo();
 * console.log(info.kafkaClusterId, await connect.listConnectors());
 * ```
 * @module
 */
import { SluiceError } from "../../errors.ts";
import { sha256Hex } from "../../artifact/canonical.ts";
import { isSensitiveKey, REDACTED } from "../../artifact/redact.ts";
import { normalizeRestEndpoint, restEndpointProblem } from "../../project/names.ts";
import type {
  ConfigSubmission,
  ConnectClusterInfo,
  ConnectorConfig,
  ConnectorInfo,
  ConnectorPlugin,
  ConnectorStatus,
  ConnectPort,
  ConnectState,
} from "./port.ts";

/** Options of {@link restConnect}. */
export interface RestConnectOptions {
  /** Attempts for a request answered 409 "not now" (default 20). */
  conflictAttempts?: number;
  /** Pause between those attempts (default 500 ms). */
  conflictDelayMs?: number;
  /**
   * Client-side bound of one request (default 120 s: longer than the worker's own 90 s request
   * timeout, so the worker's answer normally arrives first).
   */
  requestTimeoutMs?: number;
  /** Injected for tests. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * The worker's REST API over HTTPS: the CA its certificate must be signed by (PEM; absent:
   * the system's trust). Host names are always verified.
   */
  tls?: { ca: string | null };
  /** HTTP basic authentication (Connect's `rest.extension.classes` JAAS login). */
  basicAuth?: { username: string; password: string };
}

/**
 * The canonical form of a REST endpoint: lower-case scheme and host, explicit port, no
 * trailing slash. Throws `CONNECT_ENDPOINT_INVALID` for anything that is not `http(s)://host`
 * with an optional port and path, or that carries credentials, a query or a fragment.
 *
 * @example
 * ```ts
 * import { normalizeEndpoint } from "./rest.ts";
 * console.log(normalizeEndpoint("HTTP://Connect:8083/")); // http://connect:8083
 * ```
 */
export function normalizeEndpoint(endpoint: string): string {
  const problem = restEndpointProblem(endpoint);
  if (problem !== null) {
    // an endpoint with credentials is never echoed
    const shown = /^[a-z]+:\/\/[^/]*@/i.test(endpoint) ? "(credentials withheld)" : endpoint;
    throw new SluiceError(
      "CONNECT_ENDPOINT_INVALID",
      `Connect REST endpoint ${shown} ${problem}`,
      { evidence: { why: problem } },
    );
  }
  return normalizeRestEndpoint(endpoint);
}

/**
 * The digest that stands for an endpoint in identities: sha256 hex of its normalized form.
 *
 * @example
 * ```ts
 * import { endpointDigest } from "./rest.ts";
 * console.log(endpointDigest("http://connect:8083") === endpointDigest("http://CONNECT:8083/"));
 * ```
 */
export function endpointDigest(endpoint: string): string {
  return sha256Hex(normalizeEndpoint(endpoint));
}

/** A "not now" 409: the request may succeed once the group settles. */
function isTransientConflict(message: string): boolean {
  return !/already exists/i.test(message);
}

const STATES: readonly ConnectState[] = [
  "UNASSIGNED",
  "RUNNING",
  "PAUSED",
  "STOPPED",
  "FAILED",
  "RESTARTING",
];

interface Answer {
  status: number;
  body: unknown;
  /** The worker's `message`, secrets scrubbed. */
  message: string;
}

/**
 * A {@link ConnectPort} for the Connect cluster whose REST API is at `endpoint`
 * (e.g. `http://127.0.0.1:8083`).
 *
 * @example
 * ```ts
 * const connect = restConnect("http://127.0.0.1:8083", { conflictAttempts: 5 });
 * await connect.createConnector("sluice-orders-orders_in", {
 *   config: { "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
 *     file: "/data/orders.jsonl", topic: "raw_orders" },
 *   secretKeys: [],
 * });
 * ```
 */
export function restConnect(endpoint: string, options: RestConnectOptions = {}): ConnectPort {
  const base = normalizeEndpoint(endpoint);
  const digest = sha256Hex(base);
  const attempts = Math.max(1, options.conflictAttempts ?? 20);
  const delayMs = options.conflictDelayMs ?? 500;
  const timeoutMs = options.requestTimeoutMs ?? 120_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const ca = options.tls?.ca ?? null;
  const auth: Record<string, string> = options.basicAuth
    ? {
      authorization: `Basic ${
        btoa(
          String.fromCharCode(
            ...new TextEncoder().encode(
              `${options.basicAuth.username}:${options.basicAuth.password}`,
            ),
          ),
        )
      }`,
    }
    : {};
  // the password never leaves in a message, whatever the worker or the client echoes
  const own = options.basicAuth ? [options.basicAuth.password] : [];

  const path = (name: string, suffix = "") => `/connectors/${encodeURIComponent(name)}${suffix}`;

  /**
   * One request, retried while the worker answers 409 "not now". `mutation` decides what a
   * lost response means: nothing happened for a read, an unknown outcome for a mutation.
   */
  async function request(
    method: string,
    target: string,
    body: unknown,
    mutation: boolean,
    secrets: readonly string[],
  ): Promise<Answer> {
    const scrub = (text: string) => scrubSecrets(text, [...secrets, ...own]);
    const evidence = (extra: Record<string, unknown>) => ({
      method,
      path: target,
      endpoint_digest: digest,
      ...extra,
    });
    for (let attempt = 1;; attempt++) {
      let res: Response;
      let text: string;
      // a client trusting the CA given, for this request only (the port has no close)
      const client = ca === null ? undefined : Deno.createHttpClient({ caCerts: [ca] });
      try {
        res = await fetch(`${base}${target}`, {
          method,
          headers: body === undefined
            ? { accept: "application/json", ...auth }
            : { accept: "application/json", "content-type": "application/json", ...auth },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
          client,
        });
        text = await res.text();
      } catch (error) {
        const cause = scrub(describeFailure(error));
        if (tlsRefused(error)) {
          // the handshake failed: nothing reached the worker, whatever the method
          throw new SluiceError(
            "ENV_CONNECT_TLS",
            `Kafka Connect at ${base} failed the TLS handshake (${method} ${target}): ${cause}; ` +
              "check the CA it is trusted with and its certificate's host names and validity",
            { evidence: evidence({ cause }) },
          );
        }
        if (!mutation || nothingSent(error)) {
          throw new SluiceError(
            "ENV_CONNECT_UNREACHABLE",
            `Kafka Connect at ${base} did not answer ${method} ${target}: ${cause}`,
            { evidence: evidence({ cause }) },
          );
        }
        throw new SluiceError(
          "UNKNOWN_OUTCOME_CONNECT",
          `${method} ${target} to Kafka Connect at ${base} lost its response (${cause}); ` +
            "it may or may not have been applied: observe the connector",
          { evidence: evidence({ cause }) },
        );
      } finally {
        client?.close();
      }
      let parsed: unknown = null;
      if (text.length > 0) {
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = text;
        }
      }
      const raw = typeof parsed === "object" && parsed !== null &&
          typeof (parsed as { message?: unknown }).message === "string"
        ? (parsed as { message: string }).message
        : (typeof parsed === "string" ? parsed : "");
      const message = scrub(raw).slice(0, 2000);
      if (res.status === 409 && isTransientConflict(message) && attempt < attempts) {
        await sleep(delayMs);
        continue;
      }
      // a read during a rebalance is answered 500 ("a rebalance is expected"): asked again, it
      // is answered once the group settles. A mutation's 500 stays an unknown outcome.
      if (!mutation && res.status >= 500 && /rebalance/i.test(message) && attempt < attempts) {
        await sleep(delayMs);
        continue;
      }
      if (res.status === 401 || res.status === 403) {
        // refused before the request was handled: nothing happened, even for a mutation
        throw new SluiceError(
          "ENV_CONNECT_DENIED",
          `Kafka Connect at ${base} denied ${method} ${target} (${res.status}${
            message ? `: ${message}` : ""
          }); check the REST user and password ${
            options.basicAuth ? `of ${options.basicAuth.username}` : "(none was given)"
          }`,
          { evidence: evidence({ status: res.status, message }) },
        );
      }
      if (res.status >= 500 && mutation) {
        throw new SluiceError(
          "UNKNOWN_OUTCOME_CONNECT",
          `${method} ${target} to Kafka Connect at ${base} answered ${res.status}: ${message}; ` +
            "it may or may not have been applied: observe the connector",
          { evidence: evidence({ status: res.status, message }) },
        );
      }
      if (res.status >= 500) {
        throw new SluiceError(
          "CONNECT_BAD_RESPONSE",
          `${method} ${target} to Kafka Connect at ${base} answered ${res.status}: ${message}`,
          { evidence: evidence({ status: res.status, message }) },
        );
      }
      if (res.status === 409) {
        if (!isTransientConflict(message)) {
          throw new SluiceError(
            "CONNECT_CONNECTOR_EXISTS",
            `Kafka Connect at ${base} refused ${method} ${target}: ${message}`,
            { evidence: evidence({ status: 409, message }) },
          );
        }
        throw new SluiceError(
          "CONNECT_CONFLICT",
          `Kafka Connect at ${base} still answered 409 to ${method} ${target} after ${attempts} ` +
            `attempts (${message}); nothing was applied: retry when the worker group is stable`,
          { evidence: evidence({ status: 409, message, attempts }) },
        );
      }
      if (res.status >= 400 && res.status !== 404) {
        throw new SluiceError(
          "CONNECT_REFUSED",
          `Kafka Connect at ${base} refused ${method} ${target} (${res.status}): ${message}`,
          { evidence: evidence({ status: res.status, message }) },
        );
      }
      return { status: res.status, body: parsed, message };
    }
  }

  function badShape(what: string, target: string): SluiceError {
    return new SluiceError(
      "CONNECT_BAD_RESPONSE",
      `Kafka Connect at ${base} answered GET ${target} with a body that is not ${what}`,
      { evidence: { path: target, endpoint_digest: digest } },
    );
  }

  function notFound(method: string, name: string, message: string): SluiceError {
    return new SluiceError(
      "CONNECT_NOT_FOUND",
      `connector ${name} does not exist on Kafka Connect at ${base} (${method}: ${message})`,
      { evidence: { connector: name, endpoint_digest: digest, method } },
    );
  }

  function toInfo(body: unknown, name: string, target: string): ConnectorInfo {
    const b = body as { name?: unknown; config?: unknown; tasks?: unknown; type?: unknown };
    if (typeof b !== "object" || b === null || b.name !== name || !isConfig(b.config)) {
      throw badShape(`connector ${name}'s info`, target);
    }
    const tasks = Array.isArray(b.tasks)
      ? b.tasks.map((t) => (t as { task?: unknown }).task).filter((t) => typeof t === "number")
      : [];
    return { name, config: b.config, tasks: tasks as number[], type: connectorType(b.type) };
  }

  function secretsOf(s: ConfigSubmission): string[] {
    const keys = new Set(s.secretKeys);
    return Object.entries(s.config)
      .filter(([k, v]) => (keys.has(k) || isSensitiveKey(k)) && v.length > 0)
      .map(([, v]) => v);
  }

  async function connectorConfig(name: string): Promise<ConnectorConfig | null> {
    const target = path(name, "/config");
    const { body, status } = await request("GET", target, undefined, false, []);
    if (status === 404) return null;
    if (!isConfig(body)) throw badShape("a configuration", target);
    return body;
  }

  return {
    async clusterInfo(): Promise<ConnectClusterInfo> {
      const { body, status } = await request("GET", "/", undefined, false, []);
      const b = body as { version?: unknown; commit?: unknown; kafka_cluster_id?: unknown };
      if (
        status !== 200 || typeof b !== "object" || b === null ||
        typeof b.version !== "string" || typeof b.kafka_cluster_id !== "string"
      ) throw badShape("worker info", "/");
      return {
        version: b.version,
        commit: typeof b.commit === "string" ? b.commit : "",
        kafkaClusterId: b.kafka_cluster_id,
        endpointDigest: digest,
      };
    },

    async plugins(): Promise<ConnectorPlugin[]> {
      const target = "/connector-plugins";
      const { body, status } = await request("GET", target, undefined, false, []);
      if (status !== 200 || !Array.isArray(body)) throw badShape("a list of plugins", target);
      return body.map((p) => {
        const x = p as { class?: unknown; type?: unknown; version?: unknown };
        if (typeof x.class !== "string" || (x.type !== "source" && x.type !== "sink")) {
          throw badShape("a list of plugins", target);
        }
        return {
          class: x.class,
          type: x.type,
          version: typeof x.version === "string" ? x.version : "",
        };
      });
    },

    async listConnectors(): Promise<string[]> {
      const { body, status } = await request("GET", "/connectors", undefined, false, []);
      if (status !== 200 || !Array.isArray(body) || !body.every((n) => typeof n === "string")) {
        throw badShape("a list of names", "/connectors");
      }
      return [...body].sort();
    },

    connectorConfig,

    async connectorStatus(name: string): Promise<ConnectorStatus | null> {
      const target = path(name, "/status");
      const { body, status } = await request("GET", target, undefined, false, []);
      if (status === 404) return null;
      return toStatus(body, name) ?? (() => {
        throw badShape(`connector ${name}'s status`, target);
      })();
    },

    async createConnector(name: string, submission: ConfigSubmission): Promise<ConnectorInfo> {
      const { body, status } = await request(
        "POST",
        "/connectors",
        { name, config: submission.config },
        true,
        secretsOf(submission),
      );
      if (status !== 201 && status !== 200) throw badShape("a created connector", "/connectors");
      return toInfo(body, name, "/connectors");
    },

    async updateConnectorConfig(
      name: string,
      submission: ConfigSubmission,
    ): Promise<ConnectorInfo> {
      // PUT .../config creates an absent connector: read first, so an update never creates
      // on purpose. The read is exact; a delete racing in between shows as 201 below.
      if ((await connectorConfig(name)) === null) {
        throw notFound("PUT config", name, "absent before the update");
      }
      const secrets = secretsOf(submission);
      const target = path(name, "/config");
      const { body, status } = await request("PUT", target, submission.config, true, secrets);
      if (status === 404) throw notFound("PUT config", name, "404");
      if (status === 201) {
        throw new SluiceError(
          "CONNECT_UPDATE_RECREATED",
          `connector ${name} disappeared between the read and the update on Kafka Connect at ` +
            `${base}; the update created it anew with the submitted configuration`,
          { evidence: { connector: name, endpoint_digest: digest } },
        );
      }
      return toInfo(body, name, target);
    },

    async deleteConnector(name: string): Promise<void> {
      const target = path(name);
      const { status, message } = await request("DELETE", target, undefined, true, []);
      if (status === 404) throw notFound("DELETE", name, message);
    },
  };
}

/** Replace every occurrence of a secret value in `text` by the redaction placeholder. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  // longest first, so a secret that contains another is hidden whole
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) {
    if (s.length > 0) out = out.split(s).join(REDACTED);
  }
  return out;
}

/**
 * Whether a fetch failure happened before anything reached the worker (connection refused,
 * no such host): then a mutation certainly did not happen.
 */
function nothingSent(error: unknown): boolean {
  // Deno's fetch says "client error (Connect)" when the TCP connection was never made
  // (and refuses outright to connect to a port the fetch standard blocks)
  return /client error \(Connect\)|Connection refused|dns error|failed to lookup|Requests to port \d+ are blocked/i
    .test(describeFailure(error));
}

/** Whether a fetch failed in the TLS handshake (Deno's rustls words, in the cause). */
function tlsRefused(error: unknown): boolean {
  return /invalid peer certificate|certificate|tls handshake|InvalidCertificate|UnknownIssuer|NotValidForName/i
    .test(describeFailure(error));
}

/** A fetch failure with its cause (Deno puts the useful part there). */
function describeFailure(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  return cause === undefined ? String(error) : `${String(error)}: ${String(cause)}`;
}

function isConfig(value: unknown): value is ConnectorConfig {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === "string");
}

function connectorType(value: unknown): "source" | "sink" | "unknown" {
  return value === "source" || value === "sink" ? value : "unknown";
}

function state(value: unknown): ConnectState | null {
  return STATES.includes(value as ConnectState) ? value as ConnectState : null;
}

function toStatus(body: unknown, name: string): ConnectorStatus | null {
  const b = body as {
    name?: unknown;
    type?: unknown;
    connector?: { state?: unknown; worker_id?: unknown; trace?: unknown };
    tasks?: unknown;
  };
  if (typeof b !== "object" || b === null || b.name !== name) return null;
  const cs = state(b.connector?.state);
  if (cs === null || typeof b.connector?.worker_id !== "string" || !Array.isArray(b.tasks)) {
    return null;
  }
  const tasks: ConnectorStatus["tasks"] = [];
  for (const t of b.tasks as Array<Record<string, unknown>>) {
    const ts = state(t?.state);
    if (typeof t?.id !== "number" || ts === null || typeof t.worker_id !== "string") return null;
    tasks.push({
      id: t.id,
      state: ts,
      workerId: t.worker_id,
      trace: typeof t.trace === "string" ? t.trace : null,
    });
  }
  tasks.sort((a, b) => a.id - b.id);
  return {
    name,
    type: connectorType(b.type),
    connector: {
      state: cs,
      workerId: b.connector.worker_id,
      trace: typeof b.connector.trace === "string" ? b.connector.trace : null,
    },
    tasks,
  };
}
