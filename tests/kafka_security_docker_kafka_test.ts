// test-needs: env
// Needs: Docker and the broker image. Starts its own broker with a SASL_SSL listener (SCRAM users,
// a CA made now, the StandardAuthorizer: harness/secure_kafka.ts) and plans a project over it
// with `kafka.security`, as sluice's admin principal. Then each way the connection can be wrong
// gives its own code, and no password sluice was given appears in anything it printed. Before a
// create, the runner principal's ACLs are proven from the broker's own answers: complete, the plan
// has no permission blocker; one removed, plan and apply block naming it and nothing is created;
// an excess grant is a warning in the review; an admin principal that may not describe ACLs is
// said (BLOCKED_RUNNER_PERMISSION_UNVERIFIED).
import assert from "node:assert/strict";
import {
  AclOperations,
  AclPermissionTypes,
  Admin,
  ResourcePatternTypes,
  ResourceTypes,
} from "npm:@platformatic/kafka@2.12.1";
import { startEnv } from "../harness/env.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { scramSecurityYaml, scramVariables } from "../harness/secure_kafka.ts";
import { assertExit, sluiceJson } from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

type Acl = Parameters<Admin["createAcls"]>[0]["creations"][number];

/** An ALLOW binding for every host. */
function allow(
  principal: string,
  resourceType: number,
  resourceName: string,
  operation: number,
  prefixed = false,
): Acl {
  return {
    resourceType,
    resourceName,
    resourcePatternType: prefixed ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
    principal,
    host: "*",
    operation,
    permissionType: AclPermissionTypes.ALLOW,
  } as Acl;
}

/** The names of the containers and volumes that carry `name`. */
async function dockerNames(name: string): Promise<string> {
  const run = async (args: string[]) =>
    new TextDecoder().decode(
      (await new Deno.Command("docker", { args, stdout: "piped" }).output()).stdout,
    );
  return (await run(["ps", "-a", "--filter", `name=${name}`, "--format", "{{.Names}}"])) +
    (await run(["volume", "ls", "--filter", `name=${name}`, "--format", "{{.Name}}"]));
}

const SECURITY = scramSecurityYaml("ADMIN_USER");

