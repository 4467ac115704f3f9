// The runner-removal journey on the fake world (testing/fakes), through the public SDK: the
// reviewed plan shows what it stops and what it keeps; apply stops the bound generation with TERM,
// removes its container only and releases ownership, keeping the volume, the group's offsets and
// the topics; applied again it is a verified no-op; a blocked apply (the runner changed since the
// plan) mutates nothing; a model declared again resumes from the kept offsets and volume (nothing
// repositions them) with exact output. Crash safety at each site of the removal table is the crash sweep's `removal`
// journey (testing/sweep).
import assert from "node:assert/strict";
import { SluiceError } from "../errors.ts";
import { readPlanFile } from "../plan/plan_file.ts";
import { reviewOfPlan } from "../review/review.ts";
import { renderReviewText } from "../review/render_text.ts";
import {
  OLD_PREDICATE,
  openCaseWorld,
  orders,
  prepareRemoval,
  SPARE_MODEL,
} from "../../testing/sweep/fixture.ts";
import {
  committedOf,
  containersOf,
  readState,
  type readWorldFile,
  volumeOf,
} from "../../testing/sweep/reads.ts";
import { loadProject } from "../project/load.ts";
import { removalOperationId } from "../protocol/removal.ts";
import { apply, plan } from "./session.ts";
import { fakeCli } from "../../testing/fake_cli.ts";

const MUTATIONS = ["docker", "kafka"];

