// The runner-permission proof through the SDK's plan and apply on the fake world (testing/fakes):
// under kafka.security the broker's ACLs for the runner principal decide whether a create may be
// planned (missing: BLOCKED_RUNNER_PERMISSION, nothing created; unreadable:
// BLOCKED_RUNNER_PERMISSION_UNVERIFIED); a project without security never reads them and its plan
// carries nothing of them.
import assert from "node:assert/strict";
import type { TestProject } from "../../harness/project.ts";
import type { FakeWorld } from "../../testing/fakes/fake_world.ts";
import {
  fakeProject,
  RUNNER_PRINCIPAL as RUNNER,
  runnerGrants,
} from "../../testing/ways/fake_project.ts";
import type { AclBinding, KafkaPort } from "../providers/kafka/port.ts";
import { apply, plan } from "./session.ts";
import { observeRunnerAcls } from "./runner_acls.ts";
import { SluiceError } from "../errors.ts";
import { PLAINTEXT } from "../project/kafka_security.ts";
import { join } from "node:path";
import { readPlanFile, writePlanFile } from "../plan/plan_file.ts";
import { operationStatus } from "./pending_operation.ts";

async function setUp(
  seed: string,
  secured: boolean,
): Promise<
  {
    world: FakeWorld;
    p: TestProject;
    kafka: KafkaPort;
    calls: string[];
    env: (name: string) => string | undefined;
    [Symbol.asyncDispose](): Promise<void>;
  }
> {
  const f = await fakeProject(seed, {
    security: secured
      ? {
        adminPasswordEnv: "SLUICE_KAFKA_ADMIN_PASSWORD",
        runnerPasswordEnv: "SLUICE_KAFKA_RUNNER_PASSWORD",
      }
      : undefined,
  });
  // a plan that creates a runner binds its credentials (lib/plan/runner_credentials.ts): the
  // runner principal's variable is given to each call, never set in the process environment,
  // which other test files of a combined run set and clear
  const vars: Record<string, string> = secured ? { SLUICE_KAFKA_RUNNER_PASSWORD: "runner-pw" } : {};
  const inner = f.deps.kafka;
  const calls: string[] = [];
  // every ACL read is counted: a project without security must make none
  const kafka: KafkaPort = {
    ...inner,
    describeAcls: (principal) => {
      calls.push(principal);
      return inner.describeAcls!(principal);
    },
  };
  return {
    world: f.world,
    p: f.p,
    kafka,
    calls,
    env: (name) => vars[name],
    async [Symbol.asyncDispose]() {
      await f[Symbol.asyncDispose]();
    },
  };
}

function grant(world: FakeWorld, acls: AclBinding[], describeDenied = false) {
  world.store.transact((w) => {
    w.kafka.acls = acls;
    w.kafka.acl_describe_denied = describeDenied;
  });
}

Deno.test("runner permissions on fakes: a project without kafka.security reads no ACL and its plan carries nothing of them", async () => {
  await using s = await setUp("acl-plaintext", false);
  // even a broker that would refuse the read changes nothing
  grant(s.world, [], true);
  const r = await plan({ dir: s.p.dir, docker: s.world.docker, kafka: s.kafka, env: s.env });
  assert.deepEqual(r.plan.blockers, []);
  assert.equal("runner_permissions" in r.plan, false);
  assert.equal(new TextDecoder().decode(r.bytes).includes("runner_permissions"), false);
  assert.deepEqual(s.calls, []);
});

