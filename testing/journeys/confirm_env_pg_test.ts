// `--confirm-env` (OperationOptions.confirmEnv) on both state backends' real code, over the
// fakes: in a project that declares environments, resuming a pending operation without naming
// its environment again, or naming another one, is BLOCKED_CONFIRM_ENV before anything is
// observed or written; naming it continues the same operation to completion. A project with no
// environments needs no confirmation (resume_pg_test.ts covers that path).
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import { writePlanFile } from "../../lib/plan/plan_file.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import type { OperationOptions } from "../../lib/runtime/replacement/operation.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { apply, plan } from "../../lib/runtime/session.ts";
import { NEW_WHERE, openCaseWorld, orders } from "../sweep/fixture.ts";
import { readState, readWorldFile } from "../sweep/reads.ts";
import { BACKENDS } from "./replacement_case.ts";

const ENV = "prod";

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] resuming in a declared environment requires --confirm-env with its name`, async () => {
    await using cw = await openCaseWorld({ backend, seed: `confirm-env-${crypto.randomUUID()}` });
    await cw.project.editManifest((t) =>
      `${t}\nenvironments:\n  ${ENV}:\n    initial_offsets: earliest\n  staging:\n    initial_offsets: latest\n`
    );
    const base = { dir: cw.project.dir, environment: ENV, ...cw.deps };
    const created = await plan(base);
    assert.deepEqual(created.plan.blockers, []);
    await apply({ ...base, plan: created.plan, planSha256: created.sha256 });
    cw.produce(orders("a", [50, 150, 250]));
    await cw.project.setPredicate(NEW_WHERE);
    const reviewed = await plan(base);
    assert.equal(reviewed.plan.format, 6);
    const planPath = `${cw.project.dir}/replace.plan.json`;
    await writePlanFile(planPath, reviewed.plan);

    // the operation is left pending: the candidate's create response is lost
    cw.world.control.failCall("createContainer", { effect: "lose_response" });
    const options = { ...base, planPath, closeTimeoutMs: 60_000, readyTimeoutMs: 120_000 };
    const first = await executeReviewed(options);
    assert.equal(first.committed, null, JSON.stringify(first));
    const operation = (extra: Partial<OperationOptions>): OperationOptions => ({
      ...options,
      operationId: first.operation_id,
      ...extra,
    });

    const log = () => readWorldFile(cw.worldPath).log.length;
    for (const confirmEnv of [undefined, "staging"]) {
      const before = log();
      const state = await readState(cw.state);
      await assert.rejects(
        resumeReviewed(operation(confirmEnv === undefined ? {} : { confirmEnv })),
        (e) =>
          e instanceof SluiceError && e.code === "BLOCKED_CONFIRM_ENV" &&
          e.message.includes(`--confirm-env ${ENV}`),
        `confirmEnv ${confirmEnv}`,
      );
      // nothing written: no Docker or Kafka mutation, the state as it was
      assert.equal(log(), before, `confirmEnv ${confirmEnv}: the world was changed`);
      assert.deepEqual(await readState(cw.state), state, `confirmEnv ${confirmEnv}: state written`);
    }

    const done = await resumeReviewed(operation({ confirmEnv: ENV }));
    assert.equal(done.committed, true, JSON.stringify(done));
    assert.equal(done.operation_id, first.operation_id);
  });
}