Deno.test("removal on fakes: reviewed, applied (TERM, container only), kept volume/offsets/topics, a verified repeat, re-added resumes from the kept offsets", async () => {
  await using cw = await openCaseWorld({ backend: "local", seed: "removal-unit" });
  const ch = await prepareRemoval(cw);
  const app = cw.applicationId;
  const { plan: reviewed, sha256 } = await readPlanFile(ch.planPath);

  // the review names the exact container it stops and everything that stays
  const project = await loadProject(cw.project.dir);
  const text = renderReviewText(reviewOfPlan({ project, plan: reviewed, sha256, file: null }));
  assert.match(
    text,
    new RegExp(
      `- remove runner ${app} \\(model eligible_orders\\): stop container ${app} \\(${
        ch.containerId.slice(0, 12)
      }`,
    ),
  );
  assert.match(text, new RegExp(`state volume ${app}-state \\(instance ${ch.volumeInstance}\\)`));
  assert.match(text, new RegExp(`topics ${cw.project.inputTopic}, ${cw.project.outputTopic}`));
  assert.match(
    text,
    /its consumer group with its committed offsets, and its topics with their records stay/,
  );

  const r = await apply({ dir: cw.project.dir, plan: reviewed, planSha256: sha256, ...cw.deps });
  assert.equal(r.operation_id, removalOperationId(sha256));
  assert.equal(r.serial, ch.setupSerial + 1);
  assert.equal(r.removals?.removed.length, 1);
  const removed = r.removals!.removed[0];
  assert.equal(removed.container_id, ch.containerId);
  assert.ok(removed.exit_code === 0 || removed.exit_code === 143, String(removed.exit_code));
  assert.equal(removed.kept.volume, `${app}-state`);
  assert.equal(removed.kept.consumer_group, app);

  const w = cw.world.control.snapshot();
  const made = w.log.filter((m) => m.seq > ch.setupLogSeq && MUTATIONS.includes(m.by))
    .map((m) => `${m.op} ${m.key}`);
  assert.deepEqual(made, [`signalTerm ${ch.containerId}`, `removeContainer ${ch.containerId}`]);
  assert.deepEqual(containersOf(w, app), []);
  assert.equal(containersOf(w, ch.spareApplicationId)[0]?.state.running, true);
  assert.deepEqual(volumeOf(w, `${app}-state`), {
    label: ch.volumeInstance,
    file: ch.volumeInstance,
  });
  const kept = committedOf(w, app, cw.project.inputTopic);
  assert.ok(Object.keys(ch.committedAtPlan).length > 0);
  for (const [p, o] of Object.entries(ch.committedAtPlan)) {
    assert.ok(kept[p] >= o, `partition ${p}`);
  }
  assert.ok(w.kafka.topics[cw.project.inputTopic] && w.kafka.topics[cw.project.outputTopic]);
  const state = await readState(cw.state);
  assert.deepEqual(
    (state.ownership!.runners as Array<{ model: string }>).map((x) => x.model),
    [SPARE_MODEL],
  );
  assert.ok(
    (state.ownership!.topics as Array<{ name: string }>).some((t) =>
      t.name === cw.project.outputTopic
    ),
  );
  assert.equal(state.control, null);

  // state show names what was kept
  const shown = await fakeCli(cw.worldPath, ["state", "show", "--project", cw.project.dir], {
    env: cw.env,
  });
  assert.match(
    shown.stdout,
    new RegExp(
      `kept {6}eligible_orders \\(${app}\\): volume ${app}-state and the group's offsets, kept by removal ${r.operation_id}`,
    ),
  );

  // the same plan file again: the audit names its operation, the container is gone: a no-op
  const again = await apply({
    dir: cw.project.dir,
    plan: reviewed,
    planSha256: sha256,
    ...cw.deps,
  });
  assert.equal(again.already_applied, true);
  assert.equal(again.operation_id, r.operation_id);
  const seq = cw.world.control.mutations().at(-1)!.seq;

  // the next plan is a no-op; declaring the model again is refused (offsets and volume kept)
  assert.equal((await plan({ dir: cw.project.dir, ...cw.deps })).noop, true);
  await cw.project.editManifest((t) =>
    t.replace(/lifecycle:\n {2}runner_removals:\n {4}- model: eligible_orders\n/, "").replace(
      "models:\n",
      `models:\n  eligible_orders:\n    sql: models/eligible_orders.sql\n    output:\n      topic: ${cw.project.outputTopic}\n`,
    )
  );
  const readd = await plan({ dir: cw.project.dir, ...cw.deps });
  assert.deepEqual(readd.plan.blockers, []);
  assert.equal(cw.world.control.mutations().at(-1)!.seq, seq, "planning mutated nothing");
  const create = readd.plan.actions.find((a) => a.type === "create_runner");
  assert.ok(create?.type === "create_runner");
  assert.deepEqual(create.resume, {
    removed_by: r.operation_id,
    volume_instance: ch.volumeInstance,
    volume_kept: true,
  });
  // more input while the model was away: the runner declared again processes it, and only it
  cw.produce(orders("b", [500, 20, 130, 260]));
  const back = await apply({
    dir: cw.project.dir,
    plan: readd.plan,
    planSha256: readd.sha256,
    ...cw.deps,
  });
  assert.equal(back.runners[0].volume_instance, ch.volumeInstance);
  const w2 = cw.world.control.snapshot();
  const made2 = w2.log.filter((m) => m.seq > seq && MUTATIONS.includes(m.by)).map((m) => m.op);
  assert.ok(!made2.includes("setGroupOffsets"), `the kept offsets were repositioned: ${made2}`);
  assert.ok(!made2.includes("createVolume"), "the kept volume was not adopted");
  const ownedAgain = (await readState(cw.state)).ownership!;
  assert.equal(ownedAgain.retained, undefined, "the kept record is released by the create");
  assert.deepEqual(
    (ownedAgain.runners as Array<{ model: string; volume: { instance_id: string } }>).map((
      x,
    ) => [x.model, x.volume.instance_id]).sort(),
    [["eligible_orders", ch.volumeInstance], [
      SPARE_MODEL,
      (ownedAgain.runners as Array<{ model: string; volume: { instance_id: string } }>).find((x) =>
        x.model === SPARE_MODEL
      )!.volume.instance_id,
    ]],
  );
  // exact output: every produced record once (the kept offsets were resumed, never reset)
  const w3 = cw.world.control.snapshot();
  const out = outputKeys(w3, cw.project.outputTopic);
  const expected = [...cw.produced.values()].filter(OLD_PREDICATE).map((o) => o.order_id).sort();
  assert.deepEqual(out, expected);

  // the removal plan applied again after the model came back (a later change): its commit names
  // the plan file, so the answer names the removal, not a stale state, and nothing is written
  const seq3 = cw.world.control.mutations().at(-1)!.seq;
  const before = await readState(cw.state);
  await assert.rejects(
    apply({ dir: cw.project.dir, plan: reviewed, planSha256: sha256, ...cw.deps }),
    (e: unknown) =>
      e instanceof SluiceError && e.code === "PLAN_ALREADY_APPLIED" &&
      e.message.startsWith(`this plan was already applied by operation ${r.operation_id} (`),
  );
  assert.equal(cw.world.control.mutations().at(-1)!.seq, seq3, "nothing was done");
  assert.deepEqual(await readState(cw.state), before);
});

