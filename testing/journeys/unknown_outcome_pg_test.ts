// Unknown outcomes are reported, never thrown (issue 26 item 3): a durable write whose
// acknowledgement is lost — the intent, the interruption, the resume authorization — ends the
// invocation with a result (`committed: null`, the operation ID, the last acknowledged
// boundary), and `state runner-status` tells what was recorded; a blocker found inside the
// driver is a blocker (`committed: false`), not an unknown outcome. On the fakes, both state
// backends' real code; the store's answer is lost after the real store wrote.
import assert from "node:assert/strict";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { runnerStatus } from "../../lib/runtime/replacement/runner_status.ts";
import type { StateStore } from "../../lib/state/store.ts";
import type { DockerPort } from "../../lib/providers/docker/port.ts";
import { BACKENDS, replacementCase } from "./replacement_case.ts";

/** The case's real store, whose answer to `method` is lost once after it wrote. */
async function losingStore(
  rc: Awaited<ReturnType<typeof replacementCase>>,
  method: "beginOperation" | "recordInterruption" | "resumeOperation",
): Promise<StateStore> {
  const store = await rc.openStore();
  let lost = false;
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (name !== method || typeof value !== "function") {
        return typeof value === "function" ? value.bind(target) : value;
      }
      return async (...args: unknown[]) => {
        const written = await value.apply(target, args);
        if (lost) return written;
        lost = true;
        throw new Error("connection terminated unexpectedly");
      };
    },
  });
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] a lost intent acknowledgement is an unknown outcome with the operation ID, not a throw`, async () => {
    await using rc = await replacementCase(backend);
    const store = await losingStore(rc, "beginOperation");
    try {
      const r = await executeReviewed(rc.options({ store }));
      assert.equal(r.committed, null, JSON.stringify(r));
      assert.equal(r.outcome, "unknown");
      assert.equal(r.last_boundary, null);
      assert.match(r.operation_id, /^[0-9a-f-]{36}$/);
      assert.match(r.reason ?? "", /the intent was not acknowledged/);
      assert.deepEqual(rc.mutations(), [], "nothing past the intent");
      // the write did land: runner-status names it, and resume continues it
      const status = await runnerStatus(rc.operation(r.operation_id));
      assert.equal(status.last_boundary, "intent");
      const resumed = await resumeReviewed(rc.operation(r.operation_id));
      assert.equal(resumed.committed, true, JSON.stringify(resumed));
    } finally {
      await store.close();
    }
  });

  for (const method of ["recordInterruption", "resumeOperation"] as const) {
    Deno.test(`[${backend}] a lost ${method} acknowledgement in resume is an unknown outcome at the last boundary`, async () => {
      await using rc = await replacementCase(backend);
      rc.cw.world.control.failCall("signalTerm", { effect: "lose_response" });
      const first = await executeReviewed(rc.options());
      assert.equal(first.last_boundary, "action_started");
      const store = await losingStore(rc, method);
      try {
        const r = await resumeReviewed(rc.operation(first.operation_id, { store }));
        assert.equal(r.committed, null, JSON.stringify(r));
        assert.equal(r.outcome, "unknown");
        assert.equal(r.operation_id, first.operation_id);
        assert.equal(r.last_boundary, "action_started");
      } finally {
        await store.close();
      }
      // a fresh resume finishes the same operation
      const again = await resumeReviewed(rc.operation(first.operation_id));
      assert.equal(again.committed, true, JSON.stringify(again));
    });
  }

  Deno.test(`[${backend}] a blocker found inside the driver is a blocker, not an unknown outcome`, async () => {
    await using rc = await replacementCase(backend);
    // the runner image vanishes right before the candidate's create: the driver writes the
    // candidate's mounted plan file, then inspects the image it creates from — an inspection
    // made once that file exists answers "no such image"
    const plans = `${rc.cw.project.dir}/.sluice/runtime/plans`;
    const count = () => {
      try {
        return [...Deno.readDirSync(plans)].length;
      } catch {
        return 0;
      }
    };
    const before = count();
    const docker = rc.options().docker!;
    const vanishing = new Proxy(docker, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== "function") return value;
        if (name === "inspectImage") {
          return (...args: unknown[]) =>
            count() > before ? Promise.resolve(null) : value.apply(target, args);
        }
        return value.bind(target);
      },
    }) as DockerPort;
    const r = await executeReviewed(rc.options({ docker: vanishing }));
    assert.equal(r.committed, false, JSON.stringify(r));
    assert.equal(r.outcome, "blocked");
    assert.deepEqual(r.blockers.map((b) => [b.code, b.message]), [
      ["BLOCKED_WRONG_IMAGE", "the runner image disappeared"],
    ]);
    assert.equal(r.last_boundary, "old_removed", JSON.stringify(r));
  });
}
