/**
 * Golden transcripts of the CLI: the exit status, the `-o json` envelope and the text output of
 * a representative run of every command (success, no-op, stale, blocked, usage, lock held, unknown
 * outcome, resume, missing environment piece), in this process through `runCli`, on a
 * deterministic fake world (seeded IDs, the world clock). Restructuring the CLI must leave them
 * as they are; an intended change of an envelope is made by regenerating them
 * (`SLUICE_UPDATE_GOLDEN=1 deno test -A cli/envelopes_test.ts`) and reviewing the diff.
 *
 * Values that differ between runs are normalized: temporary paths, timestamps, UUIDs and hex
 * digests (numbered by first appearance), the per-process hmac key, elapsed seconds, the actor.
 * `runtime build` needs the real Docker daemon: its envelope is pinned by
 * `cli/runtime_build_docker_test.ts`.
 * @module
 */
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { initProject } from "../lib/project/starter.ts";
import { openStateStore } from "../lib/state/open.ts";
import { createFakeWorld } from "../testing/fakes/fake_world.ts";
import type { FakeWorld } from "../testing/fakes/fake_world.ts";
import { gitRepo } from "../testing/git_repo.ts";
import { runInProcess } from "../testing/in_process_cli.ts";

const GOLDEN_DIR = new URL("./testdata/", import.meta.url).pathname;
const UPDATE = Deno.env.get("SLUICE_UPDATE_GOLDEN") === "1";

/** One command of a transcript. */
interface Entry {
  step: string;
  args: string[];
  status: number;
  stdout: unknown;
  stderr: string[];
}

type Format = "json" | "text";

/** Replaces what differs between runs by stable placeholders, numbered by first appearance. */
class Normalizer {
  #seen = new Map<string, string>();
  #counts = new Map<string, number>();
  constructor(private paths: Array<[string, string]>) {}

  #name(kind: string, value: string): string {
    const key = `${kind}:${value}`;
    let name = this.#seen.get(key);
    if (!name) {
      const n = (this.#counts.get(kind) ?? 0) + 1;
      this.#counts.set(kind, n);
      name = `<${kind}-${n}>`;
      this.#seen.set(key, name);
    }
    return name;
  }

