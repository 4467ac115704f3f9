/**
 * Runner start: Docker `start` → the runner's RUNNING (status file `running_at`) of the shipped
 * runner image against variants of its JVM options or another image, alternating within each
 * repetition, so that each setting of docs/runner.md ("Start-up") is measured on its own.
 *
 *   deno run -A bench/runner_start.ts [--reps=7] [--variants=shipped,no-appcds]
 *                                     [--compare-image=sha256:… --compare-name=before]
 *
 * Variants: `shipped` (the image's own entrypoint); `no-appcds` (without
 * `-XX:SharedArchiveFile`, so only the JDK's default archive); `c2` (without
 * `-XX:TieredStopAtLevel=1`); `jfr` (a start-up flight recording, for profiling); with
 * `--compare-image` the other image's own entrypoint (e.g. the image of an earlier commit, to
 * measure a change of the runner's code or Streams settings).
 *
 * Each sample: a runner container created exactly as sluice creates one (mounted plan, volume,
 * memory limit), for one application whose group is idle and positioned (3 input partitions);
 * started; the status file read through the container every 50 ms until RUNNING for this
 * generation; then stopped (TERM, clean close) outside the measurement. Phases, from the
 * daemon's `start` event: JVM main (`started_at`, written after the plan checks), the identity
 * gate's end (the runner's log line), RUNNING (`running_at`).
 * @module
 */
import Docker from "dockerode";
import { sharedEnv } from "../harness/env.ts";
import { dockerodePort } from "../lib/providers/docker/dockerode.ts";
import { platformaticKafka } from "../lib/providers/kafka/platformatic.ts";
import { LABEL } from "../lib/runtime/labels.ts";
import { amountAtLeastAndPaid, buildRunnerImage, writePlan } from "../tests/runner_fixture.ts";
import {
  dockerTimeMs,
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
  until,
  writeResult,
} from "./_common.ts";
import { containerLog, createRunner, dockerEvents, readStatus } from "./_runner.ts";

const f = flags(Deno.args);
const reps = Number(f.get("reps", "7"));
const compareImage = f.get("compare-image", "");
const compareName = f.get("compare-name", "compare");
const variantNames = f.get("variants", "shipped,no-appcds").split(",").filter((v) => v !== "");
if (compareImage) variantNames.push(compareName);
const PARTITIONS = 3;

const envInfo = await environment();
const env = await sharedEnv();
const image = await buildRunnerImage();
const d = new Docker();
const port = dockerodePort(d);
const kafka = platformaticKafka(env.bootstrapHost);
const tag = crypto.randomUUID().slice(0, 6);
const benchLabel = `runner_start-${tag}`;
const labels = { ...env.labels, "dev.sluice.bench": benchLabel };
const dir = await Deno.makeTempDir({ prefix: "sluice-bench-start-" });

/** How a variant runs: which image, and its entrypoint (null: the image's own). */
interface Variant {
  name: string;
  image: string;
  imageEnv: string[];
  entrypoint: string[] | null;
}

async function imageInfo(id: string) {
  const info = await d.getImage(id).inspect();
  return {
    env: info.Config?.Env ?? [],
    entrypoint: (info.Config?.Entrypoint ?? []) as string[],
  };
}

const shipped = await imageInfo(image);
const without = (prefix: string) => shipped.entrypoint.filter((a) => !a.startsWith(prefix));
const JVM_VARIANTS: Record<string, () => string[] | null> = {
  shipped: () => null,
  "no-appcds": () => without("-XX:SharedArchiveFile="),
  c2: () => without("-XX:TieredStopAtLevel="),
  jfr: () => [
    shipped.entrypoint[0],
    "-XX:StartFlightRecording=filename=/var/lib/sluice/start.jfr,settings=profile",
    ...shipped.entrypoint.slice(1),
  ],
};
const variants: Variant[] = [];
for (const name of variantNames) {
  if (compareImage && name === compareName) {
    const other = await imageInfo(compareImage);
    variants.push({ name, image: compareImage, imageEnv: other.env, entrypoint: null });
    continue;
  }
  const entry = JVM_VARIANTS[name];
  if (!entry) {
    throw new Error(
      `unknown variant ${name}; known: ${
        Object.keys(JVM_VARIANTS).join(", ")
      } (or --compare-image)`,
    );
  }
  variants.push({ name, image, imageEnv: shipped.env, entrypoint: entry() });
}

// ---- one application, idle group positioned at 0; one plan per image (the artifact names it)
const input = `bench_start_in_${tag}`;
const output = `bench_start_out_${tag}`;
const appId = `sluice-bench-start-${tag}`;
const ids = {
  input: await kafka.createTopic(input, PARTITIONS),
  output: await kafka.createTopic(output, PARTITIONS),
};
await kafka.setGroupOffsets(appId, input, new Map([[0, 0n], [1, 0n], [2, 0n]]));
const volume = `${appId}-state`;
await d.createVolume({ Name: volume, Labels: labels });
const plans = new Map<string, { path: string; sha256: string }>();
for (const v of variants) {
  if (plans.has(v.image)) continue;
  plans.set(
    v.image,
    await writePlan(dir, `plan-${plans.size}`, {
      applicationId: appId,
      inputTopic: input,
      outputTopic: output,
      predicate: amountAtLeastAndPaid(100),
      image: v.image,
      network: env.network,
      bootstrap: env.bootstrapInternal,
      clusterId: env.clusterId,
      inputTopicId: ids.input,
      outputTopicId: ids.output,
    }),
  );
}
const events = await dockerEvents("dev.sluice.bench", benchLabel);

