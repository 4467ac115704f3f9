// test-needs: env
// Needs: Docker, the broker, the runner image, PostgreSQL (shared environment from tools/test.ts).
// A teardown that deletes data, as an operator would through the installed CLI (each command its
// own OS process), against real Docker, Kafka and the real runner, on the PostgreSQL state
// backend (issue 30 item 7): the starter over an input topic sluice did not create (declared
// `external`) processes records; `plan --destroy --delete-data --out FILE` lists what it deletes
// and what it keeps; `apply --plan FILE` takes the runner down and deletes its consumer group,
// its state volume and the output topic sluice created — read afterwards by independent means
// (the Docker Engine API directly, Kafka's own tools in the broker container) — while the input
// topic stays with its ID and records; the project planned and applied again is a create from
// nothing: a new output topic ID, a new volume instance, the output rebuilt from the input.
import assert from "node:assert/strict";
import { sharedEnv } from "../harness/env.ts";
import { removeLabelled } from "../harness/docker.ts";
import { createTopic, produce } from "../harness/kafka.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { containersOf, kafkaTools, volumeOf } from "../harness/witness.ts";
import { readPlanFile } from "../lib/plan/plan_file.ts";
import { LABEL } from "../lib/runtime/labels.ts";
import { caughtUp } from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const launcher = new URL("../bin/sluice", import.meta.url).pathname;
const PARTS = [0, 1, 2];

async function cli(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(launcher, { args, env, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  const r = { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  return { ...r, say: `exit ${r.code}\n${r.stdout}\n${r.stderr}` };
}

const order = (id: string, amount: number, partition: number) => ({
  key: id,
  value: JSON.stringify({ order_id: id, amount, paid: true, customer: null }),
  partition,
});

Deno.test(
  "postgres: destroy --delete-data deletes the group, the volume and the output topic sluice created, keeps the input topic it did not, and the project is created again from nothing",
  opts,
  async () => {
    const shared = await sharedEnv();
    const dsnVar = "SLUICE_TEST_STATE_DSN";
    Deno.env.set(dsnVar, shared.pgUrl);
    const env: Record<string, string> = { [dsnVar]: shared.pgUrl };
    const p = await starterProject(shared, { image: await runnerImageId(), stateDsnEnv: dsnVar });
    // the input topic is not sluice's: created here, declared external
    await p.editManifest((t) =>
      t.replace(/kind: managed\n\s*partitions: 3\n/, "kind: external\n")
        .replace(/( {4}output:\n {6}topic: .*\n)/g, "$1      partitions: 3\n")
    );
    await createTopic(shared.bootstrapHost, p.inputTopic, PARTS.length);
    const broker = shared.brokerContainerId;
    const topicIds = async () =>
      (await kafkaTools(broker, { topics: [p.inputTopic, p.outputTopic] })).topic_ids ?? {};
    const apps: string[] = [];
    try {
      const created = await cli(["-o", "json", "apply", "--project", p.dir], env);
      assert.equal(created.code, 0, created.say);
      const runner = JSON.parse(created.stdout).data.runners[0] as {
        application_id: string;
        volume_instance: string;
      };
      const app = runner.application_id;
      apps.push(app);
      await produce(
        shared.bootstrapHost,
        p.inputTopic,
        PARTS.flatMap((k) => [order(`a${k}`, 150, k), order(`b${k}`, 50, k)]),
      );
      await caughtUp(shared.bootstrapHost, app, p.inputTopic, PARTS);
      const before = await topicIds();
      assert.ok(before[p.inputTopic] && before[p.outputTopic], JSON.stringify(before));

      // the review lists what is deleted and what is kept
      const planPath = `${p.dir}/destroy.plan.json`;
      const planned = await cli(
        ["plan", "--project", p.dir, "--destroy", "--delete-data", "--out", planPath],
        env,
      );
      assert.equal(planned.code, 0, planned.say);
      const flat = planned.stdout.replace(/\s+/g, " ");
      assert.match(
        flat,
        new RegExp(
          `DELETED by this destroy \\(--delete-data\\): consumer groups with their offsets ${app}; state volumes ${app}-state; topics with their records ${p.outputTopic} \\(id ${
            before[p.outputTopic]
          }\\)`,
        ),
      );
      assert.match(
        flat,
        new RegExp(
          `KEPT by this destroy \\(not this project's to delete\\): topics ${p.inputTopic}`,
        ),
      );
      const { plan: reviewed } = await readPlanFile(planPath);
      const action = reviewed.actions[0];
      assert.ok(action.type === "destroy" && action.deletes);
      assert.deepEqual(action.deletes.topics.map((t) => t.name), [p.outputTopic]);

      const applied = await cli(
        ["-o", "json", "apply", "--project", p.dir, "--plan", planPath],
        env,
      );
      assert.equal(applied.code, 0, applied.say);

      // independent witnesses: the Engine API directly, Kafka's own tools
      assert.deepEqual(await containersOf(app), []);
      assert.equal((await volumeOf(`${app}-state`)).exists, false);
      const after = await kafkaTools(broker, { listGroups: true });
      assert.deepEqual(after.errors, []);
      assert.ok(!(after.groups ?? []).includes(app), `group ${app} is gone: ${after.groups}`);
      const idsAfter = await topicIds();
      assert.equal(idsAfter[p.outputTopic], undefined, "the output topic sluice created is gone");
      assert.equal(idsAfter[p.inputTopic], before[p.inputTopic], "the input topic stays");

      // created again from nothing: a new topic ID, a new volume instance, the output rebuilt
      const again = await cli(["-o", "json", "apply", "--project", p.dir], env);
      assert.equal(again.code, 0, again.say);
      const fresh = JSON.parse(again.stdout).data.runners[0] as { volume_instance: string };
      assert.notEqual(fresh.volume_instance, runner.volume_instance);
      assert.equal((await volumeOf(`${app}-state`)).label, fresh.volume_instance);
      const recreated = await topicIds();
      assert.ok(recreated[p.outputTopic], "the output topic exists again");
      assert.notEqual(recreated[p.outputTopic], before[p.outputTopic]);
      await caughtUp(shared.bootstrapHost, app, p.inputTopic, PARTS);
    } finally {
      for (const id of apps) await removeLabelled(LABEL.applicationId, id);
    }
  },
);