  text(s: string): string {
    for (const [path, name] of this.paths) s = s.replaceAll(path, name);
    return s
      .replaceAll(`${Deno.env.get("USER") ?? "unknown"}@${hostname()}`, "<actor>")
      .replace(/\bpid \d+ on \S+/g, "pid <pid> on <host>")
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>")
      .replace(/hmac:[0-9a-f]{16}/g, "hmac:<key>")
      .replace(
        /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g,
        (m) => this.#name("uuid", m),
      )
      .replace(/\b[0-9a-f]{64}\b/g, (m) => this.#name("hex", m))
      .replace(/\b[0-9a-f]{40}\b/g, (m) => this.#name("commit", m))
      .replace(/\b[0-9a-f]{12}\b/g, (m) => this.#name("short", m))
      .replace(/^( +)\d+\.\ds( +)/gm, "$1<t>s$2");
  }

  value(v: unknown): unknown {
    if (typeof v === "string") return this.text(v);
    if (Array.isArray(v)) return v.map((x) => this.value(x));
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(
        Object.entries(v).map((
          [k, x],
        ) => [this.text(k), k === "pid" ? "<pid>" : k === "host" ? "<host>" : this.value(x)]),
      );
    }
    return v;
  }
}

/** The starter, pointed at the fake world, in a Git repository (for `diff`). */
async function fakeProject(world: FakeWorld, dir: string): Promise<void> {
  await initProject(dir);
  const manifest = `${dir}/sluice.yaml`;
  const text = (await Deno.readTextFile(manifest))
    .replace(/bootstrap_host: .*$/m, `bootstrap_host: ${world.env.bootstrapHost}`)
    .replace(/bootstrap_internal: .*$/m, `bootstrap_internal: ${world.env.bootstrapInternal}`)
    .replace(/^network: .*$/m, `network: ${world.env.network}`)
    .replace(/^image: .*$/m, `image: ${world.env.runnerImage}`);
  await Deno.writeTextFile(manifest, text);
}

async function setPredicate(dir: string, sql: string): Promise<void> {
  const path = `${dir}/models/eligible_orders.sql`;
  const t = await Deno.readTextFile(path);
  await Deno.writeTextFile(path, t.replace(/WHERE .*$/m, `WHERE ${sql}`));
}

/** The operation of the starter's state store's last ownership commit. */
async function lastCommitted(dir: string): Promise<string> {
  const store = openStateStore({
    backend: "local",
    dir: `${dir}/.sluice/state`,
    project: "orders",
    environment: null,
  });
  try {
    const events = (await store.load()).history.events;
    const last = events.filter((e) => e.kind === "ownership_committed").at(-1);
    if (!last || last.kind !== "ownership_committed" || !last.operation_id) {
      throw new Error("no committed operation");
    }
    return last.operation_id;
  } finally {
    await store.close();
  }
}

async function pendingOperation(dir: string): Promise<string> {
  const store = openStateStore({
    backend: "local",
    dir: `${dir}/.sluice/state`,
    project: "orders",
    environment: null,
  });
  try {
    const id = (await store.load()).control?.opened.operation_id;
    if (!id) throw new Error("no pending operation");
    return id;
  } finally {
    await store.close();
  }
}

/** The whole transcript of one output format. */
async function transcript(format: Format): Promise<Entry[]> {
  const root = await Deno.makeTempDir({ prefix: "sluice-golden-" });
  const dir = `${root}/orders`;
  const fresh = `${root}/fresh`;
  const stateDir = `${root}/state`;
  await Deno.mkdir(dir);
  const world = createFakeWorld({ seed: `golden-${format}` });
  const kafka = world.kafka(world.env.bootstrapHost);
  const deps = { docker: world.docker, kafka, clock: world.clock, uuids: world.ids };
  const norm = new Normalizer([[stateDir, "<STATE>"], [fresh, "<FRESH>"], [dir, "<DIR>"], [
    root,
    "<ROOT>",
  ]]);
  const entries: Entry[] = [];
  const run = async (step: string, args: string[]) => {
    const full = format === "json" ? ["-o", "json", ...args] : args;
    const r = await runInProcess(full, deps);
    let stdout: unknown = r.stdout.length > 0 ? norm.text(r.stdout).split("\n") : [];
    if (format === "json" && r.stdout.startsWith("{")) {
      // one JSON document per envelope printed (each starts with "{" on its own line)
      const docs = r.stdout.split(/\n(?=\{$)/m).map((d) => norm.value(JSON.parse(d)));
      stdout = docs.length === 1 ? docs[0] : docs;
    }
    const entry = {
      step,
      args: full.map((a) => norm.text(a)),
      status: r.code,
      stdout,
      stderr: r.stderr.length > 0 ? norm.text(r.stderr).split("\n") : [],
    };
    entries.push(entry);
    return { ...entry, raw: r.stdout };
  };
  const project = ["--project", dir];
  try {
    await run("init: the starter", ["init", fresh]);
    await run("init: files exist", ["init", fresh]);
    await run("validate", ["validate", "--project", fresh]);
    await run("validate: no project", ["validate", "--project", `${root}/none`]);
    await run("compile", ["compile", "--project", fresh]);

    await fakeProject(world, dir);
    const repo = await gitRepo(dir);
    await repo.commit("starter");
    await run("plan: offline", ["plan", ...project, "--offline"]);
    await run("plan: --preview=abc is a usage error", ["plan", ...project, "--preview=abc"]);
    if (format === "json") {
      await run("plan: --format markdown with -o json", [
        "plan",
        ...project,
        "--format",
        "markdown",
      ]);
    }
    await run("plan: create, written", ["plan", ...project, "--out", `${dir}/create.plan.json`]);
    await run("apply: create", ["apply", ...project, "--plan", `${dir}/create.plan.json`]);
    await run("apply: the same plan again is stale", [
      "apply",
      ...project,
      "--plan",
      `${dir}/create.plan.json`,
    ]);
    // the create's operation, for runner-status and resume at the end (read without the lock:
    // no seeded ID is taken, so the transcript in between is unchanged)
    const createOp = [
      "--plan",
      `${dir}/create.plan.json`,
      "--operation-id",
      await lastCommitted(dir),
    ];
    await run("plan: no changes", ["plan", ...project]);
    await run("apply: no plan, no changes", ["apply", ...project]);
    await run("observe", ["observe", ...project]);
    await run("status --health", ["status", ...project, "--health"]);
    await run("logs --tail 2", ["logs", "eligible_orders", ...project, "--tail", "2"]);
    await run("logs: unknown model", ["logs", "no_such_model", ...project]);
    await run("state show --project", ["state", "show", ...project]);
    await run("state init --state-dir", [
      "state",
      "init",
      "--state-dir",
      stateDir,
      "--project-name",
      "orders",
    ]);
    await run("state show --state-dir", [
      "state",
      "show",
      "--state-dir",
      stateDir,
      "--project-name",
      "orders",
    ]);
    await run("state show: two stores named", [
      "state",
      "show",
      "--state-dir",
      stateDir,
      "--pg-url",
      "postgres://u:secret@127.0.0.1:1/x",
      "--project-name",
      "orders",
    ]);

    world.control.produce("raw_orders", [
      {
        key: "a",
        value: JSON.stringify({ order_id: "a", amount: 150, paid: true, customer: null }),
      },
      {
        key: "b",
        value: JSON.stringify({ order_id: "b", amount: 250, paid: true, customer: null }),
      },
      {
        key: "c",
        value: JSON.stringify({ order_id: "c", amount: 50, paid: true, customer: null }),
      },
    ]);
    await setPredicate(dir, "amount >= 200 AND paid = TRUE");
    await repo.commit("raise the threshold");
    await run("diff --base HEAD~1", ["diff", ...project, "--base", "HEAD~1"]);
    if (format === "text") {
      await run("diff --format markdown", [
        "diff",
        ...project,
        "--base",
        "HEAD~1",
        "--format",
        "markdown",
      ]);
    }
    // the fake Kafka port reads no records: the preview is an environment error (exit 7)
    await run("plan --preview: this port cannot read records", ["plan", ...project, "--preview"]);
    await run("plan: reviewed replacement", [
      "plan",
      ...project,
      "--out",
      `${dir}/replace.plan.json`,
    ]);
    await run("state resume: a stranger operation", [
      "state",
      "resume",
      ...project,
      "--plan",
      `${dir}/replace.plan.json`,
      "--operation-id",
      "00000000-0000-4000-8000-000000000099",
    ]);
    // the start's response is lost: the outcome is unknown (exit 6)
    world.control.failCall("startContainer", { effect: "lose_response" });
    await run("apply: reviewed replacement, response lost", [
      "apply",
      ...project,
      "--plan",
      `${dir}/replace.plan.json`,
    ]);
    const operationId = await pendingOperation(dir);
    const op = ["--plan", `${dir}/replace.plan.json`, "--operation-id", operationId];
    await run("apply: while an operation is pending", ["apply", ...project]);
    await run("state runner-status: interrupted", ["state", "runner-status", ...project, ...op]);
    await run("state resume: completes", ["state", "resume", ...project, ...op]);
    await run("state resume: already completed", ["state", "resume", ...project, ...op]);
    await run("state runner-status: completed", ["state", "runner-status", ...project, ...op]);
    await run("apply: a completed replacement plan again", [
      "apply",
      ...project,
      "--plan",
      `${dir}/replace.plan.json`,
    ]);
    await run("logs: the candidate's generation", [
      "logs",
      "eligible_orders",
      ...project,
      "--tail",
      "1",
    ]);

    // someone else holds the deployment lock
    const holder = openStateStore({
      backend: "local",
      dir: `${dir}/.sluice/state`,
      project: "orders",
      environment: null,
    });
    await holder.acquireLock({ actor: "someone-else" });
    await setPredicate(dir, "amount >= 300 AND paid = TRUE");
    await run("plan: lock held elsewhere", ["plan", ...project, "--out", `${dir}/third.plan.json`]);
    await run("apply: lock held elsewhere", [
      "apply",
      ...project,
      "--plan",
      `${dir}/third.plan.json`,
    ]);
    await holder.releaseLock();
    await holder.close();

    // a projection change cannot be carried out
    const sql = `${dir}/models/eligible_orders.sql`;
    const model = await Deno.readTextFile(sql);
    await Deno.writeTextFile(sql, model.replace(/SELECT .*$/m, "SELECT order_id, amount"));
    await run("plan: blocked", ["plan", ...project]);
    await Deno.writeTextFile(sql, model);

    const running = (await world.docker.listContainers("sluice.managed-by", "sluice")).find((c) =>
      c.state.running
    );
    world.control.killContainer(running!.id);
    await run("status --health: unhealthy", ["status", ...project, "--health"]);
    await run("status: a killed runner", ["status", ...project]);
    await run("observe: a killed runner", ["observe", ...project]);
    await run("plan: the runner was killed, not written", [
      "plan",
      ...project,
      "--out",
      `${dir}/killed.plan.json`,
    ]);

    // the killed runner comes back through sluice: recorded, then started; the second run is done
    const why = ["--reason", "killed by the host's OOM guard"];
    await run("restart: a killed runner", ["restart", "eligible_orders", ...project, ...why]);
    await run("restart: again, already done", ["restart", "eligible_orders", ...project, ...why]);
    await run("restart: no --reason", ["restart", "eligible_orders", ...project]);

    // runner-status and resume take every journey's plan file: the create's, long completed; the
    // replacement's operation with the create's plan file is refused precisely
    await run("state runner-status: a completed create", [
      "state",
      "runner-status",
      ...project,
      ...createOp,
    ]);
    await run("state resume: a completed create", ["state", "resume", ...project, ...createOp]);
    await run("state resume: the create's plan file for the replacement's operation", [
      "state",
      "resume",
      ...project,
      "--plan",
      `${dir}/create.plan.json`,
      "--operation-id",
      operationId,
    ]);

    const manifest = `${dir}/sluice.yaml`;
    await Deno.writeTextFile(
      manifest,
      (await Deno.readTextFile(manifest)).replace(
        / {2}backend: local\n {2}dir: \.sluice\/state\n/,
        "  backend: postgres\n  dsn_env: SLUICE_GOLDEN_UNSET_DSN\n",
      ),
    );
    await run("plan: state DSN variable unset", ["plan", ...project]);
    await run("state show: state DSN variable unset", ["state", "show", ...project]);
  } catch (error) {
    // the transcript so far says where the run went wrong
    throw new Error(`${(error as Error).message}\n${JSON.stringify(entries.slice(-4), null, 2)}`);
  } finally {
    await kafka.close();
    await Deno.remove(root, { recursive: true });
  }
  return entries;
}

for (const format of ["json", "text"] as const) {
  Deno.test(`every command's exit status and ${format} output match the golden transcript`, async () => {
    const path = `${GOLDEN_DIR}cli_${format}.golden.json`;
    const actual = await transcript(format);
    if (UPDATE) {
      await Deno.mkdir(GOLDEN_DIR, { recursive: true });
      await Deno.writeTextFile(path, JSON.stringify(actual, null, 2) + "\n");
    }
    const expected = JSON.parse(await Deno.readTextFile(path)) as Entry[];
    assert.deepEqual(actual.map((e) => e.step), expected.map((e) => e.step));
    for (let i = 0; i < expected.length; i++) {
      assert.deepEqual(actual[i], expected[i], `step '${expected[i].step}' differs`);
    }
  });
}
