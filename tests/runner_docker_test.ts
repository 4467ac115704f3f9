// test-needs: env
/**
 * The runner image against a real broker (needs Docker and the broker image): exact output,
 * SIGTERM → exit 143 with offsets committed, a predicate replacement on the same volume and
 * application ID that continues from the committed offsets, the identity gate (exit 12), missing
 * offsets (exit 14), a plan checksum mismatch (exit 11) and a malformed record (exit 13, the
 * committed offset stays before it).
 */
import nodeAssert from "node:assert/strict";

const assert = (v: unknown, m?: string) => nodeAssert.ok(v, m);
const assertEquals = (a: unknown, b: unknown, m?: string) => nodeAssert.deepEqual(a, b, m);
import { sharedEnv } from "../harness/env.ts";
import { committedOffsets, createTopic, produce } from "../harness/kafka.ts";
import {
  amountAtLeastAndPaid,
  buildRunnerImage,
  createVolume,
  devTools,
  docker,
  exitCode,
  lastStdoutJson,
  readStatus,
  removeAll,
  runRunnerToExit,
  startRunner,
  waitFor,
  waitForState,
  writePlan,
} from "./runner_fixture.ts";
import type { PlanSpec, RunnerContainer } from "./runner_fixture.ts";

const debug = Deno.env.get("SLUICE_TEST_DEBUG") === "1";

function order(id: string, amount: number, paid: boolean): string {
  return JSON.stringify({ order_id: id, amount, paid, note: null });
}