/** The first stderr line matching `re`, as epoch ms of its ISO timestamp (runner log format). */
function logTime(stderr: string, re: RegExp): number | null {
  const line = stderr.split("\n").find((l) => re.test(l));
  const m = line && /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d),(\d{3})/.exec(line);
  return m ? Date.parse(`${m[1]}.${m[2]}Z`) : null;
}

async function sample(v: Variant, rep: number) {
  const generation = `start-${v.name}-${rep}`;
  const plan = plans.get(v.image)!;
  const id = await createRunner(d, {
    name: `${appId}-${generation}`,
    image: v.image,
    imageEnv: v.imageEnv,
    network: env.network,
    planPath: plan.path,
    planSha256: plan.sha256,
    generation,
    volume,
    labels: { ...labels, [LABEL.applicationId]: appId },
    ...(v.entrypoint ? { entrypoint: v.entrypoint } : {}),
  });
  try {
    const tCall = Date.now();
    await d.getContainer(id).start();
    const status = await until(
      `${v.name} RUNNING`,
      async () => {
        const s = await readStatus(port.readContainerFile, id);
        if (s?.state === "FAILED") throw new Error(`runner failed: ${JSON.stringify(s)}`);
        return s?.state === "RUNNING" && s.generation === generation ? s : undefined;
      },
      180_000,
      50,
    );
    const started = await events.first(id, "start", tCall - 1000, 10_000) ?? tCall;
    const stderr = await containerLog(d, id, "stderr");
    const main = dockerTimeMs(String(status.started_at));
    const gate = logTime(stderr, /identity gate passed/);
    const running = dockerTimeMs(String(status.running_at));
    const r = {
      variant: v.name,
      rep,
      start_to_main_ms: main - started,
      main_to_gate_ms: gate === null ? null : gate - main,
      gate_to_running_ms: gate === null ? null : running - gate,
      start_to_running_ms: running - started,
      loadavg1: loadavg1(),
    };
    console.log(
      `${v.name} #${rep}: start → RUNNING ${sec(r.start_to_running_ms)} s (main ${
        sec(r.start_to_main_ms)
      }, gate ${sec(r.main_to_gate_ms)}, join ${sec(r.gate_to_running_ms)}); load ${r.loadavg1}`,
    );
    return r;
  } finally {
    // the next sample starts on an idle group: clean close (leave group), outside the timing
    await d.getContainer(id).stop({ t: 30 }).catch(() => {});
    await d.getContainer(id).remove({ force: true }).catch(() => {});
  }
}

const samples: Array<Awaited<ReturnType<typeof sample>>> = [];
try {
  for (let rep = 0; rep < reps; rep++) {
    const order = variants.map((_, i) => variants[(i + rep) % variants.length]);
    for (const v of order) {
      samples.push(await sample(v, rep));
      await sleep(500);
    }
  }
} finally {
  events.stop();
  await d.getVolume(volume).remove({ force: true }).catch(() => {});
  await kafka.close();
  await Deno.remove(dir, { recursive: true });
}

const KEYS = [
  ["start_to_main_ms", "start → JVM main (plan checked)"],
  ["main_to_gate_ms", "JVM main → identity gate passed"],
  ["gate_to_running_ms", "gate → RUNNING (Streams start, join, tasks)"],
  ["start_to_running_ms", "start → RUNNING"],
] as const;
const first = variants[0].name;
const summary = Object.fromEntries(variants.map((v) => {
  const mine = samples.filter((s) => s.variant === v.name);
  return [
    v.name,
    Object.fromEntries(KEYS.map(([k]) => {
      const xs = mine.map((s) => s[k]);
      return [k, { median: median(xs), min: min(xs), max: max(xs) }];
    })),
  ];
}));
const paired = Object.fromEntries(
  variants.slice(1).map((v) => {
    const rs = Array.from({ length: reps }, (_, rep) => {
      const a = samples.find((s) => s.variant === v.name && s.rep === rep)?.start_to_running_ms;
      const b = samples.find((s) => s.variant === first && s.rep === rep)?.start_to_running_ms;
      return a && b ? a / b : null;
    });
    return [v.name, { per_rep: rs, median: median(rs) }];
  }),
);
console.log(
  `\nRunner start, ${reps} repetitions (seconds; median / min / max)\n` +
    table(
      ["phase", ...variants.map((v) => v.name)],
      KEYS.map(([k, label]) => [
        label,
        ...variants.map((v) => {
          const s = summary[v.name][k];
          return `${sec(s.median)} / ${sec(s.min)} / ${sec(s.max)}`;
        }),
      ]),
    ),
);
for (const [name, p] of Object.entries(paired)) {
  console.log(
    `${name}/${first} start → RUNNING per repetition: ${
      p.per_rep.map((x) => num(x)).join(", ")
    }; median ${num(p.median)}`,
  );
}
const path = await writeResult("runner_start", {
  name: "runner_start",
  environment: envInfo,
  parameters: {
    reps,
    partitions: PARTITIONS,
    variants: variants.map((v) => ({ name: v.name, image: v.image, entrypoint: v.entrypoint })),
    status_poll_ms: 50,
  },
  samples,
  medians: summary,
  paired_over_first: paired,
});
console.log(`wrote ${path}`);
