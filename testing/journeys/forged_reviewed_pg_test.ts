// test-needs: postgres
// A reviewed (format-6) plan file acts only under its state store's keyed seal (issue 27 item
// 2), on both state backends' real code over the fakes: the replacement's plan edited and
// re-sealed by someone without the key (its typed action and its checksum re-computed, so the
// file's sha256 seal and the typed action's checksum hold), stripped of its keyed seal, or sealed
// with another key is refused before anything is written — no Docker or Kafka mutation, the
// state as it was — and the plan as the store sealed it still commits.
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import { atomicReplace } from "../../lib/fs/atomic_write.ts";
import type { Plan } from "../../lib/plan/plan.ts";
import { typedActionSha256 } from "../../lib/plan/plan.ts";
import { artifactSha256, type RunnerArtifact } from "../../lib/artifact/artifact.ts";
import { canonicalJson } from "../../lib/artifact/canonical.ts";
import { readPlanFile, sealPlan } from "../../lib/plan/plan_file.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { plan as planProject } from "../../lib/runtime/session.ts";
import type { SealKey } from "../../lib/state/seal_key.ts";
import { BACKENDS, type ReplacementCase, replacementCase } from "./replacement_case.ts";

/** The reviewed plan with its typed action edited, every checksum but the keyed seal redone. */
function forged(plan: Plan, edit: (p: Plan) => void): Plan {
  const copy = structuredClone(plan);
  edit(copy);
  copy.typed_action!.sha256 = typedActionSha256(copy.typed_action!.action);
  return copy;
}

/**
 * Write `forgery` (sealed with `sealKey`, or keeping its keyed seal) and apply it: refused with
 * `code` before anything is written — no Docker or Kafka mutation, the state as it was.
 */
async function refusedUnwritten(
  rc: ReplacementCase,
  name: string,
  forgery: Plan,
  sealKey: SealKey | undefined,
  code: string,
): Promise<void> {
  const path = `${rc.cw.project.dir}/forged.plan.json`;
  await atomicReplace(path, sealPlan(forgery, sealKey).bytes);
  const state = await rc.state();
  await assert.rejects(
    executeReviewed(rc.options({ planPath: path })),
    (e) => e instanceof SluiceError && e.code === code,
    name,
  );
  assert.deepEqual(rc.mutations(), [], `${name}: the world was changed`);
  assert.deepEqual(await rc.state(), state, `${name}: state written`);
}

