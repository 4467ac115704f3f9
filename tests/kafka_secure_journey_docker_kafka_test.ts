// test-needs: env
// Needs: Docker, the broker image and the runner image. Starts its own broker with a SASL_SSL
// listener (SCRAM users, a CA made now, the StandardAuthorizer: harness/secure_kafka.ts) and runs
// the whole journey through the CLI on it, the runner connecting as its own principal with
// exactly the ACLs its job needs: init → plan → apply (create; first with a wrong runner password,
// refused with the runner's own code, then continued) → exact output → a predicate change whose
// apply process dies by SIGKILL at a fault site chosen at random among the replacement table's
// sites and sides (the seed is printed, SLUICE_TEST_SEED=<n> replays it) → state resume (when
// the kill came before the candidate's start, first with a wrong runner password: the
// candidate's start-up failure, resumable; a kill after the final commit leaves nothing
// pending) → exact output → no-op.
// Then the planted-secret search: neither principal's password is in anything sluice wrote (its
// output, the plan files, the project's state and runtime directories, `docker inspect` of every
// runner, their logs), while the runner's own copy is where sluice put it (mode 0400).
import assert from "node:assert/strict";
import { join } from "node:path";
import { startEnv } from "../harness/env.ts";
import { pointStarterAt, runnerImageId } from "../harness/project.ts";
import {
  grantRunnerAcls,
  scramSecurityYaml,
  scramVariables,
  securedManifest,
} from "../harness/secure_kafka.ts";
import { RUNNER_CLIENT_FILE_PATH } from "../lib/providers/kafka/security.ts";
import {
  assertExit,
  assertNoSecretIn,
  CHANGED_PREDICATE,
  type CliRun,
  containersOf,
  filesUnder,
  outputAcrossChange,
  removeApplication,
  replacementKillPoint,
  sluice,
  starterApplicationId,
} from "./deploy_fixture.ts";
import { dockerText as docker, lastStdoutJson } from "./runner_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const WRONG = "Wr0ngRunnerPassw0rd";

