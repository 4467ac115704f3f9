// test-needs: env
// Needs: Docker and the broker, Connect and runner images. Starts its own broker with a SASL_SSL
// listener and the StandardAuthorizer (harness/secure_kafka.ts) and one Kafka Connect worker as a
// production cluster runs it (harness/connect.ts `security`): its REST API over HTTPS only, with a
// certificate made now, behind Kafka's own basic-auth REST extension; its own Kafka clients and
// its connectors' on the SASL_SSL listener as `connect-worker`, which has only the ACLs the
// worker and these connectors need. Through the CLI, on PostgreSQL state, with `kafka.security`
// and `connect.main.security`: the connector journey (create the topics, the runner and both
// connectors, exact sink lines; change the sink's configuration, first refused for a wrong REST
// password and then applied; remove the sink explicitly; no-op), the rejections on the real
// worker (a wrong password: ENV_CONNECT_DENIED; an unknown CA: ENV_CONNECT_TLS; both exit 7),
// and the planted-secret search: the REST password (right or wrong) is in nothing sluice wrote.
import assert from "node:assert/strict";
import pg from "pg";
import { startEnv } from "../harness/env.ts";
import {
  grantAcls,
  grantConnectWorkerAcls,
  removeConnectData,
  startConnectWorker,
} from "../harness/connect.ts";
import { grantRunnerAcls, scramSecurityYaml, scramVariables } from "../harness/secure_kafka.ts";
import { runnerImageId } from "../harness/project.ts";
import { declareSinkRemoved, pipelineProject } from "../harness/pipeline.ts";
import { restConnect } from "../lib/providers/connect/rest.ts";
import type { ConnectPort } from "../lib/providers/connect/port.ts";
import {
  assertNoSecretIn,
  containersOf,
  dropPgState,
  filesUnder,
  removeApplication,
  sluice,
  starterApplicationId,
  STATE_DSN_ENV,
} from "./deploy_fixture.ts";
import { orderLines, outputLine, waitLines } from "./pipeline_journey.ts";
import { dockerText } from "./runner_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const WRONG_REST_PASSWORD = "Wr0ngConnectRestPassw0rd";

const CONNECT_SECURITY = `    security:
      ca_file_env: CONNECT_CA_FILE
      username: sluice-rest
      password_env: CONNECT_REST_PASSWORD
`;

/** Every state row of the project's scope, as JSON text, by table. */
async function stateRows(url: string, project: string): Promise<Map<string, string>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const scope = JSON.stringify([project, null]);
    const out = new Map<string, string>();
    for (const table of ["sluice_documents", "sluice_history_events", "sluice_locks"]) {
      const present = await c.query("SELECT to_regclass($1) IS NOT NULL AS present", [
        `sluice.${table}`,
      ]);
      if (!present.rows[0].present) continue;
      const r = await c.query(
        `SELECT row_to_json(t)::text AS row FROM sluice.${table} t WHERE scope = $1`,
        [scope],
      );
      out.set(`state ${table}`, r.rows.map((x: { row: string }) => x.row).join("\n"));
    }
    return out;
  } finally {
    await c.end();
  }
}

async function waitRunning(port: ConnectPort, name: string): Promise<void> {
  let last = "";
  for (let i = 0; i < 480; i++) {
    const s = await port.connectorStatus(name);
    if (
      s?.connector.state === "RUNNING" && s.tasks.length > 0 &&
      s.tasks.every((t) => t.state === "RUNNING")
    ) return;
    last = JSON.stringify(s);
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`connector ${name} never ran: ${last}`);
}

