// "The reconstructed old artifact must hash to the protected ownership record" (issue 26, C18):
// the owned runner's container re-created by hand with a mounted plan that holds another
// artifact — a valid plan, its plan label and SLUICE_PLAN_SHA256 consistent with its bytes, the
// artifact label still the owned checksum — is refused by the planner and by the replacement
// driver (before its intent, and under resume at a later stage) with BLOCKED_WRONG_MOUNTED_PLAN,
// nothing written and nothing mutated; and the state engine refuses an intent whose action's
// prior checksum is not the owned runner's (BLOCKED_INVALID_INTENT), writing nothing.
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import { artifactSha256 } from "../../lib/artifact/artifact.ts";
import {
  buildMountedPlan,
  mountedPlanBytes,
  parseMountedPlan,
} from "../../lib/protocol/mounted_plan.ts";
import { LABEL, RUNNER_ENV, RUNNER_PATHS } from "../../lib/runtime/labels.ts";
import { isoNow } from "../../lib/runtime/deps.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { openOperation } from "../../lib/runtime/replacement/operation.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { plan } from "../../lib/runtime/session.ts";
import { checkpointNames } from "../sweep/reads.ts";
import { BACKENDS, type ReplacementCase, replacementCase } from "./replacement_case.ts";

/**
 * Re-create (as the observer sees it) the container with a mounted plan that holds another
 * valid artifact of the same model — its predicate negated — bound at the plan path, with the
 * plan label and SLUICE_PLAN_SHA256 of the new bytes. Returns the owned and the mounted
 * artifact checksums.
 */
async function mountAnotherArtifact(
  rc: ReplacementCase,
  containerId: string,
): Promise<{ owned: string; mounted: string }> {
  const control = rc.cw.world.control;
  const c = control.container(containerId)!;
  const bind = c.mounts.find((m) => m.destination === RUNNER_PATHS.plan)!;
  const was = parseMountedPlan(await Deno.readFile(bind.source));
  const other = buildMountedPlan(
    { ...was.artifact, predicate: { kind: "not", arg: was.artifact.predicate } },
    was.bootstrap_servers,
    was.identity,
  );
  const { bytes, sha256 } = mountedPlanBytes(other);
  const path = `${rc.cw.root}/hand-made-${sha256}.json`;
  await Deno.writeFile(path, bytes);
  const planVar = `${RUNNER_ENV.planSha256}=`;
  control.reconfigureContainer(containerId, {
    mounts: c.mounts.map((m) => m.destination === RUNNER_PATHS.plan ? { ...m, source: path } : m),
    env: c.env.map((e) => e.startsWith(planVar) ? `${planVar}${sha256}` : e),
  });
  control.relabelContainer(containerId, { [LABEL.planSha256]: sha256 });
  assert.notEqual(other.artifact_sha256, was.artifact_sha256);
  assert.equal(artifactSha256(other.artifact), other.artifact_sha256);
  return { owned: was.artifact_sha256, mounted: other.artifact_sha256 };
}

