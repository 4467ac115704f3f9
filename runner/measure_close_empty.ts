/**
 * Measures how long the runner's consumer group stays non-Empty after `docker stop`, for each
 * leave strategy of Kafka Streams 4.1 (SLUICE_LEAVE_MODE): `internal`
 * (main.consumer.internal.leave.group.on.close=true), `static` (group.instance.id +
 * close(CloseOptions.leaveGroup(true))) and `none` (Streams' default). Results go to
 * docs/runner.md.
 *
 *   deno run -A runner/measure_close_empty.ts [repetitions=3] [modes=internal,static,none]
 *
 * Starts its own environment (harness/env.ts) and removes everything it created.
 * @module
 */
import { startEnv } from "../harness/env.ts";
import { createTopic } from "../harness/kafka.ts";
import {
  amountAtLeastAndPaid,
  buildRunnerImage,
  createVolume,
  docker,
  removeAll,
  runRunnerToExit,
  startRunner,
  waitFor,
  waitForState,
  writePlan,
} from "../tests/runner_fixture.ts";

const reps = Number(Deno.args[0] ?? "3");
const modes = (Deno.args[1] ?? "internal,static,none").split(",");

await using env = await startEnv();
const image = await buildRunnerImage();
const inputTopic = "m-in";
const outputTopic = "m-out";
const inputTopicId = await createTopic(env.bootstrapHost, inputTopic, 1);
const outputTopicId = await createTopic(env.bootstrapHost, outputTopic, 1);
const dir = await Deno.makeTempDir({ prefix: "sluice-measure-" });
const containers: string[] = [];
const volumes: string[] = [];
const results: Array<Record<string, unknown>> = [];

function ms(rfc3339: string): number {
  // Docker prints nanoseconds; Date.parse keeps milliseconds
  const m = /^(.*\.\d{3})\d*(Z|[+-].*)$/.exec(rfc3339);
  return Date.parse(m ? m[1] + m[2] : rfc3339);
}

try {
  for (const mode of modes) {
    for (let i = 0; i < (mode === "none" ? 1 : reps); i++) {
      const tag = `${mode}-${i}-${crypto.randomUUID().slice(0, 6)}`;
      const appId = `sluice-m-${tag}`;
      const volume = `sluice-m-${tag}`;
      volumes.push(volume);
      await createVolume(volume, env.labels);
      const plan = await writePlan(dir, tag, {
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
      const base = {
        image,
        network: env.network,
        volume,
        planPath: plan.path,
        planSha256: plan.sha256,
        generation: tag,
        labels: env.labels,
      };
      containers.push(`${appId}-init`, `${appId}-run`, `${appId}-watch`);
      const init = await runRunnerToExit({
        ...base,
        name: `${appId}-init`,
        args: ["init-offsets"],
      });
      if (init.code !== 0) throw new Error(`init-offsets: ${init.stdout}${init.stderr}`);
      const t0 = Date.now();
      await startRunner({ ...base, name: `${appId}-run`, env: { SLUICE_LEAVE_MODE: mode } });
      await waitForState(`${appId}-run`, "RUNNING");
      const running = Date.now() - t0;
      // watcher on the network, polling describeConsumerGroups every 50 ms
      const w = ["run", "-d", "--name", `${appId}-watch`, "--network", env.network];
      for (const [k, v] of Object.entries({ ...env.labels, "sluice.test": "1" })) {
        w.push("--label", `${k}=${v}`);
      }
      await docker([
        ...w,
        "--entrypoint",
        "java",
        image,
        "-cp",
        "/opt/sluice/lib/*",
        "dev.sluice.runner.DevTools",
        env.bootstrapInternal,
        "watch-group",
        appId,
        "90",
      ]);
      await waitFor(
        "watcher sees the member",
        async () =>
          (await docker(["logs", `${appId}-watch`])).stdout.includes(" Stable 1")
            ? true
            : undefined,
      );
      const stop0 = Date.now();
      await docker(["stop", "-t", "30", `${appId}-run`]);
      const stop1 = Date.now();
      const inspect = JSON.parse((await docker(["inspect", `${appId}-run`])).stdout)[0];
      const finished = ms(inspect.State.FinishedAt);
      const emptyAt = await waitFor(
        "group Empty",
        async () => {
          const lines = (await docker(["logs", `${appId}-watch`])).stdout.split("\n");
          const l = lines.find((x) => / (Empty|Dead) /.test(x));
          return l ? Number(l.split(" ")[0]) : undefined;
        },
        90_000,
        100,
      );
      const r = {
        mode,
        exit: inspect.State.ExitCode,
        start_to_running_ms: running,
        docker_stop_ms: stop1 - stop0,
        sigterm_to_empty_ms: emptyAt - stop0,
        exit_to_empty_ms: emptyAt - finished,
      };
      console.log(JSON.stringify(r));
      results.push(r);
      await removeAll([`${appId}-run`, `${appId}-watch`, `${appId}-init`], [volume]);
    }
  }
} finally {
  await removeAll(containers, volumes);
  await Deno.remove(dir, { recursive: true });
}
console.log(JSON.stringify(results, null, 2));
