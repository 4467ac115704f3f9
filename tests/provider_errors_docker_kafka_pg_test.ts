// test-needs: env
// Needs: Docker, the shared broker and PostgreSQL (shared environment from tools/test.ts).
// Each provider made unreachable or refusing for real — a closed Kafka port, a missing Docker
// socket, a closed PostgreSQL port, a PostgreSQL that refuses the database — through the CLI:
// the stable code, exit status 7, and a message naming the address tried and where it came
// from (the manifest's file:line:col, the environment variable, the flag). Never INTERNAL,
// never a password.
import assert from "node:assert/strict";
import { sharedEnv, startEnv } from "../harness/env.ts";
import { defaultPgUrl } from "../harness/env.ts";
import { dockerCli } from "../harness/docker.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { writePlanFile } from "../lib/plan/plan_file.ts";
import { apply, plan } from "../lib/runtime/session.ts";
import { SluiceError } from "../lib/errors.ts";
import { platformaticKafka } from "../lib/providers/kafka/platformatic.ts";
import type { TestProject } from "../harness/project.ts";
import { PLACEHOLDER_IMAGE } from "../lib/project/starter.ts";
import { closedPort, missingSocket } from "../testing/net.ts";
import {
  type CliRun,
  removeApplication,
  sluice,
  sluiceJson,
  starterApplicationId,
} from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** The 1-based line and column of `value` after `key:` in the project's sluice.yaml. */
async function where(p: TestProject, key: string, value: string) {
  const file = `${p.dir}/sluice.yaml`;
  const lines = (await Deno.readTextFile(file)).split("\n");
  const line = lines.findIndex((l) => new RegExp(`^\\s*${key}: ${value}$`).test(l));
  assert.ok(line >= 0, `${key}: ${value} is in ${file}`);
  return { file, line: line + 1, column: lines[line].indexOf(value) + 1 };
}

function assertNoInternal(r: CliRun | { stdout?: string; stderr: string }) {
  assert.ok(!`${"stdout" in r ? r.stdout : ""}${r.stderr}`.includes("INTERNAL"), r.stderr);
}

