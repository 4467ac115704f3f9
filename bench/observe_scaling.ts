/**
 * Observation cost against the model count: `observeRunners` over 1, 10 and 100 models on the
 * real daemon and broker, counting the round trips underneath — every HTTP request dockerode
 * sends to the daemon (by route; archive reads apart), every Kafka request (by API key,
 * through the client's diagnostics channel) — and the wall time.
 *
 *   deno run -A bench/observe_scaling.ts [--sizes=1,10,100] [--reps=3]
 *
 * Each model has what sluice deploys: a labelled state volume whose instance file was written
 * through its runner's mount, a created (never started) runner container mounting a plan and
 * the volume, and a consumer group with committed offsets on a shared 3-partition input topic;
 * its own output topic. A started JVM is not needed for the counts: a created container is
 * read the same way.
 *
 * For each size, in a fresh pair of clients: a cold observation (nothing cached), then warm
 * ones in the same clients — as the planner observes (no status file) and as `observe` does
 * (every status file). Target (issue 15): Kafka requests at 100 models ≤ 1.2 × at 1 model;
 * Docker requests at most a constant number per container, and no archive read when nothing
 * changed (the warm planner observation).
 * @module
 */
import Docker from "dockerode";
import { sharedEnv } from "../harness/env.ts";
import { withAdmin } from "../harness/kafka.ts";
import { buildRunnerImage } from "../tests/runner_fixture.ts";
import { dockerodePort } from "../lib/providers/docker/dockerode.ts";
import { platformaticKafka } from "../lib/providers/kafka/platformatic.ts";
import { type ObserveOptions, observeRunners } from "../lib/runtime/observer.ts";
import { LABEL, RUNNER_EXECUTION, RUNNER_PATHS, volumeName } from "../lib/runtime/labels.ts";
import type { RunnerTarget } from "../lib/validation/observation.ts";
import { sha256Hex } from "../lib/artifact/canonical.ts";
import { countingDocker, countingKafka, sum } from "./_count.ts";
import { environment, flags, loadavg1, median, num, table, writeResult } from "./_common.ts";

const f = flags(Deno.args);
const sizes = f.get("sizes", "1,10,100").split(",").filter((x) => x !== "").map(Number);
const reps = Number(f.get("reps", "3"));
const KAFKA_TARGET = 1.2;

const envInfo = await environment();
const env = await sharedEnv();
const image = await buildRunnerImage();
const d = new Docker();
const docker = dockerodePort(d);
const setupKafka = platformaticKafka(env.bootstrapHost);
const tag = crypto.randomUUID().slice(0, 6);
const biggest = Math.max(...sizes);
const input = `bench_obs_in_${tag}`;
const outputs = Array.from({ length: biggest }, (_, i) => `bench_obs_out_${tag}_${i}`);
const labels = { ...env.labels, "dev.sluice.bench": `observe_scaling-${tag}` };
const planDir = await Deno.makeTempDir({ prefix: "sluice-bench-obs-" });
const planPath = `${planDir}/plan.json`;
const PLAN_BYTES = new TextEncoder().encode("{}\n");
const targets: RunnerTarget[] = Array.from({ length: biggest }, (_, i) => ({
  applicationId: `sluice-benchobs${tag}-m${i}`,
  inputTopic: input,
  outputTopic: outputs[i],
  image,
  network: env.network,
}));

interface Sample {
  ms: number;
  docker: number;
  archive: number;
  kafka: number;
  dockerByRoute: Record<string, number>;
  kafkaByApi: Record<string, number>;
}

/** One observation of the first `n` targets through the given clients, counted. */
async function measure(
  ports: Parameters<typeof observeRunners>[0],
  dc: ReturnType<typeof countingDocker>,
  kc: ReturnType<typeof countingKafka>,
  n: number,
  options: ObserveOptions,
): Promise<Sample> {
  dc.reset();
  kc.reset();
  const t0 = performance.now();
  const obs = await observeRunners(ports, targets.slice(0, n), options);
  const ms = performance.now() - t0;
  if (
    obs.runners.length !== n ||
    obs.runners.some((r) => r.containers.length !== 1 || r.volume.instanceFile === null)
  ) {
    throw new Error("the observation did not see one container and its volume per model");
  }
  return {
    ms,
    docker: sum(dc.counts),
    archive: dc.counts.get("GET /containers/{id}/archive") ?? 0,
    kafka: sum(kc.counts),
    dockerByRoute: Object.fromEntries(dc.counts),
    kafkaByApi: Object.fromEntries(kc.counts),
  };
}

