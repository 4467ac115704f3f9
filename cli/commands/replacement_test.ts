// `sluice state resume` of a reviewed replacement on the fake world (testing/fakes), run in this
// process with the fake ports: when the runner's Kafka credentials rotated while the replacement
// was pending, the resume goes on with the current ones and says so — the note in the text, the
// plan's and the current keyed hashes (`runner_client_changed`) in the JSON, never the password.
// The runner principal's variable is given to the CLI explicitly (RuntimeDeps.env), never set in
// the process environment.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fakeProject, runnerGrants } from "../../testing/ways/fake_project.ts";
import { runInProcess } from "../../testing/in_process_cli.ts";
import type { RuntimeDeps } from "../../lib/runtime/deps.ts";
import { onCrossing } from "../../lib/fault/site.ts";

const FIRST = "first-Runner-pw-4711";
const SECOND = "second-Runner-pw-4712";

async function securedStarter() {
  const f = await fakeProject("cli-resume-rotated", {
    security: {
      adminPasswordEnv: "SLUICE_TEST_ADMIN_PW",
      runnerPasswordEnv: "SLUICE_TEST_RUNNER_PW",
    },
  });
  f.world.store.transact((w) => {
    w.kafka.acls = runnerGrants(f.p);
  });
  const vars: Record<string, string> = {
    SLUICE_TEST_ADMIN_PW: "admin-pw",
    SLUICE_TEST_RUNNER_PW: FIRST,
  };
  const deps: RuntimeDeps = { ...f.deps, env: (name) => vars[name] };
  const cli = async (...args: string[]) => {
    const r = await runInProcess([...args, "--project", f.p.dir], deps);
    return { code: r.code, out: r.stdout };
  };
  return {
    p: f.p,
    vars,
    cli,
    [Symbol.asyncDispose]: () => f[Symbol.asyncDispose](),
  };
}

/**
 * Plan the predicate `where` (a reviewed replacement), apply it interrupted before its
 * candidate starts, rotate the runner's password, and return the plan file and operation ID.
 */
async function interruptedReplacement(
  s: Awaited<ReturnType<typeof securedStarter>>,
  where: string,
  file: string,
): Promise<{ planPath: string; operationId: string }> {
  s.vars.SLUICE_TEST_RUNNER_PW = FIRST;
  await s.p.setPredicate(where);
  const planPath = join(s.p.dir, file);
  const planned = await s.cli("-o", "json", "plan", "--out", planPath);
  assert.equal(planned.code, 0, planned.out);
  assert.equal(JSON.parse(planned.out).data.plan.format, 6, planned.out);
  const stop = onCrossing((c) => {
    if (c.site.name === "docker.start_candidate" && c.side === "before") {
      throw new Error("interrupted before the candidate's start");
    }
  });
  try {
    const killed = await s.cli("-o", "json", "apply", "--plan", planPath);
    assert.notEqual(killed.code, 0, killed.out);
  } finally {
    stop();
  }
  const shown = await s.cli("-o", "json", "state", "show");
  assert.equal(shown.code, 0, shown.out);
  const operationId = JSON.parse(shown.out).data.pending_operation?.operation_id;
  assert.ok(operationId, shown.out);
  // the runner's password rotated while the replacement was pending
  s.vars.SLUICE_TEST_RUNNER_PW = SECOND;
  return { planPath, operationId };
}

Deno.test("state resume of a replacement whose runner credentials rotated says so: a note in the text, both keyed hashes in the JSON, never the password", async () => {
  await using s = await securedStarter();
  const created = await s.cli("-o", "json", "apply");
  assert.equal(created.code, 0, created.out);

  // JSON: the hashes the plan bound and the current ones, no secret
  const first = await interruptedReplacement(s, "amount >= 200 AND paid = TRUE", "r1.plan.json");
  const json = await s.cli(
    "-o",
    "json",
    "state",
    "resume",
    "--plan",
    first.planPath,
    "--operation-id",
    first.operationId,
  );
  assert.equal(json.code, 0, json.out);
  const data = JSON.parse(json.out).data;
  assert.equal(data.committed, true, json.out);
  const changed = data.runner_client_changed;
  assert.match(changed?.plan_hmac_sha256 ?? "", /^[0-9a-f]{64}$/, json.out);
  assert.match(changed?.current_hmac_sha256 ?? "", /^[0-9a-f]{64}$/, json.out);
  assert.notEqual(changed.plan_hmac_sha256, changed.current_hmac_sha256);
  for (const pw of [FIRST, SECOND]) assert.equal(json.out.includes(pw), false, json.out);

  // text: the note beside the completion
  const second = await interruptedReplacement(s, "amount >= 300 AND paid = TRUE", "r2.plan.json");
  const text = await s.cli(
    "state",
    "resume",
    "--plan",
    second.planPath,
    "--operation-id",
    second.operationId,
  );
  assert.equal(text.code, 0, text.out);
  assert.match(text.out, /^Replacement \S+ completed and committed/m, text.out);
  assert.match(
    text.out,
    /^note: the runner's Kafka credentials changed since the plan; the operation went on with the current ones\.$/m,
    text.out,
  );
  for (const pw of [FIRST, SECOND]) assert.equal(text.out.includes(pw), false, text.out);
});

Deno.test("state resume of a replacement with the plan's own runner credentials has no note and no runner_client_changed", async () => {
  await using s = await securedStarter();
  assert.equal((await s.cli("-o", "json", "apply")).code, 0);
  const r = await interruptedReplacement(s, "amount >= 200 AND paid = TRUE", "r.plan.json");
  s.vars.SLUICE_TEST_RUNNER_PW = FIRST; // rotated back before the resume
  const out = await s.cli(
    "-o",
    "json",
    "state",
    "resume",
    "--plan",
    r.planPath,
    "--operation-id",
    r.operationId,
  );
  assert.equal(out.code, 0, out.out);
  assert.equal("runner_client_changed" in JSON.parse(out.out).data, false, out.out);
});
