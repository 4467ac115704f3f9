// test-needs: env
// Needs: Docker, the broker, the runner image (shared environment from tools/test.ts).
// Sealed plan files through the CLI: a plan made before the SQL changed is stale
// (PLAN_STALE_SOURCE, exit 3) and an edited plan file is tampered (PLAN_TAMPERED, exit 3);
// either way nothing is mutated — no topic, volume or container, no state written. A topic
// that appears between plan and apply blocks the apply before its intent is recorded.
import assert from "node:assert/strict";
import { docker } from "../harness/docker.ts";
import { sharedEnv } from "../harness/env.ts";
import type { Env } from "../harness/env.ts";
import { createTopic } from "../harness/kafka.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import type { TestProject } from "../harness/project.ts";
import { platformaticKafka } from "../lib/providers/kafka/platformatic.ts";
import { openStateStore } from "../lib/state/open.ts";
import {
  assertExit,
  removeApplication,
  sluice,
  sluiceJson,
  starterApplicationId,
} from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** Assert nothing of the project exists: no topic, container, volume or owned state. */
async function assertNothingMutated(env: Env, p: TestProject): Promise<void> {
  const appId = starterApplicationId(p.name);
  const kafka = platformaticKafka(env.bootstrapHost);
  try {
    const { topics } = await kafka.describe([p.inputTopic, p.outputTopic]);
    assert.deepEqual([...topics.keys()], []);
  } finally {
    await kafka.close();
  }
  const filters = JSON.stringify({ label: [`sluice.application-id=${appId}`] });
  assert.deepEqual(await docker().listContainers({ all: true, filters }), []);
  assert.deepEqual((await docker().listVolumes({ filters })).Volumes ?? [], []);
  const store = openStateStore({
    backend: "local",
    dir: `${p.dir}/.sluice/state`,
    project: p.name,
    environment: null,
  });
  try {
    const snap = await store.load();
    assert.equal(snap.ownership, null);
    assert.equal(snap.control, null);
  } finally {
    await store.close();
  }
}

Deno.test(
  "stale plan: plan --out, edit the SQL, apply --plan → PLAN_STALE_SOURCE, nothing mutated",
  opts,
  async () => {
    const env = await sharedEnv();
    const p = await starterProject(env, { image: await runnerImageId() });
    const file = `${p.dir}/plan.json`;
    try {
      assertExit(await sluice(["plan", "--project", p.dir, "--out", file]), 0);
      await p.setPredicate("amount >= 500 AND paid = TRUE");
      const r = await sluiceJson(["apply", "--project", p.dir, "--plan", file]);
      assertExit(r, 3);
      assert.equal(r.envelope.ok, false);
      assert.equal(r.envelope.command, "apply");
      assert.equal(r.envelope.errors[0].code, "PLAN_STALE_SOURCE");
      assert.match(r.envelope.errors[0].message, /manifest or SQL changed since the plan was made/);
      // text output names the code on stderr
      const text = await sluice(["apply", "--project", p.dir, "--plan", file]);
      assertExit(text, 3);
      assert.match(text.stderr, /^error\[PLAN_STALE_SOURCE\]/m);
      await assertNothingMutated(env, p);

      // a manifest edit makes it stale just the same
      assertExit(await sluice(["plan", "--project", p.dir, "--out", file]), 0);
      await p.editManifest((t) => t.replace("# where a new consumer group", "# edited\n# where"));
      const m = await sluiceJson(["apply", "--project", p.dir, "--plan", file]);
      assertExit(m, 3);
      assert.equal(m.envelope.errors[0].code, "PLAN_STALE_SOURCE");
      await assertNothingMutated(env, p);
    } finally {
      await removeApplication(starterApplicationId(p.name));
      await Deno.remove(p.dir, { recursive: true });
    }
  },
);

Deno.test(
  "tampered plan: one edited byte in the plan file → PLAN_TAMPERED, nothing mutated",
  opts,
  async () => {
    const env = await sharedEnv();
    const p = await starterProject(env, { image: await runnerImageId() });
    const file = `${p.dir}/plan.json`;
    try {
      assertExit(await sluice(["plan", "--project", p.dir, "--out", file]), 0);
      const text = await Deno.readTextFile(file);
      // one byte: 3 partitions become 4, still valid canonical JSON
      const edited = text.replace('"partitions":3', '"partitions":4');
      assert.notEqual(edited, text);
      assert.equal(edited.length, text.length);
      await Deno.writeTextFile(file, edited);
      const r = await sluiceJson(["apply", "--project", p.dir, "--plan", file]);
      assertExit(r, 3);
      assert.equal(r.envelope.errors[0].code, "PLAN_TAMPERED");
      // a reformatted (pretty-printed) file is an edit too
      await Deno.writeTextFile(file, JSON.stringify(JSON.parse(text), null, 2));
      const pretty = await sluiceJson(["apply", "--project", p.dir, "--plan", file]);
      assertExit(pretty, 3);
      assert.equal(pretty.envelope.errors[0].code, "PLAN_TAMPERED");
      await assertNothingMutated(env, p);

      // the untouched file still applies (the seal, not the file name, is what counts)
      await Deno.writeTextFile(file, text);
      const ok = await sluiceJson(["apply", "--project", p.dir, "--plan", file]);
      assertExit(ok, 0);
      assert.equal(ok.envelope.data?.noop, false);
    } finally {
      await removeApplication(starterApplicationId(p.name));
      await Deno.remove(p.dir, { recursive: true });
    }
  },
);

Deno.test(
  "a topic that appeared after the plan → BLOCKED_UNOWNED_TOPIC before any intent is recorded",
  opts,
  async () => {
    const env = await sharedEnv();
    const p = await starterProject(env, { image: await runnerImageId() });
    const file = `${p.dir}/plan.json`;
    try {
      assertExit(await sluice(["plan", "--project", p.dir, "--out", file]), 0);
      await createTopic(env.bootstrapHost, p.outputTopic, 3);
      const r = await sluiceJson(["apply", "--project", p.dir, "--plan", file]);
      assertExit(r, 4);
      assert.equal(r.envelope.errors[0].code, "BLOCKED_UNOWNED_TOPIC");
      assert.deepEqual(r.envelope.errors[0].evidence, { topics: [p.outputTopic] });
      // no operation was opened: the next plan reports the topic instead of a pending operation
      const store = openStateStore({
        backend: "local",
        dir: `${p.dir}/.sluice/state`,
        project: p.name,
        environment: null,
      });
      try {
        const snap = await store.load();
        assert.equal(snap.control, null);
        assert.equal(snap.ownership, null);
      } finally {
        await store.close();
      }
      const again = await sluiceJson(["plan", "--project", p.dir]);
      assertExit(again, 4);
      assert.equal(again.envelope.errors[0].code, "BLOCKED_UNOWNED_TOPIC");
      const kafka = platformaticKafka(env.bootstrapHost);
      try {
        const { topics } = await kafka.describe([p.inputTopic]);
        assert.equal(topics.size, 0);
      } finally {
        await kafka.close();
      }
    } finally {
      await removeApplication(starterApplicationId(p.name));
      await Deno.remove(p.dir, { recursive: true });
    }
  },
);
