/**
 * How sluice and its runners authenticate to Kafka and trust its brokers: `kafka.security` in
 * `sluice.yaml` (docs/project-format.md, "Kafka security"), per environment like every other
 * setting (an environment's `kafka.security` replaces the top-level one whole).
 *
 * Two principals, never one: `admin` is sluice's own (plans, observation, topic creation, the
 * preview reader), `runner` is every runner's. A credential is only ever named: the environment
 * variable holding a password, or the environment variable holding the path of a PEM file. A
 * literal secret in `sluice.yaml` is `MANIFEST_LITERAL_SECRET`, and its value is never echoed.
 * Paths are not written in the project either: a project file from a pull request could
 * otherwise make sluice read (or mount into a runner) any file of the machine.
 *
 * @example
 * ```ts
 * import { PLAINTEXT } from "./kafka_security.ts";
 * console.log(PLAINTEXT.protocol); // "PLAINTEXT"
 * ```
 * @module
 */
import type { Span } from "../expr/diagnostic.ts";
import type { MapEntry, YamlReader, YNode } from "./_yaml_reader.ts";
import { isEnvVarName } from "./names.ts";
import { isSensitiveKey } from "../secrets.ts";

/** Kafka's security protocols, as its clients name them. */
export const SECURITY_PROTOCOLS = ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] as const;
/** A Kafka security protocol. */
export type SecurityProtocol = typeof SECURITY_PROTOCOLS[number];

/** The SASL mechanisms sluice speaks (both its own client and the runner's Java client). */
export const SASL_MECHANISMS = ["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"] as const;
/** A SASL mechanism. */
export type SaslMechanism = typeof SASL_MECHANISMS[number];

/** One principal: a SASL login and/or a client certificate, every secret by reference. */
export interface KafkaPrincipal {
  /** The SASL login (SASL_PLAINTEXT, SASL_SSL), or null. */
  sasl: { mechanism: SaslMechanism; username: string; passwordEnv: string } | null;
  /**
   * Mutual TLS (SSL, SASL_SSL): the variables holding the PEM certificate and key paths, and
   * under SSL, optionally, the principal the broker makes of the certificate (`principal:
   * User:<name>`, as its `ssl.principal.mapping.rules` map the subject): sluice cannot read
   * those rules, so only a declared principal lets it prove a runner's ACLs.
   */
  certificate: { certFileEnv: string; keyFileEnv: string; principal?: string } | null;
}

/** `kafka.security`: the protocol, the brokers' trust and the two principals. */
export interface KafkaSecurity {
  protocol: SecurityProtocol;
  /** TLS (SSL, SASL_SSL): the variable holding the CA file's path (null: the system's trust). */
  tls: { caFileEnv: string | null; hostnameVerification: boolean } | null;
  /** sluice's own principal (null under PLAINTEXT or SSL without a client certificate). */
  admin: KafkaPrincipal | null;
  /** Every runner's principal. */
  runner: KafkaPrincipal | null;
}

/** No security: today's default, and what a project without `kafka.security` means. */
export const PLAINTEXT: KafkaSecurity = Object.freeze({
  protocol: "PLAINTEXT",
  tls: null,
  admin: null,
  runner: null,
});

/** Whether a protocol runs over TLS. */
export function usesTls(protocol: SecurityProtocol): boolean {
  return protocol === "SSL" || protocol === "SASL_SSL";
}

/** Whether a protocol authenticates with SASL. */
export function usesSasl(protocol: SecurityProtocol): boolean {
  return protocol === "SASL_PLAINTEXT" || protocol === "SASL_SSL";
}

const SECURITY_KEYS = ["protocol", "tls", "admin", "runner"];
const TLS_KEYS = ["ca_file_env", "hostname_verification"];
const PRINCIPAL_KEYS = [
  "sasl_mechanism",
  "username",
  "password_env",
  "cert_file_env",
  "key_file_env",
  "principal",
];

/**
 * Report every literal secret among a mapping's keys (`MANIFEST_LITERAL_SECRET`, its value never
 * shown). Returns whether one was found.
 */
