/**
 * Runner throughput: records per second through the fixed runner against a hand-written Kafka
 * Streams filter with the same predicate (bench/baseline), on the same broker, both in
 * containers with the same base image, JVM flags (C1 only, as the runner image) and memory
 * limit (768 MiB, so the same heap). A third variant runs the runner image with C2 enabled
 * (entrypoint without `-XX:TieredStopAtLevel=1`) to show what the start-up flag costs.
 *
 *   deno run -A bench/runner_throughput.ts [--records=200000] [--reps=5] [--c2=true]
 *
 * N records (`{"order_id","amount","paid","note"}`, ~75% paid, amounts 0–999) are produced
 * once to a 3-partition topic. Each sample is a fresh consumer group positioned at offset 0;
 * the committed offsets of the group are polled every 100 ms: the rate is the records consumed
 * between the first commit and the commit of the last record, over that time (JVM start and the
 * group join are left out). Predicate: `amount >= 100 AND paid = TRUE`; projection
 * `order_id, amount`. Variants alternate within each repetition.
 * @module
 */
import Docker from "dockerode";
import { Producer, stringSerializers } from "@platformatic/kafka";
import { sharedEnv } from "../harness/env.ts";
import { dockerodePort } from "../lib/providers/docker/dockerode.ts";
import { platformaticKafka } from "../lib/providers/kafka/platformatic.ts";
import { RUNNER_EXECUTION } from "../lib/runtime/labels.ts";
import { amountAtLeastAndPaid, buildRunnerImage, writePlan } from "../tests/runner_fixture.ts";
import { baselineImage } from "./_baseline.ts";
import {
  environment,
  flags,
  loadavg1,
  max,
  median,
  min,
  num,
  sleep,
  table,
  writeResult,
} from "./_common.ts";
import { createRunner } from "./_runner.ts";

const f = flags(Deno.args);
const N = Number(f.get("records", "200000"));
const reps = Number(f.get("reps", "5"));
const withC2 = f.get("c2", "true") === "true";
const PARTITIONS = 3;

const envInfo = await environment();
const env = await sharedEnv();
const runnerImage = await buildRunnerImage();
const baseImage = await baselineImage();
const d = new Docker();
const port = dockerodePort(d);
const kafka = platformaticKafka(env.bootstrapHost);
const runnerInfo = await d.getImage(runnerImage).inspect();
const runnerEnv = runnerInfo.Config?.Env ?? [];
const runnerEntrypoint = (runnerInfo.Config?.Entrypoint ?? []) as string[];
const tag = crypto.randomUUID().slice(0, 6);
const labels = { ...env.labels, "sluice.bench": `runner_throughput-${tag}` };
const input = `bench_tp_in_${tag}`;
const outRunner = `bench_tp_out_runner_${tag}`;
const outBaseline = `bench_tp_out_baseline_${tag}`;
const ids = {
  input: await kafka.createTopic(input, PARTITIONS),
  runner: await kafka.createTopic(outRunner, PARTITIONS),
  baseline: await kafka.createTopic(outBaseline, PARTITIONS),
};
const dir = await Deno.makeTempDir({ prefix: "sluice-bench-tp-" });

