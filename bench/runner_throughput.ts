/**
 * Runner throughput: records per second through the fixed runner against a hand-written Kafka
 * Streams filter with the same predicate (bench/baseline), on the same broker, both in
 * containers with the same base image, JVM flags (C1 only, as the runner image) and memory
 * limit (768 MiB, so the same heap). A third variant runs the runner image with C2 enabled
 * (entrypoint without `-XX:TieredStopAtLevel=1`) to show what the start-up flag costs;
 * `--compare-image` adds another runner image (e.g. one built from an earlier commit), so a
 * change of the runner is measured before/after within one run.
 *
 *   deno run -A bench/runner_throughput.ts [--records=500000] [--reps=5] [--c2=true]
 *                                          [--compare-image=sha256:…]
 *
 * N records (`{"order_id","amount","paid","note"}`, ~75% paid, amounts 0–999) are produced
 * once to a 3-partition topic. Each sample is a fresh consumer group positioned at offset 0;
 * the committed offsets of the group are polled every 100 ms: the rate is the records consumed
 * between the first commit and the commit of the last record, over that time (JVM start and the
 * group join are left out). The container's CPU time over the same window (its cgroup) gives
 * records per CPU-second, which the machine's load disturbs far less than the wall-clock rate.
 * Predicate: `amount >= 100 AND paid = TRUE`; projection `order_id, amount`. Variants alternate
 * within each repetition.
 * @module
 */
import Docker from "dockerode";
import { Producer, stringSerializers } from "@platformatic/kafka";
import { sharedEnv } from "../harness/env.ts";
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
import { containerCpuMs, createRunner } from "./_runner.ts";

const f = flags(Deno.args);
const N = Number(f.get("records", "500000"));
const reps = Number(f.get("reps", "5"));
const withC2 = f.get("c2", "true") === "true";
/** Another runner image (e.g. built from an earlier commit): a before/after pair in one run. */
const compareImage = f.get("compare-image", "");
const PARTITIONS = 3;

const envInfo = await environment();
const env = await sharedEnv();
const runnerImage = await buildRunnerImage();
const baseImage = await baselineImage();
const d = new Docker();
const kafka = platformaticKafka(env.bootstrapHost);
const runnerInfo = await d.getImage(runnerImage).inspect();
const runnerEnv = runnerInfo.Config?.Env ?? [];
const runnerEntrypoint = (runnerInfo.Config?.Entrypoint ?? []) as string[];
const compareEnv = compareImage ? (await d.getImage(compareImage).inspect()).Config?.Env ?? [] : [];
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

