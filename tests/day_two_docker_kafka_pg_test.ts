// Needs: Docker, the broker, PostgreSQL, the runner image (shared environment from tools/test.ts).
// Day two against the real runner, broker and both state backends, through `bin/sluice`: a runner
// stopped by someone else (`docker stop`, exit 143 — PostgreSQL state) or killed (`docker kill`,
// 137 — local state) blocks plan; `sluice restart` brings the same container back, recorded in
// the audit first (after the kill, once the dead member left the group); records produced while it
// was stopped are processed exactly once; running it again changes nothing; plan is a no-op again.
// Started again by hand afterwards, it is drift: plan is BLOCKED_RUNNER_DRIFT, status FAIL.
// A record the runner cannot decode stops it (exit 13); `sluice skip-record` with the coordinates
// `sluice status` shows records the skip, moves exactly that partition by one and starts the
// runner again: the records after it are processed, the bad one never.
import assert from "node:assert/strict";
import pg from "pg";
import { dockerCli } from "../harness/docker.ts";
import { sharedEnv } from "../harness/env.ts";
import { committedOffsets, produce, readAll } from "../harness/kafka.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { openStateStore } from "../lib/state/open.ts";
import type { StateStore } from "../lib/state/store.ts";
import {
  assertExit,
  expectedStarterOutput,
  outputRecords,
  removeApplication,
  samplesOf,
  sluice,
  sluiceJson,
  starterApplicationId,
} from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const DSN_ENV = "SLUICE_TEST_STATE_DSN";
const MODEL = "eligible_orders";
const REASON = "stopped outside sluice during maintenance";

/** Everything in the output topic now (one read), sorted by key: a duplicate shows as an extra. */
async function outputNow(bootstrap: string, topic: string) {
  return (await readAll(bootstrap, topic, { partitions: [0, 1, 2] }))
    .map((r) => ({ key: r.key, value: JSON.parse(r.value!) }))
    .sort((a, b) => (a.key ?? "").localeCompare(b.key ?? ""));
}

/** Progress of a long journey, to a file (a hung step shows where it is). */
function step(text: string): void {
  const log = Deno.env.get("SLUICE_DAY_TWO_TRACE");
  if (log) Deno.writeTextFileSync(log, `${new Date().toISOString()} ${text}\n`, { append: true });
}

