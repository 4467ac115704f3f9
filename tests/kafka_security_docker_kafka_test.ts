// test-needs: env
// Needs: Docker and the broker image. Starts its own broker with a SASL_SSL listener (SCRAM users,
// a CA made now, the StandardAuthorizer: harness/secure_kafka.ts) and plans a project over it
// with `kafka.security`, as sluice's admin principal. Then each way the connection can be wrong
// gives its own code, and no password sluice was given appears in anything it printed.
import assert from "node:assert/strict";
import { startEnv } from "../harness/env.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { assertExit, sluiceJson } from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const SECURITY = `  security:
    protocol: SASL_SSL
    tls:
      ca_file_env: KAFKA_CA_FILE
    admin:
      sasl_mechanism: SCRAM-SHA-512
      username: ADMIN_USER
      password_env: SLUICE_KAFKA_ADMIN_PASSWORD
    runner:
      sasl_mechanism: SCRAM-SHA-512
      username: orders-runner
      password_env: SLUICE_KAFKA_RUNNER_PASSWORD
`;

Deno.test(
  "kafka.security SASL_SSL: plan as the admin principal; wrong password, unset variable, untrusted CA and a principal without ACLs each have their code",
  opts,
  async () => {
    await using env = await startEnv({
      connect: false,
      secure: { users: [{ name: "sluice-admin", superUser: true }, { name: "orders-runner" }] },
    });
    const secure = env.secure!;
    const p = await starterProject(env, { image: await runnerImageId() });
    const point = (user: string, security = SECURITY) =>
      p.editManifest((t) =>
        t
          .replace(/bootstrap_host: .*/, `bootstrap_host: ${secure.bootstrapHost}`)
          .replace(/bootstrap_internal: .*/, `bootstrap_internal: ${secure.bootstrapInternal}`)
          .replace(/\n {2}security:\n( {4}.*\n)+/, "\n")
          .replace(/(bootstrap_internal: .*\n)/, `$1${security.replace("ADMIN_USER", user)}`)
      );
    const vars = {
      KAFKA_CA_FILE: secure.caFile,
      SLUICE_KAFKA_ADMIN_PASSWORD: secure.passwords["sluice-admin"],
      SLUICE_KAFKA_RUNNER_PASSWORD: secure.passwords["orders-runner"],
    };
    const secrets = Object.values(secure.passwords);
    const assertNoSecret = (run: { stdout: string; stderr: string }) => {
      for (const s of [...secrets, "Wr0ngPassw0rd"]) {
        assert.equal(`${run.stdout}${run.stderr}`.includes(s), false, "a password was printed");
      }
    };
    try {
      // the admin principal plans over SASL_SSL: the cluster is observed (its topics and groups
      // read) and the topics are to be created
      await point("sluice-admin");
      const ok = await sluiceJson(["plan", "--project", p.dir], vars);
      assertExit(ok, 0);
      assertNoSecret(ok);
      const planned = JSON.stringify(ok.envelope.data);
      assert.ok(
        planned.includes('"live":{"observed":true'),
        `the plan read the cluster: ${planned}`,
      );
      assert.ok(planned.includes(`"type":"create_topic","topic":"${p.inputTopic}"`), planned);

      // a wrong password: authentication refused
      const wrong = await sluiceJson(["plan", "--project", p.dir], {
        ...vars,
        SLUICE_KAFKA_ADMIN_PASSWORD: "Wr0ngPassw0rd",
      });
      assertExit(wrong, 7);
      assert.equal(wrong.envelope.errors[0].code, "ENV_KAFKA_DENIED", wrong.stdout);
      assertNoSecret(wrong);

      // the variable the project names is not set: named, before any connection
      const unset = await sluiceJson(["plan", "--project", p.dir], {
        ...vars,
        SLUICE_KAFKA_ADMIN_PASSWORD: "",
      });
      assertExit(unset, 7);
      assert.equal(unset.envelope.errors[0].code, "ENV_KAFKA_CREDENTIAL_MISSING", unset.stdout);
      assert.match(unset.envelope.errors[0].message, /SLUICE_KAFKA_ADMIN_PASSWORD/);
      assertNoSecret(unset);

      // the brokers' CA is not trusted (the system's trust only): the TLS handshake fails
      await point(
        "sluice-admin",
        SECURITY.replace("    tls:\n      ca_file_env: KAFKA_CA_FILE\n", ""),
      );
      const untrusted = await sluiceJson(["plan", "--project", p.dir], vars);
      assertExit(untrusted, 7);
      assert.equal(untrusted.envelope.errors[0].code, "ENV_KAFKA_TLS", untrusted.stdout);
      assertNoSecret(untrusted);

      // a principal that authenticates but has no ACL: authorization refused
      await point(
        "orders-runner",
        SECURITY.replace(
          "SLUICE_KAFKA_ADMIN_PASSWORD",
          "SLUICE_KAFKA_RUNNER_PASSWORD",
        ),
      );
      const denied = await sluiceJson(["plan", "--project", p.dir], vars);
      assertExit(denied, 7);
      assert.equal(denied.envelope.errors[0].code, "ENV_KAFKA_DENIED", denied.stdout);
      assertNoSecret(denied);
    } finally {
      await Deno.remove(p.dir, { recursive: true }).catch(() => {});
    }
  },
);
