// test-needs: env
// Needs: Docker, the broker, PostgreSQL, the runner image (shared environment from tools/test.ts).
// Offsets moved while the runner was stopped (issue 18 item 4), against the real runner, broker
// and the PostgreSQL state backend, through `bin/sluice`: the starter is deployed and consumes; `docker stop`
// closes it cleanly (143) — its own exactly-once commit at the close is no drift; then the group's
// committed offset of one partition is moved back with Kafka's Admin API (not sluice). `plan`
// reports BLOCKED_RUNNER_DRIFT with that partition before and after, `status` a drift line, and
// `restart` refuses (BLOCKED_OFFSETS_MOVED), recording nothing. `sluice acknowledge-drift`
// records exactly that move in the audit; then plan reports only the stopped runner, `restart`
// proceeds, and plan is a no-op with the runner running on the moved offsets.
import assert from "node:assert/strict";
import { dockerCli } from "../harness/docker.ts";
import { sharedEnv } from "../harness/env.ts";
import { committedOffsets, produce, withAdmin } from "../harness/kafka.ts";
import {
  assertExit,
  dropPgState,
  expectedStarterOutput,
  outputRecords,
  removeApplication,
  samplesOf,
  sluice,
  sluiceJson,
  starterOn,
  type StateBackend,
} from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const MODEL = "eligible_orders";

type Moved = { topic: string; partition: number; before: string | null; after: string | null };
type Drift = {
  kind: string;
  container_id: string;
  evidence: string;
  running: boolean;
  partitions: Moved[];
  summary: string;
};

