/**
 * The destroy journey's scenario on the fake world, on either state backend
 * (`lib/runtime/destroy_test.ts`: local; `destroy_pg_test.ts`: PostgreSQL): create two runners →
 * `plan --destroy` (its review names every runner it stops and, loudly, what it keeps) → apply
 * (TERM, clean close, each exact container removed, the last model down; volumes, offsets and
 * topics kept) → the same plan file again is a verified no-op → the unchanged project's plan is a
 * create resuming from the kept volumes and offsets → applied, both runners run again on their
 * kept volumes. `--delete-data` after it plans the deletion of what was kept.
 * {@link destroyDeletingScenario}: create (over an input topic sluice did not create) →
 * `plan --destroy --delete-data` (its review lists what it deletes and what it keeps) → apply
 * (runners down, then each group, volume and owned topic deleted; the input topic kept) → create
 * again from nothing (new topics, volumes and groups). Crash safety at each destroy site is the
 * crash sweep's `destroy` journey (testing/sweep/destroy.ts).
 *
 * @example
 * ```ts
 * import { destroyScenario } from "./destroy_case.ts";
 * // Deno.test("destroy", () => destroyScenario("local"));
 * ```
 * @module
 */
import assert from "node:assert/strict";
import { readPlanFile, writePlanFile } from "../../lib/plan/plan_file.ts";
import { reviewOfPlan } from "../../lib/review/review.ts";
import { renderReviewText } from "../../lib/review/render_text.ts";
import { loadProject } from "../../lib/project/load.ts";
import { destroyOperationId } from "../../lib/protocol/destroy.ts";
import { apply, plan } from "../../lib/runtime/session.ts";
import type { ProgressEvent } from "../../lib/runtime/progress.ts";
import { openCaseWorld } from "../sweep/fixture.ts";
import { prepareDestroy } from "../sweep/destroy.ts";
import { committedOf, containersOf, readState, volumeOf } from "../sweep/reads.ts";
import { fakeCli } from "../fake_cli.ts";

/**
 * Run the scenario on one backend (see the module documentation).
 *
 * @example
 * ```ts
 * import { destroyScenario } from "./destroy_case.ts";
 * // await destroyScenario("postgres");
 * ```
 */