async function docker(args: string[]): Promise<string> {
  const out = await new Deno.Command(dockerCli(), { args, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  assert.equal(out.code, 0, `docker ${args.join(" ")}: ${dec.decode(out.stderr)}`);
  return dec.decode(out.stdout).trim();
}

async function dropState(url: string, project: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const scope = JSON.stringify([project, null]);
    await c.query("DELETE FROM sluice.sluice_documents WHERE scope = $1", [scope]);
    await c.query("DELETE FROM sluice.sluice_locks WHERE scope = $1", [scope]);
  } finally {
    await c.end();
  }
}

type Restarted = {
  container: string;
  container_id: string;
  event_id: string;
  recorded_now: boolean;
  started_now: boolean;
  waited_for_group: boolean;
  committed: Record<string, string>;
  stop: { exit_code: number; kind: string; killed: boolean; runner_reason: string | null };
};

async function journey(backend: "postgres" | "local", how: "stop" | "kill") {
  const env = await sharedEnv();
  const p = await starterProject(env, {
    image: await runnerImageId(),
    ...(backend === "postgres" ? { stateDsnEnv: DSN_ENV } : {}),
  });
  const vars: Record<string, string> = backend === "postgres" ? { [DSN_ENV]: env.pgUrl } : {};
  const appId = starterApplicationId(p.name);
  const store: StateStore = openStateStore(
    backend === "postgres"
      ? { backend: "postgres", url: env.pgUrl, project: p.name, environment: null }
      : { backend: "local", dir: `${p.dir}/.sluice/state`, project: p.name, environment: null },
  );
  const planFile = `${p.dir}/plan.json`;
  try {
    assertExit(await sluice(["plan", "--project", p.dir, "--out", planFile], vars), 0);
    assertExit(await sluice(["apply", "--project", p.dir, "--plan", planFile], vars), 0);
    step(`${how}: applied`);
    const samples = await samplesOf(p.dir);
    const first = samples.slice(0, 4);
    const later = samples.slice(4);
    await produce(
      env.bootstrapHost,
      p.inputTopic,
      first.map((s) => ({ key: s.key, value: JSON.stringify(s.value) })),
    );
    const expectFirst = expectedStarterOutput(first);
    assert.deepEqual(
      await outputRecords(env.bootstrapHost, p.outputTopic, expectFirst.length),
      expectFirst,
    );

    step(`${how}: first output read`);
    // someone else stops (or kills) the runner
    const name = await docker([
      "ps",
      "-q",
      "--no-trunc",
      "--filter",
      `label=sluice.application-id=${appId}`,
    ]);
    assert.match(name, /^[0-9a-f]{64}$/, "exactly one running container");
    await docker(how === "stop" ? ["stop", "-t", "30", name] : ["kill", name]);
    const exit = await docker(["inspect", "-f", "{{.State.ExitCode}}", name]);
    assert.equal(exit, how === "stop" ? "143" : "137");
    // records arrive while it is stopped
    await produce(
      env.bootstrapHost,
      p.inputTopic,
      later.map((s) => ({ key: s.key, value: JSON.stringify(s.value) })),
    );
    const blocked = await sluiceJson(["plan", "--project", p.dir], vars);
    assertExit(blocked, 4);
    assert.equal(blocked.envelope.errors[0].code, "BLOCKED_RUNNER_NOT_RUNNING");
    await store.init();
    const before = (await store.load()).history.events.length;

    step(`${how}: stopped and blocked`);
    // sluice brings it back: the same container, recorded first
    const r = await sluiceJson(["restart", MODEL, "--project", p.dir, "--reason", REASON], vars);
    assertExit(r, 0);
    const data = r.envelope.data as unknown as Restarted;
    assert.equal(data.container_id, name, "the same container: the same generation");
    assert.equal(data.stop.exit_code, how === "stop" ? 143 : 137);
    assert.equal(data.stop.killed, how === "kill");
    assert.equal(data.stop.runner_reason, how === "stop" ? "SIGTERM" : null);
    assert.equal(data.recorded_now, true);
    assert.equal(data.started_now, true);
    assert.equal(await docker(["inspect", "-f", "{{.State.Running}}", name]), "true");
    const snap = await store.load();
    assert.equal(snap.history.events.length, before + 1);
    const e = snap.history.events.at(-1)!;
    assert.equal(e.kind, "runner_restarted");
    if (e.kind !== "runner_restarted") return;
    assert.equal(e.event_id, data.event_id);
    assert.equal(e.reason, REASON);
    assert.equal(e.container.id, name);
    assert.equal(e.container.exit_code, data.stop.exit_code);
    assert.equal(e.group_state, "Empty");
    assert.equal(snap.history.document.version, 5);
    assert.equal(snap.ownership?.document.serial, 1, "a restart changes no owner");

    step(`${how}: restarted`);
    // everything is processed exactly once: what came before, and what arrived while stopped
    const expected = expectedStarterOutput(samples);
    const got = await outputRecords(env.bootstrapHost, p.outputTopic, expected.length);
    // read a little longer: a duplicate would show as an extra record
    await new Promise((r) => setTimeout(r, 2_000));
    assert.deepEqual(
      await outputNow(env.bootstrapHost, p.outputTopic),
      expected,
    );
    assert.deepEqual(got, expected);

    // the same command again changes nothing; the project plans as a no-op
    const again = await sluiceJson(
      ["restart", MODEL, "--project", p.dir, "--reason", REASON],
      vars,
    );
    assertExit(again, 0);
    const second = again.envelope.data as unknown as Restarted;
    assert.equal(second.event_id, data.event_id);
    assert.equal(second.recorded_now, false);
    assert.equal(second.started_now, false);
    assert.equal((await store.load()).history.events.length, before + 1);
    const noop = await sluiceJson(["plan", "--project", p.dir], vars);
    assertExit(noop, 0);
    assert.equal(noop.envelope.data?.noop, true);

    if (how === "stop") {
      // drift: stopped and started again by hand, on the real daemon's clock
      await docker(["stop", "-t", "30", name]);
      await docker(["start", name]);
      const drifted = await sluiceJson(["plan", "--project", p.dir], vars);
      assertExit(drifted, 4);
      assert.equal(drifted.envelope.errors[0].code, "BLOCKED_RUNNER_DRIFT");
      const status = await sluiceJson(["status", "--project", p.dir], vars);
      const row = (status.envelope.data?.models as Array<
        { healthy: boolean; drift: { kind: string; container_id: string } | null }
      >)[0];
      assert.equal(row.healthy, false);
      assert.equal(row.drift?.kind, "started_outside_sluice");
      assert.equal(row.drift?.container_id, name);
    }
  } finally {
    await store.close();
    await removeApplication(appId);
    if (backend === "postgres") await dropState(env.pgUrl, p.name);
    await Deno.remove(p.dir, { recursive: true });
  }
}

Deno.test(
  "restart after docker stop (143), PostgreSQL state: the same container back, audited, exact output",
  opts,
  async () => {
    await journey("postgres", "stop");
  },
);

Deno.test(
  "restart after docker kill (137), local state: waits for the dead member, audited, exact output",
  opts,
  async () => {
    await journey("local", "kill");
  },
);

type StatusRow = {
  stop: {
    exit_code: number;
    runner:
      | { reason: string; record: { topic: string; partition: number; offset: number } | null }
      | null;
  } | null;
};

Deno.test(
  "skip-record past a record the runner cannot decode (exit 13), PostgreSQL state: audited, one partition moved by one, exact output",
  opts,
  async () => {
    const env = await sharedEnv();
    const p = await starterProject(env, { image: await runnerImageId(), stateDsnEnv: DSN_ENV });
    const vars: Record<string, string> = { [DSN_ENV]: env.pgUrl };
    const appId = starterApplicationId(p.name);
    const store = openStateStore({
      backend: "postgres",
      url: env.pgUrl,
      project: p.name,
      environment: null,
    });
    const planFile = `${p.dir}/plan.json`;
    try {
      assertExit(await sluice(["plan", "--project", p.dir, "--out", planFile], vars), 0);
      assertExit(await sluice(["apply", "--project", p.dir, "--plan", planFile], vars), 0);
      const samples = await samplesOf(p.dir);
      const secret = "not-to-be-shown-4111";
      // the bad record (amount is a string), then the samples after it on every partition
      await produce(env.bootstrapHost, p.inputTopic, [{
        key: "bad-1",
        value: JSON.stringify({ order_id: secret, amount: "lots", paid: true, customer: null }),
      }]);
      await produce(
        env.bootstrapHost,
        p.inputTopic,
        samples.map((s) => ({ key: s.key, value: JSON.stringify(s.value) })),
      );
      const id = await docker([
        "ps",
        "-aq",
        "--no-trunc",
        "--filter",
        `label=sluice.application-id=${appId}`,
      ]);
      for (let i = 0; i < 200; i++) {
        if (await docker(["inspect", "-f", "{{.State.Running}}", id]) === "false") break;
        await new Promise((r) => setTimeout(r, 300));
      }
      assert.equal(await docker(["inspect", "-f", "{{.State.ExitCode}}", id]), "13");

      // the operator reads the coordinates from status, as the runbook says
      const status = await sluiceJson(["status", "--project", p.dir], vars);
      const row = (status.envelope.data?.models as StatusRow[])[0];
      const rec = row.stop?.runner?.record;
      assert.ok(rec, "status names the record");
      assert.equal(row.stop?.runner?.reason, "DECODE_WRONG_TYPE");
      const restartFirst = await sluiceJson([
        "restart",
        MODEL,
        "--project",
        p.dir,
        "--reason",
        REASON,
      ], vars);
      assertExit(restartFirst, 4);
      assert.equal(restartFirst.envelope.errors[0].code, "BLOCKED_POISON_RECORD");
      const wrong = await sluiceJson([
        "skip-record",
        MODEL,
        "--project",
        p.dir,
        "--partition",
        String(rec.partition),
        "--offset",
        String(rec.offset + 1),
        "--reason",
        REASON,
      ], vars);
      assertExit(wrong, 4);
      assert.equal(wrong.envelope.errors[0].code, "BLOCKED_SKIP_MISMATCH");

      await store.init();
      const before = (await store.load()).history.events.length;
      const committedBefore = await committedOffsets(env.bootstrapHost, appId, p.inputTopic);
      assert.equal(committedBefore.get(rec.partition), BigInt(rec.offset));
      const r = await sluiceJson([
        "skip-record",
        MODEL,
        "--project",
        p.dir,
        "--partition",
        String(rec.partition),
        "--offset",
        String(rec.offset),
        "--reason",
        "a test order with a text amount",
      ], vars);
      assertExit(r, 0);
      assert.ok(!JSON.stringify(r.envelope).includes(secret), "no value of the record is shown");
      const data = r.envelope.data as {
        event_id: string;
        recorded_now: boolean;
        moved_now: boolean;
        record: { topic: string; partition: number; offset: string };
        restart: { after_skip: string; container_id: string; started_now: boolean };
      };
      assert.deepEqual(data.record, {
        topic: p.inputTopic,
        partition: rec.partition,
        offset: String(rec.offset),
      });
      assert.equal(data.recorded_now, true);
      assert.equal(data.moved_now, true);
      assert.equal(data.restart.after_skip, data.event_id);
      assert.equal(data.restart.container_id, id);
      const events = (await store.load()).history.events.slice(before);
      assert.deepEqual(events.map((e) => e.kind), ["record_skipped", "runner_restarted"]);

      // every good sample is processed exactly once; the bad record is never output
      const expected = expectedStarterOutput(samples);
      await outputRecords(env.bootstrapHost, p.outputTopic, expected.length);
      await new Promise((r) => setTimeout(r, 2_000));
      assert.deepEqual(
        await outputNow(env.bootstrapHost, p.outputTopic),
        expected,
      );
      // exactly that partition moved past the record; none went backwards
      const after = await committedOffsets(env.bootstrapHost, appId, p.inputTopic);
      assert.ok(after.get(rec.partition)! > BigInt(rec.offset));
      for (const [part, off] of committedBefore) {
        assert.ok(
          after.get(part)! >= off,
          `partition ${part}`,
        );
      }

      // the same command again: done, nothing recorded or moved
      const again = await sluiceJson([
        "skip-record",
        MODEL,
        "--project",
        p.dir,
        "--partition",
        String(rec.partition),
        "--offset",
        String(rec.offset),
        "--reason",
        "a test order with a text amount",
      ], vars);
      assertExit(again, 0);
      const second = again.envelope.data as { recorded_now: boolean; moved_now: boolean };
      assert.equal(second.recorded_now, false);
      assert.equal(second.moved_now, false);
      assert.equal((await store.load()).history.events.length, before + 2);
      const noop = await sluiceJson(["plan", "--project", p.dir], vars);
      assertExit(noop, 0);
      assert.equal(noop.envelope.data?.noop, true);
    } finally {
      await store.close();
      await removeApplication(appId);
      await dropState(env.pgUrl, p.name);
      await Deno.remove(p.dir, { recursive: true });
    }
  },
);