/** The one blocker of the refusal: the mounted plan holds another artifact than the owned one. */
function assertMountedArtifactBlocker(
  blockers: Array<{ code: string; message: string }>,
  x: { owned: string; mounted: string },
) {
  assert.deepEqual(
    blockers.map((b) => b.code),
    ["BLOCKED_WRONG_MOUNTED_PLAN"],
    JSON.stringify(blockers),
  );
  assert.match(
    blockers[0].message,
    new RegExp(`the mounted plan holds artifact ${x.mounted}, not ${x.owned}`),
  );
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] plan: an owned runner whose mounted plan holds another artifact than the owned checksum is BLOCKED_WRONG_MOUNTED_PLAN`, async () => {
    await using rc = await replacementCase(backend);
    // positive control: the same project plans the reviewed replacement before the change
    const before = await plan({ dir: rc.cw.project.dir, ...rc.cw.deps });
    assert.deepEqual(before.plan.blockers, []);
    assert.equal(before.plan.actions.length, 1);
    const [action] = before.plan.actions;
    assert.ok(action.type === "replace_runner_predicate", JSON.stringify(action));
    const owned = (await rc.state()).ownership as { runners: Array<{ artifact_sha256: string }> };
    assert.equal(owned.runners[0].artifact_sha256, action.prior_artifact_sha256);

    const x = await mountAnotherArtifact(rc, rc.d.oldContainerId);
    const stateBefore = await rc.state();
    const blocked = await plan({ dir: rc.cw.project.dir, ...rc.cw.deps });
    assert.deepEqual(blocked.plan.actions, []);
    assertMountedArtifactBlocker(blocked.plan.blockers, x);
    // planning is read-only
    assert.deepEqual(rc.mutations(), []);
    assert.deepEqual(await rc.state(), stateBefore);
  });

  Deno.test(`[${backend}] apply --plan: the reviewed old runner mounting another artifact than the owned checksum is refused before the intent`, async () => {
    await using rc = await replacementCase(backend);
    const x = await mountAnotherArtifact(rc, rc.d.oldContainerId);
    const before = await rc.state();
    await assert.rejects(executeReviewed(rc.options()), (e) => {
      assert.ok(e instanceof SluiceError, String(e));
      assertMountedArtifactBlocker(
        (e.evidence as { blockers: Array<{ code: string; message: string }> }).blockers,
        x,
      );
      return true;
    });
    assert.deepEqual(rc.mutations(), [], "nothing mutated");
    const after = await rc.state();
    assert.equal(after.control, null, "no intent recorded");
    assert.deepEqual(after, before);
  });

  Deno.test(`[${backend}] state resume: an old runner found mounting another artifact after its TERM is refused, nothing written`, async () => {
    await using rc = await replacementCase(backend);
    // the TERM is applied, its response lost: the operation stays at action_started
    rc.cw.world.control.failCall("signalTerm", { effect: "lose_response" });
    const first = await executeReviewed(rc.options());
    assert.equal(first.last_boundary, "action_started", JSON.stringify(first));
    const x = await mountAnotherArtifact(rc, rc.d.oldContainerId);
    const before = await rc.state();
    const mutations = rc.mutations();
    assert.deepEqual(mutations.map((m) => m.op), ["signalTerm"]);
    const r = await resumeReviewed(rc.operation(first.operation_id));
    assert.equal(r.committed, false, JSON.stringify(r));
    assert.equal(r.outcome, "blocked");
    assert.equal(r.last_boundary, "action_started");
    assertMountedArtifactBlocker(r.blockers, x);
    // a blocked resume records no interruption and spends no authorization
    const after = await rc.state();
    assert.deepEqual(after, before);
    assert.deepEqual(checkpointNames(after.control), ["action_started"]);
    assert.deepEqual(rc.mutations(), mutations, "nothing mutated");
  });

  Deno.test(`[${backend}] the state engine refuses an intent whose prior checksum is not the owned runner's`, async () => {
    await using rc = await replacementCase(backend);
    const x = await mountAnotherArtifact(rc, rc.d.oldContainerId);
    await using op = await openOperation(rc.options());
    const p = op.project;
    const start = await p.store.load();
    const intent = {
      operation_id: p.uuids.uuid(),
      kind: "runner_update" as const,
      project: p.store.project,
      environment: p.store.environment,
      actor: "tester",
      created_at: isoNow(p.clock),
      original_state_checksum: start.ownership!.checksum,
      reviewed_plan_sha256: op.reviewed.sha256,
      details: { model: op.reviewed.action.model },
    };
    assert.equal(op.reviewed.action.prior_artifact_sha256, x.owned);
    // the action as if reconstructed from the hand-mounted plan: its prior is not the owned one
    await assert.rejects(
      p.store.beginOperation(start, intent, [{
        ...op.reviewed.action,
        prior_artifact_sha256: x.mounted,
      }]),
      (e) =>
        e instanceof SluiceError && e.code === "BLOCKED_INVALID_INTENT" &&
        new RegExp(`does not match owned runner \\(prior ${x.owned},`).test(e.message),
    );
    const after = await p.store.load();
    assert.equal(after.control, null, "no intent recorded");
    assert.equal(after.revision, start.revision, "nothing written");
    // positive control: the same intent with the owned prior is accepted
    const begun = await p.store.beginOperation(after, intent, [op.reviewed.action]);
    assert.equal(begun.control?.opened.operation_id, intent.operation_id);
  });
}