/** The output topic's record keys, sorted (duplicates kept). */
function outputKeys(w: ReturnType<typeof readWorldFile>, topic: string): string[] {
  return (w.kafka.topics[topic]?.partitions ?? []).flatMap((p) => p.records.map((r) => r.key ?? ""))
    .sort();
}

Deno.test("removal on fakes: a runner that changed since the plan blocks the apply, which mutates nothing", async () => {
  await using cw = await openCaseWorld({ backend: "local", seed: "removal-blocked" });
  const ch = await prepareRemoval(cw);
  const { plan: reviewed, sha256 } = await readPlanFile(ch.planPath);
  cw.world.control.killContainer(ch.containerId);
  const seq = cw.world.control.mutations().at(-1)!.seq;
  const before = await readState(cw.state);
  await assert.rejects(
    apply({ dir: cw.project.dir, plan: reviewed, planSha256: sha256, ...cw.deps }),
    (e: unknown) => e instanceof SluiceError && e.code === "BLOCKED_RUNNER_NOT_RUNNING",
  );
  const w = cw.world.control.snapshot();
  const made = w.log.filter((m) => m.seq > seq && MUTATIONS.includes(m.by));
  assert.deepEqual(made.map((m) => m.op), []);
  const after = await readState(cw.state);
  assert.equal(after.control, null);
  assert.deepEqual(after.ownership, before.ownership);
  assert.equal(containersOf(w, cw.applicationId).length, 1);
});

/**
 * A removal apply killed at `fault` (after its intent), then `meanwhile` done to the world: the
 * CLI on the world, the apply's arguments, and the stale lock's break (empty when not stale).
 */
async function removalDiedAt(
  cw: Awaited<ReturnType<typeof openCaseWorld>>,
  fault: string,
  meanwhile: (ch: Awaited<ReturnType<typeof prepareRemoval>>) => void = () => {},
) {
  const ch = await prepareRemoval(cw);
  const dir = cw.project.dir;
  const applyArgs = ["-o", "json", "apply", "--project", dir, "--plan", ch.planPath];
  const died = await fakeCli(cw.worldPath, applyArgs, { fault, env: cw.env });
  assert.equal(died.killedAtFault, true, died.stderr);
  meanwhile(ch);
  const cli = (args: string[]) =>
    fakeCli(cw.worldPath, ["-o", "json", ...args, "--project", dir], { env: cw.env });
  const view = (await cli(["state", "show"])).json!.data as {
    lock: { stale: boolean; holder: { lock_id: string } | null };
    pending_operation: { kind: string; operation_id: string } | null;
  };
  const brk = view.lock.stale ? ["--break-stale-lock", view.lock.holder!.lock_id] : [];
  return { ch, dir, applyArgs, cli, view, brk };
}

