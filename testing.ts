/**
 * Throwaway environments for your own CI, the way sluice's tests make theirs: a KRaft broker on
 * its own Docker network (a SASL_SSL listener with SCRAM users and the StandardAuthorizer when
 * asked), a Kafka Connect worker beside it, and a private PostgreSQL server. Each builder is
 * disposable (`await using`): disposing removes exactly what it created, by its run label —
 * never a broad prune. A sibling entry point of `mod.ts`, imported the same way
 * (`docs/sdk-import.md`): it needs a Docker daemon and the images `scripts/bootstrap.sh` builds
 * (there is no registry to pull them from); PostgreSQL's own binaries for {@link startPostgres}.
 *
 * @example
 * ```ts
 * import { startEnvironment } from "./testing.ts";
 * // await using env = await startEnvironment({ connect: false });
 * // console.log(env.bootstrapHost, env.clusterId); // point a project's sluice.yaml at these
 * ```
 * @module
 */
import { type Env, startEnv, type StartEnvOptions } from "./harness/env.ts";
import { type PrivatePostgres, startPrivatePostgres } from "./harness/postgres.ts";

export type {
  ConnectDescriptor,
  Env,
  EnvDescriptor,
  StartEnvOptions,
  TeardownReport,
} from "./harness/env.ts";
export type { SecureConnect } from "./harness/connect.ts";
export type { SecureKafka, SecureKafkaOptions } from "./harness/secure_kafka.ts";
export type { PrivatePostgres } from "./harness/postgres.ts";

/**
 * A uniquely named Docker network with a broker on it (and a Kafka Connect worker unless
 * `connect: false`): `bootstrapHost` for clients on the host, `bootstrapInternal` for runners on
 * `network`. Dispose it to remove everything it created.
 *
 * @example
 * ```ts
 * import { startEnvironment } from "./testing.ts";
 * // await using env = await startEnvironment({ connect: false, secure: { users: [{ name: "admin", superUser: true }] } });
 * // console.log(env.secure?.bootstrapHost);
 * ```
 */
export function startEnvironment(options: StartEnvOptions = {}): Promise<Env> {
  return startEnv(options);
}

/** A private PostgreSQL server that {@link startPostgres} started; disposing it stops it. */
export interface Postgres extends PrivatePostgres, AsyncDisposable {}

/**
 * A private PostgreSQL server on its own port and data directory (trust auth on loopback): a
 * state store for one pipeline run (`url` in `SLUICE_STATE_DSN`). Dispose it to stop the server
 * and remove its directory.
 *
 * @example
 * ```ts
 * import { startPostgres } from "./testing.ts";
 * // await using pg = await startPostgres();
 * // Deno.env.set("SLUICE_STATE_DSN", pg.url);
 * ```
 */
export async function startPostgres(): Promise<Postgres> {
  const pg = await startPrivatePostgres();
  return Object.assign(pg, { [Symbol.asyncDispose]: () => pg.stop() });
}
