// state runner-status and state resume given the ID of a completed create (the starter's
// deployment), on the fakes, on both state backends' real code: the create completed by an
// ownership commit, never a replacement receipt — a precise blocker (BLOCKED_NOT_A_REPLACEMENT,
// exit 4) before anything is observed, never a corrupt store, and nothing written.
import assert from "node:assert/strict";
import { exitCodeFor, SluiceError } from "../../lib/errors.ts";
import type { DockerPort } from "../../lib/providers/docker/port.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { runnerStatus } from "../../lib/runtime/replacement/runner_status.ts";
import { historyEvents } from "../sweep/reads.ts";
import { BACKENDS, replacementCase } from "./replacement_case.ts";

/** A Docker port that fails every call: an error from it would mean something was observed. */
const blind = new Proxy({}, {
  get: (_t, name) => () => Promise.reject(new Error(`observed: docker.${String(name)}`)),
}) as DockerPort;

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] runner-status and resume of a completed create are BLOCKED_NOT_A_REPLACEMENT, nothing observed or written`, async () => {
    await using rc = await replacementCase(backend);
    const before = await rc.state();
    const commits = historyEvents(before).filter((e) => e.kind === "ownership_committed");
    assert.equal(commits.length, 1, "the starter's deployment is one committed create");
    const createId = commits[0].operation_id as string;
    assert.equal(typeof createId, "string");
    assert.equal(before.control, null);
    const mutations = rc.mutations();
    for (
      const [name, call] of [
        ["runner-status", () => runnerStatus(rc.operation(createId, { docker: blind }))],
        ["resume", () => resumeReviewed(rc.operation(createId, { docker: blind }))],
      ] as const
    ) {
      const e = await (call() as Promise<unknown>).then(() => null, (x) => x);
      assert.ok(e instanceof SluiceError, `${name}: ${e}`);
      assert.equal(e.code, "BLOCKED_NOT_A_REPLACEMENT", `${name}: ${e.code}: ${e.message}`);
      assert.equal(exitCodeFor(e), 4);
      assert.match(e.message, new RegExp(createId));
      assert.match(e.message, /not a runner replacement/);
      assert.match(e.message, /nothing to resume/);
    }
    assert.deepEqual(rc.mutations(), mutations, "no provider mutation");
    const after = await rc.state();
    assert.deepEqual(after.control, before.control);
    assert.deepEqual(after.history, before.history);
    assert.deepEqual(after.ownership, before.ownership);
  });
}