const rows: Array<Record<string, unknown>> = [];
try {
  // ---- setup (not measured)
  await Deno.writeFile(planPath, PLAN_BYTES);
  await Deno.chmod(planPath, 0o644);
  await withAdmin(env.bootstrapHost, async (admin) => {
    await admin.createTopics({ topics: [input], partitions: 3, replicas: 1 });
    for (let i = 0; i < outputs.length; i += 50) {
      await admin.createTopics({ topics: outputs.slice(i, i + 50), partitions: 1, replicas: 1 });
    }
  });
  const imageEnv = (await docker.inspectImage(image))?.env ?? [];
  for (let i = 0; i < targets.length; i += 8) {
    await Promise.all(
      targets.slice(i, i + 8).map(async (t) => {
        const instance = crypto.randomUUID();
        const volume = volumeName(t.applicationId);
        // labelled with its plan's sha256, as sluice labels a runner
        const own = {
          ...labels,
          [LABEL.applicationId]: t.applicationId,
          [LABEL.planSha256]: sha256Hex(PLAN_BYTES),
        };
        await docker.createVolume(volume, { ...own, [LABEL.volumeInstance]: instance });
        const id = await docker.createContainer({
          name: t.applicationId,
          image,
          labels: own,
          env: imageEnv,
          network: env.network,
          planHostPath: planPath,
          planContainerPath: RUNNER_PATHS.plan,
          volume,
          volumeContainerPath: RUNNER_PATHS.volume,
          memoryBytes: RUNNER_EXECUTION.memoryBytes,
          stopTimeoutSeconds: RUNNER_EXECUTION.stopTimeoutSeconds,
        });
        await docker.writeContainerFile(
          id,
          RUNNER_PATHS.instanceFile,
          new TextEncoder().encode(instance + "\n"),
        );
        await setupKafka.setGroupOffsets(
          t.applicationId,
          input,
          new Map([[0, 0n], [1, 0n], [2, 0n]]),
        );
      }),
    );
  }

  // ---- measure
  const kc = countingKafka();
  try {
    for (const n of sizes) {
      const cold: Sample[] = [];
      const warmPlan: Sample[] = [];
      const warmObserve: Sample[] = [];
      for (let r = 0; r < reps; r++) {
        const dc = countingDocker();
        const kafka = platformaticKafka(env.bootstrapHost);
        const ports = { docker: dockerodePort(dc.client), kafka };
        // the Kafka connections (ApiVersions, first Metadata) are opened outside the count
        await kafka.describe([]);
        cold.push(await measure(ports, dc, kc, n, { status: () => false }));
        warmPlan.push(await measure(ports, dc, kc, n, { status: () => false }));
        warmObserve.push(await measure(ports, dc, kc, n, {}));
        await kafka.close();
      }
      const m = (xs: Sample[], k: keyof Sample) => median(xs.map((x) => x[k] as number)) ?? NaN;
      const row = {
        models: n,
        cold: {
          ms: m(cold, "ms"),
          docker: m(cold, "docker"),
          archive: m(cold, "archive"),
          kafka: m(cold, "kafka"),
        },
        warm_plan: {
          ms: m(warmPlan, "ms"),
          docker: m(warmPlan, "docker"),
          archive: m(warmPlan, "archive"),
          kafka: m(warmPlan, "kafka"),
        },
        warm_observe: {
          ms: m(warmObserve, "ms"),
          docker: m(warmObserve, "docker"),
          archive: m(warmObserve, "archive"),
          kafka: m(warmObserve, "kafka"),
        },
        samples: { cold, warm_plan: warmPlan, warm_observe: warmObserve },
        loadavg1: loadavg1(),
      };
      rows.push(row);
      console.log(
        `${n} models: cold ${
          num(row.cold.ms, 0)
        } ms (${row.cold.docker} Docker, ${row.cold.kafka} Kafka); warm ${
          num(row.warm_plan.ms, 0)
        } ms (${row.warm_plan.docker} Docker, ${row.warm_plan.archive} archive reads); load ${row.loadavg1}`,
      );
    }
  } finally {
    kc.stop();
  }
} finally {
  await setupKafka.close();
  const all = await d.listContainers({
    all: true,
    filters: JSON.stringify({ label: [`dev.sluice.bench=observe_scaling-${tag}`] }),
  });
  for (const c of all) await d.getContainer(c.Id).remove({ force: true }).catch(() => {});
  for (const t of targets) {
    await d.getVolume(volumeName(t.applicationId)).remove({ force: true }).catch(() => {});
  }
  await withAdmin(env.bootstrapHost, (a) => a.deleteTopics({ topics: [input, ...outputs] }))
    .catch(() => {});
  await Deno.remove(planDir, { recursive: true });
}

