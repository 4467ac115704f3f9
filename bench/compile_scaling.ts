/**
 * Compile and offline-plan scaling (the online observation's cost is `observe_scaling.ts`).
 *
 *   deno run -A bench/compile_scaling.ts [--sizes=10,100,1000] [--reps=5]
 *
 * Offline: for each size a project of N models is generated (one managed source, N SQL files,
 * N output topics) and measured in its own subprocess (a clean process for a clean peak RSS,
 * read from VmHWM in /proc/self/status): `loadProject`, `compile`, `planProject` + `sealPlan`
 * from empty state, and the SDK's end-to-end `plan({ offline: true })`. The first iteration is
 * reported as "cold"; the median of the following ones as "warm".
 *
 * @module
 */
import process from "node:process";
import { environment, flags, max, median, min, num, ROOT, table, writeResult } from "./_common.ts";

const SCHEMA = `      - { name: order_id, type: STRING }
      - { name: amount, type: BIGINT }
      - { name: paid, type: BOOLEAN }
      - { name: customer, type: STRING, nullable: true }`;

/** Write a project with `n` models into a new temporary directory. */
export async function generateProject(n: number, extra: { image?: string; network?: string } = {}) {
  const dir = await Deno.makeTempDir({ prefix: `sluice-bench-p${n}-` });
  await Deno.mkdir(`${dir}/models`);
  const name = (i: number) => `m${String(i).padStart(5, "0")}`;
  const models: string[] = [];
  for (let i = 0; i < n; i++) {
    const m = name(i);
    models.push(`  ${m}:\n    sql: models/${m}.sql\n    output:\n      topic: out_${m}`);
    // vary the predicate so that artifacts differ like real ones
    await Deno.writeTextFile(
      `${dir}/models/${m}.sql`,
      `SELECT order_id, amount, paid\nFROM raw_orders\nWHERE amount >= ${
        100 + i
      } AND paid = TRUE AND (customer IS NULL OR customer <> 'c-${i}')\n`,
    );
  }
  const manifest = `project: bench${n}
kafka:
  bootstrap_host: localhost:19092
  bootstrap_internal: kafka:9092
network: ${extra.network ?? "sluice-net"}
image: ${extra.image ?? `sha256:${"0".repeat(64)}`}
initial_offsets: earliest
state:
  backend: local
  dir: .sluice/state
sources:
  raw_orders:
    kind: managed
    partitions: 3
    schema:
${SCHEMA}
models:
${models.join("\n")}
`;
  await Deno.writeTextFile(`${dir}/sluice.yaml`, manifest);
  return { dir, models: Array.from({ length: n }, (_, i) => name(i)) };
}

function hwmKb(): number {
  const s = Deno.readTextFileSync("/proc/self/status");
  return Number(/VmHWM:\s+(\d+)/.exec(s)?.[1] ?? "0");
}

/** Child mode: measure one project directory, print one JSON line. */
async function child(dir: string, reps: number) {
  const { loadProject } = await import("../lib/project/load.ts");
  const { compile } = await import("../lib/project/compile.ts");
  const { planProject } = await import("../lib/plan/plan.ts");
  const { sealPlan } = await import("../lib/plan/plan_file.ts");
  const { projectSourceSha256 } = await import("../lib/plan/source_hash.ts");
  const { plan } = await import("../lib/runtime/session.ts");
  const hwmBefore = hwmKb();
  const rssBefore = Deno.memoryUsage().rss;
  const samples: Array<Record<string, number>> = [];
  let models = 0;
  let planBytes = 0;
  let peakHeap = 0;
  for (let r = 0; r < reps; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const project = await loadProject(dir);
    const t1 = performance.now();
    const compiled = compile(project);
    const t2 = performance.now();
    const p = planProject({
      project,
      compiled,
      state: {
        ownership: null,
        checksum: null,
        identity: { store_id: "bench", backend: "local", address: dir },
      },
      observation: null,
      topics: null,
      now: new Date().toISOString(),
      sourceSha256: projectSourceSha256(project),
    });
    const sealed = sealPlan(p);
    const t3 = performance.now();
    const c1 = process.cpuUsage(c0);
    peakHeap = Math.max(peakHeap, Deno.memoryUsage().heapUsed);
    const e2e = await plan({ dir, offline: true });
    const t4 = performance.now();
    peakHeap = Math.max(peakHeap, Deno.memoryUsage().heapUsed);
    models = compiled.artifacts.length;
    planBytes = sealed.bytes.length;
    if (e2e.plan.actions.length === 0) throw new Error("offline plan has no actions");
    samples.push({
      load_ms: t1 - t0,
      compile_ms: t2 - t1,
      plan_ms: t3 - t2,
      load_compile_plan_ms: t3 - t0,
      load_compile_plan_cpu_ms: (c1.user + c1.system) / 1000,
      sdk_plan_offline_ms: t4 - t3,
    });
  }
  console.log(JSON.stringify({
    models,
    plan_bytes: planBytes,
    samples,
    peak_rss_kb: hwmKb(),
    rss_before_kb: Math.round(rssBefore / 1024),
    hwm_before_kb: hwmBefore,
    peak_heap_used_bytes: peakHeap,
  }));
}

