// test-needs: env
// Needs: Docker, the broker image and the runner image. Starts its own broker with a SASL_SSL
// listener (SCRAM users, a CA made now, the StandardAuthorizer: harness/secure_kafka.ts) and runs
// the whole journey through the CLI on it, the runner connecting as its own principal with
// exactly the ACLs its job needs: init → plan → apply (create; first with a wrong runner password,
// refused with the runner's own code, then continued) → exact output → a predicate change whose
// apply is killed once the candidate exists → state resume (first with a wrong runner password:
// the candidate's start-up failure, resumable) → exact output → no-op.
// Then the planted-secret search: neither principal's password is in anything sluice wrote (its
// output, the plan files, the project's state and runtime directories, `docker inspect` of every
// runner, their logs), while the runner's own copy is where sluice put it (mode 0400).
import assert from "node:assert/strict";
import { join } from "node:path";
import { startEnv } from "../harness/env.ts";
import { committedOffsets, produce } from "../harness/kafka.ts";
import { pointStarterAt, runnerImageId } from "../harness/project.ts";
import { grantRunnerAcls } from "../harness/secure_kafka.ts";
import { FAULT_ENV } from "../lib/fault/site.ts";
import { RUNNER_CLIENT_FILE_PATH } from "../lib/providers/kafka/security.ts";
import {
  assertExit,
  type CliRun,
  containersOf,
  type Order,
  orders,
  outputRecords,
  projected,
  removeApplication,
  sluice,
  starterApplicationId,
  volumeLabels,
} from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const WRONG = "Wr0ngRunnerPassw0rd";

const SECURITY = `  security:
    protocol: SASL_SSL
    tls:
      ca_file_env: KAFKA_CA_FILE
    admin:
      sasl_mechanism: SCRAM-SHA-512
      username: sluice-admin
      password_env: SLUICE_KAFKA_ADMIN_PASSWORD
    runner:
      sasl_mechanism: SCRAM-SHA-512
      username: orders-runner
      password_env: SLUICE_KAFKA_RUNNER_PASSWORD
`;

async function docker(args: string[]): Promise<string> {
  const out = await new Deno.Command("docker", { args, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  assert.equal(out.code, 0, `docker ${args.join(" ")}: ${dec.decode(out.stderr)}`);
  return dec.decode(out.stdout) + dec.decode(out.stderr);
}

/** Every regular file under `dir`, as text, by path. */
async function filesUnder(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) { for (const [p, t] of await filesUnder(path)) out.set(p, t); }
    else if (e.isFile) out.set(path, new TextDecoder().decode(await Deno.readFile(path)));
  }
  return out;
}

