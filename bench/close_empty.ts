/**
 * Close → consumer group Empty: the runner's leave strategy (`SLUICE_LEAVE_MODE=internal`,
 * `main.consumer.internal.leave.group.on.close=true`) against Kafka Streams' default (`none`:
 * the member stays until `session.timeout.ms`, 45 s). It supersedes the former
 * runner/measure_close_empty.ts (which also measured static membership; figures in docs/runner.md).
 *
 *   deno run -A bench/close_empty.ts [--reps=5] [--none-reps=1] [--modes=internal,none]
 *
 * Each sample: a fresh application ID, group positioned at offset 0, a runner container created
 * exactly as sluice creates one, RUNNING (status file), the group Stable with one member; then
 * `docker stop -t 30`. Timestamps: SIGTERM = the daemon's `kill` event, exit = its `die` event,
 * Empty = the first poll (every 25 ms, describeGroups from the host) that sees the group Empty
 * with no members. Close offsets read = the runner's own measure of the Admin read of the group's
 * committed offsets it does after every clean close (the close vector of its status file).
 * CLOSED written = its status file's last write (`updated_at`): what the JVM's exit adds after it
 * is the die event's distance from it.
 * @module
 */
import Docker from "dockerode";
import { dockerCli } from "../harness/docker.ts";
import { sharedEnv } from "../harness/env.ts";
import { createTopic } from "../harness/kafka.ts";
import { dockerodePort } from "../lib/providers/docker/dockerode.ts";
import { platformaticKafka } from "../lib/providers/kafka/platformatic.ts";
import { amountAtLeastAndPaid, buildRunnerImage, writePlan } from "../tests/runner_fixture.ts";
import {
  dockerTimeMs,
  environment,
  flags,
  max,
  median,
  min,
  sec,
  table,
  until,
  writeResult,
} from "./_common.ts";
import { createRunner, dockerEvents, groupWatcher, readStatus } from "./_runner.ts";

const f = flags(Deno.args);
const reps = Number(f.get("reps", "5"));
const noneReps = Number(f.get("none-reps", "1"));
const modes = f.get("modes", "internal,none").split(",");

/**
 * The runner's own measure of the Admin read of the group's committed offsets after a clean close
 * (its "close offsets read in N ms" line); null when the line is absent (the read failed).
 */
