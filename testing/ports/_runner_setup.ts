/**
 * Private helper of the contracts: a runner deployment made the way sluice makes one — input
 * and output topics, a valid mounted plan written to a host file, the group positioned before
 * the first start, a volume with its instance file, and the container spec with sluice's
 * labels, environment and fixed execution options. Variations (a wrong plan checksum, no
 * offsets, a replaced topic, an unreachable broker) are options.
 * @module
 */
import { validateArtifact } from "../../lib/artifact/artifact.ts";
import type { RunnerArtifact } from "../../lib/artifact/artifact.ts";
import type { ContainerSpec } from "../../lib/providers/docker/port.ts";
import {
  LABEL,
  RUNNER_ENV,
  RUNNER_EXECUTION,
  RUNNER_PATHS,
  volumeName,
} from "../../lib/runtime/labels.ts";
import { buildMountedPlan, mountedPlanBytes } from "../../lib/protocol/mounted_plan.ts";
import type { PortSubject } from "./subject.ts";

/** A prepared runner deployment (nothing started). */
export interface RunnerSetup {
  applicationId: string;
  inputTopic: string;
  outputTopic: string;
  inputTopicId: string;
  outputTopicId: string;
  clusterId: string;
  volume: string;
  instance: string;
  generation: string;
  planPath: string;
  planSha256: string;
  spec: ContainerSpec;
}

/** How to vary the deployment. */
export interface RunnerOptions {
  partitions?: number;
  /** Leave the group without committed offsets (the runner then exits 14). */
  skipOffsets?: boolean;
  /** The plan's bootstrap address (default: the subject's internal one). */
  bootstrap?: string;
  /** Put this input topic ID in the plan instead of the real one (exit 12). */
  inputTopicId?: string;
  /** Set SLUICE_PLAN_SHA256 to this instead of the plan's checksum (exit 11). */
  planSha256Env?: string;
}

function artifactFor(s: PortSubject, appId: string, input: string, output: string) {
  const artifact: RunnerArtifact = {
    format: "sluice.runner-artifact",
    version: 1,
    project: "contract",
    environment: null,
    model: "eligible_orders",
    application_id: appId,
    input: { topic: input },
    output: { topic: output },
    schema: [
      { name: "order_id", type: "STRING", nullable: false },
      { name: "amount", type: "BIGINT", nullable: false },
    ],
    projection: [{ source: "order_id", name: "order_id" }, { source: "amount", name: "amount" }],
    predicate: {
      kind: "compare",
      op: ">=",
      left: { kind: "column", name: "amount", type: "BIGINT" },
      right: { kind: "literal", type: "BIGINT", value: "100" },
    },
    image: s.runnerImage,
    network: s.network,
    initial_offsets: "earliest",
    ownership: { managed_by: "sluice", project: "contract", environment: null },
  };
  return validateArtifact(artifact);
}

/** Topics, positioned group, plan file, volume and container spec for a new runner. */
export async function prepareRunner(
  s: PortSubject,
  options: RunnerOptions = {},
): Promise<RunnerSetup> {
  const applicationId = s.unique("app");
  const inputTopic = s.unique("in");
  const outputTopic = s.unique("out");
  const partitions = options.partitions ?? 2;
  const inputTopicId = await s.kafka.createTopic(inputTopic, partitions);
  const outputTopicId = await s.kafka.createTopic(outputTopic, 1);
  const { clusterId } = await s.kafka.describe([]);
  if (!options.skipOffsets) {
    const ranges = await s.kafka.offsetRanges(inputTopic, [...Array(partitions).keys()]);
    await s.kafka.setGroupOffsets(
      applicationId,
      inputTopic,
      new Map(ranges.map((r) => [r.partition, r.earliest])),
    );
  }
  const artifact = artifactFor(s, applicationId, inputTopic, outputTopic);
  const plan = buildMountedPlan(artifact, options.bootstrap ?? s.bootstrapInternal, {
    cluster_id: clusterId,
    input_topic_id: options.inputTopicId ?? inputTopicId,
    output_topic_id: outputTopicId,
  });
  const { bytes, sha256 } = mountedPlanBytes(plan);
  const planPath = `${s.tempDir}/${sha256}.json`;
  await Deno.writeFile(planPath, bytes, { mode: 0o644 });
  const volume = volumeName(applicationId);
  const instance = crypto.randomUUID();
  const image = await s.docker.inspectImage(s.runnerImage);
  if (!image) throw new Error(`the subject's runner image ${s.runnerImage} is absent`);
  const labels = {
    ...s.labels,
    [LABEL.managedBy]: "sluice",
    [LABEL.applicationId]: applicationId,
  };
  await s.docker.createVolume(volume, { ...labels, [LABEL.volumeInstance]: instance });
  // sluice writes it through the first runner's own mount; here the outside world does
  await s.writeVolumeFile(volume, INSTANCE_REL, instance + "\n");
  const generation = `${crypto.randomUUID()}/0`;
  const spec: ContainerSpec = {
    name: s.unique("runner"),
    image: s.runnerImage,
    labels: { ...labels, [LABEL.planSha256]: sha256, [LABEL.generation]: generation },
    env: [
      ...image.env,
      `${RUNNER_ENV.planSha256}=${options.planSha256Env ?? sha256}`,
      `${RUNNER_ENV.generation}=${generation}`,
    ],
    network: s.network,
    planHostPath: planPath,
    planContainerPath: RUNNER_PATHS.plan,
    volume,
    volumeContainerPath: RUNNER_PATHS.volume,
    memoryBytes: RUNNER_EXECUTION.memoryBytes,
    stopTimeoutSeconds: RUNNER_EXECUTION.stopTimeoutSeconds,
  };
  return {
    applicationId,
    inputTopic,
    outputTopic,
    inputTopicId,
    outputTopicId,
    clusterId,
    volume,
    instance,
    generation,
    planPath,
    planSha256: sha256,
    spec,
  };
}

/** The instance file's path relative to the volume's root. */
export const INSTANCE_REL = RUNNER_PATHS.instanceFile.slice(RUNNER_PATHS.volume.length + 1);

/** The runner's status file through the port, parsed (null when absent). */
export async function statusOf(
  s: PortSubject,
  containerId: string,
): Promise<Record<string, unknown> | null> {
  const bytes = await s.docker.readContainerFile(containerId, RUNNER_PATHS.statusFile);
  return bytes === null ? null : JSON.parse(new TextDecoder().decode(bytes));
}