// ---- produce the input once
let passing = 0;
{
  const producer = new Producer({
    clientId: "sluice-bench-tp",
    bootstrapBrokers: [env.bootstrapHost],
    serializers: stringSerializers,
  });
  const t0 = Date.now();
  const BATCH = 2000;
  for (let i = 0; i < N; i += BATCH) {
    const messages = [];
    for (let j = i; j < Math.min(N, i + BATCH); j++) {
      const amount = (j * 7919) % 1000;
      const paid = j % 4 !== 3;
      if (amount >= 100 && paid) passing++;
      messages.push({
        topic: input,
        key: `o-${j}`,
        value: JSON.stringify({
          order_id: `o-${j}`,
          amount,
          paid,
          note: j % 5 === 0 ? null : `note ${j % 97}`,
        }),
      });
    }
    await producer.send({ messages });
  }
  await producer.close();
  console.log(`produced ${N} records in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

const committedSum = async (group: string) =>
  [...(await kafka.committedOffsets(group, input)).values()].reduce((a, b) => a + Number(b), 0);

type Variant = "runner" | "baseline" | "runner-c2";
const variants: Variant[] = withC2 ? ["runner", "baseline", "runner-c2"] : ["runner", "baseline"];

async function sample(variant: Variant, rep: number) {
  const appId = `sluice-bench-tp-${tag}-${variant}-${rep}`;
  await kafka.setGroupOffsets(appId, input, new Map([[0, 0n], [1, 0n], [2, 0n]]));
  let id: string;
  const volume = `${appId}-state`;
  if (variant === "baseline") {
    const c = await d.createContainer({
      name: appId,
      Image: baseImage,
      Labels: labels,
      Env: [
        `BOOTSTRAP=${env.bootstrapInternal}`,
        `APPLICATION_ID=${appId}`,
        `INPUT=${input}`,
        `OUTPUT=${outBaseline}`,
        "THRESHOLD=100",
      ],
      StopTimeout: RUNNER_EXECUTION.stopTimeoutSeconds,
      HostConfig: {
        NetworkMode: env.network,
        RestartPolicy: { Name: "no" },
        Memory: RUNNER_EXECUTION.memoryBytes,
      },
    });
    id = c.id;
  } else {
    await d.createVolume({ Name: volume, Labels: labels });
    const plan = await writePlan(dir, appId, {
      applicationId: appId,
      inputTopic: input,
      outputTopic: outRunner,
      predicate: amountAtLeastAndPaid(100),
      image: runnerImage,
      network: env.network,
      bootstrap: env.bootstrapInternal,
      clusterId: env.clusterId,
      inputTopicId: ids.input,
      outputTopicId: ids.runner,
    });
    id = await createRunner(d, {
      name: appId,
      image: runnerImage,
      imageEnv: runnerEnv,
      network: env.network,
      planPath: plan.path,
      planSha256: plan.sha256,
      generation: `tp-${rep}`,
      volume,
      labels,
    });
    if (variant === "runner-c2") {
      // same container, entrypoint without -XX:TieredStopAtLevel=1: recreate with the override
      await d.getContainer(id).remove({ force: true });
      const info = await port.inspectImage(runnerImage);
      const c = await d.createContainer({
        name: appId,
        Image: runnerImage,
        Labels: labels,
        Env: [
          ...(info?.env ?? []),
          `SLUICE_PLAN_SHA256=${plan.sha256}`,
          `SLUICE_GENERATION=tp-${rep}`,
        ],
        Entrypoint: runnerEntrypoint.filter((a) => a !== "-XX:TieredStopAtLevel=1"),
        StopTimeout: RUNNER_EXECUTION.stopTimeoutSeconds,
        HostConfig: {
          Binds: [`${plan.path}:/etc/sluice/plan.json:ro`, `${volume}:/var/lib/sluice`],
          NetworkMode: env.network,
          RestartPolicy: { Name: "no" },
          Memory: RUNNER_EXECUTION.memoryBytes,
        },
      });
      id = c.id;
    }
  }
  try {
    const tStart = Date.now();
    await d.getContainer(id).start();
    let tFirst: number | null = null;
    let atFirst = 0;
    let tDone: number | null = null;
    const deadline = Date.now() + 600_000;
    while (Date.now() < deadline) {
      const t = Date.now();
      const s = await committedSum(appId).catch(() => 0);
      if (s > 0 && tFirst === null) {
        tFirst = t;
        atFirst = s;
      }
      if (s >= N) {
        tDone = t;
        break;
      }
      const st = await d.getContainer(id).inspect();
      if (!st.State.Running) throw new Error(`${variant} exited with ${st.State.ExitCode}`);
      await sleep(100);
    }
    if (tFirst === null || tDone === null) throw new Error(`${variant} did not finish`);
    const rate = (N - atFirst) / ((tDone - tFirst) / 1000);
    const r = {
      variant,
      rep,
      records: N,
      start_to_first_commit_ms: tFirst - tStart,
      first_to_last_commit_ms: tDone - tFirst,
      records_in_window: N - atFirst,
      records_per_s: rate,
      loadavg1: loadavg1(),
    };
    console.log(`${variant} #${rep}: ${num(rate, 0)} records/s`);
    return r;
  } finally {
    await d.getContainer(id).remove({ force: true }).catch(() => {});
    await d.getVolume(volume).remove({ force: true }).catch(() => {});
  }
}

const samples: Array<Awaited<ReturnType<typeof sample>>> = [];
try {
  for (let rep = 0; rep < reps; rep++) {
    const order = variants.map((_, i) => variants[(i + rep) % variants.length]);
    for (const v of order) samples.push(await sample(v, rep));
  }
} finally {
  await kafka.close();
  await Deno.remove(dir, { recursive: true });
}

const byVariant = Object.fromEntries(variants.map((v) => {
  const rs = samples.filter((s) => s.variant === v).map((s) => s.records_per_s);
  return [v, { median: median(rs), min: min(rs), max: max(rs), samples: rs }];
}));
const runnerOverBaseline = (byVariant.runner.median ?? NaN) / (byVariant.baseline.median ?? NaN);
const perRep = Array.from({ length: reps }, (_, rep) => {
  const a = samples.find((s) => s.variant === "runner" && s.rep === rep)?.records_per_s;
  const b = samples.find((s) => s.variant === "baseline" && s.rep === rep)?.records_per_s;
  return a && b ? a / b : null;
});
console.log(
  `\nThroughput, ${N} records, ${PARTITIONS} partitions, EOS v2, 1 stream thread (records/s)\n` +
    table(
      ["variant", "median", "min", "max", "vs baseline"],
      variants.map((v) => [
        v === "runner"
          ? "sluice runner (C1, as shipped)"
          : v === "baseline"
          ? "hand-written Streams + Jackson (C1)"
          : "sluice runner with C2",
        num(byVariant[v].median, 0),
        num(byVariant[v].min, 0),
        num(byVariant[v].max, 0),
        num((byVariant[v].median ?? NaN) / (byVariant.baseline.median ?? NaN)),
      ]),
    ),
);
console.log(
  `runner/baseline per repetition (same rep, adjacent in time): ${
    perRep.map((x) => num(x)).join(", ")
  }; median ${num(median(perRep))}; expected output ${passing} records`,
);
const path = await writeResult("runner_throughput", {
  name: "runner_throughput",
  environment: envInfo,
  parameters: {
    records: N,
    partitions: PARTITIONS,
    reps,
    variants,
    predicate: "amount >= 100 AND paid = TRUE",
    expected_output: passing,
    memory_bytes: RUNNER_EXECUTION.memoryBytes,
    runner_image: runnerImage,
    baseline_image: baseImage,
    commit_poll_ms: 100,
  },
  samples,
  medians: byVariant,
  ratios: {
    runner_over_baseline: runnerOverBaseline,
    per_rep: perRep,
    per_rep_median: median(perRep),
  },
});
console.log(`wrote ${path}`);