Deno.test("removal on fakes: a runner killed after the intent is not a clean close: blocked, its container kept, ownership unchanged", async () => {
  await using cw = await openCaseWorld({ backend: "local", seed: "removal-unclean" });
  // the apply dies right before its TERM: the intent is recorded, the runner still runs;
  // meanwhile someone kills the runner (exit 137): no clean-close evidence
  const { ch, applyArgs, view, brk } = await removalDiedAt(
    cw,
    "docker.term_removed_runner:before",
    (ch) => cw.world.control.killContainer(ch.containerId),
  );
  assert.equal(view.pending_operation?.kind, "runner_removal");
  const again = await fakeCli(cw.worldPath, [...applyArgs, ...brk], { env: cw.env });
  assert.equal(again.code, 4, again.stdout + again.stderr);
  assert.deepEqual(again.json!.errors.map((e) => e.code), ["BLOCKED_UNCLEAN_EXIT"]);
  const w = cw.world.control.snapshot();
  assert.equal(containersOf(w, cw.applicationId).length, 1, "the stopped container is kept");
  assert.ok(!w.log.some((m) => m.seq > ch.setupLogSeq && m.op === "removeContainer"));
  const state = await readState(cw.state);
  assert.equal(state.ownership!.serial, ch.setupSerial);
  assert.notEqual(state.control, null, "the operation stays pending for the operator");
});

// Issue 18 item 7: a removal whose runner did not close cleanly (killed: exit 137) is a precise
// blocker naming the way out through sluice, and that way works in two commands, the manifest
// left as the removal has it: `sluice restart` brings the same generation back from its
// committed offsets while the removal is pending, and the same plan file applied again stops it
// with TERM, checks its clean close and removes it.
Deno.test("removal on fakes: a killed runner's blocker names the way out (restart, the same apply), and it works", async () => {
  await using cw = await openCaseWorld({ backend: "local", seed: "removal-unclean-way" });
  const { ch, dir, applyArgs, cli, view, brk } = await removalDiedAt(
    cw,
    "docker.term_removed_runner:before",
    (ch) => cw.world.control.killContainer(ch.containerId),
  );
  const manifest = await Deno.readTextFile(`${dir}/sluice.yaml`);
  const operationId = view.pending_operation!.operation_id;
  const again = await fakeCli(cw.worldPath, [...applyArgs, ...brk], { env: cw.env });
  assert.equal(again.code, 4, again.stdout + again.stderr);
  const message = (again.json!.errors[0] as { message: string }).message;
  assert.match(message, /the runner exited with code 137; only 0 or 143 is a clean close/);
  assert.ok(
    message.includes(
      `removal ${operationId} stays pending with the container kept. Way out: 'sluice restart eligible_orders --reason TEXT' (the same generation runs again from its committed offsets), then the same 'sluice apply --plan FILE'`,
    ),
    message,
  );

  // another model's restart is still refused while the removal is pending
  const other = await cli(["restart", SPARE_MODEL, "--reason", "not the removed one"]);
  assert.equal(other.code, 4, other.stdout + other.stderr);
  assert.deepEqual(other.json!.errors.map((e) => e.code), ["BLOCKED_OPERATION_PENDING"]);

  // the way out, through sluice, with the manifest untouched
  const restarted = await cli([
    "restart",
    "eligible_orders",
    "--reason",
    "killed during its removal",
  ]);
  assert.equal(restarted.code, 0, restarted.stdout + restarted.stderr);
  const r = restarted.json!.data as { container_id: string; stop: { exit_code: number } };
  assert.equal(r.container_id, ch.containerId, "the same bound container");
  assert.equal(r.stop.exit_code, 137);
  assert.equal(cw.world.control.container(ch.containerId)?.state.running, true);
  assert.equal(await Deno.readTextFile(`${dir}/sluice.yaml`), manifest);
  const removed = await fakeCli(cw.worldPath, applyArgs, { env: cw.env });
  assert.equal(removed.code, 0, removed.stdout + removed.stderr);
  const data = removed.json!.data as {
    removals?: {
      operation_id: string;
      continued: boolean;
      removed: Array<{ model: string; exit_code: number }>;
    };
  };
  assert.equal(data.removals?.operation_id, operationId);
  assert.equal(data.removals?.continued, true);
  assert.deepEqual(data.removals?.removed.map((x) => [x.model, x.exit_code]), [[
    "eligible_orders",
    143,
  ]]);
  assert.equal(containersOf(cw.world.control.snapshot(), cw.applicationId).length, 0);
  const state = await readState(cw.state);
  assert.equal(state.control, null);
  assert.equal(state.ownership!.serial, ch.setupSerial + 1);
});

