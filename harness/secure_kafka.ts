/**
 * A SASL_SSL listener for the harness's broker, made at test time: a throwaway CA and broker
 * certificate (openssl), a PKCS#12 keystore, SCRAM users created by Kafka's own storage tool at
 * format (`images/kafka/kafka-start.sh` reads them from a file: no password in the container's
 * environment), and the StandardAuthorizer. The plaintext listeners stay as they are and act as
 * `User:ANONYMOUS`, a super user, so the harness's own helpers keep working; on the secured
 * listeners only the super users named here may do anything without an ACL.
 *
 * {@link grantRunnerAcls} gives a runner principal exactly what a runner's job needs (the
 * bindings `lib/validation/runner_permissions.ts` proves), through the plaintext listener.
 *
 * @example
 * ```ts
 * import { secureListenerFiles } from "./secure_kafka.ts";
 * const files = await secureListenerFiles({ users: [{ name: "sluice-admin", superUser: true }] });
 * console.log(files.caFile, Object.keys(files.passwords));
 * ```
 * @module
 */
import { randomBytes } from "node:crypto";
import {
  AclOperations,
  AclPermissionTypes,
  ResourcePatternTypes,
  ResourceTypes,
} from "npm:@platformatic/kafka@2.12.1";
import { type AclCreation, createAclsVisible } from "./kafka.ts";
import { openssl, selfSignedCa, signed } from "./tls_certs.ts";

/** The secured listener's users. */
export interface SecureKafkaOptions {
  /** SCRAM-SHA-512 users to create; a super user may do anything on the secured listeners. */
  users: { name: string; superUser?: boolean }[];
  /**
   * Also an SSL listener that requires a client certificate (`ssl.client.auth=required`), on
   * which a certificate's `CN=<name>` is the principal `User:<name>`
   * (`ssl.principal.mapping.rules`): each user gets a certificate signed by the listeners' CA.
   */
  mtls?: boolean;
}

/** A client certificate and its key, PEM files on the host. */
export interface ClientCertificate {
  certFile: string;
  keyFile: string;
}

/** What a test needs to reach the secured listener. */
export interface SecureKafka {
  /** `127.0.0.1:port` of the SASL_SSL listener for clients on the host. */
  bootstrapHost: string;
  /** `alias:9096` of the SASL_SSL listener for containers on the network. */
  bootstrapInternal: string;
  /** The CA certificate (PEM) on the host that signed the broker's certificate. */
  caFile: string;
  /** Each user's generated password. */
  passwords: Record<string, string>;
  /** The mutual-TLS listener (`mtls` option), absent when there is none. */
  mtls?: {
    /** `127.0.0.1:port` of the SSL listener for clients on the host. */
    bootstrapHost: string;
    /** `alias:9098` of the SSL listener for containers on the network. */
    bootstrapInternal: string;
    /** Each user's certificate (`CN=<name>`, signed by the CA at `caFile`). */
    certificates: Record<string, ClientCertificate>;
  };
}

/** The files and settings {@link secureListenerFiles} makes. */
export interface SecureListenerFiles {
  dir: string;
  caFile: string;
  keystore: string;
  /** The lines of `config/scram-users` (`kafka-start.sh`). */
  scramUsers: string;
  passwords: Record<string, string>;
  /** server.properties overrides for the secured listeners. */
  properties: Record<string, string>;
  /** Each user's client certificate, when the `mtls` listener was asked for. */
  certificates: Record<string, ClientCertificate> | null;
}

/** Where the keystore goes in the broker's container. */
export const KEYSTORE_TARGET = "/opt/kafka/config/secrets/broker.p12";
/** The secured listeners' container ports: host-facing and network-facing. */
export const SECURE_PORT = 9095;
export const SECURE_INTERNAL_PORT = 9096;
/** The mutual-TLS listeners' container ports: host-facing and network-facing. */
export const MTLS_PORT = 9097;
export const MTLS_INTERNAL_PORT = 9098;
/** Where the CA the mutual-TLS listeners trust client certificates by goes in the container. */
export const TRUSTSTORE_TARGET = "/opt/kafka/config/secrets/ca.pem";
/**
 * `CN=<name>` (a certificate made by {@link clientCertificate}) is `User:<name>`; any other
 * subject keeps Kafka's default (the whole distinguished name).
 */
