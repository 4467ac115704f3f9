/**
 * What the Kafka Connect worker image costs to build and to start (issue 16's closing note):
 *
 * - **jars, cold**: resolving the Connect jars from Maven Central into an empty local Maven
 *   repository (`images/connect/pom.xml`, as scripts/bootstrap.sh does);
 * - **image, cold**: `docker build --no-cache` of `images/connect/` from the cached jars, into a
 *   throwaway tag (the shared image is never touched);
 * - **warm**: the two bootstrap steps when nothing changed (their own printed durations);
 * - **start → ready**: `startConnectWorker` (harness/connect.ts) on the environment's broker,
 *   from `docker create` to the REST readiness checks, each start with a fresh worker group
 *   (so it also creates its three internal topics), `--starts` times (default 5).
 *
 *   deno run -A bench/connect_image.ts [--starts=5] [--skip-cold]
 *
 * Uses the environment named by `SLUICE_ENV_FILE` (deno task bench), or starts its own broker.
 * Writes `bench/results/connect_image.json`. Timings are wall clock on a shared machine; the
 * load average is recorded beside each.
 * @module
 */
import { join } from "node:path";
import { dockerCli } from "../harness/docker.ts";
import { sharedEnv } from "../harness/env.ts";
import { removeConnectData, startConnectWorker } from "../harness/connect.ts";
import { BASE_IMAGE, KAFKA_VERSION } from "../harness/images.ts";
import { environment, flags, loadavg1, median, ROOT, table, writeResult } from "./_common.ts";

const f = flags(Deno.args);
const starts = Number(f.get("starts", "5"));
const skipCold = f.get("skip-cold", "false") === "true";

async function timed(
  cmd: string,
  args: string[],
  cwd = ROOT,
): Promise<{ ms: number; out: string }> {
  const t0 = performance.now();
  const r = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  const ms = performance.now() - t0;
  const out = new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr);
  if (r.code !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} exited ${r.code}:\n${out.slice(-2000)}`);
  }
  return { ms, out };
}

const result: Record<string, unknown> = { environment: await environment() };
const tmp = await Deno.makeTempDir({ prefix: "sluice-connect-bench-" });
try {
  if (!skipCold) {
    // jars, cold: an empty local Maven repository
    const load = loadavg1();
    const jars = await timed("mvn", [
      "-B",
      "-q",
      "-f",
      "images/connect/pom.xml",
      `-Dkafka.version=${KAFKA_VERSION}`,
      `-Dmaven.repo.local=${tmp}/m2`,
      "dependency:copy-dependencies",
      "-DincludeScope=runtime",
      `-DoutputDirectory=${tmp}/libs`,
    ]);
    let count = 0;
    for await (const e of Deno.readDir(`${tmp}/libs`)) if (e.name.endsWith(".jar")) count++;
    result.jars_cold = { ms: Math.round(jars.ms), jars: count, loadavg: load };

    // image, cold: the Dockerfile from scratch on the base, from the cached jars
    const ctx = `${tmp}/ctx`;
    await Deno.mkdir(ctx);
    for (
      const file of [
        "Dockerfile",
        "connect-distributed.properties",
        "log4j2.properties",
        "connect-start.sh",
      ]
    ) {
      await Deno.copyFile(`${ROOT}images/connect/${file}`, join(ctx, file));
    }
    const libs = `${ROOT}.cache/connect-libs/${KAFKA_VERSION}`;
    await timed("cp", ["-r", `${libs}/libs`, `${libs}/plugins`, ctx]);
    const tag = `sluice/connect:measure-${crypto.randomUUID().slice(0, 8)}`;
    const loadImage = loadavg1();
    const image = await timed(dockerCli(), [
      "build",
      "-q",
      "--no-cache",
      "--build-arg",
      `BASE=${BASE_IMAGE}`,
      "-t",
      tag,
      ctx,
    ]);
    const size = (await timed(dockerCli(), ["image", "inspect", "-f", "{{.Size}}", tag])).out
      .trim();
    await timed(dockerCli(), ["rmi", tag]);
    result.image_cold = { ms: Math.round(image.ms), bytes: Number(size), loadavg: loadImage };
  }

  // warm: the bootstrap steps as they print themselves when nothing changed
  const boot = await timed("bash", ["scripts/bootstrap.sh"]);
  const step = (name: string) => {
    const m = new RegExp(`\\[bootstrap\\] ${name}\\s+(.*?)\\s+([0-9.]+)s\\s*$`, "m").exec(boot.out);
    return m ? { what: m[1], seconds: Number(m[2]) } : null;
  };
  result.warm = { jars: step("connect-jars"), image: step("connect-image") };

  // start → ready, each with a fresh worker group on the environment's broker
  const env = await sharedEnv();
  const samples: Array<{ ready_ms: number; loadavg: number | null }> = [];
  for (let i = 0; i < starts; i++) {
    const load = loadavg1();
    const runId = `${env.runId}-cb${crypto.randomUUID().slice(0, 6)}`;
    const w = await startConnectWorker({
      runId,
      network: env.network,
      labels: env.labels,
      bootstrapInternal: env.bootstrapInternal,
      clusterId: env.clusterId,
      alias: `connect-bench-${i}`,
      groupId: `sluice-connect-bench-${crypto.randomUUID().slice(0, 8)}`,
    });
    samples.push({ ready_ms: w.readyMs, loadavg: load });
    await timed(dockerCli(), ["rm", "-f", w.containerId]);
    await removeConnectData(w);
  }
  result.start_to_ready = {
    samples,
    median_ms: median(samples.map((s) => s.ready_ms)),
  };
} finally {
  await Deno.remove(tmp, { recursive: true });
}

const path = await writeResult("connect_image", result);
const sec = (ms: unknown) => typeof ms === "number" ? `${(ms / 1000).toFixed(1)} s` : "-";
const r = result as {
  jars_cold?: { ms: number; jars: number; loadavg: number | null };
  image_cold?: { ms: number; bytes: number; loadavg: number | null };
  warm: { jars: { seconds: number } | null; image: { seconds: number } | null };
  start_to_ready: {
    samples: Array<{ ready_ms: number; loadavg: number | null }>;
    median_ms: number;
  };
};
console.log(table(["what", "result"], [
  [
    "connect jars, cold (empty Maven repository)",
    r.jars_cold
      ? `${sec(r.jars_cold.ms)} (${r.jars_cold.jars} jars, load ${r.jars_cold.loadavg})`
      : "skipped",
  ],
  [
    "connect image, cold (docker build --no-cache)",
    r.image_cold
      ? `${sec(r.image_cold.ms)} (${
        (r.image_cold.bytes / 1e6).toFixed(0)
      } MB, load ${r.image_cold.loadavg})`
      : "skipped",
  ],
  [
    "both, warm (bootstrap, nothing to do)",
    `${r.warm.jars?.seconds ?? "?"} s + ${r.warm.image?.seconds ?? "?"} s`,
  ],
  [
    "worker create → ready",
    `${
      r.start_to_ready.samples.map((s) => `${sec(s.ready_ms)} (load ${s.loadavg})`).join(", ")
    }; median ${sec(r.start_to_ready.median_ms)}`,
  ],
]));
console.log(`→ ${path}`);