export async function destroyScenario(backend: "local" | "postgres"): Promise<void> {
  await using cw = await openCaseWorld({ backend, seed: `destroy-${backend}` });
  const ch = await prepareDestroy(cw);
  const { plan: reviewed, sha256 } = await readPlanFile(ch.planPath);
  const apps = ch.runners.map((r) => r.applicationId);
  const action = reviewed.actions[0];
  assert.ok(action.type === "destroy");
  const bound = action.runners.map((x) => x.container.id);
  assert.deepEqual([...bound].sort(), ch.runners.map((x) => x.containerId).sort());

  // the review: every runner it stops, by container, and what it keeps, by name
  const project = await loadProject(cw.project.dir);
  const text = renderReviewText(reviewOfPlan({ project, plan: reviewed, sha256, file: null }));
  for (const r of ch.runners) {
    assert.match(text, new RegExp(`stop container \\S+ \\(${r.containerId.slice(0, 12)}`));
    assert.match(text, new RegExp(`state volume ${r.applicationId}-state`));
  }
  assert.match(text, /KEPT by this destroy \(nothing data-bearing is deleted\): topics /);
  for (const t of ch.topics) assert.match(text, new RegExp(`\\b${t}\\b`));

  // the CLI plans the same destroy (its flag), printing what it stops and keeps; read-only
  const cliPlan = await fakeCli(
    cw.worldPath,
    ["-o", "json", "plan", "--project", cw.project.dir, "--destroy"],
    { env: cw.env },
  );
  assert.equal(cliPlan.code, 0, cliPlan.stderr);
  const data = JSON.parse(cliPlan.stdout).data as {
    plan: { actions: Array<{ type: string; runners: unknown[] }> };
    review: { notes: string[] };
  };
  assert.deepEqual(data.plan.actions.map((a) => [a.type, a.runners.length]), [["destroy", 2]]);
  assert.ok(data.review.notes.some((n) => n.startsWith("KEPT by this destroy")));
  const refused = await fakeCli(
    cw.worldPath,
    ["plan", "--project", cw.project.dir, "--destroy", "--select", "eligible_orders"],
    { env: cw.env },
  );
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr + refused.stdout, /USAGE_DESTROY_OPTIONS/);

  // apply: both runners down, the last model included, nothing else mutated
  const events: ProgressEvent[] = [];
  const r = await apply({
    dir: cw.project.dir,
    plan: reviewed,
    planSha256: sha256,
    ...cw.deps,
    onProgress: (e) => events.push(e),
  });
  assert.equal(r.operation_id, destroyOperationId(sha256));
  assert.equal(r.serial, ch.setupSerial + 1);
  assert.deepEqual(r.removals?.removed.map((x) => x.application_id).sort(), [...apps].sort());
  assert.deepEqual(
    events.map((e) => e.kind),
    ["started", "intent", "action", "action", "action", "action", "committed"],
  );
  assert.ok(events.every((e) => e.journey === "destroy"));
  const w = cw.world.control.snapshot();
  const made = w.log.filter((m) => m.seq > ch.setupLogSeq && ["docker", "kafka"].includes(m.by))
    .map((m) => `${m.op} ${m.key}`);
  assert.deepEqual(
    made,
    // in the plan's order, each exactly its bound container
    bound.flatMap((id) => [`signalTerm ${id}`, `removeContainer ${id}`]),
  );
  for (const x of ch.runners) {
    assert.deepEqual(containersOf(w, x.applicationId), []);
    assert.deepEqual(volumeOf(w, `${x.applicationId}-state`), {
      label: x.volumeInstance,
      file: x.volumeInstance,
    });
    const kept = committedOf(w, x.applicationId, x.inputTopic);
    for (const [p, o] of Object.entries(x.committedAtPlan)) assert.ok(kept[p] >= o, p);
  }
  for (const t of ch.topics) assert.ok(w.kafka.topics[t], t);
  const state = await readState(cw.state);
  assert.deepEqual(state.ownership!.runners, []);
  assert.deepEqual(
    (state.ownership!.retained as Array<{ application_id: string }>).map((x) => x.application_id)
      .sort(),
    [...apps].sort(),
  );
  assert.deepEqual(
    (state.ownership!.topics as Array<{ name: string }>).map((t) => t.name).sort(),
    [...ch.topics].sort(),
  );
  assert.equal(state.control, null);

  // the same plan file again: committed, containers verified absent: a no-op
  const again = await apply({
    dir: cw.project.dir,
    plan: reviewed,
    planSha256: sha256,
    ...cw.deps,
  });
  assert.equal(again.already_applied, true);
  assert.equal(again.operation_id, r.operation_id);
  // a destroy after a destroy changes nothing (the data is kept, nothing runs)
  const twice = await plan({ dir: cw.project.dir, ...cw.deps, destroy: { deleteData: false } });
  assert.equal(twice.noop, true);

  // --delete-data after a destroy that kept the data: nothing runs, the kept data is deleted
  const deleting = await plan({ dir: cw.project.dir, ...cw.deps, destroy: { deleteData: true } });
  assert.deepEqual(deleting.plan.blockers, []);
  const del = deleting.plan.actions[0];
  assert.ok(del?.type === "destroy" && del.deletes, JSON.stringify(deleting.plan.actions));
  assert.deepEqual(del.runners, []);
  assert.deepEqual([...del.deletes.consumer_groups].sort(), [...apps].sort());
  assert.deepEqual(
    del.deletes.volumes.map((v) => v.name).sort(),
    apps.map((a) => `${a}-state`).sort(),
  );
  assert.deepEqual(del.deletes.topics.map((t) => t.name).sort(), [...ch.topics].sort());
  const usage = await fakeCli(
    cw.worldPath,
    ["plan", "--project", cw.project.dir, "--delete-data"],
    { env: cw.env },
  );
  assert.equal(usage.code, 2, usage.stderr);
  assert.match(usage.stderr + usage.stdout, /USAGE_DESTROY_OPTIONS/);

  // the unchanged project planned again: a create resuming from exactly what was kept
  const next = await plan({ dir: cw.project.dir, ...cw.deps });
  assert.deepEqual(next.plan.blockers, []);
  assert.deepEqual(next.plan.actions.map((a) => a.type), ["create_runner", "create_runner"]);
  for (const a of next.plan.actions) {
    assert.ok(a.type === "create_runner" && a.resume?.volume_kept === true, JSON.stringify(a));
    assert.equal(a.resume.removed_by, r.operation_id);
  }
  const created = await apply({
    dir: cw.project.dir,
    plan: next.plan,
    planSha256: next.sha256,
    ...cw.deps,
  });
  const w2 = cw.world.control.snapshot();
  for (const x of ch.runners) {
    const again = created.runners.find((y) => y.application_id === x.applicationId);
    assert.equal(again?.volume_instance, x.volumeInstance, x.applicationId);
    assert.equal(containersOf(w2, x.applicationId)[0]?.state.running, true);
    const now = committedOf(w2, x.applicationId, x.inputTopic);
    for (const [p, o] of Object.entries(x.committedAtPlan)) assert.ok(now[p] >= o, p);
  }
  assert.equal((await plan({ dir: cw.project.dir, ...cw.deps })).noop, true);
}

