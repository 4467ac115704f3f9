// test-needs: env
/**
 * Both `on_invalid` policies on the real runner image and a real broker (needs Docker and the
 * broker image). The same input — a good record, an undecodable one with its own headers and
 * bytes that are not UTF-8, another good record — goes to:
 *
 * - a runner with `on_invalid: dead_letter`: the output holds exactly the two good records, the
 *   dead-letter topic exactly the bad one, byte for byte (key, value, timestamp, its headers in
 *   order) followed by the reason, field, rule, topic, partition, offset, model and application
 *   ID headers; the committed offset moves past it. After a TERM and a restart of the same plan,
 *   nothing is output or dead-lettered twice and processing continues.
 * - a runner with the default (stop): exit 13, the committed offset stays at or before the bad
 *   record, nothing after it is output, and the status file's stop context names the model, position,
 *   field and rule, the record's sizes and field names, and no value of the record.
 *
 * And the create journey through sluice (manifest → artifact → runner): a starter project with
 * `on_invalid: dead_letter` plans the dead-letter topic like the output topic, `apply` creates
 * and owns it and binds its ID in the mounted plan, the runner dead-letters a bad record into it,
 * and the next plan is a no-op; a predicate replacement binds the same ID in its reviewed
 * evidence and candidate, whose runner dead-letters into the same topic.
 */
import nodeAssert from "node:assert/strict";
import { sharedEnv } from "../harness/env.ts";
import {
  committedOffsets,
  createTopic,
  describeCluster,
  produce as produceText,
  readAll,
  waitForRecords,
} from "../harness/kafka.ts";
import { starterProject } from "../harness/project.ts";
import { apply, plan } from "../lib/runtime/session.ts";
import { writePlanFile } from "../lib/plan/plan_file.ts";
import { executeReviewed } from "../lib/runtime/replacement/execute.ts";
import { parseRunnerStop } from "../lib/artifact/runner_exits.ts";
import { platformaticKafka } from "../lib/providers/kafka/platformatic.ts";
import { isMemberOfGeneration, runnerClientId } from "../lib/validation/group_member.ts";
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

const assertEquals = (a: unknown, b: unknown, m?: string) => nodeAssert.deepEqual(a, b, m);
const assert = (v: unknown, m?: string) => nodeAssert.ok(v, m);

const enc = new TextEncoder();
const b64 = (b: Uint8Array | string) =>
  btoa(String.fromCharCode(...(typeof b === "string" ? enc.encode(b) : b)));
const fromB64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const text = (s: string) => new TextDecoder().decode(fromB64(s));

function order(id: string, amount: number): string {
  return JSON.stringify({ order_id: id, amount, paid: true, note: null });
}

/** The bad record: amount is a string, and the note holds bytes that are not UTF-8 text. */
const BAD_VALUE = new Uint8Array([
  ...enc.encode('{"order_id":"o2","amount":"4111111111111111","paid":true,"note":"'),
  0xff,
  0xfe,
  ...enc.encode('"}'),
]);
const BAD_KEY = "k2-secret-key";

interface Consumed {
  key_b64: string | null;
  value_b64: string | null;
  headers: Array<[string, string]>;
  offset: number;
  partition: number;
  timestamp: number;
}

