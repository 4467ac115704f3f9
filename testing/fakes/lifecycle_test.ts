// The simulated runner's lifecycle, beyond the port contract (which the real runner passes
// too): world-time delays, hooks, kills, OOM, session expiry, the broker going away.
import assert from "node:assert/strict";
import { RUNNER_PATHS } from "../../lib/runtime/labels.ts";
import { fakeSubject } from "../ports/fake_subject.ts";
import type { FakeSubject } from "../ports/fake_subject.ts";
import { prepareRunner } from "../ports/_runner_setup.ts";
import type { RunnerOptions } from "../ports/_runner_setup.ts";
import type { WorldConfig } from "./world.ts";

async function withRunner(
  config: Partial<WorldConfig>,
  options: RunnerOptions,
  fn: (s: FakeSubject, r: Awaited<ReturnType<typeof prepareRunner>>, id: string) => Promise<void>,
) {
  const s = await fakeSubject({ config });
  try {
    const r = await prepareRunner(s, options);
    const id = await s.docker.createContainer(r.spec);
    await fn(s, r, id);
  } finally {
    await s.dispose();
  }
}

const order = (id: string, amount: number) => JSON.stringify({ order_id: id, amount });
const state = async (s: FakeSubject, id: string) => (await s.docker.inspectContainer(id))!.state;
const members = async (s: FakeSubject, group: string) =>
  (await s.kafka.describeGroup(group)).members.length;
const committed = async (s: FakeSubject, r: { applicationId: string; inputTopic: string }) =>
  Object.fromEntries(await s.kafka.committedOffsets(r.applicationId, r.inputTopic));

Deno.test("start is running at once; RUNNING and the group member come only after the startup time", async () => {
  await withRunner({ runner_startup_ms: 5_000 }, { partitions: 1 }, async (s, r, id) => {
    await s.docker.startContainer(id);
    for (let i = 0; i < 3; i++) {
      assert.equal((await state(s, id)).status, "running");
      assert.equal(s.world.control.runnerStatus(id), null, "nothing written yet");
      assert.equal(await members(s, r.applicationId), 0);
    }
    s.world.control.advanceClock(5_000);
    assert.equal(s.world.control.runnerStatus(id)?.state, "RUNNING");
    assert.equal(s.world.control.runnerStatus(id)?.generation, r.generation);
    assert.equal(await members(s, r.applicationId), 1);
  });
});

Deno.test("TERM while closing: CLOSING, still a member, then exit 143 CLOSED and Empty after the close time", async () => {
  await withRunner({ runner_close_ms: 2_000 }, { partitions: 1 }, async (s, r, id) => {
    await s.docker.startContainer(id);
    assert.equal(s.world.control.runnerStatus(id)?.state, "RUNNING");
    await s.produce(r.inputTopic, [{ partition: 0, key: "a", value: order("a", 150) }]);
    await s.docker.signalTerm(id);
    assert.equal(s.world.control.runnerStatus(id)?.state, "CLOSING");
    assert.equal(s.world.control.runnerStatus(id)?.reason, "SIGTERM");
    assert.equal((await state(s, id)).running, true);
    assert.equal(await members(s, r.applicationId), 1);
    await s.docker.signalTerm(id); // a second TERM while closing changes nothing
    s.world.control.advanceClock(2_000);
    const st = await state(s, id);
    assert.equal(st.status, "exited");
    assert.equal(st.exitCode, 143);
    assert.equal(s.world.control.runnerStatus(id)?.state, "CLOSED");
    assert.equal((await s.kafka.describeGroup(r.applicationId)).state, "Empty");
    assert.deepEqual(await committed(s, r), { 0: 1n });
    // closed: what is produced now is not processed
    await s.produce(r.inputTopic, [{ partition: 0, key: "b", value: order("b", 150) }]);
    assert.deepEqual(await committed(s, r), { 0: 1n });
  });
});

Deno.test("TERM before the verdict exits 143 with the status at STARTING and no member", async () => {
  await withRunner({ runner_startup_ms: 5_000 }, { partitions: 1 }, async (s, r, id) => {
    await s.docker.startContainer(id);
    await s.docker.signalTerm(id);
    const st = await state(s, id);
    assert.equal(st.exitCode, 143);
    const status = s.world.control.runnerStatus(id);
    assert.equal(status?.state, "STARTING");
    assert.equal(status?.plan_sha256, r.planSha256);
    s.world.control.advanceClock(10_000);
    assert.equal(await members(s, r.applicationId), 0);
  });
});

