/**
 * The create journey's fresh re-verification before its intent, under the lock, so that a
 * foreseeable failure leaves no pending operation behind: no topic to create exists yet (sluice
 * never adopts one it did not create), and per runner to create the image and network exist and
 * nothing carries its identity yet — or, for a model declared again, only what its removal kept
 * (the kept volume instance, retained offsets). The planner made the same checks on its own
 * observation; this repeats them on a fresh one, with the codes the create table's intent row
 * declares.
 *
 * @example
 * ```ts
 * import { recheckBeforeIntent } from "./create_recheck.ts";
 * // await recheckBeforeIntent(ctx, plan); // throws the first blocker; writes nothing
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { DockerPort } from "../providers/docker/port.ts";
import type { Plan, RunnerResume, SetInstance } from "../plan/plan.ts";
import { type RunnerObservation, targetOfArtifact } from "../validation/observation.ts";
import type { RuntimeContext } from "./apply_context.ts";
import { artifactOf } from "./create_identities.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { LABEL } from "./labels.ts";
import { refusal } from "./create_next.ts";
import { missingImageOrNetwork } from "./create_reading.ts";
import { SYSTEM_CLOCK } from "./deps.ts";
import { dockerOf } from "./endpoint_ports.ts";
import { observeRunner } from "./observer.ts";

/**
 * Re-verify the fresh runtime for the plan's creates (see the module documentation); throws the
 * first problem, writes nothing.
 *
 * @example
 * ```ts
 * import { recheckBeforeIntent } from "./create_recheck.ts";
 * // await recheckBeforeIntent(ctx, plan);
 * ```
 */
export async function recheckBeforeIntent(ctx: RuntimeContext, plan: Plan): Promise<void> {
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  const topics = plan.actions.flatMap((a) => a.type === "create_topic" ? [a.topic] : []);
  if (topics.length > 0) {
    const seen = await ctx.kafka.describe(topics);
    const existing = topics.filter((t) => seen.topics.has(t));
    if (existing.length > 0) {
      throw new SluiceError(
        "BLOCKED_UNOWNED_TOPIC",
        `topic ${
          existing.join(", ")
        } appeared since the plan was made; sluice never adopts a topic it did not create`,
        { evidence: { topics: existing } },
      );
    }
  }
  for (const a of plan.actions) {
    if (a.type !== "create_runner") continue;
    const artifact = artifactOf(plan, a.model);
    if (a.instances) {
      await recheckSet(ctx, a.model, artifact, a.instances);
      continue;
    }
    const image = await ctx.docker.inspectImage(artifact.image);
    const missing = missingImageOrNetwork(
      artifact,
      image,
      image ? await ctx.docker.networkId(artifact.network) : null,
    );
    if (missing) throw refusal([missing]);
    const obs = await observeRunner({ ...ctx, clock }, targetOfArtifact(artifact));
    if (a.resume) {
      verifyResume(a.model, a.resume, obs);
      continue;
    }
    if (
      obs.containers.length > 0 || obs.volume.exists ||
      Object.keys(obs.kafka.committed).length > 0
    ) {
      throw new SluiceError(
        "BLOCKED_UNOWNED_RUNTIME",
        `application ID ${artifact.application_id} gained containers, a volume or offsets since the plan was made`,
        { evidence: { containers: obs.containers.map((c) => c.id), volume: obs.volume.exists } },
      );
    }
  }
}

/** What a set's recheck reads of one endpoint: its port, the image and network, the containers. */
interface EndpointReading {
  docker: DockerPort;
  missing: ReturnType<typeof missingImageOrNetwork>;
  others: Awaited<ReturnType<DockerPort["listContainers"]>>;
}

/** The image and network on `endpoint`, and the application's containers there. */
async function readEndpoint(
  ctx: RuntimeContext,
  artifact: RunnerArtifact,
  endpoint: string | null,
): Promise<EndpointReading> {
  const docker = await dockerOf(ctx, endpoint);
  const image = await docker.inspectImage(artifact.image);
  const missing = missingImageOrNetwork(
    artifact,
    image,
    image ? await docker.networkId(artifact.network) : null,
  );
  const others = missing
    ? []
    : await docker.listContainers(LABEL.applicationId, artifact.application_id);
  return { docker, missing, others };
}

