// test-needs: postgres
// state runner-status and state resume given the plan file of a pending runner removal (issue
// 28: they drive a predicate replacement only), on the fakes, on both state backends' real code:
// PLAN_NOT_REVIEWED naming the pending operation and the way out — the same `sluice apply --plan`
// again, or `state abandon` — with nothing observed or written; that way out then finishes it.
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import { readPlanFile } from "../../lib/plan/plan_file.ts";
import type { DockerPort } from "../../lib/providers/docker/port.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { runnerStatus } from "../../lib/runtime/replacement/runner_status.ts";
import { apply } from "../../lib/runtime/session.ts";
import type { StateStore } from "../../lib/state/store.ts";
import { openCaseWorld, prepareRemoval } from "../sweep/fixture.ts";
import { providerMutations } from "./journeys.ts";
import { BACKENDS, openCaseStore } from "./replacement_case.ts";

/** A Docker port that fails every call: an error from it would mean something was observed. */
const blind = new Proxy({}, {
  get: (_t, name) => () => Promise.reject(new Error(`observed: docker.${String(name)}`)),
}) as DockerPort;

/** The store, whose commit fails (a death before it): the removal stays pending. */
function stoppingAfterIntent(store: StateStore): StateStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      if (prop !== "commitOwnership") return v.bind(target);
      return () => Promise.reject(new Error("injected: the process died here"));
    },
  });
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] runner-status and resume with a pending removal's plan name it and its way out; nothing observed or written`, async () => {
    await using cw = await openCaseWorld({ backend, seed: crypto.randomUUID() });
    const change = await prepareRemoval(cw);
    const { plan, sha256 } = await readPlanFile(change.planPath);
    const dir = cw.project.dir;
    const store = await openCaseStore(cw);
    try {
      await apply({ dir, plan, planSha256: sha256, ...cw.deps, store: stoppingAfterIntent(store) })
        .then(() => assert.fail("the removal finished"), () => {});
      const pending = (await store.load()).control?.opened;
      assert.equal(pending?.kind, "runner_removal");
      const id = pending!.operation_id;
      const before = await store.load();
      const mutations = providerMutations(cw);
      for (
        const [name, call] of [
          ["runner-status", () =>
            runnerStatus({
              dir,
              planPath: change.planPath,
              operationId: id,
              ...cw.deps,
              docker: blind,
            })],
          ["resume", () =>
            resumeReviewed({
              dir,
              planPath: change.planPath,
              operationId: id,
              ...cw.deps,
              docker: blind,
            })],
        ] as const
      ) {
        const e = await (call() as Promise<unknown>).then(() => null, (x) => x);
        assert.ok(e instanceof SluiceError, `${name}: ${e}`);
        assert.equal(e.code, "PLAN_NOT_REVIEWED", `${name}: ${e.message}`);
        assert.match(e.message, new RegExp(`operation ${id} \\(runner_removal\\) is pending`));
        assert.match(e.message, /continue it with 'sluice apply --plan PLAN_FILE/);
        assert.match(e.message, new RegExp(`sluice state abandon --operation-id ${id}`));
      }
      assert.equal(providerMutations(cw), mutations, "no provider mutation");
      const after = await store.load();
      assert.deepEqual(after.control, before.control);
      assert.deepEqual(after.history, before.history);
      // the way out it names: the same plan file again finishes the removal
      const done = await apply({ dir, plan, planSha256: sha256, ...cw.deps, store });
      assert.equal(done.operation_id, id);
      assert.equal((await store.load()).control, null);
    } finally {
      await store.close();
    }
  });
}
