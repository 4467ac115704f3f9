// The runner credentials a plan binds (lib/plan/runner_credentials.ts), through the SDK's plan
// and apply on the fake world (testing/fakes): under kafka.security a plan that creates a runner
// records a keyed hash of its client file (never the password, never a plain sha256); a change
// between plan and apply refuses with PLAN_KAFKA_CREDENTIALS_CHANGED having written nothing; a
// create already pending goes on with the new credentials and says so; PLAINTEXT plans carry
// nothing of it.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { FakeWorld } from "../../testing/fakes/fake_world.ts";
import { fakeProject, runnerGrants } from "../../testing/ways/fake_project.ts";
import { apply, plan } from "./session.ts";
import { SluiceError } from "../errors.ts";
import { onCrossing } from "../fault/site.ts";
import { RUNNER_CLIENT_FILE_PATH } from "../providers/kafka/security.ts";
import { bindRunnerCredentials, checkRunnerCredentials } from "../plan/runner_credentials.ts";
import { newSealKey } from "../state/seal_key.ts";
import { isSensitiveKey } from "../secrets.ts";
import { join } from "node:path";
import { writePlanFile } from "../plan/plan_file.ts";
import { executeReviewed } from "./replacement/execute.ts";

const FIRST = "first-Runner-pw";
const SECOND = "second-Runner-pw";

async function setUp(seed: string, secured: boolean) {
  const f = await fakeProject(seed, {
    security: secured
      ? { adminPasswordEnv: "SLUICE_TEST_ADMIN_PW", runnerPasswordEnv: "SLUICE_TEST_RUNNER_PW" }
      : undefined,
  });
  f.world.store.transact((w) => {
    w.kafka.acls = runnerGrants(f.p);
  });
  Deno.env.set("SLUICE_TEST_ADMIN_PW", "admin-pw");
  Deno.env.set("SLUICE_TEST_RUNNER_PW", FIRST);
  return {
    world: f.world,
    p: f.p,
    ports: { docker: f.deps.docker, kafka: f.deps.kafka },
    async [Symbol.asyncDispose]() {
      Deno.env.delete("SLUICE_TEST_ADMIN_PW");
      Deno.env.delete("SLUICE_TEST_RUNNER_PW");
      await f[Symbol.asyncDispose]();
    },
  };
}

/** The runner client file the fake container holds, as text ("" when none). */
function clientFileOf(world: FakeWorld): string {
  const containers = Object.values(world.store.read().docker.containers) as Array<
    { rootfs?: Record<string, string> }
  >;
  const b64 = containers.map((c) => c.rootfs?.[RUNNER_CLIENT_FILE_PATH]).find((x) => x);
  return b64 ? new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))) : "";
}

Deno.test("runner credentials: the binding is keyed (not the file's sha256) and compares only under the same key", () => {
  const key = newSealKey("2026-01-01T00:00:00Z");
  const file = new TextEncoder().encode(`{"password":"${FIRST}"}`);
  const bound = bindRunnerCredentials(file, key);
  assert.notEqual(bound.hmac_sha256, createHash("sha256").update(file).digest("hex"));
  assert.equal(checkRunnerCredentials(bound, file, key, false)?.changed, false);
  assert.equal(checkRunnerCredentials(null, file, key, false), null);
  const other = new TextEncoder().encode(`{"password":"${SECOND}"}`);
  assert.throws(
    () => checkRunnerCredentials(bound, other, key, false),
    (e) => e instanceof SluiceError && e.code === "PLAN_KAFKA_CREDENTIALS_CHANGED",
  );
  const pending = checkRunnerCredentials(bound, other, key, true);
  assert.equal(pending?.changed, true);
  assert.equal(JSON.stringify(pending).includes(SECOND), false);
  // the names the plan and the apply's result show them under are not hidden by the CLI's
  // redaction (a hidden object would break the JSON envelope): they hold hashes, never a secret
  for (const name of ["runner_client_binding", "runner_client_changed", "key_id", "hmac_sha256"]) {
    assert.equal(isSensitiveKey(name), false, name);
  }
  // another key's binding cannot be compared: changed, never silently equal
  const rotated = newSealKey("2026-01-02T00:00:00Z");
  assert.equal(checkRunnerCredentials(bound, file, rotated, true)?.changed, true);
});

Deno.test("runner credentials on fakes: a PLAINTEXT plan carries nothing of them", async () => {
  await using s = await setUp("cred-plaintext", false);
  const r = await plan({ dir: s.p.dir, ...s.ports });
  assert.equal(r.plan.actions.some((a) => a.type === "create_runner"), true);
  assert.equal("runner_client_binding" in r.plan, false);
  assert.equal(new TextDecoder().decode(r.bytes).includes("runner_client_binding"), false);
});