async function docker(args: string[]): Promise<string> {
  const out = await new Deno.Command(dockerCli(), { args, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  assert.equal(out.code, 0, `docker ${args.join(" ")}: ${dec.decode(out.stderr)}`);
  return dec.decode(out.stdout).trim();
}

type Blocked = { code: string; message: string; evidence?: Record<string, unknown> };

/** The blockers of a blocked plan's envelope (its first error lists them all). */
function blockersOf(e: { errors: Blocked[] }): Blocked[] {
  const all = (e.errors[0]?.evidence as { blockers?: Blocked[] } | undefined)?.blockers;
  assert.ok(all, `a blocked plan lists its blockers: ${JSON.stringify(e.errors)}`);
  return all;
}

/** The journey on one state backend: deploy, stop, move an offset, plan, restart, acknowledge. */
async function offsetsMoved(backend: StateBackend): Promise<void> {
  const env = await sharedEnv();
  const { project: p, vars, store, applicationId: appId } = await starterOn(env, backend);
  const planFile = `${p.dir}/plan.json`;
  try {
    assertExit(await sluice(["plan", "--project", p.dir, "--out", planFile], vars), 0);
    assertExit(await sluice(["apply", "--project", p.dir, "--plan", planFile], vars), 0);
    const samples = await samplesOf(p.dir);
    await produce(
      env.bootstrapHost,
      p.inputTopic,
      samples.map((s) => ({ key: s.key, value: JSON.stringify(s.value) })),
    );
    const expected = expectedStarterOutput(samples);
    assert.deepEqual(
      await outputRecords(env.bootstrapHost, p.outputTopic, expected.length),
      expected,
    );

    const id = await docker([
      "ps",
      "-q",
      "--no-trunc",
      "--filter",
      `label=sluice.application-id=${appId}`,
    ]);
    assert.match(id, /^[0-9a-f]{64}$/, "exactly one running container");
    await docker(["stop", "-t", "30", id]);
    assert.equal(await docker(["inspect", "-f", "{{.State.ExitCode}}", id]), "143");

    // the runner's own commit at its clean close is no drift: only the stop blocks the plan
    const stopped = await sluiceJson(["plan", "--project", p.dir], vars);
    assertExit(stopped, 4);
    assert.deepEqual(blockersOf(stopped.envelope).map((e) => e.code), [
      "BLOCKED_RUNNER_NOT_RUNNING",
    ]);
    // and there is nothing to acknowledge
    const none = await sluiceJson(
      ["acknowledge-drift", MODEL, "--project", p.dir, "--reason", "nothing"],
      vars,
    );
    assertExit(none, 4);
    assert.equal(none.envelope.errors[0].code, "BLOCKED_NO_DRIFT");
    const closed = await committedOffsets(env.bootstrapHost, appId, p.inputTopic);
    // the partition that consumed most: moved back to 0 by someone with the Admin API
    const [partition, at] = [...closed].sort((a, b) => Number(b[1] - a[1]))[0];
    assert.ok(at > 0n, `the runner committed progress (${[...closed].join(" ")})`);
    await withAdmin(env.bootstrapHost, (admin) =>
      admin.alterConsumerGroupOffsets({
        groupId: appId,
        topics: [{ name: p.inputTopic, partitionOffsets: [{ partition, offset: 0n }] }],
      }));
    assert.equal(
      (await committedOffsets(env.bootstrapHost, appId, p.inputTopic)).get(partition),
      0n,
    );
    const movedOne: Moved = {
      topic: p.inputTopic,
      partition,
      before: at.toString(),
      after: "0",
    };

    // plan: the drift, per partition, beside the stopped runner
    const drifted = await sluiceJson(["plan", "--project", p.dir], vars);
    assertExit(drifted, 4);
    const driftErr = blockersOf(drifted.envelope).find((e) => e.code === "BLOCKED_RUNNER_DRIFT");
    assert.ok(driftErr, JSON.stringify(drifted.envelope.errors));
    const d = (driftErr.evidence as { drift: Drift }).drift;
    assert.equal(d.kind, "offsets_moved_while_stopped");
    assert.equal(d.evidence, "close_vector");
    assert.equal(d.container_id, id);
    assert.deepEqual(d.partitions, [movedOne]);
    assert.match(driftErr.message, /sluice acknowledge-drift eligible_orders --reason TEXT/);
    assert.match(driftErr.message, new RegExp(`${p.inputTopic}-${partition} ${at} → 0`));
    // status: the same drift, FAIL
    const status = await sluiceJson(["status", "--project", p.dir], vars);
    const row = (status.envelope.data?.models as Array<
      { healthy: boolean; drift: Drift | null }
    >)[0];
    assert.equal(row.healthy, false);
    assert.deepEqual(row.drift?.partitions, [movedOne]);
    const text = await sluice(["status", "--project", p.dir], vars);
    assert.match(text.stdout, /drift: offsets moved outside sluice/);

    // restart refuses the moved offsets (the same rule), recording nothing
    await store.init();
    const before = (await store.load()).history.events.length;
    const refused = await sluiceJson(
      ["restart", MODEL, "--project", p.dir, "--reason", "bring it back"],
      vars,
    );
    assertExit(refused, 4);
    assert.equal(refused.envelope.errors[0].code, "BLOCKED_OFFSETS_MOVED");
    assert.equal((await store.load()).history.events.length, before);
    assert.equal(await docker(["inspect", "-f", "{{.State.Running}}", id]), "false");

    // acknowledged explicitly: exactly that move, in the audit
    const reason = "replay partition requested by the data team";
    const ack = await sluiceJson(
      ["acknowledge-drift", MODEL, "--project", p.dir, "--reason", reason],
      vars,
    );
    assertExit(ack, 0);
    const snap = await store.load();
    assert.equal(snap.history.events.length, before + 1);
    const e = snap.history.events.at(-1)!;
    assert.equal(e.kind, "drift_acknowledged");
    if (e.kind !== "drift_acknowledged") return;
    assert.equal(e.reason, reason);
    assert.equal(e.container.id, id);
    assert.equal(
      e.container.finished_at,
      await docker(["inspect", "-f", "{{.State.FinishedAt}}", id]),
    );
    assert.equal(e.drifts.length, 1);
    assert.deepEqual(
      (e.drifts[0] as unknown as Drift).partitions,
      [movedOne],
    );
    assert.equal(snap.history.document.version, 6);
    assert.equal((ack.envelope.data as { event_id: string }).event_id, e.event_id);

    // plan now reports only the stopped runner; restart proceeds; plan is a no-op
    const after = await sluiceJson(["plan", "--project", p.dir], vars);
    assertExit(after, 4);
    assert.deepEqual(blockersOf(after.envelope).map((x) => x.code), [
      "BLOCKED_RUNNER_NOT_RUNNING",
    ]);
    assertExit(
      await sluice(["restart", MODEL, "--project", p.dir, "--reason", "after the replay"], vars),
      0,
    );
    assert.equal(await docker(["inspect", "-f", "{{.State.Running}}", id]), "true");
    const noop = await sluiceJson(["plan", "--project", p.dir], vars);
    assertExit(noop, 0);
    assert.equal(noop.envelope.data?.noop, true);
    const healthy = await sluiceJson(["status", "--project", p.dir], vars);
    assert.equal(
      (healthy.envelope.data?.models as Array<{ drift: unknown }>)[0].drift,
      null,
      "the running runner started on the acknowledged offsets: no drift",
    );
    // the same command again: already acknowledged (the running runner's start vector shows
    // the same move, accepted by the same event), nothing recorded
    const again = await sluiceJson(
      ["acknowledge-drift", MODEL, "--project", p.dir, "--reason", reason],
      vars,
    );
    assertExit(again, 0);
    const agained = again.envelope.data as {
      event_id: string | null;
      already: Array<{ event_id: string; drift: Drift }>;
    };
    assert.equal(agained.event_id, null);
    assert.deepEqual(agained.already.map((a) => a.event_id), [e.event_id]);
    assert.equal(agained.already[0].drift.evidence, "start_vector");
    assert.deepEqual(agained.already[0].drift.partitions, [movedOne]);
  } finally {
    await store.close();
    await removeApplication(appId);
    if (backend === "postgres") await dropPgState(env.pgUrl, p.name);
    await Deno.remove(p.dir, { recursive: true });
  }
}

// One backend: the drift is read from real Kafka and the real runner's close, and the state
// backend only records the acknowledgement — both backends' drift rules run over the fakes
// (lib/runtime/acknowledge_drift_test.ts, lib/runtime/drift_test.ts).
Deno.test(
  "offsets moved with Kafka's Admin API while the runner was stopped are drift in plan and status, refused by restart, until acknowledged (PostgreSQL state)",
  opts,
  () => offsetsMoved("postgres"),
);
