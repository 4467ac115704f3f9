/**
 * The destroy journey's scenario on the fake world, on either state backend
 * (`lib/runtime/destroy_test.ts`: local; `destroy_pg_test.ts`: PostgreSQL): create two runners →
 * `plan --destroy` (its review names every runner it stops and, loudly, what it keeps) → apply
 * (TERM, clean close, each exact container removed, the last model down; volumes, offsets and
 * topics kept) → the same plan file again is a verified no-op → the unchanged project's plan is a
 * create resuming from the kept volumes and offsets → applied, both runners run again on their
 * kept volumes. `--delete-data` is refused (`BLOCKED_DESTROY_DATA_DELETION`), naming each
 * data-bearing resource it would keep. Crash safety at each destroy site is the crash sweep's
 * `destroy` journey (testing/sweep/destroy.ts).
 *
 * @example
 * ```ts
 * import { destroyScenario } from "./destroy_case.ts";
 * // Deno.test("destroy", () => destroyScenario("local"));
 * ```
 * @module
 */
import assert from "node:assert/strict";
import { readPlanFile } from "../../lib/plan/plan_file.ts";
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

  // --delete-data is refused, each data-bearing resource named
  const deleting = await plan({ dir: cw.project.dir, ...cw.deps, destroy: { deleteData: true } });
  assert.deepEqual(deleting.plan.blockers.map((b) => b.code), ["BLOCKED_DESTROY_DATA_DELETION"]);
  for (const t of ch.topics) assert.match(deleting.plan.blockers[0].message, new RegExp(t));
  for (const a of apps) assert.match(deleting.plan.blockers[0].message, new RegExp(`${a}-state`));
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
