/**
 * What the live preview (`sluice plan --preview[=N]`) costs: the last N records of an input
 * topic read group-less and read_committed (`KafkaPort.readRecords`), then decoded strictly and
 * evaluated under an old and a new predicate (`evaluateSample`), for N = 1,000 and 100,000.
 *
 *   deno run -A bench/preview.ts [--reps=3] [--sizes=1000,100000] [--partitions=3]
 *
 * One topic holds 100,000 starter-like orders (some NULL customers, 64-bit amounts, 1% that do
 * not decode). Each repetition times the read and the evaluation separately, with the process
 * CPU time (utime+stime from /proc/self/stat) beside wall time. Nothing here asserts on time.
 * @module
 */
import { sharedEnv } from "../harness/env.ts";
import { createTopic, produce } from "../harness/kafka.ts";
import type { SchemaField } from "../lib/expr/schema.ts";
import { checkPredicateSql } from "../lib/project/model.ts";
import { platformaticKafka } from "../lib/providers/kafka/platformatic.ts";
import { evaluateSample } from "../lib/review/preview.ts";
import type { PreviewTarget } from "../lib/review/preview.ts";
import { environment, flags, loadavg1, max, median, table, writeResult } from "./_common.ts";

const f = flags(Deno.args);
const reps = Number(f.get("reps", "3"));
const sizes = f.get("sizes", "1000,100000").split(",").map(Number);
const partitions = Number(f.get("partitions", "3"));
const total = Math.max(...sizes);

const schema: SchemaField[] = [
  { name: "order_id", type: "STRING", nullable: false },
  { name: "amount", type: "BIGINT", nullable: false },
  { name: "paid", type: "BOOLEAN", nullable: false },
  { name: "customer", type: "STRING", nullable: true },
];
const target = (topic: string): PreviewTarget => ({
  model: "eligible_orders",
  input_topic: topic,
  schema,
  projection: [
    { source: "order_id", name: "order_id" },
    { source: "amount", name: "amount" },
    { source: "paid", name: "paid" },
  ],
  old: checkPredicateSql("amount >= 100 AND paid = TRUE", schema),
  new: checkPredicateSql("amount >= 200 AND paid = TRUE", schema),
});

/** Process CPU time in ms (user + system), from /proc/self/stat. */
function cpuMs(): number {
  const fields = Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
}

const envInfo = await environment();
const env = await sharedEnv();
const topic = `bench_preview_${crypto.randomUUID().slice(0, 6)}`;
await createTopic(env.bootstrapHost, topic, partitions);
const t0 = Date.now();
for (let i = 0; i < total; i += 2000) {
  await produce(
    env.bootstrapHost,
    topic,
    Array.from({ length: Math.min(2000, total - i) }, (_, j) => {
      const n = i + j;
      const value = n % 100 === 99
        ? `{"order_id":"o-${n}","amount":"${n}","paid":true,"customer":null}` // DECODE_WRONG_TYPE
        : JSON.stringify({
          order_id: `o-${n}`,
          amount: (n * 7919) % 1000,
          paid: n % 3 !== 0,
          customer: n % 5 === 0 ? null : `c-${n % 97}`,
        });
      return { key: `o-${n}`, value, partition: n % partitions };
    }),
  );
}
console.log(`produced ${total} records to ${topic} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

const kafka = platformaticKafka(env.bootstrapHost);
const samples: Array<Record<string, unknown>> = [];
try {
  const ranges = await kafka.offsetRanges(topic, [...Array(partitions).keys()]);
  for (let rep = 0; rep < reps; rep++) {
    for (const n of sizes) {
      const slices = ranges.map((r) => ({
        partition: r.partition,
        from: r.latest - BigInt(n) > r.earliest ? r.latest - BigInt(n) : r.earliest,
        to: r.latest,
      }));
      const load = loadavg1();
      const c0 = cpuMs();
      const w0 = performance.now();
      const read = await kafka.readRecords!(topic, slices, {
        maxBytes: 512 * 1024 * 1024,
        deadline: Date.now() + 600_000,
      });
      const w1 = performance.now();
      const c1 = cpuMs();
      const m = evaluateSample(target(topic), read.records, {
        limits: { records: n, maxBytes: 512 * 1024 * 1024, timeoutMs: 600_000 },
        sampledAt: new Date().toISOString(),
        slices,
        stopped: read.stopped,
      });
      const w2 = performance.now();
      const c2 = cpuMs();
      samples.push({
        rep,
        records: n,
        read_records: read.records.length,
        read_bytes: read.bytes,
        sampled: m.sampled,
        undecodable: m.undecodable,
        newly_dropped: m.newly_dropped,
        stopped: read.stopped,
        read_ms: w1 - w0,
        read_cpu_ms: c1 - c0,
        evaluate_ms: w2 - w1,
        evaluate_cpu_ms: c2 - c1,
        total_ms: w2 - w0,
        loadavg1: load,
      });
      console.log(
        `rep ${rep} N=${n}: read ${read.records.length} (${read.bytes} B) in ${
          (w1 - w0).toFixed(0)
        } ms, evaluated in ${(w2 - w1).toFixed(0)} ms`,
      );
    }
  }
} finally {
  await kafka.close();
}

const of = (n: number, k: string) =>
  samples.filter((s) => s.records === n).map((s) => s[k] as number);
const medians = sizes.map((n) => ({
  records: n,
  read_ms: median(of(n, "read_ms")),
  evaluate_ms: median(of(n, "evaluate_ms")),
  total_ms: median(of(n, "total_ms")),
  total_max_ms: max(of(n, "total_ms")),
  cpu_ms: median(
    samples.filter((s) => s.records === n).map((s) =>
      (s.read_cpu_ms as number) + (s.evaluate_cpu_ms as number)
    ),
  ),
  records_per_s: median(
    samples.filter((s) => s.records === n).map((s) =>
      (s.sampled as number) / ((s.total_ms as number) / 1000)
    ),
  ),
}));
console.log(
  "\n" + table(
    ["N", "read ms", "evaluate ms", "total ms (median)", "max", "CPU ms", "records/s"],
    medians.map((m) => [
      m.records.toLocaleString("en"),
      (m.read_ms ?? 0).toFixed(0),
      (m.evaluate_ms ?? 0).toFixed(0),
      (m.total_ms ?? 0).toFixed(0),
      (m.total_max_ms ?? 0).toFixed(0),
      (m.cpu_ms ?? 0).toFixed(0),
      (m.records_per_s ?? 0).toFixed(0),
    ]),
  ),
);
const path = await writeResult("preview", {
  name: "preview",
  environment: envInfo,
  parameters: {
    reps,
    sizes,
    partitions,
    produced: total,
    predicates: ["amount >= 100 AND paid = TRUE", "amount >= 200 AND paid = TRUE"],
  },
  note:
    "read = group-less read_committed fetch of the last N records (KafkaPort.readRecords); evaluate = strict decode + old/new predicate (evaluateSample)",
  samples,
  medians,
});
console.log(`wrote ${path}`);
