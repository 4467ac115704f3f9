// test-needs: env
// Needs: Docker, the broker, PostgreSQL, the runner image (shared environment from tools/test.ts).
// Two things, in one real journey through the launcher, on each state backend:
//  1. the reviewed plan of the quickstart's filter change says what changes in the user's words
//     (old and new WHERE, fraud_app declared and live, an undeclared live group, a preview of the
//     sample records sealed as counts);
//  2. redaction everywhere: the runner image carries a secret-looking environment variable and a
//     connection string with a password, and the PostgreSQL state's DSN carries a password; no
//     output of any command, no plan file, no lineage event and no state file or state row (every
//     row of every table of the store's schema, read with a client of its own) contains any of
//     them — while `docker inspect` shows the image's really are in the runner's environment and
//     the project's own rows are found by the same search (so it is not vacuous).
import assert from "node:assert/strict";
import pg from "pg";
import { dockerCli } from "../harness/docker.ts";
import { RUN_LABEL, sharedEnv } from "../harness/env.ts";
import { produce, withAdmin } from "../harness/kafka.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import {
  assertExit,
  dropPgState,
  outputRecords,
  removeApplication,
  samplesOf,
  sluice,
  starterApplicationId,
  STATE_DSN_ENV,
} from "./deploy_fixture.ts";
import type { CliRun, StateBackend } from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function dockerText(args: string[]): Promise<string> {
  const out = await new Deno.Command(dockerCli(), { args, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  if (out.code !== 0) throw new Error(`docker ${args.join(" ")}: ${dec.decode(out.stderr)}`);
  return dec.decode(out.stdout).trim();
}

/** The runner image plus two secrets in its environment, labelled for this run. */
async function secretImage(base: string, runLabel: string, token: string, password: string) {
  const scratch = await dockerText(["create", "--label", runLabel, base]);
  try {
    return await dockerText([
      "commit",
      "--change",
      `ENV SLUICE_TEST_API_TOKEN=${token}`,
      "--change",
      `ENV ORDERS_DATABASE_URL=postgres://orders:${password}@db.internal:5432/orders`,
      "--change",
      `LABEL ${runLabel}`,
      scratch,
    ]);
  } finally {
    await dockerText(["rm", scratch]);
  }
}

async function filesUnder(dir: string, out: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) await filesUnder(p, out);
    else if (e.isFile) out.push(p);
  }
  return out;
}

/** Every row of every table in the PostgreSQL schema `sluice`, as text, one haystack per table. */
async function pgRows(url: string): Promise<Array<[string, string]>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows: tables } = await c.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'sluice'",
    );
    const out: Array<[string, string]> = [];
    for (const { table_name } of tables as Array<{ table_name: string }>) {
      const { rows } = await c.query(`SELECT t::text AS row FROM sluice."${table_name}" t`);
      out.push([
        `the rows of sluice.${table_name}`,
        (rows as Array<{ row: string }>).map((r) => r.row).join("\n"),
      ]);
    }
    return out;
  } finally {
    await c.end();
  }
}

/** `url` with `password` as the password of its userinfo (the server trusts; the client holds it). */
function withPassword(url: string, password: string): string {
  const u = new URL(url);
  if (u.username === "") u.username = "postgres";
  u.password = password;
  return u.toString();
}