Deno.test("runner credentials on fakes: changed between plan and apply is refused before anything is written; a pending create goes on with the new ones", async () => {
  await using s = await setUp("cred-secured", true);
  const planned = await plan({ dir: s.p.dir, ...s.ports });
  assert.deepEqual(planned.plan.blockers, []);
  const bound = planned.plan.runner_client_binding;
  assert.ok(bound, "the create's plan binds the runner's credentials");
  assert.equal(new TextDecoder().decode(planned.bytes).includes(FIRST), false);
  const applyIt = () =>
    apply({ dir: s.p.dir, ...s.ports, plan: planned.plan, planSha256: planned.sha256 });

  // rotated before apply: refused, nothing written
  Deno.env.set("SLUICE_TEST_RUNNER_PW", SECOND);
  await assert.rejects(applyIt, (e) => {
    assert.ok(e instanceof SluiceError && e.code === "PLAN_KAFKA_CREDENTIALS_CHANGED", String(e));
    assert.equal(JSON.stringify(e.evidence).includes(SECOND), false);
    return true;
  });
  assert.deepEqual(s.world.control.mutations(), [], "nothing was created");

  // with the plan's credentials the create starts; it is interrupted before the runner starts
  Deno.env.set("SLUICE_TEST_RUNNER_PW", FIRST);
  const stop = onCrossing((c) => {
    if (c.site.name === "docker.start_runner" && c.side === "before") {
      throw new Error("interrupted before the start");
    }
  });
  try {
    await assert.rejects(applyIt, /interrupted before the start/);
  } finally {
    stop();
  }
  assert.equal(clientFileOf(s.world), "", "the runner was not started");

  // rotated while the create is pending: it goes on with the new ones, and says so
  Deno.env.set("SLUICE_TEST_RUNNER_PW", SECOND);
  const warnings: string[] = [];
  const done = await apply({
    dir: s.p.dir,
    ...s.ports,
    plan: planned.plan,
    planSha256: planned.sha256,
    logger: { warn: (m) => warnings.push(m) },
  });
  assert.equal(done.runners.length, 1);
  assert.equal(done.runner_client_changed?.plan_hmac_sha256, bound.hmac_sha256);
  assert.notEqual(done.runner_client_changed?.current_hmac_sha256, bound.hmac_sha256);
  assert.match(warnings.join("\n"), /runner's Kafka credentials .* changed since the plan/);
  assert.match(clientFileOf(s.world), new RegExp(SECOND), "the runner got the current ones");

  // the committed plan applied again after another rotation and an ACL removed: the verified
  // no-op it is with any credentials (it starts nothing, so it checks neither)
  Deno.env.set("SLUICE_TEST_RUNNER_PW", "third-Runner-pw");
  s.world.store.transact((w) => {
    w.kafka.acls = (w.kafka.acls ?? []).filter((a) => a.resourceType !== "GROUP");
  });
  const count = s.world.control.mutations().length;
  const again = await applyIt();
  assert.equal(again.already_applied, true);
  assert.equal(again.runner_client_changed, undefined);
  assert.equal(s.world.control.mutations().length, count, "nothing was mutated");
});

Deno.test("runner credentials and ACLs on fakes: a reviewed replacement's apply refuses rotated credentials and a removed ACL before its intent", async () => {
  await using s = await setUp("cred-replacement", true);
  const created = await plan({ dir: s.p.dir, ...s.ports });
  await apply({ dir: s.p.dir, ...s.ports, plan: created.plan, planSha256: created.sha256 });
  await s.p.setPredicate("amount >= 200 AND paid = TRUE");
  const reviewed = await plan({ dir: s.p.dir, ...s.ports });
  assert.equal(reviewed.plan.format, 6, JSON.stringify(reviewed.plan.blockers));
  assert.ok(reviewed.plan.runner_client_binding, "a replacement binds the runner's credentials");
  const planPath = join(s.p.dir, "replace.plan.json");
  await writePlanFile(planPath, reviewed.plan);
  const mutations = s.world.control.mutations().length;
  const execute = () =>
    executeReviewed({ dir: s.p.dir, ...s.ports, clock: s.world.clock, planPath });
  const granted = s.world.store.read().kafka.acls ?? [];

  Deno.env.set("SLUICE_TEST_RUNNER_PW", SECOND);
  await assert.rejects(
    execute,
    (e) => e instanceof SluiceError && e.code === "PLAN_KAFKA_CREDENTIALS_CHANGED",
  );
  Deno.env.set("SLUICE_TEST_RUNNER_PW", FIRST);
  // the group's READ removed after the plan proved it
  s.world.store.transact((w) => {
    w.kafka.acls = (w.kafka.acls ?? []).filter((a) => a.resourceType !== "GROUP");
  });
  await assert.rejects(
    execute,
    (e) => e instanceof SluiceError && e.code === "BLOCKED_RUNNER_PERMISSION",
  );
  assert.equal(s.world.control.mutations().length, mutations, "nothing was mutated");
  const after = await plan({ dir: s.p.dir, ...s.ports, offline: true });
  assert.equal(
    after.plan.blockers.some((b) => b.code === "BLOCKED_OPERATION_PENDING"),
    false,
    "no operation was recorded",
  );

  // applied with its grants and credentials, then applied again after a rotation: the same
  // answer as without the rotation (a plan already applied starts nothing, so checks neither)
  s.world.store.transact((w) => {
    w.kafka.acls = [...(w.kafka.acls ?? []), ...granted.filter((a) => a.resourceType === "GROUP")];
  });
  const applied = await execute();
  assert.equal(applied.outcome, "completed", JSON.stringify(applied).slice(0, 1500));
  const outcome = async () => {
    try {
      return await execute();
    } catch (e) {
      return e instanceof SluiceError ? e.code : String(e);
    }
  };
  const unrotated = await outcome();
  Deno.env.set("SLUICE_TEST_RUNNER_PW", SECOND);
  const rotated = await outcome();
  assert.deepEqual(
    typeof rotated === "string" ? rotated : rotated.outcome,
    typeof unrotated === "string" ? unrotated : unrotated.outcome,
  );
  assert.notEqual(rotated, "PLAN_KAFKA_CREDENTIALS_CHANGED");
});
