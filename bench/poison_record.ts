/**
 * What a poison record costs the job under each `on_invalid` policy: records/s before and after
 * one undecodable record, for `stop` (the default) and `dead_letter`; and `dead_letter` with 1% of
 * the records undecodable, against the same job on clean input (the cost of a dead letter).
 *
 *   deno run -A bench/poison_record.ts [--records=300000] [--reps=3]
 *
 * Inputs (produced once, 3 partitions, N/3 records each, the records and predicate of
 * runner_throughput): `one` holds a single poison record (`"amount":"12"`, DECODE_WRONG_TYPE) in
 * the middle of partition 0; `1pct` makes every 100th record of each partition a poison record.
 * Each sample: a fresh consumer group at offset 0 and a runner container created as sluice creates
 * one, with or without `on_invalid` (a fresh dead-letter topic per sample); the group's committed
 * offsets (per partition) and the container's CPU time (its cgroup) polled every 100 ms. Rates
 * start 2 s after the first commit (warm-up) while less than a quarter of the input is done.
 *
 * - `stop`: the rate from the first commit to the last one before the runner exits; after the
 *   poison record the job does nothing (0 records/s) until an operator acts: the exit code, the
 *   reason and the records left behind are reported.
 * - `dead_letter`: the rate before and after the commit that moves partition 0 past the poison.
 * - `dead_letter` on `1pct`: the overall rate and records per CPU-second, against the clean rate
 *   (the `before` of `dead_letter` in the same repetition), and the dead letters written.
 * Variants alternate within each repetition. Nothing here asserts on time.
 * @module
 */
import Docker from "dockerode";
import { Producer, stringSerializers } from "@platformatic/kafka";
import { sharedEnv } from "../harness/env.ts";
import { platformaticKafka } from "../lib/providers/kafka/platformatic.ts";
import { parseRunnerStop } from "../lib/artifact/runner_exits.ts";
import {
  amountAtLeastAndPaid,
  buildRunnerImage,
  devTools,
  writePlan,
} from "../tests/runner_fixture.ts";
import {
  environment,
  flags,
  loadavg1,
  max,
  median,
  min,
  num,
  sec,
  sleep,
  table,
  writeResult,
} from "./_common.ts";
import { containerCpuMs, containerLog, createRunner } from "./_runner.ts";

const f = flags(Deno.args);
const PARTITIONS = 3;
const perPartition = Math.floor(Number(f.get("records", "300000")) / PARTITIONS);
const N = perPartition * PARTITIONS;
const reps = Number(f.get("reps", "3"));
const POISON_OFFSET = Math.floor(perPartition / 2);
const POISON = '{"order_id":"poison","amount":"12","paid":true,"note":null}';

const envInfo = await environment();
const env = await sharedEnv();
const image = await buildRunnerImage();
const d = new Docker();
const kafka = platformaticKafka(env.bootstrapHost);
const imageEnv = (await d.getImage(image).inspect()).Config?.Env ?? [];
const tag = crypto.randomUUID().slice(0, 6);
const labels = { ...env.labels, "dev.sluice.bench": `poison_record-${tag}` };
const dir = await Deno.makeTempDir({ prefix: "sluice-bench-poison-" });

type Input = "one" | "1pct";
const inputs: Record<Input, { topic: string; id: string; poison: number }> = {
  one: { topic: `bench_poison_one_${tag}`, id: "", poison: 0 },
  "1pct": { topic: `bench_poison_1pct_${tag}`, id: "", poison: 0 },
};
const output = { topic: `bench_poison_out_${tag}`, id: "" };
output.id = await kafka.createTopic(output.topic, PARTITIONS);

