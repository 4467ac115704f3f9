/**
 * How a runner receives the project's `kafka.security.runner` principal: its Kafka client file
 * ({@link runnerClientFile}) is copied into the container through the Docker archive API right
 * before every start — the same way the volume's instance file goes in, no helper container, no
 * shared filesystem (a remote daemon has none) — and nowhere else: not in the container's
 * environment or labels (`docker inspect` shows both), not in the mounted plan, not on the host's
 * disk. The file lives in the container's own layer (mode 0400, root, the runner's user) and goes
 * with the container when it is removed.
 *
 * Written before every start, not at create: a create and its first start are separate durable
 * steps, and a continuation that adopts a created container starts it without creating it.
 * Writing it again is idempotent (same principal, same bytes), and a restart after the operator
 * rotated a credential gets the current one.
 *
 * Under PLAINTEXT there is no file and the port is returned unchanged.
 *
 * @example
 * ```ts
 * import { withRunnerClientFile } from "./runner_client_file.ts";
 * import type { DockerPort } from "./port.ts";
 * declare const docker: DockerPort;
 * const same = withRunnerClientFile(docker, null); // PLAINTEXT: docker itself
 * ```
 * @module
 */
import type { DockerPort } from "./port.ts";
import type { Manifest } from "../../project/manifest.ts";
import {
  resolveKafkaSecurity,
  RUNNER_CLIENT_FILE_PATH,
  type RunnerClientFile,
  runnerClientFile,
  type SecurityEnv,
} from "../kafka/security.ts";

/** Owner-read only: nobody but the runner (root in its container) reads it. */
export const RUNNER_CLIENT_FILE_MODE = 0o400;

/**
 * `docker` whose `startContainer` first copies `file` into the container at
 * {@link RUNNER_CLIENT_FILE_PATH}; `docker` itself when `file` is null (PLAINTEXT).
 */
export function withRunnerClientFile(
  docker: DockerPort,
  file: RunnerClientFile | null,
): DockerPort {
  if (file === null) return docker;
  return {
    ...docker,
    async startContainer(id: string): Promise<void> {
      await docker.writeContainerFile(id, RUNNER_CLIENT_FILE_PATH, file.bytes, {
        mode: RUNNER_CLIENT_FILE_MODE,
      });
      await docker.startContainer(id);
    },
  };
}

/**
 * The runner principal of a session (`kafka.security.runner`) as its client file: read from the
 * operator's environment at the first call (a command that starts no runner — observe, a plan
 * that starts none — never needs it), kept in memory only, read again after a failure. One per
 * session, so the file a plan's credential binding is checked against
 * (`lib/plan/runner_credentials.ts`) is the file the runners are started with.
 */
export interface RunnerPrincipal {
  /** The runner's client file now (null under PLAINTEXT); `ENV_KAFKA_CREDENTIAL_MISSING` when a variable or file is missing. */
  file(): Promise<RunnerClientFile | null>;
}

/**
 * The {@link RunnerPrincipal} of a manifest.
 *
 * @example
 * ```ts
 * import { runnerPrincipal } from "./runner_client_file.ts";
 * import type { Manifest } from "../../project/manifest.ts";
 * import { PLAINTEXT } from "../../project/kafka_security.ts";
 * const none = runnerPrincipal({ kafkaSecurity: PLAINTEXT } as Manifest);
 * console.log(await none.file()); // null
 * ```
 */
export function runnerPrincipal(manifest: Manifest, env?: SecurityEnv): RunnerPrincipal {
  if (manifest.kafkaSecurity.protocol === "PLAINTEXT") return { file: () => Promise.resolve(null) };
  let resolved: Promise<RunnerClientFile | null> | null = null;
  return {
    file(): Promise<RunnerClientFile | null> {
      resolved ??= resolveKafkaSecurity(manifest.kafkaSecurity, "runner", env)
        .then(runnerClientFile)
        .catch((error) => {
          resolved = null; // read again at the next call
          throw error;
        });
      return resolved;
    },
  };
}

/**
 * `docker` starting a manifest's runners as its runner principal (`kafka.security.runner`),
 * `docker` itself under PLAINTEXT. The principal is read at the first start of the session
 * ({@link RunnerPrincipal}); one that is missing is `ENV_KAFKA_CREDENTIAL_MISSING` before the
 * start, so the container stays created and the operation pending until the same command runs
 * again with it set.
 *
 * @example
 * ```ts
 * import { withRunnerPrincipal } from "./runner_client_file.ts";
 * // const docker = withRunnerPrincipal(await realDocker(), project.manifest);
 * ```
 */
export function withRunnerPrincipal(
  docker: DockerPort,
  manifest: Manifest,
  env?: SecurityEnv,
  principal: RunnerPrincipal = runnerPrincipal(manifest, env),
): DockerPort {
  if (manifest.kafkaSecurity.protocol === "PLAINTEXT") return docker;
  return {
    ...docker,
    async startContainer(id: string): Promise<void> {
      await withRunnerClientFile(docker, await principal.file()).startContainer(id);
    },
  };
}
