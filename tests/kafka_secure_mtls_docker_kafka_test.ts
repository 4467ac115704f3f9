// test-needs: env
// Needs: Docker, the broker image and the runner image. Starts its own broker with, beside its
// SASL_SSL listeners, an SSL listener that requires a client certificate (harness/secure_kafka.ts
// `mtls`: certificates made now with openssl, `CN=<name>` mapped to `User:<name>` by
// ssl.principal.mapping.rules, the StandardAuthorizer) and runs, through the CLI, a project under
// `protocol: SSL` whose admin and runner each authenticate by their own certificate:
// - sluice's admin presenting a certificate no listener trusts (signed by an unknown CA): under
//   TLS 1.3 the broker checks it after the client's Finished and sends the alert
//   certificate_unknown on the open connection, then closes it; the client library fails the
//   request with a bare "Connection closed" but its connection raised the alert
//   (ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN), so every command is refused with ENV_KAFKA_TLS
//   (exit 7) naming the client certificate and the address, not as an unreachable broker, nothing
//   created;
// - with the right certificates: plan (the runner's declared principal, User:orders-runner, is
//   proven by its ACLs) → create → the runner passes its identity gate over SSL and the output
//   is exact;
// - then a predicate replacement whose candidate presents a runner certificate the broker does
//   not trust (CN=orders-runner, signed by an unknown CA) at its start, and only there: the plan
//   and the apply run with the trusted one (the plan binds its keyed hash, so a bad certificate
//   at plan or apply time would be PLAN_KAFKA_CREDENTIALS_CHANGED or a plan made with it); the
//   apply is SIGKILLed at docker.start_candidate:before (the candidate created, never started),
//   the file SLUICE_KAFKA_RUNNER_CERT/KEY name is overwritten with the untrusted pair (a rotation
//   gone wrong on disk), and `state resume` copies it into the candidate and starts it: the
//   broker refuses the handshake, the candidate stops at its identity gate with
//   KAFKA_AUTHENTICATION_FAILED (exit 15, nothing consumed) and the resume blocks with
//   BLOCKED_CANDIDATE_STARTUP_FAILED (exit 4); with the trusted pair back, `state resume` starts
//   the same candidate again and the replacement commits: output exact (old predicate's records
//   once, then the new one's), offsets only forward, then a no-op.
// Each phase's time is printed (the extra listener's cost), never asserted.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startEnv } from "../harness/env.ts";
import { committedOffsets } from "../harness/kafka.ts";
import { pointStarterAt, runnerImageId } from "../harness/project.ts";
import { clientCertificate, grantRunnerAcls, securedManifest } from "../harness/secure_kafka.ts";
import { FAULT_ENV } from "../lib/fault/site.ts";
import { REPLACEMENT_SITES } from "../lib/protocol/replacement.ts";
import {
  assertExit,
  CHANGED_PREDICATE,
  type CliRun,
  containersOf,
  outputAcrossChange,
  removeApplication,
  sluice,
  starterApplicationId,
} from "./deploy_fixture.ts";
import { dockerText, lastStdoutJson } from "./runner_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const SECURITY = `  security:
    protocol: SSL
    tls:
      ca_file_env: KAFKA_CA_FILE
    admin:
      cert_file_env: SLUICE_KAFKA_ADMIN_CERT
      key_file_env: SLUICE_KAFKA_ADMIN_KEY
    runner:
      cert_file_env: SLUICE_KAFKA_RUNNER_CERT
      key_file_env: SLUICE_KAFKA_RUNNER_KEY
      principal: User:orders-runner
