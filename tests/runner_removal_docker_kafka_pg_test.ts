// test-needs: env
// Needs: Docker, the broker, the runner image, PostgreSQL (shared environment from tools/test.ts).
// Taking a job down on purpose (issue 18 item 5), as an operator would through the installed CLI
// (each command its own OS process), against real Docker, Kafka and the real runner, on the
// PostgreSQL state backend: a project with two models; the starter's model processes records; it is dropped from
// `models:` and declared in `lifecycle.runner_removals`; `plan --out` binds the removal to its
// exact container; `apply --plan` stops it (TERM, clean close) and removes its container only —
// the state volume, the group's committed offsets and both topics stay, the other model keeps
// running; records arrive while it is away; the model declared again resumes from the kept
// offsets with its kept volume: the output is exactly the records passing its filter, each once.
// And a removal whose runner was killed after its intent (exit 137: no clean close) is taken down
// in two commands, the manifest left as the removal has it: `sluice restart`, then the same
// `apply --plan`.
import assert from "node:assert/strict";
import { sharedEnv } from "../harness/env.ts";
import { dockerCli, removeLabelled } from "../harness/docker.ts";
import { committedOffsets, offsetRange, produce, readAll } from "../harness/kafka.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { apply, plan } from "../lib/runtime/session.ts";
import { readPlanFile } from "../lib/plan/plan_file.ts";
import { LABEL } from "../lib/runtime/labels.ts";
import { caughtUp, containersOf, expectedStarterOutput } from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const launcher = new URL("../bin/sluice", import.meta.url).pathname;
const PARTS = [0, 1, 2];
const SPARE = "spare_orders";