export const PRINCIPAL_MAPPING = "RULE:^CN=([a-zA-Z0-9._-]+)$/$1/,DEFAULT";

/**
 * `sluice.yaml`'s `kafka.security` block (two spaces in, under `kafka:`) for the SASL_SSL
 * listener's SCRAM users: the admin principal `admin` and the runner `orders-runner`, the CA and
 * each password by the name of its variable only ({@link scramVariables} gives their values).
 */
export function scramSecurityYaml(admin = "sluice-admin"): string {
  return `  security:
    protocol: SASL_SSL
    tls:
      ca_file_env: KAFKA_CA_FILE
    admin:
      sasl_mechanism: SCRAM-SHA-512
      username: ${admin}
      password_env: SLUICE_KAFKA_ADMIN_PASSWORD
    runner:
      sasl_mechanism: SCRAM-SHA-512
      username: orders-runner
      password_env: SLUICE_KAFKA_RUNNER_PASSWORD
`;
}

/** The variables {@link scramSecurityYaml} names, with the secured listener's values. */
export function scramVariables(
  secure: SecureKafka,
  admin = "sluice-admin",
): Record<string, string> {
  return {
    KAFKA_CA_FILE: secure.caFile,
    SLUICE_KAFKA_ADMIN_PASSWORD: secure.passwords[admin],
    SLUICE_KAFKA_RUNNER_PASSWORD: secure.passwords["orders-runner"],
  };
}

/**
 * A manifest's text pointed at a listener (`bootstrap_host`, `bootstrap_internal`), with a
 * `kafka.security` block placed right after `bootstrap_internal`.
 */
export function securedManifest(
  text: string,
  listener: { bootstrapHost: string; bootstrapInternal: string },
  security: string,
): string {
  return text
    .replace(/bootstrap_host: .*/, `bootstrap_host: ${listener.bootstrapHost}`)
    .replace(/bootstrap_internal: .*/, `bootstrap_internal: ${listener.bootstrapInternal}`)
    .replace(/(bootstrap_internal: .*\n)/, `$1${security}`);
}

/**
 * A client certificate for `CN=<name>` in `dir` (`<name>.pem`, `<name>.key`, PKCS#8), signed by
 * the CA `ca.pem`/`ca.key` of `dir`, or by a throwaway CA of its own when `which` is `"unknown"`
 * (a certificate no listener trusts).
 */
export async function clientCertificate(
  dir: string,
  name: string,
  which: "listeners" | "unknown" = "listeners",
): Promise<ClientCertificate> {
  let ca = "ca";
  if (which === "unknown") {
    ca = `unknown-ca-${name}`;
    await selfSignedCa(dir, ca, "sluice-unknown-ca");
  }
  await signed(dir, name, name, null, ca);
  return { certFile: `${dir}/${name}.pem`, keyFile: `${dir}/${name}.key` };
}

/** A password without characters that need quoting in the storage tool's SCRAM syntax. */
function password(): string {
  return randomBytes(18).toString("base64url").replace(/[-_]/g, "x");
}

/**
 * Make a CA, the broker's certificate for `alias`, `localhost` and 127.0.0.1, a PKCS#12
 * keystore, the users' passwords and the listener settings.
 */