Deno.test("a start hook exits 15 before RUNNING with offsets untouched; once fixed, the next start runs", async () => {
  await withRunner({}, { partitions: 2 }, async (s, r, id) => {
    const before = await committed(s, r);
    s.world.control.failRunner("start", { code: 15, reason: "KAFKA_UNREACHABLE" }, {
      match: r.applicationId,
    });
    await s.docker.startContainer(id);
    const st = await state(s, id);
    assert.equal(st.status, "exited");
    assert.equal(st.exitCode, 15);
    const status = s.world.control.runnerStatus(id);
    assert.equal(status?.state, "FAILED");
    assert.equal(status?.reason, "KAFKA_UNREACHABLE");
    assert.equal(status?.running_at, null);
    assert.deepEqual(await committed(s, r), before, "nothing was processed");
    assert.equal(await members(s, r.applicationId), 0);
    await s.docker.startContainer(id); // the hook was used up: the cause is "fixed"
    assert.equal(s.world.control.runnerStatus(id)?.state, "RUNNING");
    assert.equal((await state(s, id)).exitCode, 0);
  });
});

Deno.test("a broker that is down fails host clients and makes a starting runner exit 15", async () => {
  await withRunner({}, { partitions: 1 }, async (s, r, id) => {
    s.world.control.setBrokerReachable(false);
    await assert.rejects(s.kafka.describe([]), /unreachable/);
    await s.docker.startContainer(id);
    assert.equal((await state(s, id)).exitCode, 15);
    assert.equal(s.world.control.runnerStatus(id)?.reason, "KAFKA_UNREACHABLE");
    s.world.control.setBrokerReachable(true);
    await s.docker.startContainer(id);
    assert.equal(s.world.control.runnerStatus(id)?.state, "RUNNING");
    assert.equal(await members(s, r.applicationId), 1);
  });
});

Deno.test("SIGKILL: exit 137, the member lingers until the session times out, a restart meanwhile makes two", async () => {
  await withRunner({ session_timeout_ms: 45_000 }, { partitions: 1 }, async (s, r, id) => {
    await s.docker.startContainer(id);
    s.world.control.killContainer(id);
    const st = await state(s, id);
    assert.equal(st.exitCode, 137);
    assert.equal(st.oomKilled, false);
    assert.equal(s.world.control.runnerStatus(id)?.state, "RUNNING", "stale: nothing was written");
    assert.equal((await s.kafka.describeGroup(r.applicationId)).state, "Stable");
    await s.docker.startContainer(id);
    assert.equal(await members(s, r.applicationId), 2, "the dead member has not expired yet");
    s.world.control.advanceClock(45_000);
    assert.equal(await members(s, r.applicationId), 1);
  });
});

Deno.test("the OOM killer: exit 137 with OOMKilled", async () => {
  await withRunner({}, { partitions: 1 }, async (s, _r, id) => {
    await s.docker.startContainer(id);
    s.world.control.killContainer(id, { oom: true });
    const st = await state(s, id);
    assert.equal(st.exitCode, 137);
    assert.equal(st.oomKilled, true);
    await s.docker.startContainer(id);
    assert.equal((await state(s, id)).oomKilled, false, "a new start clears the flag");
  });
});

Deno.test("a fatal error while running: FAILED with its code, and the group is left at once", async () => {
  await withRunner({}, { partitions: 1 }, async (s, r, id) => {
    await s.docker.startContainer(id);
    s.world.control.crashContainer(id, {
      code: 13,
      reason: "DECODE_NOT_JSON",
      detail: "in-0@3",
    });
    assert.equal((await state(s, id)).exitCode, 13);
    const status = s.world.control.runnerStatus(id);
    assert.equal(status?.state, "FAILED");
    assert.equal(status?.reason, "DECODE_NOT_JSON");
    assert.equal((await s.kafka.describeGroup(r.applicationId)).state, "Empty");
  });
});

Deno.test("a close hook: TERM ends in exit 15 CLOSE_TIMEOUT, not 143, and the member lingers", async () => {
  await withRunner({}, { partitions: 1 }, async (s, r, id) => {
    await s.docker.startContainer(id);
    s.world.control.failRunner("term", { code: 15, reason: "CLOSE_TIMEOUT" }, { match: id });
    await s.docker.signalTerm(id);
    assert.equal((await state(s, id)).exitCode, 15);
    assert.equal(s.world.control.runnerStatus(id)?.reason, "CLOSE_TIMEOUT");
    assert.equal(await members(s, r.applicationId), 1);
  });
});

