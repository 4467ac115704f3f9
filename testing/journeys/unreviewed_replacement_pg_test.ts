// test-needs: postgres
// The saved format-6 file is mandatory for a replacement (C112): `sluice apply` without
// `--plan` while the project's change is a predicate replacement plans online, gets a reviewed
// format-6 plan in memory, and the router refuses it (BLOCKED_REVIEWED_PLAN, exit 4) before the
// deployment lock is taken — no fault site crossed, no provider mutation, the state as it was.
// Through the SDK on both state backends' real code over the fakes, and through the CLI; the
// same change applied from its plan file is then carried out (the world allowed it).
import assert from "node:assert/strict";
import { EXIT, exitCodeFor, SluiceError } from "../../lib/errors.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { apply } from "../../lib/runtime/session.ts";
import { fakeCli } from "../fake_cli.ts";
import { BACKENDS, crossed, type ReplacementCase, replacementCase } from "./replacement_case.ts";

/** The stored state, the lock and the provider log are as they were before `fn`. */
async function unchanged(rc: ReplacementCase, fn: () => Promise<void>): Promise<void> {
  const before = await rc.state();
  await fn();
  const after = await rc.state();
  assert.deepEqual(after.control, before.control, "an intent was recorded");
  assert.deepEqual(after.history, before.history, "the history was appended to");
  assert.deepEqual(after.ownership, before.ownership, "the ownership was written");
  assert.equal(after.lockFile, false, "the lock is held");
  assert.deepEqual(rc.mutations(), [], "a provider was mutated");
}

/** The positive control: the same change from its reviewed plan file is carried out. */
async function replacedFromFile(rc: ReplacementCase): Promise<void> {
  const r = await executeReviewed(rc.options());
  assert.equal(r.committed, true, JSON.stringify(r));
  assert.ok(rc.mutations().length > 0, "the replacement mutated nothing");
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] apply without a plan file while the change is a replacement is BLOCKED_REVIEWED_PLAN and mutates nothing`, async () => {
    await using rc = await replacementCase(backend);
    await unchanged(rc, async () => {
      const { value: error, sites } = await crossed(() =>
        apply({ dir: rc.cw.project.dir, ...rc.cw.deps }).then(() => null, (e: unknown) => e)
      );
      assert.ok(error instanceof SluiceError, String(error));
      assert.equal(error.code, "BLOCKED_REVIEWED_PLAN", error.message);
      assert.equal(exitCodeFor(error), EXIT.BLOCKED);
      assert.match(error.message, /format 6/);
      assert.match(error.message, /sluice apply --plan FILE/);
      assert.deepEqual(sites, [], "a durable step was crossed (the lock included)");
    });
    await replacedFromFile(rc);
  });
}

Deno.test("[local] the CLI's apply without --plan while the change is a replacement exits 4 with BLOCKED_REVIEWED_PLAN", async () => {
  await using rc = await replacementCase("local");
  await unchanged(rc, async () => {
    const r = await fakeCli(
      rc.cw.worldPath,
      ["-o", "json", "apply", "--project", rc.cw.project.dir],
      { env: rc.cw.env },
    );
    assert.equal(r.code, EXIT.BLOCKED, r.stderr);
    assert.equal(r.json?.ok, false, r.stdout);
    assert.deepEqual(r.json?.errors.map((e) => e.code), ["BLOCKED_REVIEWED_PLAN"], r.stdout);
  });
  await replacedFromFile(rc);
});