/**
 * Create → destroy deleting data → create again, on one backend (see the module documentation).
 *
 * @example
 * ```ts
 * import { destroyDeletingScenario } from "./destroy_case.ts";
 * // await destroyDeletingScenario("local");
 * ```
 */
export async function destroyDeletingScenario(backend: "local" | "postgres"): Promise<void> {
  await using cw = await openCaseWorld({ backend, seed: `destroy-delete-${backend}` });
  const ch = await prepareDestroy(cw, { deleteData: true });
  const input = ch.externalTopic!;
  const { plan: reviewed, sha256 } = await readPlanFile(ch.planPath);
  const apps = ch.runners.map((r) => r.applicationId);
  const action = reviewed.actions[0];
  assert.ok(action.type === "destroy" && action.deletes, JSON.stringify(reviewed.actions));
  assert.equal(action.runners.length, 2);
  const before = cw.world.control.snapshot();
  const ids = Object.fromEntries(ch.topics.map((t) => [t, before.kafka.topics[t].id]));
  assert.deepEqual(
    action.deletes.topics.map((t) => [t.name, t.topic_id]).sort(),
    Object.entries(ids).sort(),
  );
  assert.ok(!ch.topics.includes(input), "the external input topic is not deleted");
  assert.deepEqual(action.keeps.topics, [input]);

  // the review shows both lists: DELETED (groups, volumes, topics with their IDs) and KEPT
  const project = await loadProject(cw.project.dir);
  const text = renderReviewText(reviewOfPlan({ project, plan: reviewed, sha256, file: null }));
  assert.match(text.replace(/\s+/g, " "), /DELETES the data this project created/);
  // (the text wraps long notes: read it as one line)
  const flat = text.replace(/\s+/g, " ");
  const deleted = flat.slice(
    flat.indexOf("DELETED by this destroy"),
    flat.indexOf("KEPT by this destroy"),
  );
  assert.ok(deleted.length > 0, text);
  for (const a of apps) {
    assert.match(deleted, new RegExp(`\\b${a}\\b`));
    assert.match(deleted, new RegExp(`${a}-state`));
  }
  for (const t of ch.topics) assert.match(deleted, new RegExp(`${t} \\(id ${ids[t]}\\)`));
  assert.doesNotMatch(deleted, new RegExp(`\\b${input}\\b`));
  assert.match(
    flat,
    new RegExp(`KEPT by this destroy \\(not this project's to delete\\): topics ${input}`),
  );
  // the CLI's flags give the same destroy
  const cliPlan = await fakeCli(
    cw.worldPath,
    ["-o", "json", "plan", "--project", cw.project.dir, "--destroy", "--delete-data"],
    { env: cw.env },
  );
  assert.equal(cliPlan.code, 0, cliPlan.stderr);
  const data = JSON.parse(cliPlan.stdout).data as {
    plan: { actions: Array<{ type: string; deletes?: { topics: unknown[] } }> };
    review: { notes: string[] };
  };
  assert.equal(data.plan.actions[0].deletes?.topics.length, ch.topics.length);
  assert.ok(data.review.notes.some((n) => n.startsWith("DELETED by this destroy")));

  // apply: runners down, then groups, volumes, owned topics deleted — each once, in that order
  const events: ProgressEvent[] = [];
  const r = await apply({
    dir: cw.project.dir,
    plan: reviewed,
    planSha256: sha256,
    ...cw.deps,
    onProgress: (e) => events.push(e),
  });
  assert.equal(r.serial, ch.setupSerial + 1);
  assert.deepEqual(
    events.filter((e) => e.boundary?.startsWith("delete_") || e.boundary === "remove_volume")
      .map((e) => e.boundary),
    [
      ...apps.map(() => "delete_group"),
      ...apps.map(() => "remove_volume"),
      ...ch.topics.map(() => "delete_topic"),
    ],
  );
  const w = cw.world.control.snapshot();
  const made = w.log.filter((m) => m.seq > ch.setupLogSeq && ["docker", "kafka"].includes(m.by))
    .map((m) => m.op);
  assert.deepEqual(made, [
    ...action.runners.flatMap(() => ["signalTerm", "removeContainer"]),
    ...apps.map(() => "deleteGroup"),
    ...apps.map(() => "removeOwnedVolume"),
    ...ch.topics.map(() => "deleteTopic"),
  ]);
  for (const a of apps) {
    assert.deepEqual(containersOf(w, a), []);
    assert.equal(volumeOf(w, `${a}-state`), null, a);
    assert.equal(w.kafka.groups[a], undefined, a);
  }
  for (const t of ch.topics) assert.equal(w.kafka.topics[t], undefined, t);
  assert.ok(w.kafka.topics[input], "the input topic sluice did not create stays");
  const state = await readState(cw.state);
  assert.deepEqual(state.ownership!.runners, []);
  assert.deepEqual(state.ownership!.retained ?? [], []);
  assert.deepEqual(state.ownership!.topics, []);
  assert.equal(state.control, null);
  // the same plan file again: the verified no-op
  const again = await apply({
    dir: cw.project.dir,
    plan: reviewed,
    planSha256: sha256,
    ...cw.deps,
  });
  assert.equal(again.already_applied, true);
  // nothing is left to destroy
  const twice = await plan({ dir: cw.project.dir, ...cw.deps, destroy: { deleteData: true } });
  assert.equal(twice.noop, true);

  // create again: from nothing — new topics (new IDs), new volumes, no resume
  const next = await plan({ dir: cw.project.dir, ...cw.deps });
  assert.deepEqual(next.plan.blockers, []);
  for (const a of next.plan.actions) {
    assert.ok(a.type !== "create_runner" || !a.resume, JSON.stringify(a));
  }
  const created = await apply({
    dir: cw.project.dir,
    plan: next.plan,
    planSha256: next.sha256,
    ...cw.deps,
  });
  const w2 = cw.world.control.snapshot();
  for (const t of ch.topics) assert.notEqual(w2.kafka.topics[t]?.id ?? ids[t], ids[t], t);
  for (const x of ch.runners) {
    const fresh = created.runners.find((y) => y.application_id === x.applicationId);
    assert.ok(fresh, x.applicationId);
    assert.notEqual(fresh.volume_instance, x.volumeInstance, "a new volume");
    assert.equal(containersOf(w2, x.applicationId)[0]?.state.running, true);
  }
  assert.equal((await plan({ dir: cw.project.dir, ...cw.deps })).noop, true);
}