async function closeReadMs(id: string): Promise<number | null> {
  const o = await new Deno.Command(dockerCli(), {
    args: ["logs", id],
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const text = new TextDecoder().decode(o.stdout) + new TextDecoder().decode(o.stderr);
  const m = text.match(/sluice-runner: close offsets read in (\d+) ms/);
  return m ? Number(m[1]) : null;
}

const envInfo = await environment();
const env = await sharedEnv();
const image = await buildRunnerImage();
const d = new Docker();
const port = dockerodePort(d);
const kafka = platformaticKafka(env.bootstrapHost);
const imageEnv = (await port.inspectImage(image))?.env ?? [];
const tag = crypto.randomUUID().slice(0, 6);
const inputTopic = `bench_ce_in_${tag}`;
const outputTopic = `bench_ce_out_${tag}`;
const inputTopicId = await createTopic(env.bootstrapHost, inputTopic, 1);
const outputTopicId = await createTopic(env.bootstrapHost, outputTopic, 1);
const dir = await Deno.makeTempDir({ prefix: "sluice-bench-ce-" });
const labels = { ...env.labels, "dev.sluice.bench": `close_empty-${tag}` };
const events = await dockerEvents("dev.sluice.bench", `close_empty-${tag}`);
const samples: Array<Record<string, unknown>> = [];

try {
  const order: string[] = [];
  for (const m of modes) {
    for (let i = 0; i < (m === "none" ? noneReps : reps); i++) order.push(m);
  }
  for (const [i, mode] of order.entries()) {
    const appId = `sluice-bench-ce-${tag}-${mode}-${i}`;
    const volume = `${appId}-state`;
    await d.createVolume({ Name: volume, Labels: labels });
    const plan = await writePlan(dir, appId, {
      applicationId: appId,
      inputTopic,
      outputTopic,
      predicate: amountAtLeastAndPaid(100),
      image,
      network: env.network,
      bootstrap: env.bootstrapInternal,
      clusterId: env.clusterId,
      inputTopicId,
      outputTopicId,
    });
    await kafka.setGroupOffsets(appId, inputTopic, new Map([[0, 0n]]));
    const watcher = groupWatcher(kafka, appId, 25);
    try {
      const id = await createRunner(d, {
        name: appId,
        image,
        imageEnv,
        network: env.network,
        planPath: plan.path,
        planSha256: plan.sha256,
        generation: `g${i}`,
        volume,
        labels,
        extraEnv: [`SLUICE_LEAVE_MODE=${mode}`],
      });
      const t0 = Date.now();
      await d.getContainer(id).start();
      await until(
        "RUNNING",
        async () => {
          const s = await readStatus(port.readContainerFile, id);
          if (s?.state === "FAILED") throw new Error(`runner failed: ${JSON.stringify(s)}`);
          return s?.state === "RUNNING" ? true : undefined;
        },
        120_000,
        100,
      );
      const running = Date.now() - t0;
      await until("group Stable with one member", () => {
        const last = watcher.log.at(-1);
        return Promise.resolve(last?.state === "Stable" && last.members === 1 ? true : undefined);
      });
      const stop0 = Date.now();
      await d.getContainer(id).stop({ t: 30 });
      const stop1 = Date.now();
      const kill = await events.first(id, "kill", stop0 - 1000);
      const die = await events.first(id, "die", stop0 - 1000);
      const empty = await watcher.emptySince(stop0, 90_000);
      const inspect = await d.getContainer(id).inspect();
      const closeRead = await closeReadMs(id);
      const closed = await readStatus(port.readContainerFile, id);
      const sigterm = kill ?? stop0;
      const closedAt = typeof closed?.updated_at === "string"
        ? dockerTimeMs(closed.updated_at)
        : null;
      const s = {
        mode,
        exit_code: inspect.State.ExitCode,
        start_to_running_ms: running,
        docker_stop_returned_ms: stop1 - stop0,
        sigterm_to_exit_ms: die !== null ? die - sigterm : null,
        sigterm_to_empty_ms: empty !== null ? empty - sigterm : null,
        exit_to_empty_ms: empty !== null && die !== null ? empty - die : null,
        // the status file's last write (CLOSED) → the daemon's die event: the JVM's own exit
        sigterm_to_closed_written_ms: closedAt !== null ? closedAt - sigterm : null,
        closed_written_to_exit_ms: closedAt !== null && die !== null ? die - closedAt : null,
        close_read_ms: closeRead,
        group_log: watcher.log.map((x) => ({ ...x, t: x.t - sigterm })),
      };
      console.log(
        `${mode} #${i}: SIGTERM→exit ${sec(s.sigterm_to_exit_ms)} s, SIGTERM→Empty ${
          sec(s.sigterm_to_empty_ms)
        } s, close offsets read ${closeRead ?? "–"} ms, exit ${s.exit_code}`,
      );
      samples.push(s);
    } finally {
      await watcher.stop();
      await d.getContainer(appId).remove({ force: true }).catch(() => {});
      await d.getVolume(volume).remove({ force: true }).catch(() => {});
    }
  }
} finally {
  events.stop();
  await kafka.close();
  await Deno.remove(dir, { recursive: true });
}

const summary: Record<string, Record<string, unknown>> = {};
const rows: string[][] = [];
for (const mode of modes) {
  const ss = samples.filter((s) => s.mode === mode);
  const col = (k: string) => ss.map((s) => s[k] as number | null);
  summary[mode] = {
    n: ss.length,
    sigterm_to_exit_ms: {
      median: median(col("sigterm_to_exit_ms")),
      max: max(col("sigterm_to_exit_ms")),
    },
    sigterm_to_empty_ms: {
      median: median(col("sigterm_to_empty_ms")),
      min: min(col("sigterm_to_empty_ms")),
      max: max(col("sigterm_to_empty_ms")),
    },
    exit_to_empty_ms: {
      median: median(col("exit_to_empty_ms")),
      max: max(col("exit_to_empty_ms")),
    },
    docker_stop_returned_ms: {
      median: median(col("docker_stop_returned_ms")),
      max: max(col("docker_stop_returned_ms")),
    },
    sigterm_to_closed_written_ms: {
      median: median(col("sigterm_to_closed_written_ms")),
      max: max(col("sigterm_to_closed_written_ms")),
    },
    close_read_ms: {
      median: median(col("close_read_ms")),
      min: min(col("close_read_ms")),
      max: max(col("close_read_ms")),
    },
    exit_codes: [...new Set(ss.map((s) => s.exit_code))],
  };
  const g = (k: string, q: string) => (summary[mode][k] as Record<string, number | null>)[q];
  rows.push([
    mode === "internal"
      ? "internal (runner's choice)"
      : mode === "none"
      ? "none (Kafka default)"
      : mode,
    String(ss.length),
    `${sec(g("sigterm_to_exit_ms", "median"))} / ${sec(g("sigterm_to_exit_ms", "max"))}`,
    `${sec(g("sigterm_to_empty_ms", "median"))} / ${sec(g("sigterm_to_empty_ms", "max"))}`,
    `${sec(g("exit_to_empty_ms", "median"))} / ${sec(g("exit_to_empty_ms", "max"))}`,
    `${sec(g("sigterm_to_closed_written_ms", "median"))} / ${
      sec(g("sigterm_to_closed_written_ms", "max"))
    }`,
    `${sec(g("docker_stop_returned_ms", "median"))}`,
    `${sec(g("close_read_ms", "median"))} / ${sec(g("close_read_ms", "max"))}`,
    (summary[mode].exit_codes as number[]).join(","),
  ]);
}
const ratio = summary.internal && summary.none
  ? ((summary.internal.sigterm_to_empty_ms as { median: number }).median /
    (summary.none.sigterm_to_empty_ms as { median: number }).median)
  : null;
const sessionTimeoutRatio = summary.internal
  ? (summary.internal.sigterm_to_empty_ms as { median: number }).median / 45_000
  : null;
console.log(
  "\nClose → group Empty (seconds, median / max)\n" +
    table(
      [
        "leave mode",
        "n",
        "SIGTERM→exit",
        "SIGTERM→Empty",
        "exit→Empty",
        "SIGTERM→CLOSED written",
        "docker stop",
        "close offsets read",
        "exit",
      ],
      rows,
    ),
);
if (ratio !== null) {
  console.log(
    `internal/none = ${ratio.toFixed(4)} (×${(1 / ratio).toFixed(0)} faster); ` +
      `Empty wait / session.timeout.ms (45 s) = ${sessionTimeoutRatio?.toFixed(4)}`,
  );
}
const path = await writeResult("close_empty", {
  name: "close_empty",
  environment: envInfo,
  parameters: { reps, none_reps: noneReps, modes, poll_ms: 25 },
  samples,
  summary,
  ratios: { internal_over_none: ratio, internal_empty_over_session_timeout: sessionTimeoutRatio },
});
console.log(`wrote ${path}`);
