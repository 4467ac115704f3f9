// test-needs: env
// Needs: Docker, the broker, the runner image (shared environment from tools/test.ts).
// The contract's first acceptance requirement, from an installed sluice (issue 26 item 8):
// sluice installed as docs/cli.md tells a user (`deno install --global`), run by name from PATH
// in a fresh directory — `sluice init`, a create, a predicate change whose apply is SIGKILLed
// after the candidate was created, `state resume` of the same operation, then a no-op plan.
// Read independently of sluice (the broker's records and committed offsets, the Docker CLI):
// output exact before and after, the same application ID and volume instance, offsets only
// moved forward.
import assert from "node:assert/strict";
import { join } from "node:path";
import { sharedEnv } from "../harness/env.ts";
import { installSluice } from "../harness/install.ts";
import { pointStarterAt, runnerImageId } from "../harness/project.ts";
import { FAULT_ENV } from "../lib/fault/site.ts";
import {
  CHANGED_PREDICATE,
  outputAcrossChange,
  removeApplication,
  starterApplicationId,
} from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "installed sluice: init, create, a predicate change killed mid-apply and resumed, exact output, same identity, then no-op",
  opts,
  async () => {
    const env = await sharedEnv();
    await using installed = await installSluice();
    const work = await Deno.makeTempDir({ prefix: "sluice-installed-" });
    let appId: string | null = null;
    try {
      const init = await installed.run(["init", "orders"], work);
      assert.equal(init.code, 0, init.stderr);
      const p = await pointStarterAt(join(work, "orders"), env, { image: await runnerImageId() });
      appId = starterApplicationId(p.name);
      const sluice = async (args: string[], fault?: string) => {
        const r = await installed.run(
          ["-o", "json", ...args],
          p.dir,
          fault ? { [FAULT_ENV.point]: fault, [FAULT_ENV.allow]: "1" } : {},
        );
        let json: { ok: boolean; data: Record<string, unknown> | null } | null = null;
        try {
          json = JSON.parse(r.stdout);
        } catch {
          // a killed process prints nothing
        }
        return { ...r, json };
      };

      // create
      const created = await sluice(["plan", "--out", "create.plan.json"]);
      assert.equal(created.code, 0, created.stderr);
      const applied = await sluice(["apply", "--plan", "create.plan.json"]);
      assert.equal(applied.code, 0, applied.stdout + applied.stderr);

      // the old predicate's output, exact
      const output = outputAcrossChange(env.bootstrapHost, p, appId);
      await output.beforeChange();

      // the predicate change, reviewed; its apply killed after the candidate was created
      await p.setPredicate(CHANGED_PREDICATE);
      const reviewed = await sluice(["plan", "--out", "replace.plan.json"]);
      assert.equal(reviewed.code, 0, reviewed.stderr);
      const killed = await sluice(
        ["apply", "--plan", "replace.plan.json"],
        "journal.replacement_created:after",
      );
      assert.equal(killed.code, 137, `not killed at its site: ${killed.stdout}${killed.stderr}`);
      assert.match(killed.stderr, /SLUICE_FAULT_FIRED journal\.replacement_created:after/);

      // what state show says, then resume of the same operation, breaking the dead lock by ID
      const shown = await sluice(["state", "show"]);
      assert.equal(shown.code, 0, shown.stderr);
      const view = shown.json!.data as {
        pending_operation: { operation_id: string } | null;
        lock: { stale: boolean; holder: { lock_id: string } | null };
      };
      const operationId = view.pending_operation!.operation_id;
      // a dead holder's lock is stale to the installed command too (its permissions are not
      // --allow-all: the liveness check must not need /proc)
      assert.equal(view.lock.stale, true, JSON.stringify(view.lock));
      const resumed = await sluice([
        "state",
        "resume",
        "--plan",
        "replace.plan.json",
        "--operation-id",
        operationId,
        "--break-stale-lock",
        view.lock.holder!.lock_id,
      ]);
      assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
      const result = resumed.json!.data as { operation_id: string; committed: boolean };
      assert.equal(result.operation_id, operationId);
      assert.equal(result.committed, true);

      // output exact: the old predicate's records once, then the new predicate's; the same
      // application ID (offsets only forward) and volume instance
      await output.afterChange();

      // then a no-op
      const again = await sluice(["plan"]);
      assert.equal(again.code, 0, again.stderr);
      const plan = (again.json!.data as { plan: { actions: unknown[]; blockers: unknown[] } }).plan;
      assert.deepEqual(plan.actions, []);
      assert.deepEqual(plan.blockers, []);
    } finally {
      if (appId) await removeApplication(appId);
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  },
);