/**
 * A destroy of a project that owns Kafka Connect connectors (the pipeline): create with its two
 * connectors → `plan --destroy` with the Connect workers down is `ENV_CONNECT_UNREACHABLE` →
 * `plan --destroy` (its review names each connector it takes down) → an apply
 * killed at the connector row's site after the first deletion → the same plan file continues it
 * (the deleted connector found absent is done) → every connector and runner gone, ownership
 * without them → the project planned again creates its connectors again and resumes its runner.
 *
 * @example
 * ```ts
 * import { destroyConnectorScenario } from "./destroy_case.ts";
 * // Deno.test("destroy with connectors", () => destroyConnectorScenario("local"));
 * ```
 */
export async function destroyConnectorScenario(backend: "local" | "postgres"): Promise<void> {
  await using cw = await openCaseWorld({
    backend,
    seed: `destroy-connectors-${backend}`,
    pipeline: true,
  });
  const p = cw.pipeline!;
  const dir = p.dir;
  const created = await plan({ dir, ...cw.deps });
  assert.deepEqual(created.plan.blockers, []);
  await apply({ dir, plan: created.plan, planSha256: created.sha256, ...cw.deps });
  const connectors = () =>
    Object.keys(cw.world.control.snapshot().connect?.connectors ?? {}).sort();
  const both = [p.sourceConnector, p.sinkConnector].sort();
  assert.deepEqual(connectors(), both);

  // the Connect workers down: the destroy is not planned (the connector observation's ENV code)
  cw.world.connectControl.setReachable(false);
  await assert.rejects(
    plan({ dir, ...cw.deps, destroy: { deleteData: false } }),
    (e: { code?: string }) => e.code === "ENV_CONNECT_UNREACHABLE",
  );
  cw.world.connectControl.setReachable(true);
  const destroy = await plan({ dir, ...cw.deps, destroy: { deleteData: false } });
  assert.deepEqual(destroy.plan.blockers, []);
  const action = destroy.plan.actions[0];
  assert.ok(action.type === "destroy");
  assert.deepEqual(
    (action.connectors ?? []).map((c) => `${c.type} ${c.name}`).sort(),
    both.map((c) => `remove_connector ${c}`),
  );
  const project = await loadProject(dir);
  const text = renderReviewText(
    reviewOfPlan({ project, plan: destroy.plan, sha256: destroy.sha256, file: null }),
  );
  for (const c of both) assert.match(text, new RegExp(`CONNECTORS taken down first.*${c}`));
  const planPath = `${dir}/destroy.plan.json`;
  await writePlanFile(planPath, destroy.plan);

  // a connector changed by hand since the plan: refused before the intent, nothing written
  cw.world.connectControl.editByHand(p.sinkConnector, { "by.hand": "1" });
  await assert.rejects(
    apply({ dir, plan: destroy.plan, planSha256: destroy.sha256, ...cw.deps }),
    (e: { code?: string }) => e.code === "BLOCKED_CONNECTOR_DRIFT",
  );
  assert.equal((await readState(cw.state)).control, null);
  assert.deepEqual(connectors(), both);
  cw.world.connectControl.editByHand(p.sinkConnector, { "by.hand": undefined });

  // killed right after the first connector's deletion: the operation stays pending
  const applyArgs = ["-o", "json", "apply", "--project", dir, "--plan", planPath];
  const died = await fakeCli(cw.worldPath, applyArgs, {
    fault: "connect.delete_destroyed_connector:after",
    env: cw.env,
  });
  assert.equal(died.killedAtFault, true, died.stderr);
  assert.equal(connectors().length, 1);
  const seq = cw.world.control.snapshot().log.at(-1)?.seq ?? 0;
  // the killed process left its local lock: broken explicitly, as an operator would
  const view = (await fakeCli(cw.worldPath, ["-o", "json", "state", "show", "--project", dir], {
    env: cw.env,
  })).json!.data as { lock: { stale: boolean; holder: { lock_id: string } | null } };
  const brk = view.lock.stale ? ["--break-stale-lock", view.lock.holder!.lock_id] : [];
  const done = await fakeCli(cw.worldPath, [...applyArgs, ...brk], { env: cw.env });
  assert.equal(done.code, 0, done.stdout + done.stderr);
  assert.deepEqual(connectors(), []);
  const w = cw.world.control.snapshot();
  // the continuation deleted only the connector left, once, then took the runner down
  assert.deepEqual(
    w.log.filter((m) => m.seq > seq && m.by === "connect").map((m) => m.op),
    ["deleteConnector"],
  );
  assert.deepEqual(containersOf(w, cw.applicationId), []);
  const state = await readState(cw.state);
  assert.deepEqual(state.ownership?.connectors ?? [], []);
  assert.deepEqual(state.ownership?.runners ?? [], []);
  assert.equal(state.control, null);

  // the project planned again: its connectors created again, its runner resumed
  const again = await plan({ dir, ...cw.deps });
  assert.deepEqual(again.plan.blockers, []);
  const types = again.plan.actions.map((a) => a.type);
  assert.ok(types.includes("create_runner"), JSON.stringify(types));
  assert.equal(types.filter((t) => t === "create_connector").length, 2);
  await apply({ dir, plan: again.plan, planSha256: again.sha256, ...cw.deps });
  assert.deepEqual(connectors(), both);
  assert.equal(containersOf(cw.world.control.snapshot(), cw.applicationId).length, 1);
}
