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
import { readPlanFile, sealPlan } from "../../lib/plan/plan_file.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { plan as planProject } from "../../lib/runtime/session.ts";
import type { SealKey } from "../../lib/state/seal_key.ts";
import { BACKENDS, replacementCase } from "./replacement_case.ts";

/** The reviewed plan with its typed action edited, every checksum but the keyed seal redone. */
function forged(plan: Plan, edit: (p: Plan) => void): Plan {
  const copy = structuredClone(plan);
  edit(copy);
  copy.typed_action!.sha256 = typedActionSha256(copy.typed_action!.action);
  return copy;
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] a reviewed plan without this store's keyed seal starts nothing`, async () => {
    await using rc = await replacementCase(backend);
    const { plan } = await readPlanFile(rc.d.planPath);
    const store = await rc.openStore();
    let key: SealKey;
    try {
      key = await store.sealKey();
    } finally {
      await store.close();
    }
    const action = plan.typed_action!.action;
    assert.equal(action.type, "replace_runner_predicate");
    const cases: Array<[string, Plan, SealKey | undefined, string]> = [
      [
        "the application ID edited, re-sealed without the key",
        forged(plan, (p) => {
          p.typed_action!.action.application_id = "sluice-someone-else";
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
    const path = `${rc.cw.project.dir}/forged.plan.json`;
    for (const [name, forgery, sealKey, code] of cases) {
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
