// test-needs: env
// Needs: Docker, the broker and the runner image (shared environment from tools/test.ts).
// The scripts of examples/ run as a user runs them (`deno run -A examples/x.ts`, a separate OS
// process each) against the real environment, so they cannot rot: wait for a job to be healthy,
// a CI gate (passes with no change, fails on a change a declared application reads and on a
// blocker), a predicate replacement killed at a durable boundary and the pending operation
// resumed from state, then an uninterrupted replacement. The SDK checks what they did.
import assert from "node:assert/strict";
import { sharedEnv } from "../harness/env.ts";
import { removeLabelled } from "../harness/docker.ts";
import { produce, waitForRecords } from "../harness/kafka.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { openProject, writePlanFile } from "../mod.ts";
import { LABEL } from "../lib/runtime/labels.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const EXAMPLES = new URL("../examples/", import.meta.url).pathname;

interface Run {
  code: number;
  signal: Deno.Signal | null;
  stdout: string;
  stderr: string;
}

/** Run one example script in its own process. */
async function example(name: string, args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${EXAMPLES}${name}`, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  const run: Run = {
    code: out.code,
    signal: out.signal,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
  return { ...run, all: `exit ${run.code}\n${run.stdout}\n${run.stderr}` };
}

const order = (id: string, amount: number) => ({
  key: id,
  value: JSON.stringify({ order_id: id, amount, paid: true, customer: null }),
});

Deno.test("the examples run against the real environment", opts, async () => {
  const env = await sharedEnv();
  const p = await starterProject(env, { image: await runnerImageId() });
  await using project = await openProject({ dir: p.dir, extraLabels: env.labels });
  let appId: string | null = null;
  try {
    // the job the examples work on, created through the SDK
    const created = await project.plan();
    assert.deepEqual(created.plan.blockers, []);
    const planFile = `${p.dir}/create.plan.json`;
    await writePlanFile(planFile, created.plan);
    const applied = await project.apply({ plan: planFile });
    assert.equal(applied.kind, "change");
    if (applied.kind !== "change") return;
    appId = applied.result.runners[0].application_id;
    const instance = applied.result.runners[0].volume_instance;

    // wait for a job to be healthy
    const healthy = await example("wait_healthy.ts", [p.dir, "180"]);
    assert.equal(healthy.code, 0, healthy.all);
    const modelName = applied.result.runners[0].model;
    assert.match(
      healthy.stdout,
      new RegExp(`healthy: ${modelName} \\(${appId}\\) generation \\S+ lag 0`),
    );

    // the CI gate: nothing changed → passes
    const quiet = await example("ci_gate.ts", [p.dir]);
    assert.equal(quiet.code, 0, quiet.all);
    assert.match(quiet.stderr, /gate: passed/);

    // a changed filter that fraud_app (declared in sluice.yaml) reads → fails, naming it
    await p.setPredicate("amount >= 200 AND paid = TRUE");
    const affected = await example("ci_gate.ts", [p.dir]);
    assert.equal(affected.code, 1, affected.all);
    assert.match(
      affected.stderr,
      /gate: eligible_orders \(replace_predicate\) is read by fraud_app/,
    );
    assert.match(affected.stdout, /amount >= 200/); // the Markdown review shows the new filter

    // a projection change is blocked → fails with the blocker's code
    const sql = `${p.dir}/models/eligible_orders.sql`;
    const model = await Deno.readTextFile(sql);
    await Deno.writeTextFile(sql, model.replace(/SELECT .*$/m, "SELECT order_id, amount"));
    const blocked = await example("ci_gate.ts", [p.dir]);
    assert.equal(blocked.code, 1, blocked.all);
    assert.match(blocked.stderr, /gate: blocked: \[BLOCKED_PROJECTION_CHANGE\]/);
    await Deno.writeTextFile(sql, model);

    // records the first filter (>= 100) has written before anything changes
    await produce(env.bootstrapHost, p.inputTopic, [order("a1", 150), order("a2", 250)]);
    const first = await waitForRecords(env.bootstrapHost, p.outputTopic, 2, {
      partitions: [0, 1, 2],
    });
    assert.deepEqual(first.map((r) => r.key).sort(), ["a1", "a2"]);

    // the replacement, killed right after the old runner's removal was acknowledged by Docker
    const replacePlan = `${p.dir}/replace.plan.json`;
    const killed = await example("replace_predicate.ts", [p.dir, replacePlan], {
      SLUICE_FAULT_POINT: "docker.remove_old:after",
      SLUICE_TEST_ONLY_ALLOW_FAULTS: "1",
    });
    assert.equal(killed.signal, "SIGKILL", killed.all);
    assert.match(killed.stdout, /old_closed/); // the progress lines it printed before dying
    const pending = (await project.state()).pending_operation;
    assert.equal(pending?.kind, "runner_update");

    // resume the operation found in state: without permission the stale lock stops it ...
    const refused = await example("resume_pending.ts", [p.dir, replacePlan]);
    assert.equal(refused.code, 5, refused.all);
    assert.match(refused.stdout, /stale lock/);
    // ... with it, runner-status shows the proven step and resume completes the same operation
    const resumed = await example("resume_pending.ts", [p.dir, replacePlan, "--break-stale-lock"]);
    assert.equal(resumed.code, 0, resumed.all);
    assert.match(resumed.stdout, /last durable boundary old_closed/);
    assert.match(resumed.stdout, new RegExp(`committed: operation ${pending!.operation_id}`));
    const afterResume = await project.state();
    assert.equal(afterResume.pending_operation, null);
    assert.equal(afterResume.ownership?.serial, 2);
    const nothing = await example("resume_pending.ts", [p.dir, replacePlan]);
    assert.equal(nothing.code, 0, nothing.all);
    assert.match(nothing.stdout, /no pending operation/);

    // an uninterrupted replacement: the new filter applies to what comes next
    await p.setPredicate("amount >= 300 AND paid = TRUE");
    const replaced = await example("replace_predicate.ts", [p.dir, `${p.dir}/third.plan.json`]);
    assert.equal(replaced.code, 0, replaced.all);
    assert.match(replaced.stdout, /action_completed/);
    assert.match(replaced.stdout, /committed: operation \S+, ownership serial 3/);
    const again = await example("wait_healthy.ts", [p.dir, "180"]);
    assert.equal(again.code, 0, again.all);

    // what stays: application ID and volume instance; the output follows each filter in turn
    const obs = (await project.observe()).runners[0];
    assert.equal(obs.application_id, appId);
    assert.equal(obs.volume.instance_label, instance);
    assert.equal(obs.containers.length, 1);
    await produce(env.bootstrapHost, p.inputTopic, [order("b1", 250), order("b2", 350)]);
    const out = await waitForRecords(env.bootstrapHost, p.outputTopic, 3, {
      partitions: [0, 1, 2],
    });
    // a1 and a2 passed the first filter (>= 100); b2 passes the third (>= 300), b1 (250) does not
    assert.deepEqual(out.map((r) => r.key).sort(), ["a1", "a2", "b2"]);
    assert.equal((await project.plan()).noop, true);
  } finally {
    if (appId) await removeLabelled(LABEL.applicationId, appId);
  }
});