export async function secureListenerFiles(
  options: SecureKafkaOptions,
  alias = "kafka",
): Promise<SecureListenerFiles> {
  const dir = await Deno.makeTempDir({ prefix: "sluice-secure-kafka-" });
  const storePassword = password();
  await selfSignedCa(dir, "ca", "sluice-test-ca");
  await signed(
    dir,
    "broker",
    alias,
    `subjectAltName=DNS:${alias},DNS:localhost,IP:127.0.0.1\n`,
  );
  await openssl(dir, [
    "pkcs12",
    "-export",
    "-in",
    "broker.pem",
    "-inkey",
    "broker.key",
    "-certfile",
    "ca.pem",
    "-name",
    "broker",
    "-out",
    "broker.p12",
    "-passout",
    `pass:${storePassword}`,
  ]);
  // the keystore is copied into the broker's container, whose user must read it
  await Deno.chmod(`${dir}/broker.p12`, 0o644);
  const passwords: Record<string, string> = {};
  const lines: string[] = [];
  for (const u of options.users) {
    passwords[u.name] = password();
    lines.push(`SCRAM-SHA-512=[name=${u.name},password=${passwords[u.name]}]`);
  }
  const scram = "org.apache.kafka.common.security.scram.ScramLoginModule required;";
  let certificates: Record<string, ClientCertificate> | null = null;
  if (options.mtls) {
    certificates = {};
    for (const u of options.users) certificates[u.name] = await clientCertificate(dir, u.name);
    // the CA is copied into the broker's container, whose user must read it
    await Deno.chmod(`${dir}/ca.pem`, 0o644);
  }
  const mtls = options.mtls ?? false;
  const supers = [
    "User:ANONYMOUS",
    ...options.users.filter((u) => u.superUser).map((u) => `User:${u.name}`),
  ];
  return {
    dir,
    caFile: `${dir}/ca.pem`,
    keystore: `${dir}/broker.p12`,
    scramUsers: lines.join("\n") + "\n",
    passwords,
    certificates,
    properties: {
      "listeners":
        `INTERNAL://:9092,EXTERNAL://:9094,CONTROLLER://:9093,SECURE://:${SECURE_PORT},SECURE_INT://:${SECURE_INTERNAL_PORT}` +
        (mtls ? `,MTLS://:${MTLS_PORT},MTLS_INT://:${MTLS_INTERNAL_PORT}` : ""),
      "listener.security.protocol.map":
        "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT,SECURE:SASL_SSL,SECURE_INT:SASL_SSL" +
        (mtls ? ",MTLS:SSL,MTLS_INT:SSL" : ""),
      ...(mtls
        ? {
          // only these listeners ask for a client certificate (the SASL_SSL ones do not)
          "listener.name.mtls.ssl.client.auth": "required",
          "listener.name.mtls_int.ssl.client.auth": "required",
          "ssl.truststore.type": "PEM",
          "ssl.truststore.location": TRUSTSTORE_TARGET,
          "ssl.principal.mapping.rules": PRINCIPAL_MAPPING,
        }
        : {}),
      "sasl.enabled.mechanisms": "SCRAM-SHA-512",
      "listener.name.secure.scram-sha-512.sasl.jaas.config": scram,
      "listener.name.secure_int.scram-sha-512.sasl.jaas.config": scram,
      "ssl.keystore.type": "PKCS12",
      "ssl.keystore.location": KEYSTORE_TARGET,
      "ssl.keystore.password": storePassword,
      "ssl.key.password": storePassword,
      "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
      "super.users": supers.join(";"),
      "allow.everyone.if.no.acl.found": "false",
    },
  };
}

/** What one runner reads and writes, named as its model's artifact names them. */
export interface RunnerResources {
  applicationId: string;
  inputTopic: string;
  outputTopic: string;
  /** The dead-letter topic (`on_invalid`), when the model has one. */
  deadLetterTopic?: string;
}

/**
 * Allow `principal` (`User:name`) what a runner's job needs and nothing more: READ its input,
 * WRITE its output (and dead-letter) topic, READ its group, WRITE its transactional IDs (every
 * name starting with the application ID). Created through `bootstrap`, a plaintext listener
 * (its `User:ANONYMOUS` is a super user).
 */
export async function grantRunnerAcls(
  bootstrap: string,
  principal: string,
  r: RunnerResources,
): Promise<void> {
  const allow = (type: number, name: string, operation: number, prefixed = false) => ({
    resourceType: type,
    resourceName: name,
    resourcePatternType: prefixed ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
    principal,
    host: "*",
    operation,
    permissionType: AclPermissionTypes.ALLOW,
  });
  const creations = [
    allow(ResourceTypes.TOPIC, r.inputTopic, AclOperations.READ),
    allow(ResourceTypes.TOPIC, r.outputTopic, AclOperations.WRITE),
    ...(r.deadLetterTopic
      ? [allow(ResourceTypes.TOPIC, r.deadLetterTopic, AclOperations.WRITE)]
      : []),
    allow(ResourceTypes.GROUP, r.applicationId, AclOperations.READ),
    allow(ResourceTypes.TRANSACTIONAL_ID, r.applicationId, AclOperations.WRITE, true),
  ];
  await createAclsVisible(bootstrap, creations as AclCreation[]);
}