Deno.test("a plan file gone from the host: exit 10 PLAN_UNREADABLE with no plan in the status", async () => {
  await withRunner({}, { partitions: 1 }, async (s, r, id) => {
    await Deno.remove(r.planPath);
    assert.equal(await s.docker.readContainerFile(id, RUNNER_PATHS.plan), null);
    await s.docker.startContainer(id);
    assert.equal((await state(s, id)).exitCode, 10);
    const status = s.world.control.runnerStatus(id);
    assert.equal(status?.reason, "PLAN_UNREADABLE");
    assert.equal(status?.plan_sha256, null);
    assert.equal(status?.generation, r.generation);
  });
});

Deno.test("running: records are filtered and projected exactly once; a bad record aborts its step and stops the runner (exit 13)", async () => {
  await withRunner({}, { partitions: 1 }, async (s, r, id) => {
    await s.docker.startContainer(id);
    await s.produce(r.inputTopic, [
      { partition: 0, key: "a", value: order("a", 150) },
      { partition: 0, key: "b", value: order("b", 50) },
    ]);
    s.world.control.produce(r.inputTopic, [{ partition: 0, key: "t", value: null }]); // tombstone
    await s.produce(r.inputTopic, [{ partition: 0, key: "c", value: order("c", 100) }]);
    assert.deepEqual(await committed(s, r), { 0: 4n });
    assert.deepEqual(await s.records(r.outputTopic, 2), [
      { partition: 0, key: "a", value: '{"order_id":"a","amount":150}' },
      { partition: 0, key: "c", value: '{"order_id":"c","amount":100}' },
    ]);
    // d is good, e is not: their transaction is aborted, d is never output
    await s.produce(r.inputTopic, [
      { partition: 0, key: "d", value: order("d", 500) },
      { partition: 0, key: "e", value: '{"order_id":"e"}' },
      { partition: 0, key: "f", value: order("f", 500) },
    ]);
    const st = await state(s, id);
    assert.equal(st.exitCode, 13);
    const status = s.world.control.runnerStatus(id);
    assert.equal(status?.reason, "DECODE_MISSING_FIELD");
    // as the runner writes it: the position and rule in the detail, the stop context beside it
    assert.equal(status?.detail, `record ${r.inputTopic}-0@5: declared field 'amount' is missing`);
    assert.deepEqual(status?.stop, {
      application_id: r.spec.labels["sluice.application-id"],
      field: "amount",
      model: "eligible_orders",
      record: {
        fields: ["order_id"],
        key_bytes: 1,
        offset: 5,
        partition: 0,
        topic: r.inputTopic,
        value_bytes: 16,
      },
      rule: "declared field 'amount' is missing",
    });
    assert.deepEqual(await committed(s, r), { 0: 4n }, "at or before the bad record");
    assert.deepEqual((await s.records(r.outputTopic, 2)).map((x) => x.key), ["a", "c"]);
    // started again with the same plan, it stops at the same record
    await s.docker.startContainer(id);
    assert.equal((await state(s, id)).exitCode, 13);
    assert.match(
      String(s.world.control.runnerStatus(id)?.detail),
      new RegExp(`${r.inputTopic}-0@5:`),
    );
    assert.deepEqual((await s.records(r.outputTopic, 2)).map((x) => x.key), ["a", "c"]);
  });
});

Deno.test("records deleted below the committed offset while stopped: the next start fails (exit 15)", async () => {
  await withRunner({}, { partitions: 1 }, async (s, r, id) => {
    await s.docker.startContainer(id);
    await s.docker.signalTerm(id);
    assert.equal((await state(s, id)).exitCode, 143);
    await s.produce(r.inputTopic, [
      { partition: 0, key: "a", value: order("a", 1) },
      { partition: 0, key: "b", value: order("b", 2) },
    ]);
    await s.deleteRecords(r.inputTopic, 0, 2n);
    await s.docker.startContainer(id);
    assert.equal((await state(s, id)).exitCode, 15);
    assert.equal(s.world.control.runnerStatus(id)?.reason, "STREAMS_FATAL");
    assert.deepEqual(await committed(s, r), { 0: 0n }, "no offset was reset");
  });
});