function refuseLiteralSecrets(
  r: YamlReader,
  node: MapEntry["value"],
  where: string,
  allowed: readonly string[],
  fallback: Span,
): boolean {
  const items = (node as { items?: Array<{ key?: YNode; value?: YNode }> } | null)?.items;
  let found = false;
  for (const item of items ?? []) {
    const key = (item.key as { value?: unknown } | null)?.value;
    if (typeof key !== "string" || allowed.includes(key) || !isSensitiveKey(key)) continue;
    found = true;
    const keySpan = r.span(item.key, fallback);
    r.secretError(
      "MANIFEST_LITERAL_SECRET",
      `${where}.${key} is a secret written literally; a secret never goes in sluice.yaml: name ` +
        `the environment variable that holds it instead (e.g. password_env)`,
      keySpan,
      { key },
      r.span(item.value, keySpan),
    );
  }
  return found;
}

/** An `*_env` value: the name of an environment variable, or null (reported). */
function envName(r: YamlReader, entry: MapEntry, where: string): string | null {
  const value = r.string(entry, where);
  if (value === null) return null;
  if (!isEnvVarName(value)) {
    r.error(
      "MANIFEST_INVALID_VALUE",
      `${where} must name an environment variable (the value itself never goes in sluice.yaml)`,
      r.valueSpan(entry),
    );
    return null;
  }
  return value;
}

function readPrincipal(
  r: YamlReader,
  entry: MapEntry,
  where: string,
  protocol: SecurityProtocol,
): KafkaPrincipal | null {
  if (refuseLiteralSecrets(r, entry.value, where, PRINCIPAL_KEYS, entry.keySpan)) return null;
  const map = r.map(entry.value, where, PRINCIPAL_KEYS, entry.keySpan);
  if (!map) return null;
  const before = r.errors.length;
  let sasl: KafkaPrincipal["sasl"] = null;
  if (usesSasl(protocol)) {
    const mech = r.required(map, "sasl_mechanism", where, entry.keySpan);
    const user = r.required(map, "username", where, entry.keySpan);
    const pass = r.required(map, "password_env", where, entry.keySpan);
    const mechanism = mech ? r.string(mech, `${where}.sasl_mechanism`) : null;
    if (mech && mechanism !== null && !(SASL_MECHANISMS as readonly string[]).includes(mechanism)) {
      r.error(
        "MANIFEST_INVALID_VALUE",
        `${where}.sasl_mechanism must be one of ${
          SASL_MECHANISMS.join(", ")
        }, found '${mechanism}'`,
        r.valueSpan(mech),
      );
    }
    const username = user ? r.string(user, `${where}.username`) : null;
    if (user && username !== null && username.length === 0) {
      r.error("MANIFEST_INVALID_VALUE", `${where}.username must not be empty`, r.valueSpan(user));
    }
    const passwordEnv = pass ? envName(r, pass, `${where}.password_env`) : null;
    if (mechanism !== null && username && passwordEnv !== null) {
      sasl = { mechanism: mechanism as SaslMechanism, username, passwordEnv };
    }
  } else {
    for (const key of ["sasl_mechanism", "username", "password_env"]) {
      const e = map.get(key);
      if (e) {
        r.error(
          "MANIFEST_INVALID_VALUE",
          `${where}.${key} applies to SASL_PLAINTEXT and SASL_SSL only (protocol is ${protocol})`,
          e.keySpan,
        );
      }
    }
  }
  const cert = map.get("cert_file_env");
  const key = map.get("key_file_env");
  let certificate: KafkaPrincipal["certificate"] = null;
  if (cert || key) {
    if (!usesTls(protocol)) {
      r.error(
        "MANIFEST_INVALID_VALUE",
        `${where}: a client certificate applies to SSL and SASL_SSL only (protocol is ${protocol})`,
        (cert ?? key)!.keySpan,
      );
    } else if (!cert || !key) {
      r.error(
        "MANIFEST_MISSING_KEY",
        `${where}: a client certificate needs both cert_file_env and key_file_env`,
        (cert ?? key)!.keySpan,
        { key: cert ? "key_file_env" : "cert_file_env" },
      );
    } else {
      const certFileEnv = envName(r, cert, `${where}.cert_file_env`);
      const keyFileEnv = envName(r, key, `${where}.key_file_env`);
      if (certFileEnv !== null && keyFileEnv !== null) certificate = { certFileEnv, keyFileEnv };
    }
  }
  const named = map.get("principal");
  if (named) {
    const value = r.string(named, `${where}.principal`);
    if (protocol !== "SSL" || !(cert && key)) {
      r.error(
        "MANIFEST_INVALID_VALUE",
        `${where}.principal names a client certificate's principal: it applies under SSL with ` +
          `cert_file_env and key_file_env (under SASL the username is the principal)`,
        named.keySpan,
      );
    } else if (value !== null && !/^User:\S+$/.test(value)) {
      r.error(
        "MANIFEST_INVALID_VALUE",
        `${where}.principal must be User:<name>, the principal the broker's ` +
          `ssl.principal.mapping.rules make of the certificate, found '${value}'`,
        r.valueSpan(named),
      );
    } else if (value !== null && certificate !== null) {
      certificate = { ...certificate, principal: value };
    }
  }
  if (r.errors.length > before) return null;
  if (protocol === "SSL" && certificate === null) {
    r.error(
      "MANIFEST_MISSING_KEY",
      `${where} under SSL authenticates with a client certificate: cert_file_env and key_file_env`,
      entry.keySpan,
      { key: "cert_file_env" },
    );
    return null;
  }
  return { sasl, certificate };
}