async function reviewedJourney(backend: StateBackend) {
  const env = await sharedEnv();
  const token = `tok_${crypto.randomUUID().replaceAll("-", "")}`;
  const password = `pw${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
  const dsnPassword = `dsn${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
  const secrets = { token, password, "DSN password": dsnPassword };
  const image = await secretImage(
    await runnerImageId(),
    `${RUN_LABEL}=${env.runId}`,
    token,
    password,
  );
  const postgres = backend === "postgres";
  const p = await starterProject(env, {
    image,
    ...(postgres ? { stateDsnEnv: STATE_DSN_ENV } : {}),
  });
  const vars: Record<string, string> = postgres
    ? { [STATE_DSN_ENV]: withPassword(env.pgUrl, dsnPassword) }
    : {};
  const appId = starterApplicationId(p.name);
  const runs: Array<{ what: string; run: CliRun }> = [];
  const cli = async (args: string[], code = 0) => {
    const run = await sluice(args, vars);
    runs.push({ what: args.join(" "), run });
    assertExit(run, code);
    return run;
  };
  const json = async (args: string[], code = 0) =>
    JSON.parse((await cli(["-o", "json", ...args], code)).stdout);
  try {
    const dir = ["--project", p.dir];
    await cli(["plan", ...dir, "--out", `${p.dir}/plan.json`]);
    await cli(["apply", ...dir, "--plan", `${p.dir}/plan.json`]);
    const samples = await samplesOf(p.dir);
    await produce(
      env.bootstrapHost,
      p.inputTopic,
      samples.map((s) => ({ key: s.key, value: JSON.stringify(s.value) })),
    );
    assert.equal((await outputRecords(env.bootstrapHost, p.outputTopic, 3)).length, 3);

    // the secrets are really in what sluice observes (positive control)
    const inspected = await dockerText(["inspect", appId]);
    assert.ok(inspected.includes(token) && inspected.includes(password));
    const observed = await json(["observe", ...dir]);
    const imageEnv = observed.data.runners[0].image.env as string[];
    // a secret-named variable is shown as <redacted> by the last output pass, others as a keyed hash
    assert.ok(imageEnv.includes("SLUICE_TEST_API_TOKEN=<redacted>"), imageEnv.join("\n"));
    assert.ok(imageEnv.some((e) => /^ORDERS_DATABASE_URL=hmac:[0-9a-f]{16}$/.test(e)));
    assert.equal(observed.data.runners[0].containers[0].environment.ok, true);
    await cli(["observe", ...dir]);
    await cli(["status", ...dir, "--health"]);
    await json(["status", ...dir]);
    await json(["plan", ...dir]);

    // live consumers of the output topic: fraud_app (declared) and one nobody declared
    await withAdmin(env.bootstrapHost, async (admin) => {
      for (const group of ["fraud_app", `shadow_${p.name}`]) {
        await admin.alterConsumerGroupOffsets({
          groupId: group,
          topics: [{ name: p.outputTopic, partitionOffsets: [{ partition: 0, offset: 0n }] }],
        });
      }
    });

    await p.setPredicate("amount >= 200 AND paid = TRUE");
    const replacePlan = `${p.dir}/replace.plan.json`;
    const text = (await cli(["plan", ...dir, "--preview", "--out", replacePlan])).stdout;
    for (
      const expected of [
        "- WHERE amount >= 100 AND paid = TRUE    (the running artifact)",
        "+ WHERE amount >= 200 AND paid = TRUE    (models/eligible_orders.sql:4)",
        "fraud_app declared, reads order_id STRING, amount BIGINT",
        "— declared as fraud_app",
        `live group shadow_${p.name}: Empty, 0 member(s), committed 0@0 — UNDECLARED`,
        `stays: application ID ${appId}`,
        `preview: last 1000 record(s) of ${p.inputTopic}: 6 sampled`,
        "admitted by old 3, by new 2; newly admitted 0, newly dropped 1; undecodable 0",
        '{order_id: "o-1004", amount: "100", paid: true}',
      ]
    ) assert.ok(text.includes(expected), `missing ${JSON.stringify(expected)} in\n${text}`);
    const sealed = JSON.parse(await Deno.readTextFile(replacePlan));
    assert.equal(sealed.format, 6);
    assert.equal(sealed.preview[0].newly_dropped, 1);
    assert.equal(sealed.preview[0].examples, undefined); // counts only, never records
    assert.ok(
      sealed.impact.models[0].declared.some((d: { external: string }) =>
        d.external === "fraud_app"
      ),
    );
    const review = (await json(["plan", ...dir, "--preview=3"])).data.review;
    assert.equal(review.changes[0].preview.requested, 3);
    assert.equal(review.changes[0].predicate.new.sql, "amount >= 200 AND paid = TRUE");
    const md = (await cli(["plan", ...dir, "--preview", "--format", "markdown"])).stdout;
    assert.match(md, /\| `fraud_app` \| yes \|/);
    assert.match(md, new RegExp(`\\| \`shadow_${p.name}\` \\| \\*\\*no\\*\\* \\|`));

    const lineage = `${p.dir}/lineage.jsonl`;
    const applied = await json([
      "apply",
      ...dir,
      "--plan",
      replacePlan,
      "--openlineage",
      lineage,
    ]);
    const operation = applied.data.operation_id as string;
    assert.equal(applied.data.committed, true);
    const status = [
      "state",
      "runner-status",
      ...dir,
      "--plan",
      replacePlan,
      "--operation-id",
      operation,
    ];
    await json(status);
    await cli(status);
    await json(["state", "show", ...dir]);
    await json(["observe", ...dir]);
    await cli(["plan", ...dir, "--preview"]);

    // every output, plan file, lineage event and state file: no secret anywhere
    const haystacks: Array<[string, string]> = runs.flatMap(({ what, run }) => [
      [`stdout of ${what}`, run.stdout] as [string, string],
      [`stderr of ${what}`, run.stderr] as [string, string],
    ]);
    for (const file of await filesUnder(p.dir)) {
      haystacks.push([file, await Deno.readTextFile(file)]);
    }
    assert.ok(haystacks.some(([w]) => w.endsWith("lineage.jsonl")));
    if (postgres) {
      const rows = await pgRows(env.pgUrl);
      // the project's own rows are among them: its name and its operation are found
      assert.ok(rows.some(([, text]) => text.includes(p.name) && text.includes(operation)));
      haystacks.push(...rows);
    } else {
      assert.ok(haystacks.some(([w]) => w.includes("/.sluice/state/")));
    }
    assert.ok(runs.length >= 15, `${runs.length} commands`);
    for (const [where, content] of haystacks) {
      for (const [name, secret] of Object.entries(secrets)) {
        assert.ok(!content.includes(secret), `the ${name} appears in ${where}`);
      }
    }
  } finally {
    await removeApplication(appId);
    await dockerText(["rmi", image]).catch(() => "");
    await withAdmin(
      env.bootstrapHost,
      (a) => a.deleteGroups({ groups: ["fraud_app", `shadow_${p.name}`] }),
    ).catch(() => {});
    if (postgres) await dropPgState(env.pgUrl, p.name);
    await Deno.remove(p.dir, { recursive: true });
  }
}

const JOURNEY =
  "the reviewed plan names both filters, fraud_app and a preview; no output, file or state of the journey shows a planted secret";

for (const backend of ["local", "postgres"] as const) {
  Deno.test(`${backend} state: ${JOURNEY}`, opts, () => reviewedJourney(backend));
}