`;

Deno.test(
  "mutual TLS end to end through the CLI: an unknown client certificate is refused (ENV_KAFKA_TLS naming the client certificate, exit 7) and nothing is created; with their own certificates sluice plans and creates a runner that authenticates by its certificate, output exact; a replacement candidate presenting a runner certificate the broker does not trust stops with KAFKA_AUTHENTICATION_FAILED (exit 15), the resume blocks with BLOCKED_CANDIDATE_STARTUP_FAILED (exit 4), and with the trusted certificate back state resume starts the same candidate and the replacement completes, output exact",
  opts,
  async () => {
    const t0 = performance.now();
    const times: string[] = [];
    const lap = (what: string) => times.push(`${what} ${Math.round(performance.now() - t0)} ms`);
    await using env = await startEnv({
      connect: false,
      secure: {
        users: [{ name: "sluice-admin", superUser: true }, { name: "orders-runner" }],
        mtls: true,
      },
    });
    lap("broker with the mutual-TLS listener started");
    const mtls = env.secure!.mtls!;
    const work = await Deno.makeTempDir({ prefix: "sluice-mtls-" });
    let appId: string | null = null;
    try {
      const init = await sluice(["init", join(work, "orders")]);
      assertExit(init, 0);
      const p = await pointStarterAt(join(work, "orders"), env, { image: await runnerImageId() });
      await p.editManifest((t) => securedManifest(t, mtls, SECURITY));
      appId = starterApplicationId(p.name);
      await grantRunnerAcls(env.bootstrapHost, "User:orders-runner", {
        applicationId: appId,
        inputTopic: p.inputTopic,
        outputTopic: p.outputTopic,
      });
      const admin = mtls.certificates["sluice-admin"];
      // the runner's pair, copied to files of the project's own: the replacement below overwrites
      // them with an untrusted pair, then puts the trusted one back
      const trusted = mtls.certificates["orders-runner"];
      const runner = { certFile: join(work, "runner.pem"), keyFile: join(work, "runner.key") };
      const putRunnerPair = async (from: { certFile: string; keyFile: string }) => {
        await Deno.copyFile(from.certFile, runner.certFile);
        await Deno.copyFile(from.keyFile, runner.keyFile);
      };
      await putRunnerPair(trusted);
      const vars = {
        KAFKA_CA_FILE: env.secure!.caFile,
        SLUICE_KAFKA_ADMIN_CERT: admin.certFile,
        SLUICE_KAFKA_ADMIN_KEY: admin.keyFile,
        SLUICE_KAFKA_RUNNER_CERT: runner.certFile,
        SLUICE_KAFKA_RUNNER_KEY: runner.keyFile,
      };
      const cli = (args: string[], extra: Record<string, string> = {}): Promise<CliRun> =>
        sluice(["-o", "json", ...args, "--project", p.dir], { ...vars, ...extra });

      // sluice's admin with a certificate signed by a CA the listener does not trust
      const stranger = await clientCertificate(work, "sluice-admin", "unknown");
      const unknownCert = {
        SLUICE_KAFKA_ADMIN_CERT: stranger.certFile,
        SLUICE_KAFKA_ADMIN_KEY: stranger.keyFile,
      };
      for (const args of [["plan"], ["apply"]]) {
        const refused = await cli(args, unknownCert);
        assertExit(refused, 7);
        const error = JSON.parse(refused.stdout).errors[0];
        // the broker's alert on the connection, not the close that followed it (the header)
        assert.equal(error.code, "ENV_KAFKA_TLS", refused.stdout);
        assert.match(error.message, /refused the client certificate/);
        assert.match(error.message, /CERTIFICATE_UNKNOWN/);
        assert.doesNotMatch(error.message, /unreachable/);
        assert.match(error.message, new RegExp(mtls.bootstrapHost.replace(/\./g, "\\.")));
      }
      assert.deepEqual(await containersOf(appId), [], "nothing was created");
      lap("unknown certificate refused");

      // the right certificates: the runner's declared principal is proven, then created
      const planned = await cli(["plan", "--out", join(p.dir, "create.plan.json")]);
      assertExit(planned, 0);
      const plan = JSON.parse(planned.stdout).data.plan;
      assert.deepEqual(plan.blockers, [], planned.stdout);
      assert.equal(plan.runner_permissions?.principal, "User:orders-runner", planned.stdout);
      assert.deepEqual(plan.runner_permissions?.missing, []);
      const created = await cli(["apply", "--plan", join(p.dir, "create.plan.json")]);
      assertExit(created, 0);
      lap("created");
      const [container] = await containersOf(appId);
      assert.match(
        await dockerText(["logs", container]),
        /identity gate passed in \d+ ms \(SSL\)/,
        "the runner connected over the mutual-TLS listener",
      );

      // output exact (records produced on the plaintext listener)
      const output = outputAcrossChange(env.bootstrapHost, p, appId);
      await output.beforeChange();
      lap("output exact");

      // then a no-op, still as the admin's certificate
      const again = await cli(["plan"]);
      assertExit(again, 0);
      assert.equal(JSON.parse(again.stdout).data.noop, true, again.stdout);
      lap("no-op");

      // a predicate replacement, planned and applied with the trusted runner certificate; the
      // apply dies right before the candidate's start (created, stopped, no credentials yet)
      const offsetsBefore = await committedOffsets(env.bootstrapHost, appId, p.inputTopic);
      await p.setPredicate(CHANGED_PREDICATE);
      const replacePlan = ["--plan", join(p.dir, "replace.plan.json")];
      const reviewed = await cli(["plan", "--out", join(p.dir, "replace.plan.json")]);
      assertExit(reviewed, 0);
      assert.deepEqual(
        JSON.parse(reviewed.stdout).data.plan.actions.map((a: { type: string }) => a.type),
        ["replace_runner_predicate"],
        reviewed.stdout,
      );
      const point = `${REPLACEMENT_SITES.start.name}:before`;
      const killed = await cli(["apply", ...replacePlan], {
        [FAULT_ENV.point]: point,
        [FAULT_ENV.allow]: "1",
      });
      assert.equal(killed.code, 137, `not killed at ${point}: ${killed.stdout}${killed.stderr}`);
      assert.ok(killed.stderr.includes(`SLUICE_FAULT_FIRED ${point}`), killed.stderr);
      const [candidate] = await containersOf(appId);
      assert.notEqual(candidate, container, "the old runner was removed, the candidate created");
      lap("replacement killed before the candidate's start");

      // the runner's certificate on disk replaced by one the broker does not trust (signed by
      // an unknown CA, the same CN): resumed, the candidate presents it at its start
      await putRunnerPair(await clientCertificate(work, "orders-runner", "unknown"));
      const shown = await cli(["state", "show"]);
      assertExit(shown, 0);
      const view = JSON.parse(shown.stdout).data as {
        pending_operation: { operation_id: string } | null;
        lock: { holder: { lock_id: string } | null };
      };
      assert.ok(view.pending_operation, shown.stdout);
      const operation = ["--operation-id", view.pending_operation.operation_id];
      const breakLock = view.lock.holder ? ["--break-stale-lock", view.lock.holder.lock_id] : [];
      const stalled = await cli(["state", "resume", ...replacePlan, ...operation, ...breakLock]);
      assertExit(stalled, 4);
      const blocked = JSON.parse(stalled.stdout).errors[0];
      assert.equal(blocked.code, "BLOCKED_CANDIDATE_STARTUP_FAILED", stalled.stdout);
      assert.match(blocked.message, /exit 15 KAFKA_AUTHENTICATION_FAILED/, stalled.stdout);
      assert.deepEqual(await containersOf(appId), [candidate], "the same candidate, stopped");
      const stop = await lastStdoutJson(candidate);
      assert.equal(stop.sluice_runner_exit, 15, JSON.stringify(stop));
      assert.equal(stop.reason, "KAFKA_AUTHENTICATION_FAILED", JSON.stringify(stop));
      // Kafka's client names the failed TLS handshake (the broker's alert), never the key
      assert.match(String(stop.detail ?? ""), /SslAuthenticationException/, JSON.stringify(stop));
      console.log(`[mtls] the candidate's stop: ${stop.detail}`);
      // refused before it processed anything: the group's offsets are where the old runner
      // left them
      assert.deepEqual(
        await committedOffsets(env.bootstrapHost, appId, p.inputTopic),
        offsetsBefore,
      );
      lap("candidate refused (untrusted certificate), resume blocked");

      // the trusted certificate back: state resume starts the same candidate again, it passes
      // its identity gate over SSL and the replacement commits
      await putRunnerPair(trusted);
      const resumed = await cli(["state", "resume", ...replacePlan, ...operation]);
      assertExit(resumed, 0);
      assert.equal(JSON.parse(resumed.stdout).data.committed, true, resumed.stdout);
      assert.deepEqual(await containersOf(appId), [candidate], "the same candidate, running");
      assert.match(
        await dockerText(["logs", candidate]),
        /identity gate passed in \d+ ms \(SSL\)/,
        "the candidate connected over the mutual-TLS listener once its certificate was fixed",
      );
      lap("resumed with the trusted certificate, committed");

      // output exact: the old predicate's records once, then the new one's; the same group
      // (offsets only forward) and volume instance; then a no-op
      await output.afterChange();
      const after = await cli(["plan"]);
      assertExit(after, 0);
      assert.equal(JSON.parse(after.stdout).data.noop, true, after.stdout);
      lap("output exact after the replacement, no-op");
    } finally {
      console.log(`[mtls] ${times.join("; ")}`);
      if (appId) await removeApplication(appId);
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  },
);
