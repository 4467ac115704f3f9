/**
 * A principal of `kafka.security` made usable by a client: the password read from the variable
 * the project names, the PEM files read from the paths the variables it names hold. Only the
 * operator's environment says where a secret is; the project file only names variables.
 *
 * A variable that is unset or empty, or a file that cannot be read, is
 * `ENV_KAFKA_CREDENTIAL_MISSING` naming the variable and the `sluice.yaml` key, never a value.
 * {@link ClientSecurity.fingerprint} hashes every resolved secret (SHA-256, the material itself
 * never kept beside it): what a plan may bind to detect a credential changed between plan and
 * apply.
 *
 * A runner never reads the operator's environment: {@link runnerClientFile} turns the runner
 * principal into the one file sluice copies into its stopped container before it starts
 * ({@link RUNNER_CLIENT_FILE_PATH}; `runner/…/KafkaClientSecurity.java` reads it). A plan binds
 * it by a hash keyed with the state store's sealing key (`lib/plan/runner_credentials.ts`), never
 * by its content nor its plain sha256, which a plan file would expose to offline guessing.
 *
 * @example
 * ```ts
 * import { resolveKafkaSecurity } from "./security.ts";
 * import { PLAINTEXT } from "../../project/kafka_security.ts";
 * const none = await resolveKafkaSecurity(PLAINTEXT, "admin");
 * console.log(none.protocol); // "PLAINTEXT"
 * ```
 * @module
 */
import { createHash } from "node:crypto";
import { SluiceError } from "../../errors.ts";
import { canonicalJson, sha256Hex } from "../../artifact/canonical.ts";
import {
  type KafkaSecurity,
  type SaslMechanism,
  type SecurityProtocol,
  usesSasl,
  usesTls,
} from "../../project/kafka_security.ts";

/** Where a client reads its environment (a test gives its own). */
export interface SecurityEnv {
  get(name: string): string | undefined;
}

/** TLS material for a client: PEM text only. */
export interface ClientTls {
  /** The CA certificates to trust (null: the system's). */
  ca: string | null;
  /** The client certificate and key (mutual TLS), or null. */
  cert: string | null;
  key: string | null;
  hostnameVerification: boolean;
}

/** What a Kafka client needs to connect as one principal. */
export interface ClientSecurity {
  protocol: SecurityProtocol;
  tls: ClientTls | null;
  sasl: { mechanism: SaslMechanism; username: string; password: string } | null;
  /** SHA-256 over the protocol and every secret resolved (empty material under PLAINTEXT). */
  fingerprint: string;
}

/** PLAINTEXT: no material. */
export const PLAINTEXT_CLIENT: ClientSecurity = Object.freeze({
  protocol: "PLAINTEXT",
  tls: null,
  sasl: null,
  fingerprint: createHash("sha256").update("PLAINTEXT").digest("hex"),
});

function missing(variable: string, setting: string, why: string): SluiceError {
  return new SluiceError(
    "ENV_KAFKA_CREDENTIAL_MISSING",
    `${setting} names the environment variable ${variable}, which ${why}`,
    { evidence: { variable, setting } },
  );
}

function variable(env: SecurityEnv, name: string, setting: string): string {
  const value = env.get(name);
  if (value === undefined || value.length === 0) throw missing(name, setting, "is not set");
  return value;
}

async function pemFile(env: SecurityEnv, name: string, setting: string): Promise<string> {
  const path = variable(env, name, setting);
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound
      ? "holds a path where there is no file"
      : "holds a path that cannot be read";
    throw missing(name, setting, why);
  }
}

/**
 * The client security of `principal` under `security`: its variables and files read now.
 * Throws `ENV_KAFKA_CREDENTIAL_MISSING` when one is absent.
 */
export async function resolveKafkaSecurity(
  security: KafkaSecurity,
  principal: "admin" | "runner",
  env: SecurityEnv = Deno.env,
): Promise<ClientSecurity> {
  if (security.protocol === "PLAINTEXT") return PLAINTEXT_CLIENT;
  const at = `kafka.security.${principal}`;
  const who = security[principal];
  let tls: ClientTls | null = null;
  if (usesTls(security.protocol)) {
    const caEnv = security.tls?.caFileEnv ?? null;
    const cert = who?.certificate ?? null;
    tls = {
      ca: caEnv ? await pemFile(env, caEnv, "kafka.security.tls.ca_file_env") : null,
      cert: cert ? await pemFile(env, cert.certFileEnv, `${at}.cert_file_env`) : null,
      key: cert ? await pemFile(env, cert.keyFileEnv, `${at}.key_file_env`) : null,
      hostnameVerification: security.tls?.hostnameVerification ?? true,
    };
  }
  let sasl: ClientSecurity["sasl"] = null;
  if (usesSasl(security.protocol) && who?.sasl) {
    sasl = {
      mechanism: who.sasl.mechanism,
      username: who.sasl.username,
      password: variable(env, who.sasl.passwordEnv, `${at}.password_env`),
    };
  }
  const hash = createHash("sha256").update(security.protocol);
  for (const part of [tls?.ca, tls?.cert, tls?.key, sasl?.mechanism, sasl?.username]) {
    hash.update(`\0${part ?? ""}`);
  }
  hash.update(`\0${sasl ? createHash("sha256").update(sasl.password).digest("hex") : ""}`);
  return { protocol: security.protocol, tls, sasl, fingerprint: hash.digest("hex") };
}

/** Where a runner container holds its Kafka client file (the runner's default path). */
export const RUNNER_CLIENT_FILE_PATH = "/etc/sluice/kafka-client.json";

/** The format of the runner's Kafka client file. */
export const RUNNER_CLIENT_FILE_FORMAT = "sluice.runner-kafka-client";

/** The runner's Kafka client file: its bytes (secret) and their sha256 (what may be shown). */
export interface RunnerClientFile {
  bytes: Uint8Array;
  sha256: string;
}

/**
 * The Kafka client file of the runner principal `client` (canonical JSON, format
 * {@link RUNNER_CLIENT_FILE_FORMAT} version 1: protocol, the SASL login, the PEM material and
 * hostname verification), or null under PLAINTEXT: a runner without the file connects as
 * before. The same principal always gives the same bytes, so their sha256 changes exactly when
 * a credential, the trust or a setting does.
 *
 * @example
 * ```ts
 * import { PLAINTEXT_CLIENT, runnerClientFile } from "./security.ts";
 * console.log(runnerClientFile(PLAINTEXT_CLIENT)); // null
 * ```
 */
export function runnerClientFile(client: ClientSecurity): RunnerClientFile | null {
  if (client.protocol === "PLAINTEXT") return null;
  const text = canonicalJson({
    format: RUNNER_CLIENT_FILE_FORMAT,
    version: 1,
    protocol: client.protocol,
    sasl: client.sasl
      ? {
        mechanism: client.sasl.mechanism,
        username: client.sasl.username,
        password: client.sasl.password,
      }
      : null,
    tls: client.tls
      ? {
        ca_pem: client.tls.ca,
        cert_pem: client.tls.cert,
        key_pem: client.tls.key,
        hostname_verification: client.tls.hostnameVerification,
      }
      : null,
  });
  const bytes = new TextEncoder().encode(text);
  return { bytes, sha256: sha256Hex(bytes) };
}
