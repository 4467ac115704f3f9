// `plan --base` on a reviewable predicate change (issue 30 item 9): the offline plan blocks the
// replacement (BLOCKED_OFFLINE_REPLACEMENT, as every offline plan does), and the review says that
// the offline gate a pull request wants is `sluice diff`, naming the base. On the fake world: the
// starter created, committed to Git, then its filter changed in the working tree.
import assert from "node:assert/strict";
import { apply, plan } from "../runtime/session.ts";
import { planReview } from "./journey.ts";
import { gitRepo } from "../../testing/git_repo.ts";
import { fakeProject } from "../../testing/ways/fake_project.ts";

Deno.test("plan --base on a deployed model whose filter changed names 'sluice diff' as the offline gate", async () => {
  await using f = await fakeProject("offline-gate");
  const { p, deps } = f;
  const created = await plan({ dir: p.dir, ...deps });
  await apply({ dir: p.dir, plan: created.plan, planSha256: created.sha256, ...deps });
  const repo = await gitRepo(p.dir);
  await repo.commit("deployed");
  await p.setPredicate("amount >= 200 AND paid = TRUE");

  const r = await planReview({ dir: p.dir, base: "HEAD", ...deps });
  assert.deepEqual(r.plan.blockers.map((b) => b.code), ["BLOCKED_OFFLINE_REPLACEMENT"]);
  const note = r.review.notes.find((n) => n.includes("sluice diff"));
  assert.ok(note, r.review.notes.join("\n"));
  assert.match(
    note,
    /For an offline gate on a pull request, review the change with 'sluice diff --base HEAD'/,
  );
  // the comparison itself shows the change as a reviewable replacement
  assert.deepEqual(r.review.changes.map((c) => c.kind), ["replace_predicate"]);

  // without a blocked replacement there is no such note (it is not said to everyone)
  await p.setPredicate("amount >= 100 AND paid = TRUE");
  const same = await planReview({ dir: p.dir, base: "HEAD", ...deps });
  assert.deepEqual(same.plan.blockers, []);
  assert.equal(same.review.notes.some((n) => n.includes("sluice diff")), false);
});
