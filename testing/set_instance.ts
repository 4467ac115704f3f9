/**
 * A set's instance made by hand, as the create journey makes it (issue 31), for tests that set up a
 * set's degraded states: the spec of instance `i` copied from instance 0's container as the daemon reports it,
 * with the instance's own name, state volume and `sluice.instance` label, the same image, plan
 * mount, environment, network and execution options.
 *
 * @example
 * ```ts
 * import { instanceSpecLike } from "./set_instance.ts";
 * // const spec = instanceSpecLike((await docker.inspectContainer(appId))!, appId, 1);
 * ```
 * @module
 */
import type { ContainerInfo, ContainerSpec } from "../lib/providers/docker/port.ts";
import {
  instanceContainerName,
  instanceLabels,
  instanceVolumeName,
  RUNNER_EXECUTION,
  RUNNER_PATHS,
} from "../lib/runtime/labels.ts";

/** The container spec of instance `instance` of `applicationId`, like instance 0's `zero`. */
export function instanceSpecLike(
  zero: ContainerInfo,
  applicationId: string,
  instance: number,
): ContainerSpec {
  const plan = zero.mounts.find((m) => m.destination === RUNNER_PATHS.plan);
  if (!plan) throw new Error(`${zero.name} mounts no plan at ${RUNNER_PATHS.plan}`);
  return {
    name: instanceContainerName(applicationId, instance),
    image: zero.imageId,
    labels: { ...zero.labels, ...instanceLabels(instance) },
    env: zero.env,
    network: zero.networkMode,
    planHostPath: plan.source,
    planContainerPath: RUNNER_PATHS.plan,
    volume: instanceVolumeName(applicationId, instance),
    volumeContainerPath: RUNNER_PATHS.volume,
    memoryBytes: zero.memory,
    stopTimeoutSeconds: zero.stopTimeout ?? RUNNER_EXECUTION.stopTimeoutSeconds,
  };
}
