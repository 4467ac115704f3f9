// Needs: Docker, the shared broker and PostgreSQL (shared environment from tools/test.ts).
// Each provider made unreachable or refusing for real — a closed Kafka port, a missing Docker
// socket, a closed PostgreSQL port, a PostgreSQL that refuses the database — through the CLI:
// the stable code, exit status 7, and a message naming the address tried and where it came
// from (the manifest's file:line:col, the environment variable, the flag). Never INTERNAL,
// never a password.
import assert from "node:assert/strict";
import { sharedEnv } from "../harness/env.ts";
import { defaultPgUrl } from "../harness/env.ts";
import { starterProject } from "../harness/project.ts";
import type { TestProject } from "../harness/project.ts";
import { PLACEHOLDER_IMAGE } from "../lib/project/starter.ts";
import { closedPort, missingSocket } from "../testing/net.ts";
import { type CliRun, sluice, sluiceJson } from "./deploy_fixture.ts";

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