type Row = {
  models: number;
  cold: { ms: number; docker: number; archive: number; kafka: number };
  warm_plan: { ms: number; docker: number; archive: number; kafka: number };
  warm_observe: { ms: number; docker: number; archive: number; kafka: number };
  samples: { cold: Sample[] };
};
const typed = rows as unknown as Row[];
console.log(
  `\nObservation cost (observeRunners; median of ${reps}; cold: fresh clients, nothing cached; ` +
    "warm: the same clients again, as the planner (no status file) and as observe (every one))\n" +
    table(
      [
        "models",
        "cold ms",
        "Docker HTTP",
        "archive reads",
        "Kafka requests",
        "warm ms",
        "Docker HTTP",
        "archive reads",
        "warm observe: Docker / archive",
      ],
      typed.map((r) => [
        String(r.models),
        num(r.cold.ms, 0),
        String(r.cold.docker),
        String(r.cold.archive),
        String(r.cold.kafka),
        num(r.warm_plan.ms, 0),
        String(r.warm_plan.docker),
        String(r.warm_plan.archive),
        `${r.warm_observe.docker} / ${r.warm_observe.archive}`,
      ]),
    ),
);
const last = typed[typed.length - 1];
const first = typed[0];
console.log(
  `Kafka requests by API at ${last.models} models (cold): ${
    Object.entries(last.samples.cold[0].kafkaByApi).map(([k, v]) => `${k} ${v}`).join(", ")
  }`,
);
console.log(
  `Docker requests by route at ${last.models} models (cold): ${
    Object.entries(last.samples.cold[0].dockerByRoute).map(([k, v]) => `${k} ${v}`).join(", ")
  }`,
);
const kafkaRatio = last.cold.kafka / first.cold.kafka;
const perContainer = (last.cold.docker - first.cold.docker) / (last.models - first.models);
const targets_ = {
  kafka_ratio: {
    from_models: first.models,
    to_models: last.models,
    value: kafkaRatio,
    target: KAFKA_TARGET,
    met: kafkaRatio <= KAFKA_TARGET,
  },
  docker_per_added_model_cold: perContainer,
  docker_per_added_model_warm_plan: (last.warm_plan.docker - first.warm_plan.docker) /
    (last.models - first.models),
  warm_plan_archive_reads: last.warm_plan.archive,
};
console.log(
  `target: Kafka requests ${last.models} models / ${first.models} model = ${
    num(kafkaRatio)
  } (≤ ${KAFKA_TARGET}: ${
    targets_.kafka_ratio.met ? "met" : "MISSED"
  }); Docker requests per added model: cold ${num(perContainer, 1)}, warm ${
    num(targets_.docker_per_added_model_warm_plan, 1)
  }; archive reads of a warm planner observation at ${last.models} models: ${last.warm_plan.archive}`,
);
const path = await writeResult("observe_scaling", {
  name: "observe_scaling",
  environment: envInfo,
  parameters: { sizes, reps },
  rows,
  targets: targets_,
});
console.log(`wrote ${path}`);