/**
 * A set's instances, each on its placed endpoint: the image and network are there, no container
 * of the application is on any of them, and either (a new set) no instance's volume exists and
 * the group has no committed offsets, or (a removed set declared again) each instance's kept
 * volume is as its resume says, as a single runner's resume is checked.
 */
async function recheckSet(
  ctx: RuntimeContext,
  model: string,
  artifact: RunnerArtifact,
  placed: readonly SetInstance[],
): Promise<void> {
  const clock = ctx.clock ?? SYSTEM_CLOCK;
  // what an endpoint holds is read once, however many instances are placed there
  const read = new Map<string | null, EndpointReading>();
  for (const p of placed) {
    if (!read.has(p.endpoint)) read.set(p.endpoint, await readEndpoint(ctx, artifact, p.endpoint));
    const { docker, missing, others } = read.get(p.endpoint)!;
    if (missing) {
      throw refusal([{
        ...missing,
        message: `instance ${p.instance} on ${p.endpoint ?? "the one daemon"}: ${missing.message}`,
      }]);
    }
    const obs = await observeRunner(
      { ...ctx, docker, clock },
      { ...targetOfArtifact(artifact), instance: p.instance },
    );
    if (p.resume && others.length === 0) {
      verifyResume(`${model} instance ${p.instance}`, p.resume, obs);
      continue;
    }
    if (
      others.length > 0 || obs.volume.exists || Object.keys(obs.kafka.committed).length > 0
    ) {
      throw new SluiceError(
        "BLOCKED_UNOWNED_RUNTIME",
        `application ID ${artifact.application_id} gained containers, a volume or offsets since the plan was made (instance ${p.instance} on ${
          p.endpoint ?? "the one daemon"
        })`,
        {
          evidence: {
            instance: p.instance,
            endpoint: p.endpoint,
            containers: others.map((c) => c.id),
            volume: obs.volume.exists,
          },
        },
      );
    }
  }
}

/**
 * Before the intent of a model declared again: nothing carries its application ID but what its
 * removal kept — no container, no group member, the kept volume instance (or no volume when the
 * plan saw it deleted) — and the kept offsets are still retained by the input topic.
 */
function verifyResume(model: string, resume: RunnerResume, obs: RunnerObservation): void {
  const fail = (code: "BLOCKED_UNOWNED_RUNTIME" | "BLOCKED_RETAINED_MISMATCH", why: string) => {
    throw new SluiceError(
      code,
      `model ${model} (declared again after removal ${resume.removed_by}): ${why} since the plan was made; plan again`,
      { evidence: { resume, containers: obs.containers.map((c) => c.id) } },
    );
  };
  if (obs.containers.length > 0 || obs.kafka.group.members.length > 0) {
    fail("BLOCKED_UNOWNED_RUNTIME", "a container or a group member carries its application ID");
  }
  if (resume.volume_kept !== obs.volume.exists) {
    fail(
      "BLOCKED_RETAINED_MISMATCH",
      `its kept volume ${obs.volume.name} ${obs.volume.exists ? "appeared" : "was deleted"}`,
    );
  }
  if (obs.volume.exists && obs.volume.instanceLabel !== resume.volume_instance) {
    fail("BLOCKED_RETAINED_MISMATCH", `volume ${obs.volume.name} is another instance`);
  }
  const lost = obs.kafka.ranges.filter((r) => {
    const c = obs.kafka.committed[String(r.partition)];
    return c !== undefined && BigInt(c) < BigInt(r.earliest);
  });
  if (lost.length > 0) {
    throw new SluiceError(
      "BLOCKED_RETENTION_LOSS",
      `the offsets kept for model ${model} are no longer retained by ${obs.target.inputTopic} (${
        lost.map((r) =>
          `${r.partition}: committed ${
            obs.kafka.committed[String(r.partition)]
          } < earliest ${r.earliest}`
        )
          .join(", ")
      }); sluice never repositions them: delete the kept group by hand to start from initial_offsets (docs/runbook.md, section 8)`,
      { evidence: { committed: obs.kafka.committed, ranges: obs.kafka.ranges } },
    );
  }
}