Deno.test(
  "kafka.security SASL_SSL: plan as the admin principal; wrong password, unset variable, untrusted CA and a principal without ACLs each have their code",
  opts,
  async () => {
    await using env = await startEnv({
      connect: false,
      secure: {
        users: [
          { name: "sluice-admin", superUser: true },
          { name: "orders-runner" },
          { name: "scoped-admin" },
        ],
      },
    });
    // the plaintext listener acts as a super user: the test's own hand on the ACLs
    const acls = new Admin({ clientId: "test-acls", bootstrapBrokers: [env.bootstrapHost] });
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
    const appId = `sluice-${p.name}-eligible_orders`;
    const RUNNER = "User:orders-runner";
    const required = [
      allow(RUNNER, ResourceTypes.TOPIC, p.inputTopic, AclOperations.READ),
      allow(RUNNER, ResourceTypes.TOPIC, p.outputTopic, AclOperations.WRITE),
      allow(RUNNER, ResourceTypes.GROUP, appId, AclOperations.READ),
      allow(RUNNER, ResourceTypes.TRANSACTIONAL_ID, appId, AclOperations.WRITE, true),
    ];
    const filterOf = (a: Acl) => ({ ...a });
    const vars = scramVariables(secure);
    const secrets = Object.values(secure.passwords);
    const assertNoSecret = (run: { stdout: string; stderr: string }) => {
      for (const s of [...secrets, "Wr0ngPassw0rd"]) {
        assert.equal(`${run.stdout}${run.stderr}`.includes(s), false, "a password was printed");
      }
    };
    try {
      // the admin principal plans over SASL_SSL: the cluster is observed (its topics and groups
      // read) and the topics are to be created; the runner principal has exactly what its job
      // needs, read from the broker's ACLs: no permission blocker, no warning
      await point("sluice-admin");
      await acls.createAcls({ creations: required });
      const ok = await sluiceJson(["plan", "--project", p.dir], vars);
      assertExit(ok, 0);
      assertNoSecret(ok);
      const planned = JSON.stringify(ok.envelope.data);
      assert.ok(
        planned.includes('"live":{"observed":true'),
        `the plan read the cluster: ${planned}`,
      );
      assert.ok(planned.includes(`"type":"create_topic","topic":"${p.inputTopic}"`), planned);
      assert.ok(planned.includes(`"application_id":"${appId}"`), planned);
      const proven = (ok.envelope.data as { plan: { runner_permissions?: unknown } }).plan
        .runner_permissions;
      assert.deepEqual(proven, {
        principal: RUNNER,
        checked: ["eligible_orders"],
        unverified: null,
        missing: [],
        excess: [],
      });

      // an excess grant the runner principal has (WRITE on its own input): a warning only
      const excess = allow(RUNNER, ResourceTypes.TOPIC, p.inputTopic, AclOperations.WRITE);
      await acls.createAcls({ creations: [excess] });
      const warned = await sluiceJson(["plan", "--project", p.dir], vars);
      assertExit(warned, 0);
      const notes = (warned.envelope.data as { review: { notes: string[] } }).review.notes;
      assert.ok(
        notes.some((n) =>
          n.startsWith(`Warning: the runner principal ${RUNNER} may WRITE on TOPIC ${p.inputTopic}`)
        ),
        notes.join("\n"),
      );
      await acls.deleteAcls({ filters: [filterOf(excess)] });

      // one required ACL removed (the group's READ): plan and apply block naming it, and
      // nothing is created (no topic, no container, no volume)
      await acls.deleteAcls({ filters: [filterOf(required[2])] });
      const topicsBefore = (await acls.listTopics()).sort();
      const blocked = await sluiceJson(["plan", "--project", p.dir], vars);
      assertExit(blocked, 4);
      assert.equal(blocked.envelope.errors[0].code, "BLOCKED_RUNNER_PERMISSION", blocked.stdout);
      assert.match(
        blocked.envelope.errors[0].message,
        new RegExp(`User:orders-runner may not READ GROUP ${appId}, .*no ACL allows it`),
      );
      assertNoSecret(blocked);
      const refused = await sluiceJson(["apply", "--project", p.dir], vars);
      assertExit(refused, 4);
      assert.ok(refused.stdout.includes("BLOCKED_RUNNER_PERMISSION"), refused.stdout);
      assertNoSecret(refused);
      assert.deepEqual((await acls.listTopics()).sort(), topicsBefore, "nothing was created");
      assert.ok(!topicsBefore.includes(p.inputTopic), topicsBefore.join(","));
      assert.equal(await dockerNames(appId), "", "no container or volume was created");
      await acls.createAcls({ creations: [required[2]] });

      // an admin principal that may read topics and groups but not describe ACLs: said, never
      // passed silently
      const SCOPED = "User:scoped-admin";
      await acls.createAcls({
        creations: [
          allow(SCOPED, ResourceTypes.TOPIC, "*", AclOperations.DESCRIBE),
          allow(SCOPED, ResourceTypes.GROUP, "*", AclOperations.DESCRIBE),
        ],
      });
      await point("scoped-admin");
      const unverified = await sluiceJson(["plan", "--project", p.dir], {
        ...vars,
        SLUICE_KAFKA_ADMIN_PASSWORD: secure.passwords["scoped-admin"],
      });
      assertExit(unverified, 4);
      assert.equal(
        unverified.envelope.errors[0].code,
        "BLOCKED_RUNNER_PERMISSION_UNVERIFIED",
        unverified.stdout,
      );
      assert.match(unverified.envelope.errors[0].message, /may not describe ACLs/);
      assertNoSecret(unverified);
      await point("sluice-admin");

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
      await acls.deleteAcls({ filters: required.map(filterOf) });
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
      await acls.close();
      await Deno.remove(p.dir, { recursive: true }).catch(() => {});
    }
  },
);