async function cli(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(launcher, { args, env, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  const r = { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  return { ...r, say: `exit ${r.code}\n${r.stdout}\n${r.stderr}` };
}

async function docker(args: string[]): Promise<{ code: number; out: string }> {
  const o = await new Deno.Command(dockerCli(), { args, stdout: "piped", stderr: "piped" })
    .output();
  return { code: o.code, out: new TextDecoder().decode(o.stdout).trim() };
}

const order = (id: string, amount: number, partition: number) => ({
  key: id,
  value: JSON.stringify({ order_id: id, amount, paid: true, customer: null }),
  partition,
});

/**
 * The starter project with a second model, both created through the SDK, records processed by
 * the starter's model; `run` gets them and every application ID is removed afterwards.
 */
async function withTwoModels(
  backend: "local" | "postgres",
  run: (s: {
    shared: Awaited<ReturnType<typeof sharedEnv>>;
    p: Awaited<ReturnType<typeof starterProject>>;
    env: Record<string, string>;
    block: string;
    app: { application_id: string; container_id: string; volume_instance: string };
    spare: { application_id: string };
    a: ReturnType<typeof order>[];
    before: Record<string, string>;
    offsets: () => Promise<Record<string, string>>;
    caughtUpNow: () => Promise<Record<string, string>>;
  }) => Promise<void>,
) {
  const shared = await sharedEnv();
  const dsnVar = "SLUICE_TEST_STATE_DSN";
  const env: Record<string, string> = {};
  if (backend === "postgres") {
    Deno.env.set(dsnVar, shared.pgUrl);
    env[dsnVar] = shared.pgUrl;
  }
  const p = await starterProject(shared, {
    image: await runnerImageId(),
    stateDsnEnv: backend === "postgres" ? dsnVar : undefined,
  });
  const starterBlock = (text: string) =>
    text.match(/^ {2}eligible_orders:\n {4}sql: .*\n {4}output:\n {6}topic: .*\n/m)![0];
  await p.editManifest((t) =>
    t.replace(
      "models:\n",
      `models:\n  ${SPARE}:\n    sql: models/eligible_orders.sql\n    output:\n      topic: spare_${p.outputTopic}\n`,
    )
  );
  const block = starterBlock(await Deno.readTextFile(`${p.dir}/sluice.yaml`));
  const apps: string[] = [];
  try {
    const created = await plan({ dir: p.dir });
    assert.deepEqual(created.plan.blockers, []);
    const c = await apply({
      dir: p.dir,
      plan: created.plan,
      planSha256: created.sha256,
      extraLabels: shared.labels,
    });
    apps.push(...c.runners.map((r) => r.application_id));
    const app = c.runners.find((r) => r.application_id.endsWith("-eligible_orders"))!;
    const spare = c.runners.find((r) => r.application_id !== app.application_id)!;
    const offsets = async () =>
      Object.fromEntries(
        [...await committedOffsets(shared.bootstrapHost, app.application_id, p.inputTopic)]
          .map(([k, v]) => [String(k), String(v)]),
      );
    const caughtUpNow = () =>
      caughtUp(shared.bootstrapHost, app.application_id, p.inputTopic, PARTS);
    const a = PARTS.flatMap((k) => [order(`a${k}`, 150, k), order(`b${k}`, 50, k)]);
    await produce(shared.bootstrapHost, p.inputTopic, a);
    const before = await caughtUpNow();
    await run({ shared, p, env, block, app, spare, a, before, offsets, caughtUpNow });
  } finally {
    for (const id of apps) await removeLabelled(LABEL.applicationId, id);
  }
}

/** Drop the starter's model, declare its removal, and `plan --out` it (checked bound). */
async function planRemoval(
  p: Awaited<ReturnType<typeof starterProject>>,
  env: Record<string, string>,
  block: string,
  app: { container_id: string; volume_instance: string },
): Promise<string> {
  await p.editManifest((t) =>
    t.replace(block, "").replace(/consumes: eligible_orders$/m, `consumes: ${SPARE}`) +
    "lifecycle:\n  runner_removals:\n    - model: eligible_orders\n"
  );
  const planPath = `${p.dir}/remove.plan.json`;
  const planned = await cli(["plan", "--project", p.dir, "--out", planPath], env);
  assert.equal(planned.code, 0, planned.say);
  assert.match(planned.stdout, /- remove runner .*eligible_orders.*stop container/);
  const { plan: removal } = await readPlanFile(planPath);
  const action = removal.actions[0];
  assert.equal(removal.actions.length, 1);
  assert.ok(action.type === "remove_runner");
  assert.equal(action.container.id, app.container_id);
  assert.equal(action.volume.instance_id, app.volume_instance);
  return planPath;
}

// One backend: what the removal keeps is read from real Docker and Kafka, and the state backend
// only records it — both backends' removal tables run over the fakes (lib/runtime/removal_test.ts,
// the crash sweep) and the fault matrix's removal cases (probes/catalogue.ts, SUITE_MATRIX).
for (const backend of ["postgres"] as const) {
  Deno.test(
    `${backend}: a runner removed on purpose keeps its volume, offsets and topics; declared again it resumes from them, output exact`,
    opts,
    () =>
      withTwoModels(
        backend,
        async ({ shared, p, env, block, app, spare, a, before, offsets, caughtUpNow }) => {
          const planPath = await planRemoval(p, env, block, app);
          const applied = await cli(
            ["-o", "json", "apply", "--project", p.dir, "--plan", planPath],
            env,
          );
          assert.equal(applied.code, 0, applied.say);
          const removed = JSON.parse(applied.stdout).data.removals.removed[0];
          assert.ok([0, 143].includes(removed.exit_code), applied.say);

          // the container is gone; volume, offsets and topics are kept; the other model runs on
          assert.deepEqual(await containersOf(app.application_id), []);
          const vol = await docker([
            "volume",
            "inspect",
            "-f",
            `{{index .Labels "${LABEL.volumeInstance}"}}`,
            `${app.application_id}-state`,
          ]);
          assert.equal(vol.code, 0, "the state volume is kept");
          assert.equal(vol.out, app.volume_instance);
          assert.deepEqual(await offsets(), before, "the committed offsets are kept");
          const topics = await offsetRange(shared.bootstrapHost, p.outputTopic, PARTS);
          assert.equal(topics.length, 3, "the output topic is kept");
          const running = await docker([
            "inspect",
            "-f",
            "{{.State.Running}}",
            ...(await containersOf(spare.application_id)),
          ]);
          assert.equal(running.out, "true");
          const noop = await cli(["-o", "json", "plan", "--project", p.dir], env);
          assert.equal(noop.code, 0, noop.say);
          assert.equal(JSON.parse(noop.stdout).data.noop, true, noop.say);

          // records arrive while the model is away; it is declared again and resumes
          const b = PARTS.flatMap((k) => [order(`c${k}`, 400, k), order(`d${k}`, 20, k)]);
          await produce(shared.bootstrapHost, p.inputTopic, b);
          await p.editManifest((t) =>
            t.replace(/lifecycle:\n {2}runner_removals:\n {4}- model: eligible_orders\n/, "")
              .replace("models:\n", `models:\n${block}`)
          );
          const readdPath = `${p.dir}/readd.plan.json`;
          const readd = await cli(["plan", "--project", p.dir, "--out", readdPath], env);
          assert.equal(readd.code, 0, readd.say);
          assert.match(readd.stdout, /resumes from the consumer group offsets removal/);
          const back = await cli(
            ["-o", "json", "apply", "--project", p.dir, "--plan", readdPath],
            env,
          );
          assert.equal(back.code, 0, back.say);
          const again = JSON.parse(back.stdout).data.runners[0];
          assert.equal(again.volume_instance, app.volume_instance, "the kept volume is adopted");
          await caughtUpNow();

          // exact output: every record passing the filter once, with its projected value; nothing
          // from before replayed
          const got = (await readAll(shared.bootstrapHost, p.outputTopic, { partitions: PARTS }))
            .map((r) => ({ key: r.key, value: JSON.parse(r.value!) }))
            .sort((x, y) => (x.key ?? "").localeCompare(y.key ?? ""));
          const want = expectedStarterOutput(
            [...a, ...b].map((r) => ({ key: r.key, value: JSON.parse(r.value) })),
          );
          assert.equal(want.length, 6, "records of both batches pass the filter");
          assert.deepEqual(got, want);
        },
      ),
  );
}

Deno.test(
  "local: a removal whose runner was killed after its intent is taken down by 'sluice restart' and the same apply --plan",
  opts,
  () =>
    withTwoModels("local", async ({ p, env, block, app, before, offsets }) => {
      const planPath = await planRemoval(p, env, block, app);
      const applyArgs = ["-o", "json", "apply", "--project", p.dir, "--plan", planPath];
      // the apply dies right before its TERM (the intent recorded), then the runner is killed
      const died = await cli(applyArgs, {
        ...env,
        SLUICE_FAULT_POINT: "docker.term_removed_runner:before",
        SLUICE_TEST_ONLY_ALLOW_FAULTS: "1",
      });
      assert.match(died.say, /SLUICE_FAULT_FIRED docker\.term_removed_runner:before/);
      assert.equal((await docker(["kill", app.container_id])).code, 0);
      const show = await cli(["-o", "json", "state", "show", "--project", p.dir], env);
      const view = JSON.parse(show.stdout).data as {
        lock: { stale: boolean; holder: { lock_id: string } | null };
        pending_operation: { kind: string; operation_id: string } | null;
      };
      assert.equal(view.pending_operation?.kind, "runner_removal", show.say);
      const brk = view.lock.stale ? ["--break-stale-lock", view.lock.holder!.lock_id] : [];
      const blocked = await cli([...applyArgs, ...brk], env);
      assert.equal(blocked.code, 4, blocked.say);
      const refusal = JSON.parse(blocked.stdout).errors as Array<{ code: string; message: string }>;
      assert.ok(refusal.some((e) => e.code === "BLOCKED_UNCLEAN_EXIT"), blocked.say);
      assert.ok(
        refusal.at(-1)!.message.includes("Way out: 'sluice restart eligible_orders --reason TEXT'"),
        blocked.say,
      );

      // the way out: the same container back (after its dead member left), then removed
      const restarted = await cli([
        "-o",
        "json",
        "restart",
        "eligible_orders",
        "--project",
        p.dir,
        "--reason",
        "killed during its removal",
      ], env);
      assert.equal(restarted.code, 0, restarted.say);
      const r = JSON.parse(restarted.stdout).data;
      assert.equal(r.container_id, app.container_id);
      assert.equal(r.stop.exit_code, 137);
      const removed = await cli(applyArgs, env);
      assert.equal(removed.code, 0, removed.say);
      const done = JSON.parse(removed.stdout).data.removals;
      assert.equal(done.operation_id, view.pending_operation!.operation_id);
      assert.equal(done.continued, true);
      assert.ok([0, 143].includes(done.removed[0].exit_code), removed.say);
      assert.deepEqual(await containersOf(app.application_id), []);
      assert.deepEqual(await offsets(), before, "the committed offsets are kept");
      const noop = await cli(["-o", "json", "plan", "--project", p.dir], env);
      assert.equal(noop.code, 0, noop.say);
      assert.equal(JSON.parse(noop.stdout).data.noop, true, noop.say);
    }),
);