/**
 * Read `kafka.security` at `entry` (`where`: the key path as written, for messages). Returns
 * null when it is invalid (every problem reported on `r`).
 */
export function readKafkaSecurity(
  r: YamlReader,
  entry: MapEntry,
  where: string,
): KafkaSecurity | null {
  if (refuseLiteralSecrets(r, entry.value, where, SECURITY_KEYS, entry.keySpan)) return null;
  const map = r.map(entry.value, where, SECURITY_KEYS, entry.keySpan);
  if (!map) return null;
  const before = r.errors.length;
  const protocolEntry = r.required(map, "protocol", where, entry.keySpan);
  if (!protocolEntry) return null;
  const written = r.string(protocolEntry, `${where}.protocol`);
  if (written === null) return null;
  if (!(SECURITY_PROTOCOLS as readonly string[]).includes(written)) {
    r.error(
      "MANIFEST_INVALID_VALUE",
      `${where}.protocol must be one of ${SECURITY_PROTOCOLS.join(", ")}, found '${written}'`,
      r.valueSpan(protocolEntry),
    );
    return null;
  }
  const protocol = written as SecurityProtocol;

  let tls: KafkaSecurity["tls"] = null;
  const tlsEntry = map.get("tls");
  if (tlsEntry && !usesTls(protocol)) {
    r.error(
      "MANIFEST_INVALID_VALUE",
      `${where}.tls applies to SSL and SASL_SSL only (protocol is ${protocol})`,
      tlsEntry.keySpan,
    );
  } else if (usesTls(protocol)) {
    tls = { caFileEnv: null, hostnameVerification: true };
    if (
      tlsEntry &&
      !refuseLiteralSecrets(r, tlsEntry.value, `${where}.tls`, TLS_KEYS, tlsEntry.keySpan)
    ) {
      const tm = r.map(tlsEntry.value, `${where}.tls`, TLS_KEYS, tlsEntry.keySpan);
      const ca = tm?.get("ca_file_env");
      if (ca) tls.caFileEnv = envName(r, ca, `${where}.tls.ca_file_env`);
      const verify = tm?.get("hostname_verification");
      if (verify) {
        const v = r.boolean(verify, `${where}.tls.hostname_verification`);
        if (v !== null) tls.hostnameVerification = v;
      }
    }
  }

  const principals: { admin: KafkaPrincipal | null; runner: KafkaPrincipal | null } = {
    admin: null,
    runner: null,
  };
  for (const role of ["admin", "runner"] as const) {
    const e = map.get(role);
    if (protocol === "PLAINTEXT") {
      if (e) {
        r.error(
          "MANIFEST_INVALID_VALUE",
          `${where}.${role} applies to SSL, SASL_PLAINTEXT and SASL_SSL only (protocol is PLAINTEXT)`,
          e.keySpan,
        );
      }
      continue;
    }
    const needed = usesSasl(protocol) ? r.required(map, role, where, entry.keySpan) : e;
    if (needed) principals[role] = readPrincipal(r, needed, `${where}.${role}`, protocol);
  }
  if (r.errors.length > before) return null;
  return { protocol, tls, ...principals };
}
