/**
 * Runner throughput: records per second through the fixed runner against a hand-written Kafka
 * Streams filter with the same predicate (bench/baseline), on the same broker, both in
 * containers with the same base image, JVM flags (C1 only, as the runner image) and memory
 * limit (768 MiB, so the same heap). A third variant runs the runner image with C2 enabled
 * (entrypoint without `-XX:TieredStopAtLevel=1`) to show what the start-up flag costs;
 * `--compare-image` adds another runner image (e.g. one built from an earlier commit), so a
 * change of the runner is measured before/after within one run.
 *
 * The machine's limits (issue 32), alternating with those, in the same memory limit and with the
 * same JVM flags (`--limits=false` leaves them out):
 * - `read-limit`: Kafka's `kafka-consumer-perf-test` (ConsumerPerformance, run from the broker's
 *   image) reading the same N records of the same topic (read_committed and a commit every
 *   100 ms, as the runner reads);
 *   its window is the tool's own fetch window (group assignment → record N), the CPU time over
 *   it interpolated from the container's cgroup read every ~20 ms: at these rates a 100 ms
 *   commit poll sees only a few points.
 * - `write-limit`: Kafka's `kafka-producer-perf-test` (ProducerPerformance) writing N records with
 *   a transactional ID, a transaction every 100 ms (Streams' commit interval under EOS),
 *   unthrottled, values drawn from the runner's own output values (`{"order_id":…,"amount":…}`;
 *   the tool sends no key); its window runs from the first reading (every ~20 ms) of its output
 *   topic's end offsets above zero to the first at their final value.
 * - `eos-loop`: bench/baseline's `EosLoop`, a plain consumer and a transactional producer (no
 *   Streams) with the same filter and a commit every 100 ms: the least an exactly-once
 *   read-process-write must do.
 * The tools run under `sh -c '…; echo sluice-bench-exit $?; sleep'`, so their cgroup is still
 * there to read when they have finished. The runner's fraction of the read limit and of the EOS
 * loop compares input records; of the write limit, output records (the runner writes the passing
 * share of its input, so its output rate is its input rate × passing / N).
 *
 *   deno run -A bench/runner_throughput.ts [--records=500000] [--reps=5] [--c2=true]
 *                                          [--limits=true] [--compare-image=sha256:…]
 *                                          [--jfr=DIR]   (a recording of each runner rep)
 *                                          [--instances=2,3]   (runners of one application ID)
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
import { dockerCli } from "../harness/docker.ts";
import { sh } from "../harness/dockerd.ts";
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
import { containerCpuMs, containerLog, createRunner } from "./_runner.ts";
import { KAFKA_IMAGE } from "../harness/images.ts";

const f = flags(Deno.args);
const N = Number(f.get("records", "500000"));
const reps = Number(f.get("reps", "5"));
const withC2 = f.get("c2", "true") === "true";
const withLimits = f.get("limits", "true") === "true";
/** Another runner image (e.g. built from an earlier commit): a before/after pair in one run. */
const compareImage = f.get("compare-image", "");
const PARTITIONS = 3;
/**
 * A directory for JDK Flight Recorder recordings of the shipped runner (`settings=profile`), one
 * per repetition: the container is stopped after its window (the JVM writes the recording at
 * exit) and the file copied out of its volume.
 */
const jfrDir = f.get("jfr", "");
const JFR_FILE = "/var/lib/sluice/throughput.jfr";
/**
 * Instance counts besides 1 (issue 31): that many runner containers of one application ID on
 * this Docker daemon, each with its own state volume, sharing the input's partitions through the
 * group (at most one per partition); their records/s together, and per CPU-second of all of them.
 */
