/**
 * Two Docker daemons on this machine and one Kafka broker that containers of both reach at the
 * same bootstrap address, each daemon holding a user-defined network of the same name: the
 * ground a job of N instances spread over two daemons stands on, since one runner artifact
 * carries one `network` and one `bootstrap_internal` for every instance wherever it is placed.
 *
 * The arrangement: the broker runs on a private daemon ({@link startPrivateDocker}) in its
 * environment ({@link startPrivateEnv}), which publishes it on its network's gateway address
 * (`10.<block>.1.1:<port>`) and advertises that address on its listener for everyone. The
 * gateway of a bridge is an address of the host, so a container of either daemon reaches it
 * through its own default route into the host (the host's INPUT path, answered by the private
 * daemon's userland proxy): no firewall rule of either daemon is involved, and nothing
 * resolves a name of the other daemon. The machine's daemon then gets a network of the same
 * name (its own subnet from its own pool), labelled with the environment's run.
 *
 * Measured (dockerd 20.10): a `TopicCommand` in a container on the machine daemon's network
 * (172.x) and one on the private daemon's (10.x.1.x) both reached the broker at
 * `10.x.1.1:<port>` and saw the same cluster and topic IDs. Any bridge reaches that address
 * (both daemons' default `bridge` networks did too): the network of the shared name is what the
 * runner artifact names, not what makes the broker reachable. The broker's alias `kafka:9092`
 * reaches it from neither side (the machine's daemon cannot resolve it; on the private daemon,
 * bridged traffic between containers meets the host's FORWARD policy). The mirror arrangement,
 * the broker on the machine's daemon published on its network's gateway, also worked, but the
 * private side's connections then depend on the machine daemon's DNAT and FORWARD rules, and it
 * needs a broker start of its own; this one reuses the private environment the disruption
 * probes run.
 *
 * @example
 * ```ts ignore
 * // needs root, the machine's dockerd and the locally built broker image
 * import { startTwoDaemons, stopTwoDaemons } from "./two_daemons.ts";
 * const two = await startTwoDaemons();
 * try {
 *   console.log(two.hosts.machine, two.hosts.private, two.network, two.bootstrapInternal);
 * } finally {
 *   await stopTwoDaemons(two);
 * }
 * ```
 * @module
 */
import { docker, removeLabelled } from "./docker.ts";
import {
  loadImages,
  type PrivateDocker,
  startPrivateDocker,
  startPrivateEnv,
  stopPrivateDocker,
} from "./dockerd.ts";
import { defaultPgUrl, type EnvDescriptor, RUN_LABEL } from "./env.ts";
import { KAFKA_IMAGE } from "./images.ts";

/** The machine's own daemon (`scripts/bootstrap.sh` starts it). */
export const MACHINE_DOCKER_HOST = "unix:///var/run/docker.sock";

/**
 * Two daemons and their shared broker, as plain data (JSON-serialisable, for another process).
 * As an {@link EnvDescriptor}: `network` is the name of the network on both daemons,
 * `bootstrapInternal` the broker's address for containers on either of them, `bootstrapHost`
 * its address for the host (the same address), `labels` the run label to put on what is created
 * inside it (on the machine's daemon, what carries it is removed by {@link stopTwoDaemons}).
 */
export interface TwoDaemons extends EnvDescriptor {
  /** `DOCKER_HOST` of each daemon: the machine's and the private one's. */
  hosts: { machine: string; private: string };
  /** The private daemon (the broker runs on it). */
  daemon: PrivateDocker;
}

/** Options for {@link startTwoDaemons}. */
export interface StartTwoDaemonsOptions {
  /** Local images to copy into the private daemon beside the broker's (e.g. a runner image). */
  images?: string[];
  /** PostgreSQL URL passed through (default {@link defaultPgUrl}). */
  pgUrl?: string;
}

/**
 * The harness's Docker client (`removeLabelled`, `docker()`) must be the machine's daemon, since
 * it creates and removes the machine side.
 */
function refuseOtherDockerHost(): void {
  const host = Deno.env.get("DOCKER_HOST");
  if (host && host !== MACHINE_DOCKER_HOST) {
    throw new Error(
      `startTwoDaemons: DOCKER_HOST=${host}; the machine's daemon is ${MACHINE_DOCKER_HOST}`,
    );
  }
}

/**
 * Start a private daemon with the broker on it and give the machine's daemon a network of the
 * same name. The caller must {@link stopTwoDaemons} the result, also when this throws nothing
 * is left behind.
 */
export async function startTwoDaemons(options: StartTwoDaemonsOptions = {}): Promise<TwoDaemons> {
  refuseOtherDockerHost();
  const d = await startPrivateDocker();
  let runId: string | null = null;
  try {
    await loadImages(d, [...new Set([KAFKA_IMAGE, ...(options.images ?? [])])]);
    const { teardown: _t, [Symbol.asyncDispose]: _d, ...env } = await startPrivateEnv(
      d,
      options.pgUrl ?? defaultPgUrl(),
    );
    runId = env.runId;
    await docker().createNetwork({ Name: env.network, Driver: "bridge", Labels: env.labels });
    return { ...env, hosts: { machine: MACHINE_DOCKER_HOST, private: d.host }, daemon: d };
  } catch (error) {
    if (runId) await removeLabelled(RUN_LABEL, runId).catch(() => {});
    await stopPrivateDocker(d).catch(() => {});
    throw error;
  }
}

/**
 * Remove what {@link startTwoDaemons} created: on the machine's daemon every container, volume
 * and network labelled with the run (the network and what the caller labelled), then the private
 * daemon with everything on it (its containers, networks, bridge, mounts, directory). Nothing
 * else is touched. Both halves run even when the first fails; idempotent.
 */
export async function stopTwoDaemons(two: TwoDaemons): Promise<void> {
  refuseOtherDockerHost();
  const errors: unknown[] = [];
  await removeLabelled(RUN_LABEL, two.runId).catch((e) => errors.push(e));
  await stopPrivateDocker(two.daemon).catch((e) => errors.push(e));
  if (errors.length) throw new AggregateError(errors, "stopTwoDaemons: tear-down incomplete");
}