Deno.test(
  "SASL_SSL end to end through the CLI: the runner connects as its own principal (create, replace killed and resumed, no-op, output exact), and no password is in anything sluice wrote",
  opts,
  async () => {
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
      await p.editManifest((t) =>
        t
          .replace(/bootstrap_host: .*/, `bootstrap_host: ${secure.bootstrapHost}`)
          .replace(/bootstrap_internal: .*/, `bootstrap_internal: ${secure.bootstrapInternal}`)
          .replace(/(bootstrap_internal: .*\n)/, `$1${SECURITY}`)
      );
      appId = starterApplicationId(p.name);
      const vars = {
        KAFKA_CA_FILE: secure.caFile,
        SLUICE_KAFKA_ADMIN_PASSWORD: secure.passwords["sluice-admin"],
        SLUICE_KAFKA_RUNNER_PASSWORD: secure.passwords["orders-runner"],
      };
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
      const stop = JSON.parse((await docker(["logs", "--tail", "1", failed])).trim());
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
      const passOld = (o: Order) => o.amount >= 100 && o.paid;
      const passNew = (o: Order) => o.amount >= 200 && o.paid;
      const before = orders("a", [50, 150, 250, 120, 300, 90, 210, 180]);
      await produce(
        env.bootstrapHost,
        p.inputTopic,
        before.map((o) => ({ key: o.key, value: JSON.stringify(o.value) })),
      );
      const oldOut = projected(before.filter((o) => passOld(o.value)));
      assert.deepEqual(
        await outputRecords(env.bootstrapHost, p.outputTopic, oldOut.length),
        oldOut,
      );
      const volume = `${appId}-state`;
      const instance = (await volumeLabels(volume))["sluice.volume-instance"];
      const offsetsBefore = await committedOffsets(env.bootstrapHost, appId, p.inputTopic);

      // the predicate change, reviewed; its apply killed once the candidate is created, then
      // state resume of that operation (the candidate starts as orders-runner too)
      await p.setPredicate("amount >= 200 AND paid = TRUE");
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
        { [FAULT_ENV.point]: "journal.replacement_created:after", [FAULT_ENV.allow]: "1" },
      );
      assert.equal(killed.code, 137, `not killed at its site: ${killed.stdout}${killed.stderr}`);
      const shown = await cli("state show", ["state", "show"]);
      assertExit(shown, 0);
      const view = data(shown) as {
        pending_operation: { operation_id: string };
        lock: { holder: { lock_id: string } };
      };
      const resume = (what: string, breakLock: string[], extra: Record<string, string> = {}) =>
        cli(what, [
          "state",
          "resume",
          "--plan",
          join(p.dir, "replace.plan.json"),
          "--operation-id",
          view.pending_operation.operation_id,
          ...breakLock,
        ], extra);
      // the runner password rotated on the broker's side before the resume: the candidate's
      // login is refused (KAFKA_AUTHENTICATION_FAILED before RUNNING, nothing consumed), the
      // operation stays pending; resumed with the right one, the same candidate starts again
      const stalled = await resume(
        "state resume (wrong runner password)",
        ["--break-stale-lock", view.lock.holder.lock_id],
        { SLUICE_KAFKA_RUNNER_PASSWORD: WRONG },
      );
      assertExit(stalled, 4);
      assert.equal(
        JSON.parse(stalled.stdout).errors[0].code,
        "BLOCKED_CANDIDATE_STARTUP_FAILED",
        stalled.stdout,
      );
      const resumed = await resume("state resume", []);
      assertExit(resumed, 0);
      assert.equal(data(resumed).committed, true, resumed.stdout);

      // output exact: the old predicate's records once, then the new predicate's
      const after = orders("b", [150, 250, 199, 200, 500, 90, 201, 230]);
      await produce(
        env.bootstrapHost,
        p.inputTopic,
        after.map((o) => ({ key: o.key, value: JSON.stringify(o.value) })),
      );
      const all = projected([
        ...before.filter((o) => passOld(o.value)),
        ...after.filter((o) => passNew(o.value)),
      ]);
      assert.deepEqual(await outputRecords(env.bootstrapHost, p.outputTopic, all.length), all);
      assert.equal((await volumeLabels(volume))["sluice.volume-instance"], instance);
      const offsetsAfter = await committedOffsets(env.bootstrapHost, appId, p.inputTopic);
      for (const [part, off] of offsetsBefore) {
        assert.ok(offsetsAfter.get(part)! >= off, `partition ${part} moved backwards`);
      }
      const candidate = await containersOf(appId);
      assert.equal(candidate.length, 1);
      assert.notEqual(candidate[0], first[0]);
      assert.match(await docker(["logs", candidate[0]]), gateLine);

      // then a no-op
      const again = await cli("plan no-op", ["plan"]);
      assertExit(again, 0);
      assert.equal(data(again).noop, true, again.stdout);

      // the planted-secret search: the passwords sluice was given are in nothing it wrote
      const secrets = [...Object.entries(secure.passwords), ["a wrong runner", WRONG]];
      const places = new Map<string, string>();
      for (const { what, run } of runs) places.set(`${what}: output`, run.stdout + run.stderr);
      for (const [path, text] of await filesUnder(p.dir)) places.set(path, text);
      places.set(`docker inspect ${first[0]}`, firstShown.inspect);
      places.set(`docker logs ${first[0]}`, firstShown.logs);
      for (const id of candidate) {
        places.set(`docker inspect ${id}`, await docker(["inspect", id]));
        places.set(`docker logs ${id}`, await docker(["logs", id]));
      }
      places.set(`docker volume inspect ${volume}`, await docker(["volume", "inspect", volume]));
      assert.ok(places.has(join(p.dir, "replace.plan.json")), [...places.keys()].join("\n"));
      assert.ok(
        [...places.keys()].some((k) => k.includes("/.sluice/state/")),
        [...places.keys()].join("\n"),
      );
      for (const [where, text] of places) {
        for (const [user, password] of secrets) {
          assert.equal(text.includes(password), false, `${user}'s password is in ${where}`);
        }
      }
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