Deno.test(
  "an unreachable Kafka: ENV_KAFKA_UNREACHABLE (exit 7) naming the address and its sluice.yaml line",
  opts,
  async () => {
    const env = await sharedEnv();
    const p = await starterProject(env, { image: PLACEHOLDER_IMAGE });
    try {
      const port = await closedPort();
      const address = `127.0.0.1:${port}`;
      await p.editManifest((t) => t.replace(/bootstrap_host: .*$/m, `bootstrap_host: ${address}`));
      const at = await where(p, "bootstrap_host", address);
      const json = await sluiceJson(["plan", "--project", p.dir]);
      assert.equal(json.code, 7, JSON.stringify(json.envelope));
      const [e] = json.envelope.errors as Array<Record<string, unknown>>;
      assert.equal(e.code, "ENV_KAFKA_UNREACHABLE");
      assert.deepEqual(e.location, at);
      assert.match(
        e.message as string,
        new RegExp(
          `^Kafka at ${address} \\(kafka\\.bootstrap_host at ${at.file}:${at.line}:${at.column}\\) ` +
            `is unreachable: connection refused by ${address}`,
        ),
      );
      const text = await sluice(["plan", "--project", p.dir]);
      assert.equal(text.code, 7);
      assert.match(
        text.stderr,
        /^error\[ENV_KAFKA_UNREACHABLE\]: Kafka at 127\.0\.0\.1:\d+ \(kafka/,
      );
      assertNoInternal(text);
    } finally {
      await Deno.remove(p.dir, { recursive: true });
    }
  },
);

Deno.test(
  "an unreachable Docker daemon: ENV_DOCKER_UNREACHABLE (exit 7) naming the socket and $DOCKER_HOST",
  opts,
  async () => {
    const env = await sharedEnv();
    const p = await starterProject(env, { image: PLACEHOLDER_IMAGE });
    const socket = missingSocket();
    try {
      // the broker answers: only Docker is missing
      const json = await sluiceJson(["plan", "--project", p.dir], {
        DOCKER_HOST: `unix://${socket}`,
      });
      assert.equal(json.code, 7, JSON.stringify(json.envelope));
      const [e] = json.envelope.errors;
      assert.equal(e.code, "ENV_DOCKER_UNREACHABLE");
      assert.equal(
        e.message,
        `Docker at unix://${socket} ($DOCKER_HOST) is unreachable: no socket at ${socket}; ` +
          "start the Docker daemon, or correct $DOCKER_HOST if the address is wrong",
      );
      assert.deepEqual(e.evidence?.origin, { variable: "DOCKER_HOST" });
      const status = await sluice(["status", "--project", p.dir], {
        DOCKER_HOST: `unix://${socket}`,
      });
      assert.equal(status.code, 7, status.stderr);
      assert.match(status.stderr, /^error\[ENV_DOCKER_UNREACHABLE\]: Docker at unix:\/\//);
      assertNoInternal(status);
    } finally {
      await Deno.remove(p.dir, { recursive: true });
    }
  },
);

Deno.test(
  "an unreachable PostgreSQL state store: ENV_POSTGRES_UNREACHABLE (exit 7) naming the variable and where sluice.yaml names it, never the password",
  opts,
  async () => {
    const env = await sharedEnv();
    const p = await starterProject(env, {
      image: PLACEHOLDER_IMAGE,
      stateDsnEnv: "SDK_TEST_STATE_DSN",
    });
    try {
      const port = await closedPort();
      const dsn = { SDK_TEST_STATE_DSN: `postgres://sluice:s3cret-pw@127.0.0.1:${port}/postgres` };
      const at = await where(p, "dsn_env", "SDK_TEST_STATE_DSN");
      for (const args of [["plan", "--project", p.dir], ["state", "show", "--project", p.dir]]) {
        const r = await sluice(["-o", "json", ...args], dsn);
        assert.equal(r.code, 7, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
        const [e] = JSON.parse(r.stdout).errors;
        assert.equal(e.code, "ENV_POSTGRES_UNREACHABLE", args.join(" "));
        assert.deepEqual(e.location, at);
        assert.ok(
          (e.message as string).startsWith(
            `PostgreSQL at postgres://127.0.0.1:${port}/postgres?schema=sluice ($SDK_TEST_STATE_DSN, ` +
              `named by state.dsn_env at ${at.file}:${at.line}:${at.column}) is unreachable: ` +
              `connection refused by 127.0.0.1:${port}`,
          ),
          e.message,
        );
        assert.ok(
          !`${r.stdout}${r.stderr}`.includes("s3cret-pw"),
          "the DSN's password is never shown",
        );
        assertNoInternal(r);
      }
    } finally {
      await Deno.remove(p.dir, { recursive: true });
    }
  },
);

Deno.test(
  "a PostgreSQL that refuses the database: ENV_POSTGRES_DENIED (exit 7) naming --pg-url",
  opts,
  async () => {
    const url = new URL(defaultPgUrl());
    url.pathname = "/sluice_no_such_database";
    const r = await sluiceJson(["state", "show", "--pg-url", url.href, "--project-name", "orders"]);
    assert.equal(r.code, 7, JSON.stringify(r.envelope));
    const [e] = r.envelope.errors;
    assert.equal(e.code, "ENV_POSTGRES_DENIED");
    assert.match(
      e.message,
      /^PostgreSQL at postgres:\/\/[^ ]+\/sluice_no_such_database\?schema=sluice \(--pg-url\) denied access: database "sluice_no_such_database" does not exist \(SQLSTATE 3D000\)/,
    );
  },
);

Deno.test(
  "a broker stopped under a create: the error names the step, the broker, the pending operation and the next commands; apply --plan again finishes it once the broker is back",
  opts,
  async () => {
    // a private broker (this test stops it): never the shared one other tests use
    const env = await startEnv({ connect: false });
    const p = await starterProject(env, { image: await runnerImageId() });
    const docker = (...args: string[]) => {
      const out = new Deno.Command(dockerCli(), { args, stdout: "null", stderr: "piped" })
        .outputSync();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    };
    try {
      const created = await plan({ dir: p.dir });
      assert.deepEqual(created.plan.blockers, []);
      const planPath = `${p.dir}/create.plan.json`;
      const { sha256 } = await writePlanFile(planPath, created.plan);
      const topic = created.plan.actions.find((a) => a.type === "create_topic")!;
      assert.ok(topic.type === "create_topic");
      let operationId = "";
      const e = await apply({
        dir: p.dir,
        plan: created.plan,
        planSha256: sha256,
        extraLabels: env.labels,
        onProgress: (ev) => {
          // the intent is recorded: the broker goes away before the first topic is created
          if (ev.kind === "intent") {
            operationId = ev.operation_id;
            docker("stop", "-t", "5", env.brokerContainerId);
          }
        },
      }).then(() => assert.fail("the create did not fail"), (e: SluiceError) => e);
      assert.ok(e instanceof SluiceError, String(e));
      assert.equal(e.code, "ENV_KAFKA_UNREACHABLE", e.message);
      const [first, next] = e.message.split("\n");
      // what was being done, against which broker (and where its address comes from), what was found
      assert.match(
        first,
        new RegExp(
          `^Kafka at ${env.bootstrapHost} \\(kafka\\.bootstrap_host at ${p.dir}/sluice\\.yaml:\\d+:\\d+\\) ` +
            `(is unreachable while reading topics ${topic.topic}: connection refused|` +
            `did not answer describe \\(reading topics ${topic.topic}\\): Connection closed)`,
        ),
      );
      assert.ok(!first.includes("refused describe"), first);
      // the pending operation and the next commands
      assert.equal(
        next,
        `create operation ${operationId} stays pending: check that Kafka at ${env.bootstrapHost} answers ('sluice status'), then continue it with 'sluice apply --plan PLAN_FILE (the plan file with sha256 ${sha256})' (each step observes first and adopts what this operation already made), or abandon it ('sluice state abandon --operation-id ${operationId} --reason TEXT')`,
      );
      // the client's own words stay the cause and the evidence
      assert.match(String(e.evidence?.client_error), /failed/);
      assert.ok(e.cause instanceof Error && !(e.cause instanceof SluiceError));

      // the way on works: the broker back, the same plan file continues the same operation
      docker("start", env.brokerContainerId);
      const deadline = Date.now() + 180_000;
      for (let answered = false; !answered;) {
        const kafka = platformaticKafka(env.bootstrapHost);
        answered = await kafka.describe([]).then(() => true, (error) => {
          if (Date.now() > deadline) throw error;
          return false;
        });
        await kafka.close();
        if (!answered) await new Promise((r) => setTimeout(r, 1000));
      }
      const again = await sluice(["-o", "json", "apply", "--project", p.dir, "--plan", planPath]);
      assert.equal(again.code, 0, again.stdout + again.stderr);
      assert.equal(JSON.parse(again.stdout).data.operation_id, operationId);
      assertNoInternal(again);
    } finally {
      // the CLI's apply made the runner and its volume without the private environment's run
      // label: removed by the application's label, or the tear-down would only detach the
      // running container from the removed network and leave it running (it did, until this)
      await removeApplication(starterApplicationId(p.name));
      await Deno.remove(p.dir, { recursive: true });
      const removed = await env.teardown();
      assert.deepEqual(removed.strays, [], "nothing unlabelled was left on the private network");
    }
  },
);