const instanceCounts = f.get("instances", "2,3").split(",").filter((x) => x !== "").map(Number)
  .filter((n) => Number.isInteger(n) && n > 1 && n <= PARTITIONS);

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
const labels = { ...env.labels, "dev.sluice.bench": `runner_throughput-${tag}` };
const input = `bench_tp_in_${tag}`;
const outRunner = `bench_tp_out_runner_${tag}`;
const outBaseline = `bench_tp_out_baseline_${tag}`;
const outWrite = `bench_tp_out_write_${tag}`;
const outLoop = `bench_tp_out_loop_${tag}`;
const ids = {
  input: await kafka.createTopic(input, PARTITIONS),
  runner: await kafka.createTopic(outRunner, PARTITIONS),
  baseline: await kafka.createTopic(outBaseline, PARTITIONS),
  ...(withLimits
    ? {
      write: await kafka.createTopic(outWrite, PARTITIONS),
      loop: await kafka.createTopic(outLoop, PARTITIONS),
    }
    : {}),
};
const dir = await Deno.makeTempDir({ prefix: "sluice-bench-tp-" });
/** The JVM flags of the baseline image (the runner's, but for its AppCDS archive). */
const jvmFlags = ((await d.getImage(baseImage).inspect()).Config?.Entrypoint as string[] ?? [])
  .filter((a) => a.startsWith("-XX:"));
/** The runner's output values of the first 1,000 passing inputs: the write limit's payloads. */
const payloadFile = `${dir}/payload.txt`;