Deno.test(
  "SASL_SSL end to end through the CLI: the runner connects as its own principal (create, a replacement SIGKILLed at a random site and resumed, no-op, output exact), and no password is in anything sluice wrote",
  opts,
  async () => {
    // printed first, so a failure is reproducible with SLUICE_TEST_SEED
    const kill = replacementKillPoint("secure cli journey");
    const replay = kill.replay;
    await using env = await startEnv({
      connect: false,
      secure: { users: [{ name: "sluice-admin", superUser: true }, { name: "orders-runner" }] },
    });
    const secure = env.secure!;
    const work = await Deno.makeTempDir({ prefix: "sluice-secure-journey-" });
    const runs: Array<{ what: string; run: CliRun }> = [];
    let appId: string | null = null;
    try {
      // init, then the starter pointed at the SASL_SSL listeners with kafka.security
      const init = await sluice(["init", join(work, "orders")]);
      assertExit(init, 0);
      const p = await pointStarterAt(join(work, "orders"), env, { image: await runnerImageId() });
      await p.editManifest((t) => securedManifest(t, secure, scramSecurityYaml()));
      appId = starterApplicationId(p.name);
      const vars = scramVariables(secure);
      // the runner principal may do exactly what its job needs, and nothing else
      await grantRunnerAcls(env.bootstrapHost, "User:orders-runner", {
        applicationId: appId,
        inputTopic: p.inputTopic,
        outputTopic: p.outputTopic,
      });
      const cli = async (what: string, args: string[], extra: Record<string, string> = {}) => {
        const run = await sluice(["-o", "json", ...args, "--project", p.dir], {
          ...vars,
          ...extra,
        });
        runs.push({ what, run });
        return run;
      };
      const data = (run: CliRun) => JSON.parse(run.stdout).data;

      // plan → apply: topics, volume, runner; the runner passes its identity gate as
      // orders-runner over SASL_SSL and reaches RUNNING
      // planned with a wrong runner password (the plan binds its keyed hash): applied with the
      // right one, a new operation is refused before anything is written
      const wrongPw = { SLUICE_KAFKA_RUNNER_PASSWORD: WRONG };
      assertExit(
        await cli("plan create", ["plan", "--out", join(p.dir, "create.plan.json")], wrongPw),
        0,
      );
      const changed = await cli("apply create (credentials changed since the plan)", [
        "apply",
        "--plan",
        join(p.dir, "create.plan.json"),
      ]);
      assertExit(changed, 3);
      assert.equal(JSON.parse(changed.stdout).errors[0].code, "PLAN_KAFKA_CREDENTIALS_CHANGED");
      assert.deepEqual(await containersOf(appId), []);
      // with the plan's wrong password: the runner's login is refused at its identity gate
      // (exit 15, KAFKA_AUTHENTICATION_FAILED, nothing consumed) and the create stays pending
      const refused = await cli(
        "apply create (wrong runner password)",
        ["apply", "--plan", join(p.dir, "create.plan.json")],
        { SLUICE_KAFKA_RUNNER_PASSWORD: WRONG },
      );
      assertExit(refused, 4);
      assert.equal(JSON.parse(refused.stdout).errors[0].code, "BLOCKED_RUNNER_EXITED");
      const [failed] = await containersOf(appId);
      const stop = await lastStdoutJson(failed);
      assert.equal(stop.sluice_runner_exit, 15, JSON.stringify(stop));
      assert.equal(stop.reason, "KAFKA_AUTHENTICATION_FAILED", JSON.stringify(stop));
      // the same plan with the right one: the pending create goes on with the rotated password
      // (never a dead end), the same container starts again, its file rewritten
      const created = await cli("apply create", [
        "apply",
        "--plan",
        join(p.dir, "create.plan.json"),
      ]);
      assertExit(created, 0);
      assert.equal(data(created).serial, 1, created.stdout);
      // the rotation is in the apply's evidence: the plan's and the current keyed hashes
      const rotated = data(created).runner_client_changed;
      assert.match(rotated?.current_hmac_sha256 ?? "", /^[0-9a-f]{64}$/, created.stdout);
      assert.notEqual(rotated.current_hmac_sha256, rotated.plan_hmac_sha256);
      const first = await containersOf(appId);
      assert.deepEqual(first, [failed]);
      const gateLine = /identity gate passed in \d+ ms \(SASL_SSL SCRAM-SHA-512 as orders-runner\)/;
      // what the first runner shows (both its runs), kept for the search: the replacement removes it
      const firstShown = {
        inspect: await docker(["inspect", first[0]]),
        logs: await docker(["logs", first[0]]),
      };
      assert.match(firstShown.logs, gateLine);

      // the old predicate's output, exact (records produced on the plaintext listener)
      const output = outputAcrossChange(env.bootstrapHost, p, appId);
      await output.beforeChange();

      // state resume of the killed operation, breaking the dead process's lock by its ID; when
      // the resume is what starts the candidate, first with the runner password rotated on the
      // broker's side: the candidate's login is refused (KAFKA_AUTHENTICATION_FAILED before
      // RUNNING, nothing consumed), the operation stays pending; resumed with the right one, the
      // same candidate starts again
      const resumeKilled = async (view: {
        pending_operation: { operation_id: string } | null;
        lock: { holder: { lock_id: string } | null };
      }) => {
        assert.ok(view.pending_operation, `no pending operation after the kill ${replay}`);
        const operation = ["--operation-id", view.pending_operation.operation_id];
        let breakLock = view.lock.holder ? ["--break-stale-lock", view.lock.holder.lock_id] : [];
        const plan = ["--plan", join(p.dir, "replace.plan.json")];
        const resume = (what: string, extra: Record<string, string> = {}) =>
          cli(what, ["state", "resume", ...plan, ...operation, ...breakLock], extra);
        if (!kill.candidateStarted) {
          const stalled = await resume("state resume (wrong runner password)", {
            SLUICE_KAFKA_RUNNER_PASSWORD: WRONG,
          });
          assertExit(stalled, 4);
          assert.equal(
            JSON.parse(stalled.stdout).errors[0].code,
            "BLOCKED_CANDIDATE_STARTUP_FAILED",
            `${replay} ${stalled.stdout}`,
          );
          breakLock = [];
        }
        const resumed = await resume("state resume");
        assertExit(resumed, 0);
        assert.equal(data(resumed).committed, true, `${replay} ${resumed.stdout}`);
      };

      // the predicate change, reviewed; its apply killed at the kill point, then state resume
      // of that operation (the candidate starts as orders-runner too)
      await p.setPredicate(CHANGED_PREDICATE);
      const reviewed = await cli("plan replace", [
        "plan",
        "--out",
        join(p.dir, "replace.plan.json"),
      ]);
      assertExit(reviewed, 0);
      assert.equal(data(reviewed).plan.format, 6, reviewed.stdout);
      const killed = await cli(
        "apply replace (killed)",
        ["apply", "--plan", join(p.dir, "replace.plan.json")],
        kill.env,
      );
      assert.equal(
        killed.code,
        137,
        `not killed at its site ${replay}: ${killed.stdout}${killed.stderr}`,
      );
      assert.ok(
        killed.stderr.includes(`SLUICE_FAULT_FIRED ${kill.point}`),
        `killed elsewhere ${replay}: ${killed.stderr}`,
      );
      const shown = await cli("state show", ["state", "show"]);
      assertExit(shown, 0);
      const view = data(shown) as {
        pending_operation: { operation_id: string } | null;
        lock: { holder: { lock_id: string } | null };
        ownership: { serial: number } | null;
      };
      if (kill.afterCommit) {
        // killed after the operation's final commit: nothing is pending, the replacement is done
        assert.equal(view.pending_operation, null, `${replay} ${shown.stdout}`);
        assert.ok((view.ownership?.serial ?? 0) > 1, `${replay} ${shown.stdout}`);
      } else {
        await resumeKilled(view);
      }

      // output exact: the old predicate's records once, then the new predicate's; the same
      // application ID (offsets only forward) and volume instance
      await output.afterChange(replay);
      const candidate = await containersOf(appId);
      assert.equal(candidate.length, 1, replay);
      assert.notEqual(candidate[0], first[0], replay);
      assert.match(await docker(["logs", candidate[0]]), gateLine);

      // then a no-op
      const again = await cli("plan no-op", ["plan"]);
      assertExit(again, 0);
      assert.equal(data(again).noop, true, again.stdout);

      // the planted-secret search: the passwords sluice was given are in nothing it wrote
      const planted: Array<[string, string]> = [
        ...Object.entries(secure.passwords).map(([u, pw]): [string, string] => [
          `${u}'s password`,
          pw,
        ]),
        ["a wrong runner's password", WRONG],
      ];
      const places = new Map<string, string>();
      for (const { what, run } of runs) places.set(`${what}: output`, run.stdout + run.stderr);
      for (const [path, text] of await filesUnder(p.dir)) places.set(path, text);
      places.set(`docker inspect ${first[0]}`, firstShown.inspect);
      places.set(`docker logs ${first[0]}`, firstShown.logs);
      for (const id of candidate) {
        places.set(`docker inspect ${id}`, await docker(["inspect", id]));
        places.set(`docker logs ${id}`, await docker(["logs", id]));
      }
      const volume = `${appId}-state`;
      places.set(`docker volume inspect ${volume}`, await docker(["volume", "inspect", volume]));
      assert.ok(places.has(join(p.dir, "replace.plan.json")), [...places.keys()].join("\n"));
      assert.ok(
        [...places.keys()].some((k) => k.includes("/.sluice/state/")),
        [...places.keys()].join("\n"),
      );
      assertNoSecretIn(places, planted);
      // ...while the runner's own copy is where sluice put it, readable by its owner only: the
      // search would have found it
      const copy = await docker(["exec", candidate[0], "cat", RUNNER_CLIENT_FILE_PATH]);
      assert.ok(copy.includes(secure.passwords["orders-runner"]));
      assert.equal(copy.includes(secure.passwords["sluice-admin"]), false);
      assert.equal(
        (await docker(["exec", candidate[0], "stat", "-c", "%a %U", RUNNER_CLIENT_FILE_PATH]))
          .trim(),
        "400 root",
      );
    } finally {
      if (appId) await removeApplication(appId);
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  },
);
