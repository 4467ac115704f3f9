/**
 * Create a container on a named volume that must already exist. Docker's create never refuses a
 * missing named volume: it makes an empty, unlabelled one of that name (moby/moby#16072 asks for
 * a way out and is still open; `HostConfig.Mounts` volume options have `NoCopy`, `Labels`,
 * `DriverConfig` and `Subpath`, none of which refuses). A state volume removed between sluice's
 * last observation and its create would come back empty — a volume sluice never meant to create
 * ("It never creates a missing volume").
 *
 * {@link createOnExistingVolume} closes that gap around the create: the volume is inspected right
 * before it (absent, or not carrying the expected labels: refused, nothing created) and right
 * after it; a volume that is not the one seen before (another creation time, other labels) was
 * made in its place — by the create itself when it carries no label — and the create is undone
 * ({@link DockerPort.discardCreated}: the container, and the volume only while it is still empty
 * and unlabelled) before the refusal.
 *
 * @example
 * ```ts
 * import { createOnExistingVolume } from "./existing_volume.ts";
 * // const id = await createOnExistingVolume(docker, spec, { "sluice.volume-instance": uuid });
 * ```
 * @module
 */
import { SluiceError } from "../../errors.ts";
import type { ContainerSpec, DockerPort, VolumeDiscard, VolumeInfo } from "./port.ts";

/** Options of {@link createOnExistingVolume}. */
export interface ExistingVolumeOptions {
  /**
   * Called before the undo (a second mutation); throwing (a lost lock) leaves the container and
   * the volume as they are — the next observation then finds another volume instance.
   */
  beforeUndo?: () => Promise<void>;
}

/** The expected labels the volume does not carry with the expected value. */
function differing(v: VolumeInfo, labels: Record<string, string>): string[] {
  return Object.keys(labels).filter((k) => v.labels[k] !== labels[k]).sort();
}

const KEPT: Record<Exclude<VolumeDiscard, "removed" | "absent">, string> = {
  labelled: "it carries labels",
  replaced: "it was created again since",
  not_empty: "it holds files",
  in_use: "another container uses it",
};

/**
 * Create the (stopped) container of `spec` only on its existing volume `spec.volume`, which must
 * carry every label of `labels` with that value. Refused with `BLOCKED_VOLUME_MISSING` (absent)
 * or `BLOCKED_VOLUME_INSTANCE_CHANGED` (other labels) — before the create, nothing created; after
 * it (the volume vanished in between), with the container removed and the volume Docker's create
 * made removed too while it is empty and unlabelled. Returns the container's ID.
 *
 * @example
 * ```ts
 * import { createOnExistingVolume } from "./existing_volume.ts";
 * // const id = await createOnExistingVolume(docker, spec, labels, { beforeUndo: verifyLock });
 * ```
 */
export async function createOnExistingVolume(
  docker: DockerPort,
  spec: ContainerSpec,
  labels: Record<string, string>,
  options: ExistingVolumeOptions = {},
): Promise<string> {
  const name = spec.volume;
  const before = await docker.inspectVolume(name);
  if (!before) {
    throw new SluiceError(
      "BLOCKED_VOLUME_MISSING",
      `volume ${name} does not exist; ${spec.name} was not created (Docker's create would make an empty one)`,
      { evidence: { volume: name, container: spec.name, created: false } },
    );
  }
  const wrong = differing(before, labels);
  if (wrong.length > 0) {
    throw new SluiceError(
      "BLOCKED_VOLUME_INSTANCE_CHANGED",
      `volume ${name} is another instance (${wrong.join()} differ); ${spec.name} was not created`,
      {
        evidence: {
          volume: name,
          container: spec.name,
          created: false,
          expected: labels,
          observed: before.labels,
        },
      },
    );
  }
  const id = await docker.createContainer(spec);
  const after = await docker.inspectVolume(name);
  // the labels decide, not the creation time: Docker's local driver reports a volume's CreatedAt
  // from its directory's change time, which the create's first copy into an empty volume moves
  if (after && differing(after, labels).length === 0) return id;
  // the volume vanished between the check and the create: something else stands in its place
  await options.beforeUndo?.();
  const discard = await docker.discardCreated(id, { name, createdAt: after?.createdAt ?? "" });
  const labelled = after !== null && Object.keys(after.labels).length > 0;
  const fate = discard === "removed" || discard === "absent"
    ? "removed"
    : `kept (${KEPT[discard]})`;
  throw new SluiceError(
    labelled ? "BLOCKED_VOLUME_INSTANCE_CHANGED" : "BLOCKED_VOLUME_MISSING",
    labelled
      ? `volume ${name} was replaced by another, labelled volume during the create of ${spec.name}; the container was removed and that volume ${fate}`
      : `volume ${name} vanished during the create of ${spec.name} and Docker's create made an empty, unlabelled one in its place; the container was removed and that volume ${fate}`,
    {
      evidence: {
        volume: name,
        container: spec.name,
        container_id: id,
        container_removed: true,
        volume_discard: discard,
        expected: labels,
        observed: after?.labels ?? null,
      },
    },
  );
}