Deno.test("runner permissions on fakes: complete grants plan the create; one missing blocks plan and apply naming it, and nothing is created", async () => {
  await using s = await setUp("acl-secured", true);
  const ports = { docker: s.world.docker, kafka: s.kafka, env: s.env };
  const appId = `sluice-${s.p.name}-eligible_orders`;
  grant(s.world, runnerGrants(s.p));
  const ok = await plan({ dir: s.p.dir, ...ports });
  assert.deepEqual(ok.plan.blockers, []);
  assert.deepEqual(ok.plan.runner_permissions, {
    principal: RUNNER,
    checked: ["eligible_orders"],
    unverified: null,
    missing: [],
    excess: [],
  });
  assert.deepEqual(s.calls, [RUNNER, "User:*"]);

  // the group's READ taken away
  grant(s.world, runnerGrants(s.p).filter((a) => a.resourceType !== "GROUP"));
  const blocked = await plan({ dir: s.p.dir, ...ports });
  assert.deepEqual(blocked.plan.blockers.map((b) => b.code), ["BLOCKED_RUNNER_PERMISSION"]);
  assert.match(
    blocked.plan.blockers[0].message,
    new RegExp(`may not READ GROUP ${appId}, its consumer group \\(the application ID\\)`),
  );
  await assert.rejects(
    () => apply({ dir: s.p.dir, ...ports }),
    (e) => e instanceof SluiceError && e.code === "BLOCKED_RUNNER_PERMISSION",
  );
  assert.deepEqual(s.world.control.mutations(), [], "nothing was created");

  // proven at plan time, removed before apply: the plan file's apply reads them again and
  // blocks before its first mutation
  grant(s.world, runnerGrants(s.p));
  const proven = await plan({ dir: s.p.dir, ...ports });
  assert.deepEqual(proven.plan.blockers, []);
  grant(s.world, runnerGrants(s.p).filter((a) => a.resourceType !== "TOPIC"));
  const before = s.calls.length;
  await assert.rejects(
    () => apply({ dir: s.p.dir, ...ports, plan: proven.plan, planSha256: proven.sha256 }),
    (e) => {
      assert.ok(e instanceof SluiceError && e.code === "BLOCKED_RUNNER_PERMISSION", String(e));
      assert.match(e.message, new RegExp(`may not READ TOPIC ${s.p.inputTopic}`));
      return true;
    },
  );
  assert.deepEqual(s.calls.slice(before), [RUNNER, "User:*"], "read again at apply");
  assert.deepEqual(s.world.control.mutations(), [], "nothing was created");
  // no operation was recorded: with the grant back, the plan has no pending operation to name
  grant(s.world, runnerGrants(s.p));
  assert.deepEqual((await plan({ dir: s.p.dir, ...ports })).plan.blockers, []);

  // what the admin principal may not read is said, never passed
  grant(s.world, runnerGrants(s.p), true);
  const unverified = await plan({ dir: s.p.dir, ...ports });
  assert.deepEqual(unverified.plan.blockers.map((b) => b.code), [
    "BLOCKED_RUNNER_PERMISSION_UNVERIFIED",
  ]);
  assert.match(
    unverified.plan.blockers[0].message,
    /may not describe ACLs \(it needs DESCRIBE on the CLUSTER/,
  );
  const offline = await plan({ dir: s.p.dir, ...ports, offline: true });
  assert.match(
    offline.plan.blockers[0]?.message ?? "",
    /an offline plan does not read the broker's ACLs/,
  );
  assert.deepEqual(s.world.control.mutations(), [], "nothing was created");
});

Deno.test("observeRunnerAcls: nothing under PLAINTEXT; a certificate principal cannot be named; other failures are not swallowed", async () => {
  const failing = {
    describeAcls: () => Promise.reject(new Error("connection reset")),
  } as unknown as KafkaPort;
  assert.equal(await observeRunnerAcls(failing, PLAINTEXT, false), null);
  const ssl = await observeRunnerAcls(failing, {
    protocol: "SSL",
    tls: { caFileEnv: null, hostnameVerification: true },
    admin: { sasl: null, certificate: { certFileEnv: "A", keyFileEnv: "B" } },
    runner: { sasl: null, certificate: { certFileEnv: "C", keyFileEnv: "D" } },
  }, false);
  assert.equal(ssl?.principal, null);
  assert.match(ssl?.unread ?? "", /client certificate/);
  await assert.rejects(
    () =>
      observeRunnerAcls(failing, {
        protocol: "SASL_SSL",
        tls: { caFileEnv: null, hostnameVerification: true },
        admin: null,
        runner: {
          sasl: { mechanism: "PLAIN", username: "r", passwordEnv: "P" },
          certificate: null,
        },
      }, false),
    /connection reset/,
  );
});

Deno.test("runner permissions on fakes: a runner the broker refuses mid-create exits 15 KAFKA_AUTHORIZATION_FAILED, runner-status names it, and the same plan continues once the grant is back", async () => {
  await using s = await setUp("acl-midway", true);
  const ports = { docker: s.world.docker, kafka: s.kafka, env: s.env };
  const appId = `sluice-${s.p.name}-eligible_orders`;
  grant(s.world, runnerGrants(s.p));
  const planned = await plan({ dir: s.p.dir, ...ports });
  assert.deepEqual(planned.plan.blockers, []);
  const planPath = join(s.p.dir, "create.plan.json");
  await writePlanFile(planPath, planned.plan);
  const sha256 = (await readPlanFile(planPath)).sha256;
  // the ACL removed after apply's check: the broker refuses the runner at its start
  s.world.control.failRunner("start", { code: 15, reason: "KAFKA_AUTHORIZATION_FAILED" }, {
    match: appId,
  });
  const applyIt = () => apply({ dir: s.p.dir, ...ports, plan: planned.plan, planSha256: sha256 });
  await assert.rejects(
    applyIt,
    (e) =>
      e instanceof SluiceError && e.code === "BLOCKED_RUNNER_EXITED" && /code 15/.test(e.message),
  );
  const pending = (await plan({ dir: s.p.dir, ...ports, offline: true })).plan.blockers
    .find((b) => b.code === "BLOCKED_OPERATION_PENDING");
  const operationId = String(pending?.evidence?.operation_id ?? "");
  assert.ok(operationId, JSON.stringify(pending));
  const report = await operationStatus({ dir: s.p.dir, ...ports, planPath, operationId });
  assert.equal(report.journey, "create");
  assert.equal(report.next.step, "start_container");
  assert.match(report.next.detail, /exit 15 KAFKA_AUTHORIZATION_FAILED/);
  // the grant back (the hook was for one start): the same plan file starts the same container
  const done = await applyIt();
  assert.equal(done.runners.length, 1);
});

Deno.test("observeRunnerAcls: a client certificate's declared principal (kafka.security.runner.principal) is the one whose ACLs are read", async () => {
  const asked: string[] = [];
  const kafka = {
    describeAcls: (principal: string) => (asked.push(principal), Promise.resolve([])),
  } as unknown as KafkaPort;
  const seen = await observeRunnerAcls(kafka, {
    protocol: "SSL",
    tls: { caFileEnv: null, hostnameVerification: true },
    admin: { sasl: null, certificate: { certFileEnv: "A", keyFileEnv: "B" } },
    runner: {
      sasl: null,
      certificate: { certFileEnv: "C", keyFileEnv: "D", principal: "User:orders-runner" },
    },
  }, false);
  assert.deepEqual(seen, { principal: "User:orders-runner", acls: [], unread: null });
  assert.deepEqual(asked, ["User:orders-runner", "User:*"]);
});