Deno.test({
  name: "runner: output, SIGTERM close, predicate replacement, identity gate and decode stop",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const env = await sharedEnv();
    const image = await buildRunnerImage();
    const suffix = crypto.randomUUID().slice(0, 8);
    const inputTopic = `rt-in-${suffix}`;
    const outputTopic = `rt-out-${suffix}`;
    const appId = `sluice-rt-${suffix}`;
    const volume = `sluice-rt-${suffix}`;
    const earlyVolume = `sluice-rt-early-${suffix}`;
    const dir = await Deno.makeTempDir({ prefix: "sluice-rt-" });
    const containers: string[] = [];
    const inputTopicId = await createTopic(env.bootstrapHost, inputTopic, 1);
    const outputTopicId = await createTopic(env.bootstrapHost, outputTopic, 1);
    await createVolume(volume, env.labels);
    const spec = (predicate: unknown, over: Partial<PlanSpec> = {}): PlanSpec => ({
      applicationId: appId,
      inputTopic,
      outputTopic,
      predicate,
      image,
      network: env.network,
      bootstrap: env.bootstrapInternal,
      clusterId: env.clusterId,
      inputTopicId,
      outputTopicId,
      ...over,
    });
    const planA = await writePlan(dir, "plan-a", spec(amountAtLeastAndPaid(100)));
    const planB = await writePlan(dir, "plan-b", spec(amountAtLeastAndPaid(200)));
    const container = (
      name: string,
      plan: { path: string; sha256: string },
      extra: Partial<RunnerContainer> = {},
    ) => {
      const c: RunnerContainer = {
        name: `${appId}-${name}`,
        image,
        network: env.network,
        volume,
        planPath: plan.path,
        planSha256: plan.sha256,
        generation: name,
        labels: env.labels,
        ...extra,
      };
      containers.push(c.name);
      return c;
    };
    const committed = async () =>
      (await committedOffsets(env.bootstrapHost, appId, inputTopic)).get(0);
    // harness readAll waits for its timeout on transactional topics (the last offset is a
    // commit marker); DevTools stops at the last stable offset instead
    const output = async () =>
      (await devTools(image, env.network, env.labels, [
        env.bootstrapInternal,
        "consume",
        outputTopic,
        "1000",
        "30000",
      ]))
        .split("\n").filter((l) => l !== "").map((l) => JSON.parse(l)).map((r) =>
          `${r.key}=${r.value}`
        );

    try {
      await t.step("without committed offsets the runner refuses to start (exit 14)", async () => {
        const r = await runRunnerToExit(container("no-offsets", planA));
        assertEquals(r.code, 14, r.stdout + r.stderr.slice(-2000));
        const reason = await lastStdoutJson(`${appId}-no-offsets`);
        assertEquals(reason.sluice_runner_exit, 14);
        assertEquals(reason.reason, "OFFSETS_MISSING");
      });

      await t.step(
        "a TERM before Kafka Streams starts is a recorded clean close: CLOSED, 143",
        async () => {
          // the broker's host on a closed port: the identity gate's client retries the refused
          // connection until its 30 s timeout, and the TERM arrives there (an unresolvable host
          // can fail the gate at once)
          const host = env.bootstrapInternal.replace(/:\d+$/, "");
          const early = await writePlan(
            dir,
            "plan-early",
            spec(amountAtLeastAndPaid(100), { bootstrap: `${host}:1` }),
          );
          await createVolume(earlyVolume, env.labels);
          const c = container("early", early, { volume: earlyVolume });
          await startRunner(c);
          await waitForState(c.name, "STARTING");
          await docker(["stop", "-t", "30", c.name]);
          assertEquals(await exitCode(c.name), 143);
          const s = await readStatus(image, earlyVolume, env.labels);
          assertEquals([s.state, s.exit_code, s.reason, s.running_at], [
            "CLOSED",
            143,
            "SIGTERM",
            null,
          ]);
          assertEquals(s.generation, "early");
          assertEquals(s.plan_sha256, early.sha256);
        },
      );

      await t.step("init-offsets positions the group at initial_offsets", async () => {
        const r = await runRunnerToExit(container("init", planA, { args: ["init-offsets"] }));
        assertEquals(r.code, 0, r.stdout + r.stderr.slice(-2000));
        assertEquals(
          JSON.parse(r.stdout.trim().split("\n").pop()!),
          { group: appId, partitions: [{ initialized: true, offset: 0, partition: 0 }] },
        );
        assertEquals(await committed(), 0n);
        // a second run keeps the committed offset
        const again = await runRunnerToExit(container("init2", planA, { args: ["init-offsets"] }));
        assertEquals(again.code, 0);
        assert(again.stdout.includes('"initialized":false'));
      });

      await t.step("predicate A: exact output, keys preserved, tombstone dropped", async () => {
        await produce(env.bootstrapHost, inputTopic, [
          { key: "k1", value: order("o1", 150, true) },
          { key: "k2", value: order("o2", 99, true) },
          {
            key: "k3",
            value: order("o3", 9007199254740993, true).replace(
              "9007199254740992",
              "9007199254740993",
            ),
          },
          { key: "k4", value: order("o4", 150, false) },
          { key: "k5", value: null },
        ]);
        const t0 = Date.now();
        const lap = (what: string) => debug && console.log(`  ${what}: ${Date.now() - t0} ms`);
        await startRunner(container("gen-a", planA));
        lap("started");
        await waitForState(`${appId}-gen-a`, "RUNNING");
        lap("RUNNING");
        const status = await readStatus(image, volume, env.labels);
        lap("status read");
        assertEquals(status.state, "RUNNING");
        assertEquals(status.generation, "gen-a");
        assertEquals(status.plan_sha256, planA.sha256);
        await waitFor(
          "offset 5 committed",
          async () => (await committed()) === 5n ? true : undefined,
        );
        assertEquals(await output(), [
          'k1={"order_id":"o1","amount":150}',
          'k3={"order_id":"o3","amount":9007199254740993}',
        ]);
      });

      await t.step("docker stop → exit 143, status CLOSED, offsets committed", async () => {
        await docker(["stop", "-t", "30", `${appId}-gen-a`]);
        assertEquals(await exitCode(`${appId}-gen-a`), 143);
        const status = await readStatus(image, volume, env.labels);
        assertEquals(status.state, "CLOSED");
        assertEquals(status.exit_code, 143);
        assertEquals(await committed(), 5n);
      });

      await t.step(
        "predicate B on the same volume continues from the committed offsets",
        async () => {
          await produce(env.bootstrapHost, inputTopic, [
            { key: "k6", value: order("o6", 150, true) },
            { key: "k7", value: order("o7", 250, true) },
            { key: "k8", value: order("o8", 300, false) },
          ]);
          await startRunner(container("gen-b", planB));
          await waitForState(`${appId}-gen-b`, "RUNNING");
          await waitFor(
            "offset 8 committed",
            async () => (await committed()) === 8n ? true : undefined,
          );
          // no replay of k1..k5 (k1 and k3 would pass B's filter again), no skip of k6..k8
          assertEquals(await output(), [
            'k1={"order_id":"o1","amount":150}',
            'k3={"order_id":"o3","amount":9007199254740993}',
            'k7={"order_id":"o7","amount":250}',
          ]);
          const status = await readStatus(image, volume, env.labels);
          assertEquals(status.generation, "gen-b");
          assertEquals(status.plan_sha256, planB.sha256);
        },
      );

      await t.step("a malformed record stops the runner (exit 13) before its offset", async () => {
        await produce(env.bootstrapHost, inputTopic, [{
          key: "k9",
          value: order("o9", 500, true),
        }]);
        await waitFor(
          "offset 9 committed",
          async () => (await committed()) === 9n ? true : undefined,
        );
        await produce(env.bootstrapHost, inputTopic, [
          { key: "k10", value: '{"order_id":1,"amount":1,"paid":true,"note":null}' },
          { key: "k11", value: order("o11", 600, true) },
        ]);
        const code = Number((await docker(["wait", `${appId}-gen-b`])).stdout.trim());
        assertEquals(code, 13);
        const reason = await lastStdoutJson(`${appId}-gen-b`);
        assertEquals(reason.sluice_runner_exit, 13);
        assertEquals(reason.reason, "DECODE_WRONG_TYPE");
        assert(String(reason.detail).includes(`${inputTopic}-0@9`), String(reason.detail));
        assertEquals(await committed(), 9n);
        const status = await readStatus(image, volume, env.labels);
        assertEquals(status.state, "FAILED");
        assertEquals(status.exit_code, 13);
        const out = await output();
        assertEquals(out[out.length - 1], 'k9={"order_id":"o9","amount":500}');
        assert(!out.some((l) => l.startsWith("k11=")), "nothing past the bad record is output");
      });

      await t.step("restarting the same plan stops again at the same record", async () => {
        const r = await runRunnerToExit(container("gen-b-again", planB));
        assertEquals(r.code, 13, r.stdout + r.stderr.slice(-2000));
        const reason = await lastStdoutJson(`${appId}-gen-b-again`);
        assert(String(reason.detail).includes(`${inputTopic}-0@9`), String(reason.detail));
        assertEquals(await committed(), 9n);
      });

      await t.step("the identity gate rejects a wrong topic ID (exit 12)", async () => {
        const wrong = await writePlan(
          dir,
          "plan-wrong-topic",
          spec(amountAtLeastAndPaid(200), { inputTopicId: outputTopicId }),
        );
        const r = await runRunnerToExit(container("wrong-topic", wrong));
        assertEquals(r.code, 12, r.stdout + r.stderr.slice(-2000));
        const reason = await lastStdoutJson(`${appId}-wrong-topic`);
        assertEquals(reason.reason, "IDENTITY_TOPIC_MISMATCH");
        assertEquals(await committed(), 9n);
      });

      await t.step("the identity gate rejects a wrong cluster ID (exit 12)", async () => {
        const wrong = await writePlan(
          dir,
          "plan-wrong-cluster",
          spec(amountAtLeastAndPaid(200), { clusterId: "AAAAAAAAAAAAAAAAAAAAAA" }),
        );
        const r = await runRunnerToExit(container("wrong-cluster", wrong));
        assertEquals(r.code, 12);
        assertEquals(
          (await lastStdoutJson(`${appId}-wrong-cluster`)).reason,
          "IDENTITY_CLUSTER_MISMATCH",
        );
      });

      await t.step(
        "a plan whose bytes differ from SLUICE_PLAN_SHA256 is refused (exit 11)",
        async () => {
          const r = await runRunnerToExit(
            container("bad-sha", { path: planB.path, sha256: planA.sha256 }),
          );
          assertEquals(r.code, 11);
          assertEquals((await lastStdoutJson(`${appId}-bad-sha`)).reason, "PLAN_SHA256_MISMATCH");
        },
      );
    } finally {
      await removeAll(containers, [volume, earlyVolume]);
      await Deno.remove(dir, { recursive: true });
    }
  },
});
