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
import { withAdmin } from "./kafka.ts";

/** The secured listener's users. */
export interface SecureKafkaOptions {
  /** SCRAM-SHA-512 users to create; a super user may do anything on the secured listeners. */
  users: { name: string; superUser?: boolean }[];
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
}

/** Where the keystore goes in the broker's container. */
export const KEYSTORE_TARGET = "/opt/kafka/config/secrets/broker.p12";
/** The secured listeners' container ports: host-facing and network-facing. */
export const SECURE_PORT = 9095;
export const SECURE_INTERNAL_PORT = 9096;

async function openssl(dir: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("openssl", {
    args,
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  if (!out.success) {
    throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
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
  await openssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=sluice-test-ca",
  ]);
  await openssl(dir, [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "broker.key",
    "-out",
    "broker.csr",
    "-subj",
    `/CN=${alias}`,
  ]);
  await Deno.writeTextFile(
    `${dir}/san.ext`,
    `subjectAltName=DNS:${alias},DNS:localhost,IP:127.0.0.1\n`,
  );
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    "broker.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "broker.pem",
    "-days",
    "2",
    "-extfile",
    "san.ext",
  ]);
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
    properties: {
      "listeners":
        `INTERNAL://:9092,EXTERNAL://:9094,CONTROLLER://:9093,SECURE://:${SECURE_PORT},SECURE_INT://:${SECURE_INTERNAL_PORT}`,
      "listener.security.protocol.map":
        "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT,SECURE:SASL_SSL,SECURE_INT:SASL_SSL",
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
  await withAdmin(bootstrap, (admin) =>
    admin.createAcls({
      creations: creations as Parameters<typeof admin.createAcls>[0]["creations"],
    }));
}