Deno.test("removal on fakes: a pending removal's runner that closed cleanly is not restarted — the removal continues with its plan file", async () => {
  await using cw = await openCaseWorld({ backend: "local", seed: "removal-clean-no-restart" });
  const { ch, applyArgs, cli, brk } = await removalDiedAt(
    cw,
    "docker.remove_removed_runner:before",
  );
  assert.equal(cw.world.control.container(ch.containerId)?.state.exit_code, 143);
  const seq = cw.world.control.snapshot().log.at(-1)?.seq ?? 0;
  const refused = await cli(["restart", "eligible_orders", "--reason", "no", ...brk]);
  assert.equal(refused.code, 4, refused.stdout + refused.stderr);
  assert.deepEqual(refused.json!.errors.map((e) => e.code), ["BLOCKED_OPERATION_PENDING"]);
  assert.match(
    (refused.json!.errors[0] as { message: string }).message,
    /closed cleanly \(exit 143\): the removal can use that close; continue it with its plan file/,
  );
  const w = cw.world.control.snapshot();
  assert.deepEqual(
    w.log.filter((m) => m.seq > seq && MUTATIONS.includes(m.by)).map((m) => m.op),
    [],
  );
  const done = await fakeCli(cw.worldPath, applyArgs, { env: cw.env });
  assert.equal(done.code, 0, done.stdout + done.stderr);
  assert.equal(containersOf(cw.world.control.snapshot(), cw.applicationId).length, 0);
});

Deno.test("removal on fakes: a pending removal's runner stopped on a record it cannot decode is moved past it by skip-record (restarted), then removed by the same apply", async () => {
  await using cw = await openCaseWorld({ backend: "local", seed: "removal-poison" });
  const { ch, applyArgs, cli, brk } = await removalDiedAt(
    cw,
    "docker.term_removed_runner:before",
    () =>
      cw.world.control.produce(cw.project.inputTopic, [{
        key: "bad",
        value: JSON.stringify({ order_id: "bad", amount: "lots", paid: true, customer: null }),
      }]),
  );
  assert.equal(cw.world.control.container(ch.containerId)?.state.exit_code, 13);
  const blocked = await fakeCli(cw.worldPath, [...applyArgs, ...brk], { env: cw.env });
  assert.equal(blocked.code, 4, blocked.stdout + blocked.stderr);
  assert.ok(blocked.json!.errors.some((e) => e.code === "BLOCKED_UNCLEAN_EXIT"));
  const restart = await cli(["restart", "eligible_orders", "--reason", "r"]);
  assert.equal(restart.code, 4, restart.stdout + restart.stderr);
  assert.deepEqual(restart.json!.errors.map((e) => e.code), ["BLOCKED_POISON_RECORD"]);
  // the blocker names the record (the model is no longer declared: status lists declared ones)
  const refusal = restart.json!.errors[0] as unknown as {
    message: string;
    evidence: { blockers: Array<{ evidence: { partition: number; offset: number } }> };
  };
  const rec = refusal.evidence.blockers[0].evidence;
  assert.ok(
    refusal.message.includes(
      `'sluice skip-record eligible_orders --partition ${rec.partition} --offset ${rec.offset} --reason TEXT'`,
    ),
    refusal.message,
  );
  const skipped = await cli([
    "skip-record",
    "eligible_orders",
    "--partition",
    String(rec.partition),
    "--offset",
    String(rec.offset),
    "--reason",
    "a text amount",
  ]);
  assert.equal(skipped.code, 0, skipped.stdout + skipped.stderr);
  assert.equal(cw.world.control.container(ch.containerId)?.state.running, true);
  const removed = await fakeCli(cw.worldPath, applyArgs, { env: cw.env });
  assert.equal(removed.code, 0, removed.stdout + removed.stderr);
  assert.equal(containersOf(cw.world.control.snapshot(), cw.applicationId).length, 0);
  const state = await readState(cw.state);
  assert.equal(state.control, null);
  assert.equal(state.ownership!.serial, ch.setupSerial + 1);
});