// ---- produce both inputs once
{
  const producer = new Producer({
    clientId: "sluice-bench-poison",
    bootstrapBrokers: [env.bootstrapHost],
    serializers: stringSerializers,
  });
  const t0 = Date.now();
  for (const [name, input] of Object.entries(inputs) as Array<[Input, typeof inputs.one]>) {
    input.id = await kafka.createTopic(input.topic, PARTITIONS);
    for (let p = 0; p < PARTITIONS; p++) {
      for (let i = 0; i < perPartition; i += 2000) {
        const messages = [];
        for (let j = i; j < Math.min(perPartition, i + 2000); j++) {
          const n = p * perPartition + j;
          const poison = name === "one" ? p === 0 && j === POISON_OFFSET : j % 100 === 99;
          if (poison) input.poison++;
          messages.push({
            topic: input.topic,
            partition: p,
            key: `o-${n}`,
            value: poison ? POISON : JSON.stringify({
              order_id: `o-${n}`,
              amount: (n * 7919) % 1000,
              paid: n % 4 !== 3,
              note: n % 5 === 0 ? null : `note ${n % 97}`,
            }),
          });
        }
        await producer.send({ messages });
      }
    }
  }
  await producer.close();
  console.log(
    `produced ${N} records to each input (${inputs.one.poison} and ${
      inputs["1pct"].poison
    } poison) in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
}

type Variant = "stop" | "dead_letter" | "dead_letter-1pct";
const variants: Variant[] = ["stop", "dead_letter", "dead_letter-1pct"];

interface Poll {
  t: number;
  p0: number;
  total: number;
  cpu: number | null;
}

/** The dead letters committed to a topic (read_committed, through the Java client). */
async function deadLetters(topic: string): Promise<number> {
  const out = await devTools(image, env.network, env.labels, [
    env.bootstrapInternal,
    "consume",
    topic,
    "1000000",
    "60000",
  ]);
  return out.split("\n").filter((l) => l !== "").length;
}

async function sample(variant: Variant, rep: number) {
  const input = inputs[variant === "dead_letter-1pct" ? "1pct" : "one"];
  const appId = `sluice-bench-poison-${tag}-${variant}-${rep}`;
  const volume = `${appId}-state`;
  const dlq = variant === "stop" ? null : `bench_poison_dlq_${tag}_${variant}_${rep}`;
  const dlqId = dlq ? await kafka.createTopic(dlq, 1) : null;
  await kafka.setGroupOffsets(appId, input.topic, new Map([[0, 0n], [1, 0n], [2, 0n]]));
  await d.createVolume({ Name: volume, Labels: labels });
  const plan = await writePlan(dir, appId, {
    applicationId: appId,
    inputTopic: input.topic,
    outputTopic: output.topic,
    predicate: amountAtLeastAndPaid(100),
    image,
    network: env.network,
    bootstrap: env.bootstrapInternal,
    clusterId: env.clusterId,
    inputTopicId: input.id,
    outputTopicId: output.id,
    ...(dlq && dlqId ? { deadLetter: { topic: dlq, id: dlqId } } : {}),
  });
  const id = await createRunner(d, {
    name: appId,
    image,
    imageEnv,
    network: env.network,
    planPath: plan.path,
    planSha256: plan.sha256,
    generation: `poison-${rep}`,
    volume,
    labels,
  });
  const polls: Poll[] = [];
  let exit: { code: number; stop: ReturnType<typeof parseRunnerStop> } | null = null;
  try {
    await d.getContainer(id).start();
    const deadline = Date.now() + 600_000;
    while (Date.now() < deadline) {
      const t = Date.now();
      const c = await kafka.committedOffsets(appId, input.topic).catch(() => new Map());
      const total = [...c.values()].reduce((a, b) => a + Number(b), 0);
      if (total > 0) {
        polls.push({ t, p0: Number(c.get(0) ?? 0n), total, cpu: await containerCpuMs(id) });
      }
      if (total >= N) break;
      const st = await d.getContainer(id).inspect();
      if (!st.State.Running) {
        const lines = (await containerLog(d, id, "stdout")).split("\n")
          .filter((l) => l.startsWith("{"));
        let stop = null;
        try {
          stop = parseRunnerStop(JSON.parse(lines[lines.length - 1] ?? "null"));
        } catch {
          // no reason line
        }
        exit = { code: st.State.ExitCode, stop };
        break;
      }
      await sleep(100);
    }
  } finally {
    await d.getContainer(id).remove({ force: true }).catch(() => {});
    await d.getVolume(volume).remove({ force: true }).catch(() => {});
  }
  if (polls.length < 2) throw new Error(`${variant} #${rep}: fewer than two commits seen`);
  // rates start 2 s after the first commit (JIT warm-up), when enough of the run is left
  const first = polls.find((p) => p.t >= polls[0].t + 2000 && p.total < N / 4) ?? polls[0];
  const last = polls[polls.length - 1];
  const rate = (a: Poll, b: Poll) => b.t > a.t ? (b.total - a.total) / ((b.t - a.t) / 1000) : null;
  const perCpu = (a: Poll, b: Poll) =>
    a.cpu !== null && b.cpu !== null && b.cpu > a.cpu
      ? (b.total - a.total) / ((b.cpu - a.cpu) / 1000)
      : null;
  let before: number | null;
  let after: number | null;
  let beforeCpu: number | null;
  let afterCpu: number | null;
  if (variant === "stop") {
    // the last commit that moved anything: the job's progress ends there
    const moved = polls.findLast((p) => p.total > first.total) ?? last;
    before = rate(first, moved);
    // the exited container's cgroup is gone: the CPU rate ends at the last poll that read it
    const movedCpu = polls.findLast((p) => p.total > first.total && p.cpu !== null) ?? last;
    beforeCpu = perCpu(first, movedCpu);
    after = 0;
    afterCpu = null;
  } else if (variant === "dead_letter") {
    const cross = polls.find((p) => p.p0 > POISON_OFFSET) ?? last;
    before = rate(first, cross);
    after = rate(cross, last);
    beforeCpu = perCpu(first, cross);
    afterCpu = perCpu(cross, last);
  } else {
    before = rate(first, last);
    beforeCpu = perCpu(first, last);
    after = null;
    afterCpu = null;
  }
  const r = {
    variant,
    rep,
    records: N,
    committed_at_end: last.total,
    exit_code: exit?.code ?? null,
    stop_reason: exit?.stop?.reason ?? null,
    stop_position: exit?.stop?.record
      ? `${exit.stop.record.topic}-${exit.stop.record.partition}@${exit.stop.record.offset}`
      : null,
    left_behind: N - last.total,
    first_to_end_ms: last.t - first.t,
    records_per_s_before: before,
    records_per_s_after: after,
    records_per_cpu_s_before: beforeCpu,
    records_per_cpu_s_after: afterCpu,
    dead_letters: dlq ? await deadLetters(dlq) : null,
    loadavg1: loadavg1(),
  };
  console.log(
    `${variant} #${rep}: before ${num(before, 0)} records/s, after ${
      num(after, 0)
    } records/s; per CPU-second ${num(beforeCpu, 0)} / ${num(afterCpu, 0)}; ${
      exit ? `exit ${exit.code} ${r.stop_reason} at ${r.stop_position}, ${r.left_behind} left` : ""
    }${dlq ? `${r.dead_letters} dead letters` : ""}; load ${r.loadavg1}`,
  );
  return r;
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

const of = (v: Variant) => samples.filter((s) => s.variant === v);
const stat = (xs: Array<number | null>) => ({ median: median(xs), min: min(xs), max: max(xs) });
const summary = Object.fromEntries(variants.map((v) => [v, {
  records_per_s_before: stat(of(v).map((s) => s.records_per_s_before)),
  records_per_s_after: stat(of(v).map((s) => s.records_per_s_after)),
  records_per_cpu_s_before: stat(of(v).map((s) => s.records_per_cpu_s_before)),
  records_per_cpu_s_after: stat(of(v).map((s) => s.records_per_cpu_s_after)),
  dead_letters: of(v).map((s) => s.dead_letters),
  exit_codes: of(v).map((s) => s.exit_code),
  left_behind: of(v).map((s) => s.left_behind),
}]));
// the clean rate of each repetition: dead_letter before its single poison record
const clean = (rep: number, k: "records_per_s_before" | "records_per_cpu_s_before") =>
  samples.find((s) => s.variant === "dead_letter" && s.rep === rep)?.[k] ?? null;
const perRep = (k: "records_per_s_before" | "records_per_cpu_s_before") =>
  Array.from({ length: reps }, (_, rep) => {
    const a = samples.find((s) => s.variant === "dead_letter-1pct" && s.rep === rep)?.[k];
    const b = clean(rep, k);
    return a && b ? a / b : null;
  });
const dlAfterOverBefore = of("dead_letter").map((s) =>
  s.records_per_s_after && s.records_per_s_before
    ? s.records_per_s_after / s.records_per_s_before
    : null
);
const fmt = (x: { median: number | null; min: number | null; max: number | null }) =>
  `${num(x.median, 0)} (${num(x.min, 0)}–${num(x.max, 0)})`;
console.log(
  `\nA poison record under each policy, ${N} records, ${PARTITIONS} partitions, ${reps} repetitions (median (min–max))\n` +
    table(
      [
        "policy",
        "records/s before",
        "records/s after",
        "per CPU-second before",
        "per CPU-second after",
        "what happened",
      ],
      [
        [
          "stop (default), 1 poison record",
          fmt(summary.stop.records_per_s_before),
          "0 (stopped)",
          fmt(summary.stop.records_per_cpu_s_before),
          "–",
          `exit ${[...new Set(summary.stop.exit_codes)].join("/")} ${
            of("stop")[0]?.stop_reason ?? "?"
          } at ${of("stop")[0]?.stop_position ?? "?"}; ${
            median(summary.stop.left_behind)
          } records left until an operator acts`,
        ],
        [
          "dead_letter, 1 poison record",
          fmt(summary.dead_letter.records_per_s_before),
          fmt(summary.dead_letter.records_per_s_after),
          fmt(summary.dead_letter.records_per_cpu_s_before),
          fmt(summary.dead_letter.records_per_cpu_s_after),
          `dead letters ${summary.dead_letter.dead_letters.join(", ")}; continued`,
        ],
        [
          "dead_letter, 1% poison records",
          fmt(summary["dead_letter-1pct"].records_per_s_before),
          "(whole run)",
          fmt(summary["dead_letter-1pct"].records_per_cpu_s_before),
          "–",
          `dead letters ${summary["dead_letter-1pct"].dead_letters.join(", ")} of ${
            inputs["1pct"].poison
          }`,
        ],
      ],
    ),
);
console.log(
  `dead_letter after/before per repetition: ${dlAfterOverBefore.map((x) => num(x)).join(", ")}; ` +
    `1% poison / clean per repetition: records/s ${
      perRep("records_per_s_before").map((x) => num(x)).join(", ")
    }, per CPU-second ${
      perRep("records_per_cpu_s_before").map((x) => num(x)).join(", ")
    }; time from first commit to the stop: ${
      of("stop").map((s) => sec(s.first_to_end_ms)).join(", ")
    } s`,
);
const path = await writeResult("poison_record", {
  name: "poison_record",
  environment: envInfo,
  parameters: {
    records: N,
    partitions: PARTITIONS,
    reps,
    poison_offset_in_partition_0: POISON_OFFSET,
    poison_record: POISON,
    poison_records: { one: inputs.one.poison, "1pct": inputs["1pct"].poison },
    predicate: "amount >= 100 AND paid = TRUE",
    runner_image: image,
    commit_poll_ms: 100,
  },
  samples,
  summary,
  ratios: {
    dead_letter_after_over_before: dlAfterOverBefore,
    one_pct_over_clean_records_per_s: perRep("records_per_s_before"),
    one_pct_over_clean_per_cpu_s: perRep("records_per_cpu_s_before"),
  },
});
console.log(`wrote ${path}`);