async function main() {
  const f = flags(Deno.args);
  const sizes = f.get("sizes", "10,100,1000").split(",").map(Number);
  const reps = Number(f.get("reps", "5"));
  const env = await environment();
  const offline: Array<Record<string, unknown>> = [];
  for (const n of sizes) {
    const p = await generateProject(n);
    try {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          `${ROOT}bench/compile_scaling.ts`,
          "--child",
          p.dir,
          "--reps",
          `${reps}`,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout).trim().split("\n").pop() ?? "";
      if (out.code !== 0) {
        throw new Error(`child for ${n} models failed: ${new TextDecoder().decode(out.stderr)}`);
      }
      const r = JSON.parse(text) as {
        models: number;
        samples: Array<Record<string, number>>;
        peak_rss_kb: number;
        hwm_before_kb: number;
        plan_bytes: number;
        peak_heap_used_bytes: number;
      };
      const warm = r.samples.slice(1);
      const pick = (k: string) => ({
        cold: r.samples[0][k],
        warm_median: median(warm.map((s) => s[k])),
        warm_min: min(warm.map((s) => s[k])),
        warm_max: max(warm.map((s) => s[k])),
      });
      offline.push({
        models: r.models,
        plan_bytes: r.plan_bytes,
        load_ms: pick("load_ms"),
        compile_ms: pick("compile_ms"),
        plan_ms: pick("plan_ms"),
        load_compile_plan_ms: pick("load_compile_plan_ms"),
        load_compile_plan_cpu_ms: pick("load_compile_plan_cpu_ms"),
        sdk_plan_offline_ms: pick("sdk_plan_offline_ms"),
        per_model_ms: 0,
        peak_rss_mb: r.peak_rss_kb / 1024,
        rss_growth_mb: (r.peak_rss_kb - r.hwm_before_kb) / 1024,
        peak_heap_used_mb: r.peak_heap_used_bytes / 1048576,
        samples: r.samples,
      });
    } finally {
      await Deno.remove(p.dir, { recursive: true });
    }
  }
  type Stat = { cold: number; warm_median: number; warm_min: number };
  const st = (o: Record<string, unknown>, k: string) => o[k] as Stat;
  for (const o of offline) {
    const n = o.models as number;
    o.per_model_ms = st(o, "load_compile_plan_ms").warm_median / n;
    o.per_model_min_ms = st(o, "load_compile_plan_ms").warm_min / n;
    o.per_model_cpu_ms = st(o, "load_compile_plan_cpu_ms").warm_median / n;
    o.per_model_sdk_ms = st(o, "sdk_plan_offline_ms").warm_median / n;
  }
  const t1 = table(
    [
      "models",
      "load ms",
      "compile ms",
      "plan ms",
      "total ms",
      "CPU ms",
      "CPU/model ms",
      "SDK plan --offline ms",
      "cold total ms",
      "peak RSS MB",
      "RSS growth MB",
    ],
    offline.map((o) => [
      String(o.models),
      num(st(o, "load_ms").warm_median, 1),
      num(st(o, "compile_ms").warm_median, 1),
      num(st(o, "plan_ms").warm_median, 1),
      num(st(o, "load_compile_plan_ms").warm_median, 1),
      num(st(o, "load_compile_plan_cpu_ms").warm_median, 1),
      num(o.per_model_cpu_ms as number, 3),
      num(st(o, "sdk_plan_offline_ms").warm_median, 1),
      num(st(o, "load_compile_plan_ms").cold, 1),
      num(o.peak_rss_mb as number, 0),
      num(o.rss_growth_mb as number, 0),
    ]),
  );
  console.log(
    "\nCompile + offline plan (load+compile+planProject+seal; warm median of " +
      `${reps - 1} runs after a cold one; own process per size)\n` + t1,
  );
  // growth between the two largest sizes (fixed per-process costs dominate the smallest)
  const a = offline[Math.max(0, offline.length - 2)];
  const b = offline[offline.length - 1];
  const growth = {
    from_models: a.models,
    to_models: b.models,
    models_ratio: (b.models as number) / (a.models as number),
    wall_ratio: st(b, "load_compile_plan_ms").warm_median /
      st(a, "load_compile_plan_ms").warm_median,
    wall_min_ratio: st(b, "load_compile_plan_ms").warm_min / st(a, "load_compile_plan_ms").warm_min,
    cpu_ratio: st(b, "load_compile_plan_cpu_ms").warm_median /
      st(a, "load_compile_plan_cpu_ms").warm_median,
    rss_growth_ratio: (b.rss_growth_mb as number) / (a.rss_growth_mb as number),
  };
  console.log(
    `growth ${a.models}→${b.models} models (×${num(growth.models_ratio, 0)}): wall ×${
      num(growth.wall_ratio, 1)
    } (wall is inflated by other load), CPU ×${num(growth.cpu_ratio, 1)}, RSS growth ×${
      num(growth.rss_growth_ratio, 1)
    } — linear is ×${num(growth.models_ratio, 0)}`,
  );

  const path = await writeResult("compile_scaling", {
    name: "compile_scaling",
    environment: env,
    parameters: { sizes, reps },
    offline,
    growth,
  });
  console.log(`wrote ${path}`);
}

if (import.meta.main) {
  const f = flags(Deno.args);
  const dir = f.get("child", "");
  if (dir !== "") await child(dir, Number(f.get("reps", "5")));
  else await main();
}
