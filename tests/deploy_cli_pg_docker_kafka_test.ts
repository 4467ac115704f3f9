// test-needs: env
// Needs: Docker, the broker, PostgreSQL, the runner image (shared environment from tools/test.ts).
// The first user journey through the CLI with the PostgreSQL state backend: plan --out →
// apply --plan creates topics, volume and runner → exact output → a repeated plan is a
// no-op, a repeated apply writes nothing, status --health and observe report the runner.
import assert from "node:assert/strict";
import { sharedEnv } from "../harness/env.ts";
import { produce } from "../harness/kafka.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { openStateStore } from "../lib/state/open.ts";
import {
  assertExit,
  dropPgState,
  expectedStarterOutput,
  outputRecords,
  removeApplication,
  samplesOf,
  sluice,
  sluiceJson,
  starterApplicationId,
  STATE_DSN_ENV,
} from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "CLI on PostgreSQL state: plan --out, apply --plan, exact output, then no-op",
  opts,
  async () => {
    const env = await sharedEnv();
    const p = await starterProject(env, {
      image: await runnerImageId(),
      stateDsnEnv: STATE_DSN_ENV,
    });
    const vars = { [STATE_DSN_ENV]: env.pgUrl };
    const appId = starterApplicationId(p.name);
    // The project's state lives in the default schema `sluice`, scoped by this test's unique
    // project name; its rows are deleted at the end.
    const store = openStateStore({
      backend: "postgres",
      url: env.pgUrl,
      project: p.name,
      environment: null,
    });
    const planFile = `${p.dir}/plan.json`;
    try {
      // plan --out: three creations, written to a sealed file
      const planned = await sluice(["plan", "--project", p.dir, "--out", planFile], vars);
      assertExit(planned, 0);
      assert.match(
        planned.stdout,
        new RegExp(`\\+ create topic ${p.inputTopic} \\(3 partitions\\)`),
      );
      assert.match(
        planned.stdout,
        new RegExp(`\\+ create topic ${p.outputTopic} \\(3 partitions\\)`),
      );
      assert.match(planned.stdout, new RegExp(`\\+ create runner ${appId} `));
      assert.match(planned.stdout, new RegExp(`written to ${planFile}`));

      // apply --plan: one progress line per step (and a line every 5 s of a wait), then the
      // summary
      const applied = await sluice(["apply", "--project", p.dir, "--plan", planFile], vars);
      assertExit(applied, 0);
      const steps = applied.stdout.split("\n").map((l) => l.trim().split(/\s+/)[1]).filter(
        (s) => s && s !== "wait",
      );
      assert.deepEqual(steps.slice(0, 9), [
        "started",
        "intent",
        "topic",
        "topic",
        "volume",
        "offsets",
        "container",
        "ready",
        "commit",
      ], applied.stdout);
      assert.match(
        applied.stdout,
        /Applied operation [0-9a-f-]{36}: 3 action\(s\); ownership serial 1\./,
      );

      await store.init();
      const afterApply = await store.load();
      assert.equal(afterApply.ownership?.document.serial, 1);
      assert.deepEqual(afterApply.ownership?.document.runners.map((r) => r.application_id), [
        appId,
      ]);
      assert.equal(afterApply.identity.backend, "postgres");

      // the runner's exact output for the starter's samples
      const samples = await samplesOf(p.dir);
      await produce(
        env.bootstrapHost,
        p.inputTopic,
        samples.map((s) => ({ key: s.key, value: JSON.stringify(s.value) })),
      );
      const expected = expectedStarterOutput(samples);
      assert.deepEqual(expected.map((e) => e.key), ["o-1001", "o-1004", "o-1006"]);
      assert.deepEqual(
        await outputRecords(env.bootstrapHost, p.outputTopic, expected.length),
        expected,
      );

      // a repeated plan is a no-op
      const again = await sluiceJson(["plan", "--project", p.dir], vars);
      assertExit(again, 0);
      assert.equal(again.envelope.ok, true);
      assert.equal(again.envelope.command, "plan");
      assert.equal(again.envelope.data?.noop, true);
      const plan = again.envelope.data?.plan as { actions: unknown[]; blockers: unknown[] };
      assert.deepEqual(plan.actions, []);
      assert.deepEqual(plan.blockers, []);

      // a repeated apply is a no-op that writes nothing
      const noop = await sluiceJson(["apply", "--project", p.dir], vars);
      assertExit(noop, 0);
      assert.equal(noop.envelope.data?.noop, true);
      assert.equal(noop.envelope.data?.serial, 1);
      const afterNoop = await store.load();
      assert.equal(afterNoop.revision, afterApply.revision);
      assert.equal(afterNoop.ownership?.checksum, afterApply.ownership?.checksum);

      // status --health: exactly one running, healthy generation
      const status = await sluice(["status", "--project", p.dir, "--health"], vars);
      assertExit(status, 0);
      assert.match(status.stdout, new RegExp(`^ok +${appId} +running `, "m"));

      // observe -o json: the one container, its mounted plan matching its label
      const observed = await sluiceJson(["observe", "--project", p.dir], vars);
      assertExit(observed, 0);
      const runners = observed.envelope.data?.runners as Array<{
        applicationId: string;
        containers: Array<{ id: string; running: boolean; plan: { matchesLabel: boolean } }>;
        volume: { exists: boolean; instanceLabel: string; instanceFile: string };
        kafka: {
          group: { members: Array<{ assignment: Array<{ topic: string; partitions: number[] }> }> };
          committed: Record<string, string>;
        };
      }>;
      assert.equal(runners.length, 1);
      const r = runners[0];
      assert.equal(r.applicationId, appId);
      assert.equal(r.containers.length, 1);
      assert.match(r.containers[0].id, /^[0-9a-f]{64}$/);
      assert.equal(r.containers[0].running, true);
      assert.equal(r.containers[0].plan.matchesLabel, true);
      assert.equal(r.volume.exists, true);
      assert.equal(r.volume.instanceFile, r.volume.instanceLabel);
      assert.equal(
        r.volume.instanceLabel,
        afterApply.ownership?.document.runners[0].volume.instance_id,
      );
      assert.equal(r.kafka.group.members.length, 1);
      assert.deepEqual(Object.keys(r.kafka.committed).sort(), ["0", "1", "2"]);
      // the runner's Kafka Streams member holds every input partition, as Kafka's assignment says
      // (the Streams assignor's bytes read through the Kafka port), and status finds none unowned
      assert.deepEqual(r.kafka.group.members[0].assignment, [
        { topic: p.inputTopic, partitions: [0, 1, 2] },
      ]);
      const health = await sluiceJson(["status", "--project", p.dir], vars);
      const models = health.envelope.data?.models as Array<{ unowned_partitions: number[] | null }>;
      assert.deepEqual(models.map((m) => m.unowned_partitions), [[]]);
    } finally {
      await store.close();
      await removeApplication(appId);
      await dropPgState(env.pgUrl, p.name);
      await Deno.remove(p.dir, { recursive: true });
    }
  },
);