// ---- produce the input once
let passing = 0;
const payloads: string[] = [];
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
      if (amount >= 100 && paid && payloads.length < 1000) {
        payloads.push(JSON.stringify({ order_id: `o-${j}`, amount }));
      }
    }
    await producer.send({ messages });
  }
  await producer.close();
  await Deno.writeTextFile(payloadFile, payloads.join("\n") + "\n");
  console.log(`produced ${N} records in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

const committedSum = async (group: string) =>
  [...(await kafka.committedOffsets(group, input)).values()].reduce((a, b) => a + Number(b), 0);

const outputSum = async (topic: string) =>
  (await kafka.offsetRanges(topic, [0, 1, 2])).reduce((a, r) => a + Number(r.latest), 0);

type Limit = "read-limit" | "write-limit" | "eos-loop";
type Instances = `runner-x${number}`;
type Variant = "runner" | "baseline" | "runner-c2" | "runner-compare" | Instances | Limit;
const variants: Variant[] = ["runner", "baseline"];
for (const n of instanceCounts) variants.push(`runner-x${n}`);
if (withC2) variants.push("runner-c2");
if (compareImage) variants.push("runner-compare");
const limits: Limit[] = withLimits ? ["read-limit", "write-limit", "eos-loop"] : [];
variants.push(...limits);
/** How many runner containers a variant runs. */
const instancesOf = (v: Variant) => (v.startsWith("runner-x") ? Number(v.slice(8)) : 1);

/** A Kafka tool in the broker's image, with the runner's JVM flags, kept alive after it ends. */
function toolCommand(mainClass: string, args: string[], before = ""): string[] {
  const java = ["java", ...jvmFlags, "-cp", "'/opt/kafka/libs/*'", mainClass, ...args].join(" ");
  return ["sh", "-c", `${before}${java}; echo "sluice-bench-exit $?"; exec sleep 3600`];
}

/** The exit status the tool wrapper printed, or null while the tool runs. */
async function toolExit(id: string): Promise<{ code: number; log: string } | null> {
  const log = await containerLog(d, id, "stdout");
  const m = /^sluice-bench-exit (\d+)$/m.exec(log);
  return m ? { code: Number(m[1]), log } : null;
}

/**
 * What the tool printed itself: its rate (the consumer's fetch.nMsg.sec, the producer's
 * records/sec) and, for the consumer, the records, the end of its window and the window's length.
 */
function toolRate(
  variant: Limit,
  log: string,
): { rate: number; records?: number; end?: number; fetchMs?: number } | null {
  if (variant === "write-limit") {
    const m = /(\d+) records sent, ([\d.]+) records\/sec/.exec(log);
    return m ? { rate: Number(m[2]) } : null;
  }
  // start.time, end.time, MB, MB.sec, nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms,
  // fetch.MB.sec, fetch.nMsg.sec (times as --date-format below: ISO 8601 with the zone)
  const line = log.split("\n").find((l) => /^\d{4}-\d\d-\d\dT.*, [\d.]+$/.test(l.trim()));
  const cols = line?.split(",").map((c) => c.trim());
  if (!cols || cols.length !== 10) return null;
  return {
    rate: Number(cols[9]),
    records: Number(cols[4]),
    end: Date.parse(cols[1]),
    fetchMs: Number(cols[7]),
  };
}

async function createLimit(variant: Limit, appId: string): Promise<string> {
  const host = {
    NetworkMode: env.network,
    RestartPolicy: { Name: "no" },
    Memory: RUNNER_EXECUTION.memoryBytes,
  };
  if (variant === "eos-loop") {
    const entry = (await d.getImage(baseImage).inspect()).Config?.Entrypoint as string[];
    const c = await d.createContainer({
      name: appId,
      Image: baseImage,
      Labels: labels,
      Entrypoint: [...entry.slice(0, -1), "dev.sluice.bench.EosLoop"],
      Env: [
        `BOOTSTRAP=${env.bootstrapInternal}`,
        `GROUP=${appId}`,
        `INPUT=${input}`,
        `OUTPUT=${outLoop}`,
        "THRESHOLD=100",
      ],
      StopTimeout: RUNNER_EXECUTION.stopTimeoutSeconds,
      HostConfig: host,
    });
    return c.id;
  }
  const cmd = variant === "read-limit"
    ? toolCommand(
      "org.apache.kafka.tools.ConsumerPerformance",
      [
        `--bootstrap-server ${env.bootstrapInternal}`,
        `--topic ${input}`,
        `--group ${appId}`,
        `--messages ${N}`,
        "--timeout 120000",
        `--date-format "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"`,
        "--consumer.config /tmp/consumer.properties",
      ],
      "printf 'auto.commit.interval.ms=100\\nisolation.level=read_committed\\n' > /tmp/consumer.properties; ",
    )
    : toolCommand("org.apache.kafka.tools.ProducerPerformance", [
      `--topic ${outWrite}`,
      `--num-records ${N}`,
      "--payload-file /bench/payload.txt",
      "--throughput -1",
      `--transactional-id ${appId}`,
      "--transaction-duration-ms 100",
      `--producer-props bootstrap.servers=${env.bootstrapInternal}`,
    ]);
  const c = await d.createContainer({
    name: appId,
    Image: KAFKA_IMAGE,
    Labels: labels,
    Entrypoint: cmd,
    Cmd: [],
    StopTimeout: 1,
    HostConfig: {
      ...host,
      ...(variant === "write-limit" ? { Binds: [`${payloadFile}:/bench/payload.txt:ro`] } : {}),
    },
  });
  return c.id;
}

/** A measured window: its ends, the records in it, the container's CPU time over it. */
interface Window {
  how: "commits" | "tool" | "output offsets";
  tFirst: number;
  tDone: number;
  records: number;
  cpuMs: number | null;
  toolRate: number | null;
}

/**
 * The window between the first commit of the group and its commit of record N (polled every
 * 100 ms): the runner, the baseline and the EOS loop, which all commit every 100 ms.
 */
async function commitWindow(variant: Variant, ids: string[], group: string): Promise<Window> {
  const deadline = Date.now() + 600_000;
  let first: { t: number; at: number; cpu: number | null } | null = null;
  // the CPU time of all the variant's containers together (null when one is unreadable)
  const cpuOfAll = async () => {
    const each = await Promise.all(ids.map(containerCpuMs));
    return each.some((x) => x === null) ? null : each.reduce((a, b) => a! + b!, 0);
  };
  while (Date.now() < deadline) {
    const t = Date.now();
    const s = await committedSum(group).catch(() => 0);
    if (s > 0 && first === null) first = { t, at: s, cpu: await cpuOfAll() };
    if (first && s >= N) {
      const cpu = await cpuOfAll();
      return {
        how: "commits",
        tFirst: first.t,
        tDone: t,
        records: N - first.at,
        cpuMs: first.cpu !== null && cpu !== null ? cpu - first.cpu : null,
        toolRate: null,
      };
    }
    for (const id of ids) {
      const st = await d.getContainer(id).inspect();
      if (!st.State.Running) throw new Error(`${variant} exited with ${st.State.ExitCode}`);
    }
    await sleep(100);
  }
  throw new Error(`${variant} did not finish`);
}

/** The container's CPU time at `t`, interpolated between the two readings around it. */
function cpuAt(ticks: Array<{ t: number; cpu: number | null }>, t: number): number | null {
  const known = ticks.filter((k) => k.cpu !== null) as Array<{ t: number; cpu: number }>;
  const after = known.findIndex((k) => k.t >= t);
  if (after <= 0) return after === 0 && known[0].t === t ? known[0].cpu : null;
  const [a, b] = [known[after - 1], known[after]];
  return a.cpu + (b.cpu - a.cpu) * (t - a.t) / (b.t - a.t);
}

/**
 * A Kafka tool's window. The tools are too fast for 100 ms commits, so the container's CPU (and,
 * for the write limit, its output topic's end offsets) is read every ~20 ms until the tool's
 * wrapper prints its exit. Read limit: the tool's own fetch window (from the group's assignment
 * to record N, `end.time − fetch.time.ms … end.time`). Write limit: from the first reading with
 * output to the first with all of it (offsets count transaction markers: scaled to N records).
 */
async function toolWindow(limit: Limit, id: string, writeBefore: number): Promise<Window> {
  const ticks: Array<{ t: number; cpu: number | null; out: number }> = [];
  const deadline = Date.now() + 600_000;
  let looked = 0;
  let log = "";
  while (!log) {
    if (Date.now() > deadline) throw new Error(`${limit} did not finish`);
    const t = Date.now();
    const cpu = await containerCpuMs(id);
    const out = limit === "write-limit"
      ? await outputSum(outWrite).then((x) => x - writeBefore, () => 0)
      : 0;
    ticks.push({ t, cpu, out });
    if (t - looked >= 250) {
      looked = t;
      const exit = await toolExit(id);
      if (exit && exit.code !== 0) throw new Error(`${limit} exited with ${exit.code}`);
      if (exit) log = exit.log;
      const st = await d.getContainer(id).inspect();
      if (!st.State.Running) throw new Error(`${limit} exited with ${st.State.ExitCode}`);
    }
    await sleep(20);
  }
  const own = toolRate(limit, log);
  if (limit === "read-limit") {
    if (!own?.end || !own.fetchMs) throw new Error(`read-limit printed no summary: ${log}`);
    const [tFirst, tDone] = [own.end - own.fetchMs, own.end];
    const [c0, c1] = [cpuAt(ticks, tFirst), cpuAt(ticks, tDone)];
    return {
      how: "tool",
      tFirst,
      tDone,
      records: own.records ?? N,
      cpuMs: c0 !== null && c1 !== null ? c1 - c0 : null,
      toolRate: own.rate,
    };
  }
  const total = (await outputSum(outWrite)) - writeBefore;
  const first = ticks.find((k) => k.out > 0);
  const done = ticks.find((k) => k.out >= total);
  if (!first || !done || done.t <= first.t) {
    throw new Error(
      `write-limit wrote ${total} offsets faster than one reading: use more --records`,
    );
  }
  return {
    how: "output offsets",
    tFirst: first.t,
    tDone: done.t,
    records: (done.out - first.out) * N / total,
    cpuMs: first.cpu !== null && done.cpu !== null ? done.cpu - first.cpu : null,
    toolRate: own?.rate ?? null,
  };
}

async function sample(variant: Variant, rep: number) {
  const appId = `sluice-bench-tp-${tag}-${variant}-${rep}`;
  await kafka.setGroupOffsets(appId, input, new Map([[0, 0n], [1, 0n], [2, 0n]]));
  /** The variant's containers (several for `runner-xN`) and the runners' state volumes. */
  const containers: string[] = [];
  const volumes: string[] = [];
  const limit = (limits as Variant[]).includes(variant) ? variant as Limit : null;
  // the write limit's progress is its output topic's end offsets (counted from before it starts)
  const writeBefore = variant === "write-limit" ? await outputSum(outWrite) : 0;
  if (limit) {
    containers.push(await createLimit(limit, appId));
  } else if (variant === "baseline") {
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
    containers.push(c.id);
  } else {
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
    const n = instancesOf(variant);
    for (let i = 0; i < n; i++) {
      const name = n === 1 ? appId : `${appId}-${i}`;
      const volume = `${name}-state`;
      await d.createVolume({ Name: volume, Labels: labels });
      volumes.push(volume);
      containers.push(
        await createRunner(d, {
          name,
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
          ...(variant === "runner" && jfrDir
            ? {
              entrypoint: [
                runnerEntrypoint[0],
                `-XX:StartFlightRecording=filename=${JFR_FILE},settings=profile`,
                ...runnerEntrypoint.slice(1),
              ],
            }
            : {}),
        }),
      );
    }
  }
  const id = containers[0];
  try {
    const tStart = Date.now();
    // several instances start together: they join one group and share its partitions
    await Promise.all(containers.map((c) => d.getContainer(c).start()));
    const w = limit === "read-limit" || limit === "write-limit"
      ? await toolWindow(limit, id, writeBefore)
      : await commitWindow(variant, containers, appId);
    const rate = w.records / ((w.tDone - w.tFirst) / 1000);
    const r = {
      variant,
      rep,
      records: N,
      /** How the window was found: the group's commits, the tool's own, its output's offsets. */
      window: w.how,
      start_to_first_commit_ms: w.tFirst - tStart,
      first_to_last_commit_ms: w.tDone - w.tFirst,
      records_in_window: w.records,
      records_per_s: Number.isFinite(rate) ? rate : null,
      cpu_ms_in_window: w.cpuMs,
      records_per_cpu_s: w.cpuMs ? w.records / (w.cpuMs / 1000) : null,
      /** The rate Kafka's tool printed itself (its own window), for the limits it runs. */
      tool_records_per_s: w.toolRate,
      loadavg1: loadavg1(),
    };
    console.log(
      `${variant} #${rep}: ${num(rate, 0)} records/s, ${
        num(r.records_per_cpu_s, 0)
      } records per CPU-second; load ${r.loadavg1}`,
    );
    if (variant === "runner" && jfrDir) {
      await d.getContainer(id).stop({ t: 30 });
      const to = `${jfrDir}/runner-${rep}.jfr`;
      const cp = await sh(dockerCli(), ["cp", `${id}:${JFR_FILE}`, to]);
      if (cp.code !== 0) throw new Error(`docker cp of the recording: ${cp.out}`);
      console.log(`runner #${rep}: recording in ${to}`);
    }
    return r;
  } finally {
    for (const c of containers) await d.getContainer(c).remove({ force: true }).catch(() => {});
    for (const v of volumes) await d.getVolume(v).remove({ force: true }).catch(() => {});
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
/** `top` ÷ `bottom` per repetition (same rep, adjacent in time), `top` scaled by `scale`. */
const ratioPerRep = (metric: Metric, top: Variant, bottom: Variant, scale = 1) =>
  Array.from({ length: reps }, (_, rep) => {
    const a = samples.find((s) => s.variant === top && s.rep === rep)?.[metric];
    const b = samples.find((s) => s.variant === bottom && s.rep === rep)?.[metric];
    return a && b ? (a * scale) / b : null;
  });
/** runner ÷ `other` per repetition; `scale` turns the runner's input records into output ones. */
const paired = (metric: Metric, other: Variant = "baseline", scale = 1) =>
  ratioPerRep(metric, "runner", other, scale);
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
    : v === "read-limit"
    ? "read limit: kafka-consumer-perf-test"
    : v === "write-limit"
    ? "txn write limit: kafka-producer-perf-test (output records)"
    : v === "eos-loop"
    ? "EOS loop: consumer + txn producer, no Streams"
    : v.startsWith("runner-x")
    ? `sluice runner, ${instancesOf(v)} instances of one application ID`
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
// The runner's fraction of each limit: input records against the read limit and the EOS loop,
// output records (input × passing / N) against the transactional write limit.
const outputShare = passing / N;
const limitRows = limits.map((l) => {
  const scale = l === "write-limit" ? outputShare : 1;
  const perRepRate = paired("records_per_s", l, scale);
  const perRepCpuRate = paired("records_per_cpu_s", l, scale);
  return {
    limit: l,
    compares: l === "write-limit" ? "output records" : "input records",
    limit_records_per_s: byVariant[l].median,
    limit_records_per_cpu_s: byVariantCpu[l].median,
    tool_records_per_s: median(
      samples.filter((s) => s.variant === l).map((s) => s.tool_records_per_s),
    ),
    runner_fraction: ((byVariant.runner.median ?? NaN) * scale) / (byVariant[l].median ?? NaN),
    runner_fraction_per_cpu_s: ((byVariantCpu.runner.median ?? NaN) * scale) /
      (byVariantCpu[l].median ?? NaN),
    per_rep: perRepRate,
    per_rep_median: median(perRepRate),
    per_rep_cpu: perRepCpuRate,
    per_rep_cpu_median: median(perRepCpuRate),
  };
});
if (limitRows.length > 0) {
  const pct = (x: number | null) =>
    typeof x === "number" && Number.isFinite(x) ? `${num(x * 100, 0)}%` : "–";
  console.log(
    `\nThe runner against the machine's limits (medians; runner's output = ${
      num(outputShare * 100, 1)
    }% of its input)\n` +
      table(
        [
          "limit",
          "compares",
          "limit records/s",
          "tool's own figure",
          "runner's fraction",
          "per rep (median)",
          "limit records/CPU-s",
          "runner's fraction per CPU-s",
        ],
        limitRows.map((r) => [
          label(r.limit),
          r.compares,
          num(r.limit_records_per_s, 0),
          num(r.tool_records_per_s, 0),
          pct(r.runner_fraction),
          pct(r.per_rep_median),
          num(r.limit_records_per_cpu_s, 0),
          pct(r.runner_fraction_per_cpu_s),
        ]),
      ),
  );
}
// What more instances buy on this machine (issue 31): N instances ÷ one, repetition by repetition
const instanceScaling = instanceCounts.map((n) => {
  const v: Variant = `runner-x${n}`;
  const perRate = ratioPerRep("records_per_s", v, "runner");
  const perCpu = ratioPerRep("records_per_cpu_s", v, "runner");
  return {
    instances: n,
    records_per_s: byVariant[v].median,
    records_per_cpu_s: byVariantCpu[v].median,
    over_one_per_rep: perRate,
    over_one_median: median(perRate),
    over_one_per_cpu_s_per_rep: perCpu,
    over_one_per_cpu_s_median: median(perCpu),
  };
});
if (instanceScaling.length > 0) {
  console.log(
    `\nInstances of one application ID on this Docker daemon (${PARTITIONS} partitions, ` +
      `${navigator.hardwareConcurrency} cores shared with the broker; ÷ one instance, median pair by pair)\n` +
      table(
        ["instances", "records/s", "÷ one", "records per CPU-second", "÷ one (per CPU-s)"],
        [
          [
            "1",
            num(byVariant.runner.median, 0),
            "1.00",
            num(byVariantCpu.runner.median, 0),
            "1.00",
          ],
          ...instanceScaling.map((r) => [
            String(r.instances),
            num(r.records_per_s, 0),
            num(r.over_one_median),
            num(r.records_per_cpu_s, 0),
            num(r.over_one_per_cpu_s_median),
          ]),
        ],
      ),
  );
}
/** Issue 32's target: the runner reaches this fraction of the EOS read-process-write loop. */
const EOS_LOOP_TARGET = 0.8;
const eosLoop = limitRows.find((r) => r.limit === "eos-loop");
const eosTarget = eosLoop
  ? {
    value: eosLoop.per_rep_median,
    target: EOS_LOOP_TARGET,
    verdict: eosLoop.per_rep_median === null || !Number.isFinite(eosLoop.per_rep_median)
      ? "not measured"
      : eosLoop.per_rep_median >= EOS_LOOP_TARGET
      ? "met"
      : `MISSED by ${num(EOS_LOOP_TARGET - eosLoop.per_rep_median)}`,
  }
  : null;
if (eosTarget) {
  console.log(
    `target (median pair by pair, records/s): runner / EOS loop ${
      num(eosTarget.value)
    } ≥ ${EOS_LOOP_TARGET}: ${eosTarget.verdict}`,
  );
}
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
    kafka_image: KAFKA_IMAGE,
    limit_jvm_flags: jvmFlags,
    limit_settings: withLimits
      ? {
        "read-limit":
          "ConsumerPerformance, 1 consumer, auto.commit.interval.ms=100, read_committed, the tool's defaults otherwise",
        "write-limit":
          "ProducerPerformance, --transactional-id, --transaction-duration-ms 100, --throughput -1, runner output values, no key",
        "eos-loop":
          "bench/baseline EosLoop: consumer (read_committed) + transactional producer, commit every 100 ms",
      }
      : null,
    output_share: outputShare,
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
  limits: limitRows,
  instance_scaling: instanceScaling,
  targets: { runner_over_eos_loop: eosTarget },
});
console.log(`wrote ${path}`);