Deno.test(
  "the connector journey through the CLI on a Connect worker over HTTPS with basic auth whose Kafka clients use SASL_SSL with ACLs: create, change, remove, no-op; a wrong password is ENV_CONNECT_DENIED and an unknown CA ENV_CONNECT_TLS (exit 7); the REST password is in nothing sluice wrote",
  opts,
  async () => {
    const t0 = Date.now();
    // where the time goes, for the suite's budget (printed at the end; never asserted)
    const marks: string[] = [];
    let last = t0;
    const mark = (what: string) => {
      const now = Date.now();
      marks.push(`${what} ${((now - last) / 1000).toFixed(1)} s`);
      last = now;
    };
    await using env = await startEnv({
      connect: false,
      secure: {
        users: [
          { name: "sluice-admin", superUser: true },
          { name: "orders-runner" },
          { name: "connect-worker" },
        ],
      },
    });
    const secure = env.secure!;
    // the worker's principal may use its own topics and group, and nothing else yet
    await grantConnectWorkerAcls(env.bootstrapHost, "User:connect-worker");
    const connect = await startConnectWorker({
      ...env,
      security: {
        restUser: "sluice-rest",
        kafka: {
          bootstrapInternal: secure.bootstrapInternal,
          caFile: secure.caFile,
          username: "connect-worker",
          password: secure.passwords["connect-worker"],
        },
      },
    });
    const tls = connect.secure!;
    mark("broker and secured worker");
    console.log(`secured Connect worker ready ${connect.readyMs} ms after create`);
    let appId: string | null = null;
    let project: string | null = null;
    let dir: string | null = null;
    const runs: Array<{ what: string; out: string }> = [];
    try {
      // the worker as deployed: HTTPS only, every request needs the login, its clients on the
      // SASL_SSL listener
      assert.match(connect.restHost, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(connect.restInternal, "https://connect:8443");
      const ca = await Deno.readTextFile(tls.caFile);
      const client = Deno.createHttpClient({ caCerts: [ca] });
      try {
        const anonymous = await fetch(`${connect.restHost}/connectors`, { client });
        await anonymous.body?.cancel();
        assert.equal(anonymous.status, 401, "the worker answers no request without the login");
      } finally {
        client.close();
      }
      await assert.rejects(fetch(connect.restHost.replace("https:", "http:") + "/"));
      const workerConfig = await dockerText([
        "exec",
        connect.containerId,
        "cat",
        "/tmp/connect-distributed.properties",
      ]);
      assert.match(
        workerConfig,
        new RegExp(`^bootstrap.servers=${secure.bootstrapInternal}$`, "m"),
      );
      assert.match(workerConfig, /^security\.protocol=SASL_SSL$/m);
      assert.match(workerConfig, /^producer\.security\.protocol=SASL_SSL$/m);
      assert.match(workerConfig, /^consumer\.security\.protocol=SASL_SSL$/m);

      // the pipeline project on the SASL_SSL listeners, with both security sections
      const p = await pipelineProject({
        image: await runnerImageId(),
        connect,
        bootstrapHost: secure.bootstrapHost,
        bootstrapInternal: secure.bootstrapInternal,
        network: env.network,
        stateDsnEnv: STATE_DSN_ENV,
        sinkExtra: { "x.revision": "1" },
      });
      project = p.name;
      dir = p.dir;
      appId = starterApplicationId(p.name);
      await p.editManifest((t) =>
        t
          .replace(/(bootstrap_internal: .*\n)/, `$1${scramSecurityYaml()}`)
          .replace(/( {4}rest_internal: .*\n)/, `$1${CONNECT_SECURITY}`)
      );
      // exactly what each job needs: the runner's, the source's (write its topic) and the
      // sink's (read its topic, its consumer group)
      await grantRunnerAcls(env.bootstrapHost, "User:orders-runner", {
        applicationId: appId,
        inputTopic: p.inputTopic,
        outputTopic: p.outputTopic,
      });
      await grantAcls(env.bootstrapHost, "User:connect-worker", [
        { type: "topic", name: p.inputTopic, operation: "write" },
        { type: "topic", name: p.outputTopic, operation: "read" },
        { type: "group", name: `connect-${p.sinkConnector}`, operation: "read" },
      ]);
      const vars: Record<string, string> = {
        ...scramVariables(secure),
        CONNECT_CA_FILE: tls.caFile,
        CONNECT_REST_PASSWORD: tls.restPassword,
        [STATE_DSN_ENV]: env.pgUrl,
      };
      type Envelope = {
        data: Record<string, unknown> | null;
        errors: Array<{ code: string; message: string }>;
      };
      const cli = async (
        what: string,
        args: string[],
        code: number,
        extra: Record<string, string> = {},
      ): Promise<Envelope> => {
        const r = await sluice(["-o", "json", ...args, "--project", p.dir], { ...vars, ...extra });
        runs.push({ what, out: r.stdout + r.stderr });
        assert.equal(r.code, code, `${what}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
        return JSON.parse(r.stdout) as Envelope;
      };
      const port = restConnect(connect.restHost, {
        tls: { ca },
        basicAuth: { username: tls.restUser, password: tls.restPassword },
      });

      // the rejections on the real worker, before anything exists: nothing is planned or made
      const denied = await cli("plan (wrong REST password)", ["plan"], 7, {
        CONNECT_REST_PASSWORD: WRONG_REST_PASSWORD,
      });
      assert.equal(denied.errors[0].code, "ENV_CONNECT_DENIED", JSON.stringify(denied.errors));
      assert.match(denied.errors[0].message, /denied GET .* \(401/);
      const untrusted = await cli("plan (unknown CA)", ["plan"], 7, {
        CONNECT_CA_FILE: tls.otherCaFile,
      });
      assert.equal(untrusted.errors[0].code, "ENV_CONNECT_TLS", JSON.stringify(untrusted.errors));
      assert.deepEqual(await port.listConnectors(), []);
      mark("rejections");

      // create: the topics, the runner, then both connectors over HTTPS with the login
      const first = orderLines("a", [250, 40, 120, 100, 99, 5000, 180, 300]);
      await Deno.writeTextFile(
        p.inputFileHost!,
        first.map((x) => JSON.stringify(x)).join("\n") + "\n",
      );
      const planned = await cli("plan create", ["plan", "--out", `${p.dir}/create.plan.json`], 0);
      const types = (e: Envelope) =>
        (e.data!.plan as { actions: Array<{ type: string }> }).actions.map((a) => a.type);
      assert.deepEqual(types(planned), [
        "create_topic",
        "create_topic",
        "create_runner",
        "create_connector",
        "create_connector",
      ]);
      const created = await cli(
        "apply create",
        ["apply", "--plan", `${p.dir}/create.plan.json`],
        0,
      );
      const outcomes =
        (created.data!.connectors as { connectors: Array<{ name: string; running: boolean }> })
          .connectors;
      assert.deepEqual(outcomes.map((c) => [c.name, c.running]), [
        [p.sourceConnector, true],
        [p.sinkConnector, true],
      ]);
      // file → source (SASL_SSL as connect-worker) → runner (as orders-runner) → sink → file
      const expected = first.filter((x) => x.amount >= 100 && x.paid).map(outputLine);
      assert.deepEqual(
        await waitLines(p.outputFileHost!, (l) => l.length >= expected.length),
        expected,
      );
      mark("create");

      // change the sink's configuration: with a wrong REST password the apply is refused before
      // anything changes; with the right one the same plan is applied
      await p.editManifest((t) => t.replace(`x.revision: "1"`, `x.revision: "2"`));
      const change = await cli("plan change", ["plan", "--out", `${p.dir}/change.plan.json`], 0);
      assert.deepEqual(types(change), ["update_connector"]);
      const refused = await cli(
        "apply change (wrong REST password)",
        ["apply", "--plan", `${p.dir}/change.plan.json`],
        7,
        { CONNECT_REST_PASSWORD: WRONG_REST_PASSWORD },
      );
      assert.equal(refused.errors[0].code, "ENV_CONNECT_DENIED", JSON.stringify(refused.errors));
      assert.equal((await port.connectorConfig(p.sinkConnector))?.["x.revision"], "1");
      await cli("apply change", ["apply", "--plan", `${p.dir}/change.plan.json`], 0);
      assert.equal((await port.connectorConfig(p.sinkConnector))?.["x.revision"], "2");
      await waitRunning(port, p.sinkConnector);
      mark("change");

      // remove the sink explicitly: the object is gone, the source stays
      await p.editManifest(declareSinkRemoved(p));
      const removal = await cli("plan remove", ["plan", "--out", `${p.dir}/remove.plan.json`], 0);
      assert.deepEqual(types(removal), ["remove_connector"]);
      await cli("apply remove", ["apply", "--plan", `${p.dir}/remove.plan.json`], 0);
      assert.equal(await port.connectorConfig(p.sinkConnector), null);
      await waitRunning(port, p.sourceConnector);
      const after = await cli("plan no-op", ["plan"], 0);
      assert.equal(after.data!.noop, true, JSON.stringify(after.data));
      mark("remove and no-op");

      // the planted-secret search: the REST password sluice was given (and the wrong one) is in
      // no output, plan file, project file, state row, runner log or runner inspect
      const places = new Map<string, string>();
      for (const { what, out } of runs) places.set(`${what}: output`, out);
      for (const [path, text] of await filesUnder(p.dir)) places.set(path, text);
      for (const [table, text] of await stateRows(env.pgUrl, p.name)) places.set(table, text);
      for (const id of await containersOf(appId)) {
        places.set(`docker inspect ${id}`, await dockerText(["inspect", id]));
        places.set(`docker logs ${id}`, await dockerText(["logs", id]));
      }
      assert.ok(places.has(`${p.dir}/change.plan.json`), [...places.keys()].join("\n"));
      assert.ok((places.get("state sluice_documents") ?? "").length > 0, "state rows were read");
      assertNoSecretIn(places, [
        ["the REST password", tls.restPassword],
        ["the wrong REST password", WRONG_REST_PASSWORD],
        ["the admin's Kafka password", secure.passwords["sluice-admin"]],
      ]);
      // ...while the worker holds the login the search looks for: it would have found it
      assert.ok(
        (await dockerText([
          "exec",
          connect.containerId,
          "cat",
          "/opt/connect/config/secure/rest-users.properties",
        ])).includes(tls.restPassword),
      );
      mark("secret search");
      console.log(
        `secured connector journey: ${Date.now() - t0} ms from start to end (${marks.join(", ")})`,
      );
    } finally {
      if (appId) await removeApplication(appId);
      if (project) await dropPgState(env.pgUrl, project);
      await removeConnectData(connect);
      if (dir) await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
);