type Variant = "runner" | "baseline" | "runner-c2" | "runner-compare";
const variants: Variant[] = ["runner", "baseline"];
if (withC2) variants.push("runner-c2");
if (compareImage) variants.push("runner-compare");

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
    const image = variant === "runner-compare" ? compareImage : runnerImage;
    const plan = await writePlan(dir, appId, {
      applicationId: appId,
      inputTopic: input,
      outputTopic: outRunner,
      predicate: amountAtLeastAndPaid(100),
      image,
      network: env.network,
      bootstrap: env.bootstrapInternal,
      clusterId: env.clusterId,
      inputTopicId: ids.input,
      outputTopicId: ids.runner,
    });
    id = await createRunner(d, {
      name: appId,
      image,
      imageEnv: variant === "runner-compare" ? compareEnv : runnerEnv,
      network: env.network,
      planPath: plan.path,
      planSha256: plan.sha256,
      generation: `tp-${rep}`,
      volume,
      labels,
      // C2: the same image with an entrypoint without -XX:TieredStopAtLevel=1
      ...(variant === "runner-c2"
        ? { entrypoint: runnerEntrypoint.filter((a) => a !== "-XX:TieredStopAtLevel=1") }
        : {}),
    });
  }
  try {
    const tStart = Date.now();
    await d.getContainer(id).start();
    let tFirst: number | null = null;
    let atFirst = 0;
    let tDone: number | null = null;
    let cpuFirst: number | null = null;
    let cpuDone: number | null = null;
    const deadline = Date.now() + 600_000;
    while (Date.now() < deadline) {
      const t = Date.now();
      const s = await committedSum(appId).catch(() => 0);
      if (s > 0 && tFirst === null) {
        tFirst = t;
        atFirst = s;
        cpuFirst = await containerCpuMs(id);
      }
      if (s >= N) {
        tDone = t;
        cpuDone = await containerCpuMs(id);
        break;
      }
      const st = await d.getContainer(id).inspect();
      if (!st.State.Running) throw new Error(`${variant} exited with ${st.State.ExitCode}`);
      await sleep(100);
    }
    if (tFirst === null || tDone === null) throw new Error(`${variant} did not finish`);
    const rate = (N - atFirst) / ((tDone - tFirst) / 1000);
    const cpuMs = cpuFirst !== null && cpuDone !== null ? cpuDone - cpuFirst : null;
    const r = {
      variant,
      rep,
      records: N,
      start_to_first_commit_ms: tFirst - tStart,
      first_to_last_commit_ms: tDone - tFirst,
      records_in_window: N - atFirst,
      records_per_s: rate,
      cpu_ms_in_window: cpuMs,
      records_per_cpu_s: cpuMs ? (N - atFirst) / (cpuMs / 1000) : null,
      loadavg1: loadavg1(),
    };
    console.log(
      `${variant} #${rep}: ${num(rate, 0)} records/s, ${
        num(r.records_per_cpu_s, 0)
      } records per CPU-second; load ${r.loadavg1}`,
    );
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

type Metric = "records_per_s" | "records_per_cpu_s";
const stats = (metric: Metric) =>
  Object.fromEntries(variants.map((v) => {
    const rs = samples.filter((s) => s.variant === v).map((s) => s[metric]);
    return [v, { median: median(rs), min: min(rs), max: max(rs), samples: rs }];
  }));
const paired = (metric: Metric) =>
  Array.from({ length: reps }, (_, rep) => {
    const a = samples.find((s) => s.variant === "runner" && s.rep === rep)?.[metric];
    const b = samples.find((s) => s.variant === "baseline" && s.rep === rep)?.[metric];
    return a && b ? a / b : null;
  });
const byVariant = stats("records_per_s");
const byVariantCpu = stats("records_per_cpu_s");
const runnerOverBaseline = (byVariant.runner.median ?? NaN) / (byVariant.baseline.median ?? NaN);
const perRep = paired("records_per_s");
const perRepCpu = paired("records_per_cpu_s");
const label = (v: Variant) =>
  v === "runner"
    ? "sluice runner (C1, as shipped)"
    : v === "baseline"
    ? "hand-written Streams + Jackson (C1)"
    : v === "runner-c2"
    ? "sluice runner with C2"
    : `runner image ${compareImage.slice(7, 19)} (--compare-image)`;
for (
  const [metric, by] of [["records/s", byVariant], [
    "records per CPU-second",
    byVariantCpu,
  ]] as const
) {
  console.log(
    `\nThroughput, ${N} records, ${PARTITIONS} partitions, EOS v2, 1 stream thread (${metric})\n` +
      table(
        ["variant", "median", "min", "max", "vs baseline"],
        variants.map((v) => [
          label(v),
          num(by[v].median, 0),
          num(by[v].min, 0),
          num(by[v].max, 0),
          num((by[v].median ?? NaN) / (by.baseline.median ?? NaN)),
        ]),
      ),
  );
}
console.log(
  `runner/baseline per repetition (same rep, adjacent in time), records/s: ${
    perRep.map((x) => num(x)).join(", ")
  }; median ${num(median(perRep))}`,
);
console.log(
  `runner/baseline per repetition, records per CPU-second: ${
    perRepCpu.map((x) => num(x)).join(", ")
  }; median ${num(median(perRepCpu))}; expected output ${passing} records; load ${
    samples.map((x) => x.loadavg1).join(", ")
  }`,
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
  medians_per_cpu_s: byVariantCpu,
  ratios: {
    runner_over_baseline: runnerOverBaseline,
    per_rep: perRep,
    per_rep_median: median(perRep),
    per_rep_cpu: perRepCpu,
    per_rep_cpu_median: median(perRepCpu),
  },
});
console.log(`wrote ${path}`);