Deno.test({
  name: "runner on_invalid: dead_letter writes the record unchanged and continues; stop stops",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const env = await sharedEnv();
    const image = await buildRunnerImage();
    const suffix = crypto.randomUUID().slice(0, 8);
    const containers: string[] = [];
    const volumes: string[] = [];
    const dir = await Deno.makeTempDir({ prefix: "sluice-dl-" });
    const topic = async (name: string) => ({
      name,
      id: await createTopic(env.bootstrapHost, name, 1),
    });
    const input = await topic(`dl-in-${suffix}`);

    const consume = async (name: string): Promise<Consumed[]> =>
      (await devTools(image, env.network, env.labels, [
        env.bootstrapInternal,
        "consume",
        name,
        "1000",
        "30000",
      ])).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
    const values = async (name: string) =>
      (await consume(name)).map((r) => `${text(r.key_b64!)}=${text(r.value_b64!)}`);

    /** Produce exact bytes and headers through the Java client (DevTools produce-json). */
    const produce = (
      records: Array<
        { key: string; value: Uint8Array | string; headers?: Array<[string, Uint8Array | string]> }
      >,
    ) =>
      devTools(
        image,
        env.network,
        env.labels,
        [env.bootstrapInternal, "produce-json", input.name],
        records.map((r) =>
          JSON.stringify({
            key_b64: b64(r.key),
            value_b64: b64(r.value),
            headers: (r.headers ?? []).map(([k, v]) => [k, b64(v)]),
          })
        ).join("\n") + "\n",
      );
    await produce([
      { key: "k1", value: order("o1", 150) },
      {
        key: BAD_KEY,
        value: BAD_VALUE,
        headers: [["trace", "t-1"], ["trace", new Uint8Array([0, 255])]],
      },
      { key: "k3", value: order("o3", 250) },
    ]);

    const setup = async (policy: "dead_letter" | "stop") => {
      const appId = `sluice-dl-${policy}-${suffix}`;
      const output = await topic(`dl-out-${policy}-${suffix}`);
      const deadLetter = policy === "dead_letter" ? await topic(`dl-dlq-${suffix}`) : null;
      const volume = `${appId}-state`;
      await createVolume(volume, env.labels);
      volumes.push(volume);
      const spec: PlanSpec = {
        applicationId: appId,
        inputTopic: input.name,
        outputTopic: output.name,
        predicate: amountAtLeastAndPaid(100),
        image,
        network: env.network,
        bootstrap: env.bootstrapInternal,
        clusterId: env.clusterId,
        inputTopicId: input.id,
        outputTopicId: output.id,
        ...(deadLetter ? { deadLetter: { topic: deadLetter.name, id: deadLetter.id } } : {}),
      };
      const plan = await writePlan(dir, appId, spec);
      const container = (generation: string, args?: string[]): RunnerContainer => {
        const c = {
          name: `${appId}-${generation}`,
          image,
          network: env.network,
          volume,
          planPath: plan.path,
          planSha256: plan.sha256,
          generation,
          labels: env.labels,
          args,
        };
        containers.push(c.name);
        return c;
      };
      // position the group at the beginning, as sluice does before a first start
      const init = await runRunnerToExit(container("init", ["init-offsets"]));
      assertEquals(init.code, 0, init.stdout + init.stderr.slice(-2000));
      const committed = async () =>
        (await committedOffsets(env.bootstrapHost, appId, input.name)).get(0);
      return { appId, output, deadLetter, spec, plan, container, committed };
    };

    try {
      await t.step(
        "dead_letter: the bad record goes unchanged to the dead-letter topic",
        async () => {
          const s = await setup("dead_letter");
          await startRunner(s.container("g1"));
          await waitForState(`${s.appId}-g1`, "RUNNING");
          // the group's one member is named after the runner's generation (ClientId.java), and
          // the status file declares that client ID (version 4): sluice's ready check reads both
          const kafka = platformaticKafka(env.bootstrapHost);
          try {
            const group = await kafka.describeGroup(s.appId);
            assertEquals(group.members.length, 1);
            assertEquals(isMemberOfGeneration(group.members[0].clientId, "g1"), true);
            assertEquals(group.members[0].clientId.startsWith("sluice-g1-StreamThread-"), true);
          } finally {
            await kafka.close();
          }
          const running = await readStatus(image, `${s.appId}-state`, env.labels);
          assertEquals(running.version, 4);
          assertEquals(running.client_id, runnerClientId("g1"));
          await waitFor(
            "offset 3 committed",
            async () => (await s.committed()) === 3n || undefined,
          );
          assertEquals(await values(s.output.name), [
            'k1={"order_id":"o1","amount":150}',
            'k3={"order_id":"o3","amount":250}',
          ]);
          const dead = await consume(s.deadLetter!.name);
          assertEquals(dead.length, 1);
          const dl = dead[0];
          assertEquals(fromB64(dl.key_b64!), enc.encode(BAD_KEY));
          assertEquals(fromB64(dl.value_b64!), BAD_VALUE);
          const inputRecords = await consume(input.name);
          assertEquals(dl.timestamp, inputRecords[1].timestamp, "timestamp kept");
          assertEquals(dl.headers.map(([k, v]) => [k, k === "trace" ? v : text(v)]), [
            ["trace", b64("t-1")],
            ["trace", b64(new Uint8Array([0, 255]))],
            ["sluice.dead_letter.reason", "DECODE_MALFORMED"],
            ["sluice.dead_letter.rule", "invalid UTF-8"],
            ["sluice.dead_letter.topic", input.name],
            ["sluice.dead_letter.partition", "0"],
            ["sluice.dead_letter.offset", "1"],
            ["sluice.dead_letter.model", "eligible_orders"],
            ["sluice.dead_letter.application_id", s.appId],
          ]);
          // the runner's log names the dead letter without a value of the record
          const logs = await docker(["logs", `${s.appId}-g1`]);
          assert(logs.stderr.includes(`dead letter #1 to ${s.deadLetter!.name}: DECODE_MALFORMED`));
          assert(
            !logs.stderr.includes("4111") && !logs.stderr.includes(BAD_KEY),
            "no record value",
          );

          // TERM, then the same plan again: nothing twice, processing continues
          await docker(["stop", "-t", "30", `${s.appId}-g1`]);
          assertEquals(await exitCode(`${s.appId}-g1`), 143);
          assertEquals(await s.committed(), 3n);
          await produce([{ key: "k4", value: order("o4", 400) }]);
          await startRunner(s.container("g2"));
          await waitForState(`${s.appId}-g2`, "RUNNING");
          await waitFor(
            "offset 4 committed",
            async () => (await s.committed()) === 4n || undefined,
          );
          assertEquals(await values(s.output.name), [
            'k1={"order_id":"o1","amount":150}',
            'k3={"order_id":"o3","amount":250}',
            'k4={"order_id":"o4","amount":400}',
          ]);
          assertEquals((await consume(s.deadLetter!.name)).length, 1, "no dead letter twice");
          await docker(["stop", "-t", "30", `${s.appId}-g2`]);
          assertEquals(await exitCode(`${s.appId}-g2`), 143);

          // the gate checks the dead-letter topic's ID like the output's: a plan bound to
          // another ID (the topic deleted and recreated since) stops before consuming (exit 12)
          const other = await writePlan(dir, `${s.appId}-other-dlq`, {
            ...s.spec,
            deadLetter: { topic: s.deadLetter!.name, id: s.output.id },
          });
          const g3 = {
            ...s.container("g3"),
            planPath: other.path,
            planSha256: other.sha256,
          };
          // bounded: a gate that let it through would leave it RUNNING, not exited
          await startRunner(g3);
          const refused = await waitFor(`${g3.name} to stop at the gate`, async () => {
            const state = (await docker(["inspect", "-f", "{{.State.Status}}", g3.name])).stdout;
            if (state.trim() === "exited") return await exitCode(g3.name);
            const logs = (await docker(["logs", g3.name])).stdout;
            return logs.includes("SLUICE_RUNNER_STATE RUNNING ") ? "RUNNING" : undefined;
          }, 90_000);
          assertEquals(refused, 12, (await docker(["logs", g3.name])).stdout);
          const why = await lastStdoutJson(g3.name);
          assertEquals(why.reason, "IDENTITY_TOPIC_MISMATCH");
          assert(
            String(why.detail).startsWith(`dead-letter topic ${s.deadLetter!.name} has ID`),
            String(why.detail),
          );
          assertEquals(await s.committed(), 4n, "nothing consumed");
        },
      );

      await t.step(
        "stop (default): exit 13 at the bad record, with a redacted stop context",
        async () => {
          const s = await setup("stop");
          await startRunner(s.container("g1"));
          assertEquals(Number((await docker(["wait", `${s.appId}-g1`])).stdout.trim()), 13);
          // at or before the bad record (offset 1): k1 may share the aborted transaction of the
          // bad record; what was committed is exactly what was output, nothing past it
          const committed = await s.committed();
          assert(committed === 0n || committed === 1n, `committed ${committed}`);
          assertEquals(
            await values(s.output.name),
            committed === 1n ? ['k1={"order_id":"o1","amount":150}'] : [],
          );
          const line = await lastStdoutJson(`${s.appId}-g1`);
          const status = await readStatus(image, `${s.appId}-state`, env.labels);
          assertEquals(status.state, "FAILED");
          assertEquals(status.version, 4); // version 4: the client ID (docs/runner.md)
          const stop = parseRunnerStop(status);
          assertEquals(stop, parseRunnerStop(line), "status file and exit line agree");
          assertEquals(stop?.reason, "DECODE_MALFORMED");
          assertEquals(stop?.exit_code, 13);
          assertEquals(stop?.model, "eligible_orders");
          assertEquals(stop?.application_id, s.appId);
          assertEquals(stop?.rule, "invalid UTF-8");
          assertEquals(stop?.record, {
            topic: input.name,
            partition: 0,
            offset: 1,
            key_bytes: enc.encode(BAD_KEY).length,
            value_bytes: BAD_VALUE.length,
            // the names as far as the record parses: the note's value is where it breaks
            fields: ["order_id", "amount", "paid", "note"],
          });
          const all = JSON.stringify(line) + JSON.stringify(status);
          for (const secret of ["4111", BAD_KEY, "t-1"]) assert(!all.includes(secret), secret);
          assert(String(line.detail).includes(`${input.name}-0@1`), String(line.detail));
        },
      );

      await t.step("the create journey creates the declared dead-letter topic", async () => {
        const p = await starterProject(env, { image });
        const dlq = `${p.outputTopic}_dlq`;
        await p.editManifest((m) =>
          m.replace(
            `topic: ${p.outputTopic}\n`,
            `topic: ${p.outputTopic}\n    on_invalid: dead_letter\n    dead_letter: { topic: ${dlq} }\n`,
          )
        );
        const first = await plan({ dir: p.dir });
        assertEquals(first.plan.blockers, []);
        assertEquals(first.plan.actions.map((a) => a.type === "create_topic" ? a.role : a.type), [
          "source",
          "output",
          "dead_letter",
          "create_runner",
        ]);
        assertEquals(first.plan.artifacts[0].artifact.on_invalid, {
          policy: "dead_letter",
          topic: dlq,
        });
        const applied = await apply({
          dir: p.dir,
          plan: first.plan,
          planSha256: first.sha256,
          extraLabels: env.labels,
        });
        assertEquals(applied.noop, false);
        await produceText(env.bootstrapHost, p.inputTopic, [
          {
            key: "bad",
            value: '{"order_id":"x","amount":"12","paid":true,"customer":null}',
            partition: 0,
          },
          {
            key: "good",
            value: '{"order_id":"y","amount":500,"paid":true,"customer":null}',
            partition: 0,
          },
        ]);
        const dead = await waitForRecords(env.bootstrapHost, dlq, 1, { timeoutMs: 90_000 });
        assertEquals(dead.map((r) => [r.key, r.value]), [
          ["bad", '{"order_id":"x","amount":"12","paid":true,"customer":null}'],
        ]);
        let out: string[] = [];
        for (let i = 0; i < 100 && out.length < 1; i++) {
          out = (await readAll(env.bootstrapHost, p.outputTopic, { partitions: [0, 1, 2] }))
            .map((r) => `${r.key}=${r.value}`);
          if (out.length < 1) await new Promise((r) => setTimeout(r, 300));
        }
        assertEquals(out, ['good={"order_id":"y","amount":500,"paid":true}']);
        const again = await plan({ dir: p.dir });
        assertEquals(again.plan.actions, []);
        assertEquals(again.plan.blockers, []);
        // the runner's mounted plan binds the dead-letter topic's ID, as the broker reports it
        const ids = await describeCluster(env.bootstrapHost, [dlq]);
        const plans = `${p.dir}/.sluice/runtime/plans`;
        const mounted = [];
        for await (const f of Deno.readDir(plans)) {
          mounted.push(JSON.parse(await Deno.readTextFile(`${plans}/${f.name}`)));
        }
        assertEquals(mounted.length, 1);
        assertEquals(mounted[0].identity.dead_letter_topic_id, ids.topicIds[dlq]);

        // a predicate replacement keeps the policy: the reviewed evidence binds the dead-letter
        // topic's ID, the candidate's mounted plan carries it and passes the runner's gate, and
        // the new generation dead-letters into the same topic
        await p.setPredicate("amount >= 200 AND paid = TRUE");
        const reviewed = await plan({ dir: p.dir });
        assertEquals(reviewed.plan.blockers, []);
        assertEquals(reviewed.plan.format, 6);
        const action = reviewed.plan.typed_action!.action;
        assertEquals(
          (action.evidence.identities as Record<string, unknown>).dead_letter_topic_id,
          ids.topicIds[dlq],
        );
        const planPath = `${p.dir}/replace.plan.json`;
        await writePlanFile(planPath, reviewed.plan);
        await executeReviewed({ dir: p.dir, planPath, extraLabels: env.labels });
        const candidatePlans = [];
        for await (const f of Deno.readDir(plans)) {
          const m = JSON.parse(await Deno.readTextFile(`${plans}/${f.name}`));
          const prior = JSON.stringify(mounted[0].artifact.predicate);
          if (JSON.stringify(m.artifact.predicate) !== prior) candidatePlans.push(m);
        }
        assertEquals(candidatePlans.length, 1);
        assertEquals(candidatePlans[0].identity.dead_letter_topic_id, ids.topicIds[dlq]);
        assertEquals(candidatePlans[0].artifact.on_invalid, { policy: "dead_letter", topic: dlq });
        await produceText(env.bootstrapHost, p.inputTopic, [
          { key: "bad2", value: '{"order_id":"z","amount":true}', partition: 0 },
          {
            key: "small",
            value: '{"order_id":"s","amount":150,"paid":true,"customer":null}',
            partition: 0,
          },
          {
            key: "big",
            value: '{"order_id":"b","amount":900,"paid":true,"customer":null}',
            partition: 0,
          },
        ]);
        const dead2 = await waitForRecords(env.bootstrapHost, dlq, 2, { timeoutMs: 90_000 });
        assertEquals(dead2.map((r) => r.key), ["bad", "bad2"]);
        for (let i = 0; i < 100 && out.length < 2; i++) {
          out = (await readAll(env.bootstrapHost, p.outputTopic, { partitions: [0, 1, 2] }))
            .map((r) => `${r.key}=${r.value}`);
          if (out.length < 2) await new Promise((r) => setTimeout(r, 300));
        }
        assertEquals(out.sort(), [
          'big={"order_id":"b","amount":900,"paid":true}',
          'good={"order_id":"y","amount":500,"paid":true}',
        ]);
        const after = await plan({ dir: p.dir });
        assertEquals(after.plan.actions, []);
        assertEquals(after.plan.blockers, []);
        await Deno.remove(p.dir, { recursive: true });
      });
    } finally {
      await removeAll(containers, volumes);
      await Deno.remove(dir, { recursive: true });
    }
  },
});