/** The case's state store key, as someone who can read the state holds it. */
async function storeKey(rc: ReplacementCase): Promise<SealKey> {
  const store = await rc.openStore();
  try {
    return await store.sealKey();
  } finally {
    await store.close();
  }
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] a reviewed plan without this store's keyed seal starts nothing`, async () => {
    await using rc = await replacementCase(backend);
    const { plan } = await readPlanFile(rc.d.planPath);
    const key = await storeKey(rc);
    const action = plan.typed_action!.action;
    assert.equal(action.type, "replace_runner_predicate");
    const cases: Array<[string, Plan, SealKey | undefined, string]> = [
      [
        "the evidence's volume instance edited, re-sealed without the key",
        forged(plan, (p) => {
          const ev = p.typed_action!.action.evidence as { volume: { instance_id: string } };
          ev.volume.instance_id = "someone-elses-volume";
        }),
        undefined,
        "PLAN_SEAL_FORGED",
      ],
      [
        "the evidence's old container edited, re-sealed without the key",
        forged(plan, (p) => {
          const ev = p.typed_action!.action.evidence as { old_container_id: string };
          ev.old_container_id = "f".repeat(64);
        }),
        undefined,
        "PLAN_SEAL_FORGED",
      ],
      [
        "no keyed seal",
        (({ key_seal: _k, ...rest }) => rest)(plan),
        undefined,
        "PLAN_UNSEALED",
      ],
      [
        "sealed with another store's key",
        plan,
        { ...key, key_id: crypto.randomUUID(), secret: new Uint8Array(32).fill(7) },
        "PLAN_SEAL_KEY_UNKNOWN",
      ],
    ];
    for (const [name, forgery, sealKey, code] of cases) {
      await refusedUnwritten(rc, name, forgery, sealKey, code);
    }
    const done = await executeReviewed(rc.options());
    assert.equal(done.committed, true, JSON.stringify(done));
  });
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] a rotated key refuses the plans sealed before it, and the pending operation still finishes`, async () => {
    await using rc = await replacementCase(backend);
    // the operation is left pending: the candidate's create response is lost
    rc.cw.world.control.failCall("createContainer", { effect: "lose_response" });
    const first = await executeReviewed(rc.options());
    assert.equal(first.committed, null, JSON.stringify(first));
    const store = await rc.openStore();
    let before: SealKey, after: SealKey;
    try {
      before = await store.sealKey();
      after = await store.rotateSealKey();
      assert.equal((await store.sealKey()).key_id, after.key_id);
    } finally {
      await store.close();
    }
    assert.notEqual(after.key_id, before.key_id);
    // the pending operation's plan (sealed with the old key) is bound by its intent: it finishes
    const done = await resumeReviewed(rc.operation(first.operation_id));
    assert.equal(done.committed, true, JSON.stringify(done));
    // a plan sealed with the old key starts nothing new; a fresh plan carries the new key
    const old = await readPlanFile(rc.d.planPath);
    assert.equal(old.plan.key_seal?.key_id, before.key_id);
    await rc.cw.project.setPredicate("amount >= 500");
    const fresh = await planProject({ dir: rc.cw.project.dir, ...rc.cw.deps });
    assert.equal(fresh.plan.key_seal?.key_id, after.key_id);
    const stale = `${rc.cw.project.dir}/old-key.plan.json`;
    await atomicReplace(stale, sealPlan({ ...fresh.plan, key_seal: old.plan.key_seal }).bytes);
    const state = await rc.state();
    const mutations = rc.mutations().length;
    await assert.rejects(
      executeReviewed(rc.options({ planPath: stale })),
      (e) =>
        e instanceof SluiceError && e.code === "PLAN_SEAL_KEY_UNKNOWN" &&
        e.message.includes(before.key_id),
    );
    assert.equal(rc.mutations().length, mutations, "the world was changed");
    assert.deepEqual(await rc.state(), state, "state written");
  });
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] a reviewed plan sealed with the key still carries only a predicate change`, async () => {
    await using rc = await replacementCase(backend);
    const { plan } = await readPlanFile(rc.d.planPath);
    const key = await storeKey(rc);
    // the project also drops a column: planning refuses it (a projection change), so a key
    // holder writes the format-6 plan by hand, its desired artifact the compiled project's
    const sql = `${rc.cw.project.dir}/models/eligible_orders.sql`;
    const text = await Deno.readTextFile(sql);
    assert.match(text, /SELECT order_id, amount, paid/);
    await Deno.writeTextFile(
      sql,
      text.replace("SELECT order_id, amount, paid", "SELECT order_id, amount"),
    );
    const planned = await planProject({ dir: rc.cw.project.dir, ...rc.cw.deps });
    assert.ok(
      planned.plan.blockers.some((b) => b.code === "BLOCKED_PROJECTION_CHANGE"),
      JSON.stringify(planned.plan.blockers),
    );
    const compiled = planned.plan.artifacts.find((a) => a.model === "eligible_orders")!.artifact;
    const withProjection = forged(plan, (p) => {
      const a = p.typed_action!.action;
      (a.evidence as unknown as { desired_artifact: RunnerArtifact }).desired_artifact = compiled;
      a.desired_artifact_sha256 = artifactSha256(compiled);
      p.source_sha256 = planned.plan.source_sha256;
      p.artifacts = planned.plan.artifacts;
    });
    const refused = (name: string, forgery: Plan, code: string) =>
      refusedUnwritten(rc, name, forgery, key, code);
    await refused(
      "a projection change in a format-6 plan",
      withProjection,
      "BLOCKED_PROJECTION_CHANGE",
    );
    // the prior artifact edited to match, its checksum kept: not the artifact the checksum names
    const priorEdited = forged(withProjection, (p) => {
      const ev = p.typed_action!.action.evidence as unknown as { prior_artifact: RunnerArtifact };
      ev.prior_artifact = { ...ev.prior_artifact, projection: compiled.projection };
    });
    await refused("the prior artifact edited", priorEdited, "PLAN_TAMPERED");
    // a blocker carried in the file, or an offline plan, is not a reviewed replacement either
    await Deno.writeTextFile(sql, text);
    await refused(
      "a format-6 plan with a blocker",
      { ...plan, blockers: planned.plan.blockers },
      "BLOCKED_PROJECTION_CHANGE",
    );
    await refused("an offline format-6 plan", { ...plan, mode: "offline" }, "PLAN_INVALID");
    assert.equal(
      canonicalJson(plan.typed_action),
      canonicalJson((await readPlanFile(rc.d.planPath)).plan.typed_action),
    );
    const done = await executeReviewed(rc.options());
    assert.equal(done.committed, true, JSON.stringify(done));
  });
}
